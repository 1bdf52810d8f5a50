//! PostgreSQL's text form of values: what each type's `*out` function prints
//! ([`format_text`]: result columns, casts to text, `||`, COPY) and what its
//! `*in` function reads ([`parse_text`]: literals, casts from text, COPY and
//! text-format parameters). Dates and times follow the settings in
//! [`crate::value::datetime`].

use std::fmt::Write as _;

use super::datetime::{format_date, format_interval, format_timestamp, push_time, push_zone};
use crate::datum::{Datum, PgType};
use crate::error::SqlError;
use crate::sqlstate::SqlState;

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
        Datum::Reg { name, .. } => out.push_str(name),
        Datum::Float4(v) => out = format_float4(*v),
        Datum::Float8(v) => out = format_float8(*v),
        Datum::Text(s) => {
            out.clear();
            out.push_str(s);
        }
        Datum::Numeric(s) => out.clone_from(s),
        Datum::Jsonb(s) => out.push_str(s),
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
        Datum::Array(elements) => out = super::array::format_array(elements),
        Datum::Vector(elements) => out = super::array::format_vector(elements),
        Datum::Record(fields) => out = format_record(fields),
    }
    Some(out)
}

/// Appends the text form of `datum` (not NULL: the caller sends NULL as
/// such) to `out`: [`format_text`]'s bytes, written in place for the common
/// kinds (text, integers, booleans) instead of through a `String` per value.
pub fn put_text(datum: &Datum, out: &mut bytes::BytesMut) {
    use bytes::BufMut;
    let mut digits = itoa::Buffer::new();
    match datum {
        Datum::Text(s) => out.put_slice(s.as_bytes()),
        Datum::Bool(v) => out.put_u8(if *v { b't' } else { b'f' }),
        Datum::Int2(v) => out.put_slice(digits.format(*v).as_bytes()),
        Datum::Int4(v) => out.put_slice(digits.format(*v).as_bytes()),
        Datum::Int8(v) => out.put_slice(digits.format(*v).as_bytes()),
        Datum::Oid(v) => out.put_slice(digits.format(*v).as_bytes()),
        other => {
            if let Some(text) = format_text(other) {
                out.put_slice(text.as_bytes());
            }
        }
    }
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

fn bad_input(ty: &str, s: &str) -> SqlError {
    SqlError::new(
        SqlState::INVALID_TEXT_REPRESENTATION,
        format!("invalid input syntax for type {ty}: \"{s}\""),
    )
}

fn out_of_range(s: &str, ty: &str) -> SqlError {
    SqlError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("value \"{s}\" is out of range for type {ty}"),
    )
}

/// PostgreSQL's error for float input out of range (no "value" before it,
/// unlike the integers').
fn float_out_of_range(s: &str, ty: &str) -> SqlError {
    SqlError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("\"{s}\" is out of range for type {ty}"),
    )
}

fn parse_int(s: &str, ty: &PgType) -> Result<i64, SqlError> {
    let t = s.trim();
    let name = ty.display_name();
    if t.is_empty()
        || !t
            .trim_start_matches(['+', '-'])
            .bytes()
            .all(|b| b.is_ascii_digit())
    {
        return Err(bad_input(name, s));
    }
    t.parse::<i64>().map_err(|_| out_of_range(s, name))
}

/// PostgreSQL's `tidin`: the block number follows the first `(` (or `,`), the
/// offset the next `,`; the block must end at that `,` and the offset at a `)`.
/// Anything before the `(` and after the `)` is ignored, so `'(0,9)'` (as
/// postgres_scanner sends a ctid in text COPY) is the tid (0,9), as in PostgreSQL.
fn parse_tid(s: &str) -> Option<(u32, u16)> {
    let b = s.as_bytes();
    let mut coord = [0usize; 2];
    let mut found = 0;
    let mut p = 0;
    while p < b.len() && found < 2 && b[p] != b')' {
        if b[p] == b',' || (b[p] == b'(' && found == 0) {
            coord[found] = p + 1;
            found += 1;
        }
        p += 1;
    }
    if found < 2 {
        return None;
    }
    // strtoul/strtol: leading white space and an optional `+`, then digits.
    let number = |start: usize, end: u8| -> Option<u64> {
        let mut i = start;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < b.len() && b[i] == b'+' {
            i += 1;
        }
        // like strtoul, no digits at all converts to 0
        let mut v: u64 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            v = v.checked_mul(10)?.checked_add(u64::from(b[i] - b'0'))?;
            i += 1;
        }
        (b.get(i) == Some(&end)).then_some(v)
    };
    let block = u32::try_from(number(coord[0], b',')?).ok()?;
    let offset = u16::try_from(number(coord[1], b')')?).ok()?;
    Some((block, offset))
}

/// A row value as `record_out` prints it: `(a,b)`, a NULL field empty, a
/// field quoted (`"` and `\` doubled) when it is empty or holds a quote,
/// backslash, parenthesis, comma or white space.
pub fn format_record(fields: &[Datum]) -> String {
    let mut out = String::from("(");
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let Some(text) = format_text(field) else {
            continue;
        };
        let quote = text.is_empty()
            || text
                .chars()
                .any(|c| matches!(c, '"' | '\\' | '(' | ')' | ',') || c.is_ascii_whitespace());
        if !quote {
            out.push_str(&text);
            continue;
        }
        out.push('"');
        for c in text.chars() {
            if matches!(c, '"' | '\\') {
                out.push(c);
            }
            out.push(c);
        }
        out.push('"');
    }
    out.push(')');
    out
}

/// The error for reading a value of an anonymous row type, as PostgreSQL's.
pub fn record_input_error() -> SqlError {
    SqlError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        "input of anonymous composite types is not implemented",
    )
}

/// Parses PostgreSQL text input for a value of type `ty`.
pub fn parse_text(s: &str, ty: &PgType) -> Result<Datum, SqlError> {
    let name = ty.display_name();
    Ok(match ty {
        PgType::Record(_) => return Err(record_input_error()),
        PgType::Text | PgType::Varchar => Datum::text(s.to_string()),
        // `name` keeps at most 63 bytes, as PostgreSQL's `namein` cuts it.
        PgType::Name => Datum::text(crate::ident::truncate_name(s).to_string()),
        PgType::Char => Datum::text(s.chars().next().map(String::from).unwrap_or_default()),
        PgType::Bool => match s.trim().to_ascii_lowercase().as_str() {
            "t" | "true" | "yes" | "y" | "on" | "1" => Datum::Bool(true),
            "f" | "false" | "no" | "n" | "off" | "0" => Datum::Bool(false),
            _ => return Err(bad_input(name, s)),
        },
        PgType::Int2 => {
            let v = parse_int(s, ty)?;
            Datum::Int2(i16::try_from(v).map_err(|_| out_of_range(s, name))?)
        }
        PgType::Int4 => {
            let v = parse_int(s, ty)?;
            Datum::Int4(i32::try_from(v).map_err(|_| out_of_range(s, name))?)
        }
        PgType::Int8 => Datum::Int8(parse_int(s, ty)?),
        PgType::Oid
        | PgType::RegProc
        | PgType::Xid
        | PgType::RegClass
        | PgType::RegType
        | PgType::RegNamespace => {
            let v = parse_int(s, &PgType::Int8).map_err(|_| bad_input(name, s))?;
            Datum::Oid(u32::try_from(v).map_err(|_| out_of_range(s, name))?)
        }
        PgType::Float4 => {
            let value = parse_float(s).ok_or_else(|| bad_input(name, s))?;
            let single = value as f32;
            if out_of_float_range(s, f64::from(single)) {
                return Err(float_out_of_range(s, name));
            }
            Datum::Float4(single)
        }
        PgType::Float8 => {
            let value = parse_float(s).ok_or_else(|| bad_input(name, s))?;
            if out_of_float_range(s, value) {
                return Err(float_out_of_range(s, name));
            }
            Datum::Float8(value)
        }
        PgType::Numeric(tm) => {
            let n = super::numeric::parse(s).ok_or_else(|| bad_input(name, s))?;
            Datum::Numeric(super::numeric::apply_typmod(&n, *tm)?)
        }
        PgType::Bytea => Datum::Bytea(parse_bytea(s).ok_or_else(|| bad_input(name, s))?),
        PgType::Uuid => Datum::Uuid(parse_uuid(s).ok_or_else(|| bad_input(name, s))?),
        PgType::Inet => {
            let (address, bits) = super::inet::parse(s).ok_or_else(|| bad_input(name, s))?;
            Datum::text(super::inet::format(address, bits))
        }
        PgType::Tid => {
            let (block, offset) = parse_tid(s).ok_or_else(|| bad_input(name, s))?;
            Datum::Tid { block, offset }
        }
        PgType::Date => {
            Datum::Date(super::datetime::parse_date(s).ok_or_else(|| bad_input(name, s))?)
        }
        PgType::Time => Datum::Time(
            super::datetime::parse_time(s)
                .ok_or_else(|| bad_input(name, s))?
                .0,
        ),
        PgType::TimeTz => {
            let (micros, off) = super::datetime::parse_time(s).ok_or_else(|| bad_input(name, s))?;
            Datum::TimeTz {
                micros,
                offset_west_secs: -off.unwrap_or(0),
            }
        }
        PgType::Timestamp => Datum::Timestamp(
            super::datetime::parse_timestamp(s, false).ok_or_else(|| bad_input(name, s))?,
        ),
        PgType::TimestampTz => Datum::TimestampTz(
            super::datetime::parse_timestamp(s, true).ok_or_else(|| bad_input(name, s))?,
        ),
        PgType::Interval => {
            let (months, days, micros) = super::interval::parse_interval_with(s, None)?;
            Datum::Interval {
                months,
                days,
                micros,
            }
        }
        PgType::Json => {
            super::json::check(s)?;
            Datum::text(s.to_string())
        }
        PgType::Jsonb => Datum::jsonb(&super::jsonb::parse(s)?),
        PgType::AclItem | PgType::Unknown => Datum::text(s.to_string()),
        PgType::Void => Datum::text(""),
        PgType::Int2Vector | PgType::OidVector => {
            super::array::parse_vector(s, &ty.element_type().unwrap_or(PgType::Int2))?
        }
        PgType::Array(element) => super::array::parse_array(s, element)?,
    })
}

fn parse_float(s: &str) -> Option<f64> {
    let t = s.trim().to_ascii_lowercase();
    match t.as_str() {
        "nan" => Some(f64::NAN),
        "inf" | "infinity" | "+inf" | "+infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        _ => t.parse::<f64>().ok(),
    }
}

/// Whether decimal input `text` gave `value` by going out of the type's
/// range: infinite though not written as infinity, or zero though some
/// digit of its mantissa is not (PostgreSQL's `ERANGE` check).
fn out_of_float_range(text: &str, value: f64) -> bool {
    let t = text.trim().to_ascii_lowercase();
    if t.contains("inf") || t == "nan" {
        return false;
    }
    let mantissa = t.split('e').next().unwrap_or_default();
    value.is_infinite() || (value == 0.0 && mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)))
}

fn parse_bytea(s: &str) -> Option<Vec<u8>> {
    if let Some(hex) = s.strip_prefix("\\x") {
        let clean: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        if !clean.len().is_multiple_of(2) {
            return None;
        }
        return clean
            .chunks(2)
            .map(|c| u8::from_str_radix(std::str::from_utf8(c).ok()?, 16).ok())
            .collect();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            if bytes.get(i + 1) == Some(&b'\\') {
                out.push(b'\\');
                i += 2;
            } else {
                let oct = std::str::from_utf8(bytes.get(i + 1..i + 4)?).ok()?;
                out.push(u8::from_str_radix(oct, 8).ok()?);
                i += 4;
            }
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let t = s.trim();
    let t = t
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(t);
    let hex: Vec<u8> = t.bytes().filter(|b| *b != b'-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, c) in hex.chunks(2).enumerate() {
        out[i] = u8::from_str_radix(std::str::from_utf8(c).ok()?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_text_writes_what_format_text_gives() {
        let values = [
            Datum::Text("naïve".into()),
            Datum::Text("".into()),
            Datum::Bool(true),
            Datum::Bool(false),
            Datum::Int2(i16::MIN),
            Datum::Int4(-42),
            Datum::Int8(i64::MAX),
            Datum::Oid(u32::MAX),
            Datum::Float8(0.1),
            Datum::Date(0),
            Datum::Numeric("1.50".into()),
        ];
        for value in values {
            let mut out = bytes::BytesMut::new();
            put_text(&value, &mut out);
            assert_eq!(
                &out[..],
                format_text(&value).unwrap().as_bytes(),
                "{value:?}"
            );
        }
    }

    use crate::value::datetime::{MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_SECOND};

    fn text(d: Datum) -> String {
        format_text(&d).unwrap()
    }

    #[test]
    fn parses_and_formats_common_types() {
        assert_eq!(parse_text("42", &PgType::Int8).unwrap(), Datum::Int8(42));
        assert_eq!(parse_text("x", &PgType::Int8).unwrap_err().code, "22P02");
        assert_eq!(
            parse_text("99999", &PgType::Int2).unwrap_err().code,
            "22003"
        );
        assert_eq!(
            parse_text("(0,1)", &PgType::Tid).unwrap(),
            Datum::Tid {
                block: 0,
                offset: 1
            }
        );
        // PostgreSQL's tidin ignores what surrounds the parentheses:
        // postgres_scanner's text COPY sends a ctid quoted.
        assert_eq!(
            parse_text("'(3,9)'", &PgType::Tid).unwrap(),
            Datum::Tid {
                block: 3,
                offset: 9
            }
        );
        assert_eq!(
            parse_text(" ( 1, 2)", &PgType::Tid).unwrap(),
            Datum::Tid {
                block: 1,
                offset: 2
            }
        );
        for bad in ["(1,2", "(1 ,2)", "1,2)", "(1,70000)", "(x,2)", "()"] {
            assert_eq!(
                parse_text(bad, &PgType::Tid).unwrap_err().code,
                "22P02",
                "{bad}"
            );
        }
        let u = parse_text("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", &PgType::Uuid).unwrap();
        assert_eq!(
            format_text(&u).unwrap(),
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
        );
        assert_eq!(
            parse_text("\\x6f6e65", &PgType::Bytea).unwrap(),
            Datum::Bytea(b"one".to_vec())
        );
        assert_eq!(
            format_text(&Datum::Bytea(b"one".to_vec())).unwrap(),
            "\\x6f6e65"
        );
        assert_eq!(format_text(&Datum::Float8(1.5)).unwrap(), "1.5");
        assert_eq!(format_text(&Datum::Float8(1e300)).unwrap(), "1e+300");
        assert_eq!(
            format_text(&Datum::array(vec![Datum::Int2(1), Datum::Int2(2)])).unwrap(),
            "{1,2}"
        );
        assert!(
            matches!(parse_text("nan", &PgType::Float4).unwrap(), Datum::Float4(v) if v.is_nan())
        );
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
        assert_eq!(
            text(Datum::array(vec![Datum::Int2(1), Datum::Int2(-2)])),
            "{1,-2}"
        );
        assert_eq!(text(Datum::array(vec![])), "{}");
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
