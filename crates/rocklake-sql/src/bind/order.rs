//! ORDER BY: keys naming an output column (by ordinal or name), a
//! select-list expression, or any other expression (a hidden column).

use sqlparser::ast::{Expr, Value};

use crate::bind::Binder;
use crate::ident::fold;
use crate::plan::{BExpr, OutCol, SortKey};
use rocklake_types::{SqlError, SqlState};

impl Binder<'_> {
    /// ORDER BY keys: an output column (by ordinal or name), a select-list
    /// expression, or any other expression, added as a hidden column.
    pub(super) fn bind_order_by(
        &mut self,
        order_by: &[sqlparser::ast::OrderByExpr],
        cols: &[OutCol],
        projection_asts: &[&Expr],
        projection: &mut Vec<BExpr>,
    ) -> Result<Vec<SortKey>, SqlError> {
        let mut order = Vec::new();
        for o in order_by {
            let idx = match output_index(&o.expr, cols)? {
                Some(i) => {
                    check_unambiguous(&o.expr, i, cols, projection)?;
                    i
                }
                None => match projection_asts.iter().position(|p| **p == o.expr) {
                    Some(i) if projection_asts.len() == cols.len() => i,
                    _ => {
                        let (b, _) = self.bind_expr(&o.expr)?;
                        projection.push(b);
                        projection.len() - 1
                    }
                },
            };
            order.push(sort_key(idx, o));
        }
        Ok(order)
    }
}

pub(super) fn sort_key(idx: usize, o: &sqlparser::ast::OrderByExpr) -> SortKey {
    let desc = o
        .options
        .sort
        .as_ref()
        .is_some_and(|s| matches!(s, sqlparser::ast::OrderBySort::Desc));
    SortKey {
        idx,
        desc,
        nulls_first: o.options.nulls_first.unwrap_or(desc),
    }
}

/// An ORDER BY name that matches several output columns must name the same
/// column in each (`SELECT id, id ... ORDER BY id`), as in PostgreSQL.
fn check_unambiguous(
    e: &Expr,
    index: usize,
    cols: &[OutCol],
    projection: &[BExpr],
) -> Result<(), SqlError> {
    let Expr::Identifier(id) = e else {
        return Ok(());
    };
    let name = &cols[index].name;
    let same = |i: usize| match (projection.get(i), projection.get(index)) {
        (Some(BExpr::Col { up: a, idx: x }), Some(BExpr::Col { up: b, idx: y })) => {
            a == b && x == y
        }
        _ => i == index,
    };
    if cols
        .iter()
        .enumerate()
        .any(|(i, c)| c.name == *name && !same(i))
    {
        return Err(SqlError::new(
            SqlState::AMBIGUOUS_COLUMN,
            format!("ORDER BY \"{}\" is ambiguous", fold(id)),
        ));
    }
    Ok(())
}

/// ORDER BY item naming an output column (by ordinal or bare name).
pub(super) fn output_index(e: &Expr, cols: &[OutCol]) -> Result<Option<usize>, SqlError> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => {
                let i: usize = n.parse().unwrap_or(0);
                if i == 0 || i > cols.len() {
                    return Err(SqlError::new(
                        SqlState::INVALID_COLUMN_REFERENCE,
                        format!("ORDER BY position {n} is not in select list"),
                    ));
                }
                Ok(Some(i - 1))
            }
            _ => Ok(None),
        },
        Expr::Identifier(id) => {
            let n = fold(id);
            Ok(cols.iter().position(|c| c.name == n))
        }
        _ => Ok(None),
    }
}
