//! Dates, times and intervals: the proleptic Gregorian calendar, and their
//! PostgreSQL text forms in and out with `DateStyle = ISO, MDY`,
//! `TimeZone = UTC` and `IntervalStyle = postgres` (the settings the server
//! reports). Output is what `date_out`, `time_out`, `timetz_out`,
//! `timestamp_out`, `timestamptz_out` and `interval_out` print.

use std::fmt::Write as _;

/// Microseconds in a second.
pub const MICROS_PER_SECOND: i64 = 1_000_000;
/// Microseconds in a minute.
pub const MICROS_PER_MINUTE: i64 = 60 * MICROS_PER_SECOND;
/// Microseconds in an hour.
pub const MICROS_PER_HOUR: i64 = 60 * MICROS_PER_MINUTE;
/// Microseconds in a day.
pub const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;
/// Days from 1970-01-01 to 2000-01-01.
pub const UNIX_TO_PG_EPOCH_DAYS: i64 = 10_957;

/// Days since 1970-01-01 of a proleptic Gregorian date (year 0 is 1 BC).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Proleptic Gregorian (year, month, day) of a day count since 1970-01-01
/// (year 0 is 1 BC).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Writes `YYYY-MM-DD` and returns the BC suffix to append after the time.
fn push_date(out: &mut String, days_since_2000: i64) -> &'static str {
    let (year, month, day) = civil_from_days(days_since_2000 + UNIX_TO_PG_EPOCH_DAYS);
    let (year, bc) = if year <= 0 {
        (1 - year, " BC")
    } else {
        (year, "")
    };
    let _ = write!(out, "{year:04}-{month:02}-{day:02}");
    bc
}

/// `date_out`: `2026-12-02`, `0044-03-15 BC`, `infinity`.
pub fn format_date(days: i32) -> String {
    match days {
        i32::MAX => "infinity".to_string(),
        i32::MIN => "-infinity".to_string(),
        _ => {
            let mut out = String::new();
            let bc = push_date(&mut out, i64::from(days));
            out.push_str(bc);
            out
        }
    }
}

/// A timestamp's date (year, month, day) and time of day (microseconds).
pub fn split(micros: i64) -> ((i64, u32, u32), i64) {
    let days = micros.div_euclid(MICROS_PER_DAY);
    (
        civil_from_days(days + UNIX_TO_PG_EPOCH_DAYS),
        micros.rem_euclid(MICROS_PER_DAY),
    )
}

/// `timestamptz_out` in the session's zone (`2026-12-02 17:44:32.123456+01`)
/// or `timestamp_out` (no zone).
pub fn format_timestamp(micros: i64, with_zone: bool) -> String {
    match micros {
        i64::MAX => return "infinity".to_string(),
        i64::MIN => return "-infinity".to_string(),
        _ => {}
    }
    // A `timestamptz` shows the local time of the session's zone.
    let east = if with_zone {
        super::zone::with_session_zone(|zone| zone.offset_at(micros))
    } else {
        0
    };
    let local = micros + i64::from(east) * MICROS_PER_SECOND;
    let mut out = String::new();
    let bc = push_date(&mut out, local.div_euclid(MICROS_PER_DAY));
    out.push(' ');
    push_time(&mut out, local.rem_euclid(MICROS_PER_DAY));
    if with_zone {
        push_zone(&mut out, -east);
    }
    out.push_str(bc);
    out
}

/// `HH:MM:SS[.ffffff]`, fraction without trailing zeros.
pub(crate) fn push_time(out: &mut String, micros: i64) {
    let hours = micros / MICROS_PER_HOUR;
    let minutes = micros % MICROS_PER_HOUR / MICROS_PER_MINUTE;
    let _ = write!(out, "{hours:02}:{minutes:02}:");
    push_seconds(out, micros % MICROS_PER_MINUTE);
}

/// `SS[.ffffff]` of a non-negative microsecond count below one minute.
fn push_seconds(out: &mut String, micros: i64) {
    let _ = write!(out, "{:02}", micros / MICROS_PER_SECOND);
    let fraction = micros % MICROS_PER_SECOND;
    if fraction != 0 {
        let digits = format!("{fraction:06}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
}

/// A zone offset as `timetz_out` prints it: `+02`, `-05:30`, `+00:00:10`.
pub(crate) fn push_zone(out: &mut String, offset_west_secs: i32) {
    out.push(if offset_west_secs <= 0 { '+' } else { '-' });
    let east = offset_west_secs.unsigned_abs();
    let (h, m, s) = (east / 3600, east / 60 % 60, east % 60);
    let _ = write!(out, "{h:02}");
    if s != 0 {
        let _ = write!(out, ":{m:02}:{s:02}");
    } else if m != 0 {
        let _ = write!(out, ":{m:02}");
    }
}

/// `interval_out` with `IntervalStyle = postgres`: `1 year 2 mons -3 days
/// +04:05:06.5`, `00:00:00` for zero.
pub fn format_interval(months: i32, days: i32, micros: i64) -> String {
    let mut out = String::new();
    let mut is_zero = true;
    let mut is_before = false;
    let mut part = |out: &mut String, value: i64, unit: &str| {
        if value == 0 {
            return;
        }
        let _ = write!(
            out,
            "{}{}{value} {unit}{}",
            if is_zero { "" } else { " " },
            if is_before && value > 0 { "+" } else { "" },
            if value != 1 { "s" } else { "" }
        );
        is_before = value < 0;
        is_zero = false;
    };
    part(&mut out, i64::from(months / 12), "year");
    part(&mut out, i64::from(months % 12), "mon");
    part(&mut out, i64::from(days), "day");
    if is_zero || micros != 0 {
        let hours = micros / MICROS_PER_HOUR;
        let rest = micros % MICROS_PER_HOUR;
        let minutes = rest / MICROS_PER_MINUTE;
        let seconds = rest % MICROS_PER_MINUTE;
        let sign = if micros < 0 {
            "-"
        } else if is_before {
            "+"
        } else {
            ""
        };
        let _ = write!(
            out,
            "{}{sign}{:02}:{:02}:",
            if is_zero { "" } else { " " },
            hours.unsigned_abs(),
            minutes.unsigned_abs()
        );
        push_seconds(&mut out, seconds.abs());
    }
    out
}

fn num(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses `YYYY-MM-DD` into days since 2000-01-01.
pub fn parse_date(s: &str) -> Option<i32> {
    let t = s.trim();
    match t.to_ascii_lowercase().as_str() {
        "infinity" => return Some(i32::MAX),
        "-infinity" => return Some(i32::MIN),
        "epoch" => return Some(-(UNIX_TO_PG_EPOCH_DAYS as i32)),
        _ => {}
    }
    let (t, bc) = strip_era(t);
    let mut it = t.splitn(3, '-');
    let y = num(it.next()?)?;
    let m = num(it.next()?)?;
    let d = num(it.next()?)?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || (bc && y == 0) {
        return None;
    }
    // Year 1 BC is year 0 of the proleptic calendar.
    let y = if bc { 1 - y } else { y };
    i32::try_from(days_from_civil(y, m, d) - UNIX_TO_PG_EPOCH_DAYS).ok()
}

/// `text` without a trailing ` BC` / ` AD` era, and whether it was BC.
fn strip_era(text: &str) -> (&str, bool) {
    let t = text.trim_end();
    let lower = t.to_ascii_lowercase();
    if lower.ends_with(" bc") {
        (t[..t.len() - 3].trim_end(), true)
    } else if lower.ends_with(" ad") {
        (t[..t.len() - 3].trim_end(), false)
    } else {
        (t, false)
    }
}

/// Parses a zone suffix (`Z`, `UTC`, `+02`, `-0530`, `+05:30`) into seconds east.
fn parse_zone(z: &str) -> Option<i32> {
    let z = z.trim();
    if z.eq_ignore_ascii_case("z") || z.eq_ignore_ascii_case("utc") || z.eq_ignore_ascii_case("gmt")
    {
        return Some(0);
    }
    let (sign, rest) = match z.as_bytes().first()? {
        b'+' => (1, &z[1..]),
        b'-' => (-1, &z[1..]),
        _ => return None,
    };
    let (h, m, sec) = if let Some((h, m)) = rest.split_once(':') {
        let (m, s) = m.split_once(':').unwrap_or((m, "0"));
        (num(h)?, num(m)?, num(s)?)
    } else if rest.len() == 4 {
        (num(&rest[..2])?, num(&rest[2..])?, 0)
    } else {
        (num(rest)?, 0, 0)
    };
    Some(sign * (h * 3600 + m * 60 + sec) as i32)
}

/// Parses `HH:MM[:SS[.ffffff]][zone]` into microseconds and an optional offset
/// (seconds east of UTC).
pub fn parse_time(s: &str) -> Option<(i64, Option<i32>)> {
    let t = s.trim();
    let zone_at = t.find(['+', '-', 'Z', 'z']).or_else(|| t.find(" UTC"));
    let (clock, zone) = match zone_at {
        Some(i) => (&t[..i], Some(parse_zone(&t[i..])?)),
        None => (t, None),
    };
    let mut it = clock.trim().split(':');
    let h = num(it.next()?)?;
    let m = num(it.next()?)?;
    let (sec, frac) = match it.next() {
        Some(sv) => {
            let (a, b) = sv.split_once('.').unwrap_or((sv, ""));
            let mut f = b.to_string();
            if !f.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            f.truncate(6);
            while f.len() < 6 {
                f.push('0');
            }
            (num(a)?, f.parse::<i64>().ok()?)
        }
        None => (0, 0),
    };
    if it.next().is_some() || h > 24 || m > 59 || sec > 60 {
        return None;
    }
    Some(((h * 3600 + m * 60 + sec) * 1_000_000 + frac, zone))
}

/// Parses a timestamp (`YYYY-MM-DD[ T]HH:MM:SS[.f][zone]`, or a bare date)
/// into microseconds since 2000-01-01 (UTC when `with_tz`, a time without a
/// zone being local time in the session's zone; the zone is ignored
/// otherwise, as PostgreSQL does for `timestamp`).
pub fn parse_timestamp(s: &str, with_tz: bool) -> Option<i64> {
    let t = s.trim();
    match t.to_ascii_lowercase().as_str() {
        "infinity" => return Some(i64::MAX),
        "-infinity" => return Some(i64::MIN),
        "epoch" => return Some(-UNIX_TO_PG_EPOCH_DAYS * MICROS_PER_DAY),
        _ => {}
    }
    // PostgreSQL writes the era after the time (`0044-03-15 12:00:00 BC`).
    let (t, bc) = strip_era(t);
    let (date, rest) = match t.find([' ', 'T', 't']) {
        Some(i) => (&t[..i], t[i + 1..].trim()),
        None => (t, ""),
    };
    let date = if bc {
        format!("{date} BC")
    } else {
        date.to_string()
    };
    let days = i64::from(parse_date(&date)?);
    let (time, zone) = if rest.is_empty() {
        (0, None)
    } else {
        parse_time(rest)?
    };
    let us = days * MICROS_PER_DAY + time;
    Some(match (with_tz, zone) {
        (false, _) => us,
        (true, Some(east)) => us - i64::from(east) * 1_000_000,
        // Without a zone, local time in the session's zone.
        (true, None) => super::zone::with_session_zone(|zone| zone.instant(us)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip() {
        let us = parse_timestamp("2026-12-02 11:09:58.766649+00", true).unwrap();
        assert_eq!(format_timestamp(us, false), "2026-12-02 11:09:58.766649");
        assert_eq!(parse_timestamp("2000-01-01 02:00:00+02", true), Some(0));
        assert_eq!(parse_timestamp("2000-01-01", true), Some(0));
        assert_eq!(
            parse_date("2024-02-29").map(format_date).unwrap(),
            "2024-02-29"
        );
        assert!(parse_timestamp("yesterday-ish", true).is_none());
    }

    #[test]
    fn eras_and_infinities_round_trip_as_postgres_prints_them() {
        for text in [
            "0044-03-15 BC",
            "0001-12-31 BC",
            "0001-01-01",
            "infinity",
            "-infinity",
        ] {
            assert_eq!(format_date(parse_date(text).unwrap()), text);
        }
        let us = parse_timestamp("0044-03-15 12:00:00 BC", false).unwrap();
        assert_eq!(format_timestamp(us, false), "0044-03-15 12:00:00 BC");
        assert_eq!(format_timestamp(us, true), "0044-03-15 12:00:00+00 BC");
        assert_eq!(parse_date("0000-01-01 BC"), None);
        assert_eq!(
            format_timestamp(parse_timestamp("-infinity", true).unwrap(), true),
            "-infinity"
        );
    }

    #[test]
    fn intervals() {
        assert_eq!(
            format_interval(14, 3, 14_706_789_000),
            "1 year 2 mons 3 days 04:05:06.789"
        );
        assert_eq!(
            parse_time("10:00:00+02:30"),
            Some((36_000_000_000, Some(9000)))
        );
    }
}
