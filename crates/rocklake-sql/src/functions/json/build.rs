//! Making documents: `to_json(b)`, `row_to_json`, `array_to_json`,
//! `json(b)_build_object`, `json(b)_build_array`, `json(b)_object`; and
//! reading their shape: `json(b)_typeof`, `json(b)_array_length`,
//! `jsonb_pretty`, `json_strip_nulls`. `json` results keep PostgreSQL's
//! spacing for each function (`{"a" : 1}` from `json_build_object`,
//! `{"a":1}` from `row_to_json`).

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::jsonb::{node, write_string, Jsonb, Node};
use rocklake_types::{SqlError, SqlState};

use super::super::def::types::*;
use super::super::def::Library;
use super::convert::{key_text, to_jsonb, write_json};
use super::{document, invalid_parameter, text_array};
use crate::plan::{CallEnv, CallInfo, Param, ScalarFn};

/// Registers the functions that make documents and read their shape.
pub(super) fn register(lib: &mut Library) {
    let json = PgType::Json;
    let jsonb = PgType::Jsonb;
    lib.function("to_json", [Param::Any], json.clone(), |a, info, _| {
        let mut out = String::new();
        write_json(&a[0], &info.arg_types[0], &mut out);
        Ok(Datum::text(out))
    })
    .stable();
    lib.function("to_jsonb", [Param::Any], jsonb.clone(), |a, info, _| {
        Ok(Datum::jsonb(&to_jsonb(&a[0], &info.arg_types[0])?))
    })
    .stable();
    lib.function(
        "row_to_json",
        [Param::Any, BOOL.into()],
        json.clone(),
        row_to_json,
    )
    .optional(1)
    .stable();
    lib.function(
        "array_to_json",
        [Param::AnyArray, BOOL.into()],
        json.clone(),
        array_to_json,
    )
    .optional(1)
    .stable();
    lib.function(
        "json_build_object",
        [Param::Any; 0],
        json.clone(),
        |a, i, _| build_object(a, i, false),
    )
    .variadic(Param::Any)
    .not_strict()
    .stable();
    lib.function(
        "jsonb_build_object",
        [Param::Any; 0],
        jsonb.clone(),
        |a, i, _| build_object(a, i, true),
    )
    .variadic(Param::Any)
    .not_strict()
    .stable();
    lib.function(
        "json_build_array",
        [Param::Any; 0],
        json.clone(),
        |a, info, _| {
            let mut out = String::from("[");
            for (i, (value, ty)) in a.iter().zip(&info.arg_types).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(value, ty, &mut out);
            }
            out.push(']');
            Ok(Datum::text(out))
        },
    )
    .variadic(Param::Any)
    .not_strict()
    .stable();
    lib.function(
        "jsonb_build_array",
        [Param::Any; 0],
        jsonb.clone(),
        |a, info, _| {
            let items = a
                .iter()
                .zip(&info.arg_types)
                .map(|(value, ty)| to_jsonb(value, ty))
                .collect::<Result<_, _>>()?;
            Ok(Datum::jsonb(&Jsonb::Array(items)))
        },
    )
    .variadic(Param::Any)
    .not_strict()
    .stable();
    // Each has a version without arguments too (a variadic parameter
    // takes at least one).
    let empty: [(&'static str, PgType, ScalarFn); 4] = [
        ("json_build_object", json.clone(), |_, _, _| {
            Ok(Datum::text("{}"))
        }),
        ("jsonb_build_object", jsonb.clone(), |_, _, _| {
            Ok(Datum::jsonb(&Jsonb::Object(Vec::new())))
        }),
        ("json_build_array", json.clone(), |_, _, _| {
            Ok(Datum::text("[]"))
        }),
        ("jsonb_build_array", jsonb.clone(), |_, _, _| {
            Ok(Datum::jsonb(&Jsonb::Array(Vec::new())))
        }),
    ];
    for (name, result, eval) in empty {
        lib.function(name, [Param::Any; 0], result, eval).stable();
    }
    let texts = || PgType::array_of(TEXT);
    let objects: [(&'static str, PgType, ScalarFn, ScalarFn); 2] = [
        (
            "json_object",
            json.clone(),
            |a, _, _| object_of_array(&a[0], false),
            |a, _, _| object_of_arrays(&a[0], &a[1], false),
        ),
        (
            "jsonb_object",
            jsonb.clone(),
            |a, _, _| object_of_array(&a[0], true),
            |a, _, _| object_of_arrays(&a[0], &a[1], true),
        ),
    ];
    for (name, result, of_array, of_arrays) in objects {
        lib.function(name, [texts()], result.clone(), of_array);
        lib.function(name, [texts(), texts()], result, of_arrays);
    }
    lib.function("jsonb_typeof", [jsonb.clone()], TEXT, |a, _, _| {
        Ok(Datum::text(document(&a[0])?.type_name()))
    });
    lib.function("json_typeof", [json.clone()], TEXT, |a, _, _| {
        let kind = match node(a[0].as_str().unwrap_or_default())? {
            Node::Object(_) => "object",
            Node::Array(_) => "array",
            Node::String(_) => "string",
            Node::Number(_) => "number",
            Node::Bool(_) => "boolean",
            Node::Null => "null",
        };
        Ok(Datum::text(kind))
    });
    lib.function(
        "jsonb_array_length",
        [jsonb.clone()],
        INT4,
        |a, _, _| match document(&a[0])? {
            Jsonb::Array(items) => Ok(Datum::Int4(items.len() as i32)),
            Jsonb::Object(_) => Err(invalid_parameter("cannot get array length of a non-array")),
            _ => Err(invalid_parameter("cannot get array length of a scalar")),
        },
    );
    lib.function(
        "json_array_length",
        [json.clone()],
        INT4,
        |a, _, _| match node(a[0].as_str().unwrap_or_default())? {
            Node::Array(items) => Ok(Datum::Int4(items.len() as i32)),
            Node::Object(_) => Err(invalid_parameter("cannot get array length of a non-array")),
            _ => Err(invalid_parameter("cannot get array length of a scalar")),
        },
    );
    lib.function("jsonb_pretty", [jsonb], TEXT, |a, _, _| {
        Ok(Datum::text(document(&a[0])?.to_pretty()))
    });
    lib.function("json_strip_nulls", [json.clone()], json, |a, _, _| {
        let mut out = String::new();
        strip_json_nulls(a[0].as_str().unwrap_or_default(), &mut out)?;
        Ok(Datum::text(out))
    });
}

/// `row_to_json(record [, pretty])`: the row's fields as an object, one
/// per line when `pretty`.
fn row_to_json(a: &[Datum], info: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (PgType::Record(fields), Datum::Record(values)) = (&info.arg_types[0], &a[0]) else {
        return Err(SqlError::new(
            SqlState::UNDEFINED_FUNCTION,
            format!(
                "function row_to_json({}) does not exist",
                info.arg_types[0].display_name()
            ),
        ));
    };
    let pretty = a.get(1) == Some(&Datum::Bool(true));
    let mut out = String::from("{");
    for (i, ((name, ty), value)) in fields.iter().zip(values.iter()).enumerate() {
        if i > 0 {
            out.push_str(if pretty { ",\n " } else { "," });
        }
        write_string(name, &mut out);
        out.push(':');
        write_json(value, ty, &mut out);
    }
    out.push('}');
    Ok(Datum::text(out))
}

/// `array_to_json(array [, pretty])`: the elements, one per line when
/// `pretty`.
fn array_to_json(a: &[Datum], info: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let element = info.arg_types[0].element_type().unwrap_or(PgType::Text);
    let pretty = a.get(1) == Some(&Datum::Bool(true));
    let mut out = String::from("[");
    for (i, item) in a[0].elements().unwrap_or_default().iter().enumerate() {
        if i > 0 {
            out.push_str(if pretty { ",\n " } else { "," });
        }
        write_json(item, &element, &mut out);
    }
    out.push(']');
    Ok(Datum::text(out))
}

/// `json(b)_build_object(key, value, ...)`.
fn build_object(a: &[Datum], info: &CallInfo, binary: bool) -> Result<Datum, SqlError> {
    let name = if binary {
        "jsonb_build_object"
    } else {
        "json_build_object"
    };
    if !a.len().is_multiple_of(2) {
        return Err(
            invalid_parameter("argument list must have even number of elements").with_hint(
                format!("The arguments of {name}() must consist of alternating keys and values."),
            ),
        );
    }
    let mut pairs = Vec::with_capacity(a.len() / 2);
    let mut out = String::from("{");
    for (i, pair) in a.chunks(2).enumerate() {
        let (key_type, value_type) = (&info.arg_types[2 * i], &info.arg_types[2 * i + 1]);
        if pair[0].is_null() {
            return Err(if binary {
                invalid_parameter(format!("argument {}: key must not be null", 2 * i + 1))
            } else {
                invalid_parameter(format!("argument {} cannot be null", 2 * i + 1))
                    .with_hint("Object keys should be text.")
            });
        }
        let key = key_text(&pair[0], key_type)?;
        if binary {
            pairs.push((key, to_jsonb(&pair[1], value_type)?));
            continue;
        }
        if i > 0 {
            out.push_str(", ");
        }
        write_string(&key, &mut out);
        out.push_str(" : ");
        write_json(&pair[1], value_type, &mut out);
    }
    if binary {
        return Ok(Datum::jsonb(&Jsonb::object(pairs)));
    }
    out.push('}');
    Ok(Datum::text(out))
}

/// `json(b)_object(text[])`: keys and values alternating.
fn object_of_array(array: &Datum, binary: bool) -> Result<Datum, SqlError> {
    let items = text_array(array);
    if !items.len().is_multiple_of(2) {
        return Err(SqlError::new(
            SqlState::ARRAY_SUBSCRIPT_ERROR,
            "array must have even number of elements",
        ));
    }
    let pairs = items
        .chunks(2)
        .map(|p| (p[0].clone(), p[1].clone()))
        .collect();
    object_of_texts(pairs, binary)
}

/// `json(b)_object(keys text[], values text[])`.
fn object_of_arrays(keys: &Datum, values: &Datum, binary: bool) -> Result<Datum, SqlError> {
    let (keys, values) = (text_array(keys), text_array(values));
    if keys.len() != values.len() {
        return Err(SqlError::new(
            SqlState::ARRAY_SUBSCRIPT_ERROR,
            "mismatched array dimensions",
        ));
    }
    object_of_texts(keys.into_iter().zip(values).collect(), binary)
}

/// `json_object` / `jsonb_object` of (key, value) texts; NULL values
/// become `null`, NULL keys are refused.
fn object_of_texts(
    pairs: Vec<(Option<String>, Option<String>)>,
    binary: bool,
) -> Result<Datum, SqlError> {
    let mut object = Vec::with_capacity(pairs.len());
    let mut out = String::from("{");
    for (i, (key, value)) in pairs.into_iter().enumerate() {
        let Some(key) = key else {
            return Err(SqlError::new(
                SqlState::NULL_VALUE_NOT_ALLOWED,
                "null value not allowed for object key",
            ));
        };
        if binary {
            object.push((key, value.map_or(Jsonb::Null, Jsonb::String)));
            continue;
        }
        if i > 0 {
            out.push_str(", ");
        }
        write_string(&key, &mut out);
        out.push_str(" : ");
        match value {
            Some(v) => write_string(&v, &mut out),
            None => out.push_str("null"),
        }
    }
    if binary {
        return Ok(Datum::jsonb(&Jsonb::object(object)));
    }
    out.push('}');
    Ok(Datum::text(out))
}

/// `json_strip_nulls`: the document without object fields whose value is
/// null, written without spaces (numbers as they were written).
fn strip_json_nulls(text: &str, out: &mut String) -> Result<(), SqlError> {
    match node(text)? {
        Node::Object(pairs) => {
            out.push('{');
            let mut first = true;
            for (key, value) in pairs {
                if matches!(node(value.get())?, Node::Null) {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                write_string(&key, out);
                out.push(':');
                strip_json_nulls(value.get(), out)?;
            }
            out.push('}');
        }
        Node::Array(items) => {
            out.push('[');
            for (i, item) in items.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                strip_json_nulls(item.get(), out)?;
            }
            out.push(']');
        }
        Node::String(s) => write_string(&s, out),
        Node::Number(n) => out.push_str(n),
        Node::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Node::Null => out.push_str("null"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_objects_print_as_postgresql_prints_them() {
        let pairs = [
            Datum::text("a"),
            Datum::Int4(1),
            Datum::text("b"),
            Datum::text("x\"y"),
            Datum::text("c"),
            Datum::Null,
            Datum::text("d"),
            Datum::Bool(false),
            Datum::text("e"),
            Datum::text("[1, {\"f\": 2}]"),
        ];
        let types = [
            TEXT,
            INT4,
            TEXT,
            TEXT,
            TEXT,
            TEXT,
            TEXT,
            BOOL,
            TEXT,
            PgType::Json,
        ];
        let info = CallInfo {
            arg_types: types.to_vec(),
            untyped: vec![false; types.len()],
            result: PgType::Json,
        };
        // The fifth value is of type json: embedded, not a string.
        assert_eq!(
            build_object(&pairs, &info, false).unwrap(),
            Datum::text(r#"{"a" : 1, "b" : "x\"y", "c" : null, "d" : false, "e" : [1, {"f": 2}]}"#)
        );
        assert_eq!(
            build_object(&pairs, &info, true).unwrap(),
            Datum::Jsonb(
                r#"{"a": 1, "b": "x\"y", "c": null, "d": false, "e": [1, {"f": 2}]}"#.into()
            )
        );
        let e = build_object(&[Datum::Null, Datum::Int4(1)], &info, false).unwrap_err();
        assert_eq!(e.message, "argument 1 cannot be null");
    }

    #[test]
    fn stripping_nulls_from_json_rewrites_it_compactly() {
        let mut out = String::new();
        strip_json_nulls(r#"[{"f1":1, "f2":null}, 2, null, 1e2]"#, &mut out).unwrap();
        assert_eq!(out, r#"[{"f1":1},2,null,1e2]"#);
    }
}
