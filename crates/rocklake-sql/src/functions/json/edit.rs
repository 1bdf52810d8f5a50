//! The `jsonb` operators that test and change documents (`@> <@ ? ?| ?&
//! || - #-`) and the functions that change them (`jsonb_set`,
//! `jsonb_insert`, `jsonb_strip_nulls`), with PostgreSQL's rules and
//! errors.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::jsonb::{compare_documents, key_order, Jsonb};
use rocklake_types::{SqlError, SqlState};

use super::super::def::types::*;
use super::super::def::Library;
use super::{document, index_in, invalid_parameter, text_array};
use crate::plan::ScalarFn;

/// Registers the operators and editing functions of `jsonb`.
pub(super) fn register(lib: &mut Library) {
    let jsonb = PgType::Jsonb;
    let texts = || PgType::array_of(TEXT);
    // Each operator, and the function PostgreSQL implements it with.
    let operators: [(&'static str, &'static str, PgType, ScalarFn); 11] = [
        ("@>", "jsonb_contains", jsonb.clone(), |a, _, _| {
            Ok(Datum::Bool(document(&a[0])?.contains(&document(&a[1])?)))
        }),
        ("<@", "jsonb_contained", jsonb.clone(), |a, _, _| {
            Ok(Datum::Bool(document(&a[1])?.contains(&document(&a[0])?)))
        }),
        ("?", "jsonb_exists", TEXT, |a, _, _| {
            let key = a[1].as_str().unwrap_or_default();
            Ok(Datum::Bool(has_key(&document(&a[0])?, key)))
        }),
        ("?|", "jsonb_exists_any", texts(), |a, _, _| {
            let value = document(&a[0])?;
            let keys = text_array(&a[1]);
            Ok(Datum::Bool(
                keys.iter().flatten().any(|k| has_key(&value, k)),
            ))
        }),
        ("?&", "jsonb_exists_all", texts(), |a, _, _| {
            let value = document(&a[0])?;
            let keys = text_array(&a[1]);
            Ok(Datum::Bool(
                keys.iter().flatten().all(|k| has_key(&value, k)),
            ))
        }),
        ("||", "jsonb_concat", jsonb.clone(), |a, _, _| {
            Ok(Datum::jsonb(&concat(document(&a[0])?, document(&a[1])?)))
        }),
        ("-", "jsonb_delete", TEXT, |a, _, _| {
            let key = a[1].as_str().unwrap_or_default();
            Ok(Datum::jsonb(&remove_keys(document(&a[0])?, &[key])?))
        }),
        ("-", "jsonb_delete", texts(), |a, _, _| {
            let keys = text_array(&a[1]);
            let keys: Vec<&str> = keys.iter().flatten().map(String::as_str).collect();
            Ok(Datum::jsonb(&remove_keys(document(&a[0])?, &keys)?))
        }),
        ("-", "jsonb_delete", INT4, |a, _, _| {
            remove_index(&a[0], &a[1])
        }),
        ("#-", "jsonb_delete_path", texts(), |a, _, _| {
            edit(&a[0], &a[1], &Edit::Delete, "cannot delete path in scalar")
        }),
        ("=", "jsonb_cmp", jsonb.clone(), |a, _, _| {
            let order = compare_documents(&document(&a[0])?, &document(&a[1])?);
            Ok(Datum::Int4(order as i32))
        }),
    ];
    for (symbol, name, right, eval) in operators {
        let result = match (symbol, name) {
            (_, "jsonb_cmp") => INT4,
            ("@>" | "<@" | "?" | "?|" | "?&", _) => BOOL,
            _ => jsonb.clone(),
        };
        // The comparisons are the engine's own (`jsonb_cmp` is the function).
        if symbol != "=" {
            lib.infix(symbol, jsonb.clone(), right.clone(), result.clone(), eval);
        }
        lib.function(name, [jsonb.clone(), right], result, eval);
    }
    lib.function(
        "jsonb_set",
        [jsonb.clone(), texts(), jsonb.clone(), BOOL],
        jsonb.clone(),
        |a, _, _| {
            let new = document(&a[2])?;
            let create = a[3] == Datum::Bool(true);
            edit(
                &a[0],
                &a[1],
                &Edit::Set { new, create },
                "cannot set path in scalar",
            )
        },
    )
    .defaults(vec![Datum::Bool(true)])
    .names(&["jsonb_in", "path", "replacement", "create_if_missing"]);
    lib.function(
        "jsonb_insert",
        [jsonb.clone(), texts(), jsonb.clone(), BOOL],
        jsonb.clone(),
        |a, _, _| {
            let new = document(&a[2])?;
            let after = a[3] == Datum::Bool(true);
            edit(
                &a[0],
                &a[1],
                &Edit::Insert { new, after },
                "cannot set path in scalar",
            )
        },
    )
    .defaults(vec![Datum::Bool(false)])
    .names(&["jsonb_in", "path", "replacement", "insert_after"]);
    lib.function("jsonb_strip_nulls", [jsonb.clone()], jsonb, |a, _, _| {
        let mut value = document(&a[0])?;
        strip_nulls(&mut value);
        Ok(Datum::jsonb(&value))
    });
}

/// `- int`: the array without its element at `index` (negative from the
/// end).
fn remove_index(target: &Datum, index: &Datum) -> Result<Datum, SqlError> {
    let mut value = document(target)?;
    match &mut value {
        Jsonb::Array(items) => {
            if let Some(at) = index_in(index.as_i64().unwrap_or(0), items.len()) {
                items.remove(at);
            }
        }
        Jsonb::Object(_) => {
            return Err(invalid_parameter(
                "cannot delete from object using integer index",
            ))
        }
        _ => return Err(invalid_parameter("cannot delete from scalar")),
    }
    Ok(Datum::jsonb(&value))
}

/// `?`: a key of an object, a string element of an array, or the string
/// itself.
fn has_key(value: &Jsonb, key: &str) -> bool {
    match value {
        Jsonb::Object(_) => value.get(key).is_some(),
        Jsonb::Array(items) => items
            .iter()
            .any(|item| matches!(item, Jsonb::String(s) if s == key)),
        Jsonb::String(s) => s == key,
        _ => false,
    }
}

/// `||`: two objects merge (the right's values win); anything else is
/// concatenated as arrays, a non-array standing for a one-element array.
fn concat(left: Jsonb, right: Jsonb) -> Jsonb {
    match (left, right) {
        (Jsonb::Object(mut pairs), Jsonb::Object(more)) => {
            pairs.extend(more);
            Jsonb::object(pairs)
        }
        (left, right) => {
            let as_items = |v: Jsonb| match v {
                Jsonb::Array(items) => items,
                other => vec![other],
            };
            let mut items = as_items(left);
            items.extend(as_items(right));
            Jsonb::Array(items)
        }
    }
}

/// `- text` and `- text[]`: the keys from an object, the equal strings
/// from an array.
fn remove_keys(mut value: Jsonb, keys: &[&str]) -> Result<Jsonb, SqlError> {
    match &mut value {
        Jsonb::Object(pairs) => pairs.retain(|(k, _)| !keys.contains(&k.as_str())),
        Jsonb::Array(items) => {
            items.retain(|item| !matches!(item, Jsonb::String(s) if keys.contains(&s.as_str())))
        }
        _ => return Err(invalid_parameter("cannot delete from scalar")),
    }
    Ok(value)
}

/// A change at the end of a path.
enum Edit {
    /// `jsonb_set`: replace, or add when missing and `create`.
    Set { new: Jsonb, create: bool },
    /// `jsonb_insert`: add before (or `after`) an element, or a new key.
    Insert { new: Jsonb, after: bool },
    /// `#-`: remove.
    Delete,
}

/// Applies `change` at `path` in the document `target`.
fn edit(target: &Datum, path: &Datum, change: &Edit, scalar: &str) -> Result<Datum, SqlError> {
    let mut value = document(target)?;
    let steps = text_array(path);
    if steps.is_empty() {
        return Ok(target.clone());
    }
    if value.is_scalar() {
        return Err(invalid_parameter(scalar));
    }
    let mut names = Vec::with_capacity(steps.len());
    for (i, step) in steps.iter().enumerate() {
        let Some(step) = step else {
            return Err(SqlError::new(
                SqlState::NULL_VALUE_NOT_ALLOWED,
                format!("path element at position {} is null", i + 1),
            ));
        };
        names.push(step.as_str());
    }
    edit_at(&mut value, &names, 0, change)?;
    Ok(Datum::jsonb(&value))
}

fn edit_at(value: &mut Jsonb, path: &[&str], depth: usize, change: &Edit) -> Result<(), SqlError> {
    let last = depth + 1 == path.len();
    let step = path[depth];
    match value {
        Jsonb::Object(pairs) => {
            let found = pairs.binary_search_by(|(k, _)| key_order(k, step));
            match (found, last, change) {
                (Ok(i), false, _) => edit_at(&mut pairs[i].1, path, depth + 1, change)?,
                (Ok(i), true, Edit::Set { new, .. }) => pairs[i].1 = new.clone(),
                (Ok(_), true, Edit::Insert { .. }) => {
                    return Err(invalid_parameter("cannot replace existing key")
                        .with_hint("Try using the function jsonb_set to replace key value."))
                }
                (Ok(i), true, Edit::Delete) => {
                    pairs.remove(i);
                }
                (Err(i), true, Edit::Set { new, create: true } | Edit::Insert { new, .. }) => {
                    pairs.insert(i, (step.to_string(), new.clone()))
                }
                (Err(_), _, _) => {}
            }
        }
        Jsonb::Array(items) => {
            let index: i64 = step.trim().parse().map_err(|_| {
                SqlError::new(
                    SqlState::INVALID_TEXT_REPRESENTATION,
                    format!(
                        "path element at position {} is not an integer: \"{step}\"",
                        depth + 1
                    ),
                )
            })?;
            let len = items.len();
            let found = index_in(index, len);
            match (found, last, change) {
                (Some(at), false, _) => edit_at(&mut items[at], path, depth + 1, change)?,
                (None, false, _) => {}
                (Some(at), true, Edit::Set { new, .. }) => items[at] = new.clone(),
                (Some(at), true, Edit::Delete) => {
                    items.remove(at);
                }
                (None, true, Edit::Set { new, create: true }) => {
                    let at = if index < 0 { 0 } else { len };
                    items.insert(at, new.clone());
                }
                (found, true, Edit::Insert { new, after }) => {
                    let at = match found {
                        Some(at) => at + usize::from(*after),
                        None if index < 0 => 0,
                        None => len,
                    };
                    items.insert(at, new.clone());
                }
                (None, true, _) => {}
            }
        }
        // A scalar inside the document: the path goes no further.
        _ => {}
    }
    Ok(())
}

/// `jsonb_strip_nulls`: every object field whose value is null, at any
/// depth (array elements stay).
fn strip_nulls(value: &mut Jsonb) {
    match value {
        Jsonb::Object(pairs) => {
            pairs.retain(|(_, v)| *v != Jsonb::Null);
            pairs.iter_mut().for_each(|(_, v)| strip_nulls(v));
        }
        Jsonb::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> Datum {
        Datum::Jsonb(
            rocklake_types::value::jsonb::parse(s)
                .unwrap()
                .to_text()
                .into(),
        )
    }

    fn path(steps: &[&str]) -> Datum {
        Datum::array(steps.iter().map(|s| Datum::text(*s)).collect::<Vec<_>>())
    }

    fn apply(target: &str, steps: &[&str], change: Edit) -> Result<String, SqlError> {
        let out = edit(
            &doc(target),
            &path(steps),
            &change,
            "cannot set path in scalar",
        )?;
        Ok(rocklake_types::value::text::format_text(&out).unwrap())
    }

    fn set(new: &str, create: bool) -> Edit {
        let new = rocklake_types::value::jsonb::parse(new).unwrap();
        Edit::Set { new, create }
    }

    #[test]
    fn set_insert_and_delete_follow_jsonb_set() {
        assert_eq!(
            apply(r#"{"a": [1, 2]}"#, &["a", "-1"], set("9", true)).unwrap(),
            r#"{"a": [1, 9]}"#
        );
        assert_eq!(
            apply("[1, 2]", &["-5"], set("0", true)).unwrap(),
            "[0, 1, 2]"
        );
        assert_eq!(apply("[1, 2]", &["5"], set("0", false)).unwrap(), "[1, 2]");
        assert_eq!(
            apply(r#"{"a": 1}"#, &["b", "c"], set("0", true)).unwrap(),
            r#"{"a": 1}"#
        );
        assert_eq!(
            apply(r#"{"a": 1}"#, &[], set("0", true)).unwrap(),
            r#"{"a": 1}"#
        );
        let insert = |after| Edit::Insert {
            new: Jsonb::String("x".into()),
            after,
        };
        assert_eq!(
            apply("[1, 2, 3]", &["-1"], insert(false)).unwrap(),
            r#"[1, 2, "x", 3]"#
        );
        assert_eq!(
            apply("[1, 2, 3]", &["-1"], insert(true)).unwrap(),
            r#"[1, 2, 3, "x"]"#
        );
        let e = apply(r#"{"a": 1}"#, &["a"], insert(false)).unwrap_err();
        assert_eq!(e.message, "cannot replace existing key");
        assert_eq!(
            apply(r#"{"a": [1, {"b": 2}]}"#, &["a", "1", "b"], Edit::Delete).unwrap(),
            r#"{"a": [1, {}]}"#
        );
        let e = apply("[1]", &["x"], Edit::Delete).unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_TEXT_REPRESENTATION);
        assert_eq!(
            apply("1", &["a"], Edit::Delete).unwrap_err().code,
            SqlState::INVALID_PARAMETER_VALUE
        );
    }

    #[test]
    fn concatenation_and_removal() {
        let j = |s: &str| rocklake_types::value::jsonb::parse(s).unwrap();
        assert_eq!(
            concat(j(r#"{"a": 1, "b": 2}"#), j(r#"{"a": [3]}"#)).to_text(),
            r#"{"a": [3], "b": 2}"#
        );
        assert_eq!(
            concat(j(r#"{"a": 1}"#), j("1")).to_text(),
            r#"[{"a": 1}, 1]"#
        );
        assert_eq!(concat(j("[]"), j("[1]")).to_text(), "[1]");
        assert_eq!(
            remove_keys(j(r#"["a", "b", 1]"#), &["a"])
                .unwrap()
                .to_text(),
            r#"["b", 1]"#
        );
        assert!(remove_keys(j("1"), &["a"]).is_err());
        assert!(
            has_key(&j(r#""a""#), "a") && has_key(&j(r#"["a"]"#), "a") && !has_key(&j("[1]"), "1")
        );
    }
}
