//! The select list: each item's expression and result column (its name,
//! type and the table column it reads as it is), `*` and `t.*` expanded
//! into the FROM items' columns, the columns `JOIN ... USING` merged shown
//! once, first.

use std::collections::HashSet;

use sqlparser::ast::{Select, SelectItem};

use crate::bind::joins::Merged;
use crate::bind::{figure_colname, Binder};
use crate::ident::{fold, name_parts};
use crate::plan::{BExpr, OutCol};
use rocklake_types::{SqlError, SqlState};

impl Binder<'_> {
    /// The select list: one expression and output column per item, `*` and
    /// `t.*` expanded.
    pub(super) fn bind_projection(
        &mut self,
        sel: &Select,
        is_agg: bool,
    ) -> Result<(Vec<BExpr>, Vec<OutCol>), SqlError> {
        let mut projection = Vec::new();
        let mut cols = Vec::new();
        for item in &sel.projection {
            match item {
                SelectItem::UnnamedExpr(e) => {
                    let (b, t) = self.bind_expr(e)?;
                    projection.push(b);
                    cols.push(OutCol {
                        name: figure_colname(e),
                        ty: t,
                        origin: self.column_origin(e),
                    });
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    let (b, t) = self.bind_expr(expr)?;
                    projection.push(b);
                    cols.push(OutCol {
                        name: fold(alias),
                        ty: t,
                        origin: self.column_origin(expr),
                    });
                }
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                    if is_agg {
                        return Err(SqlError::unsupported(
                            "SELECT * with aggregates is not supported",
                        ));
                    }
                    self.expand_wildcard(item, &mut projection, &mut cols)?;
                }
                other => {
                    return Err(SqlError::unsupported(format!(
                        "unsupported select item {other}"
                    )))
                }
            }
        }
        Ok((projection, cols))
    }

    /// `*` or `t.*`: every column of the FROM items (or of `t`).
    fn expand_wildcard(
        &mut self,
        item: &SelectItem,
        projection: &mut Vec<BExpr>,
        cols: &mut Vec<OutCol>,
    ) -> Result<(), SqlError> {
        let qual = match item {
            SelectItem::QualifiedWildcard(
                sqlparser::ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                _,
            ) => {
                let parts = name_parts(n)?;
                let (_, table) = crate::ident::relation_name(&parts, &self.cat.database)?;
                Some(table.to_string())
            }
            SelectItem::QualifiedWildcard(..) => {
                return Err(SqlError::unsupported("unsupported wildcard"))
            }
            _ => None,
        };
        let scope = self.scope().clone();
        let mut found = false;
        // Each join's merged columns before its columns, an enclosing
        // join's before those of the joins inside it.
        let mut merged: Vec<&Merged> = match qual {
            None => scope.merged.iter().collect(),
            Some(_) => Vec::new(),
        };
        merged.sort_by_key(|m| (m.join.start, std::cmp::Reverse(m.join.end)));
        let mut merged = merged.into_iter().peekable();
        let mut skip = HashSet::new();
        let mut show_merged = |before: usize,
                               skip: &mut HashSet<usize>,
                               projection: &mut Vec<BExpr>,
                               cols: &mut Vec<OutCol>| {
            while let Some(m) = merged.next_if(|m| m.join.start <= before) {
                let shown_already = skip.contains(&m.left);
                skip.insert(m.left);
                skip.insert(m.right);
                if shown_already {
                    // Merged again by an enclosing USING: shown once.
                    continue;
                }
                let merged = scope.merged_column(m.left).unwrap_or(m);
                projection.push(merged.expr.clone());
                cols.push(OutCol {
                    name: scope.column_name(m.left),
                    ty: merged.ty.clone(),
                    origin: scope.expr_origin(&merged.expr),
                });
            }
        };
        for e in scope
            .entries
            .iter()
            .filter(|e| qual.as_ref().is_none_or(|q| *q == e.alias))
        {
            found = true;
            for (i, (n, t)) in e.cols.iter().enumerate() {
                show_merged(e.offset + i, &mut skip, projection, cols);
                if skip.contains(&(e.offset + i)) {
                    continue;
                }
                projection.push(BExpr::Col {
                    up: 0,
                    idx: e.offset + i,
                });
                cols.push(OutCol {
                    name: n.clone(),
                    ty: t.clone(),
                    origin: e.origin(i),
                });
            }
        }
        show_merged(usize::MAX, &mut skip, projection, cols);
        if !found && qual.is_some() {
            return Err(SqlError::new(
                SqlState::UNDEFINED_TABLE,
                format!(
                    "missing FROM-clause entry for table \"{}\"",
                    qual.unwrap_or_default()
                ),
            ));
        }
        Ok(())
    }
}
