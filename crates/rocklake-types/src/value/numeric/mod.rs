//! Decimal (`numeric`) values kept as canonical text, as [`Datum::Numeric`]
//! stores them: parsing, typmod rounding, ordering and exact arithmetic; and
//! their binary form ([`binary`]).
//!
//! [`Datum::Numeric`]: crate::datum::Datum::Numeric

pub mod binary;
pub mod math;
pub mod transcendental;

use std::cmp::Ordering;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Pow, Signed, Zero};

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

/// The canonical numeric `text` without trailing fraction zeros (`1.50`
/// is `1.5`, `2.00` is `2`): equal for equal values of any scale.
pub fn without_trailing_zeros(text: &str) -> &str {
    if !text.contains('.') {
        return text;
    }
    text.trim_end_matches('0').trim_end_matches('.')
}

/// Whether the canonical numeric `s` is zero (of any scale).
pub fn is_zero(s: &str) -> bool {
    s.trim_start_matches('-')
        .bytes()
        .all(|b| b == b'0' || b == b'.')
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

/// A finite numeric as a scaled integer: `value / 10^scale`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scaled {
    pub(crate) value: BigInt,
    pub(crate) scale: u32,
}

impl Scaled {
    /// The finite numeric `s` (canonical or input text); `None` for NaN.
    pub(crate) fn of(s: &str) -> Option<Scaled> {
        let d = decompose(s)?;
        let digits = format!("{}{}", d.int, d.frac);
        let magnitude = if digits.is_empty() {
            BigInt::zero()
        } else {
            digits.parse::<BigInt>().ok()?
        };
        Some(Scaled {
            value: if d.neg { -magnitude } else { magnitude },
            scale: d.frac.len() as u32,
        })
    }

    /// Canonical text, or PostgreSQL's overflow error past its limits
    /// (131072 digits before the point, 16383 after).
    pub(crate) fn to_text(&self) -> Result<String, SqlError> {
        let digits = self.value.magnitude().to_string();
        let scale = self.scale as usize;
        let padded = if digits.len() <= scale {
            format!("{}{}", "0".repeat(scale + 1 - digits.len()), digits)
        } else {
            digits
        };
        let (int, frac) = padded.split_at(padded.len() - scale);
        let int = int.trim_start_matches('0');
        if int.len() > MAX_INTEGER_DIGITS || scale > MAX_SCALE {
            return Err(overflow());
        }
        Ok(compose(&Dec {
            neg: self.value.is_negative(),
            int: int.to_string(),
            frac: frac.to_string(),
        }))
    }

    /// The value at scale `scale` (at least its own).
    pub(crate) fn value_at(&self, scale: u32) -> BigInt {
        &self.value * pow10(scale - self.scale)
    }
}

/// PostgreSQL's limits on a numeric's digits.
const MAX_INTEGER_DIGITS: usize = 131_072;
const MAX_SCALE: usize = 16_383;

pub(crate) fn pow10(exponent: u32) -> BigInt {
    BigInt::from(10u32).pow(exponent)
}

pub(crate) fn overflow() -> SqlError {
    SqlError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        "value overflows numeric format",
    )
}

fn division_by_zero() -> SqlError {
    SqlError::new(SqlState::DIVISION_BY_ZERO, "division by zero")
}

/// `numerator / denominator` rounded half away from zero.
pub(crate) fn div_round(numerator: &BigInt, denominator: &BigInt) -> BigInt {
    let (quotient, remainder) = numerator.div_rem(denominator);
    if (remainder.magnitude() * 2u32) >= *denominator.magnitude() {
        let away = if numerator.is_negative() == denominator.is_negative() {
            BigInt::one()
        } else {
            -BigInt::one()
        };
        quotient + away
    } else {
        quotient
    }
}

/// The weight (position of its first non-zero base-10000 digit, 0 for
/// the units group) and that digit, as PostgreSQL's `select_div_scale`
/// reads them; `(0, 0)` for zero.
pub(crate) fn first_base_digit(s: &str) -> (i64, u32) {
    let Some(d) = decompose(s) else { return (0, 0) };
    if !d.int.is_empty() {
        let lead = d.int.len() % 4;
        let lead = if lead == 0 { 4 } else { lead };
        let weight = (d.int.len() as i64 - 1) / 4;
        return (weight, d.int[..lead].parse().unwrap_or(0));
    }
    match d.frac.bytes().position(|b| b != b'0') {
        Some(p) => {
            let group = p / 4;
            let start = group * 4;
            let digits: String = format!("{:0<4}", &d.frac[start..(start + 4).min(d.frac.len())]);
            (-(group as i64) - 1, digits.parse().unwrap_or(0))
        }
        None => (0, 0),
    }
}

/// The scale of `a / b` as PostgreSQL's `select_div_scale` picks it: at
/// least 16 significant digits, and no less than either input's scale.
fn division_scale(a: &str, b: &str, a_scale: u32, b_scale: u32) -> u32 {
    const MIN_SIGNIFICANT_DIGITS: i64 = 16;
    const MAX_DISPLAY_SCALE: i64 = 1000;
    let (weight1, first1) = first_base_digit(a);
    let (weight2, first2) = first_base_digit(b);
    let mut quotient_weight = weight1 - weight2;
    if first1 <= first2 {
        quotient_weight -= 1;
    }
    let scale = (MIN_SIGNIFICANT_DIGITS - quotient_weight * 4)
        .max(i64::from(a_scale))
        .max(i64::from(b_scale))
        .clamp(0, MAX_DISPLAY_SCALE);
    scale as u32
}

/// Exact `a op b` for `op` in `+ - * / %`, with PostgreSQL's result scales:
/// the larger input scale for `+ - %`, their sum for `*`, and for `/` at
/// least 16 significant digits (`select_div_scale`). NaN in gives NaN out.
pub fn arith(a: &str, b: &str, op: char) -> Result<String, SqlError> {
    let (x, y) = match (Scaled::of(a), Scaled::of(b)) {
        (Some(x), Some(y)) => (x, y),
        // NaN: NaN / 0 is NaN, as every other operation on it.
        _ => return Ok("NaN".into()),
    };
    let result = match op {
        '+' | '-' => {
            let scale = x.scale.max(y.scale);
            let (p, q) = (x.value_at(scale), y.value_at(scale));
            Scaled {
                value: if op == '+' { p + q } else { p - q },
                scale,
            }
        }
        '*' => Scaled {
            value: &x.value * &y.value,
            scale: x.scale + y.scale,
        },
        '/' => {
            if y.value.is_zero() {
                return Err(division_by_zero());
            }
            let scale = division_scale(a, b, x.scale, y.scale);
            // a/b * 10^scale = (X * 10^(sy + scale)) / (Y * 10^sx)
            let numerator = &x.value * pow10(y.scale + scale);
            let denominator = &y.value * pow10(x.scale);
            Scaled {
                value: div_round(&numerator, &denominator),
                scale,
            }
        }
        '%' => {
            if y.value.is_zero() {
                return Err(division_by_zero());
            }
            let scale = x.scale.max(y.scale);
            let (p, q) = (x.value_at(scale), y.value_at(scale));
            Scaled {
                value: p % q,
                scale,
            }
        }
        _ => return Err(SqlError::internal(format!("unknown numeric operator {op}"))),
    };
    result.to_text()
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
        assert_eq!(arith("1", "3", '/').unwrap(), "0.33333333333333333333");
        assert_eq!(arith("3", "2", '/').unwrap(), "1.5000000000000000");
        assert_eq!(arith("0", "3", '/').unwrap(), "0.00000000000000000000");
        assert_eq!(arith("10", "4", '/').unwrap(), "2.5000000000000000");
        assert_eq!(arith("1", "8", '/').unwrap(), "0.12500000000000000000");
        assert_eq!(arith("-7", "2", '/').unwrap(), "-3.5000000000000000");
        assert_eq!(arith("2", "3", '/').unwrap(), "0.66666666666666666667");
        assert_eq!(
            arith("12345678901234567890", "3", '/').unwrap(),
            "4115226300411522630"
        );
        assert_eq!(arith("10000", "3", '/').unwrap(), "3333.3333333333333333");
        assert_eq!(arith("99999", "3", '/').unwrap(), "33333.000000000000");
        assert_eq!(arith("-7.5", "2", '%').unwrap(), "-1.5");
        assert_eq!(arith("1.25", "0.5", '*').unwrap(), "0.625");
        assert_eq!(arith("NaN", "0", '/').unwrap(), "NaN");
        let big = format!("1{}", "0".repeat(60));
        assert_eq!(
            arith(&big, &big, '*').unwrap(),
            format!("1{}", "0".repeat(120))
        );
        assert_eq!(arith("1", "0", '/').unwrap_err().code, "22012");
        assert_eq!(to_i64_rounded("-2.5"), Some(-3));
    }
}
