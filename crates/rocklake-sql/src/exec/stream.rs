//! [`RowStream`]: a pipeline stage that produces rows one at a time, and the
//! simple stages: scans, filters, projections, VALUES, unions, DISTINCT,
//! DISTINCT ON's first rows, limits. Joins, grouping and sorting have their
//! own modules.
//!
//! A row is a [`RowCow`]: borrowed in place from a scan where no stage had
//! to build it, owned otherwise.

use std::borrow::Cow;
use std::collections::HashSet;

use rocklake_types::{Datum, PgType, Row, SqlError};

use crate::exec::cast::cast_datum;
use crate::exec::context::{ExecCtx, Scope};
use crate::exec::eval::{eval, eval_pred};
use crate::exec::memory::{row_bytes, HeldRows, Reservation};
use crate::exec::pick::take_columns;
use crate::exec::scan_data::ScanData;
use crate::plan::BExpr;
use rocklake_types::value::equality::{push_hash_key, row_key};

pub(crate) use crate::exec::context::{RowCow, RowStream, Stream};

/// Drains `stream` into owned rows, charging them to the statement's budget
/// (the reservation holds them until it is dropped).
pub(crate) fn collect<'a>(
    mut stream: Stream<'a>,
    ctx: &'a ExecCtx<'a>,
) -> Result<(Vec<Row>, Reservation<'a>), SqlError> {
    let mut rows = HeldRows::new(ctx.budget());
    while let Some(row) = stream.next()? {
        let row = row.into_owned();
        let bytes = row_bytes(&row);
        rows.push(row, bytes)?;
    }
    Ok(rows.into_parts())
}

/// Rows handed out from a vector (a VALUES list already evaluated, a
/// sorted buffer, a materialized result).
pub(crate) struct Buffered<'a> {
    rows: std::vec::IntoIter<RowCow<'a>>,
    _held: Option<Reservation<'a>>,
}

impl<'a> Buffered<'a> {
    /// The rows, with the reservation that pays for them (if any).
    pub(crate) fn new(rows: Vec<RowCow<'a>>, held: Option<Reservation<'a>>) -> Self {
        Buffered {
            rows: rows.into_iter(),
            _held: held,
        }
    }
}

impl<'a> RowStream<'a> for Buffered<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        Ok(self.rows.next())
    }
}

/// The rows of one prefetched scan. In place they are the table's values
/// (stored rows read in place have no `ctid`: the binder asks for owned
/// rows, which carry it, when a statement reads it); `full` gives every row
/// the executor's full layout, `ctid` last, for joins.
pub(crate) struct ScanStream<'a> {
    data: &'a ScanData,
    next: usize,
    full: bool,
    ctx: &'a ExecCtx<'a>,
}

impl<'a> ScanStream<'a> {
    pub(crate) fn new(data: &'a ScanData, full: bool, ctx: &'a ExecCtx<'a>) -> Self {
        ScanStream {
            data,
            next: 0,
            full,
            ctx,
        }
    }
}

impl<'a> RowStream<'a> for ScanStream<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        if self.next >= self.data.len() {
            return Ok(None);
        }
        self.ctx.tick()?;
        let index = self.next;
        self.next += 1;
        Ok(Some(self.data.row(index, self.full)))
    }
}

/// Rows of `input` for which `predicate` is true.
pub(crate) struct Filter<'a> {
    input: Stream<'a>,
    predicate: &'a BExpr,
    outer: Vec<&'a [Datum]>,
    ctx: &'a ExecCtx<'a>,
}

impl<'a> Filter<'a> {
    pub(crate) fn new(
        input: Stream<'a>,
        predicate: &'a BExpr,
        outer: Vec<&'a [Datum]>,
        ctx: &'a ExecCtx<'a>,
    ) -> Self {
        Filter {
            input,
            predicate,
            outer,
            ctx,
        }
    }
}

impl<'a> RowStream<'a> for Filter<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        while let Some(row) = self.input.next()? {
            let scope = Scope {
                outer: &self.outer,
                row: &row,
                tail: &[],
            };
            if eval_pred(self.predicate, self.ctx, scope)? == Some(true) {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }
}

/// The projection of each row of `input`. A projection of plain columns of
/// owned rows moves the values instead of copying them.
pub(crate) struct Project<'a> {
    input: Stream<'a>,
    exprs: &'a [BExpr],
    plain: Option<Vec<usize>>,
    outer: Vec<&'a [Datum]>,
    ctx: &'a ExecCtx<'a>,
}

impl<'a> Project<'a> {
    pub(crate) fn new(
        input: Stream<'a>,
        exprs: &'a [BExpr],
        outer: Vec<&'a [Datum]>,
        ctx: &'a ExecCtx<'a>,
    ) -> Self {
        Project {
            input,
            exprs,
            plain: crate::exec::pick::plain_columns(exprs),
            outer,
            ctx,
        }
    }
}

impl<'a> RowStream<'a> for Project<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        let Some(row) = self.input.next()? else {
            return Ok(None);
        };
        if let (Some(columns), Cow::Owned(values)) = (&self.plain, &row) {
            if columns.iter().all(|&c| c < values.len()) {
                let Cow::Owned(values) = row else {
                    unreachable!("matched above")
                };
                return Ok(Some(Cow::Owned(take_columns(values, columns)?)));
            }
        }
        let scope = Scope {
            outer: &self.outer,
            row: &row,
            tail: &[],
        };
        let mut out = Vec::with_capacity(self.exprs.len());
        for expr in self.exprs {
            out.push(match expr {
                // The common case, a column of the row, without the general
                // evaluator's dispatch.
                BExpr::Col { up: 0, idx } => row
                    .get(*idx)
                    .cloned()
                    .ok_or_else(|| SqlError::internal("bad column index"))?,
                other => eval(other, self.ctx, scope)?,
            });
        }
        Ok(Some(Cow::Owned(out)))
    }
}

/// A VALUES list, each row evaluated when it is pulled.
pub(crate) struct Values<'a> {
    rows: std::slice::Iter<'a, Vec<BExpr>>,
    outer: Vec<&'a [Datum]>,
    ctx: &'a ExecCtx<'a>,
}

impl<'a> Values<'a> {
    pub(crate) fn new(
        rows: &'a [Vec<BExpr>],
        outer: Vec<&'a [Datum]>,
        ctx: &'a ExecCtx<'a>,
    ) -> Self {
        Values {
            rows: rows.iter(),
            outer,
            ctx,
        }
    }
}

impl<'a> RowStream<'a> for Values<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        let Some(exprs) = self.rows.next() else {
            return Ok(None);
        };
        self.ctx.tick()?;
        let scope = Scope {
            outer: &self.outer,
            row: &[],
            tail: &[],
        };
        let mut row = Vec::with_capacity(exprs.len());
        for expr in exprs {
            row.push(eval(expr, self.ctx, scope)?);
        }
        Ok(Some(Cow::Owned(row)))
    }
}

/// The rows of each input in turn, each cast to the union's column types
/// (a `UNION ALL`; DISTINCT is added for `UNION`).
pub(crate) struct Union<'a> {
    inputs: Vec<(Stream<'a>, &'a [Option<PgType>])>,
}

impl<'a> Union<'a> {
    pub(crate) fn new(inputs: Vec<(Stream<'a>, &'a [Option<PgType>])>) -> Self {
        Union { inputs }
    }
}

impl<'a> RowStream<'a> for Union<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        while let Some((input, casts)) = self.inputs.first_mut() {
            let Some(row) = input.next()? else {
                self.inputs.remove(0);
                continue;
            };
            let mut row = row.into_owned();
            for (value, cast) in row.iter_mut().zip(casts.iter()) {
                if let Some(to) = cast {
                    let taken = std::mem::replace(value, Datum::Null);
                    *value = cast_datum(taken, to)?;
                }
            }
            row.truncate(casts.len());
            return Ok(Some(Cow::Owned(row)));
        }
        Ok(None)
    }
}

/// The first of each group of equal rows (SELECT DISTINCT, UNION).
pub(crate) struct Distinct<'a> {
    input: Stream<'a>,
    seen: HashSet<String>,
    held: Reservation<'a>,
}

impl<'a> Distinct<'a> {
    pub(crate) fn new(input: Stream<'a>, ctx: &'a ExecCtx<'a>) -> Self {
        Distinct {
            input,
            seen: HashSet::new(),
            held: Reservation::new(ctx.budget()),
        }
    }
}

impl<'a> RowStream<'a> for Distinct<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        while let Some(row) = self.input.next()? {
            let key = row_key(&row);
            if !self.seen.contains(&key) {
                self.held.grow(key.len() + std::mem::size_of::<String>())?;
                self.seen.insert(key);
                return Ok(Some(row));
            }
        }
        Ok(None)
    }
}

/// The first of each run of rows equal in some columns (SELECT DISTINCT
/// ON, over rows sorted so that equal ones are together). It keeps only the
/// last run's key.
pub(crate) struct FirstOfRuns<'a> {
    input: Stream<'a>,
    columns: &'a [usize],
    last: Option<String>,
}

impl<'a> FirstOfRuns<'a> {
    pub(crate) fn new(input: Stream<'a>, columns: &'a [usize]) -> Self {
        FirstOfRuns {
            input,
            columns,
            last: None,
        }
    }
}

impl<'a> RowStream<'a> for FirstOfRuns<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        while let Some(row) = self.input.next()? {
            let mut key = String::new();
            for &column in self.columns {
                let value = row
                    .get(column)
                    .ok_or_else(|| SqlError::internal("bad column index"))?;
                push_hash_key(value, &mut key);
                key.push('\u{1}');
            }
            if self.last.as_ref() != Some(&key) {
                self.last = Some(key);
                return Ok(Some(row));
            }
        }
        Ok(None)
    }
}

/// OFFSET and LIMIT, then only the visible columns (sorting may have
/// carried hidden ones).
pub(crate) struct Limit<'a> {
    input: Stream<'a>,
    skip: usize,
    left: Option<usize>,
    width: usize,
}

impl<'a> Limit<'a> {
    pub(crate) fn new(
        input: Stream<'a>,
        offset: usize,
        limit: Option<usize>,
        width: usize,
    ) -> Self {
        Limit {
            input,
            skip: offset,
            left: limit,
            width,
        }
    }
}

impl<'a> RowStream<'a> for Limit<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        if self.left == Some(0) {
            return Ok(None);
        }
        while self.skip > 0 {
            if self.input.next()?.is_none() {
                return Ok(None);
            }
            self.skip -= 1;
        }
        let Some(row) = self.input.next()? else {
            return Ok(None);
        };
        if let Some(left) = &mut self.left {
            *left -= 1;
        }
        Ok(Some(if row.len() > self.width {
            let mut row = row.into_owned();
            row.truncate(self.width);
            Cow::Owned(row)
        } else {
            row
        }))
    }
}

/// One empty row: the input of a SELECT without FROM.
pub(crate) struct Single(bool);

impl Single {
    pub(crate) fn new() -> Self {
        Single(false)
    }
}

impl<'a> RowStream<'a> for Single {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        if self.0 {
            return Ok(None);
        }
        self.0 = true;
        Ok(Some(Cow::Borrowed(&[])))
    }
}
