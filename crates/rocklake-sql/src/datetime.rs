//! Date/time text input and output in PostgreSQL's ISO style (`DateStyle=ISO`,
//! `TimeZone=UTC`, `IntervalStyle=postgres`).

const USECS_PER_DAY: i64 = 86_400_000_000;
/// Days from 1970-01-01 to 2000-01-01.
const EPOCH_SHIFT_DAYS: i64 = 10_957;

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `YYYY-MM-DD` of a PostgreSQL date (days since 2000-01-01).
pub fn format_date(days: i32) -> String {
    let (y, m, d) = civil_from_days(i64::from(days) + EPOCH_SHIFT_DAYS);
    if y <= 0 {
        format!("{:04}-{m:02}-{d:02} BC", 1 - y)
    } else {
        format!("{y:04}-{m:02}-{d:02}")
    }
}

/// `HH:MM:SS[.ffffff]` of microseconds since midnight.
pub fn format_time(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let frac = us.rem_euclid(1_000_000);
    let mut s = format!(
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    );
    if frac != 0 {
        let f = format!("{frac:06}");
        s.push('.');
        s.push_str(f.trim_end_matches('0'));
    }
    s
}

/// `+HH[:MM]` for an offset in seconds east of UTC.
pub fn format_offset(east: i32) -> String {
    let sign = if east < 0 { '-' } else { '+' };
    let a = east.abs();
    if a % 3600 == 0 {
        format!("{sign}{:02}", a / 3600)
    } else {
        format!("{sign}{:02}:{:02}", a / 3600, (a / 60) % 60)
    }
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]` of microseconds since 2000-01-01.
pub fn format_timestamp(us: i64) -> String {
    let days = us.div_euclid(USECS_PER_DAY);
    let time = us.rem_euclid(USECS_PER_DAY);
    format!("{} {}", format_date(days as i32), format_time(time))
}

/// PostgreSQL's `postgres` interval style, e.g. `1 year 2 mons 3 days 04:05:06`.
pub fn format_interval(months: i32, days: i32, micros: i64) -> String {
    let mut parts = Vec::new();
    let (y, mo) = (months / 12, months % 12);
    let plural =
        |n: i64, unit: &str, many: &str| format!("{n} {}", if n.abs() == 1 { unit } else { many });
    if y != 0 {
        parts.push(plural(i64::from(y), "year", "years"));
    }
    if mo != 0 {
        parts.push(plural(i64::from(mo), "mon", "mons"));
    }
    if days != 0 {
        parts.push(plural(i64::from(days), "day", "days"));
    }
    if micros != 0 || parts.is_empty() {
        let neg = micros < 0;
        let t = format_time(micros.abs());
        parts.push(if neg { format!("-{t}") } else { t });
    }
    parts.join(" ")
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
    let mut it = t.splitn(3, '-');
    let y = num(it.next()?)?;
    let m = num(it.next()?)?;
    let d = num(it.next()?)?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    i32::try_from(days_from_civil(y, m, d) - EPOCH_SHIFT_DAYS).ok()
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
/// into microseconds since 2000-01-01 (UTC when `with_tz`; the zone is ignored
/// otherwise, as PostgreSQL does for `timestamp`).
pub fn parse_timestamp(s: &str, with_tz: bool) -> Option<i64> {
    let t = s.trim();
    match t.to_ascii_lowercase().as_str() {
        "infinity" => return Some(i64::MAX),
        "-infinity" => return Some(i64::MIN),
        "epoch" => return Some(-EPOCH_SHIFT_DAYS * USECS_PER_DAY),
        _ => {}
    }
    let (date, rest) = match t.find([' ', 'T', 't']) {
        Some(i) => (&t[..i], t[i + 1..].trim()),
        None => (t, ""),
    };
    let days = i64::from(parse_date(date)?);
    let (time, zone) = if rest.is_empty() {
        (0, None)
    } else {
        parse_time(rest)?
    };
    let mut us = days * USECS_PER_DAY + time;
    if with_tz {
        us -= i64::from(zone.unwrap_or(0)) * 1_000_000;
    }
    Some(us)
}

/// Parses interval input (`14 months 3 days 14706789000 microseconds`,
/// `1 day 02:03:04`, `@ 2 hours ago`, `-00:00:01`) into (months, days, micros).
pub fn parse_interval(s: &str) -> Option<(i32, i32, i64)> {
    let t = s.trim().trim_start_matches('@').trim();
    let mut months: i64 = 0;
    let mut days: i64 = 0;
    let mut micros: i128 = 0;
    let toks: Vec<&str> = t.split_whitespace().collect();
    let mut i = 0;
    let mut ago = false;
    if toks.is_empty() {
        return None;
    }
    while i < toks.len() {
        let tok = toks[i];
        if tok.eq_ignore_ascii_case("ago") {
            ago = true;
            i += 1;
            continue;
        }
        if tok.contains(':') {
            let (neg, body) = match tok.strip_prefix('-') {
                Some(b) => (true, b),
                None => (false, tok.strip_prefix('+').unwrap_or(tok)),
            };
            let (us, _) = parse_time_unbounded(body)?;
            micros += if neg { -i128::from(us) } else { i128::from(us) };
            i += 1;
            continue;
        }
        let value: f64 = tok.parse().ok()?;
        let unit = toks
            .get(i + 1)
            .map(|u| u.to_ascii_lowercase())
            .unwrap_or_else(|| "seconds".into());
        let unit = unit.trim_end_matches(',');
        let unit = unit
            .strip_suffix('s')
            .filter(|u| !u.is_empty())
            .unwrap_or(unit);
        match unit {
            "year" | "yr" | "y" => months += (value * 12.0) as i64,
            "mon" | "month" => months += value as i64,
            "week" | "w" => days += (value * 7.0) as i64,
            "day" | "d" => days += value as i64,
            "hour" | "h" | "hr" => micros += (value * 3_600_000_000.0) as i128,
            "minute" | "min" | "m" => micros += (value * 60_000_000.0) as i128,
            "second" | "sec" => micros += (value * 1_000_000.0).round() as i128,
            "millisecond" | "msec" | "ms" => micros += (value * 1000.0).round() as i128,
            "microsecond" | "usec" | "us" => {
                micros += tok.parse::<i128>().ok().unwrap_or(value as i128)
            }
            _ => return None,
        }
        i += 2;
    }
    if ago {
        months = -months;
        days = -days;
        micros = -micros;
    }
    Some((
        i32::try_from(months).ok()?,
        i32::try_from(days).ok()?,
        i64::try_from(micros).ok()?,
    ))
}

fn parse_time_unbounded(s: &str) -> Option<(i64, ())> {
    let mut it = s.split(':');
    let h = num(it.next()?)?;
    let m = num(it.next()?)?;
    let sec = match it.next() {
        Some(sv) => sv.parse::<f64>().ok()?,
        None => 0.0,
    };
    Some((
        h * 3_600_000_000 + m * 60_000_000 + (sec * 1_000_000.0).round() as i64,
        (),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip() {
        let us = parse_timestamp("2026-12-02 11:09:58.766649+00", true).unwrap();
        assert_eq!(format_timestamp(us), "2026-12-02 11:09:58.766649");
        assert_eq!(parse_timestamp("2000-01-01 02:00:00+02", true), Some(0));
        assert_eq!(parse_timestamp("2000-01-01", true), Some(0));
        assert_eq!(
            parse_date("2024-02-29").map(format_date).unwrap(),
            "2024-02-29"
        );
        assert!(parse_timestamp("yesterday-ish", true).is_none());
    }

    #[test]
    fn intervals() {
        assert_eq!(
            parse_interval("14 months 3 days 14706789000 microseconds"),
            Some((14, 3, 14_706_789_000))
        );
        assert_eq!(
            parse_interval("1 day 02:03:04"),
            Some((0, 1, 7_384_000_000))
        );
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
