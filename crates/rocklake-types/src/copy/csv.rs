//! PostgreSQL's CSV COPY format, for `COPY ... TO STDOUT (FORMAT CSV)`.
//!
//! Fields separated by the delimiter (`,`); a NULL is the NULL string
//! (empty by default, unquoted); a value is quoted when it holds the
//! delimiter, the quote, a carriage return or a line feed, when it equals
//! the NULL string, or when FORCE_QUOTE names its column; inside quotes the
//! quote and escape characters are preceded by the escape character (the
//! quote itself by default, i.e. doubled). `HEADER` writes the column names
//! first, quoted by the same rules.

use crate::datum::Datum;
use crate::value::text::format_text;

/// The options of a CSV COPY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvCopyFormat {
    /// Field delimiter (one byte).
    pub delimiter: u8,
    /// The string that stands for NULL.
    pub null: String,
    /// Quote character.
    pub quote: u8,
    /// Escape character inside quotes.
    pub escape: u8,
    /// Whether the first line holds the column names.
    pub header: bool,
    /// Columns always quoted (`FORCE_QUOTE *`: all).
    pub force_quote: ForceQuote,
}

/// Which columns `FORCE_QUOTE` names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ForceQuote {
    /// None.
    #[default]
    None,
    /// `FORCE_QUOTE *`.
    All,
    /// `FORCE_QUOTE (a, b)`.
    Columns(Vec<String>),
}

impl Default for CsvCopyFormat {
    fn default() -> Self {
        CsvCopyFormat {
            delimiter: b',',
            null: String::new(),
            quote: b'"',
            escape: b'"',
            header: false,
            force_quote: ForceQuote::None,
        }
    }
}

impl CsvCopyFormat {
    /// Whether column `name` is always quoted.
    pub fn forces(&self, name: &str) -> bool {
        match &self.force_quote {
            ForceQuote::None => false,
            ForceQuote::All => true,
            ForceQuote::Columns(names) => names.iter().any(|n| n == name),
        }
    }

    fn put_field(&self, out: &mut Vec<u8>, value: &str, force: bool) {
        let needs_quote = force
            || value == self.null
            || value
                .bytes()
                .any(|b| b == self.delimiter || b == self.quote || b == b'\n' || b == b'\r');
        if !needs_quote {
            out.extend_from_slice(value.as_bytes());
            return;
        }
        out.push(self.quote);
        for b in value.bytes() {
            if b == self.quote || b == self.escape {
                out.push(self.escape);
            }
            out.push(b);
        }
        out.push(self.quote);
    }

    /// Appends the header line of `names`.
    pub fn put_header(&self, out: &mut Vec<u8>, names: &[&str]) {
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                out.push(self.delimiter);
            }
            self.put_field(out, name, false);
        }
        out.push(b'\n');
    }

    /// Appends one row as a line; `forced[i]` quotes column `i` always.
    pub fn put_row<'a>(
        &self,
        out: &mut Vec<u8>,
        row: impl Iterator<Item = &'a Datum>,
        forced: &[bool],
    ) {
        for (i, datum) in row.enumerate() {
            if i > 0 {
                out.push(self.delimiter);
            }
            match format_text(datum) {
                None => out.extend_from_slice(self.null.as_bytes()),
                Some(text) => self.put_field(out, &text, forced.get(i).copied().unwrap_or(false)),
            }
        }
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_as_postgresql_quotes_them() {
        let format = CsvCopyFormat::default();
        let mut out = Vec::new();
        let row = [
            Datum::Int4(1),
            Datum::text("a,b"),
            Datum::text("say \"hi\""),
            Datum::Null,
            Datum::text(""),
            Datum::text("line\nbreak"),
        ];
        format.put_row(&mut out, row.iter(), &[]);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "1,\"a,b\",\"say \"\"hi\"\"\",,\"\",\"line\nbreak\"\n"
        );
    }
}
