//! SQL's `(start1, end1) OVERLAPS (start2, end2)`, PostgreSQL's
//! `overlaps` functions over `timestamp`, `timestamptz` and `time`, an end
//! given as an interval from its start, with PostgreSQL's rules for NULL
//! ends and ends before starts.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::SqlError;

use super::super::def::types::*;
use super::super::def::Library;
use super::arith::{shifted, span};
use crate::plan::{CallEnv, CallInfo};

/// Registers `overlaps` for every period type and each end given as a
/// point or as an interval.
pub(super) fn register(lib: &mut Library) {
    for t in [TIMESTAMPTZ, TIMESTAMP, TIME] {
        for (end1, end2) in [
            (t.clone(), t.clone()),
            (INTERVAL, INTERVAL),
            (t.clone(), INTERVAL),
            (INTERVAL, t.clone()),
        ] {
            lib.function(
                "overlaps",
                [t.clone(), end1, t.clone(), end2],
                BOOL,
                overlaps,
            )
            .not_strict();
        }
    }
}

/// A point in microseconds, or NULL.
fn point(start: &Datum, value: &Datum, time_of_day: bool) -> Result<Option<i64>, SqlError> {
    Ok(match value {
        Datum::Null => None,
        Datum::Interval { .. } => match micros(start) {
            None => None,
            Some(s) if time_of_day => {
                let (_, _, m) = span(value);
                Some((s + m).rem_euclid(86_400_000_000))
            }
            Some(s) => Some(shifted(s, span(value), 1)?),
        },
        other => micros(other),
    })
}

fn micros(d: &Datum) -> Option<i64> {
    match d {
        Datum::Timestamp(v) | Datum::TimestampTz(v) | Datum::Time(v) => Some(*v),
        _ => None,
    }
}

fn overlaps(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let time_of_day = call.arg_types.first() == Some(&PgType::Time);
    let period = |start: &Datum, end: &Datum| -> Result<(Option<i64>, Option<i64>), SqlError> {
        let (s, e) = (micros(start), point(start, end, time_of_day)?);
        Ok(match (s, e) {
            (None, e) => (e, None),
            (Some(s), Some(e)) if s > e => (Some(e), Some(s)),
            other => other,
        })
    };
    let (s1, e1) = period(&a[0], &a[1])?;
    let (s2, e2) = period(&a[2], &a[3])?;
    let (Some(s1), Some(s2)) = (s1, s2) else {
        return Ok(Datum::Null);
    };
    let truth = if s1 > s2 {
        match e2 {
            None => None,
            Some(e2) if s1 < e2 => Some(true),
            Some(_) => e1.map(|_| false),
        }
    } else if s1 < s2 {
        match e1 {
            None => None,
            Some(e1) if s2 < e1 => Some(true),
            Some(_) => e2.map(|_| false),
        }
    } else {
        (e1.is_some() && e2.is_some()).then_some(true)
    };
    Ok(truth.map_or(Datum::Null, Datum::Bool))
}
