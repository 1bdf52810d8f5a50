//! Binding the `json` operators `->` and `->>` (see `exec/json.rs`):
//! `json -> text` and `json -> int` as in PostgreSQL, its errors for
//! operands of other types.

use rocklake_types::datum::PgType;
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::Expr;

use crate::bind::Binder;
use crate::plan::{BExpr, Func, Ty};

impl Binder<'_> {
    /// `left -> right` (`->>` with `as_text`).
    pub(super) fn bind_json_get(
        &mut self,
        left: &Expr,
        right: &Expr,
        as_text: bool,
    ) -> Result<(BExpr, Ty), SqlError> {
        let op = if as_text { "->>" } else { "->" };
        let (l, lt) = self.bind_expr(left)?;
        let (r, rt) = self.bind_expr(right)?;
        let name = |t: &Ty| {
            t.as_ref()
                .map_or("unknown", PgType::display_name)
                .to_string()
        };
        let key = match &rt {
            None => self.coerce(r, &rt, &PgType::Text, op)?,
            Some(t) if t.is_string() => self.coerce(r, &rt, &PgType::Text, op)?,
            Some(PgType::Int2 | PgType::Int4) => self.coerce(r, &rt, &PgType::Int4, op)?,
            Some(_) => return Err(no_operator(&name(&lt), op, &name(&rt))),
        };
        match &lt {
            Some(PgType::Json) => {}
            // json and jsonb both have it (PostgreSQL: not unique).
            None => {
                return Err(SqlError::new(
                    SqlState::AMBIGUOUS_FUNCTION,
                    format!("operator is not unique: unknown {op} {}", name(&rt)),
                ))
            }
            Some(_) => return Err(no_operator(&name(&lt), op, &name(&rt))),
        }
        let result = if as_text { PgType::Text } else { PgType::Json };
        Ok((
            BExpr::Func(Func::JsonGet { as_text }, vec![l, key]),
            Some(result),
        ))
    }
}

fn no_operator(left: &str, op: &str, right: &str) -> SqlError {
    SqlError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("operator does not exist: {left} {op} {right}"),
    )
}
