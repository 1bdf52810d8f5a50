//! Number formatting (PostgreSQL's "Data Type Formatting Functions" for
//! numbers): `to_char(int|bigint|numeric|real|double precision, text)` and
//! `to_number(text, text)` with PostgreSQL 15's template patterns
//! ([`pattern`]) in the `C` locale (`.` and `,`, a space for the currency
//! symbol). Each type prepares its number as PostgreSQL does (integers
//! exactly; `numeric` rounded half away from zero; floats to 15 (`real`: 6)
//! significant digits, rounded as `printf` rounds the binary value), then
//! [`mod@write`] writes it; [`mod@read`] reads text back.

mod pattern;
mod read;
mod write;

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::numeric::{self, math};
use rocklake_types::{SqlError, SqlState};

use super::def::types::*;
use super::def::Library;
use crate::plan::{CallEnv, CallInfo};
use pattern::Template;
use write::{overflow, roman, Prepared};

/// Registers `to_char` of numbers and `to_number`.
pub(super) fn register(lib: &mut Library) {
    for t in [INT4, INT8, NUMERIC, FLOAT4, FLOAT8] {
        lib.function("to_char", [t, TEXT], TEXT, to_char).stable();
    }
    lib.function("to_number", [TEXT, TEXT], NUMERIC, |a, _, _| {
        read::to_number(
            a[0].as_str().unwrap_or_default(),
            a[1].as_str().unwrap_or_default(),
        )
    })
    .stable();
}

fn to_char(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    number_to_char(&a[0], &call.arg_types[0], a[1].as_str().unwrap_or_default())
}

/// `value` of type `ty` written as `format` says.
fn number_to_char(value: &Datum, ty: &PgType, format: &str) -> Result<Datum, SqlError> {
    if format.is_empty() {
        return Ok(Datum::text(""));
    }
    let template = Template::parse(format)?;
    let number = match (ty, value) {
        (PgType::Int4 | PgType::Int8, _) => {
            integer(&template, value.as_i64().unwrap_or(0), *ty == INT4)?
        }
        (PgType::Numeric(_), Datum::Numeric(text)) => decimal(&template, text)?,
        (_, Datum::Float4(v)) => float(&template, f64::from(*v), true)?,
        (_, Datum::Float8(v)) => float(&template, *v, false)?,
        _ => return Ok(Datum::Null),
    };
    Ok(Datum::text(match number {
        Number::Written(text) => text,
        Number::Prepared(number) => write::write(&template, &number)?,
    }))
}

/// A number prepared to be written, or already written (`EEEE`).
enum Number {
    Prepared(Prepared),
    Written(String),
}

fn out_of_range(what: &str) -> SqlError {
    SqlError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("{what} out of range"),
    )
}

/// Roman numerals of `n`.
fn roman_number(n: i64) -> Number {
    Number::Prepared(Prepared {
        digits: roman(n),
        sign: None,
        blanks: 0,
        pre: 0,
        post: 0,
    })
}

/// Digits with a decimal point, their sign, and the blanks before them
/// (`#` when the integer part has more digits than the template).
fn prepared(text: &str, pre: usize, post: usize) -> Number {
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ('-', rest),
        None => ('+', text),
    };
    let integer_digits = digits.find('.').unwrap_or(digits.len());
    let (digits, blanks) = match integer_digits.cmp(&pre) {
        std::cmp::Ordering::Less => (digits.to_string(), pre - integer_digits),
        std::cmp::Ordering::Equal => (digits.to_string(), 0),
        std::cmp::Ordering::Greater => (overflow(pre, post), 0),
    };
    Number::Prepared(Prepared {
        digits,
        sign: Some(sign),
        blanks,
        pre,
        post,
    })
}

/// `EEEE` with a value PostgreSQL cannot write so: `#`s.
fn exponent_overflow(t: &Template) -> Number {
    let mut s: Vec<char> = "#".repeat(t.pre + t.post + 6).chars().collect();
    s[0] = ' ';
    s[t.pre + 1] = '.';
    Number::Written(s.into_iter().collect())
}

/// A sign column before a positive number in scientific notation.
fn signed(text: String) -> Number {
    Number::Written(if text.starts_with('-') {
        text
    } else {
        format!(" {text}")
    })
}

fn integer(t: &Template, value: i64, int4: bool) -> Result<Number, SqlError> {
    if t.roman {
        if !int4 && i32::try_from(value).is_err() {
            return Err(out_of_range("integer"));
        }
        return Ok(roman_number(value));
    }
    if t.exponent {
        // `integer` goes through printf as a double, `bigint` as numeric.
        if int4 {
            return Ok(printf_exponent(value as f64, t.post));
        }
        return Ok(signed(scientific(&value.to_string(), t.post)?));
    }
    let mut value = value;
    let mut pre = t.pre;
    if t.multiply {
        let factor = 10i64.checked_pow(t.multi as u32);
        value = if int4 {
            // An integer's shifted value must stay an integer, as in
            // PostgreSQL's current releases (15.18 and older wrapped it).
            10i128
                .checked_pow(t.multi as u32)
                .and_then(|f| i128::from(value).checked_mul(f))
                .and_then(|shifted| i32::try_from(shifted).ok())
                .map(i64::from)
                .ok_or_else(|| out_of_range("integer"))?
        } else {
            factor
                .and_then(|f| value.checked_mul(f))
                .ok_or_else(|| out_of_range("bigint"))?
        };
        pre += t.multi;
    }
    let mut text = value.to_string();
    if t.post > 0 {
        text.push('.');
        text.push_str(&"0".repeat(t.post));
    }
    Ok(prepared(&text, pre, t.post))
}

fn decimal(t: &Template, value: &str) -> Result<Number, SqlError> {
    if t.roman {
        if value == "NaN" {
            return Err(SqlError::unsupported("cannot convert NaN to integer"));
        }
        let rounded = math::round_to(value, 0, math::Rounding::HalfAwayFromZero)?;
        let n = rounded
            .parse::<i64>()
            .ok()
            .filter(|n| i32::try_from(*n).is_ok())
            .ok_or_else(|| out_of_range("integer"))?;
        return Ok(roman_number(n));
    }
    if t.exponent {
        if value == "NaN" {
            return Ok(exponent_overflow(t));
        }
        return Ok(signed(scientific(value, t.post)?));
    }
    let mut value = value.to_string();
    let mut pre = t.pre;
    if t.multiply && value != "NaN" {
        value = numeric::arith(&value, &format!("1{}", "0".repeat(t.multi)), '*')?;
        pre += t.multi;
    }
    let text = if value == "NaN" {
        value
    } else {
        let rounded = math::round_to(&value, t.post as i32, math::Rounding::HalfAwayFromZero)?;
        // `-0.00` is written without its sign.
        if numeric::is_zero(&rounded) {
            rounded.trim_start_matches('-').to_string()
        } else {
            rounded
        }
    };
    Ok(prepared(&text, pre, t.post))
}

/// `numeric`'s scientific notation: the digits from the first significant
/// one, rounded to `post` fraction digits (not renormalized: `9.995` to
/// two is `10.00e+00`).
fn scientific(value: &str, post: usize) -> Result<String, SqlError> {
    let (sign, digits) = match value.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", value),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all = format!("{int}{frac}");
    let (mantissa, exponent) = match all.find(|c| c != '0') {
        None => ("0".to_string(), 0),
        Some(first) => (
            format!("{sign}{}.{}", &all[first..=first], &all[first + 1..]),
            int.len() as i64 - 1 - first as i64,
        ),
    };
    let mut mantissa = math::round_to(&mantissa, post as i32, math::Rounding::HalfAwayFromZero)?;
    if numeric::is_zero(&mantissa) {
        mantissa = mantissa.trim_start_matches('-').to_string();
    }
    let exponent_sign = if exponent < 0 { '-' } else { '+' };
    Ok(format!("{mantissa}e{exponent_sign}{:02}", exponent.abs()))
}

/// `value` as C's `printf("%+.{post}e")` writes it (`1.23e+04`), a space
/// for the plus sign.
fn printf_exponent(value: f64, post: usize) -> Number {
    let text = format!("{value:.post$e}");
    // Rust writes `1.23e4`; C's printf `1.23e+04`.
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    signed(format!("{mantissa}e{sign}{:02}", exponent.abs()))
}

fn float(t: &Template, value: f64, single: bool) -> Result<Number, SqlError> {
    if t.roman {
        let n = if value.is_finite() && value.round_ties_even().abs() < 2_147_483_648.0 {
            value.round_ties_even() as i64
        } else {
            i64::from(i32::MIN)
        };
        return Ok(roman_number(n));
    }
    if t.exponent {
        if !value.is_finite() {
            return Ok(exponent_overflow(t));
        }
        return Ok(printf_exponent(value, t.post));
    }
    let mut value = value;
    let mut pre = t.pre;
    if t.multiply {
        value = if single {
            f64::from((value as f32) * (10f64.powi(t.multi as i32) as f32))
        } else {
            value * 10f64.powi(t.multi as i32)
        };
        pre += t.multi;
    }
    // At most 15 (real: 6) significant digits: fraction digits go first
    // (`NaN` and `Infinity` count as their letters).
    let significant = if single { 6 } else { 15 };
    let written = |v: f64, post: usize| match v {
        v if v.is_nan() => "NaN".to_string(),
        v if v.is_infinite() => if v > 0.0 { "Infinity" } else { "-Infinity" }.to_string(),
        v => format!("{v:.post$}"),
    };
    let integer_digits = written(value.abs(), 0).len();
    let post = if integer_digits >= significant {
        0
    } else {
        t.post.min(significant - integer_digits)
    };
    let text = written(value, post);
    Ok(prepared(&text, pre, post))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(value: &Datum, ty: PgType, template: &str) -> String {
        let written = number_to_char(value, &ty, template).unwrap();
        written.as_str().unwrap().to_string()
    }

    #[test]
    fn numbers_are_written_as_postgresql_writes_them() {
        let n = |s: &str| Datum::Numeric(s.into());
        assert_eq!(format(&n("-1234.5"), NUMERIC, "9999.99"), "-1234.50");
        assert_eq!(format(&n("0.5"), NUMERIC, "FM9.99"), ".5");
        assert_eq!(
            format(&n("1234567.891"), NUMERIC, "9G999G999D99"),
            " 1,234,567.89"
        );
        assert_eq!(format(&n("-12"), NUMERIC, "999PR"), " <12>");
        assert_eq!(format(&n("99.99"), NUMERIC, "99.9"), " ##.#");
        assert_eq!(format(&n("9.995"), NUMERIC, "9.99EEEE"), " 10.00e+00");
        assert_eq!(format(&Datum::Int8(485), INT8, "FMRN"), "CDLXXXV");
        // `integer` in scientific notation goes through printf (renormalized),
        // `bigint` through numeric (not).
        assert_eq!(format(&Datum::Int4(9891), INT4, "9EEEE"), " 1e+04");
        assert_eq!(format(&Datum::Int8(9891), INT8, "9EEEE"), " 10e+03");
        assert_eq!(format(&Datum::Int8(3), INT8, "FM9th"), "3rd");
        assert_eq!(format(&Datum::Int8(12), INT8, "999V99"), "  1200");
        // A template that runs out of digits cuts the output.
        assert_eq!(format(&Datum::Int8(10), INT8, "99.\"x\""), " 10");
        assert_eq!(format(&Datum::Float8(0.125), FLOAT8, "9.99"), "  .12");
        assert_eq!(format(&Datum::Float8(f64::NAN), FLOAT8, "999.99"), " NaN");
    }

    #[test]
    fn an_integer_shifted_by_v_past_its_range_is_an_error() {
        // PostgreSQL 15.20 (older releases wrapped the product).
        let error = number_to_char(&Datum::Int4(i32::MAX), &INT4, "9999999999V99").unwrap_err();
        assert_eq!(error.code, SqlState::NUMERIC_VALUE_OUT_OF_RANGE);
        // A template long enough to overflow the product itself: the same
        // error, not a panic.
        let long = format!("9V{}", "9".repeat(40));
        let error = number_to_char(&Datum::Int4(7), &INT4, &long).unwrap_err();
        assert_eq!(error.code, SqlState::NUMERIC_VALUE_OUT_OF_RANGE);
        assert_eq!(format(&Datum::Int4(-12), INT4, "999V9"), " -120");
        assert_eq!(
            format(
                &Datum::Int8(5_000_000_000),
                INT8,
                "FM99999999999999999999V99"
            ),
            "500000000000"
        );
    }

    #[test]
    fn text_is_read_back_as_postgresql_reads_it() {
        let number = |input: &str, template: &str| read::to_number(input, template);
        assert_eq!(
            number("12,454.8-", "99G999D9S").unwrap(),
            Datum::Numeric("-12454.8".into())
        );
        assert_eq!(
            number("<12>", "99PR").unwrap(),
            Datum::Numeric("-12".into())
        );
        // `V` without digits after it divides by 1 (it once panicked).
        assert_eq!(
            number("0.000-", "G9V").unwrap(),
            Datum::Numeric("0.0000000000000000".into())
        );
        assert_eq!(
            number("125", "99.9").unwrap_err().code,
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE
        );
        assert_eq!(
            number("1", "9EEEE").unwrap_err().code,
            SqlState::FEATURE_NOT_SUPPORTED
        );
    }
}
