//! The query executor: runs [`QueryPlan`]s over prefetched scans (filters,
//! projections, set operations, sorting and limits); joins, grouping and
//! results picked in place are their own modules.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use rocklake_types::datum::{Datum, Row};
use rocklake_types::{SqlError, SqlState};

use crate::catalog::Catalog;
use crate::exec::aggregate::aggregate;
use crate::exec::cast::cast_datum;
use crate::exec::compare::compare;
use crate::exec::eval::{eval, eval_pred};
use crate::exec::join::run_from;
use crate::exec::pick::{plain_columns, take_columns};
use crate::exec::scan_data::ScanData;
use crate::plan::{BExpr, FromPlan, QueryPlan, SelectPlan, SetPlan, SubPlan};

/// Everything execution needs besides the plan.
pub struct ExecCtx<'a> {
    /// Rows of each scan of the statement.
    pub data: &'a [ScanData],
    /// Catalog snapshot (for to_regclass).
    pub catalog: &'a Catalog,
    /// Results of uncorrelated subqueries, by subquery id.
    pub cache: RefCell<HashMap<usize, Rc<Vec<Row>>>>,
}
impl<'a> ExecCtx<'a> {
    /// A context over prefetched scan data.
    pub fn new(data: &'a [ScanData], catalog: &'a Catalog) -> Self {
        ExecCtx {
            data,
            catalog,
            cache: RefCell::new(HashMap::new()),
        }
    }
}
/// Runs a subquery (cached when uncorrelated).
pub fn run_subquery(
    sub: &SubPlan,
    ctx: &ExecCtx,
    env: &[&[Datum]],
) -> Result<Rc<Vec<Row>>, SqlError> {
    if !sub.correlated {
        if let Some(r) = ctx.cache.borrow().get(&sub.id) {
            return Ok(r.clone());
        }
    }
    let rows = Rc::new(run_query(&sub.plan, ctx, env)?);
    if !sub.correlated {
        ctx.cache.borrow_mut().insert(sub.id, rows.clone());
    }
    Ok(rows)
}
pub(crate) fn with_row<'r>(env: &[&'r [Datum]], row: &'r [Datum]) -> Vec<&'r [Datum]> {
    let mut v = env.to_vec();
    v.push(row);
    v
}
/// A hashable key for values that compare equal (integers of any width alike).
pub fn hash_key(d: &Datum) -> String {
    match d {
        Datum::Text(s) => format!("t{s}"),
        other => match other.as_i64() {
            Some(v) => format!("i{v}"),
            None => format!("{other:?}"),
        },
    }
}
pub(crate) fn row_key(r: &[Datum]) -> String {
    r.iter().map(hash_key).collect::<Vec<_>>().join("\u{1}")
}
/// Runs a query; returns rows of its visible columns.
pub fn run_query(plan: &QueryPlan, ctx: &ExecCtx, env: &[&[Datum]]) -> Result<Vec<Row>, SqlError> {
    let mut rows = run_set(&plan.body, ctx, env)?;
    if !plan.order.is_empty() {
        rows.sort_by(|a, b| {
            for k in &plan.order {
                let (x, y) = (&a[k.idx], &b[k.idx]);
                let o = match (x.is_null(), y.is_null()) {
                    (true, true) => Ordering::Equal,
                    (true, false) => {
                        if k.nulls_first {
                            Ordering::Less
                        } else {
                            Ordering::Greater
                        }
                    }
                    (false, true) => {
                        if k.nulls_first {
                            Ordering::Greater
                        } else {
                            Ordering::Less
                        }
                    }
                    _ => {
                        let o = compare(x, y);
                        if k.desc {
                            o.reverse()
                        } else {
                            o
                        }
                    }
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        });
    }
    let count = |e: &Option<BExpr>| -> Result<Option<usize>, SqlError> {
        match e {
            None => Ok(None),
            Some(x) => match eval(x, ctx, env)? {
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
            },
        }
    };
    let offset = count(&plan.offset)?.unwrap_or(0);
    let limit = count(&plan.limit)?;
    let width = plan.columns.len();
    Ok(rows
        .into_iter()
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .map(|mut r| {
            r.truncate(width);
            r
        })
        .collect())
}
fn run_set(plan: &SetPlan, ctx: &ExecCtx, env: &[&[Datum]]) -> Result<Vec<Row>, SqlError> {
    match plan {
        SetPlan::Select(s) => run_select(s, ctx, env),
        SetPlan::Values(rows) => {
            let mut out = Vec::with_capacity(rows.len());
            for r in rows {
                let mut row = Vec::with_capacity(r.len());
                for e in r {
                    row.push(eval(e, ctx, env)?);
                }
                out.push(row);
            }
            Ok(out)
        }
        SetPlan::Union {
            left,
            right,
            all,
            left_casts,
            right_casts,
        } => {
            let mut out = Vec::new();
            for (side, casts) in [(left, left_casts), (right, right_casts)] {
                for mut r in run_set(side, ctx, env)? {
                    for (i, c) in casts.iter().enumerate() {
                        if let Some(t) = c {
                            let d = std::mem::replace(&mut r[i], Datum::Null);
                            r[i] = cast_datum(d, t)?;
                        }
                    }
                    r.truncate(casts.len());
                    out.push(r);
                }
            }
            if !all {
                let mut seen = HashSet::new();
                out.retain(|r| seen.insert(row_key(r)));
            }
            Ok(out)
        }
    }
}
/// Runs one SELECT, returning projection rows (visible and hidden columns).
pub fn run_select(sp: &SelectPlan, ctx: &ExecCtx, env: &[&[Datum]]) -> Result<Vec<Row>, SqlError> {
    // Plain columns of a derived table, as in DuckDB's
    // `COPY (SELECT a, b FROM (SELECT a, b FROM t WHERE ...))`: the inner
    // rows belong to this SELECT, so their values are moved, not copied.
    if let (FromPlan::Derived(_), None, None, None, false) =
        (&sp.from, &sp.filter, &sp.agg, &sp.having, sp.distinct)
    {
        if let Some(columns) = plain_columns(&sp.projection) {
            return run_from(&sp.from, ctx, env)?
                .into_iter()
                .map(|row| take_columns(row, &columns))
                .collect();
        }
    }
    // A plain scan is read in place: only the rows the filter keeps are
    // touched again, and only the projected values are copied out.
    let owned;
    let input: Box<dyn Iterator<Item = &[Datum]>> = match &sp.from {
        FromPlan::Scan(id) => match ctx.data.get(*id) {
            Some(data) => Box::new(data.iter()),
            None => Box::new(std::iter::empty()),
        },
        other => {
            owned = run_from(other, ctx, env)?;
            Box::new(owned.iter().map(Vec::as_slice))
        }
    };
    let mut kept: Vec<&[Datum]> = Vec::with_capacity(input.size_hint().0);
    // One environment for every row: the row is its last entry.
    let mut scope: Vec<&[Datum]> = with_row(env, &[]);
    let row_slot = scope.len() - 1;
    for r in input {
        let keep = match &sp.filter {
            Some(f) => {
                scope[row_slot] = r;
                eval_pred(f, ctx, &scope)? == Some(true)
            }
            None => true,
        };
        if keep {
            kept.push(r);
        }
    }
    let grouped;
    let rows: Vec<&[Datum]> = match &sp.agg {
        Some(agg) => {
            let mut groups = aggregate(agg, kept, ctx, env)?;
            if let Some(h) = &sp.having {
                let mut having = Vec::new();
                for r in groups {
                    if eval_pred(h, ctx, &with_row(env, &r))? == Some(true) {
                        having.push(r);
                    }
                }
                groups = having;
            }
            grouped = groups;
            grouped.iter().map(Vec::as_slice).collect()
        }
        None => kept,
    };
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        scope[row_slot] = r;
        let mut o = Vec::with_capacity(sp.projection.len());
        for p in &sp.projection {
            o.push(match p {
                // The common case, a column of the row, without the general
                // evaluator's dispatch.
                BExpr::Col { up: 0, idx } => r
                    .get(*idx)
                    .cloned()
                    .ok_or_else(|| SqlError::internal("bad column index"))?,
                other => eval(other, ctx, &scope)?,
            });
        }
        out.push(o);
    }
    if sp.distinct {
        let mut seen = HashSet::new();
        out.retain(|r| seen.insert(row_key(r)));
    }
    Ok(out)
}
