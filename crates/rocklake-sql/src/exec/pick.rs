//! Results picked in place: a plain column list of one shared scan is
//! answered with the indexes of its kept rows and projected columns, without
//! copying a value.

use rocklake_types::datum::{Datum, Row};
use rocklake_types::rows::PickedRows;
use rocklake_types::SqlError;

use crate::exec::context::{ExecCtx, Scope};
use crate::exec::eval::eval_pred;
use crate::exec::scan_data::ScanData;
use crate::plan::{BExpr, FromPlan, QueryPlan, ScanReq, ScanSource, SelectPlan, SetPlan};
use crate::storage::RelationDef;

/// The column indexes of a projection made only of the current row's plain
/// columns, each at most once.
pub(crate) fn plain_columns(projection: &[BExpr]) -> Option<Vec<usize>> {
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
pub(crate) fn take_columns(mut row: Row, columns: &[usize]) -> Result<Row, SqlError> {
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
/// the query has another shape; [`crate::exec::select::run_query`] computes it then.
pub fn pick(
    plan: &QueryPlan,
    scans: &[ScanReq],
    ctx: &ExecCtx,
    env: &[&[Datum]],
) -> Result<Option<PickedRows>, SqlError> {
    let Some((sp, columns)) = plain_select(plan) else {
        return Ok(None);
    };
    match &sp.from {
        FromPlan::Scan(id) => {
            let (Some(ScanData::Shared(shared)), Some(scan)) = (ctx.data.get(*id), scans.get(*id))
            else {
                return Ok(None);
            };
            let ScanSource::Table(def) = &scan.source else {
                return Ok(None);
            };
            if !table_typed(&columns, plan, def) {
                return Ok(None);
            }
            let rows = match &sp.filter {
                None => None,
                Some(filter) => {
                    let mut kept = Vec::new();
                    for index in 0..shared.len() {
                        ctx.tick()?;
                        let scope = Scope {
                            outer: env,
                            row: shared.values(index),
                            tail: &[],
                        };
                        if eval_pred(filter, ctx, scope)? == Some(true) {
                            kept.push(index);
                        }
                    }
                    Some(kept)
                }
            };
            Ok(Some(PickedRows::new(shared.clone(), rows, columns)))
        }
        FromPlan::Derived(inner) if sp.filter.is_none() => {
            if !derived_typed(&columns, plan, inner) {
                return Ok(None);
            }
            let mut nested = env.to_vec();
            nested.push(&[]);
            Ok(pick(inner, scans, ctx, &nested)?.and_then(|rows| rows.project(&columns)))
        }
        _ => Ok(None),
    }
}
/// The stored table whose rows are the whole result of a query, and the
/// scan that reads it (see [`whole_table_read`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct WholeTableRead<'s> {
    /// The scan's index among the query's scans.
    pub scan: usize,
    /// The table.
    pub table: &'s RelationDef,
}

/// The stored table whose rows are the whole result of `plan`: a plain
/// column list of it (directly or through derived tables that are) as
/// [`pick`] answers, without a filter and without `ctid`. The result then
/// depends on the table's rows alone.
pub(crate) fn whole_table_read<'s>(
    plan: &QueryPlan,
    scans: &'s [ScanReq],
) -> Option<WholeTableRead<'s>> {
    let (sp, columns) = plain_select(plan)?;
    if sp.filter.is_some() {
        return None;
    }
    match &sp.from {
        FromPlan::Scan(id) => {
            let scan = scans.get(*id)?;
            let ScanSource::Table(def) = &scan.source else {
                return None;
            };
            (!scan.reads_ctid && table_typed(&columns, plan, def)).then_some(WholeTableRead {
                scan: *id,
                table: def,
            })
        }
        FromPlan::Derived(inner) if derived_typed(&columns, plan, inner) => {
            whole_table_read(inner, scans)
        }
        _ => None,
    }
}

/// The SELECT of `plan` and the FROM columns it lists, when it is a plain
/// column list: no ordering, limit, grouping or DISTINCT, each result
/// column a column of the FROM item, at most once.
fn plain_select(plan: &QueryPlan) -> Option<(&SelectPlan, Vec<usize>)> {
    let SetPlan::Select(sp) = &plan.body else {
        return None;
    };
    if !plan.order.is_empty() || plan.limit.is_some() || plan.offset.is_some() {
        return None;
    }
    if sp.agg.is_some() || sp.having.is_some() || sp.distinct || sp.distinct_on.is_some() {
        return None;
    }
    let columns = plain_columns(&sp.projection)?;
    (columns.len() == plan.columns.len()).then_some((sp, columns))
}

/// Whether every result column of `plan` has the type of the table column
/// it lists (so the values need no conversion).
fn table_typed(columns: &[usize], plan: &QueryPlan, table: &RelationDef) -> bool {
    columns.iter().zip(&plan.columns).all(|(&c, out)| {
        table.columns.get(c).map(|column| Some(&column.pg_type)) == Some(out.ty.as_ref())
    })
}

/// Whether every result column of `plan` has the type of the derived
/// table's column it lists.
fn derived_typed(columns: &[usize], plan: &QueryPlan, inner: &QueryPlan) -> bool {
    columns
        .iter()
        .zip(&plan.columns)
        .all(|(&c, out)| inner.columns.get(c).map(|column| &column.ty) == Some(&out.ty))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
