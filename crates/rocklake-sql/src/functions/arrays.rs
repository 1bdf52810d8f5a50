//! Array functions (PostgreSQL's "Array Functions" table, one-dimensional
//! arrays): `cardinality`, `array_length`, `array_lower`, `array_upper`,
//! `array_ndims`, `array_dims`, `array_append`, `array_prepend`,
//! `array_cat`, `array_position(s)`, `array_remove`, `array_replace`, and
//! the operators `@>`, `<@` (containment) and `&&` (overlap).
//! The `||` operator on arrays is bound with them in mind
//! ([`crate::bind`]'s array concatenation).

use std::cmp::Ordering;

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::SqlError;

use super::def::types::*;
use super::def::Library;
use crate::exec::arrays::lower_bound;
use crate::exec::compare::compare;
use crate::plan::{CallEnv, CallInfo, Param, Returns};

/// Registers the array functions.
pub(super) fn register(lib: &mut Library) {
    lib.function("cardinality", [Param::AnyArray], INT4, cardinality);
    for (name, eval) in [
        ("array_length", array_length as crate::plan::ScalarFn),
        ("array_lower", array_lower),
        ("array_upper", array_upper),
    ] {
        lib.function(name, [Param::AnyArray, INT4.into()], INT4, eval);
    }
    lib.function("array_ndims", [Param::AnyArray], INT4, |a, _, _| {
        Ok(match a[0].elements() {
            Some(items) if !items.is_empty() => Datum::Int4(1),
            _ => Datum::Null,
        })
    });
    lib.function("array_dims", [Param::AnyArray], TEXT, |a, _, _| {
        Ok(match a[0].elements() {
            Some(items) if !items.is_empty() => {
                let lower = lower_bound(&a[0]);
                Datum::text(format!("[{lower}:{}]", lower + items.len() as i64 - 1))
            }
            _ => Datum::Null,
        })
    });
    lib.function(
        "array_fill",
        [Param::AnyElement, Param::Ty(PgType::array_of(INT4))],
        Returns::ArrayOfElement,
        array_fill,
    );
    let array = || Param::AnyCompatibleArray;
    let element = || Param::AnyCompatible;
    lib.function(
        "array_append",
        [array(), element()],
        Returns::ArrayOfElement,
        append,
    )
    .not_strict();
    lib.function(
        "array_prepend",
        [element(), array()],
        Returns::ArrayOfElement,
        prepend,
    )
    .not_strict();
    lib.function(
        "array_cat",
        [array(), array()],
        Returns::ArrayOfElement,
        cat,
    )
    .not_strict();
    // Containment and overlap: elements compared by equality, NULL
    // elements matching nothing.
    lib.infix("@>", Param::AnyArray, Param::AnyArray, BOOL, |a, _, _| {
        Ok(Datum::Bool(contains(&a[0], &a[1])))
    });
    lib.infix("<@", Param::AnyArray, Param::AnyArray, BOOL, |a, _, _| {
        Ok(Datum::Bool(contains(&a[1], &a[0])))
    });
    lib.infix("&&", Param::AnyArray, Param::AnyArray, BOOL, |a, _, _| {
        let theirs = items(&a[1]);
        Ok(Datum::Bool(items(&a[0]).iter().any(|x| {
            !x.is_null() && theirs.iter().any(|y| !y.is_null() && compare(x, y).is_eq())
        })))
    });
    lib.function("array_position", [array(), element()], INT4, position)
        .not_strict();
    lib.function(
        "array_positions",
        [array(), element()],
        PgType::array_of(INT4),
        positions,
    )
    .not_strict();
    lib.function(
        "array_remove",
        [array(), element()],
        Returns::ArrayOfElement,
        remove,
    )
    .not_strict();
    lib.function(
        "array_replace",
        [array(), element(), element()],
        Returns::ArrayOfElement,
        replace,
    )
    .not_strict();
}

fn items(d: &Datum) -> Vec<Datum> {
    d.elements().map(<[Datum]>::to_vec).unwrap_or_default()
}

/// Whether every element of `inner` is (non-NULL and) in `outer`.
fn contains(outer: &Datum, inner: &Datum) -> bool {
    let outer = items(outer);
    items(inner)
        .iter()
        .all(|x| !x.is_null() && outer.iter().any(|y| !y.is_null() && compare(x, y).is_eq()))
}

fn cardinality(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Int4(a[0].elements().map_or(0, |e| e.len() as i32)))
}

/// The bounds of dimension `a[1]` (only 1 exists), or `None`.
fn bounds(a: &[Datum]) -> Option<(i64, i64)> {
    let items = a[0].elements()?;
    if a[1].as_i64() != Some(1) || items.is_empty() {
        return None;
    }
    let lower = lower_bound(&a[0]);
    Some((lower, lower + items.len() as i64 - 1))
}

fn array_length(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(bounds(a).map_or(Datum::Null, |(l, u)| Datum::Int4((u - l + 1) as i32)))
}

fn array_lower(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(bounds(a).map_or(Datum::Null, |(l, _)| Datum::Int4(l as i32)))
}

fn array_upper(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(bounds(a).map_or(Datum::Null, |(_, u)| Datum::Int4(u as i32)))
}

fn append(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let mut v = items(&a[0]);
    v.push(a[1].clone());
    Ok(Datum::array(v))
}

fn prepend(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let mut v = vec![a[0].clone()];
    v.extend(items(&a[1]));
    Ok(Datum::array(v))
}

fn cat(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    if a[0].is_null() && a[1].is_null() {
        return Ok(Datum::Null);
    }
    Ok(Datum::array([items(&a[0]), items(&a[1])].concat()))
}

/// Whether two elements are the same for `array_position` and friends:
/// `IS NOT DISTINCT FROM` (NULL finds NULL).
fn same(x: &Datum, y: &Datum) -> bool {
    match (x.is_null(), y.is_null()) {
        (true, true) => true,
        (false, false) => compare(x, y) == Ordering::Equal,
        _ => false,
    }
}

fn position(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let Some(items) = a[0].elements() else {
        return Ok(Datum::Null);
    };
    let lower = lower_bound(&a[0]);
    Ok(items
        .iter()
        .position(|x| same(x, &a[1]))
        .map_or(Datum::Null, |i| Datum::Int4((lower + i as i64) as i32)))
}

fn positions(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let Some(items) = a[0].elements() else {
        return Ok(Datum::Null);
    };
    let lower = lower_bound(&a[0]);
    Ok(Datum::array(
        items
            .iter()
            .enumerate()
            .filter(|(_, x)| same(x, &a[1]))
            .map(|(i, _)| Datum::Int4((lower + i as i64) as i32))
            .collect::<Vec<_>>(),
    ))
}

fn remove(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    if a[0].is_null() {
        return Ok(Datum::Null);
    }
    Ok(Datum::array(
        items(&a[0])
            .into_iter()
            .filter(|x| !same(x, &a[1]))
            .collect::<Vec<_>>(),
    ))
}

fn replace(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    if a[0].is_null() {
        return Ok(Datum::Null);
    }
    Ok(Datum::array(
        items(&a[0])
            .into_iter()
            .map(|x| if same(&x, &a[1]) { a[2].clone() } else { x })
            .collect::<Vec<_>>(),
    ))
}

/// `array_fill(value, ARRAY[length])`: `length` copies (one dimension).
fn array_fill(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    const MAX_ELEMENTS: usize = 134_217_727;
    let dimensions = items(&a[1]);
    match dimensions.as_slice() {
        [length] => {
            let length = length.as_i64().unwrap_or(0);
            let length = usize::try_from(length).unwrap_or(usize::MAX);
            if length > MAX_ELEMENTS {
                return Err(SqlError::new(
                    rocklake_types::SqlState::PROGRAM_LIMIT_EXCEEDED,
                    format!("array size exceeds the maximum allowed ({MAX_ELEMENTS})"),
                ));
            }
            env.memory
                .check(length.saturating_mul(std::mem::size_of::<Datum>()))?;
            Ok(Datum::array(vec![a[0].clone(); length]))
        }
        [] => Ok(Datum::array(Vec::<Datum>::new())),
        _ => Err(SqlError::unsupported(
            "multidimensional arrays are not supported",
        )),
    }
}
