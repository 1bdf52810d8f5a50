//! `WITH RECURSIVE`: a CTE whose query reads itself is bound as
//! `non-recursive term UNION [ALL] recursive term`, the recursive term seeing
//! the CTE's name as its working table (see [`crate::exec::recursive`]).

use std::ops::ControlFlow;
use std::sync::Arc;

use rocklake_types::datum::PgType;
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{Cte, SetExpr, SetOperator};

use crate::bind::Binder;
use crate::ident::fold;
use crate::plan::{QueryPlan, SetPlan};

/// Whether `cte`'s query names the CTE itself (as a relation).
pub(super) fn is_self_referencing(cte: &Cte) -> bool {
    let name = fold(&cte.alias.name);
    let found = sqlparser::ast::visit_relations(&cte.query, |relation| {
        let bare = relation.0.len() == 1
            && relation.0.last().is_some_and(|part| match part {
                sqlparser::ast::ObjectNamePart::Identifier(id) => fold(id) == name,
                _ => false,
            });
        if bare {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    found.is_break()
}

fn not_recursive_form(name: &str) -> SqlError {
    SqlError::new(
        SqlState::INVALID_RECURSION,
        format!(
            "recursive query \"{name}\" does not have the form non-recursive-term UNION [ALL] recursive-term"
        ),
    )
}

impl Binder<'_> {
    /// Binds the recursive CTE `cte` (registering its working table under
    /// its name in the innermost CTE level while its recursive term binds).
    pub(super) fn bind_recursive_cte(&mut self, cte: &Cte) -> Result<Arc<QueryPlan>, SqlError> {
        let name = fold(&cte.alias.name);
        let query = &cte.query;
        if query.order_by.is_some() || query.limit_clause.is_some() || query.with.is_some() {
            return Err(SqlError::unsupported(format!(
                "ORDER BY, LIMIT or WITH in recursive query \"{name}\" is not supported"
            )));
        }
        let SetExpr::SetOperation {
            op: SetOperator::Union,
            set_quantifier,
            left,
            right,
        } = query.body.as_ref()
        else {
            return Err(not_recursive_form(&name));
        };
        let all = super::union_all(set_quantifier)?;
        let (base, mut columns) = self.bind_set_expr(left)?;
        if cte.alias.columns.len() > columns.len() {
            return Err(SqlError::new(
                SqlState::INVALID_COLUMN_REFERENCE,
                format!(
                    "WITH query \"{name}\" has {} columns available but {} columns specified",
                    columns.len(),
                    cte.alias.columns.len()
                ),
            ));
        }
        for (column, alias) in columns.iter_mut().zip(&cte.alias.columns) {
            column.name = fold(&alias.name);
        }
        for column in &mut columns {
            column.ty.get_or_insert(PgType::Text);
        }
        let id = self.next_sub;
        self.next_sub += 1;
        let work_table = QueryPlan {
            body: SetPlan::WorkTable(id),
            order: Vec::new(),
            limit: None,
            offset: None,
            columns: columns.clone(),
        };
        self.ctes
            .last_mut()
            .expect("a CTE level is pushed")
            .insert(name.clone(), Arc::new(work_table));
        // Subqueries of the recursive term read the working table, which
        // changes every iteration: none may be cached.
        self.recursive_terms += 1;
        let step = self.bind_set_expr(right);
        self.recursive_terms -= 1;
        let (step, step_columns) = step?;
        if step_columns.len() != columns.len() {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "each UNION query must have the same number of columns",
            ));
        }
        let mut step_casts = Vec::with_capacity(columns.len());
        for (i, (column, stepped)) in columns.iter().zip(&step_columns).enumerate() {
            let want = column.ty.clone().unwrap_or(PgType::Text);
            step_casts.push(match &stepped.ty {
                None => Some(want),
                Some(t) if *t == want => None,
                Some(t) if t.is_numeric() && want.is_numeric() || t.is_string() && want.is_string() => {
                    Some(want)
                }
                Some(t) => {
                    return Err(SqlError::new(
                        SqlState::DATATYPE_MISMATCH,
                        format!(
                            "recursive query \"{name}\" column {} has type {} in non-recursive term but type {} overall",
                            i + 1,
                            want.display_name(),
                            t.display_name()
                        ),
                    )
                    .with_hint("Cast the output of the non-recursive term to the correct type."))
                }
            });
        }
        Ok(Arc::new(QueryPlan {
            body: SetPlan::Recursive {
                id,
                base: Box::new(base),
                step: Box::new(step),
                all,
                step_casts,
            },
            order: Vec::new(),
            limit: None,
            offset: None,
            columns,
        }))
    }
}
