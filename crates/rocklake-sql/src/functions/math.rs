//! Mathematical functions and operators (PostgreSQL's "Mathematical
//! Functions and Operators" table): `^ |/ ||/`, `abs`, `ceil`, `floor`,
//! `round`, `trunc`, `sign`, `sqrt`, `cbrt`, `exp`, `ln`, `log`, `log10`,
//! `power`, `mod`, `div`, `gcd`, `lcm`, `factorial`, `pi`, `degrees`,
//! `radians`, `random` and the trigonometric functions, on `double
//! precision` and, exactly, on `numeric`.

use rocklake_types::datum::Datum;
use rocklake_types::value::numeric::math::{self as numeric, Rounding};
use rocklake_types::value::numeric::transcendental;
use rocklake_types::{SqlError, SqlState};

use super::arith::{division_by_zero, int_datum, numeric_text};
use super::def::types::*;
use super::def::Library;
use super::{degrees, libm};
use crate::plan::{CallEnv, CallInfo};

/// Registers the mathematical functions and operators.
pub(super) fn register(lib: &mut Library) {
    operators(lib);
    rounding(lib);
    float_functions(lib);
    numeric_functions(lib);
}

fn operators(lib: &mut Library) {
    lib.infix("^", FLOAT8, FLOAT8, FLOAT8, dpow);
    lib.infix("^", NUMERIC, NUMERIC, NUMERIC, numeric_power);
    lib.prefix("|/", FLOAT8, FLOAT8, dsqrt);
    lib.prefix("||/", FLOAT8, FLOAT8, dcbrt);
}

fn rounding(lib: &mut Library) {
    for (name, how) in [
        ("ceil", Rounding::Up),
        ("ceiling", Rounding::Up),
        ("floor", Rounding::Down),
        ("round", Rounding::HalfAwayFromZero),
        ("trunc", Rounding::TowardZero),
    ] {
        let (float_fn, numeric_fn): (crate::plan::ScalarFn, crate::plan::ScalarFn) = match how {
            Rounding::Up => (float_ceil, numeric_ceil),
            Rounding::Down => (float_floor, numeric_floor),
            Rounding::HalfAwayFromZero => (float_round, numeric_round),
            Rounding::TowardZero => (float_trunc, numeric_trunc),
        };
        lib.function(name, [FLOAT8], FLOAT8, float_fn);
        lib.function(name, [NUMERIC], NUMERIC, numeric_fn);
    }
    lib.function("round", [NUMERIC, INT4], NUMERIC, numeric_round_to);
    lib.function("trunc", [NUMERIC, INT4], NUMERIC, numeric_trunc_to);
}

fn float_functions(lib: &mut Library) {
    let unary: [(&'static str, crate::plan::ScalarFn); 30] = [
        ("abs", float_abs),
        ("sign", float_sign),
        ("sqrt", dsqrt),
        ("cbrt", dcbrt),
        ("exp", dexp),
        ("ln", dln),
        ("log", dlog10),
        ("log10", dlog10),
        ("degrees", degrees),
        ("radians", radians),
        ("sin", |a, _, _| trig(a, libm::sin)),
        ("cos", |a, _, _| trig(a, libm::cos)),
        ("tan", |a, _, _| trig(a, libm::tan)),
        ("cot", |a, _, _| trig(a, |x| 1.0 / libm::tan(x))),
        ("asin", |a, _, _| trig(a, libm::asin)),
        ("acos", |a, _, _| trig(a, libm::acos)),
        ("atan", |a, _, _| trig(a, libm::atan)),
        ("sind", |a, _, _| trig(a, degrees::sind)),
        ("cosd", |a, _, _| trig(a, degrees::cosd)),
        ("tand", |a, _, _| trig(a, degrees::tand)),
        ("cotd", |a, _, _| trig(a, degrees::cotd)),
        ("asind", |a, _, _| trig(a, degrees::asind)),
        ("acosd", |a, _, _| trig(a, degrees::acosd)),
        ("atand", |a, _, _| trig(a, degrees::atand)),
        ("sinh", |a, _, _| trig(a, libm::sinh)),
        ("cosh", |a, _, _| trig(a, libm::cosh)),
        ("tanh", |a, _, _| trig(a, libm::tanh)),
        ("asinh", |a, _, _| trig(a, libm::asinh)),
        ("acosh", |a, _, _| trig(a, libm::acosh)),
        ("atanh", |a, _, _| trig(a, libm::atanh)),
    ];
    for (name, eval) in unary {
        lib.function(name, [FLOAT8], FLOAT8, eval);
    }
    lib.function("power", [FLOAT8, FLOAT8], FLOAT8, dpow);
    lib.function("pow", [FLOAT8, FLOAT8], FLOAT8, dpow);
    lib.function("atan2", [FLOAT8, FLOAT8], FLOAT8, |a, _, _| {
        Ok(Datum::Float8(libm::atan2(float(&a[0]), float(&a[1]))))
    });
    lib.function("atan2d", [FLOAT8, FLOAT8], FLOAT8, |a, _, _| {
        Ok(Datum::Float8(degrees::atan2d(float(&a[0]), float(&a[1]))))
    });
    lib.function("pi", [FLOAT8; 0], FLOAT8, |_, _, _| {
        Ok(Datum::Float8(std::f64::consts::PI))
    });
    lib.function("random", [FLOAT8; 0], FLOAT8, |_, _, _| {
        Ok(Datum::Float8(rand_float()))
    })
    .volatile()
    .reads_session();
}

fn numeric_functions(lib: &mut Library) {
    lib.function("abs", [NUMERIC], NUMERIC, numeric_abs);
    lib.function("sign", [NUMERIC], NUMERIC, |a, _, _| {
        Ok(Datum::Numeric(numeric::sign(&numeric_text(&a[0]))))
    });
    lib.function("sqrt", [NUMERIC], NUMERIC, |a, _, _| {
        Ok(Datum::Numeric(numeric::sqrt(&numeric_text(&a[0]))?))
    });
    lib.function("exp", [NUMERIC], NUMERIC, |a, _, _| {
        Ok(Datum::Numeric(transcendental::exp(&numeric_text(&a[0]))?))
    });
    lib.function("ln", [NUMERIC], NUMERIC, |a, _, _| {
        Ok(Datum::Numeric(transcendental::ln(&numeric_text(&a[0]))?))
    });
    for name in ["log", "log10"] {
        lib.function(name, [NUMERIC], NUMERIC, |a, _, _| {
            Ok(Datum::Numeric(transcendental::log(
                "10",
                &numeric_text(&a[0]),
            )?))
        });
    }
    lib.function("log", [NUMERIC, NUMERIC], NUMERIC, |a, _, _| {
        Ok(Datum::Numeric(transcendental::log(
            &numeric_text(&a[0]),
            &numeric_text(&a[1]),
        )?))
    });
    for name in ["power", "pow"] {
        lib.function(name, [NUMERIC, NUMERIC], NUMERIC, numeric_power);
    }
    lib.function("mod", [NUMERIC, NUMERIC], NUMERIC, |a, _, _| {
        Ok(Datum::Numeric(rocklake_types::value::numeric::arith(
            &numeric_text(&a[0]),
            &numeric_text(&a[1]),
            '%',
        )?))
    });
    for t in [INT2, INT4, INT8] {
        lib.function("mod", [t.clone(), t.clone()], t.clone(), int_mod);
        lib.function("abs", [t.clone()], t, int_abs);
    }
    lib.function("div", [NUMERIC, NUMERIC], NUMERIC, |a, _, _| {
        Ok(Datum::Numeric(numeric::div(
            &numeric_text(&a[0]),
            &numeric_text(&a[1]),
        )?))
    });
    lib.function("gcd", [NUMERIC, NUMERIC], NUMERIC, |a, _, _| {
        gcd_lcm(a, false)
    });
    lib.function("lcm", [NUMERIC, NUMERIC], NUMERIC, |a, _, _| {
        gcd_lcm(a, true)
    });
    for t in [INT4, INT8] {
        lib.function("gcd", [t.clone(), t.clone()], t.clone(), int_gcd);
        lib.function("lcm", [t.clone(), t.clone()], t, int_lcm);
    }
    lib.function("factorial", [INT8], NUMERIC, |a, _, _| {
        Ok(Datum::Numeric(numeric::factorial(
            a[0].as_i64().unwrap_or(0),
        )?))
    });
}

fn float(d: &Datum) -> f64 {
    match d {
        Datum::Float8(v) => *v,
        Datum::Float4(v) => f64::from(*v),
        other => other.as_i64().unwrap_or(0) as f64,
    }
}

fn out_of_range(what: &str) -> SqlError {
    SqlError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("value out of range: {what}"),
    )
}

fn checked(value: f64, input: f64) -> Result<Datum, SqlError> {
    if value.is_infinite() && input.is_finite() {
        return Err(out_of_range("overflow"));
    }
    Ok(Datum::Float8(value))
}

/// `x ^ y` as PostgreSQL's `dpow`: its errors for a negative base with a
/// fractional exponent and for zero to a negative power.
fn dpow(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (x, y) = (float(&a[0]), float(&a[1]));
    if x == 0.0 && y < 0.0 {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "zero raised to a negative power is undefined",
        ));
    }
    if x < 0.0 && y.fract() != 0.0 && y.is_finite() {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    let result = libm::pow(x, y);
    if result.is_infinite() && x.is_finite() && y.is_finite() {
        return Err(out_of_range("overflow"));
    }
    if result == 0.0 && x != 0.0 && y.is_finite() && x.is_finite() {
        return Err(out_of_range("underflow"));
    }
    Ok(Datum::Float8(result))
}

fn dsqrt(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let x = float(&a[0]);
    if x < 0.0 {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "cannot take square root of a negative number",
        ));
    }
    Ok(Datum::Float8(x.sqrt()))
}

fn dcbrt(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Float8(libm::cbrt(float(&a[0]))))
}

fn dexp(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let x = float(&a[0]);
    let result = libm::exp(x);
    if result == 0.0 && x.is_finite() {
        return Err(out_of_range("underflow"));
    }
    checked(result, x)
}

fn logarithm_domain(x: f64) -> Result<(), SqlError> {
    if x == 0.0 {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_LOGARITHM,
            "cannot take logarithm of zero",
        ));
    }
    if x < 0.0 {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_LOGARITHM,
            "cannot take logarithm of a negative number",
        ));
    }
    Ok(())
}

fn dln(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let x = float(&a[0]);
    logarithm_domain(x)?;
    Ok(Datum::Float8(libm::ln(x)))
}

fn dlog10(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let x = float(&a[0]);
    logarithm_domain(x)?;
    Ok(Datum::Float8(libm::log10(x)))
}

fn degrees(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let x = float(&a[0]);
    checked(x.to_degrees(), x)
}

fn radians(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let x = float(&a[0]);
    checked(x.to_radians(), x)
}

/// A trigonometric function, with PostgreSQL's error for an argument
/// outside its domain (an infinity, or beyond ±1 for the inverses).
fn trig(a: &[Datum], f: impl Fn(f64) -> f64) -> Result<Datum, SqlError> {
    let x = float(&a[0]);
    let result = f(x);
    if result.is_nan() && !x.is_nan() {
        return Err(SqlError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            "input is out of range",
        ));
    }
    Ok(Datum::Float8(result))
}

fn float_abs(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Float8(float(&a[0]).abs()))
}

fn float_sign(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let x = float(&a[0]);
    Ok(Datum::Float8(if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }))
}

fn float_ceil(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Float8(float(&a[0]).ceil()))
}

fn float_floor(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Float8(float(&a[0]).floor()))
}

/// `round(double precision)`: to the nearest integer, ties to even (C's
/// `rint`, as PostgreSQL).
fn float_round(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Float8(float(&a[0]).round_ties_even()))
}

fn float_trunc(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Float8(float(&a[0]).trunc()))
}

fn rounded(a: &[Datum], scale: i32, how: Rounding) -> Result<Datum, SqlError> {
    Ok(Datum::Numeric(numeric::round_to(
        &numeric_text(&a[0]),
        scale,
        how,
    )?))
}

fn numeric_ceil(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    rounded(a, 0, Rounding::Up)
}

fn numeric_floor(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    rounded(a, 0, Rounding::Down)
}

fn numeric_round(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    rounded(a, 0, Rounding::HalfAwayFromZero)
}

fn numeric_trunc(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    rounded(a, 0, Rounding::TowardZero)
}

fn scale_arg(d: &Datum) -> i32 {
    d.as_i64()
        .unwrap_or(0)
        .clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

fn numeric_round_to(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    rounded(a, scale_arg(&a[1]), Rounding::HalfAwayFromZero)
}

fn numeric_trunc_to(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    rounded(a, scale_arg(&a[1]), Rounding::TowardZero)
}

fn numeric_abs(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let text = numeric_text(&a[0]);
    Ok(Datum::Numeric(
        text.strip_prefix('-').map(str::to_string).unwrap_or(text),
    ))
}

fn gcd_lcm(a: &[Datum], lcm: bool) -> Result<Datum, SqlError> {
    Ok(Datum::Numeric(numeric::gcd_lcm(
        &numeric_text(&a[0]),
        &numeric_text(&a[1]),
        lcm,
    )?))
}

fn int_mod(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let divisor = a[1].as_i64().unwrap_or(0);
    if divisor == 0 {
        return Err(division_by_zero());
    }
    let value = a[0].as_i64().unwrap_or(0);
    int_datum(Some(value.checked_rem(divisor).unwrap_or(0)), &call.result)
}

fn int_abs(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    int_datum(a[0].as_i64().unwrap_or(0).checked_abs(), &call.result)
}

fn int_gcd(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (mut x, mut y) = (
        i128::from(a[0].as_i64().unwrap_or(0)),
        i128::from(a[1].as_i64().unwrap_or(0)),
    );
    while y != 0 {
        (x, y) = (y, x % y);
    }
    int_datum(i64::try_from(x.abs()).ok(), &call.result)
}

fn int_lcm(a: &[Datum], call: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    let (x, y) = (
        i128::from(a[0].as_i64().unwrap_or(0)),
        i128::from(a[1].as_i64().unwrap_or(0)),
    );
    if x == 0 || y == 0 {
        return int_datum(Some(0), &call.result);
    }
    let gcd = int_gcd(a, call, env)?.as_i64().map_or(1, i128::from);
    int_datum(i64::try_from((x / gcd * y).abs()).ok(), &call.result)
}

fn numeric_power(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Numeric(transcendental::power(
        &numeric_text(&a[0]),
        &numeric_text(&a[1]),
    )?))
}

/// A uniformly distributed value in [0, 1).
fn rand_float() -> f64 {
    let bytes = uuid::Uuid::new_v4().into_bytes();
    let bits = u64::from_le_bytes(bytes[..8].try_into().unwrap_or_default()) >> 11;
    bits as f64 / (1u64 << 53) as f64
}
