//! Arithmetic operators with PostgreSQL's overflow and division-by-zero errors.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::numeric;
use rocklake_types::{SqlError, SqlState};

use crate::exec::cast::{int_to, range_err, text_of};
use crate::exec::compare::{numeric_text, to_f64};

fn int_width(d: &Datum) -> Option<u8> {
    match d {
        Datum::Int2(_) => Some(2),
        Datum::Int4(_) => Some(4),
        Datum::Int8(_) => Some(8),
        _ => None,
    }
}
/// Binary arithmetic with PostgreSQL's overflow and division-by-zero errors.
pub fn arith(op: char, a: &Datum, b: &Datum) -> Result<Datum, SqlError> {
    if a.is_null() || b.is_null() {
        return Ok(Datum::Null);
    }
    let div0 = || SqlError::new(SqlState::DIVISION_BY_ZERO, "division by zero");
    if let (Some(wa), Some(wb)) = (int_width(a), int_width(b)) {
        let (x, y) = (a.as_i64().unwrap_or(0), b.as_i64().unwrap_or(0));
        let ty = match wa.max(wb) {
            2 => PgType::Int2,
            4 => PgType::Int4,
            _ => PgType::Int8,
        };
        if (op == '/' || op == '%') && y == 0 {
            return Err(div0());
        }
        let r = match op {
            '+' => x.checked_add(y),
            '-' => x.checked_sub(y),
            '*' => x.checked_mul(y),
            '/' => x.checked_div(y),
            '%' => x.checked_rem(y),
            '&' => Some(x & y),
            '|' => Some(x | y),
            '#' => Some(x ^ y),
            _ => None,
        }
        .ok_or_else(|| range_err(&ty))?;
        return int_to(r, &ty).map_err(|_| range_err(&ty));
    }
    let is_float = |d: &Datum| matches!(d, Datum::Float4(_) | Datum::Float8(_));
    if is_float(a) || is_float(b) {
        let (x, y) = match (to_f64(a), to_f64(b)) {
            (Some(x), Some(y)) => (x, y),
            _ => return Err(no_operator(op, a, b)),
        };
        if (op == '/' || op == '%') && y == 0.0 {
            return Err(div0());
        }
        let r = match op {
            '+' => x + y,
            '-' => x - y,
            '*' => x * y,
            '/' => x / y,
            _ => x % y,
        };
        if r.is_infinite() && x.is_finite() && y.is_finite() {
            return Err(SqlError::new(
                SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                "value out of range: overflow",
            ));
        }
        let both4 = matches!(a, Datum::Float4(_)) && matches!(b, Datum::Float4(_));
        return Ok(if both4 {
            Datum::Float4(r as f32)
        } else {
            Datum::Float8(r)
        });
    }
    match (numeric_text(a), numeric_text(b)) {
        (Some(x), Some(y)) => Ok(Datum::Numeric(numeric::arith(&x, &y, op)?)),
        _ => Err(no_operator(op, a, b)),
    }
}
fn no_operator(op: char, a: &Datum, b: &Datum) -> SqlError {
    SqlError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!(
            "operator does not exist for values {} {op} {}",
            text_of(a).unwrap_or_default(),
            text_of(b).unwrap_or_default()
        ),
    )
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::cast::cast_datum;
    use crate::exec::functions::like;

    #[test]
    fn casts_and_arithmetic() {
        assert_eq!(
            cast_datum(Datum::Text("t".into()), &PgType::Bool).unwrap(),
            Datum::Bool(true)
        );
        assert_eq!(
            cast_datum(Datum::Bool(true), &PgType::Varchar).unwrap(),
            Datum::Text("true".into())
        );
        assert_eq!(
            cast_datum(Datum::Int8(70000), &PgType::Int2)
                .unwrap_err()
                .code,
            "22003"
        );
        assert_eq!(
            cast_datum(Datum::Numeric("2.5".into()), &PgType::Int4).unwrap(),
            Datum::Int4(3)
        );
        assert_eq!(
            arith('+', &Datum::Int4(i32::MAX), &Datum::Int4(1))
                .unwrap_err()
                .code,
            "22003"
        );
        assert_eq!(
            arith('/', &Datum::Int8(1), &Datum::Int8(0))
                .unwrap_err()
                .code,
            "22012"
        );
        assert_eq!(
            arith('*', &Datum::Int2(3), &Datum::Int8(4)).unwrap(),
            Datum::Int8(12)
        );
        assert!(like("rds_x", "rds%", Some('\\')));
        assert!(!like("server_version", "rds%", Some('\\')));
        assert!(like("a_c", "a\\_c", Some('\\')));
    }
}
