//! The `json` operators `->` and `->>` as PostgreSQL's `json` type answers
//! them: the value is the input text, so a field or element comes back as
//! the exact text it had in the input (spacing kept); an object with a key
//! twice gives the last one; a key of the wrong kind (an index into an
//! object, a key into an array or a scalar) or out of range gives NULL.
//! Parsing is serde_json's (`RawValue` keeps the input text of each
//! value); invalid input is PostgreSQL's `22P02`.

use std::collections::HashMap;

use rocklake_types::datum::Datum;
use rocklake_types::value::json::invalid;
use rocklake_types::{SqlError, SqlState};
use serde_json::value::RawValue;

/// `json -> key` (or `->>` with `as_text`).
pub(crate) fn get(json: &Datum, key: &Datum, as_text: bool) -> Result<Datum, SqlError> {
    let (Some(text), false) = (json.as_str(), key.is_null()) else {
        return Ok(Datum::Null);
    };
    let Some(raw) = field(text, key)? else {
        return Ok(Datum::Null);
    };
    if !as_text {
        return Ok(Datum::text(raw));
    }
    Ok(match raw.as_bytes().first() {
        Some(b'"') => {
            let string =
                serde_json::from_str::<String>(raw).map_err(|e| invalid(&e.to_string()))?;
            // Text cannot hold NUL (PostgreSQL: 22P05).
            if string.contains('\0') {
                return Err(SqlError::new(
                    SqlState::UNTRANSLATABLE_CHARACTER,
                    "unsupported Unicode escape sequence",
                )
                .with_detail("\\u0000 cannot be converted to text."));
            }
            Datum::text(string)
        }
        _ if raw == "null" => Datum::Null,
        _ => Datum::text(raw),
    })
}

/// The input text of the field or element `key` of the JSON text `text`.
fn field<'t>(text: &'t str, key: &Datum) -> Result<Option<&'t str>, SqlError> {
    let start = text.trim_start();
    let parsed = |e: serde_json::Error| invalid(&e.to_string());
    match (start.as_bytes().first(), key) {
        (Some(b'{'), Datum::Text(name)) => {
            // Later fields replace earlier ones of the same key, as in
            // PostgreSQL (`{"a": 1, "a": 2} -> 'a'` is 2).
            let object: HashMap<String, &RawValue> = serde_json::from_str(text).map_err(parsed)?;
            Ok(object.get(name.as_ref()).map(|value| value.get()))
        }
        (Some(b'['), Datum::Int2(_) | Datum::Int4(_)) => {
            let array: Vec<&RawValue> = serde_json::from_str(text).map_err(parsed)?;
            let index = key.as_i64().unwrap_or(0);
            let position = if index < 0 {
                i64::try_from(array.len()).unwrap_or(i64::MAX) + index
            } else {
                index
            };
            Ok(usize::try_from(position)
                .ok()
                .and_then(|i| array.get(i))
                .map(|value| value.get()))
        }
        _ => {
            // Valid JSON of another kind than the key asks for: NULL.
            serde_json::from_str::<&RawValue>(text).map_err(parsed)?;
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Datum {
        Datum::text(s)
    }

    #[test]
    fn fields_and_elements_keep_their_input_text() {
        let doc = text(r#" {"a": 1, "a" : [1,  2], "s": "x\ny\u00e9", "n": null} "#);
        assert_eq!(get(&doc, &text("a"), false).unwrap(), text("[1,  2]"));
        assert_eq!(get(&doc, &text("s"), true).unwrap(), text("x\nyé"));
        assert_eq!(
            get(&doc, &text("s"), false).unwrap(),
            text(r#""x\ny\u00e9""#)
        );
        assert_eq!(get(&doc, &text("n"), false).unwrap(), text("null"));
        assert_eq!(get(&doc, &text("n"), true).unwrap(), Datum::Null);
        assert_eq!(get(&doc, &text("missing"), false).unwrap(), Datum::Null);
        assert_eq!(get(&doc, &Datum::Int4(0), false).unwrap(), Datum::Null);
        let list = text(r#"[1, {"b":2} ,3]"#);
        assert_eq!(
            get(&list, &Datum::Int4(1), false).unwrap(),
            text(r#"{"b":2}"#)
        );
        assert_eq!(get(&list, &Datum::Int4(-1), true).unwrap(), text("3"));
        assert_eq!(get(&list, &Datum::Int4(3), false).unwrap(), Datum::Null);
        assert_eq!(get(&list, &Datum::Int4(-4), false).unwrap(), Datum::Null);
        assert_eq!(get(&list, &text("1"), false).unwrap(), Datum::Null);
        assert_eq!(get(&text("\"s\""), &text("a"), false).unwrap(), Datum::Null);
        assert_eq!(get(&Datum::Null, &text("a"), false).unwrap(), Datum::Null);
        assert_eq!(get(&doc, &Datum::Null, false).unwrap(), Datum::Null);
    }

    #[test]
    fn a_nul_character_cannot_become_text() {
        let e = get(&text(r#"{"a": "x\u0000"}"#), &text("a"), true).unwrap_err();
        assert_eq!(e.code, SqlState::UNTRANSLATABLE_CHARACTER);
        assert!(get(&text(r#"{"a": "x\u0000"}"#), &text("a"), false).is_ok());
    }

    #[test]
    fn invalid_json_is_22p02() {
        for bad in ["{bad", "[1,", "tru", "{\"a\":1} x"] {
            let e = get(&text(bad), &text("a"), false).unwrap_err();
            assert_eq!(
                e.code,
                rocklake_types::SqlState::INVALID_TEXT_REPRESENTATION,
                "{bad}"
            );
        }
    }
}
