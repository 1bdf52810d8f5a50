//! The fields of dates, times and intervals: `extract(field FROM x)`
//! (numeric, as PostgreSQL 14 and later), `date_part(field, x)` (double
//! precision) and `date_trunc(field, x)`, with PostgreSQL's unit names and
//! abbreviations and its two errors: a unit it does not know (22023 "not
//! recognized") and one the type has no such field for (0A000 "not
//! supported").

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::datetime::{
    days_from_civil, MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MINUTE, MICROS_PER_SECOND,
    UNIX_TO_PG_EPOCH_DAYS,
};
use rocklake_types::value::numeric;
use rocklake_types::value::zone::with_session_zone;
use rocklake_types::{SqlError, SqlState};

use super::arith::{date_to_stamp, interval, span};
use super::calendar::{is_infinite_date, is_infinite_timestamp, join, split};
use crate::functions::def::types::*;
use crate::functions::def::Library;
use crate::plan::{CallEnv, CallInfo};

/// Registers `extract`, `date_part` and `date_trunc`.
pub(super) fn register(lib: &mut Library) {
    for source in [DATE, TIME, TIMETZ, TIMESTAMP, TIMESTAMPTZ, INTERVAL] {
        lib.function("extract", [TEXT, source.clone()], NUMERIC, extract);
        lib.function("date_part", [TEXT, source], FLOAT8, date_part);
    }
    lib.function("date_trunc", [TEXT, TIMESTAMP], TIMESTAMP, date_trunc);
    lib.function("date_trunc", [TEXT, TIMESTAMPTZ], TIMESTAMPTZ, date_trunc)
        .stable();
    lib.function(
        "date_trunc",
        [TEXT, INTERVAL],
        INTERVAL,
        date_trunc_interval,
    );
}

/// A unit of `extract`, `date_part` and `date_trunc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Microseconds,
    Milliseconds,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
    Julian,
    IsoYear,
    Dow,
    IsoDow,
    Doy,
    Epoch,
    Timezone,
    TimezoneHour,
    TimezoneMinute,
}

/// The unit PostgreSQL's `DecodeUnits`/`DecodeSpecial` reads `text` as.
fn unit(text: &str) -> Option<Unit> {
    use Unit::*;
    Some(match text.trim().to_ascii_lowercase().as_str() {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "useconds" => Microseconds,
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "mseconds" => Milliseconds,
        "second" | "seconds" | "s" | "sec" | "secs" => Second,
        "minute" | "minutes" | "m" | "min" | "mins" => Minute,
        "hour" | "hours" | "h" | "hr" | "hrs" => Hour,
        "day" | "days" | "d" => Day,
        "week" | "weeks" | "w" => Week,
        "month" | "months" | "mon" | "mons" => Month,
        "quarter" | "qtr" => Quarter,
        "year" | "years" | "y" | "yr" | "yrs" => Year,
        "decade" | "decades" | "dec" | "decs" => Decade,
        "century" | "centuries" | "c" | "cent" => Century,
        "millennium" | "millennia" | "millenniums" | "mil" | "mils" => Millennium,
        "julian" | "j" | "jd" => Julian,
        "isoyear" => IsoYear,
        "dow" => Dow,
        "isodow" => IsoDow,
        "doy" => Doy,
        "epoch" => Epoch,
        "timezone" | "tz" => Timezone,
        "timezone_hour" | "timezone_h" | "tz_h" => TimezoneHour,
        "timezone_minute" | "timezone_m" | "tz_m" => TimezoneMinute,
        _ => return None,
    })
}

fn not_recognized(text: &str, t: &PgType) -> SqlError {
    SqlError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!(
            "unit \"{}\" not recognized for type {}",
            text.to_lowercase(),
            t.display_name()
        ),
    )
}

fn not_supported(text: &str, t: &PgType) -> SqlError {
    SqlError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!(
            "unit \"{}\" not supported for type {}",
            text.to_lowercase(),
            t.display_name()
        ),
    )
}

/// A field's value: exact (an integer scaled by 10^scale, as numeric) so
/// `extract` gives PostgreSQL's digits and `date_part` its double.
enum Value {
    /// `units / 10^scale`.
    Scaled(i64, u32),
    /// An exact numeric text (the Julian day with its fraction).
    Numeric(String),
    /// Infinity or minus infinity (or NULL for the fields that have none).
    Infinite(Option<bool>),
}

impl Value {
    fn numeric(self) -> Result<Datum, SqlError> {
        Ok(match self {
            Value::Scaled(units, scale) => Datum::Numeric(scaled_text(units, scale)),
            Value::Numeric(text) => Datum::Numeric(text),
            Value::Infinite(Some(positive)) => {
                Datum::Numeric(if positive { "Infinity" } else { "-Infinity" }.to_string())
            }
            Value::Infinite(None) => Datum::Null,
        })
    }

    fn float(self) -> Datum {
        match self {
            Value::Scaled(units, scale) => Datum::Float8(units as f64 / 10f64.powi(scale as i32)),
            Value::Numeric(text) => Datum::Float8(text.parse().unwrap_or(f64::NAN)),
            Value::Infinite(Some(positive)) => Datum::Float8(if positive {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            }),
            Value::Infinite(None) => Datum::Null,
        }
    }
}

/// `units / 10^scale` as numeric text with `scale` fraction digits.
fn scaled_text(units: i64, scale: u32) -> String {
    let negative = units < 0;
    let digits = units.unsigned_abs().to_string();
    let scale = scale as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    let sign = if negative { "-" } else { "" };
    if scale == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

fn extract(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    field(a, &call.arg_types[1])?.numeric()
}

fn date_part(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(field(a, &call.arg_types[1])?.float())
}

/// The field named `a[0]` of `a[1]`, a value of type `t`.
fn field(a: &[Datum], t: &PgType) -> Result<Value, SqlError> {
    let name = a[0].as_str().unwrap_or_default();
    let unit = unit(name).ok_or_else(|| not_recognized(name, t))?;
    let unsupported = || not_supported(name, t);
    match &a[1] {
        Datum::Date(days) => date_field(*days, unit).ok_or_else(unsupported),
        Datum::Timestamp(us) => stamp_field(*us, unit, None).ok_or_else(unsupported),
        // On the clock of the session's zone.
        Datum::TimestampTz(us) => {
            let east = with_session_zone(|zone| zone.offset_at(*us));
            stamp_field(*us, unit, Some(east)).ok_or_else(unsupported)
        }
        Datum::Time(us) => time_field(*us, None, unit).ok_or_else(unsupported),
        Datum::TimeTz {
            micros,
            offset_west_secs,
        } => time_field(*micros, Some(*offset_west_secs), unit).ok_or_else(unsupported),
        Datum::Interval { .. } => interval_field(span(&a[1]), unit).ok_or_else(unsupported),
        _ => Err(unsupported()),
    }
}

/// The ISO 8601 week-numbering year and week of a date.
fn iso_week(year: i64, month: u32, day: u32) -> (i64, i64) {
    let (iso_year, week, _) =
        super::calendar::iso_week_date(days_from_civil(year, i64::from(month), i64::from(day)));
    (iso_year, week)
}

/// The fields every calendar date has (year and below, of a date or
/// timestamp); `None` for the others.
fn calendar_field((year, month, day): (i64, u32, u32), unit: Unit) -> Option<i64> {
    let days = days_from_civil(year, i64::from(month), i64::from(day));
    let signed_year = if year > 0 { year } else { year - 1 };
    Some(match unit {
        Unit::Day => i64::from(day),
        Unit::Month => i64::from(month),
        Unit::Quarter => i64::from((month - 1) / 3 + 1),
        Unit::Week => iso_week(year, month, day).1,
        Unit::Year => signed_year,
        Unit::Decade => {
            if year >= 0 {
                year / 10
            } else {
                -((8 - (year - 1)) / 10)
            }
        }
        Unit::Century => {
            if year > 0 {
                (year + 99) / 100
            } else {
                -((99 - (year - 1)) / 100)
            }
        }
        Unit::Millennium => {
            if year > 0 {
                (year + 999) / 1000
            } else {
                -((999 - (year - 1)) / 1000)
            }
        }
        Unit::IsoYear => {
            let iso = iso_week(year, month, day).0;
            if iso > 0 {
                iso
            } else {
                iso - 1
            }
        }
        Unit::Dow => (days + 4).rem_euclid(7),
        Unit::IsoDow => (days + 3).rem_euclid(7) + 1,
        Unit::Doy => days - days_from_civil(year, 1, 1) + 1,
        _ => return None,
    })
}

/// Julian day number of a date.
fn julian_day(year: i64, month: u32, day: u32) -> i64 {
    super::calendar::julian_day(days_from_civil(year, i64::from(month), i64::from(day)))
}

fn date_field(days: i32, unit: Unit) -> Option<Value> {
    if is_infinite_date(days) {
        return infinite_field(unit, days > 0, true);
    }
    let date =
        rocklake_types::value::datetime::civil_from_days(i64::from(days) + UNIX_TO_PG_EPOCH_DAYS);
    match unit {
        Unit::Julian => Some(Value::Scaled(julian_day(date.0, date.1, date.2), 0)),
        Unit::Epoch => Some(Value::Scaled(
            (i64::from(days) + UNIX_TO_PG_EPOCH_DAYS) * 86_400,
            0,
        )),
        _ => calendar_field(date, unit).map(|v| Value::Scaled(v, 0)),
    }
}

/// What an infinite date or timestamp gives: ±infinity for the fields
/// that grow with time, NULL for the others.
fn infinite_field(unit: Unit, positive: bool, is_date: bool) -> Option<Value> {
    match unit {
        Unit::Year
        | Unit::Decade
        | Unit::Century
        | Unit::Millennium
        | Unit::Julian
        | Unit::IsoYear
        | Unit::Epoch => Some(Value::Infinite(Some(positive))),
        Unit::Day
        | Unit::Month
        | Unit::Quarter
        | Unit::Week
        | Unit::Dow
        | Unit::IsoDow
        | Unit::Doy => Some(Value::Infinite(None)),
        Unit::Hour | Unit::Minute | Unit::Second | Unit::Milliseconds | Unit::Microseconds
            if !is_date =>
        {
            Some(Value::Infinite(None))
        }
        Unit::Timezone | Unit::TimezoneHour | Unit::TimezoneMinute if !is_date => {
            Some(Value::Infinite(None))
        }
        _ => None,
    }
}

/// The time-of-day fields (seconds and below scaled).
fn clock_field(time: i64, unit: Unit) -> Option<Value> {
    let seconds_micros = time % MICROS_PER_MINUTE;
    Some(match unit {
        Unit::Microseconds => Value::Scaled(seconds_micros, 0),
        Unit::Milliseconds => Value::Scaled(seconds_micros, 3),
        Unit::Second => Value::Scaled(seconds_micros, 6),
        Unit::Minute => Value::Scaled(time % MICROS_PER_HOUR / MICROS_PER_MINUTE, 0),
        Unit::Hour => Value::Scaled(time / MICROS_PER_HOUR, 0),
        _ => return None,
    })
}

/// A field of a timestamp; of a timestamptz (`east`: its zone's offset,
/// seconds east) on the local clock.
fn stamp_field(micros: i64, unit: Unit, east: Option<i32>) -> Option<Value> {
    if is_infinite_timestamp(micros) {
        return infinite_field(unit, micros > 0, false).filter(|_| {
            east.is_some()
                || !matches!(
                    unit,
                    Unit::Timezone | Unit::TimezoneHour | Unit::TimezoneMinute
                )
        });
    }
    let (date, time) = split(micros + i64::from(east.unwrap_or(0)) * MICROS_PER_SECOND);
    match unit {
        Unit::Microseconds | Unit::Milliseconds | Unit::Second | Unit::Minute | Unit::Hour => {
            clock_field(time, unit)
        }
        Unit::Epoch => Some(Value::Scaled(
            micros + UNIX_TO_PG_EPOCH_DAYS * MICROS_PER_DAY,
            6,
        )),
        Unit::Julian => {
            let day = julian_day(date.0, date.1, date.2).to_string();
            let fraction =
                numeric::arith(&time.to_string(), &MICROS_PER_DAY.to_string(), '/').ok()?;
            numeric::arith(&day, &fraction, '+')
                .ok()
                .map(Value::Numeric)
        }
        Unit::Timezone | Unit::TimezoneHour | Unit::TimezoneMinute => {
            let east = i64::from(east?);
            Some(Value::Scaled(
                match unit {
                    Unit::Timezone => east,
                    Unit::TimezoneHour => east / 3600,
                    _ => east / 60 % 60,
                },
                0,
            ))
        }
        _ => calendar_field(date, unit).map(|v| Value::Scaled(v, 0)),
    }
}

fn time_field(micros: i64, offset_west: Option<i32>, unit: Unit) -> Option<Value> {
    match (unit, offset_west) {
        (Unit::Epoch, None) => Some(Value::Scaled(micros, 6)),
        (Unit::Epoch, Some(west)) => Some(Value::Scaled(
            micros + i64::from(west) * MICROS_PER_SECOND,
            6,
        )),
        (Unit::Timezone, Some(west)) => Some(Value::Scaled(-i64::from(west), 0)),
        (Unit::TimezoneHour, Some(west)) => Some(Value::Scaled(-i64::from(west) / 3600, 0)),
        (Unit::TimezoneMinute, Some(west)) => Some(Value::Scaled(-i64::from(west) / 60 % 60, 0)),
        _ => clock_field(micros, unit),
    }
}

fn interval_field((months, days, time): (i32, i32, i64), unit: Unit) -> Option<Value> {
    let years = i64::from(months / 12);
    let seconds_micros = time % MICROS_PER_MINUTE;
    Some(match unit {
        Unit::Microseconds => Value::Scaled(seconds_micros, 0),
        Unit::Milliseconds => Value::Scaled(seconds_micros, 3),
        Unit::Second => Value::Scaled(seconds_micros, 6),
        Unit::Minute => Value::Scaled(time % MICROS_PER_HOUR / MICROS_PER_MINUTE, 0),
        Unit::Hour => Value::Scaled(time / MICROS_PER_HOUR, 0),
        Unit::Day => Value::Scaled(i64::from(days), 0),
        Unit::Month => Value::Scaled(i64::from(months % 12), 0),
        Unit::Quarter => Value::Scaled(i64::from(months % 12 / 3 + 1), 0),
        Unit::Year => Value::Scaled(years, 0),
        Unit::Decade => Value::Scaled(years / 10, 0),
        Unit::Century => Value::Scaled(years / 100, 0),
        Unit::Millennium => Value::Scaled(years / 1000, 0),
        Unit::Epoch => {
            // 365.25 days to a year, 30 to a month.
            let seconds =
                31_557_600 * years + 2_592_000 * i64::from(months % 12) + 86_400 * i64::from(days);
            Value::Scaled(
                seconds.checked_mul(MICROS_PER_SECOND)?.checked_add(time)?,
                6,
            )
        }
        _ => return None,
    })
}

/// `date_trunc(unit, timestamp)`: the timestamp with every field below the
/// unit at its start.
fn date_trunc(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let name = a[0].as_str().unwrap_or_default();
    let t = &call.arg_types[1];
    let micros = match &a[1] {
        Datum::Timestamp(us) | Datum::TimestampTz(us) => *us,
        Datum::Date(days) => date_to_stamp(*days),
        _ => 0,
    };
    let unit = unit(name).ok_or_else(|| not_recognized(name, t))?;
    let truncated = if is_infinite_timestamp(micros) {
        micros
    } else if call.result == TIMESTAMPTZ {
        // On the clock of the session's zone.
        let zone = rocklake_types::value::zone::session_zone();
        let local =
            truncate_stamp(zone.local(micros), unit).ok_or_else(|| not_recognized(name, t))??;
        zone.instant(local)
    } else {
        truncate_stamp(micros, unit).ok_or_else(|| not_recognized(name, t))??
    };
    Ok(if call.result == TIMESTAMPTZ {
        Datum::TimestampTz(truncated)
    } else {
        Datum::Timestamp(truncated)
    })
}

/// `date_trunc(unit, timestamptz, zone)`: truncated on the zone's clock.
pub(super) fn date_trunc_in_zone(
    a: &[Datum],
    call: &CallInfo,
    _: &CallEnv,
) -> Result<Datum, SqlError> {
    let name = a[0].as_str().unwrap_or_default();
    let t = &call.arg_types[1];
    let unit = unit(name).ok_or_else(|| not_recognized(name, t))?;
    let micros = match &a[1] {
        Datum::TimestampTz(us) => *us,
        _ => 0,
    };
    if is_infinite_timestamp(micros) {
        return Ok(Datum::TimestampTz(micros));
    }
    let zone = rocklake_types::value::zone::zone(a[2].as_str().unwrap_or_default())?;
    let local = zone.local(micros)?;
    let truncated = truncate_stamp(local, unit).ok_or_else(|| not_recognized(name, t))??;
    Ok(Datum::TimestampTz(zone.utc(truncated)?))
}

fn truncate_stamp(micros: i64, unit: Unit) -> Option<Result<i64, SqlError>> {
    let ((year, month, day), time) = split(micros);
    let start_of = |date: (i64, u32, u32)| Some(join(date, 0));
    match unit {
        Unit::Microseconds => Some(Ok(micros)),
        Unit::Milliseconds => Some(Ok(micros - micros.rem_euclid(1000))),
        Unit::Second => Some(Ok(micros - micros.rem_euclid(MICROS_PER_SECOND))),
        Unit::Minute => Some(Ok(micros - micros.rem_euclid(MICROS_PER_MINUTE))),
        Unit::Hour => Some(Ok(micros - micros.rem_euclid(MICROS_PER_HOUR))),
        Unit::Day => Some(Ok(micros - time)),
        Unit::Week => {
            let days = days_from_civil(year, i64::from(month), i64::from(day));
            let iso_dow = (days + 3).rem_euclid(7) + 1;
            Some(Ok(micros - time - (iso_dow - 1) * MICROS_PER_DAY))
        }
        Unit::Month => start_of((year, month, 1)),
        Unit::Quarter => start_of((year, 3 * ((month - 1) / 3) + 1, 1)),
        Unit::Year => start_of((year, 1, 1)),
        Unit::Decade => {
            let y = if year > 0 {
                (year / 10) * 10
            } else {
                -((8 - (year - 1)) / 10) * 10
            };
            start_of((y, 1, 1))
        }
        Unit::Century => {
            let y = if year > 0 {
                ((year + 99) / 100) * 100 - 99
            } else {
                -((99 - (year - 1)) / 100) * 100 + 1
            };
            start_of((y, 1, 1))
        }
        Unit::Millennium => {
            let y = if year > 0 {
                ((year + 999) / 1000) * 1000 - 999
            } else {
                -((999 - (year - 1)) / 1000) * 1000 + 1
            };
            start_of((y, 1, 1))
        }
        _ => None,
    }
}

/// `date_trunc(unit, interval)`.
fn date_trunc_interval(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let name = a[0].as_str().unwrap_or_default();
    let t = &call.arg_types[1];
    let unit = unit(name).ok_or_else(|| not_recognized(name, t))?;
    let (months, days, time) = span(&a[1]);
    let truncated = match unit {
        Unit::Microseconds => (months, days, time),
        Unit::Milliseconds => (months, days, time - time % 1000),
        Unit::Second => (months, days, time - time % MICROS_PER_SECOND),
        Unit::Minute => (months, days, time - time % MICROS_PER_MINUTE),
        Unit::Hour => (months, days, time - time % MICROS_PER_HOUR),
        Unit::Day => (months, days, 0),
        Unit::Month => (months, 0, 0),
        Unit::Quarter => (months - months % 12 % 3, 0, 0),
        Unit::Year => (months - months % 12, 0, 0),
        Unit::Decade => (months - months % 120, 0, 0),
        Unit::Century => (months - months % 1200, 0, 0),
        Unit::Millennium => (months - months % 12000, 0, 0),
        Unit::Week => {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!(
                    "unit \"{}\" not supported for type interval",
                    name.to_lowercase()
                ),
            )
            .with_detail("Months usually have fractional weeks."))
        }
        _ => return Err(not_recognized(name, t)),
    };
    Ok(interval(truncated))
}
