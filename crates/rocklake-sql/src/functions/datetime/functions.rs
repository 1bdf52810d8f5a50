//! Date and time functions beyond the fields: `make_date`, `make_time`,
//! `make_timestamp`, `make_timestamptz`, `make_interval`, `justify_days`,
//! `justify_hours`, `justify_interval`, `age`, `isfinite`,
//! `to_timestamp(double precision)`, `date_bin`, and `timezone()` (what
//! `AT TIME ZONE` calls).

use rocklake_types::datum::Datum;
use rocklake_types::value::datetime::{
    MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MINUTE, MICROS_PER_SECOND, UNIX_TO_PG_EPOCH_DAYS,
};
use rocklake_types::{SqlError, SqlState};

use super::arith::{interval, span};
use super::calendar::{
    checked_timestamp, days_in_month, interval_out_of_range, is_infinite_date,
    is_infinite_timestamp, join, justify_hours, split, timestamp_out_of_range,
};
use crate::functions::def::types::*;
use crate::functions::def::Library;
use crate::plan::{CallEnv, CallInfo};
use rocklake_types::value::zone::{session_zone, zone, Zone};

/// Registers the functions of this module.
pub(super) fn register(lib: &mut Library) {
    lib.function("make_date", [INT4, INT4, INT4], DATE, make_date);
    lib.function("make_time", [INT4, INT4, FLOAT8], TIME, make_time);
    lib.function(
        "make_timestamp",
        [INT4, INT4, INT4, INT4, INT4, FLOAT8],
        TIMESTAMP,
        make_timestamp,
    );
    lib.function(
        "make_timestamptz",
        [INT4, INT4, INT4, INT4, INT4, FLOAT8, TEXT],
        TIMESTAMPTZ,
        make_timestamptz,
    )
    .optional(1)
    .stable();
    lib.function(
        "make_interval",
        [INT4, INT4, INT4, INT4, INT4, INT4, FLOAT8],
        INTERVAL,
        make_interval,
    )
    .defaults(vec![
        Datum::Int4(0),
        Datum::Int4(0),
        Datum::Int4(0),
        Datum::Int4(0),
        Datum::Int4(0),
        Datum::Int4(0),
        Datum::Float8(0.0),
    ])
    .names(&["years", "months", "weeks", "days", "hours", "mins", "secs"]);
    lib.function("justify_days", [INTERVAL], INTERVAL, |a, _, _| {
        Ok(interval(justify_days(span(&a[0]))?))
    });
    lib.function("justify_hours", [INTERVAL], INTERVAL, |a, _, _| {
        let (m, d, t) = span(&a[0]);
        Ok(interval(justify_hours(m, d, t)?))
    });
    lib.function("justify_interval", [INTERVAL], INTERVAL, justify_interval);
    lib.function("age", [TIMESTAMP, TIMESTAMP], INTERVAL, age);
    // On the clock of the session's zone.
    lib.function(
        "age",
        [TIMESTAMPTZ, TIMESTAMPTZ],
        INTERVAL,
        |a, call, env| {
            let zone = session_zone();
            let local = |d: &Datum| Datum::Timestamp(zone.local(stamp(d)));
            age(&[local(&a[0]), local(&a[1])], call, env)
        },
    )
    .stable();
    lib.function("isfinite", [DATE], BOOL, |a, _, _| {
        Ok(Datum::Bool(
            !matches!(&a[0], Datum::Date(d) if is_infinite_date(*d)),
        ))
    });
    for t in [TIMESTAMP, TIMESTAMPTZ] {
        lib.function("isfinite", [t], BOOL, |a, _, _| {
            Ok(Datum::Bool(!is_infinite_timestamp(stamp(&a[0]))))
        });
    }
    lib.function("isfinite", [INTERVAL], BOOL, |_, _, _| {
        Ok(Datum::Bool(true))
    });
    lib.function("to_timestamp", [FLOAT8], TIMESTAMPTZ, to_timestamp);
    lib.function("clock_timestamp", [TEXT; 0], TIMESTAMPTZ, |_, _, _| {
        Ok(Datum::TimestampTz(now_utc()))
    })
    .volatile()
    .reads_session();
    lib.function("timeofday", [TEXT; 0], TEXT, |_, _, _| {
        let micros = now_utc();
        let ((year, month, day), time) = split(micros);
        let dow = ["Sat", "Sun", "Mon", "Tue", "Wed", "Thu", "Fri"]
            [(micros.div_euclid(MICROS_PER_DAY)).rem_euclid(7) as usize];
        let months = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let seconds = time / MICROS_PER_SECOND;
        Ok(Datum::text(format!(
            "{dow} {} {day:02} {:02}:{:02}:{:02}.{:06} {year} UTC",
            months[(month - 1) as usize],
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60,
            time % MICROS_PER_SECOND
        )))
    })
    .volatile()
    .reads_session();
    lib.function(
        "date_bin",
        [INTERVAL, TIMESTAMP, TIMESTAMP],
        TIMESTAMP,
        date_bin,
    );
    lib.function(
        "date_bin",
        [INTERVAL, TIMESTAMPTZ, TIMESTAMPTZ],
        TIMESTAMPTZ,
        date_bin,
    );
    lib.function("timezone", [TEXT, TIMESTAMPTZ], TIMESTAMP, timezone_local)
        .stable();
    lib.function("timezone", [TEXT, TIMESTAMP], TIMESTAMPTZ, timezone_utc)
        .stable();
    lib.function(
        "timezone",
        [INTERVAL, TIMESTAMPTZ],
        TIMESTAMP,
        timezone_local,
    );
    lib.function("timezone", [INTERVAL, TIMESTAMP], TIMESTAMPTZ, timezone_utc);
    lib.function("timezone", [TEXT, TIMETZ], TIMETZ, timezone_timetz)
        .stable();
    lib.function("timezone", [INTERVAL, TIMETZ], TIMETZ, timezone_timetz);
    lib.function(
        "date_trunc",
        [TEXT, TIMESTAMPTZ, TEXT],
        TIMESTAMPTZ,
        super::fields::date_trunc_in_zone,
    )
    .stable();
}

fn stamp(d: &Datum) -> i64 {
    match d {
        Datum::Timestamp(us) | Datum::TimestampTz(us) => *us,
        _ => 0,
    }
}

fn int(d: &Datum) -> i64 {
    d.as_i64().unwrap_or(0)
}

fn float(d: &Datum) -> f64 {
    match d {
        Datum::Float8(v) => *v,
        Datum::Float4(v) => f64::from(*v),
        other => other.as_i64().unwrap_or(0) as f64,
    }
}

fn date_field_error(year: i64, month: i64, day: i64) -> SqlError {
    SqlError::new(
        SqlState::DATETIME_FIELD_OVERFLOW,
        format!("date field value out of range: {year}-{month:02}-{day:02}"),
    )
}

/// A (year, month, day) with year -1 for 1 BC, checked.
fn civil(year: i64, month: i64, day: i64) -> Result<(i64, u32, u32), SqlError> {
    if year == 0 || !(1..=12).contains(&month) || day < 1 {
        return Err(date_field_error(year, month, day));
    }
    let astronomical = if year < 0 { year + 1 } else { year };
    if day > i64::from(days_in_month(astronomical, month as u32)) {
        return Err(date_field_error(year, month, day));
    }
    Ok((astronomical, month as u32, day as u32))
}

/// Microseconds of a time of day, or PostgreSQL's "time field value out
/// of range" (24:00:00 itself allowed).
fn clock(hour: i64, minute: i64, seconds: f64) -> Result<i64, SqlError> {
    let micros = (seconds * 1_000_000.0).round_ties_even();
    let out_of_range = || {
        SqlError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!(
                "time field value out of range: {hour}:{minute:02}:{}",
                format_seconds(seconds)
            ),
        )
    };
    if !(0..=24).contains(&hour) || !(0..=59).contains(&minute) || !(0.0..60.0).contains(&seconds) {
        return Err(out_of_range());
    }
    let total = hour * MICROS_PER_HOUR + minute * MICROS_PER_MINUTE + micros as i64;
    if total > MICROS_PER_DAY {
        return Err(out_of_range());
    }
    Ok(total)
}

/// Seconds as PostgreSQL's message prints them (`%02.0f`-like: `00`, or
/// the fraction when there is one).
fn format_seconds(seconds: f64) -> String {
    if seconds.fract() == 0.0 {
        format!("{:02}", seconds as i64)
    } else {
        format!("{seconds}")
    }
}

fn make_date(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let date = civil(int(&a[0]), int(&a[1]), int(&a[2]))?;
    Ok(Datum::Date((join(date, 0)? / MICROS_PER_DAY) as i32))
}

fn make_time(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Time(clock(int(&a[0]), int(&a[1]), float(&a[2]))?))
}

fn local_stamp(a: &[Datum]) -> Result<i64, SqlError> {
    let date = civil(int(&a[0]), int(&a[1]), int(&a[2]))?;
    let time = clock(int(&a[3]), int(&a[4]), float(&a[5]))?;
    join(date, time)
}

fn make_timestamp(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Timestamp(local_stamp(a)?))
}

fn make_timestamptz(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let local = local_stamp(a)?;
    let utc = match a.get(6).and_then(Datum::as_str) {
        Some(name) => zone(name)?.utc(local)?,
        None => session_zone().instant(local),
    };
    Ok(Datum::TimestampTz(checked_timestamp(utc)?))
}

fn make_interval(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let part = |i: usize| a.get(i).map_or(0, int);
    let months = part(0).checked_mul(12).and_then(|y| y.checked_add(part(1)));
    let days = part(2).checked_mul(7).and_then(|w| w.checked_add(part(3)));
    let seconds = a.get(6).map_or(0.0, float);
    let time = (part(4) as f64 * 3600.0 + part(5) as f64 * 60.0 + seconds) * 1_000_000.0;
    let time = time.round_ties_even();
    match (months, days) {
        (Some(m), Some(d)) if time.is_finite() && time.abs() < 9.2e18 => Ok(interval((
            i32::try_from(m).map_err(|_| interval_out_of_range())?,
            i32::try_from(d).map_err(|_| interval_out_of_range())?,
            time as i64,
        ))),
        _ => Err(interval_out_of_range()),
    }
}

const DAYS_PER_MONTH: i32 = 30;

fn justify_days(
    (mut months, mut days, time): (i32, i32, i64),
) -> Result<(i32, i32, i64), SqlError> {
    let whole = days / DAYS_PER_MONTH;
    days -= whole * DAYS_PER_MONTH;
    months = months
        .checked_add(whole)
        .ok_or_else(interval_out_of_range)?;
    if months > 0 && days < 0 {
        days += DAYS_PER_MONTH;
        months -= 1;
    } else if months < 0 && days > 0 {
        days -= DAYS_PER_MONTH;
        months += 1;
    }
    Ok((months, days, time))
}

fn justify_interval(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (months, days, time) = span(&a[0]);
    let whole_days = time / MICROS_PER_DAY;
    let mut time = time - whole_days * MICROS_PER_DAY;
    let days = days
        .checked_add(i32::try_from(whole_days).map_err(|_| interval_out_of_range())?)
        .ok_or_else(interval_out_of_range)?;
    let whole_months = days / DAYS_PER_MONTH;
    let mut days = days - whole_months * DAYS_PER_MONTH;
    let mut months = months
        .checked_add(whole_months)
        .ok_or_else(interval_out_of_range)?;
    if months > 0 && (days < 0 || (days == 0 && time < 0)) {
        days += DAYS_PER_MONTH;
        months -= 1;
    } else if months < 0 && (days > 0 || (days == 0 && time > 0)) {
        days -= DAYS_PER_MONTH;
        months += 1;
    }
    if days > 0 && time < 0 {
        time += MICROS_PER_DAY;
        days -= 1;
    } else if days < 0 && time > 0 {
        time -= MICROS_PER_DAY;
        days += 1;
    }
    Ok(interval((months, days, time)))
}

/// `age(a, b)`: the symbolic difference in years, months, days and time,
/// borrowing from the larger field as PostgreSQL's `timestamp_age`.
fn age(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (x, y) = (stamp(&a[0]), stamp(&a[1]));
    if is_infinite_timestamp(x) || is_infinite_timestamp(y) {
        return Err(timestamp_out_of_range());
    }
    let ((y1, m1, d1), t1) = split(x);
    let ((y2, m2, d2), t2) = split(y);
    let negative = x < y;
    let sign = if negative { -1 } else { 1 };
    let mut micros = sign * (t1 - t2);
    let mut days = sign * (i64::from(d1) - i64::from(d2));
    let mut months = sign * (i64::from(m1) - i64::from(m2));
    let mut years = sign * (y1 - y2);
    while micros < 0 {
        micros += MICROS_PER_DAY;
        days -= 1;
    }
    while days < 0 {
        let (year, month) = if negative { (y1, m1) } else { (y2, m2) };
        days += i64::from(days_in_month(year, month));
        months -= 1;
    }
    while months < 0 {
        months += 12;
        years -= 1;
    }
    let total_months = sign * (years * 12 + months);
    Ok(interval((
        i32::try_from(total_months).map_err(|_| interval_out_of_range())?,
        i32::try_from(sign * days).map_err(|_| interval_out_of_range())?,
        sign * micros,
    )))
}

fn to_timestamp(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let seconds = float(&a[0]);
    if seconds.is_nan() {
        return Err(SqlError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            "timestamp cannot be NaN",
        ));
    }
    if seconds.is_infinite() {
        return Ok(Datum::TimestampTz(if seconds > 0.0 {
            i64::MAX
        } else {
            i64::MIN
        }));
    }
    let epoch = (UNIX_TO_PG_EPOCH_DAYS * 86_400) as f64;
    let micros = ((seconds - epoch) * 1_000_000.0).round_ties_even();
    if !(-2.1e17..9.2e18).contains(&micros) {
        return Err(SqlError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("timestamp out of range: \"{seconds}\""),
        ));
    }
    Ok(Datum::TimestampTz(checked_timestamp(micros as i64)?))
}

fn date_bin(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (months, days, time) = span(&a[0]);
    let (source, origin) = (stamp(&a[1]), stamp(&a[2]));
    if is_infinite_timestamp(source) {
        return Err(timestamp_out_of_range());
    }
    if months != 0 {
        return Err(SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "timestamps cannot be binned into intervals containing months or years",
        ));
    }
    let stride = i64::from(days) * MICROS_PER_DAY + time;
    if stride <= 0 {
        return Err(SqlError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            "stride must be greater than zero",
        ));
    }
    let difference = source
        .checked_sub(origin)
        .ok_or_else(timestamp_out_of_range)?;
    let mut delta = difference - difference % stride;
    if origin > source && stride > 1 {
        delta -= stride;
    }
    let binned = checked_timestamp(
        origin
            .checked_add(delta)
            .ok_or_else(timestamp_out_of_range)?,
    )?;
    Ok(if call.result == TIMESTAMPTZ {
        Datum::TimestampTz(binned)
    } else {
        Datum::Timestamp(binned)
    })
}

/// The zone of `timezone()`'s first argument: a name, or an interval
/// offset (east, whole seconds and no days or months).
fn zone_argument(d: &Datum) -> Result<Zone, SqlError> {
    match d {
        Datum::Interval { .. } => {
            let (months, days, time) = span(d);
            if months != 0 || days != 0 {
                return Err(SqlError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!(
                        "interval time zone \"{}\" must not include months or days",
                        rocklake_types::value::datetime::format_interval(months, days, time)
                    ),
                ));
            }
            Ok(Zone::Fixed((time / MICROS_PER_SECOND) as i32))
        }
        other => zone(other.as_str().unwrap_or_default()),
    }
}

/// `timestamptz AT TIME ZONE zone`: the local time there.
fn timezone_local(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let utc = stamp(&a[1]);
    if is_infinite_timestamp(utc) {
        return Ok(Datum::Timestamp(utc));
    }
    let zone = zone_argument(&a[0])?;
    Ok(Datum::Timestamp(checked_timestamp(zone.local(utc)?)?))
}

/// `timestamp AT TIME ZONE zone`: the instant of that local time there.
fn timezone_utc(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let local = stamp(&a[1]);
    if is_infinite_timestamp(local) {
        return Ok(Datum::TimestampTz(local));
    }
    let zone = zone_argument(&a[0])?;
    Ok(Datum::TimestampTz(checked_timestamp(zone.utc(local)?)?))
}

/// `timetz AT TIME ZONE zone`: the same instant on that zone's clock (the
/// zone's offset of now for a named zone).
fn timetz_value(a: &[Datum]) -> Result<Datum, SqlError> {
    let Datum::TimeTz {
        micros,
        offset_west_secs,
    } = &a[1]
    else {
        return Ok(Datum::Null);
    };
    let zone = zone_argument(&a[0])?;
    let utc_time = micros + i64::from(*offset_west_secs) * MICROS_PER_SECOND;
    let east = zone.offset_at(now_utc())?;
    Ok(Datum::TimeTz {
        micros: (utc_time + i64::from(east) * MICROS_PER_SECOND).rem_euclid(MICROS_PER_DAY),
        offset_west_secs: -east,
    })
}

fn timezone_timetz(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    timetz_value(a)
}

/// The current instant, as microseconds since 2000-01-01 UTC.
fn now_utc() -> i64 {
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    unix - UNIX_TO_PG_EPOCH_DAYS * MICROS_PER_DAY
}
