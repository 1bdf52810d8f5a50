//! `generate_series(start, stop, step interval)` over `timestamp` and
//! `timestamptz`: the values are made by adding `step` again and again, as
//! PostgreSQL does (so a month step from January 31 goes on from February
//! 28/29). The set-returning function unnests the array made here.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::{SqlError, SqlState};

use super::super::def::types::*;
use super::super::def::Library;
use super::arith::{shifted, shifted_instant, span};
use crate::plan::{CallEnv, CallInfo};

/// The hidden name of the array behind `generate_series` over timestamps.
pub(crate) const SERIES_ARRAY: &str = "generate_series (timestamps as array)";

/// Registers the array behind the timestamp series.
pub(super) fn register(lib: &mut Library) {
    for t in [TIMESTAMP, TIMESTAMPTZ] {
        lib.function(
            SERIES_ARRAY,
            [t.clone(), t.clone(), INTERVAL],
            PgType::array_of(t),
            series,
        );
    }
}

fn micros(d: &Datum) -> i64 {
    match d {
        Datum::Timestamp(v) | Datum::TimestampTz(v) => *v,
        _ => 0,
    }
}

fn series(a: &[Datum], call: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    let step = span(&a[2]);
    // Intervals compare with 30-day months, as PostgreSQL's do.
    let direction =
        (i128::from(step.0) * 30 + i128::from(step.1)) * 86_400_000_000 + i128::from(step.2);
    if direction == 0 {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "step size cannot equal zero",
        ));
    }
    let stop = micros(&a[1]);
    let tz = call.result == PgType::array_of(TIMESTAMPTZ);
    let mut values = Vec::new();
    let mut current = micros(&a[0]);
    loop {
        let within = if direction > 0 {
            current <= stop
        } else {
            current >= stop
        };
        if !within {
            break;
        }
        values.push(if tz {
            Datum::TimestampTz(current)
        } else {
            Datum::Timestamp(current)
        });
        if values.len() % 1024 == 0 {
            env.memory.check(1024 * 32)?;
        }
        let next = if tz {
            shifted_instant(current, step, 1)
        } else {
            shifted(current, step, 1)
        };
        current = match next {
            Ok(next) => next,
            Err(_) => break,
        };
    }
    Ok(Datum::array(values))
}
