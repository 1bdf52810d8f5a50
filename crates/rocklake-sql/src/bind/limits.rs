//! `LIMIT`, `OFFSET` and `FETCH FIRST ... ONLY`: row counts of a query,
//! constant expressions coerced to `bigint`.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{Expr, Fetch, LimitClause, Query};

use crate::bind::Binder;
use crate::plan::BExpr;

impl Binder<'_> {
    /// The query's LIMIT (or FETCH FIRST) and OFFSET.
    pub(super) fn bind_limits(
        &mut self,
        q: &Query,
    ) -> Result<(Option<BExpr>, Option<BExpr>), SqlError> {
        let (limit, offset) = match &q.limit_clause {
            None => (None, None),
            Some(LimitClause::LimitOffset { limit, offset, .. }) => {
                let l = limit.as_ref().map(|e| self.bind_count(e)).transpose()?;
                let o = offset
                    .as_ref()
                    .map(|o| self.bind_count(&o.value))
                    .transpose()?;
                (l, o)
            }
            Some(LimitClause::OffsetCommaLimit { .. }) => {
                return Err(SqlError::unsupported("LIMIT a, b is not supported"))
            }
        };
        let limit = match &q.fetch {
            None => limit,
            Some(fetch) => Some(self.bind_fetch(fetch, limit.is_some())?),
        };
        Ok((limit, offset))
    }

    /// `FETCH FIRST [n] ROW[S] ONLY`: a LIMIT of `n` (1 without it).
    fn bind_fetch(&mut self, fetch: &Fetch, has_limit: bool) -> Result<BExpr, SqlError> {
        if has_limit {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "multiple LIMIT clauses not allowed",
            ));
        }
        if fetch.percent {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "syntax error at or near \"PERCENT\"",
            ));
        }
        if fetch.with_ties {
            return Err(SqlError::unsupported(
                "FETCH FIRST ... WITH TIES is not supported",
            ));
        }
        match &fetch.quantity {
            Some(quantity) => self.bind_count(quantity),
            None => Ok(BExpr::Const(Datum::Int8(1))),
        }
    }

    /// A row count: the expression as `bigint`.
    fn bind_count(&mut self, e: &Expr) -> Result<BExpr, SqlError> {
        let (b, ty) = self.bind_expr(e)?;
        self.coerce(b, &ty, &PgType::Int8, "LIMIT")
    }
}
