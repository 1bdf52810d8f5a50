//! PostgreSQL text output of values (what each type's `*out` function prints),
//! for text-format DataRows. Dates and times follow `DateStyle = ISO, MDY`,
//! `TimeZone = UTC` and `IntervalStyle = postgres`, the settings the server
//! reports at startup.

use std::fmt::Write as _;

use rocklake_codec::datum::Datum;

const MICROS_PER_SECOND: i64 = 1_000_000;
const MICROS_PER_MINUTE: i64 = 60 * MICROS_PER_SECOND;
const MICROS_PER_HOUR: i64 = 60 * MICROS_PER_MINUTE;
const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;
/// Days from 1970-01-01 to 2000-01-01.
const UNIX_TO_PG_EPOCH_DAYS: i64 = 10_957;

/// The text form of `datum`, or `None` for SQL NULL.
pub fn format_text(datum: &Datum) -> Option<String> {
    let mut out = String::new();
    match datum {
        Datum::Null => return None,
        Datum::Bool(v) => out.push(if *v { 't' } else { 'f' }),
        Datum::Int2(v) => out = v.to_string(),
        Datum::Int4(v) => out = v.to_string(),
        Datum::Int8(v) => out = v.to_string(),
        Datum::Oid(v) => out = v.to_string(),
        Datum::Float4(v) => out = format_float4(*v),
        Datum::Float8(v) => out = format_float8(*v),
        Datum::Text(s) => {
            out.clear();
            out.push_str(s);
        }
        Datum::Numeric(s) => out.clone_from(s),
        Datum::Bytea(bytes) => {
            out.reserve(2 + 2 * bytes.len());
            out.push_str("\\x");
            for b in bytes {
                let _ = write!(out, "{b:02x}");
            }
        }
        Datum::Uuid(u) => out = format_uuid(u),
        Datum::TimestampTz(micros) => out = format_timestamp(*micros, true),
        Datum::Timestamp(micros) => out = format_timestamp(*micros, false),
        Datum::Date(days) => out = format_date(*days),
        Datum::Time(micros) => push_time(&mut out, *micros),
        Datum::TimeTz {
            micros,
            offset_west_secs,
        } => {
            push_time(&mut out, *micros);
            push_zone(&mut out, *offset_west_secs);
        }
        Datum::Interval {
            months,
            days,
            micros,
        } => out = format_interval(*months, *days, *micros),
        Datum::Tid { block, offset } => out = format!("({block},{offset})"),
        Datum::Int2Array(values) => {
            out.push('{');
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{v}");
            }
            out.push('}');
        }
    }
    Some(out)
}

/// `uuid_out`: lower-case hex in the 8-4-4-4-12 layout.
pub fn format_uuid(u: &[u8; 16]) -> String {
    let mut out = String::with_capacity(36);
    for (i, b) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// `float4out` with the default `extra_float_digits = 1`: shortest text that
/// reads back to the same value, in exponent form outside `1e-4 <= |v| < 1e6`.
pub fn format_float4(v: f32) -> String {
    if v.is_nan() {
        return "NaN".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    shortest(&format!("{v:e}"), 6)
}

/// `float8out` with the default `extra_float_digits = 1`: shortest text that
/// reads back to the same value, in exponent form outside `1e-4 <= |v| < 1e15`.
pub fn format_float8(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    shortest(&format!("{v:e}"), 15)
}

/// Re-lays Rust's shortest round-trip exponent form (`-1.25e-7`) the way
/// PostgreSQL's Ryu-based output does: fixed notation when the decimal exponent
/// is in `-4..max_fixed_exp`, else `d.ddde+XX` with at least two exponent digits.
fn shortest(rust_exp: &str, max_fixed_exp: i32) -> String {
    let (mantissa, exp) = rust_exp.split_once('e').unwrap_or((rust_exp, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if (-4..max_fixed_exp).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            out.push_str(&"0".repeat((-exp - 1) as usize));
            out.push_str(&digits);
        } else {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.push_str(&"0".repeat(int_len - digits.len()));
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

/// Proleptic Gregorian (year, month, day) of a day count since 1970-01-01
/// (year 0 is 1 BC).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
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

/// `timestamptz_out` in UTC (`2026-12-02 16:44:32.123456+00`) or
/// `timestamp_out` (no zone).
pub fn format_timestamp(micros: i64, with_zone: bool) -> String {
    match micros {
        i64::MAX => return "infinity".to_string(),
        i64::MIN => return "-infinity".to_string(),
        _ => {}
    }
    let mut out = String::new();
    let bc = push_date(&mut out, micros.div_euclid(MICROS_PER_DAY));
    out.push(' ');
    push_time(&mut out, micros.rem_euclid(MICROS_PER_DAY));
    if with_zone {
        out.push_str("+00");
    }
    out.push_str(bc);
    out
}

/// `HH:MM:SS[.ffffff]`, fraction without trailing zeros.
fn push_time(out: &mut String, micros: i64) {
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
fn push_zone(out: &mut String, offset_west_secs: i32) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn text(d: Datum) -> String {
        format_text(&d).unwrap()
    }

    const SECOND: i64 = MICROS_PER_SECOND;

    #[test]
    fn scalars() {
        assert_eq!(format_text(&Datum::Null), None);
        assert_eq!(text(Datum::Bool(true)), "t");
        assert_eq!(text(Datum::Bool(false)), "f");
        assert_eq!(
            text(Datum::Int8(-9_223_372_036_854_775_808)),
            "-9223372036854775808"
        );
        assert_eq!(text(Datum::Oid(4_294_967_295)), "4294967295");
        assert_eq!(
            text(Datum::Bytea(vec![0x6f, 0x6e, 0x65, 0x00])),
            "\\x6f6e6500"
        );
        assert_eq!(text(Datum::Bytea(vec![])), "\\x");
        assert_eq!(
            text(Datum::Tid {
                block: 0,
                offset: 1
            }),
            "(0,1)"
        );
        assert_eq!(text(Datum::Int2Array(vec![1, -2])), "{1,-2}");
        assert_eq!(text(Datum::Int2Array(vec![])), "{}");
        assert_eq!(text(Datum::Numeric("-12.340".into())), "-12.340");
        assert_eq!(
            text(Datum::Uuid([
                0xA0, 0xEE, 0xBC, 0x99, 0x9C, 0x0B, 0x4E, 0xF8, 0xBB, 0x6D, 0x6B, 0xB9, 0xBD, 0x38,
                0x0A, 0x11
            ])),
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
        );
    }

    #[test]
    fn floats_like_postgres() {
        assert_eq!(format_float8(f64::NAN), "NaN");
        assert_eq!(format_float8(f64::INFINITY), "Infinity");
        assert_eq!(format_float8(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(format_float8(0.1), "0.1");
        assert_eq!(format_float8(-0.0), "-0");
        assert_eq!(format_float8(1.0), "1");
        assert_eq!(format_float8(100.0), "100");
        assert_eq!(format_float8(123_456_789_012_345.0), "123456789012345");
        assert_eq!(format_float8(1e15), "1e+15");
        assert_eq!(format_float8(1e20), "1e+20");
        assert_eq!(format_float8(1.5e300), "1.5e+300");
        assert_eq!(format_float8(0.0001), "0.0001");
        assert_eq!(format_float8(0.00001), "1e-05");
        assert_eq!(
            format_float8(1.7976931348623157e308),
            "1.7976931348623157e+308"
        );
        assert_eq!(format_float8(12.345), "12.345");
        assert_eq!(format_float4(1e6), "1e+06");
        assert_eq!(format_float4(100_000.0), "100000");
        assert_eq!(format_float4(0.1), "0.1");
        assert_eq!(format_float4(3.4028235e38), "3.4028235e+38");
        assert_eq!(format_float4(f32::NAN), "NaN");
    }

    #[test]
    fn timestamps() {
        // 2026-12-02 16:44:32.123456 UTC
        let micros = 849_545_072_123_456;
        assert_eq!(
            text(Datum::TimestampTz(micros)),
            "2026-12-02 16:44:32.123456+00"
        );
        assert_eq!(text(Datum::Timestamp(micros)), "2026-12-02 16:44:32.123456");
        assert_eq!(text(Datum::TimestampTz(0)), "2000-01-01 00:00:00+00");
        assert_eq!(
            text(Datum::TimestampTz(-1)),
            "1999-12-31 23:59:59.999999+00"
        );
        assert_eq!(
            text(Datum::TimestampTz(500_000)),
            "2000-01-01 00:00:00.5+00"
        );
        assert_eq!(text(Datum::TimestampTz(i64::MAX)), "infinity");
        assert_eq!(text(Datum::Timestamp(i64::MIN)), "-infinity");
        // 0001-01-01 is 730119 days before 2000-01-01; one day earlier is 1 BC.
        assert_eq!(text(Datum::Date(-730_119)), "0001-01-01");
        assert_eq!(text(Datum::Date(-730_120)), "0001-12-31 BC");
        assert_eq!(
            text(Datum::TimestampTz(-730_120 * MICROS_PER_DAY)),
            "0001-12-31 00:00:00+00 BC"
        );
        assert_eq!(text(Datum::Date(366)), "2001-01-01");
        assert_eq!(text(Datum::Date(59)), "2000-02-29");
        assert_eq!(text(Datum::Date(i32::MAX)), "infinity");
    }

    #[test]
    fn times() {
        assert_eq!(text(Datum::Time(0)), "00:00:00");
        assert_eq!(text(Datum::Time(MICROS_PER_DAY)), "24:00:00");
        assert_eq!(
            text(Datum::Time(13 * MICROS_PER_HOUR + 5 * SECOND + 10)),
            "13:00:05.00001"
        );
        let tz = |micros, offset_west_secs| Datum::TimeTz {
            micros,
            offset_west_secs,
        };
        assert_eq!(text(tz(MICROS_PER_HOUR, 0)), "01:00:00+00");
        assert_eq!(text(tz(MICROS_PER_HOUR, -7200)), "01:00:00+02");
        assert_eq!(text(tz(MICROS_PER_HOUR, 19_800)), "01:00:00-05:30");
        assert_eq!(text(tz(MICROS_PER_HOUR, -10)), "01:00:00+00:00:10");
    }

    #[test]
    fn intervals_like_postgres() {
        assert_eq!(format_interval(0, 0, 0), "00:00:00");
        assert_eq!(
            format_interval(14, 3, 14_706_789_000),
            "1 year 2 mons 3 days 04:05:06.789"
        );
        assert_eq!(format_interval(1, 1, 0), "1 mon 1 day");
        assert_eq!(format_interval(-14, -3, 0), "-1 years -2 mons -3 days");
        assert_eq!(format_interval(-1, 3, -SECOND), "-1 mons +3 days -00:00:01");
        assert_eq!(format_interval(0, -1, SECOND), "-1 days +00:00:01");
        assert_eq!(format_interval(0, 0, -1_500_000), "-00:00:01.5");
        assert_eq!(format_interval(0, 0, 100 * MICROS_PER_HOUR), "100:00:00");
        assert_eq!(format_interval(12, 0, 0), "1 year");
    }
}
