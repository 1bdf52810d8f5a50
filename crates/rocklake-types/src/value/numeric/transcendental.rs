//! `ln`, `log`, `exp` and `power` of numeric values, with PostgreSQL's
//! result scales (`numeric_ln`, `numeric_log`, `numeric_exp`,
//! `numeric_power` of PostgreSQL 15): at least 16 significant digits, no
//! fewer fraction digits than an input has, at most 1000.
//!
//! Values are computed in fixed point on big integers with guard digits
//! and then rounded once: `ln` by square roots down to near 1 and the
//! `atanh` series, `exp` by splitting off a power of ten, halving and the
//! Taylor series, an integer power exactly.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::math::{round_to, Rounding};
use super::{decompose, overflow, pow10, Scaled};
use crate::error::SqlError;
use crate::sqlstate::SqlState;

const MIN_SIGNIFICANT_DIGITS: i64 = 16;
const MAX_DISPLAY_SCALE: i64 = 1000;
/// Digits of a result before the point PostgreSQL allows.
const MAX_RESULT_DIGITS: f64 = 131_072.0;

fn clamp_scale(scale: i64) -> u32 {
    scale.clamp(0, MAX_DISPLAY_SCALE) as u32
}

/// The finite value of `text`, or `None` for NaN.
fn finite(text: &str) -> Option<Scaled> {
    Scaled::of(text)
}

/// The first two base-10000 digits of `text` and the weight of the first
/// (PostgreSQL's `NumericVar` view), `None` for zero.
fn base_digits(text: &str) -> Option<(i64, u32, Option<u32>)> {
    let d = decompose(text)?;
    let pad = (4 - d.int.len() % 4) % 4;
    let digits = format!("{}{}{}", "0".repeat(pad), d.int, d.frac);
    let frac_pad = (4 - digits.len() % 4) % 4;
    let digits = format!("{digits}{}", "0".repeat(frac_pad));
    let groups: Vec<u32> = digits
        .as_bytes()
        .chunks(4)
        .map(|c| {
            std::str::from_utf8(c)
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0)
        })
        .collect();
    let int_groups = (d.int.len() + pad) / 4;
    let first = groups.iter().position(|g| *g != 0)?;
    let weight = int_groups as i64 - 1 - first as i64;
    Some((weight, groups[first], groups.get(first + 1).copied()))
}

/// PostgreSQL's `estimate_ln_dweight`: roughly the decimal weight of
/// `ln(x)`, from which the scale of `ln` and `log` results follows.
fn estimate_ln_dweight(text: &str) -> i64 {
    let Some(x) = finite(text) else { return 0 };
    if !x.value.is_positive() {
        return 0;
    }
    let one = pow10(x.scale);
    // 0.9 <= x <= 1.1, compared as 10x against 9 and 11.
    let ten_x = &x.value * 10;
    let near_one = ten_x >= &one * 9 && ten_x <= &one * 11;
    if near_one {
        let difference = Scaled {
            value: &x.value - &one,
            scale: x.scale,
        };
        let Ok(text) = difference.to_text() else {
            return 0;
        };
        return match base_digits(&text) {
            Some((weight, first, _)) => weight * 4 + i64::from(first).ilog10() as i64,
            None => 0,
        };
    }
    match base_digits(text) {
        Some((weight, first, second)) => {
            let mut digits = f64::from(first);
            let mut dweight = weight * 4;
            if let Some(second) = second {
                digits = digits * 10_000.0 + f64::from(second);
                dweight -= 4;
            }
            let ln = digits.ln() + dweight as f64 * std::f64::consts::LN_10;
            ln.abs().log10() as i64
        }
        None => 0,
    }
}

/// `x` as a fixed-point integer with `p` fraction digits (truncated).
fn fixed(x: &Scaled, p: u32) -> BigInt {
    if p >= x.scale {
        &x.value * pow10(p - x.scale)
    } else {
        &x.value / pow10(x.scale - p)
    }
}

/// ln(m) for a fixed-point `m` (`p` digits) at least 1.
fn ln_fixed(m: BigInt, p: u32) -> BigInt {
    let one = pow10(p);
    let limit = &one + &one / 100;
    let mut m = m;
    let mut halvings = 0u32;
    while m > limit {
        m = (&m * &one).sqrt();
        halvings += 1;
    }
    // ln(m) = 2 atanh(z), z = (m - 1) / (m + 1)
    let z = (&m - &one) * &one / (&m + &one);
    let z2 = &z * &z / &one;
    let mut sum = z.clone();
    let mut power = z;
    let mut n: u32 = 1;
    loop {
        power = &power * &z2 / &one;
        let term = &power / (2 * n + 1);
        if term.is_zero() {
            break;
        }
        sum += term;
        n += 1;
    }
    sum * 2 * (BigInt::one() << halvings)
}

/// ln(x) for a positive `x`, in fixed point with `p` fraction digits.
fn ln_scaled(x: &Scaled, p: u32) -> BigInt {
    // x = m * 10^k with m in [1, 10)
    let digits = x.value.magnitude().to_string().len() as i64;
    let k = digits - 1 - i64::from(x.scale);
    let guard = p + 10 + k.unsigned_abs().to_string().len() as u32;
    let m = Scaled {
        value: x.value.clone(),
        scale: (i64::from(x.scale) + k).max(0) as u32,
    };
    let m = if i64::from(x.scale) + k < 0 {
        Scaled {
            value: &x.value * pow10((-(i64::from(x.scale) + k)) as u32),
            scale: 0,
        }
    } else {
        m
    };
    let ln_m = ln_fixed(fixed(&m, guard), guard);
    let ln_10 = ln_fixed(pow10(guard) * 10, guard);
    let total = ln_m + ln_10 * k;
    total / pow10(guard - p)
}

fn logarithm_errors(x: &Scaled) -> Result<(), SqlError> {
    if x.value.is_zero() {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_LOGARITHM,
            "cannot take logarithm of zero",
        ));
    }
    if x.value.is_negative() {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_LOGARITHM,
            "cannot take logarithm of a negative number",
        ));
    }
    Ok(())
}

/// A fixed-point value rounded to `scale` and shown.
fn rounded(value: BigInt, p: u32, scale: u32) -> Result<String, SqlError> {
    let text = Scaled { value, scale: p }.to_text()?;
    round_to(&text, scale as i32, Rounding::HalfAwayFromZero)
}

/// `ln(x)`.
pub fn ln(text: &str) -> Result<String, SqlError> {
    let Some(x) = finite(text) else {
        return Ok("NaN".into());
    };
    logarithm_errors(&x)?;
    let scale =
        clamp_scale((MIN_SIGNIFICANT_DIGITS - estimate_ln_dweight(text)).max(i64::from(x.scale)));
    let p = scale + 20;
    rounded(ln_scaled(&x, p), p, scale)
}

/// `log(base, x)` (and `log(x)`, `log10(x)` with base 10).
pub fn log(base: &str, text: &str) -> Result<String, SqlError> {
    let (Some(b), Some(x)) = (finite(base), finite(text)) else {
        return Ok("NaN".into());
    };
    logarithm_errors(&b)?;
    logarithm_errors(&x)?;
    let result_dweight = estimate_ln_dweight(text) - estimate_ln_dweight(base);
    let scale = clamp_scale(
        (MIN_SIGNIFICANT_DIGITS - result_dweight)
            .max(i64::from(b.scale))
            .max(i64::from(x.scale)),
    );
    let p = scale + 30;
    let ln_base = ln_scaled(&b, p);
    if ln_base.is_zero() {
        return Err(SqlError::new(
            SqlState::DIVISION_BY_ZERO,
            "division by zero",
        ));
    }
    let ln_x = ln_scaled(&x, p);
    rounded(ln_x * pow10(p) / ln_base, p, scale)
}

/// e^x for a fixed-point `x` (`p` digits) with |x| < 1, by halving and
/// the Taylor series.
fn exp_small(x: BigInt, p: u32) -> BigInt {
    const HALVINGS: u32 = 12;
    let one = pow10(p);
    let y = x / (1u64 << HALVINGS);
    let mut sum = one.clone();
    let mut term = one.clone();
    let mut n: u32 = 1;
    loop {
        term = &term * &y / &one / n;
        if term.is_zero() {
            break;
        }
        sum += &term;
        n += 1;
    }
    for _ in 0..HALVINGS {
        sum = &sum * &sum / &one;
    }
    sum
}

/// e^x as (mantissa in fixed point with `p` digits, power of ten).
fn exp_parts(x: &Scaled, extra: u32) -> Result<(BigInt, i64, u32), SqlError> {
    let approx = x.to_f64();
    let k = (approx / std::f64::consts::LN_10).floor() as i64;
    let p = extra + 20;
    let guard = p + 10 + k.unsigned_abs().to_string().len() as u32;
    let ln_10 = ln_fixed(pow10(guard) * 10, guard);
    let y = fixed(x, guard) - ln_10 * k;
    // y in [0, ln 10): e^y = (e^(y/3))^3 keeps the series argument below 1.
    let third = &y / 3;
    let one = pow10(guard);
    let cube_root = exp_small(third, guard);
    let mantissa = &cube_root * &cube_root / &one * &cube_root / &one;
    Ok((mantissa / pow10(guard - p), k, p))
}

impl Scaled {
    fn to_f64(&self) -> f64 {
        self.value.to_f64().unwrap_or(f64::NAN) / 10f64.powi(self.scale as i32)
    }
}

/// `exp(x)`.
pub fn exp(text: &str) -> Result<String, SqlError> {
    let Some(x) = finite(text) else {
        return Ok("NaN".into());
    };
    let weight = (x.to_f64() * std::f64::consts::LOG10_E).clamp(-2000.0, 2000.0);
    if x.to_f64() * std::f64::consts::LOG10_E > MAX_RESULT_DIGITS {
        return Err(overflow());
    }
    let scale = clamp_scale((MIN_SIGNIFICANT_DIGITS - weight as i64).max(i64::from(x.scale)));
    exp_rounded(&x, scale)
}

/// e^x rounded to `scale` fraction digits.
fn exp_rounded(x: &Scaled, scale: u32) -> Result<String, SqlError> {
    if x.to_f64() * std::f64::consts::LOG10_E < -(f64::from(scale) + 10.0) {
        return round_to("0", scale as i32, Rounding::HalfAwayFromZero);
    }
    let digits_before = (x.to_f64() * std::f64::consts::LOG10_E).max(0.0) as u32;
    let (mantissa, k, p) = exp_parts(x, scale + digits_before)?;
    // value = mantissa / 10^p * 10^k
    let shift = i64::from(p) - k;
    let value = if shift >= 0 {
        Scaled {
            value: mantissa,
            scale: shift as u32,
        }
    } else {
        Scaled {
            value: mantissa * pow10((-shift) as u32),
            scale: 0,
        }
    };
    round_to(&value.to_text()?, scale as i32, Rounding::HalfAwayFromZero)
}

/// `base ^ exponent` (`power`).
pub fn power(base: &str, exponent: &str) -> Result<String, SqlError> {
    let (Some(b), Some(e)) = (finite(base), finite(exponent)) else {
        // NaN ^ 0 and 1 ^ NaN are 1, as in PostgreSQL.
        let zero_exponent = finite(exponent).is_some_and(|e| e.value.is_zero());
        let one_base = finite(base).is_some_and(|b| b.value == pow10(b.scale));
        return Ok(if zero_exponent || one_base {
            "1".into()
        } else {
            "NaN".into()
        });
    };
    if b.value.is_zero() && e.value.is_negative() {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "zero raised to a negative power is undefined",
        ));
    }
    let (integer_exponent, remainder) = e.value.div_rem(&pow10(e.scale));
    let is_integer = remainder.is_zero();
    if b.value.is_negative() && !is_integer {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    if let Some(n) = integer_exponent.to_i32().filter(|_| is_integer) {
        return integer_power(&b, n);
    }
    // exp(exponent * ln(base)), at PostgreSQL's scale.
    if b.value.is_zero() {
        return round_to("0", 16, Rounding::HalfAwayFromZero);
    }
    let approx = b.to_f64().ln() * e.to_f64();
    if approx.abs() > MAX_RESULT_DIGITS * 3.01 {
        if approx > 0.0 {
            return Err(overflow());
        }
        return round_to("0", MAX_DISPLAY_SCALE as i32, Rounding::HalfAwayFromZero);
    }
    let weight = approx * std::f64::consts::LOG10_E;
    let scale = clamp_scale(
        (MIN_SIGNIFICANT_DIGITS - weight as i64)
            .max(i64::from(b.scale))
            .max(i64::from(e.scale)),
    );
    let digits_before = weight.max(0.0) as u32;
    let p = scale + digits_before + 30;
    let ln_b = ln_scaled(&b, p);
    let product = ln_b * fixed(&e, p) / pow10(p);
    let exponent_value = Scaled {
        value: product,
        scale: p,
    };
    exp_rounded(&exponent_value, scale)
}

/// `base ^ n` for an integer `n`: exact, then rounded to PostgreSQL's
/// scale (16 digits, or the base's when it has more).
fn integer_power(b: &Scaled, n: i32) -> Result<String, SqlError> {
    let scale = clamp_scale(MIN_SIGNIFICANT_DIGITS.max(i64::from(b.scale)));
    let magnitude = b.to_f64().abs();
    let digits = f64::from(n.unsigned_abs()) * magnitude.log10();
    if digits.is_finite() && digits > MAX_RESULT_DIGITS && n > 0 {
        return Err(overflow());
    }
    if digits.is_finite() && -digits > MAX_RESULT_DIGITS && n < 0 {
        return Err(overflow());
    }
    if n < 0 && digits.is_finite() && digits > f64::from(scale) + 10.0 {
        return round_to("0", scale as i32, Rounding::HalfAwayFromZero);
    }
    let exponent = n.unsigned_abs();
    if u64::from(b.scale) * u64::from(exponent) > 2 * MAX_DISPLAY_SCALE as u64 {
        // Too many digits to compute exactly: in fixed point with guard
        // digits for the multiplications and for a result below 1.
        let below_one = (-digits).max(0.0) as u32;
        let p = scale + below_one + 40 + 2 * (32 - exponent.leading_zeros());
        let one = pow10(p);
        let mut result = one.clone();
        let mut square = fixed(b, p);
        let mut remaining = exponent;
        while remaining > 0 {
            if remaining & 1 == 1 {
                result = &result * &square / &one;
            }
            remaining >>= 1;
            if remaining > 0 {
                square = &square * &square / &one;
            }
        }
        if n < 0 {
            if result.is_zero() {
                return Err(SqlError::new(
                    SqlState::DIVISION_BY_ZERO,
                    "division by zero",
                ));
            }
            result = &one * &one / result;
        }
        return rounded(result, p, scale);
    }
    let value = num_traits::pow::Pow::pow(&b.value, exponent);
    let power_scale = b.scale * exponent;
    if n >= 0 {
        let text = Scaled {
            value,
            scale: power_scale,
        }
        .to_text()?;
        return round_to(&text, scale as i32, Rounding::HalfAwayFromZero);
    }
    // 1 / (value / 10^power_scale) at `scale` digits.
    let numerator = pow10(power_scale + scale);
    let quotient = super::div_round(&numerator, &value);
    Scaled {
        value: quotient,
        scale,
    }
    .to_text()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_have_postgres_digits() {
        assert_eq!(power("2.0", "0.5").unwrap(), "1.4142135623730950");
        assert_eq!(power("2", "10").unwrap(), "1024.0000000000000000");
        assert_eq!(power("2.5", "2").unwrap(), "6.2500000000000000");
        assert_eq!(power("9", "0.5").unwrap(), "3.0000000000000000");
        assert_eq!(power("2", "-2").unwrap(), "0.2500000000000000");
        assert_eq!(power("-8", "0.5").unwrap_err().code, "2201F");
        assert_eq!(power("0", "-1").unwrap_err().code, "2201F");
        assert_eq!(log("10", "0.001").unwrap(), "-3.0000000000000000");
        assert_eq!(log("2", "8").unwrap(), "3.0000000000000000");
        assert_eq!(ln("2").unwrap(), "0.6931471805599453");
        assert_eq!(ln("0").unwrap_err().code, "2201E");
        assert_eq!(exp("1").unwrap(), "2.7182818284590452");
        assert_eq!(power("1.000001", "1000000").unwrap(), "2.7182804693193769");
    }
}
