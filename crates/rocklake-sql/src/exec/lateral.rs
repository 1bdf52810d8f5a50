//! The right rows of a join of a `LATERAL` subquery
//! ([`crate::plan::FromPlan::Lateral`]): the subquery runs once per left
//! row, with that row as the level above its own (so it reads the columns
//! of the FROM items before it). The rows of one run are held (charged to
//! the statement's budget) while they are joined
//! ([`crate::exec::nested_join`]).

use std::sync::Arc;

use rocklake_types::datum::{Datum, Row};
use rocklake_types::SqlError;

use crate::exec::context::ExecCtx;
use crate::exec::memory::{row_bytes, Reservation};
use crate::exec::nested_join::RightRows;
use crate::plan::QueryPlan;

/// A LATERAL subquery as the right side of a nested join.
pub(crate) struct LateralRows<'a> {
    query: &'a QueryPlan,
    outer: Vec<&'a [Datum]>,
    ctx: &'a ExecCtx<'a>,
    held: Reservation<'a>,
}

impl<'a> LateralRows<'a> {
    /// `query` under the enclosing queries' rows `outer`.
    pub(crate) fn new(query: &'a QueryPlan, outer: Vec<&'a [Datum]>, ctx: &'a ExecCtx<'a>) -> Self {
        LateralRows {
            query,
            outer,
            ctx,
            held: Reservation::new(ctx.budget()),
        }
    }
}

impl RightRows for LateralRows<'_> {
    fn rows_for(&mut self, left: &[Datum]) -> Result<Arc<Vec<Row>>, SqlError> {
        let mut levels = self.outer.clone();
        levels.push(left);
        let rows = self.ctx.run_query(self.query, &levels)?;
        self.held.shrink(usize::MAX);
        self.held
            .grow(rows.iter().map(|row| row_bytes(row)).sum())?;
        Ok(Arc::new(rows))
    }
}
