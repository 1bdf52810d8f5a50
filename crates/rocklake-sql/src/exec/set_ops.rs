//! `INTERSECT [ALL]` and `EXCEPT [ALL]`: the right side is read first and
//! kept as a count per distinct row (its [`row_key`], so values equal by
//! PostgreSQL's equality, NULLs included, are one row), charged to the
//! statement's budget; the left side then streams through, each of its rows
//! kept or dropped by the counts. A row of the left side comes out as it
//! is, in the left side's order: at most once without `ALL`, and with `ALL`
//! min(m, n) times for `INTERSECT` and max(m - n, 0) times for `EXCEPT` (m
//! and n its copies on the left and on the right), as in PostgreSQL.

use std::collections::HashMap;

use rocklake_types::SqlError;

use crate::exec::context::ExecCtx;
use crate::exec::memory::{Reservation, ALLOCATION_OVERHEAD};
use crate::exec::stream::{RowCow, RowStream, Stream};
use crate::plan::SetOperation;
use rocklake_types::value::equality::row_key;

/// The memory one distinct row's count takes.
fn entry_bytes(key: &str) -> usize {
    key.len() + ALLOCATION_OVERHEAD + std::mem::size_of::<(String, usize)>()
}

/// `left INTERSECT [ALL] right` or `left EXCEPT [ALL] right`.
pub(crate) struct IntersectExcept<'a> {
    left: Stream<'a>,
    right: Option<Stream<'a>>,
    intersect: bool,
    all: bool,
    /// For each distinct row of the right side, how many of its copies are
    /// still unmatched; without `ALL`, 0 once the row is settled.
    counts: HashMap<String, usize>,
    held: Reservation<'a>,
    ctx: &'a ExecCtx<'a>,
}

impl<'a> IntersectExcept<'a> {
    /// `op` is [`SetOperation::Intersect`] or [`SetOperation::Except`].
    pub(crate) fn new(
        left: Stream<'a>,
        right: Stream<'a>,
        op: SetOperation,
        all: bool,
        ctx: &'a ExecCtx<'a>,
    ) -> Self {
        IntersectExcept {
            left,
            right: Some(right),
            intersect: op == SetOperation::Intersect,
            all,
            counts: HashMap::new(),
            held: Reservation::new(ctx.budget()),
            ctx,
        }
    }

    /// Counts the rows of the right side.
    fn read_right(&mut self, mut right: Stream<'a>) -> Result<(), SqlError> {
        while let Some(row) = right.next()? {
            self.ctx.tick()?;
            let key = row_key(&row);
            match self.counts.get_mut(&key) {
                Some(count) => *count += 1,
                None => {
                    self.held.grow(entry_bytes(&key))?;
                    self.counts.insert(key, 1);
                }
            }
        }
        Ok(())
    }

    /// Whether a left row of this key comes out (and counts it).
    fn keep(&mut self, key: String) -> Result<bool, SqlError> {
        let count = self.counts.get_mut(&key);
        Ok(match (self.intersect, self.all, count) {
            // A copy on the right to pair it with.
            (true, _, Some(count)) if *count > 0 => {
                *count = if self.all { *count - 1 } else { 0 };
                true
            }
            (true, _, _) => false,
            // EXCEPT ALL: dropped while copies on the right cancel it.
            (false, true, Some(count)) if *count > 0 => {
                *count -= 1;
                false
            }
            (false, true, _) => true,
            // EXCEPT: once, unless the right side has it.
            (false, false, Some(_)) => false,
            (false, false, None) => {
                self.held.grow(entry_bytes(&key))?;
                self.counts.insert(key, 0);
                true
            }
        })
    }
}

impl<'a> RowStream<'a> for IntersectExcept<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        if let Some(right) = self.right.take() {
            self.read_right(right)?;
        }
        while let Some(row) = self.left.next()? {
            self.ctx.tick()?;
            if self.keep(row_key(&row))? {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }
}
