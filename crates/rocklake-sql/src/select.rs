//! The query executor: runs [`QueryPlan`]s over prefetched scans (hash join on
//! equi-conditions, nested loops otherwise; grouping, sorting, limits).

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use rocklake_codec::datum::{Datum, Row};

use crate::error::{codes, SqlError};
use crate::expr::{arith, cast_datum, eval, eval_pred};
use crate::numeric;
use crate::pg_catalog::Catalog;
use crate::plan::{
    AggFunc, AggPlan, BExpr, FromPlan, JoinKind, QueryPlan, ScanReq, ScanSource, SelectPlan,
    SetPlan, SubPlan,
};
use crate::result_rows::PickedRows;
use crate::scan_data::ScanData;
use crate::value::{compare, numeric_text};

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

fn with_row<'r>(env: &[&'r [Datum]], row: &'r [Datum]) -> Vec<&'r [Datum]> {
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

fn row_key(r: &[Datum]) -> String {
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
                        return Err(SqlError::new("2201W", "LIMIT/OFFSET must not be negative"));
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

/// Runs a FROM clause.
pub fn run_from(fp: &FromPlan, ctx: &ExecCtx, env: &[&[Datum]]) -> Result<Vec<Row>, SqlError> {
    match fp {
        FromPlan::Empty => Ok(vec![Vec::new()]),
        FromPlan::Scan(id) => Ok(ctx.data.get(*id).map(ScanData::to_rows).unwrap_or_default()),
        FromPlan::Derived(q) => run_query(q, ctx, &with_row(env, &[])),
        FromPlan::Join {
            left,
            right,
            kind,
            on,
            left_width: _,
            right_width,
            equi,
        } => {
            let lrows = run_from(left, ctx, env)?;
            let rrows = run_from(right, ctx, env)?;
            let mut out = Vec::new();
            let index: Option<HashMap<String, Vec<usize>>> = if equi.is_empty() {
                None
            } else {
                let mut m: HashMap<String, Vec<usize>> = HashMap::new();
                for (i, r) in rrows.iter().enumerate() {
                    if equi.iter().any(|(_, ri)| r[*ri].is_null()) {
                        continue;
                    }
                    let k: Vec<String> = equi.iter().map(|(_, ri)| hash_key(&r[*ri])).collect();
                    m.entry(k.join("\u{1}")).or_default().push(i);
                }
                Some(m)
            };
            let all: Vec<usize> = (0..rrows.len()).collect();
            for l in &lrows {
                let candidates: &[usize] = match &index {
                    None => &all,
                    Some(m) => {
                        if equi.iter().any(|(li, _)| l[*li].is_null()) {
                            &[]
                        } else {
                            let k: Vec<String> =
                                equi.iter().map(|(li, _)| hash_key(&l[*li])).collect();
                            m.get(&k.join("\u{1}")).map(|v| v.as_slice()).unwrap_or(&[])
                        }
                    }
                };
                let mut matched = false;
                for &ri in candidates {
                    let mut combined = l.clone();
                    combined.extend(rrows[ri].iter().cloned());
                    let ok = match on {
                        Some(c) => eval_pred(c, ctx, &with_row(env, &combined))? == Some(true),
                        None => true,
                    };
                    if ok {
                        matched = true;
                        out.push(combined);
                    }
                }
                if !matched && *kind == JoinKind::Left {
                    let mut combined = l.clone();
                    combined.extend(std::iter::repeat_n(Datum::Null, *right_width));
                    out.push(combined);
                }
            }
            Ok(out)
        }
    }
}

/// The column indexes of a projection made only of the current row's plain
/// columns, each at most once.
fn plain_columns(projection: &[BExpr]) -> Option<Vec<usize>> {
    let mut columns = Vec::with_capacity(projection.len());
    for p in projection {
        match p {
            BExpr::Col { up: 0, idx } if !columns.contains(idx) => columns.push(*idx),
            _ => return None,
        }
    }
    Some(columns)
}

/// `row` reduced to `columns`, in that order, moving the values.
fn take_columns(mut row: Row, columns: &[usize]) -> Result<Row, SqlError> {
    if columns.len() == row.len() && columns.iter().enumerate().all(|(i, c)| i == *c) {
        return Ok(row);
    }
    columns
        .iter()
        .map(|&c| {
            row.get_mut(c)
                .map(|d| std::mem::replace(d, Datum::Null))
                .ok_or_else(|| SqlError::internal(format!("column {c} out of range")))
        })
        .collect()
}

/// The result of `plan` as rows picked in place from one shared scan, when
/// the query is a plain column list of one stored table, optionally filtered,
/// or such a list over a derived table that is one (DuckDB's catalog reads):
/// no ordering, limit, grouping or DISTINCT, and every result column of the
/// type its table column has (so the values need no conversion). `None` when
/// the query has another shape; [`run_query`] computes it then.
pub fn pick(
    plan: &QueryPlan,
    scans: &[ScanReq],
    ctx: &ExecCtx,
    env: &[&[Datum]],
) -> Result<Option<PickedRows>, SqlError> {
    let SetPlan::Select(sp) = &plan.body else {
        return Ok(None);
    };
    if !plan.order.is_empty() || plan.limit.is_some() || plan.offset.is_some() {
        return Ok(None);
    }
    if sp.agg.is_some() || sp.having.is_some() || sp.distinct {
        return Ok(None);
    }
    let Some(columns) = plain_columns(&sp.projection) else {
        return Ok(None);
    };
    if columns.len() != plan.columns.len() {
        return Ok(None);
    }
    match &sp.from {
        FromPlan::Scan(id) => {
            let (Some(ScanData::Shared(shared)), Some(scan)) = (ctx.data.get(*id), scans.get(*id))
            else {
                return Ok(None);
            };
            let ScanSource::Table(def) = &scan.source else {
                return Ok(None);
            };
            let typed = columns.iter().zip(&plan.columns).all(|(&c, out)| {
                def.columns.get(c).map(|column| Some(&column.pg_type)) == Some(out.ty.as_ref())
            });
            if !typed {
                return Ok(None);
            }
            let rows = match &sp.filter {
                None => None,
                Some(filter) => {
                    let mut kept = Vec::new();
                    let mut scope: Vec<&[Datum]> = with_row(env, &[]);
                    let row_slot = scope.len() - 1;
                    for index in 0..shared.len() {
                        scope[row_slot] = shared.values(index);
                        if eval_pred(filter, ctx, &scope)? == Some(true) {
                            kept.push(index);
                        }
                    }
                    Some(kept)
                }
            };
            Ok(Some(PickedRows::new(shared.clone(), rows, columns)))
        }
        FromPlan::Derived(inner) if sp.filter.is_none() => {
            let typed = columns
                .iter()
                .zip(&plan.columns)
                .all(|(&c, out)| inner.columns.get(c).map(|column| &column.ty) == Some(&out.ty));
            if !typed {
                return Ok(None);
            }
            Ok(pick(inner, scans, ctx, &with_row(env, &[]))?
                .and_then(|rows| rows.project(&columns)))
        }
        _ => Ok(None),
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

fn aggregate(
    agg: &AggPlan,
    rows: Vec<&[Datum]>,
    ctx: &ExecCtx,
    env: &[&[Datum]],
) -> Result<Vec<Row>, SqlError> {
    let mut order: Vec<String> = Vec::new();
    let mut groups: HashMap<String, (Row, Vec<Row>)> = HashMap::new();
    for r in rows {
        let e = with_row(env, r);
        let mut key = Vec::with_capacity(agg.group.len());
        for g in &agg.group {
            key.push(eval(g, ctx, &e)?);
        }
        let mut args = Vec::with_capacity(agg.calls.len());
        for (_, a, _) in &agg.calls {
            args.push(match a {
                Some(x) => eval(x, ctx, &e)?,
                None => Datum::Bool(true),
            });
        }
        let k = row_key(&key);
        let entry = groups.entry(k.clone()).or_insert_with(|| {
            order.push(k);
            (key, Vec::new())
        });
        entry.1.push(args);
    }
    if agg.group.is_empty() && groups.is_empty() {
        order.push(String::new());
        groups.insert(String::new(), (Vec::new(), Vec::new()));
    }
    let mut out = Vec::with_capacity(order.len());
    for k in order {
        let (mut key, arg_rows) = groups.remove(&k).unwrap_or_default();
        for (i, (func, _, distinct)) in agg.calls.iter().enumerate() {
            let mut vals: Vec<&Datum> = arg_rows.iter().map(|r| &r[i]).collect();
            if *distinct {
                let mut seen = HashSet::new();
                vals.retain(|v| seen.insert(hash_key(v)));
            }
            key.push(finish(*func, &vals)?);
        }
        out.push(key);
    }
    Ok(out)
}

fn finish(func: AggFunc, vals: &[&Datum]) -> Result<Datum, SqlError> {
    let non_null: Vec<&Datum> = vals.iter().copied().filter(|v| !v.is_null()).collect();
    Ok(match func {
        AggFunc::CountStar => Datum::Int8(vals.len() as i64),
        AggFunc::Count => Datum::Int8(non_null.len() as i64),
        AggFunc::Min | AggFunc::Max => {
            let want = if func == AggFunc::Max {
                Ordering::Greater
            } else {
                Ordering::Less
            };
            let mut best: Option<&Datum> = None;
            for v in non_null {
                if best.is_none_or(|b| compare(v, b) == want) {
                    best = Some(v);
                }
            }
            best.cloned().unwrap_or(Datum::Null)
        }
        AggFunc::BoolAnd | AggFunc::BoolOr => {
            if non_null.is_empty() {
                Datum::Null
            } else if func == AggFunc::BoolAnd {
                Datum::Bool(non_null.iter().all(|v| matches!(v, Datum::Bool(true))))
            } else {
                Datum::Bool(non_null.iter().any(|v| matches!(v, Datum::Bool(true))))
            }
        }
        AggFunc::Sum | AggFunc::Avg => {
            if non_null.is_empty() {
                return Ok(Datum::Null);
            }
            let mut acc = match non_null[0] {
                Datum::Int2(_) | Datum::Int4(_) => Datum::Int8(0),
                Datum::Int8(_) => Datum::Numeric("0".into()),
                Datum::Float4(_) if func == AggFunc::Sum => Datum::Float4(0.0),
                Datum::Float4(_) | Datum::Float8(_) => Datum::Float8(0.0),
                _ => Datum::Numeric("0".into()),
            };
            for v in &non_null {
                let v = match (&acc, v) {
                    (Datum::Numeric(_), d) => Datum::Numeric(numeric_text(d).unwrap_or_default()),
                    (_, d) => (*d).clone(),
                };
                acc = arith('+', &acc, &v)?;
            }
            if func == AggFunc::Sum {
                acc
            } else {
                let n = non_null.len() as i64;
                match acc {
                    Datum::Float8(s) => Datum::Float8(s / n as f64),
                    other => {
                        let s = numeric_text(&other).ok_or_else(|| {
                            SqlError::new(
                                codes::UNDEFINED_FUNCTION,
                                "avg of this type is not supported",
                            )
                        })?;
                        Datum::Numeric(numeric::arith(&s, &n.to_string(), '/')?)
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{CmpOp, OutCol, SortKey};
    use crate::scan_data::ScanData;

    fn col(idx: usize) -> BExpr {
        BExpr::Col { up: 0, idx }
    }

    #[test]
    fn plain_projections_move_columns() {
        assert_eq!(plain_columns(&[col(1), col(0)]), Some(vec![1, 0]));
        assert_eq!(
            plain_columns(&[col(0), col(0)]),
            None,
            "a column twice is copied"
        );
        assert_eq!(plain_columns(&[BExpr::Col { up: 1, idx: 0 }]), None);
        assert_eq!(plain_columns(&[BExpr::Const(Datum::Int8(1))]), None);
        let row = vec![Datum::Int8(1), Datum::text("a"), Datum::Null];
        assert_eq!(take_columns(row.clone(), &[0, 1, 2]).unwrap(), row);
        assert_eq!(
            take_columns(row.clone(), &[1, 0]).unwrap(),
            vec![Datum::text("a"), Datum::Int8(1)]
        );
        assert!(take_columns(row, &[3]).is_err());
    }

    fn join_plan(equi: Vec<(usize, usize)>, kind: JoinKind) -> QueryPlan {
        let on = BExpr::Cmp(CmpOp::Eq, Box::new(col(0)), Box::new(col(2)));
        QueryPlan {
            body: SetPlan::Select(Box::new(SelectPlan {
                from: FromPlan::Join {
                    left: Box::new(FromPlan::Scan(0)),
                    right: Box::new(FromPlan::Scan(1)),
                    kind,
                    on: Some(on),
                    left_width: 2,
                    right_width: 2,
                    equi,
                },
                filter: None,
                agg: None,
                having: None,
                projection: (0..4).map(col).collect(),
                distinct: false,
            })),
            order: vec![
                SortKey {
                    idx: 1,
                    desc: false,
                    nulls_first: false,
                },
                SortKey {
                    idx: 3,
                    desc: true,
                    nulls_first: true,
                },
            ],
            limit: None,
            offset: None,
            columns: (0..4)
                .map(|i| OutCol {
                    name: format!("c{i}"),
                    ty: None,
                })
                .collect(),
        }
    }

    #[test]
    fn hash_join_matches_nested_loop() {
        let left = vec![
            vec![Datum::Int8(1), Datum::Text("a".into())],
            vec![Datum::Int8(2), Datum::Text("b".into())],
            vec![Datum::Null, Datum::Text("c".into())],
        ];
        let right = vec![
            vec![Datum::Int4(1), Datum::Int4(10)],
            vec![Datum::Int4(1), Datum::Null],
            vec![Datum::Int4(3), Datum::Int4(30)],
        ];
        let data = vec![ScanData::Owned(left), ScanData::Owned(right)];
        let cat = Catalog::default();
        let ctx = ExecCtx::new(&data, &cat);
        for kind in [JoinKind::Inner, JoinKind::Left] {
            let hashed = run_query(&join_plan(vec![(0, 0)], kind), &ctx, &[]).unwrap();
            let looped = run_query(&join_plan(Vec::new(), kind), &ctx, &[]).unwrap();
            assert_eq!(hashed, looped);
            let expected = if kind == JoinKind::Inner { 2 } else { 4 };
            assert_eq!(hashed.len(), expected);
            // DESC puts NULLs first by default, as in PostgreSQL.
            assert_eq!(hashed[0][3], Datum::Null);
        }
    }
}
