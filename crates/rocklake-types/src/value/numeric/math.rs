//! PostgreSQL's numeric functions that stay exact: `round` and `trunc` to
//! a scale, `ceil`, `floor`, `sign`, `div`, `gcd`, `lcm`, `factorial`, and
//! `sqrt` with PostgreSQL's result scale (at least 16 significant digits).

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

use super::{first_base_digit, pow10, Scaled};
use crate::error::SqlError;
use crate::sqlstate::SqlState;

/// How a value is brought to fewer fraction digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// Half away from zero (`round`).
    HalfAwayFromZero,
    /// Toward zero (`trunc`).
    TowardZero,
    /// Toward positive infinity (`ceil`).
    Up,
    /// Toward negative infinity (`floor`).
    Down,
}

fn finite(text: &str) -> Option<Scaled> {
    Scaled::of(text)
}

/// `text` rounded to `scale` fraction digits (negative: tens, hundreds,
/// ...), the result showing `max(scale, 0)` of them; NaN stays NaN.
pub fn round_to(text: &str, scale: i32, how: Rounding) -> Result<String, SqlError> {
    let Some(x) = finite(text) else {
        return Ok("NaN".into());
    };
    let scale = scale.clamp(-(super::MAX_INTEGER_DIGITS as i32), super::MAX_SCALE as i32);
    let target = scale.max(0) as u32;
    // Digits dropped below the rounding position.
    let drop = i64::from(x.scale) - i64::from(scale);
    let value = if drop <= 0 {
        x.value_at(target)
    } else {
        let unit = pow10(drop as u32);
        let (quotient, remainder) = x.value.div_rem(&unit);
        let adjust = match how {
            Rounding::TowardZero => false,
            Rounding::HalfAwayFromZero => remainder.magnitude() * 2u32 >= *unit.magnitude(),
            Rounding::Up => remainder.is_positive(),
            Rounding::Down => remainder.is_negative(),
        };
        // Away from zero, except that ceil moves up and floor down.
        let down = how == Rounding::Down || (x.value.is_negative() && how != Rounding::Up);
        let step = if down { -BigInt::one() } else { BigInt::one() };
        let rounded = if adjust { quotient + step } else { quotient };
        // Back to `target` fraction digits (`scale` may be negative).
        if scale >= 0 {
            rounded
        } else {
            rounded * pow10((-scale) as u32)
        }
    };
    Scaled {
        value,
        scale: target,
    }
    .to_text()
}

/// `sign(x)`: -1, 0 or 1.
pub fn sign(text: &str) -> String {
    match finite(text) {
        None => "NaN".into(),
        Some(x) if x.value.is_zero() => "0".into(),
        Some(x) if x.value.is_negative() => "-1".into(),
        Some(_) => "1".into(),
    }
}

fn division_by_zero() -> SqlError {
    SqlError::new(SqlState::DIVISION_BY_ZERO, "division by zero")
}

/// `div(a, b)`: the integer quotient, truncated toward zero.
pub fn div(a: &str, b: &str) -> Result<String, SqlError> {
    let (Some(x), Some(y)) = (finite(a), finite(b)) else {
        return Ok("NaN".into());
    };
    if y.value.is_zero() {
        return Err(division_by_zero());
    }
    let scale = x.scale.max(y.scale);
    let quotient = x.value_at(scale) / y.value_at(scale);
    Scaled {
        value: quotient,
        scale: 0,
    }
    .to_text()
}

/// `gcd(a, b)` (or `lcm`): of the values at their common scale, which the
/// result keeps.
pub fn gcd_lcm(a: &str, b: &str, lcm: bool) -> Result<String, SqlError> {
    let (Some(x), Some(y)) = (finite(a), finite(b)) else {
        return Ok("NaN".into());
    };
    let scale = x.scale.max(y.scale);
    let (p, q) = (x.value_at(scale), y.value_at(scale));
    let value = if lcm {
        if p.is_zero() || q.is_zero() {
            BigInt::zero()
        } else {
            // lcm of the scaled values, divided by 10^scale once.
            (p.lcm(&q)).abs()
        }
    } else {
        p.gcd(&q)
    };
    Scaled { value, scale }.to_text()
}

/// `factorial(n)`: PostgreSQL's error for a negative `n`.
pub fn factorial(n: i64) -> Result<String, SqlError> {
    if n < 0 {
        return Err(SqlError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            "factorial of a negative number is undefined",
        ));
    }
    if n > 32_177 {
        return Err(super::overflow());
    }
    let mut value = BigInt::one();
    for i in 2..=n {
        value *= i;
    }
    Scaled { value, scale: 0 }.to_text()
}

/// `sqrt(x)` with PostgreSQL's scale: `16 - (2 * weight + 1)` fraction
/// digits, at least the input's, the last digit rounded.
pub fn sqrt(text: &str) -> Result<String, SqlError> {
    let Some(x) = finite(text) else {
        return Ok("NaN".into());
    };
    if x.value.is_negative() {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "cannot take square root of a negative number",
        ));
    }
    let (weight, _) = first_base_digit(text);
    let result_weight = weight * 2 + 1;
    let scale = (16 - result_weight).max(i64::from(x.scale)).clamp(0, 1000) as u32;
    root_at(&x, scale)
}

/// The square root of the non-negative `text` rounded to `scale` fraction
/// digits (PostgreSQL's `sqrt_var` at a given result scale, as `stddev`
/// uses it).
pub fn sqrt_with_scale(text: &str, scale: u32) -> Result<String, SqlError> {
    let Some(x) = finite(text) else {
        return Ok("NaN".into());
    };
    if x.value.is_negative() {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "cannot take square root of a negative number",
        ));
    }
    root_at(&x, scale)
}

fn root_at(x: &Scaled, scale: u32) -> Result<String, SqlError> {
    // floor(sqrt(x) * 10^(scale + 1)) from an integer square root, then
    // the last digit rounded away.
    let digits = 2 * (scale + 1);
    let (radicand, extra) = if digits >= x.scale {
        (&x.value * pow10(digits - x.scale), 0)
    } else {
        let odd = (x.scale - digits) % 2;
        (&x.value * pow10(odd), (x.scale - digits + odd) / 2)
    };
    let root = radicand.sqrt();
    let root = if extra > 0 { root / pow10(extra) } else { root };
    let value = super::div_round(&root, &BigInt::from(10));
    Scaled { value, scale }.to_text()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_and_roots_match_postgres() {
        use Rounding::*;
        assert_eq!(round_to("42.4382", 2, HalfAwayFromZero).unwrap(), "42.44");
        assert_eq!(round_to("1234.5678", -2, HalfAwayFromZero).unwrap(), "1200");
        assert_eq!(round_to("2.5", 0, HalfAwayFromZero).unwrap(), "3");
        assert_eq!(round_to("-2.5", 0, HalfAwayFromZero).unwrap(), "-3");
        assert_eq!(round_to("42.4382", 2, TowardZero).unwrap(), "42.43");
        assert_eq!(round_to("-1.99", 0, TowardZero).unwrap(), "-1");
        assert_eq!(round_to("-0.5", 0, Up).unwrap(), "0");
        assert_eq!(round_to("-0.5", 0, Down).unwrap(), "-1");
        assert_eq!(round_to("1.2", 0, Up).unwrap(), "2");
        assert_eq!(round_to("1.5", 3, HalfAwayFromZero).unwrap(), "1.500");
        assert_eq!(sign("-3.5"), "-1");
        assert_eq!(div("7.5", "2").unwrap(), "3");
        assert_eq!(div("-7", "2").unwrap(), "-3");
        assert_eq!(gcd_lcm("12", "18", false).unwrap(), "6");
        assert_eq!(gcd_lcm("4", "6", true).unwrap(), "12");
        assert_eq!(gcd_lcm("1.5", "2.25", false).unwrap(), "0.75");
        assert_eq!(factorial(5).unwrap(), "120");
        assert_eq!(sqrt("2").unwrap(), "1.414213562373095");
        assert_eq!(sqrt("100").unwrap(), "10.000000000000000");
        assert_eq!(sqrt("0.0001").unwrap(), "0.01000000000000000");
        assert_eq!(sqrt("12345678901234567890").unwrap(), "3513641828.8201443");
        assert_eq!(sqrt("1.21").unwrap(), "1.100000000000000");
        assert_eq!(sqrt("-1").unwrap_err().code, "2201F");
    }
}
