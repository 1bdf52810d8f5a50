//! The calendar arithmetic PostgreSQL's date and time operators share: a
//! timestamp as its date and time of day, adding months with the end of
//! the month kept, and the range checks ("timestamp out of range").

use rocklake_types::value::datetime::{
    civil_from_days, days_from_civil, MICROS_PER_DAY, UNIX_TO_PG_EPOCH_DAYS,
};
use rocklake_types::{SqlError, SqlState};

/// The first and last valid timestamps: 4713-11-24 BC and 294276-12-31
/// 23:59:59.999999 (PostgreSQL's `MIN_TIMESTAMP` and `END_TIMESTAMP`).
const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;

/// The first invalid date after the range (5874898-01-01) and the first
/// valid one (4714-11-24 BC), in days since 2000-01-01.
const END_DATE: i64 = 2_145_031_949;
const MIN_DATE: i64 = -2_451_545;

/// Whether `micros` is `infinity` or `-infinity`.
pub(crate) fn is_infinite_timestamp(micros: i64) -> bool {
    micros == i64::MAX || micros == i64::MIN
}

/// Whether `days` is `infinity` or `-infinity`.
pub(crate) fn is_infinite_date(days: i32) -> bool {
    days == i32::MAX || days == i32::MIN
}

/// PostgreSQL's "timestamp out of range".
pub(crate) fn timestamp_out_of_range() -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range")
}

/// PostgreSQL's "date out of range".
pub(crate) fn date_out_of_range() -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "date out of range")
}

/// PostgreSQL's "interval out of range".
pub(crate) fn interval_out_of_range() -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "interval out of range")
}

/// `micros` if it is a valid finite timestamp.
pub(crate) fn checked_timestamp(micros: i64) -> Result<i64, SqlError> {
    if (MIN_TIMESTAMP..END_TIMESTAMP).contains(&micros) {
        Ok(micros)
    } else {
        Err(timestamp_out_of_range())
    }
}

/// `days` (since 2000-01-01) if it is a valid finite date.
pub(crate) fn checked_date(days: i64) -> Result<i32, SqlError> {
    if (MIN_DATE..END_DATE).contains(&days) {
        Ok(days as i32)
    } else {
        Err(date_out_of_range())
    }
}

pub(crate) use rocklake_types::value::datetime::split;

/// The timestamp of a date (year, month, day) and time of day.
pub(crate) fn join(date: (i64, u32, u32), time: i64) -> Result<i64, SqlError> {
    let days =
        days_from_civil(date.0, i64::from(date.1), i64::from(date.2)) - UNIX_TO_PG_EPOCH_DAYS;
    days.checked_mul(MICROS_PER_DAY)
        .and_then(|d| d.checked_add(time))
        .ok_or_else(timestamp_out_of_range)
        .and_then(checked_timestamp)
}

/// The ISO 8601 week date of the day `days` after 1970-01-01: the
/// week-numbering year (astronomical), the week and the day of the week
/// (Monday 1).
pub(crate) fn iso_week_date(days: i64) -> (i64, i64, i64) {
    let iso_dow = (days + 3).rem_euclid(7) + 1; // 1970-01-01 was a Thursday
    let thursday = days - iso_dow + 4;
    let (iso_year, _, _) = civil_from_days(thursday);
    let week = (thursday - days_from_civil(iso_year, 1, 1)) / 7 + 1;
    (iso_year, week, iso_dow)
}

/// The Julian day number of the day `days` after 1970-01-01.
pub(crate) fn julian_day(days: i64) -> i64 {
    days + 2_440_588
}

/// Days in `month` of `year`.
pub(crate) fn days_in_month(year: i64, month: u32) -> u32 {
    const DAYS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if month == 2 && leap {
        29
    } else {
        DAYS[(month - 1) as usize]
    }
}

/// `date` moved by `months`, its day kept within the new month
/// (January 31 plus a month is February's last day).
pub(crate) fn add_months(date: (i64, u32, u32), months: i64) -> (i64, u32, u32) {
    let index = date.0 * 12 + i64::from(date.1) - 1 + months;
    let (year, month) = (index.div_euclid(12), (index.rem_euclid(12) + 1) as u32);
    (year, month, date.2.min(days_in_month(year, month)))
}

/// `timestamp + interval` as PostgreSQL's `timestamp_pl_interval`: months
/// first (the day kept within the month), then days, then time.
pub(crate) fn add_interval(
    micros: i64,
    months: i32,
    days: i32,
    time: i64,
) -> Result<i64, SqlError> {
    if is_infinite_timestamp(micros) {
        return Ok(micros);
    }
    let mut micros = micros;
    if months != 0 {
        let (date, clock) = split(micros);
        micros = join(add_months(date, i64::from(months)), clock)?;
    }
    if days != 0 {
        micros = micros
            .checked_add(i64::from(days) * MICROS_PER_DAY)
            .ok_or_else(timestamp_out_of_range)
            .and_then(checked_timestamp)?;
    }
    micros
        .checked_add(time)
        .ok_or_else(timestamp_out_of_range)
        .and_then(checked_timestamp)
}

/// PostgreSQL's `interval_justify_hours`: whole days out of the time,
/// with day and time of one sign.
pub(crate) fn justify_hours(
    months: i32,
    days: i32,
    time: i64,
) -> Result<(i32, i32, i64), SqlError> {
    let whole = time / MICROS_PER_DAY;
    let mut time = time - whole * MICROS_PER_DAY;
    let mut days = i64::from(days) + whole;
    if days > 0 && time < 0 {
        time += MICROS_PER_DAY;
        days -= 1;
    } else if days < 0 && time > 0 {
        time -= MICROS_PER_DAY;
        days += 1;
    }
    let days = i32::try_from(days).map_err(|_| interval_out_of_range())?;
    Ok((months, days, time))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_keep_the_day_within_the_month() {
        assert_eq!(add_months((2024, 1, 31), 1), (2024, 2, 29));
        assert_eq!(add_months((2023, 1, 31), 1), (2023, 2, 28));
        assert_eq!(add_months((2024, 3, 31), -1), (2024, 2, 29));
        assert_eq!(add_months((2024, 12, 15), 1), (2025, 1, 15));
        assert_eq!(add_months((2024, 1, 15), -13), (2022, 12, 15));
        assert_eq!(
            justify_hours(0, 0, -MICROS_PER_DAY - 1).unwrap(),
            (0, -1, -1)
        );
        assert_eq!(justify_hours(0, 1, -1).unwrap(), (0, 0, MICROS_PER_DAY - 1));
    }
}
