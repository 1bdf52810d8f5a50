//! Values of any type as JSON, as PostgreSQL's `to_json` and `to_jsonb`
//! convert them: booleans and numbers as themselves (a `NaN` or infinity
//! as a string), dates and timestamps as ISO 8601 strings
//! (`2020-01-01T10:00:00+00:00`), `json`/`jsonb` as they are, arrays as
//! arrays, rows as objects of their fields, anything else as the string of
//! its text output.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::jsonb::{write_string, Jsonb};
use rocklake_types::value::numeric;
use rocklake_types::value::text::format_text;
use rocklake_types::SqlError;

/// How a value of a type becomes JSON.
enum Kind<'t> {
    Bool,
    Number,
    DateTime,
    Json,
    Array(&'t PgType),
    Row(&'t [(String, PgType)]),
    Other,
}

fn kind(ty: &PgType) -> Kind<'_> {
    match ty {
        PgType::Bool => Kind::Bool,
        PgType::Int2
        | PgType::Int4
        | PgType::Int8
        | PgType::Float4
        | PgType::Float8
        | PgType::Numeric(_) => Kind::Number,
        PgType::Date | PgType::Timestamp | PgType::TimestampTz => Kind::DateTime,
        PgType::Json | PgType::Jsonb => Kind::Json,
        PgType::Array(element) => Kind::Array(element),
        PgType::Record(fields) => Kind::Row(fields),
        _ => Kind::Other,
    }
}

/// Whether values of `ty` are JSON containers (arrays, rows, `json`),
/// which `json_agg` starts on a new line and object keys may not be.
pub(super) fn is_container(ty: &PgType) -> bool {
    matches!(kind(ty), Kind::Array(_) | Kind::Row(_) | Kind::Json)
}

/// The ISO 8601 text of a date or timestamp (`infinity` as it is).
fn iso_datetime(value: &Datum) -> String {
    let text = format_text(value).unwrap_or_default();
    if !matches!(value, Datum::Timestamp(_) | Datum::TimestampTz(_)) || text.ends_with("infinity") {
        return text;
    }
    let mut iso = text.replacen(' ', "T", 1);
    if matches!(value, Datum::TimestampTz(_)) {
        // `+00` becomes `+00:00`.
        let sign = iso.rfind(['+', '-']).unwrap_or(iso.len());
        if iso.len() - sign == 3 {
            iso.push_str(":00");
        }
    }
    iso
}

/// Appends `value` of type `ty` as `to_json` writes it (no spaces:
/// `[1,2]`, `{"a":1}`).
pub(crate) fn write_json(value: &Datum, ty: &PgType, out: &mut String) {
    if value.is_null() {
        out.push_str("null");
        return;
    }
    match (kind(ty), value) {
        (Kind::Bool, Datum::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
        (Kind::Number, _) => {
            let text = format_text(value).unwrap_or_default();
            if is_json_number(&text) {
                out.push_str(&text);
            } else {
                write_string(&text, out);
            }
        }
        (Kind::DateTime, _) => write_string(&iso_datetime(value), out),
        (Kind::Json, Datum::Text(text) | Datum::Jsonb(text)) => out.push_str(text),
        (Kind::Array(element), Datum::Array(items)) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, element, out);
            }
            out.push(']');
        }
        (Kind::Row(fields), Datum::Record(values)) => {
            out.push('{');
            for (i, ((name, field_type), value)) in fields.iter().zip(values.iter()).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(name, out);
                out.push(':');
                write_json(value, field_type, out);
            }
            out.push('}');
        }
        _ => write_string(&format_text(value).unwrap_or_default(), out),
    }
}

/// `value` of type `ty` as `to_jsonb` converts it.
pub(crate) fn to_jsonb(value: &Datum, ty: &PgType) -> Result<Jsonb, SqlError> {
    if value.is_null() {
        return Ok(Jsonb::Null);
    }
    Ok(match (kind(ty), value) {
        (Kind::Bool, Datum::Bool(b)) => Jsonb::Bool(*b),
        (Kind::Number, _) => {
            let text = format_text(value).unwrap_or_default();
            match numeric::parse(&text).filter(|n| n != "NaN") {
                Some(n) => Jsonb::Number(n),
                None => Jsonb::String(text),
            }
        }
        (Kind::DateTime, _) => Jsonb::String(iso_datetime(value)),
        (Kind::Json, Datum::Text(text) | Datum::Jsonb(text)) => {
            rocklake_types::value::jsonb::parse(text)?
        }
        (Kind::Array(element), Datum::Array(items)) => Jsonb::Array(
            items
                .iter()
                .map(|item| to_jsonb(item, element))
                .collect::<Result<_, _>>()?,
        ),
        (Kind::Row(fields), Datum::Record(values)) => Jsonb::object(
            fields
                .iter()
                .zip(values.iter())
                .map(|((name, field_type), value)| Ok((name.clone(), to_jsonb(value, field_type)?)))
                .collect::<Result<_, SqlError>>()?,
        ),
        _ => Jsonb::String(format_text(value).unwrap_or_default()),
    })
}

/// Whether `text` is a number as JSON writes one (not `NaN`, `Infinity`).
fn is_json_number(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    digits.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && serde_json::from_str::<&serde_json::value::RawValue>(text).is_ok()
}

/// The text a value gives as an object key (`json_build_object`,
/// `json_object_agg`): its text output; containers are refused.
pub(super) fn key_text(value: &Datum, ty: &PgType) -> Result<String, SqlError> {
    if is_container(ty) {
        return Err(super::invalid_parameter(
            "key value must be scalar, not array, composite, or json",
        ));
    }
    Ok(match (kind(ty), value) {
        (_, Datum::Bool(b)) => if *b { "true" } else { "false" }.to_string(),
        (Kind::DateTime, _) => iso_datetime(value),
        (_, other) => format_text(other).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn json(value: &Datum, ty: &PgType) -> String {
        let mut out = String::new();
        write_json(value, ty, &mut out);
        out
    }

    #[test]
    fn values_become_json_as_to_json_makes_them() {
        assert_eq!(json(&Datum::Float8(f64::NAN), &PgType::Float8), "\"NaN\"");
        assert_eq!(json(&Datum::Oid(1), &PgType::Oid), "\"1\"");
        assert_eq!(
            json(&Datum::TimestampTz(0), &PgType::TimestampTz),
            "\"2000-01-01T00:00:00+00:00\""
        );
        assert_eq!(
            json(&Datum::Timestamp(500_000), &PgType::Timestamp),
            "\"2000-01-01T00:00:00.5\""
        );
        let row_type = PgType::Record(Arc::from(vec![
            ("a".to_string(), PgType::Int4),
            ("b".to_string(), PgType::array_of(PgType::Text)),
        ]));
        let row = Datum::Record(Arc::from(vec![
            Datum::Int4(1),
            Datum::array(vec![Datum::text("x"), Datum::Null]),
        ]));
        assert_eq!(json(&row, &row_type), r#"{"a":1,"b":["x",null]}"#);
        assert_eq!(
            to_jsonb(&row, &row_type).unwrap().to_text(),
            r#"{"a": 1, "b": ["x", null]}"#
        );
        assert_eq!(
            to_jsonb(&Datum::Numeric("1.50".into()), &PgType::Numeric(None)).unwrap(),
            Jsonb::Number("1.50".into())
        );
        assert!(key_text(&Datum::array(vec![]), &PgType::array_of(PgType::Int4)).is_err());
    }
}
