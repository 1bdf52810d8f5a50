//! Functions about values and the system: `pg_typeof`, `num_nulls`,
//! `num_nonnulls`, `gen_random_uuid`.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::SqlError;

use super::def::Library;
use crate::plan::{CallEnv, CallInfo, Param};

/// Registers the system functions.
pub(super) fn register(lib: &mut Library) {
    lib.function("pg_typeof", [Param::Any], PgType::RegType, pg_typeof)
        .not_strict();
    lib.function("num_nulls", [Param::Any; 0], PgType::Int4, |a, _, _| {
        Ok(Datum::Int4(a.iter().filter(|v| v.is_null()).count() as i32))
    })
    .variadic(Param::Any)
    .not_strict();
    lib.function("num_nonnulls", [Param::Any; 0], PgType::Int4, |a, _, _| {
        Ok(Datum::Int4(a.iter().filter(|v| !v.is_null()).count() as i32))
    })
    .variadic(Param::Any)
    .not_strict();
    lib.function(
        "gen_random_uuid",
        [Param::Any; 0],
        PgType::Uuid,
        |_, _, _| Ok(Datum::Uuid(*uuid::Uuid::new_v4().as_bytes())),
    )
    .volatile()
    .reads_session();
}

/// `pg_typeof(x)`: the type of the argument (`unknown` for an untyped
/// literal), as a `regtype`.
fn pg_typeof(_: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (oid, name) = if call.untyped.first().copied().unwrap_or(false) {
        (705, "unknown".to_string())
    } else {
        let t = &call.arg_types[0];
        (t.oid(), type_name(t))
    };
    Ok(Datum::Reg {
        oid,
        name: name.into(),
    })
}

/// A type's name as `regtype` prints it (`integer`, `numeric`,
/// `character varying`, `integer[]`).
fn type_name(t: &PgType) -> String {
    match t {
        PgType::Array(element) => format!("{}[]", type_name(element)),
        other => other.display_name().to_string(),
    }
}
