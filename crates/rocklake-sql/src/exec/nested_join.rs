//! Joins whose right rows depend on the left row: each left row gets its
//! own right rows from a [`RightRows`] source (a virtual table's rows for
//! the left row's key, a LATERAL subquery's rows for the left row), and is
//! combined with those that satisfy the join condition; a left join keeps
//! a left row no right row matched, NULL-extended.

use std::borrow::Cow;
use std::sync::Arc;

use rocklake_types::datum::{Datum, Row};
use rocklake_types::SqlError;

use crate::exec::context::ExecCtx;
use crate::exec::join::{combined, null_extended, JoinCondition};
use crate::exec::stream::{RowCow, RowStream, Stream};
use crate::plan::{BExpr, JoinKind};

/// Where a nested join's right rows come from.
pub(crate) trait RightRows: Send {
    /// The right rows for `left` (perhaps more: the join condition picks).
    fn rows_for(&mut self, left: &[Datum]) -> Result<Arc<Vec<Row>>, SqlError>;
}

/// What a nested join combines and how: kind (inner or left), condition,
/// and the width of the right rows.
pub(crate) type NestedSpec<'a> = (JoinKind, Option<&'a BExpr>, usize);

/// An inner or left join of a stream with right rows per left row.
pub(crate) struct NestedJoin<'a, R: RightRows> {
    left: Stream<'a>,
    right: R,
    kind: JoinKind,
    condition: JoinCondition<'a>,
    right_width: usize,
    outer: Vec<&'a [Datum]>,
    ctx: &'a ExecCtx<'a>,
    /// The left row being joined, its right rows, how far through them,
    /// and whether one matched.
    current: Option<(RowCow<'a>, Arc<Vec<Row>>, usize, bool)>,
}

impl<'a, R: RightRows> NestedJoin<'a, R> {
    /// A join of `left` with `right`'s rows for each left row.
    pub(crate) fn new(
        left: Stream<'a>,
        right: R,
        (kind, on, right_width): NestedSpec<'a>,
        outer: Vec<&'a [Datum]>,
        ctx: &'a ExecCtx<'a>,
    ) -> Self {
        NestedJoin {
            left,
            right,
            kind,
            condition: JoinCondition::new(on),
            right_width,
            outer,
            ctx,
            current: None,
        }
    }
}

impl<'a, R: RightRows> RowStream<'a> for NestedJoin<'a, R> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        loop {
            if self.current.is_none() {
                let Some(left) = self.left.next()? else {
                    return Ok(None);
                };
                let rows = self.right.rows_for(&left)?;
                self.current = Some((left, rows, 0, false));
            }
            let (left, rows, position, matched) = self.current.as_mut().expect("set above");
            while *position < rows.len() {
                let right = &rows[*position];
                *position += 1;
                if !self.condition.holds(left, right, &self.outer, self.ctx)? {
                    continue;
                }
                *matched = true;
                // The last right row matched: the left row moves into it.
                if *position == rows.len() {
                    let (left, rows, ..) = self.current.take().expect("set above");
                    return Ok(Some(Cow::Owned(combined(left, &rows[rows.len() - 1]))));
                }
                return Ok(Some(Cow::Owned(combined(Cow::Borrowed(left), right))));
            }
            let (left, _, _, matched) = self.current.take().expect("set above");
            if !matched && self.kind == JoinKind::Left {
                return Ok(Some(Cow::Owned(null_extended(left, self.right_width))));
            }
        }
    }
}
