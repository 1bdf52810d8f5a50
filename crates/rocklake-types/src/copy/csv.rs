//! PostgreSQL's CSV COPY format, for `COPY ... TO STDOUT (FORMAT CSV)`.
//!
//! Fields separated by the delimiter (`,`); a NULL is the NULL string
//! (empty by default, unquoted); a value is quoted when it holds the
//! delimiter, the quote, a carriage return or a line feed, when it equals
//! the NULL string, or when FORCE_QUOTE names its column; inside quotes the
//! quote and escape characters are preceded by the escape character (the
//! quote itself by default, i.e. doubled). `HEADER` writes the column names
//! first, quoted by the same rules.

use crate::datum::{ColumnDef, Datum, Row};
use crate::error::SqlError;
use crate::sqlstate::SqlState;
use crate::value::text::{format_text, parse_text};

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

/// One field of a CSV record: its bytes and whether it was quoted (a
/// quoted field is never NULL).
type CsvField = (Vec<u8>, bool);

impl CsvCopyFormat {
    /// Splits `data` into records of fields, honouring quotes (a quoted
    /// field may hold delimiters and line breaks); a line `\.` ends the data.
    fn records(&self, data: &[u8]) -> Result<Vec<Vec<CsvField>>, SqlError> {
        let mut records = Vec::new();
        let mut record: Vec<CsvField> = Vec::new();
        let mut field = Vec::new();
        let mut quoted = false;
        let mut in_quotes = false;
        let mut at_line_start = true;
        let mut i = 0;
        while i < data.len() {
            let b = data[i];
            if at_line_start && !in_quotes && data[i..].starts_with(b"\\.") {
                let rest = &data[i + 2..];
                if rest.is_empty() || rest.starts_with(b"\n") || rest.starts_with(b"\r\n") {
                    return Ok(records);
                }
            }
            at_line_start = false;
            if in_quotes {
                if b == self.escape
                    && data
                        .get(i + 1)
                        .is_some_and(|n| *n == self.quote || *n == self.escape)
                    && (self.escape != self.quote || data.get(i + 1) == Some(&self.quote))
                {
                    field.push(data[i + 1]);
                    i += 2;
                    continue;
                }
                if b == self.quote {
                    in_quotes = false;
                } else {
                    field.push(b);
                }
                i += 1;
                continue;
            }
            match b {
                b'\n' | b'\r' => {
                    if b == b'\r' && data.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    record.push((std::mem::take(&mut field), quoted));
                    records.push(std::mem::take(&mut record));
                    quoted = false;
                    at_line_start = true;
                }
                d if d == self.delimiter => {
                    record.push((std::mem::take(&mut field), quoted));
                    quoted = false;
                }
                q if q == self.quote => {
                    in_quotes = true;
                    quoted = true;
                }
                other => field.push(other),
            }
            i += 1;
        }
        if in_quotes {
            return Err(SqlError::new(
                SqlState::BAD_COPY_FILE_FORMAT,
                "unterminated CSV quoted field",
            ));
        }
        if !field.is_empty() || quoted || !record.is_empty() {
            record.push((field, quoted));
            records.push(record);
        }
        Ok(records)
    }

    /// Decodes a whole CSV COPY stream into rows typed by `columns`
    /// (`COPY t FROM STDIN (FORMAT CSV)`).
    pub fn decode(&self, data: &[u8], columns: &[ColumnDef]) -> Result<Vec<Row>, SqlError> {
        let mut rows = Vec::new();
        for (n, record) in self.records(data)?.into_iter().enumerate() {
            if n == 0 && self.header {
                continue;
            }
            let line = n + 1;
            if record.len() != columns.len() {
                let message = match columns.get(record.len()) {
                    Some(column) if record.len() < columns.len() => {
                        format!("missing data for column \"{}\" (line {line})", column.name)
                    }
                    _ => format!("extra data after last expected column (line {line})"),
                };
                return Err(SqlError::new(SqlState::BAD_COPY_FILE_FORMAT, message));
            }
            let mut row = Row::with_capacity(columns.len());
            for ((bytes, quoted), column) in record.into_iter().zip(columns) {
                if !quoted && bytes == self.null.as_bytes() {
                    row.push(Datum::Null);
                    continue;
                }
                let text = String::from_utf8(bytes).map_err(|_| {
                    SqlError::new(
                        SqlState::CHARACTER_NOT_IN_REPERTOIRE,
                        "invalid byte sequence for encoding \"UTF8\" in COPY data",
                    )
                })?;
                row.push(parse_text(&text, &column.pg_type)?);
            }
            rows.push(row);
        }
        Ok(rows)
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

    #[test]
    fn csv_input_reads_quotes_nulls_and_line_breaks() {
        use crate::datum::PgType;
        let format = CsvCopyFormat {
            header: true,
            ..CsvCopyFormat::default()
        };
        let columns = [
            ColumnDef::new("id", PgType::Int4),
            ColumnDef::new("name", PgType::Text),
            ColumnDef::new("note", PgType::Text),
        ];
        let data =
            b"id,name,note\n1,\"a,b\",\n2,\"say \"\"hi\"\"\",\"\"\n3,\"two\nlines\",x\n\\.\n";
        let rows = format.decode(data, &columns).unwrap();
        assert_eq!(
            rows,
            vec![
                vec![Datum::Int4(1), Datum::text("a,b"), Datum::Null],
                vec![Datum::Int4(2), Datum::text("say \"hi\""), Datum::text("")],
                vec![Datum::Int4(3), Datum::text("two\nlines"), Datum::text("x")],
            ]
        );
        let short = format.decode(b"h\n1,x\n", &columns).unwrap_err();
        assert_eq!(short.code, SqlState::BAD_COPY_FILE_FORMAT);
    }
}
