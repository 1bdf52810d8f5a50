//! Text input/output of [`Datum`]s the way PostgreSQL spells them, and ordering
//! between datums of compatible types.

use std::cmp::Ordering;

use rocklake_codec::datum::{Datum, PgType};

use crate::datetime;
use crate::error::{codes, SqlError};
use crate::numeric;

/// PostgreSQL's text output of a datum (`None` for NULL). Booleans print as
/// `t`/`f`, as in a result set.
pub fn datum_to_text(d: &Datum) -> Option<String> {
    Some(match d {
        Datum::Null => return None,
        Datum::Bool(b) => if *b { "t" } else { "f" }.to_string(),
        Datum::Int2(v) => v.to_string(),
        Datum::Int4(v) => v.to_string(),
        Datum::Int8(v) => v.to_string(),
        Datum::Float4(v) => format_float(f64::from(*v), 6),
        Datum::Float8(v) => format_float(*v, 15),
        Datum::Text(s) => s.to_string(),
        Datum::Bytea(b) => {
            let mut s = String::with_capacity(2 + b.len() * 2);
            s.push_str("\\x");
            for byte in b {
                s.push_str(&format!("{byte:02x}"));
            }
            s
        }
        Datum::Uuid(u) => format_uuid(u),
        Datum::TimestampTz(us) => format!("{}+00", datetime::format_timestamp(*us)),
        Datum::Timestamp(us) => datetime::format_timestamp(*us),
        Datum::Date(d) => datetime::format_date(*d),
        Datum::Time(us) => datetime::format_time(*us),
        Datum::TimeTz {
            micros,
            offset_west_secs,
        } => {
            format!(
                "{}{}",
                datetime::format_time(*micros),
                datetime::format_offset(-*offset_west_secs)
            )
        }
        Datum::Interval {
            months,
            days,
            micros,
        } => datetime::format_interval(*months, *days, *micros),
        Datum::Numeric(s) => s.clone(),
        Datum::Oid(o) => o.to_string(),
        Datum::Tid { block, offset } => format!("({block},{offset})"),
        Datum::Int2Array(v) => {
            let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            format!("{{{}}}", parts.join(","))
        }
    })
}

fn format_float(v: f64, exp_limit: i32) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = if exp_limit == 6 {
        format!("{:e}", v as f32)
    } else {
        format!("{v:e}")
    };
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= exp_limit {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else if exp_limit == 6 {
        format!("{}", v as f32)
    } else {
        format!("{v}")
    }
}

/// Formats 16 uuid bytes as `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
pub fn format_uuid(u: &[u8; 16]) -> String {
    let hex: String = u.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

fn bad_input(ty: &str, s: &str) -> SqlError {
    SqlError::new(
        codes::INVALID_TEXT_REPRESENTATION,
        format!("invalid input syntax for type {ty}: \"{s}\""),
    )
}

fn out_of_range(s: &str, ty: &str) -> SqlError {
    SqlError::new(
        codes::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("value \"{s}\" is out of range for type {ty}"),
    )
}

/// The PostgreSQL name of a type as used in error messages (`bigint`, `text`, ...).
pub fn type_display(t: &PgType) -> &'static str {
    match t {
        PgType::Bool => "boolean",
        PgType::Int2 => "smallint",
        PgType::Int4 => "integer",
        PgType::Int8 => "bigint",
        PgType::Float4 => "real",
        PgType::Float8 => "double precision",
        PgType::Varchar => "character varying",
        PgType::Timestamp => "timestamp without time zone",
        PgType::TimestampTz => "timestamp with time zone",
        PgType::Time => "time without time zone",
        PgType::TimeTz => "time with time zone",
        PgType::Char => "\"char\"",
        PgType::Int2Array => "smallint[]",
        other => other.type_name(),
    }
}

fn parse_int(s: &str, ty: &PgType) -> Result<i64, SqlError> {
    let t = s.trim();
    let name = type_display(ty);
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

/// Parses PostgreSQL text input for a value of type `ty`.
pub fn parse_text(s: &str, ty: &PgType) -> Result<Datum, SqlError> {
    let name = type_display(ty);
    Ok(match ty {
        PgType::Text | PgType::Varchar | PgType::Name => Datum::text(s.to_string()),
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
        PgType::Oid | PgType::RegClass => {
            let v = parse_int(s, &PgType::Int8).map_err(|_| bad_input(name, s))?;
            Datum::Oid(u32::try_from(v).map_err(|_| out_of_range(s, name))?)
        }
        PgType::Float4 => Datum::Float4(parse_float(s).ok_or_else(|| bad_input(name, s))? as f32),
        PgType::Float8 => Datum::Float8(parse_float(s).ok_or_else(|| bad_input(name, s))?),
        PgType::Numeric(tm) => {
            let n = numeric::parse(s).ok_or_else(|| bad_input(name, s))?;
            Datum::Numeric(numeric::apply_typmod(&n, *tm)?)
        }
        PgType::Bytea => Datum::Bytea(parse_bytea(s).ok_or_else(|| bad_input(name, s))?),
        PgType::Uuid => Datum::Uuid(parse_uuid(s).ok_or_else(|| bad_input(name, s))?),
        PgType::Tid => {
            let (block, offset) = parse_tid(s).ok_or_else(|| bad_input(name, s))?;
            Datum::Tid { block, offset }
        }
        PgType::Date => Datum::Date(datetime::parse_date(s).ok_or_else(|| bad_input(name, s))?),
        PgType::Time => Datum::Time(datetime::parse_time(s).ok_or_else(|| bad_input(name, s))?.0),
        PgType::TimeTz => {
            let (micros, off) = datetime::parse_time(s).ok_or_else(|| bad_input(name, s))?;
            Datum::TimeTz {
                micros,
                offset_west_secs: -off.unwrap_or(0),
            }
        }
        PgType::Timestamp => {
            Datum::Timestamp(datetime::parse_timestamp(s, false).ok_or_else(|| bad_input(name, s))?)
        }
        PgType::TimestampTz => Datum::TimestampTz(
            datetime::parse_timestamp(s, true).ok_or_else(|| bad_input(name, s))?,
        ),
        PgType::Interval => {
            let (months, days, micros) =
                datetime::parse_interval(s).ok_or_else(|| bad_input(name, s))?;
            Datum::Interval {
                months,
                days,
                micros,
            }
        }
        PgType::Int2Array => {
            let inner = s.trim().strip_prefix('{').and_then(|x| x.strip_suffix('}'));
            let inner = inner.ok_or_else(|| {
                SqlError::new(
                    codes::INVALID_TEXT_REPRESENTATION,
                    format!("malformed array literal: \"{s}\""),
                )
            })?;
            let mut out = Vec::new();
            for part in inner.split(',').filter(|p| !p.trim().is_empty()) {
                let v = parse_int(part, &PgType::Int2)?;
                out.push(i16::try_from(v).map_err(|_| out_of_range(part, "smallint"))?);
            }
            Datum::Int2Array(out)
        }
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

/// True for the integer, float and numeric types.
pub fn is_numeric_type(t: &PgType) -> bool {
    matches!(
        t,
        PgType::Int2
            | PgType::Int4
            | PgType::Int8
            | PgType::Oid
            | PgType::Float4
            | PgType::Float8
            | PgType::Numeric(_)
    )
}

/// True for the string types.
pub fn is_string_type(t: &PgType) -> bool {
    matches!(
        t,
        PgType::Text | PgType::Varchar | PgType::Name | PgType::Char
    )
}

/// Orders two non-NULL datums (PostgreSQL btree order: NaN sorts above every
/// number). Datums of unrelated kinds compare by their text forms.
pub fn compare(a: &Datum, b: &Datum) -> Ordering {
    use Datum::*;
    match (a, b) {
        (Null, Null) => Ordering::Equal,
        (Null, _) => Ordering::Greater,
        (_, Null) => Ordering::Less,
        (Bool(x), Bool(y)) => x.cmp(y),
        (Text(x), Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Bytea(x), Bytea(y)) => x.cmp(y),
        (Uuid(x), Uuid(y)) => x.cmp(y),
        (TimestampTz(x) | Timestamp(x), TimestampTz(y) | Timestamp(y)) => x.cmp(y),
        (Date(x), Date(y)) => x.cmp(y),
        (Time(x), Time(y)) => x.cmp(y),
        (
            TimeTz {
                micros: x,
                offset_west_secs: ox,
            },
            TimeTz {
                micros: y,
                offset_west_secs: oy,
            },
        ) => (x + i64::from(*ox) * 1_000_000).cmp(&(y + i64::from(*oy) * 1_000_000)),
        (Interval { .. }, Interval { .. }) => interval_key(a).cmp(&interval_key(b)),
        (
            Tid {
                block: b1,
                offset: o1,
            },
            Tid {
                block: b2,
                offset: o2,
            },
        ) => (b1, o1).cmp(&(b2, o2)),
        (Int2Array(x), Int2Array(y)) => x.cmp(y),
        _ => {
            if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
                return x.cmp(&y);
            }
            if matches!(a, Float4(_) | Float8(_)) || matches!(b, Float4(_) | Float8(_)) {
                if let (Some(x), Some(y)) = (to_f64(a), to_f64(b)) {
                    return x.total_cmp(&y).then(Ordering::Equal);
                }
            }
            if let (Some(x), Some(y)) = (numeric_text(a), numeric_text(b)) {
                return numeric::compare(&x, &y);
            }
            datum_to_text(a).cmp(&datum_to_text(b))
        }
    }
}

fn interval_key(d: &Datum) -> i128 {
    match d {
        Datum::Interval {
            months,
            days,
            micros,
        } => {
            i128::from(*months) * 30 * 86_400_000_000
                + i128::from(*days) * 86_400_000_000
                + i128::from(*micros)
        }
        _ => 0,
    }
}

/// The datum as a float, for numeric kinds.
pub fn to_f64(d: &Datum) -> Option<f64> {
    match d {
        Datum::Float4(v) => Some(f64::from(*v)),
        Datum::Float8(v) => Some(*v),
        Datum::Numeric(s) => {
            s.parse::<f64>()
                .ok()
                .or(if s == "NaN" { Some(f64::NAN) } else { None })
        }
        other => other.as_i64().map(|v| v as f64),
    }
}

/// The datum as numeric text, for integer and numeric kinds.
pub fn numeric_text(d: &Datum) -> Option<String> {
    match d {
        Datum::Numeric(s) => Some(s.clone()),
        other => other.as_i64().map(|v| v.to_string()),
    }
}

/// Checks whether `a = b` under [`compare`].
pub fn equal(a: &Datum, b: &Datum) -> bool {
    compare(a, b) == Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

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
            datum_to_text(&u).unwrap(),
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
        );
        assert_eq!(
            parse_text("\\x6f6e65", &PgType::Bytea).unwrap(),
            Datum::Bytea(b"one".to_vec())
        );
        assert_eq!(
            datum_to_text(&Datum::Bytea(b"one".to_vec())).unwrap(),
            "\\x6f6e65"
        );
        assert_eq!(datum_to_text(&Datum::Float8(1.5)).unwrap(), "1.5");
        assert_eq!(datum_to_text(&Datum::Float8(1e300)).unwrap(), "1e+300");
        assert_eq!(
            datum_to_text(&Datum::Int2Array(vec![1, 2])).unwrap(),
            "{1,2}"
        );
        assert!(
            matches!(parse_text("nan", &PgType::Float4).unwrap(), Datum::Float4(v) if v.is_nan())
        );
    }

    #[test]
    fn compares_across_numeric_widths() {
        assert_eq!(compare(&Datum::Int4(3), &Datum::Int8(3)), Ordering::Equal);
        assert_eq!(
            compare(&Datum::Int2(2), &Datum::Numeric("2.5".into())),
            Ordering::Less
        );
        assert_eq!(
            compare(&Datum::Float8(2.5), &Datum::Int8(2)),
            Ordering::Greater
        );
        assert_eq!(
            compare(&Datum::Text("B".into()), &Datum::Text("a".into())),
            Ordering::Less
        );
    }
}
