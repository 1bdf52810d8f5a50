//! The casts from `jsonb` to numbers and `boolean` (`'1.5'::jsonb::int`),
//! which PostgreSQL makes with functions named after the target type
//! (`int4(jsonb)`, ...): a number converts as `numeric` would, a boolean
//! to `boolean`; any other kind of value is 22023.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::jsonb::Jsonb;
use rocklake_types::SqlError;

use super::super::def::types::*;
use super::super::def::Library;
use super::{document, invalid_parameter};
use crate::exec::cast::cast_datum;
use crate::plan::{CallEnv, CallInfo};

/// The types a `jsonb` value casts to through these functions.
pub(crate) const TARGETS: [PgType; 7] = [BOOL, INT2, INT4, INT8, FLOAT4, FLOAT8, NUMERIC];

/// Registers `bool(jsonb)`, `int4(jsonb)`, ... (named by `typname`).
pub(super) fn register(lib: &mut Library) {
    for target in TARGETS {
        lib.function(target.type_name(), [PgType::Jsonb], target, cast);
    }
}

fn cast(a: &[Datum], info: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let target = &info.result;
    let value = document(&a[0])?;
    match (&value, target) {
        (Jsonb::Bool(b), PgType::Bool) => Ok(Datum::Bool(*b)),
        (Jsonb::Number(n), t) if *t != PgType::Bool => {
            cast_datum(Datum::Numeric(n.clone()), target)
        }
        (other, _) => Err(invalid_parameter(format!(
            "cannot cast jsonb {} to type {}",
            match other {
                Jsonb::Number(_) => "numeric",
                Jsonb::Bool(_) => "boolean",
                Jsonb::Object(_) => "object",
                Jsonb::Array(_) => "array",
                other => other.type_name(),
            },
            target.display_name()
        ))),
    }
}
