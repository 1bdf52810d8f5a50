//! Window functions: the SELECT's rows are read whole (charged to the
//! statement's budget), each window call's values computed per partition in
//! its order (aggregates, `first_value` and `last_value` over each row's
//! frame, see [`crate::exec::frames`]), and appended to the rows as columns
//! the projection reads.

use std::borrow::Cow;
use std::cmp::Ordering;

use rocklake_types::datum::{Datum, Row};
use rocklake_types::{SqlError, SqlState};

use crate::exec::compare::compare;
use crate::exec::context::{ExecCtx, Scope};
use crate::exec::eval::eval;
use crate::exec::frames::{aggregate_frames, Frame, Peers};
use crate::exec::memory::{row_bytes, Reservation};
use crate::exec::stream::{Buffered, RowCow, RowStream, Stream};
use crate::plan::{WindowCall, WindowFunc};

/// The rows of `input`, each with one more column per window call.
pub(crate) struct Window<'a> {
    input: Option<Stream<'a>>,
    calls: &'a [WindowCall],
    outer: Vec<&'a [Datum]>,
    ctx: &'a ExecCtx<'a>,
    rows: Option<Buffered<'a>>,
}

impl<'a> Window<'a> {
    pub(crate) fn new(
        input: Stream<'a>,
        calls: &'a [WindowCall],
        outer: Vec<&'a [Datum]>,
        ctx: &'a ExecCtx<'a>,
    ) -> Self {
        Window {
            input: Some(input),
            calls,
            outer,
            ctx,
            rows: None,
        }
    }

    fn compute_all(&self, mut input: Stream<'a>) -> Result<Buffered<'a>, SqlError> {
        let mut held = Reservation::new(self.ctx.budget());
        let mut rows: Vec<Row> = Vec::new();
        while let Some(row) = input.next()? {
            self.ctx.tick()?;
            let row = row.into_owned();
            held.grow(row_bytes(&row) + 16 * self.calls.len())?;
            rows.push(row);
        }
        let mut columns = Vec::with_capacity(self.calls.len());
        for call in self.calls {
            columns.push(self.compute(call, &rows)?);
        }
        for (i, row) in rows.iter_mut().enumerate() {
            for column in &mut columns {
                row.push(std::mem::replace(&mut column[i], Datum::Null));
            }
        }
        Ok(Buffered::new(
            rows.into_iter().map(Cow::Owned).collect(),
            Some(held),
        ))
    }

    fn eval_all(
        &self,
        exprs: &[crate::plan::BExpr],
        row: &[Datum],
    ) -> Result<Vec<Datum>, SqlError> {
        let scope = Scope {
            outer: &self.outer,
            row,
            tail: &[],
        };
        exprs.iter().map(|e| eval(e, self.ctx, scope)).collect()
    }

    /// The values of one call, in the order of `rows`.
    fn compute(&self, call: &WindowCall, rows: &[Row]) -> Result<Vec<Datum>, SqlError> {
        let scope = Scope {
            outer: &self.outer,
            row: &[],
            tail: &[],
        };
        let frame = Frame::resolve(&call.frame, |e| eval(e, self.ctx, scope))?;
        let order_exprs: Vec<_> = call.order.iter().map(|(e, _, _)| e.clone()).collect();
        let mut keyed = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            self.ctx.tick()?;
            keyed.push((
                i,
                self.eval_all(&call.partition, row)?,
                self.eval_all(&order_exprs, row)?,
                self.eval_all(&call.args, row)?,
            ));
        }
        let order_cmp = |a: &[Datum], b: &[Datum]| -> Ordering {
            for ((x, y), (_, desc, nulls_first)) in a.iter().zip(b).zip(&call.order) {
                let ord = match (x.is_null(), y.is_null()) {
                    (true, true) => Ordering::Equal,
                    (true, false) if *nulls_first => Ordering::Less,
                    (true, false) => Ordering::Greater,
                    (false, true) if *nulls_first => Ordering::Greater,
                    (false, true) => Ordering::Less,
                    _ if *desc => compare(y, x),
                    _ => compare(x, y),
                };
                if ord != Ordering::Equal {
                    return ord;
                }
            }
            Ordering::Equal
        };
        let partition_cmp = |a: &[Datum], b: &[Datum]| -> Ordering {
            a.iter()
                .zip(b)
                .map(|(x, y)| compare(x, y))
                .find(|o| *o != Ordering::Equal)
                .unwrap_or(Ordering::Equal)
        };
        keyed.sort_by(|a, b| partition_cmp(&a.1, &b.1).then_with(|| order_cmp(&a.2, &b.2)));
        let mut out = vec![Datum::Null; rows.len()];
        let mut start = 0;
        while start < keyed.len() {
            let mut end = start + 1;
            while end < keyed.len() && partition_cmp(&keyed[start].1, &keyed[end].1).is_eq() {
                end += 1;
            }
            let part = &keyed[start..end];
            let peers = Peers::new(part.len(), |a, b| order_cmp(&part[a].2, &part[b].2).is_eq());
            self.partition(call, part, (&frame, &peers), &mut out)?;
            start = end;
        }
        Ok(out)
    }

    /// One partition (sorted by the call's ORDER BY).
    #[allow(clippy::type_complexity)]
    fn partition(
        &self,
        call: &WindowCall,
        part: &[(usize, Vec<Datum>, Vec<Datum>, Vec<Datum>)],
        (frame, peers): (&Frame, &Peers),
        out: &mut [Datum],
    ) -> Result<(), SqlError> {
        let groups = &peers.groups;
        let arg = |at: usize| part[at].3.first().cloned().unwrap_or(Datum::Null);
        match call.func {
            WindowFunc::RowNumber => {
                for (n, row) in part.iter().enumerate() {
                    out[row.0] = Datum::Int8(n as i64 + 1);
                }
            }
            WindowFunc::Rank | WindowFunc::DenseRank => {
                for (dense, (start, end)) in groups.iter().enumerate() {
                    let value = match call.func {
                        WindowFunc::Rank => *start as i64 + 1,
                        _ => dense as i64 + 1,
                    };
                    for row in &part[*start..*end] {
                        out[row.0] = Datum::Int8(value);
                    }
                }
            }
            WindowFunc::Ntile => {
                let buckets = match part.first().map(|row| arg_at(row, 0)) {
                    Some(Datum::Null) | None => None,
                    Some(d) => Some(d.as_i64().unwrap_or(0)),
                };
                for (at, row) in part.iter().enumerate() {
                    out[row.0] = match buckets {
                        None => Datum::Null,
                        Some(n) if n <= 0 => {
                            return Err(SqlError::new(
                                SqlState::INVALID_ARGUMENT_FOR_NTILE,
                                "argument of ntile must be greater than zero",
                            ))
                        }
                        Some(n) => Datum::Int4(ntile(at, part.len(), n as usize)),
                    };
                }
            }
            WindowFunc::PercentRank | WindowFunc::CumeDist => {
                let total = part.len() as f64;
                for (start, end) in groups {
                    let value = match call.func {
                        WindowFunc::PercentRank if part.len() > 1 => *start as f64 / (total - 1.0),
                        WindowFunc::PercentRank => 0.0,
                        _ => *end as f64 / total,
                    };
                    for row in &part[*start..*end] {
                        out[row.0] = Datum::Float8(value);
                    }
                }
            }
            WindowFunc::NthValue => {
                for (at, row) in part.iter().enumerate() {
                    let n = match arg_at(row, 1) {
                        Datum::Null => {
                            out[row.0] = Datum::Null;
                            continue;
                        }
                        d => d.as_i64().unwrap_or(0),
                    };
                    if n <= 0 {
                        return Err(SqlError::new(
                            SqlState::INVALID_ARGUMENT_FOR_NTH_VALUE,
                            "argument of nth_value must be greater than zero",
                        ));
                    }
                    let (start, end) = frame.rows(at, peers);
                    let target = start + n as usize - 1;
                    out[row.0] = if target < end {
                        arg(target)
                    } else {
                        Datum::Null
                    };
                }
            }
            WindowFunc::Lag | WindowFunc::Lead => {
                for (at, row) in part.iter().enumerate() {
                    let offset = match row.3.get(1) {
                        Some(Datum::Null) => {
                            out[row.0] = Datum::Null;
                            continue;
                        }
                        Some(d) => d.as_i64().unwrap_or(1),
                        None => 1,
                    };
                    let target = match call.func {
                        WindowFunc::Lag => at as i64 - offset,
                        _ => at as i64 + offset,
                    };
                    out[row.0] = match usize::try_from(target).ok().filter(|t| *t < part.len()) {
                        Some(t) => arg(t),
                        None => row.3.get(2).cloned().unwrap_or(Datum::Null),
                    };
                }
            }
            WindowFunc::FirstValue | WindowFunc::LastValue => {
                for (at, row) in part.iter().enumerate() {
                    let (start, end) = frame.rows(at, peers);
                    out[row.0] = match (start < end, call.func) {
                        (false, _) => Datum::Null,
                        (true, WindowFunc::FirstValue) => arg(start),
                        (true, _) => arg(end - 1),
                    };
                }
            }
            WindowFunc::Aggregate(func) => {
                let values: Vec<Datum> = part
                    .iter()
                    .map(|row| row.3.first().cloned().unwrap_or(Datum::Bool(true)))
                    .collect();
                let frames: Vec<(usize, usize)> =
                    (0..part.len()).map(|at| frame.rows(at, peers)).collect();
                // The partition's values and frames, held while it is computed.
                let mut held = Reservation::new(self.ctx.budget());
                held.grow(row_bytes(&values) + std::mem::size_of_val(frames.as_slice()))?;
                let results = aggregate_frames(func, &values, &frames, self.ctx)?;
                for (row, value) in part.iter().zip(results) {
                    out[row.0] = value;
                }
            }
        }
        Ok(())
    }
}

/// The `position`-th argument of a row of a partition.
fn arg_at(row: &(usize, Vec<Datum>, Vec<Datum>, Vec<Datum>), position: usize) -> Datum {
    row.3.get(position).cloned().unwrap_or(Datum::Null)
}

/// The bucket (from 1) of row `at` of `total` split into `buckets` as
/// evenly as possible, the first buckets one row larger.
fn ntile(at: usize, total: usize, buckets: usize) -> i32 {
    let per = total / buckets;
    let larger = total % buckets;
    let in_larger = larger * (per + 1);
    let bucket = if at < in_larger {
        at / (per + 1)
    } else {
        larger + (at - in_larger) / per.max(1)
    };
    bucket as i32 + 1
}

impl<'a> RowStream<'a> for Window<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        if let Some(input) = self.input.take() {
            self.rows = Some(self.compute_all(input)?);
        }
        match &mut self.rows {
            Some(rows) => rows.next(),
            None => Ok(None),
        }
    }
}
