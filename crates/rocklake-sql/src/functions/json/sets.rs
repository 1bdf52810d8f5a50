//! The set-returning functions over documents: `json(b)_each(_text)`,
//! `json(b)_array_elements(_text)`, `json(b)_object_keys`. Each is the
//! unnested array of a hidden library function (see [`SET_FUNCTIONS`]),
//! so it works in FROM (a row's fields as columns) and in a select list.

use std::sync::Arc;

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::jsonb::{node, Jsonb, Node};
use rocklake_types::SqlError;

use super::super::def::types::*;
use super::super::def::Library;
use super::access::{json_result, jsonb_result};
use super::{document, invalid_parameter};
use crate::plan::ScalarFn;

/// Each set-returning function, the hidden name of the function whose
/// array holds its rows, and the name of its one output parameter (its
/// column in FROM), if it has one.
pub(crate) const SET_FUNCTIONS: [(&str, &str, Option<&str>); 10] = [
    ("jsonb_each", "jsonb_each (as array)", None),
    ("jsonb_each_text", "jsonb_each_text (as array)", None),
    ("json_each", "json_each (as array)", None),
    ("json_each_text", "json_each_text (as array)", None),
    (
        "jsonb_array_elements",
        "jsonb_array_elements (as array)",
        Some("value"),
    ),
    (
        "jsonb_array_elements_text",
        "jsonb_array_elements_text (as array)",
        Some("value"),
    ),
    (
        "json_array_elements",
        "json_array_elements (as array)",
        Some("value"),
    ),
    (
        "json_array_elements_text",
        "json_array_elements_text (as array)",
        Some("value"),
    ),
    ("jsonb_object_keys", "jsonb_object_keys (as array)", None),
    ("json_object_keys", "json_object_keys (as array)", None),
];

/// Registers the hidden array functions behind [`SET_FUNCTIONS`].
pub(super) fn register(lib: &mut Library) {
    let pair = |value: PgType| {
        PgType::array_of(PgType::Record(Arc::from(vec![
            ("key".to_string(), TEXT),
            ("value".to_string(), value),
        ])))
    };
    let entries: [(&str, PgType, PgType, ScalarFn); 10] = [
        (
            SET_FUNCTIONS[0].1,
            PgType::Jsonb,
            pair(PgType::Jsonb),
            |a, _, _| jsonb_each(&a[0], false, "jsonb_each"),
        ),
        (SET_FUNCTIONS[1].1, PgType::Jsonb, pair(TEXT), |a, _, _| {
            jsonb_each(&a[0], true, "jsonb_each_text")
        }),
        (
            SET_FUNCTIONS[2].1,
            PgType::Json,
            pair(PgType::Json),
            |a, _, _| json_each(&a[0], false),
        ),
        (SET_FUNCTIONS[3].1, PgType::Json, pair(TEXT), |a, _, _| {
            json_each(&a[0], true)
        }),
        (
            SET_FUNCTIONS[4].1,
            PgType::Jsonb,
            PgType::array_of(PgType::Jsonb),
            |a, _, _| jsonb_elements(&a[0], false),
        ),
        (
            SET_FUNCTIONS[5].1,
            PgType::Jsonb,
            PgType::array_of(TEXT),
            |a, _, _| jsonb_elements(&a[0], true),
        ),
        (
            SET_FUNCTIONS[6].1,
            PgType::Json,
            PgType::array_of(PgType::Json),
            |a, _, _| json_elements(&a[0], false, "json_array_elements"),
        ),
        (
            SET_FUNCTIONS[7].1,
            PgType::Json,
            PgType::array_of(TEXT),
            |a, _, _| json_elements(&a[0], true, "json_array_elements_text"),
        ),
        (
            SET_FUNCTIONS[8].1,
            PgType::Jsonb,
            PgType::array_of(TEXT),
            |a, _, _| jsonb_keys(&a[0]),
        ),
        (
            SET_FUNCTIONS[9].1,
            PgType::Json,
            PgType::array_of(TEXT),
            |a, _, _| json_keys(&a[0]),
        ),
    ];
    for (name, param, result, eval) in entries {
        lib.function(name, [param], result, eval);
    }
}

fn jsonb_each(d: &Datum, as_text: bool, name: &str) -> Result<Datum, SqlError> {
    let Jsonb::Object(pairs) = document(d)? else {
        return Err(invalid_parameter(format!(
            "cannot call {name} on a non-object"
        )));
    };
    let rows: Vec<Datum> = pairs
        .iter()
        .map(|(key, value)| {
            let value = jsonb_result(value, as_text);
            Datum::Record(Arc::from(vec![Datum::text(key.as_str()), value]))
        })
        .collect();
    Ok(Datum::array(rows))
}

fn json_each(d: &Datum, as_text: bool) -> Result<Datum, SqlError> {
    let pairs = match node(d.as_str().unwrap_or_default())? {
        Node::Object(pairs) => pairs,
        Node::Array(_) => {
            return Err(invalid_parameter(
                "cannot deconstruct an array as an object",
            ))
        }
        _ => return Err(invalid_parameter("cannot deconstruct a scalar")),
    };
    let mut rows = Vec::with_capacity(pairs.len());
    for (key, value) in pairs {
        let value = json_result(value.get(), as_text)?;
        rows.push(Datum::Record(Arc::from(vec![Datum::text(key), value])));
    }
    Ok(Datum::array(rows))
}

fn jsonb_elements(d: &Datum, as_text: bool) -> Result<Datum, SqlError> {
    match document(d)? {
        Jsonb::Array(items) => Ok(Datum::array(
            items
                .iter()
                .map(|item| jsonb_result(item, as_text))
                .collect::<Vec<_>>(),
        )),
        Jsonb::Object(_) => Err(invalid_parameter("cannot extract elements from an object")),
        _ => Err(invalid_parameter("cannot extract elements from a scalar")),
    }
}

fn json_elements(d: &Datum, as_text: bool, name: &str) -> Result<Datum, SqlError> {
    match node(d.as_str().unwrap_or_default())? {
        Node::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(json_result(item.get(), as_text)?);
            }
            Ok(Datum::array(out))
        }
        Node::Object(_) => Err(invalid_parameter(format!(
            "cannot call {name} on a non-array"
        ))),
        _ => Err(invalid_parameter(format!("cannot call {name} on a scalar"))),
    }
}

fn jsonb_keys(d: &Datum) -> Result<Datum, SqlError> {
    match document(d)? {
        Jsonb::Object(pairs) => Ok(Datum::array(
            pairs
                .iter()
                .map(|(key, _)| Datum::text(key.as_str()))
                .collect::<Vec<_>>(),
        )),
        Jsonb::Array(_) => Err(invalid_parameter(
            "cannot call jsonb_object_keys on an array",
        )),
        _ => Err(invalid_parameter(
            "cannot call jsonb_object_keys on a scalar",
        )),
    }
}

fn json_keys(d: &Datum) -> Result<Datum, SqlError> {
    match node(d.as_str().unwrap_or_default())? {
        Node::Object(pairs) => Ok(Datum::array(
            pairs
                .into_iter()
                .map(|(key, _)| Datum::text(key))
                .collect::<Vec<_>>(),
        )),
        Node::Array(_) => Err(invalid_parameter(
            "cannot call json_object_keys on an array",
        )),
        _ => Err(invalid_parameter(
            "cannot call json_object_keys on a scalar",
        )),
    }
}
