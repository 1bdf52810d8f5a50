//! The number operators: `+ - * / %` over every pair of integer widths,
//! `real`, `double precision` and `numeric` that PostgreSQL has, the
//! bitwise operators of the integers, and the prefix `-`, `+`, `@`, `~`.
//! Each checks for overflow as PostgreSQL does ("integer out of range",
//! "value out of range: overflow", "division by zero").

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::numeric;
use rocklake_types::{SqlError, SqlState};

use super::def::types::*;
use super::def::Library;
use crate::plan::{CallEnv, CallInfo};

/// Registers the number operators.
pub(super) fn register(lib: &mut Library) {
    let ints = [INT2, INT4, INT8];
    for left in &ints {
        for right in &ints {
            let result = wider(left, right);
            lib.infix("+", left.clone(), right.clone(), result.clone(), int_add);
            lib.infix("-", left.clone(), right.clone(), result.clone(), int_sub);
            lib.infix("*", left.clone(), right.clone(), result.clone(), int_mul);
            lib.infix("/", left.clone(), right.clone(), result, int_div);
        }
        lib.infix("%", left.clone(), left.clone(), left.clone(), int_mod);
        lib.infix("&", left.clone(), left.clone(), left.clone(), int_and);
        lib.infix("|", left.clone(), left.clone(), left.clone(), int_or);
        lib.infix("#", left.clone(), left.clone(), left.clone(), int_xor);
        lib.infix("<<", left.clone(), INT4, left.clone(), int_shl);
        lib.infix(">>", left.clone(), INT4, left.clone(), int_shr);
        lib.prefix("-", left.clone(), left.clone(), int_neg);
        lib.prefix("+", left.clone(), left.clone(), same);
        lib.prefix("@", left.clone(), left.clone(), int_abs);
        lib.prefix("~", left.clone(), left.clone(), int_not);
    }
    let floats = [FLOAT4, FLOAT8];
    for left in &floats {
        for right in &floats {
            let result = if *left == FLOAT4 && *right == FLOAT4 {
                FLOAT4
            } else {
                FLOAT8
            };
            lib.infix("+", left.clone(), right.clone(), result.clone(), float_add);
            lib.infix("-", left.clone(), right.clone(), result.clone(), float_sub);
            lib.infix("*", left.clone(), right.clone(), result.clone(), float_mul);
            lib.infix("/", left.clone(), right.clone(), result, float_div);
        }
        lib.prefix("-", left.clone(), left.clone(), float_neg);
        lib.prefix("+", left.clone(), left.clone(), same);
        lib.prefix("@", left.clone(), left.clone(), float_abs);
    }
    lib.infix("+", NUMERIC, NUMERIC, NUMERIC, numeric_add);
    lib.infix("-", NUMERIC, NUMERIC, NUMERIC, numeric_sub);
    lib.infix("*", NUMERIC, NUMERIC, NUMERIC, numeric_mul);
    lib.infix("/", NUMERIC, NUMERIC, NUMERIC, numeric_div);
    lib.infix("%", NUMERIC, NUMERIC, NUMERIC, numeric_mod);
    lib.prefix("-", NUMERIC, NUMERIC, numeric_neg);
    lib.prefix("+", NUMERIC, NUMERIC, same);
    lib.prefix("@", NUMERIC, NUMERIC, numeric_abs);
}

fn width(t: &PgType) -> u8 {
    match t {
        PgType::Int2 => 2,
        PgType::Int4 => 4,
        _ => 8,
    }
}

fn wider(a: &PgType, b: &PgType) -> PgType {
    if width(a) >= width(b) {
        a.clone()
    } else {
        b.clone()
    }
}

fn same(args: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(args[0].clone())
}

/// PostgreSQL's "integer out of range" for the type of `t`.
pub(super) fn out_of_range(t: &PgType) -> SqlError {
    let name = match t {
        PgType::Int2 => "smallint",
        PgType::Int4 => "integer",
        _ => "bigint",
    };
    SqlError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("{name} out of range"),
    )
}

pub(super) fn division_by_zero() -> SqlError {
    SqlError::new(SqlState::DIVISION_BY_ZERO, "division by zero")
}

/// An integer argument.
fn int(d: &Datum) -> i64 {
    d.as_i64().unwrap_or(0)
}

/// `value` as a datum of the integer type `t`, if it fits.
pub(super) fn int_datum(value: Option<i64>, t: &PgType) -> Result<Datum, SqlError> {
    let value = value.ok_or_else(|| out_of_range(t))?;
    Ok(match t {
        PgType::Int2 => Datum::Int2(i16::try_from(value).map_err(|_| out_of_range(t))?),
        PgType::Int4 => Datum::Int4(i32::try_from(value).map_err(|_| out_of_range(t))?),
        _ => Datum::Int8(value),
    })
}

fn int_add(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    int_datum(int(&a[0]).checked_add(int(&a[1])), &call.result)
}

fn int_sub(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    int_datum(int(&a[0]).checked_sub(int(&a[1])), &call.result)
}

fn int_mul(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    int_datum(int(&a[0]).checked_mul(int(&a[1])), &call.result)
}

fn int_div(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let divisor = int(&a[1]);
    if divisor == 0 {
        return Err(division_by_zero());
    }
    int_datum(int(&a[0]).checked_div(divisor), &call.result)
}

fn int_mod(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let divisor = int(&a[1]);
    if divisor == 0 {
        return Err(division_by_zero());
    }
    // The smallest value % -1 is 0, not an overflow.
    int_datum(
        Some(int(&a[0]).checked_rem(divisor).unwrap_or(0)),
        &call.result,
    )
}

fn int_and(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    int_datum(Some(int(&a[0]) & int(&a[1])), &call.result)
}

fn int_or(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    int_datum(Some(int(&a[0]) | int(&a[1])), &call.result)
}

fn int_xor(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    int_datum(Some(int(&a[0]) ^ int(&a[1])), &call.result)
}

/// `x << n` as PostgreSQL computes it in C: `smallint` and `integer` in
/// 32 bits (a `smallint` result truncated to 16), `bigint` in 64, the
/// shift count taken modulo that width as x86 does.
fn int_shl(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let value = int(&a[0]);
    let shift = int(&a[1]) as u32;
    let shifted = match call.result {
        PgType::Int2 => i64::from((value as i32).wrapping_shl(shift) as i16),
        PgType::Int4 => i64::from((value as i32).wrapping_shl(shift)),
        _ => value.wrapping_shl(shift),
    };
    int_datum(Some(shifted), &call.result)
}

fn int_shr(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let value = int(&a[0]);
    let shift = int(&a[1]) as u32;
    let shifted = match call.result {
        PgType::Int2 => i64::from((value as i32).wrapping_shr(shift) as i16),
        PgType::Int4 => i64::from((value as i32).wrapping_shr(shift)),
        _ => value.wrapping_shr(shift),
    };
    int_datum(Some(shifted), &call.result)
}

fn int_neg(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    int_datum(int(&a[0]).checked_neg(), &call.result)
}

fn int_abs(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    int_datum(int(&a[0]).checked_abs(), &call.result)
}

fn int_not(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    int_datum(Some(!int(&a[0])), &call.result)
}

/// A floating-point argument.
fn float(d: &Datum) -> f64 {
    match d {
        Datum::Float4(v) => f64::from(*v),
        Datum::Float8(v) => *v,
        other => other.as_i64().unwrap_or(0) as f64,
    }
}

/// `value` as the float type of `call`, with PostgreSQL's checks: an
/// infinite result of finite inputs overflowed; a zero result is an
/// underflow when `underflowed` says it should not be zero.
fn float_result(
    value: f64,
    inputs: &[f64],
    underflowed: bool,
    call: &CallInfo,
) -> Result<Datum, SqlError> {
    let single = call.result == PgType::Float4;
    let out = if single {
        f64::from(value as f32)
    } else {
        value
    };
    if out.is_infinite() && inputs.iter().all(|v| v.is_finite()) {
        return Err(SqlError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            "value out of range: overflow",
        ));
    }
    if out == 0.0 && underflowed {
        return Err(SqlError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            "value out of range: underflow",
        ));
    }
    Ok(if single {
        Datum::Float4(out as f32)
    } else {
        Datum::Float8(out)
    })
}

fn float_add(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (x, y) = (float(&a[0]), float(&a[1]));
    float_result(x + y, &[x, y], false, call)
}

fn float_sub(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (x, y) = (float(&a[0]), float(&a[1]));
    float_result(x - y, &[x, y], false, call)
}

fn float_mul(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (x, y) = (float(&a[0]), float(&a[1]));
    float_result(x * y, &[x, y], x != 0.0 && y != 0.0, call)
}

fn float_div(a: &[Datum], call: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (x, y) = (float(&a[0]), float(&a[1]));
    if y == 0.0 && !x.is_nan() {
        return Err(division_by_zero());
    }
    float_result(x / y, &[x, y], x != 0.0 && !y.is_infinite(), call)
}

fn float_neg(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(match &a[0] {
        Datum::Float4(v) => Datum::Float4(-v),
        other => Datum::Float8(-float(other)),
    })
}

fn float_abs(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(match &a[0] {
        Datum::Float4(v) => Datum::Float4(v.abs()),
        other => Datum::Float8(float(other).abs()),
    })
}

/// A `numeric` argument's canonical text.
pub(super) fn numeric_text(d: &Datum) -> String {
    match d {
        Datum::Numeric(s) => s.clone(),
        other => other
            .as_i64()
            .map(|v| v.to_string())
            .unwrap_or_else(|| "0".into()),
    }
}

fn numeric_op(a: &[Datum], op: char) -> Result<Datum, SqlError> {
    Ok(Datum::Numeric(numeric::arith(
        &numeric_text(&a[0]),
        &numeric_text(&a[1]),
        op,
    )?))
}

fn numeric_add(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    numeric_op(a, '+')
}

fn numeric_sub(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    numeric_op(a, '-')
}

fn numeric_mul(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    numeric_op(a, '*')
}

fn numeric_div(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    numeric_op(a, '/')
}

fn numeric_mod(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    numeric_op(a, '%')
}

fn numeric_neg(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let text = numeric_text(&a[0]);
    Ok(Datum::Numeric(match text.strip_prefix('-') {
        Some(positive) => positive.to_string(),
        None if text == "NaN" || numeric::is_zero(&text) => text,
        None => format!("-{text}"),
    }))
}

fn numeric_abs(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let text = numeric_text(&a[0]);
    Ok(Datum::Numeric(
        text.strip_prefix('-').map(str::to_string).unwrap_or(text),
    ))
}
