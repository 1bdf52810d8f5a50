//! The JSON aggregates' results: `json_agg` and `jsonb_agg` of values
//! already made JSON (the binder wraps their argument in `to_json(b)`),
//! `json_object_agg` and `jsonb_object_agg` of key texts and values.

use rocklake_types::datum::Datum;
use rocklake_types::value::jsonb::{self, write_string, Jsonb};
use rocklake_types::{SqlError, SqlState};

use super::super::def::Library;
use super::convert::key_text;
use crate::plan::Param;

/// The hidden function that makes a `json_object_agg` key its text.
pub(crate) const KEY_TEXT: &str = "json_object_agg (key)";

/// Registers [`KEY_TEXT`].
pub(super) fn register(lib: &mut Library) {
    lib.function(
        KEY_TEXT,
        [Param::Any],
        rocklake_types::datum::PgType::Text,
        |a, info, _| Ok(Datum::text(key_text(&a[0], &info.arg_types[0])?)),
    )
    .stable();
}

/// `json_agg` (`jsonb_agg` when `binary`) of these JSON values (NULL for
/// `null`); `rows` starts each value after the first on a new line, as
/// PostgreSQL does for arrays and rows. NULL when there are none.
pub(crate) fn finish_agg<'a>(
    binary: bool,
    rows: bool,
    values: impl ExactSizeIterator<Item = &'a Datum>,
) -> Result<Datum, SqlError> {
    if values.len() == 0 {
        return Ok(Datum::Null);
    }
    if binary {
        let items = values.map(value_of).collect::<Result<_, _>>()?;
        return Ok(Datum::jsonb(&Jsonb::Array(items)));
    }
    let mut out = String::from("[");
    for (i, value) in values.enumerate() {
        if i > 0 {
            out.push_str(if rows { ", \n " } else { ", " });
        }
        push_json(value, &mut out);
    }
    out.push(']');
    Ok(Datum::text(out))
}

/// `json_object_agg` (`jsonb_object_agg` when `binary`) of (key text,
/// JSON value) pairs: `{ "k" : v, ... }`, or `jsonb`'s object (the last
/// value of a key kept). NULL when there are none.
pub(crate) fn finish_object_agg<'a>(
    binary: bool,
    pairs: impl ExactSizeIterator<Item = (&'a Datum, &'a Datum)>,
) -> Result<Datum, SqlError> {
    if pairs.len() == 0 {
        return Ok(Datum::Null);
    }
    let key_of = |key: &'a Datum| {
        key.as_str().ok_or_else(|| {
            SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "field name must not be null",
            )
        })
    };
    if binary {
        let mut object = Vec::with_capacity(pairs.len());
        for (key, value) in pairs {
            object.push((key_of(key)?.to_string(), value_of(value)?));
        }
        return Ok(Datum::jsonb(&Jsonb::object(object)));
    }
    let mut out = String::from("{ ");
    for (i, (key, value)) in pairs.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_string(key_of(key)?, &mut out);
        out.push_str(" : ");
        push_json(value, &mut out);
    }
    out.push_str(" }");
    Ok(Datum::text(out))
}

fn value_of(value: &Datum) -> Result<Jsonb, SqlError> {
    match value {
        Datum::Jsonb(text) => jsonb::parse(text),
        _ => Ok(Jsonb::Null),
    }
}

fn push_json(value: &Datum, out: &mut String) {
    match value {
        Datum::Text(json) => out.push_str(json),
        _ => out.push_str("null"),
    }
}
