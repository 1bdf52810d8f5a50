//! Query plans as pipelines of row streams: [`query_stream`] builds the
//! stages of a query (its body, then ORDER BY, OFFSET and LIMIT), and
//! [`run_query`] drains one for the callers that want the whole result
//! (subqueries, INSERT ... SELECT, UPDATE and DELETE).

use std::sync::Arc;

use rocklake_types::datum::{Datum, Row};
use rocklake_types::{SqlError, SqlState};

use crate::catalog::Wanted;
use crate::exec::aggregate::Aggregate;
use crate::exec::context::{ExecCtx, Scope};
use crate::exec::eval::eval;
use crate::exec::join::{Join, JoinSpec};
use crate::exec::lateral::LateralRows;
use crate::exec::lookup_join::{LookupRows, LookupSide};
use crate::exec::nested_join::NestedJoin;
use crate::exec::set_ops::IntersectExcept;
use crate::exec::sort::Sort;
use crate::exec::stream::{
    collect, Distinct, Filter, FirstOfRuns, Limit, Project, RowCow, RowStream, ScanStream, Single,
    Stream, Union, Values,
};
use crate::plan::{BExpr, FromPlan, QueryPlan, SelectPlan, SetOperation, SetPlan, SubPlan};

/// Runs a subquery (cached when uncorrelated) with `outer` as the rows of
/// its enclosing query levels.
pub fn run_subquery(
    sub: &SubPlan,
    ctx: &ExecCtx,
    outer: &[&[Datum]],
) -> Result<Arc<Vec<Row>>, SqlError> {
    if !sub.correlated {
        if let Some(rows) = ctx.cached(sub.id) {
            return Ok(rows);
        }
    }
    let (rows, held) = collect(query_stream(&sub.plan, ctx, outer.to_vec())?, ctx)?;
    let rows = Arc::new(rows);
    if !sub.correlated {
        // Kept for the rest of the statement, and charged for as long.
        std::mem::forget(held);
        ctx.keep(sub.id, rows.clone());
    }
    Ok(rows)
}

/// Runs a query to the end; rows of its visible columns.
pub fn run_query(
    plan: &QueryPlan,
    ctx: &ExecCtx,
    outer: &[&[Datum]],
) -> Result<Vec<Row>, SqlError> {
    let (rows, _held) = collect(query_stream(plan, ctx, outer.to_vec())?, ctx)?;
    Ok(rows)
}

/// The value of a LIMIT or OFFSET expression: `None` when absent or NULL.
pub(crate) fn row_count(
    e: &Option<BExpr>,
    ctx: &ExecCtx,
    outer: &[&[Datum]],
) -> Result<Option<usize>, SqlError> {
    let Some(x) = e else { return Ok(None) };
    match eval(
        x,
        ctx,
        Scope {
            outer,
            row: &[],
            tail: &[],
        },
    )? {
        Datum::Null => Ok(None),
        d => {
            let v = d.as_i64().unwrap_or(0);
            if v < 0 {
                return Err(SqlError::new(
                    SqlState::INVALID_ROW_COUNT_IN_LIMIT_CLAUSE,
                    "LIMIT/OFFSET must not be negative",
                ));
            }
            Ok(Some(v as usize))
        }
    }
}

/// The stages of a whole query: its body, then ORDER BY, OFFSET, LIMIT and
/// the visible columns only.
pub(crate) fn query_stream<'a>(
    plan: &'a QueryPlan,
    ctx: &'a ExecCtx<'a>,
    outer: Vec<&'a [Datum]>,
) -> Result<Stream<'a>, SqlError> {
    crate::parse::check_stack()?;
    let offset = row_count(&plan.offset, ctx, &outer)?.unwrap_or(0);
    let limit = row_count(&plan.limit, ctx, &outer)?;
    let mut stream = set_stream(&plan.body, ctx, outer)?;
    // DISTINCT ON sorted its rows in this order already.
    let sorted = matches!(&plan.body, SetPlan::Select(s) if s.distinct_on.is_some());
    if !plan.order.is_empty() && !sorted {
        stream = Box::new(Sort::new(stream, &plan.order, ctx));
    }
    Ok(Box::new(Limit::new(
        stream,
        offset,
        limit,
        plan.columns.len(),
    )))
}

/// The rows of a set expression: a SELECT, VALUES or a set operation.
pub(crate) fn set_stream<'a>(
    plan: &'a SetPlan,
    ctx: &'a ExecCtx<'a>,
    outer: Vec<&'a [Datum]>,
) -> Result<Stream<'a>, SqlError> {
    Ok(match plan {
        SetPlan::Select(s) => select_stream(s, ctx, outer)?,
        SetPlan::Values(rows) => Box::new(Values::new(rows, outer, ctx)),
        SetPlan::WorkTable(id) => Box::new(crate::exec::recursive::WorkTableScan::new(*id, ctx)),
        SetPlan::Recursive {
            id,
            base,
            step,
            all,
            step_casts,
        } => Box::new(crate::exec::recursive::RecursiveUnion::new(
            *id, base, step, *all, step_casts, outer, ctx,
        )),
        SetPlan::SetOp {
            op,
            left,
            right,
            all,
            left_casts,
            right_casts,
        } => {
            let left = set_stream(left, ctx, outer.clone())?;
            let right = set_stream(right, ctx, outer)?;
            match op {
                SetOperation::Union => {
                    let union: Stream<'a> =
                        Box::new(Union::new(vec![(left, left_casts), (right, right_casts)]));
                    if *all {
                        union
                    } else {
                        Box::new(Distinct::new(union, ctx))
                    }
                }
                SetOperation::Intersect | SetOperation::Except => {
                    // A union of one input casts its rows to the result's types.
                    let left = Box::new(Union::new(vec![(left, left_casts)]));
                    let right = Box::new(Union::new(vec![(right, right_casts)]));
                    Box::new(IntersectExcept::new(left, right, *op, *all, ctx))
                }
            }
        }
    })
}

/// One SELECT: FROM, WHERE, grouping, HAVING, the projection (visible
/// columns, then hidden sort keys) and DISTINCT or DISTINCT ON.
pub(crate) fn select_stream<'a>(
    sp: &'a SelectPlan,
    ctx: &'a ExecCtx<'a>,
    outer: Vec<&'a [Datum]>,
) -> Result<Stream<'a>, SqlError> {
    // Window and set-returning columns are appended after the full FROM row
    // (hidden ctid columns included), where the binder put them.
    let full = !sp.windows.is_empty() || (!sp.set_calls.is_empty() && sp.agg.is_none());
    let mut stream = from_stream(&sp.from, ctx, &outer, full)?;
    if let Some(filter) = &sp.filter {
        stream = Box::new(Filter::new(stream, filter, outer.clone(), ctx));
    }
    if !sp.windows.is_empty() {
        stream = Box::new(crate::exec::window::Window::new(
            stream,
            &sp.windows,
            outer.clone(),
            ctx,
        ));
    }
    if let Some(agg) = &sp.agg {
        stream = Box::new(Aggregate::new(stream, agg, outer.clone(), ctx));
        if let Some(having) = &sp.having {
            stream = Box::new(Filter::new(stream, having, outer.clone(), ctx));
        }
    }
    if !sp.set_calls.is_empty() {
        stream = Box::new(crate::exec::set_calls::SetCalls::new(
            stream,
            &sp.set_calls,
            outer.clone(),
            ctx,
        ));
    }
    stream = Box::new(Project::new(stream, &sp.projection, outer, ctx));
    if sp.distinct {
        stream = Box::new(Distinct::new(stream, ctx));
    }
    if let Some(on) = &sp.distinct_on {
        stream = Box::new(Sort::new(stream, &on.order, ctx));
        stream = Box::new(FirstOfRuns::new(stream, &on.columns));
    }
    Ok(stream)
}

/// The rows of a FROM clause. A scan's rows are read in place unless `full`
/// asks for the executor's full layout (joins).
pub(crate) fn from_stream<'a>(
    from: &'a FromPlan,
    ctx: &'a ExecCtx<'a>,
    outer: &[&'a [Datum]],
    full: bool,
) -> Result<Stream<'a>, SqlError> {
    Ok(match from {
        FromPlan::Empty => Box::new(Single::new()),
        FromPlan::Scan(id) => match ctx.data.get(*id) {
            Some(data) => Box::new(ScanStream::new(data, full, ctx)),
            None => Box::new(Nothing),
        },
        FromPlan::Function {
            call,
            spread,
            ordinality,
        } => Box::new(crate::exec::set_calls::FunctionScan::new(
            call,
            (*spread, *ordinality),
            outer.to_vec(),
            ctx,
        )?),
        FromPlan::Lookup { .. } => {
            return Err(SqlError::internal("a lookup outside a join"));
        }
        FromPlan::Lateral(_) => {
            return Err(SqlError::internal("a LATERAL subquery outside a join"));
        }
        FromPlan::Derived(q) => {
            let mut nested = outer.to_vec();
            nested.push(&[]);
            query_stream(q, ctx, nested)?
        }
        FromPlan::Join {
            left,
            right,
            kind,
            on,
            left_width,
            right_width,
            equi,
        } => {
            let left = from_stream(left, ctx, outer, true)?;
            let spec = (*kind, on.as_ref(), *right_width);
            if let FromPlan::Lateral(query) = right.as_ref() {
                let rows = LateralRows::new(query, outer.to_vec(), ctx);
                let join = NestedJoin::new(left, rows, spec, outer.to_vec(), ctx);
                return Ok(Box::new(join));
            }
            if let FromPlan::Lookup {
                table,
                column,
                columns,
            } = right.as_ref()
            {
                // The equi-join pairs number the right row as narrowed.
                let narrowed = Wanted(columns.as_deref()).position(*column);
                let Some(&(left_column, _)) = equi.iter().find(|(_, r)| Some(*r) == narrowed)
                else {
                    return Err(SqlError::internal("a lookup join without its key"));
                };
                let side = LookupSide {
                    table: *table,
                    left_column,
                    column: *column,
                    columns: columns.as_deref(),
                };
                let rows = LookupRows::new(side, ctx);
                let join = NestedJoin::new(left, rows, spec, outer.to_vec(), ctx);
                return Ok(Box::new(join));
            }
            let right = from_stream(right, ctx, outer, true)?;
            let spec = JoinSpec {
                kind: *kind,
                on: on.as_ref(),
                left_width: *left_width,
                right_width: *right_width,
                equi,
            };
            Box::new(Join::new(left, right, spec, outer.to_vec(), ctx)?)
        }
    })
}

/// A stream with no rows (a scan the statement did not read).
struct Nothing;

impl<'a> RowStream<'a> for Nothing {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        Ok(None)
    }
}
