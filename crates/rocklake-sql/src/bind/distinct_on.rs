//! `SELECT DISTINCT ON (expressions)`: each expression names a select-list
//! column (by position or output name), is a select-list expression, or is
//! added as a hidden column, as ORDER BY keys are; the ORDER BY must start
//! with the DISTINCT ON expressions (in any order), else PostgreSQL's 42P10.
//! See [`DistinctOn`] for the order the rows are sorted in.

use sqlparser::ast::{Expr, OrderByExpr, Value};

use crate::bind::Binder;
use crate::ident::fold;
use crate::plan::{BExpr, DistinctOn, OutCol, SortKey};
use rocklake_types::{SqlError, SqlState};

impl Binder<'_> {
    /// Binds the DISTINCT ON expressions of a SELECT whose select list is
    /// bound (`projection`, which may get hidden columns) and whose ORDER BY
    /// (as written, and as bound) is `order_by`.
    pub(super) fn bind_distinct_on(
        &mut self,
        exprs: &[Expr],
        order_by: (&[OrderByExpr], &[SortKey]),
        cols: &[OutCol],
        projection_asts: &[&Expr],
        projection: &mut Vec<BExpr>,
    ) -> Result<DistinctOn, SqlError> {
        let mut columns = Vec::with_capacity(exprs.len());
        for e in exprs {
            let column = self.distinct_on_column(e, order_by, cols, projection_asts, projection)?;
            columns.push(column);
        }
        let order = distinct_on_order(&columns, order_by.1, projection)?;
        Ok(DistinctOn { columns, order })
    }

    /// The projection column of one DISTINCT ON expression.
    fn distinct_on_column(
        &mut self,
        e: &Expr,
        (order_asts, order): (&[OrderByExpr], &[SortKey]),
        cols: &[OutCol],
        projection_asts: &[&Expr],
        projection: &mut Vec<BExpr>,
    ) -> Result<usize, SqlError> {
        match e {
            Expr::Value(v) => {
                if let Value::Number(n, _) = &v.value {
                    return match n.parse::<usize>() {
                        Ok(i) if i >= 1 && i <= cols.len() => Ok(i - 1),
                        _ => Err(SqlError::new(
                            SqlState::INVALID_COLUMN_REFERENCE,
                            format!("DISTINCT ON position {n} is not in select list"),
                        )),
                    };
                }
            }
            Expr::Identifier(id) => {
                let name = fold(id);
                if let Some(i) = cols.iter().position(|c| c.name == name) {
                    return Ok(i);
                }
            }
            _ => {}
        }
        if projection_asts.len() == cols.len() {
            if let Some(i) = projection_asts.iter().position(|p| *p == e) {
                return Ok(i);
            }
        }
        // The same expression as a hidden ORDER BY key: that column.
        if let Some(k) = order_asts.iter().position(|o| o.expr == *e) {
            return Ok(order[k].idx);
        }
        let (bound, _) = self.bind_expr(e)?;
        projection.push(bound);
        Ok(projection.len() - 1)
    }
}

/// Whether projection columns `a` and `b` are one select-list target: the
/// same column, or the same column of the FROM rows read twice.
fn same_target(projection: &[BExpr], a: usize, b: usize) -> bool {
    a == b
        || matches!(
            (projection.get(a), projection.get(b)),
            (Some(BExpr::Col { up: u, idx: x }), Some(BExpr::Col { up: v, idx: y }))
                if u == v && x == y
        )
}

/// The order rows are sorted in before the first of each group is kept:
/// the ORDER BY without repeated keys (PostgreSQL drops a key that sorts
/// on a column an earlier key sorts on, whatever its direction), then the
/// DISTINCT ON columns it lacks. A DISTINCT ON column after a key that is
/// not one, or missing after such a key, is PostgreSQL's 42P10.
fn distinct_on_order(
    columns: &[usize],
    order: &[SortKey],
    projection: &[BExpr],
) -> Result<Vec<SortKey>, SqlError> {
    let mismatch = || {
        SqlError::new(
            SqlState::INVALID_COLUMN_REFERENCE,
            "SELECT DISTINCT ON expressions must match initial ORDER BY expressions",
        )
    };
    let in_sort = |sorted: &[SortKey], column: usize| {
        sorted
            .iter()
            .any(|k| same_target(projection, k.idx, column))
    };
    let mut sorted: Vec<SortKey> = Vec::with_capacity(order.len() + columns.len());
    let mut skipped = false;
    for key in order {
        if in_sort(&sorted, key.idx) {
            continue;
        }
        if columns.iter().any(|&c| same_target(projection, c, key.idx)) {
            if skipped {
                return Err(mismatch());
            }
        } else {
            skipped = true;
        }
        sorted.push(key.clone());
    }
    for &column in columns {
        if in_sort(&sorted, column) {
            continue;
        }
        if skipped {
            return Err(mismatch());
        }
        sorted.push(SortKey {
            idx: column,
            desc: false,
            nulls_first: false,
        });
    }
    Ok(sorted)
}
