//! What an operator runs in: the statement's environment ([`StmtEnv`]),
//! its bounds ([`Limits`]), the context of one execution ([`ExecCtx`]:
//! prefetched scans, the catalog, kept subquery results) and the rows an
//! expression reads ([`Scope`]), and the stage every operator is
//! ([`RowStream`]). Operators import this, never the pipeline builder
//! ([`super::select`]): nested queries (subqueries, LATERAL, recursive CTE
//! steps) run through the [`Pipelines`] the builder installs in [`ExecCtx`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use rocklake_types::{Datum, Interrupt, Row, SqlError};

use super::memory::MemoryBudget;
use super::scan_data::ScanData;
use crate::catalog::Catalog;
use crate::plan::{QueryPlan, SetPlan, SubPlan};

/// Statement context: the transaction's catalog snapshot, NOW(), the
/// session's pid, and what bounds the statement.
pub struct StmtEnv<'a> {
    /// Catalog snapshot.
    pub cat: &'a Catalog,
    /// Transaction timestamp.
    pub now: i64,
    /// Backend pid.
    pub pid: i32,
    /// Memory budget and interrupt of the statement.
    pub limits: Limits<'a>,
    /// Whether the transaction is read-only (it refuses row locks).
    pub read_only: bool,
}

/// What bounds one statement's execution.
#[derive(Clone, Copy)]
pub struct Limits<'a> {
    /// The memory the statement may hold in kept rows.
    pub budget: &'a MemoryBudget,
    /// Cancel, timeout, shutdown and client-gone signals; `None` for none.
    pub interrupt: Option<&'a Interrupt>,
}

impl Limits<'_> {
    /// Fails with the statement's stop error when it must stop.
    pub fn check(&self) -> Result<(), SqlError> {
        match self.interrupt {
            Some(interrupt) => interrupt.check(),
            None => Ok(()),
        }
    }

    /// Runs `write`, a write that may wait for another transaction (an
    /// insert waits for one that inserted the same unique key), and ends it
    /// with the statement's stop error when the statement must stop first.
    pub async fn unless_stopped<T>(
        &self,
        write: impl std::future::Future<Output = Result<T, SqlError>>,
    ) -> Result<T, SqlError> {
        match self.interrupt {
            Some(interrupt) => tokio::select! {
                done = write => done,
                stopped = interrupt.stopped() => Err(stopped),
            },
            None => write.await,
        }
    }
}

/// How many rows pass between interrupt checks.
const ROWS_PER_CHECK: u32 = 256;

/// Everything execution needs besides the plan.
pub struct ExecCtx<'a> {
    /// Rows of each scan of the statement.
    pub data: &'a [ScanData],
    /// Catalog snapshot (for to_regclass).
    pub catalog: &'a Catalog,
    /// The statement's bounds.
    pub limits: Limits<'a>,
    /// Results of uncorrelated subqueries, by subquery id.
    cache: Mutex<HashMap<usize, Arc<Vec<Row>>>>,
    /// The rows each recursive CTE's last iteration produced, by CTE id.
    work_tables: Mutex<HashMap<usize, Arc<Vec<Row>>>>,
    ticks: AtomicU32,
    /// Builds nested pipelines (installed by the pipeline builder).
    pipelines: Pipelines,
}

/// One row flowing through a pipeline.
pub(crate) type RowCow<'a> = Cow<'a, [Datum]>;

/// A stage of a query pipeline.
pub(crate) trait RowStream<'a>: Send {
    /// The next row, or `None` when there are no more.
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError>;
}

/// A boxed stage.
pub(crate) type Stream<'a> = Box<dyn RowStream<'a> + 'a>;

/// The rows of the enclosing query levels, outermost first.
pub type OuterRows<'s> = [&'s [Datum]];

/// Runs a subquery of an expression.
pub type SubqueryFn = fn(&SubPlan, &ExecCtx<'_>, &OuterRows<'_>) -> Result<Arc<Vec<Row>>, SqlError>;

/// Runs a query to the end.
pub type QueryFn = fn(&QueryPlan, &ExecCtx<'_>, &OuterRows<'_>) -> Result<Vec<Row>, SqlError>;

/// Builds the pipeline of a set expression.
pub(crate) type SetStreamFn =
    for<'p> fn(&'p SetPlan, &'p ExecCtx<'p>, Vec<&'p [Datum]>) -> Result<Stream<'p>, SqlError>;

/// The pipeline builder's entry points, through which operators run the
/// queries nested in them; each takes the rows of the enclosing query
/// levels.
#[derive(Clone, Copy)]
pub struct Pipelines {
    /// Runs a subquery of an expression (kept when uncorrelated).
    pub subquery: SubqueryFn,
    /// Runs a query to the end (a LATERAL subquery for one left row).
    pub query: QueryFn,
    /// Builds the pipeline of a set expression (a recursive CTE's step).
    pub(crate) set: SetStreamFn,
}

impl<'a> ExecCtx<'a> {
    /// A context over prefetched scan data whose nested queries run
    /// through `pipelines`.
    pub fn with_pipelines(
        data: &'a [ScanData],
        catalog: &'a Catalog,
        limits: Limits<'a>,
        pipelines: Pipelines,
    ) -> Self {
        ExecCtx {
            data,
            catalog,
            limits,
            cache: Mutex::new(HashMap::new()),
            work_tables: Mutex::new(HashMap::new()),
            ticks: AtomicU32::new(0),
            pipelines,
        }
    }

    /// Runs subquery `sub` with `outer` as the rows of its enclosing query
    /// levels.
    pub fn run_subquery(
        &self,
        sub: &SubPlan,
        outer: &[&[Datum]],
    ) -> Result<Arc<Vec<Row>>, SqlError> {
        (self.pipelines.subquery)(sub, self, outer)
    }

    /// Runs `plan` to the end with `outer` as the rows of its enclosing
    /// query levels.
    pub fn run_query(&self, plan: &QueryPlan, outer: &[&[Datum]]) -> Result<Vec<Row>, SqlError> {
        (self.pipelines.query)(plan, self, outer)
    }

    /// The pipeline of set expression `plan`.
    pub(crate) fn set_stream(
        &'a self,
        plan: &'a SetPlan,
        outer: Vec<&'a [Datum]>,
    ) -> Result<Stream<'a>, SqlError> {
        (self.pipelines.set)(plan, self, outer)
    }

    /// The owned rows prefetched for scan `index` (the size scans).
    pub fn scan_rows(&self, index: usize) -> Result<&'a [Row], SqlError> {
        match self.data.get(index) {
            Some(ScanData::Owned(rows)) => Ok(rows),
            _ => Err(SqlError::internal(format!(
                "scan {index} was not prefetched"
            ))),
        }
    }

    /// Counts one row of work; every [`ROWS_PER_CHECK`] rows, fails when
    /// the statement must stop.
    pub fn tick(&self) -> Result<(), SqlError> {
        if self
            .ticks
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(ROWS_PER_CHECK)
        {
            self.limits.check()?;
        }
        Ok(())
    }

    /// The memory budget of the statement.
    pub fn budget(&self) -> &'a MemoryBudget {
        self.limits.budget
    }

    pub(crate) fn cached(&self, id: usize) -> Option<Arc<Vec<Row>>> {
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned()
    }

    /// Makes `rows` the working table of the recursive CTE `id`.
    pub(crate) fn set_work_table(&self, id: usize, rows: Arc<Vec<Row>>) {
        self.work_tables
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, rows);
    }

    /// The working table of the recursive CTE `id`.
    pub(crate) fn work_table(&self, id: usize) -> Arc<Vec<Row>> {
        self.work_tables
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned()
            .unwrap_or_default()
    }

    pub(crate) fn keep(&self, id: usize, rows: Arc<Vec<Row>>) {
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, rows);
    }
}

/// The rows an expression reads: the current row (`up = 0`) and the rows
/// of the enclosing query levels (`up = 1` is the innermost of them).
#[derive(Clone, Copy)]
pub struct Scope<'s> {
    /// Rows of the enclosing query levels, outermost first.
    pub outer: &'s [&'s [Datum]],
    /// The current row.
    pub row: &'s [Datum],
    /// Columns of the current row after `row`'s: a join's right row while
    /// its condition is checked, before the two are copied into one row
    /// (empty otherwise; never set for a condition holding a subquery,
    /// which reads the row whole).
    pub tail: &'s [Datum],
}

impl<'s> Scope<'s> {
    /// The current row alone, at the top level.
    pub fn top(row: &'s [Datum]) -> Self {
        Scope {
            outer: &[],
            row,
            tail: &[],
        }
    }

    /// The value of column `idx` of the row `up` levels out.
    pub fn column(&self, up: usize, idx: usize) -> Result<&'s Datum, SqlError> {
        let row = if up == 0 {
            if idx >= self.row.len() && !self.tail.is_empty() {
                return self
                    .tail
                    .get(idx - self.row.len())
                    .ok_or_else(|| SqlError::internal("bad column index"));
            }
            self.row
        } else {
            self.outer
                .get(self.outer.len().wrapping_sub(up))
                .ok_or_else(|| SqlError::internal("bad column level"))?
        };
        row.get(idx)
            .ok_or_else(|| SqlError::internal("bad column index"))
    }

    /// The enclosing rows of a query nested in this scope (a subquery, or a
    /// derived table whose level's row is empty).
    pub fn nested(&self) -> Vec<&'s [Datum]> {
        debug_assert!(self.tail.is_empty(), "a split row read whole");
        let mut outer = Vec::with_capacity(self.outer.len() + 1);
        outer.extend_from_slice(self.outer);
        outer.push(self.row);
        outer
    }
}
