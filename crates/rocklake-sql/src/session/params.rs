//! Bind parameters (`$1`, `$2`, ...) of the extended query protocol.
//!
//! At Execute, each `$n` of the parsed statement is replaced by its bound
//! value as an SQL literal before the statement is bound and run: a value of
//! a declared (or, in binary format, inferred) type becomes a constant of that
//! type, a value of unknown type an untyped string literal, which the binder
//! resolves from its context exactly as PostgreSQL resolves an unknown-typed
//! parameter (`WHERE id = $1` parses the text as `id`'s type). At Parse, the
//! statement is bound with the parameters as placeholders of unknown value,
//! and the types they are coerced to are the types Describe reports.

use std::ops::ControlFlow;

use sqlparser::ast::{
    CastKind, DataType, Expr, Statement, UnaryOperator, Value, VisitMut, VisitorMut,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

use rocklake_types::datum::PgType;
use rocklake_types::params::BindParam;
use rocklake_types::value::binary::read_value;
use rocklake_types::value::text::format_text;
use rocklake_types::{SqlError, SqlState};

use crate::plan::params::{no_parameter, placeholder_index};

/// The SQL spelling of a type, as the parser reads it back.
fn type_sql(pg_type: &PgType) -> String {
    match pg_type {
        PgType::Numeric(Some((p, s))) => format!("numeric({p},{s})"),
        PgType::Array(element) => format!("{}[]", type_sql(element)),
        PgType::Char => "\"char\"".to_string(),
        other => other.type_name().to_string(),
    }
}

fn data_type(pg_type: &PgType) -> Result<DataType, SqlError> {
    let text = type_sql(pg_type);
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&text)
        .and_then(|mut p| p.parse_data_type())
        .map_err(|e| SqlError::internal(format!("type {text} does not parse: {e}")))
}

fn string_literal(text: String) -> Expr {
    Expr::Value(Value::SingleQuotedString(text).into())
}

/// The value of parameter `$n` as an SQL expression.
fn literal(param: &BindParam, n: usize) -> Result<Expr, SqlError> {
    let pg_type = match param.type_oid {
        0 => None,
        oid => Some(PgType::from_oid(oid).ok_or_else(|| {
            SqlError::unsupported(format!(
                "parameter ${n} has type oid {oid}, which RockLake does not support"
            ))
        })?),
    };
    let text = match (&param.value, &pg_type) {
        (None, _) => None,
        (Some(bytes), Some(t)) if param.binary => format_text(&read_value(t, bytes)?),
        (Some(_), None) if param.binary => {
            return Err(SqlError::new(
                SqlState::PROTOCOL_VIOLATION,
                format!("binary value for parameter ${n} of unknown type"),
            ))
        }
        (Some(bytes), _) => Some(String::from_utf8(bytes.clone()).map_err(|_| {
            SqlError::new(
                SqlState::CHARACTER_NOT_IN_REPERTOIRE,
                format!("invalid byte sequence for encoding \"UTF8\" in parameter ${n}"),
            )
        })?),
    };
    let Some(pg_type) = pg_type else {
        return Ok(match text {
            None => Expr::Value(Value::Null.into()),
            Some(text) => string_literal(text),
        });
    };
    let value = match text {
        None => Expr::Value(Value::Null.into()),
        Some(text) => match pg_type {
            PgType::Int2 | PgType::Int4 | PgType::Int8 if text.parse::<i64>().is_ok() => {
                match text.strip_prefix('-') {
                    Some(digits) => Expr::UnaryOp {
                        op: UnaryOperator::Minus,
                        expr: Box::new(Expr::Value(Value::Number(digits.into(), false).into())),
                    },
                    None => Expr::Value(Value::Number(text, false).into()),
                }
            }
            _ => string_literal(text),
        },
    };
    Ok(Expr::Cast {
        kind: CastKind::DoubleColon,
        expr: Box::new(value),
        data_type: data_type(&pg_type)?,
        format: None,
    })
}

/// Replaces each `$n` of `statement` by the value of `params[n - 1]`.
pub(crate) fn substitute(statement: &mut Statement, params: &[BindParam]) -> Result<(), SqlError> {
    struct Substitute<'p> {
        params: &'p [BindParam],
    }
    impl VisitorMut for Substitute<'_> {
        type Break = SqlError;
        fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<SqlError> {
            let Expr::Value(value) = expr else {
                return ControlFlow::Continue(());
            };
            let Value::Placeholder(text) = &value.value else {
                return ControlFlow::Continue(());
            };
            let replaced = placeholder_index(text).and_then(|n| {
                let param = self.params.get(n - 1).ok_or_else(|| no_parameter(n))?;
                literal(param, n)
            });
            match replaced {
                Ok(literal) => {
                    *expr = literal;
                    ControlFlow::Continue(())
                }
                Err(error) => ControlFlow::Break(error),
            }
        }
    }
    match statement.visit(&mut Substitute { params }) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(error) => Err(error),
    }
}

/// The highest `$n` in `statement` (0 if none).
pub(crate) fn count(statement: &mut Statement) -> Result<usize, SqlError> {
    struct Count(usize);
    impl VisitorMut for Count {
        type Break = SqlError;
        fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<SqlError> {
            if let Expr::Value(value) = expr {
                if let Value::Placeholder(text) = &value.value {
                    match placeholder_index(text) {
                        Ok(n) => self.0 = self.0.max(n),
                        Err(error) => return ControlFlow::Break(error),
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut counter = Count(0);
    match statement.visit(&mut counter) {
        ControlFlow::Continue(()) => Ok(counter.0),
        ControlFlow::Break(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(oid: u32, text: &str) -> BindParam {
        BindParam {
            type_oid: oid,
            binary: false,
            value: Some(text.as_bytes().to_vec()),
        }
    }

    /// Text values of a declared type go through the type's input (as a
    /// cast of the text), so every spelling PostgreSQL accepts works.
    #[test]
    fn typed_text_values_are_casts_of_their_text() {
        let bool_oid = PgType::Bool.oid();
        let expr = literal(&param(bool_oid, "1"), 1).unwrap();
        assert_eq!(expr.to_string(), "'1'::BOOL");
        let expr = literal(&param(PgType::Int8.oid(), "-5"), 1).unwrap();
        assert_eq!(expr.to_string(), "-5::INT8");
        let untyped = literal(&param(0, "x'y"), 1).unwrap();
        assert_eq!(untyped.to_string(), "'x''y'");
        let null = literal(
            &BindParam {
                type_oid: 0,
                binary: false,
                value: None,
            },
            1,
        )
        .unwrap();
        assert_eq!(null.to_string(), "NULL");
    }
}
