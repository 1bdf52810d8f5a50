//! PostgreSQL's operators among dates, times, timestamps and intervals:
//! `date ± integer`, `date - date`, `date + time`, `date ± interval`,
//! `time ± interval`, `time - time`, `timestamp[tz] ± interval`,
//! `timestamp[tz] - timestamp[tz]`, `interval ± interval`, `- interval`,
//! `interval * double precision`, `interval / double precision`, and the
//! `timetz` forms.

use rocklake_types::datum::Datum;
use rocklake_types::value::datetime::{MICROS_PER_DAY, MICROS_PER_SECOND};
use rocklake_types::value::zone::with_session_zone;
use rocklake_types::{SqlError, SqlState};

use super::calendar::{
    add_interval, checked_date, checked_timestamp, interval_out_of_range, is_infinite_date,
    is_infinite_timestamp, justify_hours,
};
use crate::functions::def::types::*;
use crate::functions::def::Library;
use crate::plan::{CallEnv, CallInfo};

/// Registers the date and time operators.
pub(super) fn register(lib: &mut Library) {
    lib.infix("+", DATE, INT4, DATE, date_plus_days);
    lib.infix("+", INT4, DATE, DATE, days_plus_date);
    lib.infix("-", DATE, INT4, DATE, date_minus_days);
    lib.infix("-", DATE, DATE, INT4, date_minus_date);
    lib.infix("+", DATE, TIME, TIMESTAMP, date_plus_time);
    lib.infix("+", TIME, DATE, TIMESTAMP, time_plus_date);
    lib.infix("+", DATE, TIMETZ, TIMESTAMPTZ, date_plus_timetz);
    lib.infix("+", TIMETZ, DATE, TIMESTAMPTZ, timetz_plus_date);
    lib.infix("+", DATE, INTERVAL, TIMESTAMP, date_plus_interval);
    lib.infix("+", INTERVAL, DATE, TIMESTAMP, interval_plus_date);
    lib.infix("-", DATE, INTERVAL, TIMESTAMP, date_minus_interval);
    lib.infix("+", TIME, INTERVAL, TIME, time_plus_interval);
    lib.infix("+", INTERVAL, TIME, TIME, interval_plus_time);
    lib.infix("-", TIME, INTERVAL, TIME, time_minus_interval);
    lib.infix("-", TIME, TIME, INTERVAL, time_minus_time);
    lib.infix("+", TIMETZ, INTERVAL, TIMETZ, timetz_plus_interval);
    lib.infix("+", INTERVAL, TIMETZ, TIMETZ, interval_plus_timetz);
    lib.infix("-", TIMETZ, INTERVAL, TIMETZ, timetz_minus_interval);
    for stamp in [TIMESTAMP, TIMESTAMPTZ] {
        lib.infix(
            "+",
            stamp.clone(),
            INTERVAL,
            stamp.clone(),
            stamp_plus_interval,
        );
        lib.infix(
            "+",
            INTERVAL,
            stamp.clone(),
            stamp.clone(),
            interval_plus_stamp,
        );
        lib.infix(
            "-",
            stamp.clone(),
            INTERVAL,
            stamp.clone(),
            stamp_minus_interval,
        );
        lib.infix(
            "-",
            stamp.clone(),
            stamp.clone(),
            INTERVAL,
            stamp_minus_stamp,
        );
    }
    lib.infix("+", INTERVAL, INTERVAL, INTERVAL, interval_plus_interval);
    lib.infix("-", INTERVAL, INTERVAL, INTERVAL, interval_minus_interval);
    lib.prefix("-", INTERVAL, INTERVAL, interval_negate);
    lib.prefix("+", INTERVAL, INTERVAL, interval_same);
    lib.infix("*", INTERVAL, FLOAT8, INTERVAL, interval_times);
    lib.infix("*", FLOAT8, INTERVAL, INTERVAL, times_interval);
    lib.infix("/", INTERVAL, FLOAT8, INTERVAL, interval_divide);
}

/// An interval as (months, days, microseconds).
pub(crate) type Span = (i32, i32, i64);

pub(crate) fn span(d: &Datum) -> Span {
    match d {
        Datum::Interval {
            months,
            days,
            micros,
        } => (*months, *days, *micros),
        _ => (0, 0, 0),
    }
}

pub(crate) fn interval((months, days, micros): Span) -> Datum {
    Datum::Interval {
        months,
        days,
        micros,
    }
}

fn date(d: &Datum) -> i32 {
    match d {
        Datum::Date(days) => *days,
        _ => 0,
    }
}

fn stamp(d: &Datum) -> i64 {
    match d {
        Datum::Timestamp(us) | Datum::TimestampTz(us) => *us,
        Datum::Date(days) => date_to_stamp(*days),
        _ => 0,
    }
}

fn time(d: &Datum) -> i64 {
    match d {
        Datum::Time(us) => *us,
        _ => 0,
    }
}

fn int(d: &Datum) -> i64 {
    d.as_i64().unwrap_or(0)
}

/// A date as the timestamp of its midnight (infinities kept).
pub(crate) fn date_to_stamp(days: i32) -> i64 {
    match days {
        i32::MAX => i64::MAX,
        i32::MIN => i64::MIN,
        d => i64::from(d) * MICROS_PER_DAY,
    }
}

fn date_plus(days: i32, by: i64) -> Result<Datum, SqlError> {
    if is_infinite_date(days) {
        return Ok(Datum::Date(days));
    }
    Ok(Datum::Date(checked_date(i64::from(days) + by)?))
}

fn date_plus_days(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    date_plus(date(&a[0]), int(&a[1]))
}

fn days_plus_date(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    date_plus(date(&a[1]), int(&a[0]))
}

fn date_minus_days(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    date_plus(date(&a[0]), -int(&a[1]))
}

fn date_minus_date(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (x, y) = (date(&a[0]), date(&a[1]));
    if is_infinite_date(x) || is_infinite_date(y) {
        return Err(SqlError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite dates",
        ));
    }
    Ok(Datum::Int4(x - y))
}

fn date_time(days: i32, time: i64) -> Result<i64, SqlError> {
    let midnight = date_to_stamp(days);
    if is_infinite_timestamp(midnight) {
        return Ok(midnight);
    }
    checked_timestamp(midnight + time)
}

fn date_plus_time(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Timestamp(date_time(date(&a[0]), time(&a[1]))?))
}

fn time_plus_date(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Timestamp(date_time(date(&a[1]), time(&a[0]))?))
}

/// `date + timetz`: the local date and time at the time's zone.
fn date_timetz(days: i32, timetz: &Datum) -> Result<Datum, SqlError> {
    let Datum::TimeTz {
        micros,
        offset_west_secs,
    } = timetz
    else {
        return Ok(Datum::Null);
    };
    let local = date_time(days, *micros)?;
    if is_infinite_timestamp(local) {
        return Ok(Datum::TimestampTz(local));
    }
    let utc = local + i64::from(*offset_west_secs) * MICROS_PER_SECOND;
    Ok(Datum::TimestampTz(checked_timestamp(utc)?))
}

fn date_plus_timetz(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    date_timetz(date(&a[0]), &a[1])
}

fn timetz_plus_date(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    date_timetz(date(&a[1]), &a[0])
}

/// `micros` moved by an interval (`sign` -1: back by it).
pub(super) fn shifted(micros: i64, (months, days, time): Span, sign: i64) -> Result<i64, SqlError> {
    let negate = |v: i64| v.checked_mul(sign).ok_or_else(interval_out_of_range);
    add_interval(
        micros,
        i32::try_from(negate(i64::from(months))?).map_err(|_| interval_out_of_range())?,
        i32::try_from(negate(i64::from(days))?).map_err(|_| interval_out_of_range())?,
        negate(time)?,
    )
}

/// `timestamptz ± interval`: months and days move the local time in the
/// session's zone (a day is not always 24 hours), the time part moves the
/// instant.
pub(super) fn shifted_instant(utc: i64, span: Span, sign: i64) -> Result<i64, SqlError> {
    let (months, days, time) = span;
    if months == 0 && days == 0 {
        return shifted(utc, span, sign);
    }
    let moved = with_session_zone(|zone| {
        shifted(zone.local(utc), (months, days, 0), sign).map(|local| zone.instant(local))
    })?;
    shifted(moved, (0, 0, time), sign)
}

/// A timestamp of the call's type moved by an interval.
fn stamp_shifted(micros: i64, span: Span, sign: i64, call: &CallInfo) -> Result<Datum, SqlError> {
    Ok(if call.result == TIMESTAMPTZ {
        Datum::TimestampTz(shifted_instant(micros, span, sign)?)
    } else {
        Datum::Timestamp(shifted(micros, span, sign)?)
    })
}

fn date_plus_interval(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Timestamp(shifted(stamp(&a[0]), span(&a[1]), 1)?))
}

fn interval_plus_date(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Timestamp(shifted(stamp(&a[1]), span(&a[0]), 1)?))
}

fn date_minus_interval(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Timestamp(shifted(stamp(&a[0]), span(&a[1]), -1)?))
}

fn stamp_plus_interval(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    stamp_shifted(stamp(&a[0]), span(&a[1]), 1, call)
}

fn interval_plus_stamp(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    stamp_shifted(stamp(&a[1]), span(&a[0]), 1, call)
}

fn stamp_minus_interval(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    stamp_shifted(stamp(&a[0]), span(&a[1]), -1, call)
}

/// `timestamp - timestamp`: the difference in time, whole days moved out
/// of it (`interval_justify_hours`).
fn stamp_minus_stamp(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (x, y) = (stamp(&a[0]), stamp(&a[1]));
    if is_infinite_timestamp(x) || is_infinite_timestamp(y) {
        return Err(SqlError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite timestamps",
        ));
    }
    let difference = x.checked_sub(y).ok_or_else(interval_out_of_range)?;
    Ok(interval(justify_hours(0, 0, difference)?))
}

/// A time of day moved by an interval's time part, around the clock.
fn clock_plus(time: i64, by: i64) -> i64 {
    (time + by.rem_euclid(MICROS_PER_DAY)).rem_euclid(MICROS_PER_DAY)
}

fn time_plus_interval(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Time(clock_plus(time(&a[0]), span(&a[1]).2)))
}

fn interval_plus_time(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Time(clock_plus(time(&a[1]), span(&a[0]).2)))
}

fn time_minus_interval(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Time(clock_plus(time(&a[0]), -span(&a[1]).2)))
}

fn time_minus_time(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(interval((0, 0, time(&a[0]) - time(&a[1]))))
}

fn timetz_shift(timetz: &Datum, by: i64) -> Datum {
    match timetz {
        Datum::TimeTz {
            micros,
            offset_west_secs,
        } => Datum::TimeTz {
            micros: clock_plus(*micros, by),
            offset_west_secs: *offset_west_secs,
        },
        other => other.clone(),
    }
}

fn timetz_plus_interval(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(timetz_shift(&a[0], span(&a[1]).2))
}

fn interval_plus_timetz(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(timetz_shift(&a[1], span(&a[0]).2))
}

fn timetz_minus_interval(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(timetz_shift(&a[0], -span(&a[1]).2))
}

fn combine(x: Span, y: Span, sign: i32) -> Result<Datum, SqlError> {
    let months =
        x.0.checked_add(y.0.checked_mul(sign).ok_or_else(interval_out_of_range)?);
    let days =
        x.1.checked_add(y.1.checked_mul(sign).ok_or_else(interval_out_of_range)?);
    let micros = x.2.checked_add(
        y.2.checked_mul(i64::from(sign))
            .ok_or_else(interval_out_of_range)?,
    );
    match (months, days, micros) {
        (Some(m), Some(d), Some(t)) => Ok(interval((m, d, t))),
        _ => Err(interval_out_of_range()),
    }
}

fn interval_plus_interval(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    combine(span(&a[0]), span(&a[1]), 1)
}

fn interval_minus_interval(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    combine(span(&a[0]), span(&a[1]), -1)
}

fn interval_negate(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    combine((0, 0, 0), span(&a[0]), -1)
}

fn interval_same(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(a[0].clone())
}

fn factor(d: &Datum) -> f64 {
    match d {
        Datum::Float8(v) => *v,
        Datum::Float4(v) => f64::from(*v),
        other => other.as_i64().unwrap_or(0) as f64,
    }
}

/// Rounds to microsecond precision, as PostgreSQL's `TSROUND`.
fn ts_round(value: f64) -> f64 {
    (value * 1_000_000.0).round_ties_even() / 1_000_000.0
}

/// `interval * factor` as PostgreSQL's `interval_mul`: each field scaled,
/// the fractions of months cascading into days (30 to a month) and of days
/// into time.
pub(crate) fn scale_interval((months, days, time): Span, factor: f64) -> Result<Span, SqlError> {
    const DAYS_PER_MONTH: f64 = 30.0;
    const SECS_PER_DAY: f64 = 86_400.0;
    let scaled_months = f64::from(months) * factor;
    if scaled_months.is_nan()
        || !(f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&scaled_months)
    {
        return Err(interval_out_of_range());
    }
    let scaled_days = f64::from(days) * factor;
    if scaled_days.is_nan() || !(f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&scaled_days) {
        return Err(interval_out_of_range());
    }
    let result_months = scaled_months as i32;
    let mut result_days = scaled_days as i32;
    let month_remainder_days =
        ts_round((scaled_months - f64::from(result_months)) * DAYS_PER_MONTH);
    let mut sec_remainder = ts_round(
        (scaled_days - f64::from(result_days) + month_remainder_days
            - f64::from(month_remainder_days as i32))
            * SECS_PER_DAY,
    );
    if sec_remainder.abs() >= SECS_PER_DAY {
        let whole = (sec_remainder / SECS_PER_DAY) as i32;
        result_days = result_days
            .checked_add(whole)
            .ok_or_else(interval_out_of_range)?;
        sec_remainder -= f64::from(whole) * SECS_PER_DAY;
    }
    result_days = result_days
        .checked_add(month_remainder_days as i32)
        .ok_or_else(interval_out_of_range)?;
    let time = (time as f64 * factor + sec_remainder * 1_000_000.0).round_ties_even();
    if time.is_nan() || !(i64::MIN as f64..i64::MAX as f64).contains(&time) {
        return Err(interval_out_of_range());
    }
    Ok((result_months, result_days, time as i64))
}

fn interval_times(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(interval(scale_interval(span(&a[0]), factor(&a[1]))?))
}

fn times_interval(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(interval(scale_interval(span(&a[1]), factor(&a[0]))?))
}

/// `interval / factor` as PostgreSQL's `interval_div`: each field divided,
/// fractions cascading as in multiplication.
fn interval_divide(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    const DAYS_PER_MONTH: f64 = 30.0;
    const SECS_PER_DAY: f64 = 86_400.0;
    let (months, days, time) = span(&a[0]);
    let divisor = factor(&a[1]);
    if divisor == 0.0 {
        return Err(SqlError::new(
            SqlState::DIVISION_BY_ZERO,
            "division by zero",
        ));
    }
    let month_quotient = f64::from(months) / divisor;
    let day_quotient = f64::from(days) / divisor;
    let result_months = month_quotient as i32;
    let mut result_days = day_quotient as i32;
    let month_remainder_days =
        ts_round((month_quotient - f64::from(result_months)) * DAYS_PER_MONTH);
    let mut sec_remainder = ts_round(
        (day_quotient - f64::from(result_days) + month_remainder_days
            - f64::from(month_remainder_days as i32))
            * SECS_PER_DAY,
    );
    if sec_remainder.abs() >= SECS_PER_DAY {
        let whole = (sec_remainder / SECS_PER_DAY) as i32;
        result_days += whole;
        sec_remainder -= f64::from(whole) * SECS_PER_DAY;
    }
    result_days += month_remainder_days as i32;
    let time = (time as f64 / divisor + sec_remainder * 1_000_000.0).round_ties_even();
    if time.is_nan() || !(i64::MIN as f64..i64::MAX as f64).contains(&time) {
        return Err(interval_out_of_range());
    }
    Ok(interval((result_months, result_days, time as i64)))
}
