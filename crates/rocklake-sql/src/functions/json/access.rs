//! Reading into documents: `-> ->> #> #>>` and `json(b)_extract_path(_text)`.
//! `json` answers with a part's text as it was written (the last of a key
//! given twice); `jsonb` with the part as `jsonb`. A key of the wrong kind
//! (an index into an object, a key into an array) or a missing part gives
//! NULL; a `jsonb` scalar at the top is a one-element array to `-> int`.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::jsonb::{node, Jsonb, Node};
use rocklake_types::SqlError;

use super::super::def::types::*;
use super::super::def::Library;
use super::{document, index_in, text_array};
use crate::plan::{Param, ScalarFn};

/// Registers the operators and functions that read parts of documents.
pub(super) fn register(lib: &mut Library) {
    let json = PgType::Json;
    let jsonb = PgType::Jsonb;
    let path = || PgType::array_of(TEXT);
    // `->` and `->>`, each with a key (text) or an index (int).
    let fields: [(&'static str, PgType, PgType, ScalarFn); 4] = [
        ("->", json.clone(), json.clone(), |a, _, _| {
            json_field(&a[0], &a[1], false)
        }),
        ("->>", json.clone(), TEXT, |a, _, _| {
            json_field(&a[0], &a[1], true)
        }),
        ("->", jsonb.clone(), jsonb.clone(), |a, _, _| {
            jsonb_field(&a[0], &a[1], false)
        }),
        ("->>", jsonb.clone(), TEXT, |a, _, _| {
            jsonb_field(&a[0], &a[1], true)
        }),
    ];
    for (symbol, document, result, eval) in fields {
        for key in [TEXT, INT4] {
            lib.infix(symbol, document.clone(), key, result.clone(), eval);
        }
    }
    lib.infix("#>", json.clone(), path(), json.clone(), |a, _, _| {
        json_path(&a[0], &text_array(&a[1]), false)
    });
    lib.infix("#>>", json.clone(), path(), TEXT, |a, _, _| {
        json_path(&a[0], &text_array(&a[1]), true)
    });
    lib.infix("#>", jsonb.clone(), path(), jsonb.clone(), |a, _, _| {
        jsonb_path(&a[0], &text_array(&a[1]), false)
    });
    lib.infix("#>>", jsonb.clone(), path(), TEXT, |a, _, _| {
        jsonb_path(&a[0], &text_array(&a[1]), true)
    });
    let extract: [(&'static str, PgType, ScalarFn); 4] = [
        ("json_extract_path", json.clone(), |a, _, _| {
            json_path(&a[0], &variadic_path(a), false)
        }),
        ("json_extract_path_text", TEXT, |a, _, _| {
            json_path(&a[0], &variadic_path(a), true)
        }),
        ("jsonb_extract_path", jsonb.clone(), |a, _, _| {
            jsonb_path(&a[0], &variadic_path(a), false)
        }),
        ("jsonb_extract_path_text", TEXT, |a, _, _| {
            jsonb_path(&a[0], &variadic_path(a), true)
        }),
    ];
    for (name, result, eval) in extract {
        let document = if name.starts_with("jsonb") {
            jsonb.clone()
        } else {
            json.clone()
        };
        lib.function(name, [document], result, eval)
            .variadic(Param::Ty(TEXT));
    }
}

/// The path of a `json(b)_extract_path` call: its arguments after the
/// document.
fn variadic_path(a: &[Datum]) -> Vec<Option<String>> {
    a[1..]
        .iter()
        .map(|d| d.as_str().map(str::to_string))
        .collect()
}

/// One step into a document: a key, or an index (negative from the end).
enum Step<'k> {
    Key(&'k str),
    Index(i64),
}

impl<'k> Step<'k> {
    fn of(d: &'k Datum) -> Step<'k> {
        match d.as_i64() {
            Some(i) => Step::Index(i),
            None => Step::Key(d.as_str().unwrap_or_default()),
        }
    }
}

/// The text of the part of `text` at `step`.
fn json_child<'a>(text: &'a str, step: &Step) -> Result<Option<&'a str>, SqlError> {
    Ok(match (node(text)?, step) {
        (Node::Object(pairs), Step::Key(key)) => pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, value)| value.get()),
        (Node::Array(items), Step::Index(index)) => {
            index_in(*index, items.len()).map(|at| items[at].get())
        }
        _ => None,
    })
}

/// A `json` part as `->` (`as_text` false) or `->>` give it.
pub(super) fn json_result(raw: &str, as_text: bool) -> Result<Datum, SqlError> {
    if !as_text {
        return Ok(Datum::text(raw));
    }
    Ok(match node(raw)? {
        Node::String(s) => Datum::text(s),
        Node::Null => Datum::Null,
        _ => Datum::text(raw),
    })
}

fn json_field(json: &Datum, key: &Datum, as_text: bool) -> Result<Datum, SqlError> {
    let text = json.as_str().unwrap_or_default();
    match json_child(text, &Step::of(key))? {
        Some(raw) => json_result(raw, as_text),
        None => Ok(Datum::Null),
    }
}

fn json_path(json: &Datum, path: &[Option<String>], as_text: bool) -> Result<Datum, SqlError> {
    let mut text = json.as_str().unwrap_or_default();
    for step in path {
        let Some(step) = step else {
            return Ok(Datum::Null);
        };
        let is_array = matches!(text.trim_start().as_bytes().first(), Some(b'['));
        let step = match (is_array, step.trim().parse::<i64>()) {
            (true, Ok(index)) => Step::Index(index),
            (true, Err(_)) => return Ok(Datum::Null),
            (false, _) => Step::Key(step),
        };
        match json_child(text, &step)? {
            Some(child) => text = child,
            None => return Ok(Datum::Null),
        }
    }
    json_result(text.trim(), as_text)
}

/// A `jsonb` part as `->` or `->>` give it.
pub(super) fn jsonb_result(value: &Jsonb, as_text: bool) -> Datum {
    match (value, as_text) {
        (_, false) => Datum::jsonb(value),
        (Jsonb::String(s), true) => Datum::text(s.as_str()),
        (Jsonb::Null, true) => Datum::Null,
        (other, true) => Datum::text(other.to_text()),
    }
}

/// The part of `value` at `step`.
fn jsonb_child<'v>(value: &'v Jsonb, step: &Step) -> Option<&'v Jsonb> {
    match (value, step) {
        (Jsonb::Object(_), Step::Key(key)) => value.get(key),
        (Jsonb::Array(items), Step::Index(index)) => {
            index_in(*index, items.len()).map(|at| &items[at])
        }
        _ => None,
    }
}

fn jsonb_field(jsonb: &Datum, key: &Datum, as_text: bool) -> Result<Datum, SqlError> {
    let value = document(jsonb)?;
    let step = Step::of(key);
    let child = match (&value, &step) {
        // A scalar is a one-element array to an index.
        (scalar, Step::Index(index)) if scalar.is_scalar() => index_in(*index, 1).map(|_| scalar),
        _ => jsonb_child(&value, &step),
    };
    Ok(child.map_or(Datum::Null, |c| jsonb_result(c, as_text)))
}

fn jsonb_path(jsonb: &Datum, path: &[Option<String>], as_text: bool) -> Result<Datum, SqlError> {
    let value = document(jsonb)?;
    let mut at = &value;
    for step in path {
        let Some(step) = step else {
            return Ok(Datum::Null);
        };
        let step = match at {
            Jsonb::Array(_) => match step.trim().parse::<i64>() {
                Ok(index) => Step::Index(index),
                Err(_) => return Ok(Datum::Null),
            },
            _ => Step::Key(step),
        };
        match jsonb_child(at, &step) {
            Some(child) => at = child,
            None => return Ok(Datum::Null),
        }
    }
    Ok(jsonb_result(at, as_text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocklake_types::SqlState;

    fn text(s: &str) -> Datum {
        Datum::text(s)
    }

    #[test]
    fn json_parts_keep_their_input_text() {
        let doc = text(r#" {"a": 1, "a" : [1,  2], "s": "x\ny\u00e9", "n": null} "#);
        assert_eq!(
            json_field(&doc, &text("a"), false).unwrap(),
            text("[1,  2]")
        );
        assert_eq!(json_field(&doc, &text("s"), true).unwrap(), text("x\nyé"));
        assert_eq!(
            json_field(&doc, &text("s"), false).unwrap(),
            text(r#""x\ny\u00e9""#)
        );
        assert_eq!(json_field(&doc, &text("n"), true).unwrap(), Datum::Null);
        assert_eq!(
            json_field(&doc, &Datum::Int4(0), false).unwrap(),
            Datum::Null
        );
        let list = text(r#"[1, {"b":2} ,3]"#);
        assert_eq!(
            json_field(&list, &Datum::Int4(1), false).unwrap(),
            text(r#"{"b":2}"#)
        );
        assert_eq!(
            json_field(&list, &Datum::Int4(-1), true).unwrap(),
            text("3")
        );
        assert_eq!(
            json_field(&list, &Datum::Int4(-4), false).unwrap(),
            Datum::Null
        );
        let path = [Some("1".to_string()), Some("b".to_string())];
        assert_eq!(json_path(&list, &path, true).unwrap(), text("2"));
        assert_eq!(
            json_path(&list, &[Some("x".into())], false).unwrap(),
            Datum::Null
        );
        let e = json_field(&text("{bad"), &text("a"), false).unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_TEXT_REPRESENTATION);
    }

    #[test]
    fn jsonb_parts_and_the_scalar_as_an_array() {
        let doc = Datum::Jsonb(r#"{"a": {"b": [1, "x"]}}"#.into());
        let path = [
            Some("a".to_string()),
            Some("b".to_string()),
            Some("-1".to_string()),
        ];
        assert_eq!(jsonb_path(&doc, &path, true).unwrap(), text("x"));
        assert_eq!(
            jsonb_path(&doc, &path, false).unwrap(),
            Datum::Jsonb("\"x\"".into())
        );
        assert_eq!(jsonb_path(&doc, &[], false).unwrap(), doc);
        let scalar = Datum::Jsonb("\"foo\"".into());
        assert_eq!(
            jsonb_field(&scalar, &Datum::Int4(0), true).unwrap(),
            text("foo")
        );
        assert_eq!(jsonb_field(&scalar, &text("a"), true).unwrap(), Datum::Null);
    }
}
