//! PostgreSQL's text COPY format, for `COPY t FROM STDIN (FORMAT TEXT)` and
//! `COPY ... TO STDOUT (FORMAT TEXT)`.
//!
//! One row per line, fields separated by the delimiter (tab by default), a
//! field equal to the NULL string (`\N` by default, compared before
//! de-escaping) is NULL, and backslash escapes as PostgreSQL documents them:
//! `\b \f \n \r \t \v`, `\\`, octal `\ddd`, hex `\xhh`, and `\c` = `c` for any
//! other character. A line `\.` ends the data.

use crate::datum::{ColumnDef, Datum, Row};
use crate::error::SqlError;
use crate::sqlstate::SqlState;
use crate::value::text::{format_text, parse_text};

/// The options of a text-format COPY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextCopyFormat {
    /// Field delimiter (one byte).
    pub delimiter: u8,
    /// The string that stands for NULL.
    pub null: String,
    /// Whether a COPY TO writes the column names first (PostgreSQL 15+).
    pub header: bool,
}

impl Default for TextCopyFormat {
    fn default() -> Self {
        TextCopyFormat {
            delimiter: b'\t',
            null: "\\N".into(),
            header: false,
        }
    }
}

impl TextCopyFormat {
    /// Appends the header line of `names` (escaped as values are).
    pub fn put_header(&self, out: &mut Vec<u8>, names: &[&str]) {
        let names: Vec<Datum> = names.iter().map(|n| Datum::text(n.to_string())).collect();
        self.put_row(out, names.iter());
    }

    /// Appends one row as a line: the NULL string for NULL, else the value's
    /// text with backslash, the delimiter and control characters escaped.
    pub fn put_row<'a>(&self, out: &mut Vec<u8>, row: impl Iterator<Item = &'a Datum>) {
        for (i, datum) in row.enumerate() {
            if i > 0 {
                out.push(self.delimiter);
            }
            let Some(text) = format_text(datum) else {
                out.extend_from_slice(self.null.as_bytes());
                continue;
            };
            for b in text.bytes() {
                match b {
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    b'\t' => out.extend_from_slice(b"\\t"),
                    8 => out.extend_from_slice(b"\\b"),
                    12 => out.extend_from_slice(b"\\f"),
                    11 => out.extend_from_slice(b"\\v"),
                    d if d == self.delimiter => {
                        out.push(b'\\');
                        out.push(d);
                    }
                    other => out.push(other),
                }
            }
        }
        out.push(b'\n');
    }
}

fn unescape(field: &[u8]) -> Result<String, SqlError> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let b = field[i];
        i += 1;
        if b != b'\\' || i == field.len() {
            out.push(b);
            continue;
        }
        let c = field[i];
        i += 1;
        match c {
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                for _ in 0..2 {
                    match field.get(i) {
                        Some(d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push((v & 0xff) as u8);
            }
            b'x' if field.get(i).is_some_and(u8::is_ascii_hexdigit) => {
                let mut v = 0u32;
                for _ in 0..2 {
                    match field.get(i).and_then(|d| (*d as char).to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            i += 1;
                        }
                        None => break,
                    }
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    String::from_utf8(out).map_err(|_| {
        SqlError::new(
            SqlState::CHARACTER_NOT_IN_REPERTOIRE,
            "invalid byte sequence for encoding \"UTF8\" in COPY data",
        )
    })
}

/// Splits a line at unescaped delimiters (a backslash always escapes the next byte).
fn split_fields(line: &[u8], delimiter: u8) -> Vec<&[u8]> {
    let mut fields = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < line.len() {
        if line[i] == b'\\' {
            i += 2;
            continue;
        }
        if line[i] == delimiter {
            fields.push(&line[start..i]);
            start = i + 1;
        }
        i += 1;
    }
    fields.push(&line[start..line.len().max(start)]);
    fields
}

/// Decodes a whole text COPY stream into rows typed by `columns`.
pub fn decode(
    data: &[u8],
    columns: &[ColumnDef],
    format: &TextCopyFormat,
) -> Result<Vec<Row>, SqlError> {
    let mut rows = Vec::new();
    let data = data.strip_suffix(b"\n").unwrap_or(data);
    if data.is_empty() {
        return Ok(rows);
    }
    for (n, mut line) in data.split(|&b| b == b'\n').enumerate() {
        if let Some(stripped) = line.strip_suffix(b"\r") {
            line = stripped;
        }
        if line == b"\\." {
            break;
        }
        let fields = split_fields(line, format.delimiter);
        let line_no = n + 1;
        if fields.len() < columns.len() {
            return Err(SqlError::new(
                SqlState::BAD_COPY_FILE_FORMAT,
                format!(
                    "missing data for column \"{}\" (line {line_no})",
                    columns[fields.len()].name
                ),
            ));
        }
        if fields.len() > columns.len() {
            return Err(SqlError::new(
                SqlState::BAD_COPY_FILE_FORMAT,
                format!("extra data after last expected column (line {line_no})"),
            ));
        }
        let mut row = Row::with_capacity(columns.len());
        for (field, col) in fields.into_iter().zip(columns) {
            if field == format.null.as_bytes() {
                row.push(crate::datum::Datum::Null);
            } else {
                row.push(parse_text(&unescape(field)?, &col.pg_type)?);
            }
        }
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datum::{Datum, PgType};

    fn cols() -> Vec<ColumnDef> {
        vec![
            ColumnDef::new("value", PgType::Varchar),
            ColumnDef::new("id", PgType::Int8),
        ]
    }

    #[test]
    fn rows_print_with_postgresql_escapes() {
        let fmt = TextCopyFormat::default();
        let mut out = Vec::new();
        let row = [
            Datum::text("a\tb\nc\\d"),
            Datum::Null,
            Datum::Int4(7),
            Datum::text("\u{8}x"),
        ];
        fmt.put_row(&mut out, row.iter());
        assert_eq!(out, b"a\\tb\\nc\\\\d\t\\N\t7\t\\bx\n".to_vec());
        let pipe = TextCopyFormat {
            delimiter: b'|',
            ..TextCopyFormat::default()
        };
        let mut out = Vec::new();
        pipe.put_row(&mut out, [Datum::text("x|y")].iter());
        assert_eq!(out, b"x\\|y\n".to_vec());
    }

    #[test]
    fn decodes_rows_nulls_and_escapes() {
        let fmt = TextCopyFormat {
            null: String::new(),
            ..Default::default()
        };
        let rows = decode(b"20\t1\n\t2\na\\tb\\\\c\\n\\101\\x42\t3\n", &cols(), &fmt).unwrap();
        assert_eq!(
            rows,
            vec![
                vec![Datum::Text("20".into()), Datum::Int8(1)],
                vec![Datum::Null, Datum::Int8(2)],
                vec![Datum::Text("a\tb\\c\nAB".into()), Datum::Int8(3)],
            ]
        );
    }

    #[test]
    fn default_null_marker_end_marker_and_crlf() {
        let rows = decode(
            b"\\N\t1\r\nx\t2\n\\.\nignored\n",
            &cols(),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(
            rows,
            vec![
                vec![Datum::Null, Datum::Int8(1)],
                vec![Datum::Text("x".into()), Datum::Int8(2)],
            ]
        );
        assert!(decode(b"", &cols(), &Default::default())
            .unwrap()
            .is_empty());
    }

    #[test]
    fn wrong_field_counts_are_22p04() {
        let e = decode(b"only\n", &cols(), &Default::default()).unwrap_err();
        assert_eq!(e.code, "22P04");
        let e = decode(b"a\t1\t2\n", &cols(), &Default::default()).unwrap_err();
        assert_eq!(e.code, "22P04");
        let e = decode(b"a\tnot-a-number\n", &cols(), &Default::default()).unwrap_err();
        assert_eq!(e.code, "22P02");
    }
}
