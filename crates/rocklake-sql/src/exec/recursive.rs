//! `WITH RECURSIVE`: the non-recursive term's rows, then the recursive
//! term run over the rows the previous run produced (its working table)
//! until a run produces none. `UNION` drops rows seen before (and stops when
//! only those come back); `UNION ALL` keeps them, so a query that never stops
//! adding rows runs until the statement's memory budget, timeout or a cancel
//! ends it, as in PostgreSQL.

use std::borrow::Cow;
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::{Row, SqlError};

use crate::exec::cast::cast_datum;
use crate::exec::context::ExecCtx;
use crate::exec::memory::{row_bytes, Reservation};
use crate::exec::stream::{collect, RowCow, RowStream, Stream};
use crate::plan::SetPlan;
use rocklake_types::value::equality::row_key;

/// The rows of a recursive CTE, produced one iteration at a time.
pub(crate) struct RecursiveUnion<'a> {
    id: usize,
    step: &'a SetPlan,
    all: bool,
    step_casts: &'a [Option<PgType>],
    outer: Vec<&'a [Datum]>,
    ctx: &'a ExecCtx<'a>,
    /// The base's rows, until the first pull.
    base: Option<&'a SetPlan>,
    /// Rows of the current iteration still to hand out.
    pending: VecDeque<Row>,
    /// The current iteration's rows: the next run's working table.
    produced: Vec<Row>,
    /// Keys of every row produced (UNION only), and what they hold.
    seen: HashSet<String>,
    held: Reservation<'a>,
}

impl<'a> RecursiveUnion<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        id: usize,
        base: &'a SetPlan,
        step: &'a SetPlan,
        all: bool,
        step_casts: &'a [Option<PgType>],
        outer: Vec<&'a [Datum]>,
        ctx: &'a ExecCtx<'a>,
    ) -> Self {
        RecursiveUnion {
            id,
            step,
            all,
            step_casts,
            outer,
            ctx,
            base: Some(base),
            pending: VecDeque::new(),
            produced: Vec::new(),
            seen: HashSet::new(),
            held: Reservation::new(ctx.budget()),
        }
    }

    /// Runs `plan` to the end and keeps its new rows as the current
    /// iteration (cast to the CTE's types when `casts` says so).
    fn run(&mut self, plan: &'a SetPlan, casts: &[Option<PgType>]) -> Result<(), SqlError> {
        let stream: Stream<'a> = self.ctx.set_stream(plan, self.outer.clone())?;
        let (rows, _held) = collect(stream, self.ctx)?;
        for mut row in rows {
            for (value, cast) in row.iter_mut().zip(casts) {
                if let Some(to) = cast {
                    *value = cast_datum(std::mem::replace(value, Datum::Null), to)?;
                }
            }
            if !self.all {
                let key = row_key(&row);
                if self.seen.contains(&key) {
                    continue;
                }
                self.held.grow(key.len() + 48)?;
                self.seen.insert(key);
            }
            self.held.grow(row_bytes(&row))?;
            self.produced.push(row.clone());
            self.pending.push_back(row);
        }
        Ok(())
    }
}

impl<'a> RowStream<'a> for RecursiveUnion<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        loop {
            if let Some(row) = self.pending.pop_front() {
                return Ok(Some(Cow::Owned(row)));
            }
            if let Some(base) = self.base.take() {
                self.run(base, &[])?;
                continue;
            }
            if self.produced.is_empty() {
                return Ok(None);
            }
            self.ctx.tick()?;
            // The last iteration's rows are the step's working table; the
            // memory they held is released as they move there.
            let working = std::mem::take(&mut self.produced);
            let bytes: usize = working.iter().map(|r| row_bytes(r)).sum();
            self.held.shrink(bytes);
            self.ctx.set_work_table(self.id, Arc::new(working));
            self.run(self.step, self.step_casts)?;
        }
    }
}

/// The rows of a recursive CTE's working table.
pub(crate) struct WorkTableScan<'a> {
    rows: Arc<Vec<Row>>,
    next: usize,
    _ctx: &'a ExecCtx<'a>,
}

impl<'a> WorkTableScan<'a> {
    pub(crate) fn new(id: usize, ctx: &'a ExecCtx<'a>) -> Self {
        WorkTableScan {
            rows: ctx.work_table(id),
            next: 0,
            _ctx: ctx,
        }
    }
}

impl<'a> RowStream<'a> for WorkTableScan<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        let Some(row) = self.rows.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        Ok(Some(Cow::Owned(row.clone())))
    }
}
