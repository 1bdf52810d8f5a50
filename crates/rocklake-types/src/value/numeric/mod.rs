//! Decimal (`numeric`) values kept as canonical text, as [`Datum::Numeric`]
//! stores them: parsing, typmod rounding, ordering and exact arithmetic; and
//! their binary form ([`binary`]).
//!
//! [`Datum::Numeric`]: crate::datum::Datum::Numeric

pub mod binary;

use std::cmp::Ordering;

use crate::error::SqlError;
use crate::sqlstate::SqlState;

/// A decomposed decimal: sign, integer digits (no leading zeros) and fraction
/// digits (scale = their count).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dec {
    pub(crate) neg: bool,
    pub(crate) int: String,
    pub(crate) frac: String,
}

const MAX_DIGITS: usize = 2000;

/// Splits decimal text (`-12.30`, `1.5e-3`, `.5`) into sign, integer and
/// fraction digits; `None` when it is not a finite decimal.
pub(crate) fn decompose(s: &str) -> Option<Dec> {
    let t = s.trim();
    let (neg, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let (mant, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i64>().ok()?),
        None => (body, 0),
    };
    let (ip, fp) = mant.split_once('.').unwrap_or((mant, ""));
    if (ip.is_empty() && fp.is_empty()) || !ip.bytes().chain(fp.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    if exp.unsigned_abs() as usize > MAX_DIGITS {
        return None;
    }
    let mut digits = format!("{ip}{fp}");
    let mut point = ip.len() as i64 + exp;
    if point < 0 {
        digits = format!("{}{}", "0".repeat((-point) as usize), digits);
        point = 0;
    }
    if point as usize > digits.len() {
        digits.push_str(&"0".repeat(point as usize - digits.len()));
    }
    let (i, f) = digits.split_at(point as usize);
    let int = i.trim_start_matches('0').to_string();
    let scale_from_input = (fp.len() as i64 - exp).max(0) as usize;
    let mut frac = f.to_string();
    frac.truncate(scale_from_input);
    while frac.len() < scale_from_input {
        frac.push('0');
    }
    Some(Dec { neg, int, frac })
}

fn compose(d: &Dec) -> String {
    let zero = d.int.is_empty() && d.frac.bytes().all(|b| b == b'0');
    let mut s = String::new();
    if d.neg && !zero {
        s.push('-');
    }
    s.push_str(if d.int.is_empty() { "0" } else { &d.int });
    if !d.frac.is_empty() {
        s.push('.');
        s.push_str(&d.frac);
    }
    s
}

/// Parses numeric input text (`12.30`, `-1e5`, `NaN`) into canonical text.
pub fn parse(s: &str) -> Option<String> {
    if s.trim().eq_ignore_ascii_case("nan") {
        return Some("NaN".into());
    }
    decompose(s).map(|d| compose(&d))
}

/// Rounds (half away from zero) to `scale` fraction digits.
fn round_to(d: &Dec, scale: usize) -> Dec {
    if d.frac.len() <= scale {
        let mut r = d.clone();
        while r.frac.len() < scale {
            r.frac.push('0');
        }
        return r;
    }
    let round_up = d.frac.as_bytes()[scale] >= b'5';
    let mut digits: Vec<u8> = format!("{}{}", d.int, &d.frac[..scale]).into_bytes();
    if round_up {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, b'1');
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let s = String::from_utf8(digits).unwrap_or_default();
    let (i, f) = s.split_at(s.len() - scale);
    Dec {
        neg: d.neg,
        int: i.trim_start_matches('0').to_string(),
        frac: f.to_string(),
    }
}

/// Applies a `numeric(p,s)` type modifier: rounds to `s` digits and fails with
/// 22003 when the integer part needs more than `p - s` digits.
pub fn apply_typmod(canonical: &str, typmod: Option<(u16, u16)>) -> Result<String, SqlError> {
    let Some((p, s)) = typmod else {
        return Ok(canonical.to_string());
    };
    if canonical == "NaN" {
        return Ok(canonical.to_string());
    }
    let d = decompose(canonical).ok_or_else(|| SqlError::internal("bad numeric"))?;
    let r = round_to(&d, usize::from(s));
    if r.int.len() > usize::from(p.saturating_sub(s)) {
        return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow").with_detail(
            format!(
                "A field with precision {p}, scale {s} must round to an absolute value less than 10^{}.",
                p - s
            ),
        ));
    }
    Ok(compose(&r))
}

/// Orders two canonical numerics (NaN above everything).
pub fn compare(a: &str, b: &str) -> Ordering {
    match (a == "NaN", b == "NaN") {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (Some(x), Some(y)) = (decompose(a), decompose(b)) else {
        return a.cmp(b);
    };
    let xz = x.int.is_empty() && x.frac.bytes().all(|c| c == b'0');
    let yz = y.int.is_empty() && y.frac.bytes().all(|c| c == b'0');
    let xneg = x.neg && !xz;
    let yneg = y.neg && !yz;
    if xneg != yneg {
        return if xneg {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    let mag = x
        .int
        .len()
        .cmp(&y.int.len())
        .then_with(|| x.int.cmp(&y.int))
        .then_with(|| {
            let n = x.frac.len().max(y.frac.len());
            let xf = format!("{:0<n$}", x.frac);
            let yf = format!("{:0<n$}", y.frac);
            xf.cmp(&yf)
        });
    if xneg {
        mag.reverse()
    } else {
        mag
    }
}

/// A numeric as a scaled integer `(value, scale)` when it fits in an i128.
fn to_scaled(s: &str) -> Result<(i128, u32), SqlError> {
    let d = decompose(s).ok_or_else(|| SqlError::unsupported("arithmetic on numeric NaN"))?;
    let digits = format!("{}{}", d.int, d.frac);
    let v: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| overflow())?
    };
    Ok((if d.neg { -v } else { v }, d.frac.len() as u32))
}

fn from_scaled(v: i128, scale: u32) -> String {
    let neg = v < 0;
    let digits = v.unsigned_abs().to_string();
    let scale = scale as usize;
    let padded = if digits.len() <= scale {
        format!("{}{}", "0".repeat(scale + 1 - digits.len()), digits)
    } else {
        digits
    };
    let (i, f) = padded.split_at(padded.len() - scale);
    compose(&Dec {
        neg,
        int: i.trim_start_matches('0').to_string(),
        frac: f.to_string(),
    })
}

fn overflow() -> SqlError {
    SqlError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        "value overflows numeric format",
    )
}

fn align(a: (i128, u32), b: (i128, u32)) -> Result<(i128, i128, u32), SqlError> {
    let s = a.1.max(b.1);
    let up = |v: (i128, u32)| {
        v.0.checked_mul(10i128.checked_pow(s - v.1).ok_or_else(overflow)?)
            .ok_or_else(overflow)
    };
    Ok((up(a)?, up(b)?, s))
}

/// Exact `a op b` for `op` in `+ - * / %` (division to at least 16 digits of scale).
pub fn arith(a: &str, b: &str, op: char) -> Result<String, SqlError> {
    let x = to_scaled(a)?;
    let y = to_scaled(b)?;
    match op {
        '+' | '-' => {
            let (p, q, s) = align(x, y)?;
            let r = if op == '+' {
                p.checked_add(q)
            } else {
                p.checked_sub(q)
            };
            Ok(from_scaled(r.ok_or_else(overflow)?, s))
        }
        '*' => Ok(from_scaled(
            x.0.checked_mul(y.0).ok_or_else(overflow)?,
            x.1 + y.1,
        )),
        '/' | '%' => {
            if y.0 == 0 {
                return Err(SqlError::new(
                    SqlState::DIVISION_BY_ZERO,
                    "division by zero",
                ));
            }
            let (p, q, s) = align(x, y)?;
            if op == '%' {
                return Ok(from_scaled(p % q, s));
            }
            let scale = 16u32.max(x.1).max(y.1);
            let num = p
                .checked_mul(10i128.checked_pow(scale + 1).ok_or_else(overflow)?)
                .ok_or_else(overflow)?;
            let raw = num / q; // scale + 1 digits
            let rounded = if raw >= 0 {
                (raw + 5) / 10
            } else {
                (raw - 5) / 10
            };
            Ok(from_scaled(rounded, scale))
        }
        _ => Err(SqlError::internal(format!("unknown numeric operator {op}"))),
    }
}

/// Rounds a numeric to an integer (half away from zero) if it fits in i64.
pub fn to_i64_rounded(s: &str) -> Option<i64> {
    let d = decompose(s)?;
    let r = round_to(&d, 0);
    let v: i64 = if r.int.is_empty() {
        0
    } else {
        r.int.parse().ok()?
    };
    Some(if r.neg { -v } else { v })
}

/// Converts a finite float to canonical numeric text.
pub fn from_f64(v: f64) -> Option<String> {
    if v.is_nan() {
        return Some("NaN".into());
    }
    if v.is_infinite() {
        return None;
    }
    parse(&format!("{v}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms() {
        assert_eq!(parse("007.50").unwrap(), "7.50");
        assert_eq!(parse("-1e3").unwrap(), "-1000");
        assert_eq!(parse("1.5e-2").unwrap(), "0.015");
        assert_eq!(parse(".5").unwrap(), "0.5");
        assert!(parse("abc").is_none());
        assert_eq!(apply_typmod("12.345", Some((4, 1))).unwrap(), "12.3");
        assert_eq!(apply_typmod("12.35", Some((4, 1))).unwrap(), "12.4");
        assert_eq!(
            apply_typmod("12345", Some((4, 1))).unwrap_err().code,
            "22003"
        );
    }

    #[test]
    fn ordering_and_arithmetic() {
        assert_eq!(compare("2", "10"), Ordering::Less);
        assert_eq!(compare("-2", "-10"), Ordering::Greater);
        assert_eq!(compare("1.50", "1.5"), Ordering::Equal);
        assert_eq!(arith("1.5", "2", '+').unwrap(), "3.5");
        assert_eq!(arith("1", "3", '/').unwrap(), "0.3333333333333333");
        assert_eq!(arith("1", "0", '/').unwrap_err().code, "22012");
        assert_eq!(to_i64_rounded("-2.5"), Some(-3));
    }
}
