//! Binding: turns sqlparser's AST into typed plans ([`crate::plan`]), resolving
//! names like PostgreSQL (unquoted identifiers fold to lower case; unqualified
//! relations resolve in `public`, then `pg_catalog`).

mod arrays;
mod calls;
mod colname;
mod comma;
mod distinct_on;
pub(crate) mod expr;
mod frames;
mod from;
mod func;
mod joins;
mod limits;
mod locking;
mod lookups;
pub use joins::Merged;
mod recursive;
mod set_ops;
pub use locking::LockPlan;
pub(crate) use set_ops::union_all;
mod order;
mod predicates;
mod projection;
mod pruning;
mod rows;
mod window;

use order::{output_index, sort_key};

use std::collections::HashMap;
use std::sync::Arc;

pub use colname::figure_colname;
use rocklake_types::datum::PgType;
use sqlparser::ast::{
    Distinct, Expr, GroupByExpr, OrderByKind, Query, Select, SelectItem, SetExpr, Value,
};

use crate::catalog::Catalog;
use crate::plan::{
    common_type, AggFunc, AggPlan, BExpr, FromPlan, OutCol, QueryPlan, ScanReq, SelectPlan,
    SetPlan, SortKey, Ty,
};
use crate::storage::Extreme;
use rocklake_types::{SqlError, SqlState};

use crate::ident::{fold, name_parts};

/// One FROM item visible to expressions.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Name it is referenced by (alias or table name).
    pub alias: String,
    /// Schema, for `schema.table.column` references.
    pub schema: Option<String>,
    /// Column names and types.
    pub cols: Vec<(String, Ty)>,
    /// Offset of the first column in the flat row.
    pub offset: usize,
    /// For stored tables: the index of the hidden `ctid` column and the scan
    /// that reads the table.
    pub ctid: Option<(usize, usize)>,
    /// The table column each column reads as it is (table oid, attnum),
    /// by position; empty when none does.
    pub origins: Vec<Option<(u32, i16)>>,
    /// What the item reads (for row locks).
    pub kind: EntryKind,
}

/// What a FROM item reads, as row locks ([`locking`]) tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A stored table (with a `ctid`).
    Stored,
    /// A virtual catalog table.
    Virtual,
    /// A subquery in FROM.
    Subquery,
    /// A WITH query.
    Cte,
    /// A function in FROM.
    Function,
}

impl Entry {
    /// The table column its column `i` reads as it is, if any.
    pub fn origin(&self, i: usize) -> Option<(u32, i16)> {
        self.origins.get(i).copied().flatten()
    }
}

/// The FROM items of one query level.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Items in order.
    pub entries: Vec<Entry>,
    /// Width of the flat row.
    pub width: usize,
    /// Columns merged by `JOIN ... USING` / `NATURAL JOIN`, in USING order:
    /// an unqualified name means the merged column, and `*` shows each once,
    /// before its join's columns, as PostgreSQL does.
    pub merged: Vec<Merged>,
}

/// State of aggregate binding for the current SELECT.
#[derive(Debug, Clone, Default)]
pub struct AggState {
    /// GROUP BY expressions as written (matched structurally).
    pub group_asts: Vec<Expr>,
    /// Their types.
    pub group_types: Vec<Ty>,
    /// Collected aggregate calls.
    pub calls: Vec<crate::plan::AggCall>,
    /// Result types of the calls.
    pub call_types: Vec<Ty>,
}

/// A SELECT's bound select list and the clauses bound against it.
struct SelectList {
    /// Visible columns, then hidden ones (ORDER BY, DISTINCT ON keys).
    projection: Vec<BExpr>,
    /// The visible columns.
    cols: Vec<OutCol>,
    having: Option<BExpr>,
    order: Vec<SortKey>,
    distinct_on: Option<crate::plan::DistinctOn>,
}

/// Binds statements against a catalog snapshot.
pub struct Binder<'c> {
    /// Catalog snapshot.
    pub cat: &'c Catalog,
    /// Scans the statement needs, prefetched before execution.
    pub scans: Vec<ScanReq>,
    /// Scope stack: enclosing query levels, current last.
    pub scopes: Vec<Scope>,
    /// CTE stack.
    pub ctes: Vec<HashMap<String, Arc<QueryPlan>>>,
    /// Aggregate state of the current level.
    pub agg: Option<AggState>,
    /// Transaction timestamp (NOW()).
    pub now: i64,
    /// Backend pid reported by pg_backend_pid().
    pub pid: i32,
    /// Lowest scope index referenced (correlation detection).
    pub lowest_scope: usize,
    /// The scope indexes (below 64) columns were read from, for LATERAL.
    pub levels_read: u64,
    /// The width of the current query level's scope where its FROM list
    /// starts (the columns of an UPDATE's target come first).
    pub from_start: usize,
    /// Next subquery id.
    pub next_sub: usize,
    /// Scope levels whose rows are replaced by aggregation (subqueries may
    /// not reference their FROM columns).
    pub grouped_levels: Vec<usize>,
    /// Whether the statement reads the transaction's time (`now()` and its
    /// synonyms), so its result differs from one transaction to the next.
    pub reads_time: bool,
    /// The parameters of a statement being prepared (`None` when running a
    /// statement, whose parameters are already values).
    pub params: Option<crate::plan::params::ParamTypes>,
    /// Window calls of the SELECT whose select list and ORDER BY are being
    /// bound (`None` where window functions are not allowed), and the width
    /// of its rows before them.
    pub windows: Option<(usize, Vec<crate::plan::WindowCall>)>,
    /// Whether the SELECT being bound groups its rows (window functions over
    /// grouped rows are not supported yet: 0A000 rather than 42P20).
    pub grouped_select: bool,
    /// Set-returning calls of the select list being bound (`None` where
    /// they are not allowed).
    pub set_calls: Option<Vec<crate::plan::SetCall>>,
    /// How many recursive terms of recursive CTEs are being bound.
    pub recursive_terms: usize,
    /// Table columns that the derived FROM items of these aliases stand
    /// for (RETURNING lists are bound over stand-ins for the target table),
    /// so that result columns read from them name the table's columns.
    pub derived_origins: HashMap<String, Vec<Option<(u32, i16)>>>,
    /// CTEs that read columns of enclosing queries (by plan address), and
    /// the scope depth from which they may be read.
    pub correlated_ctes: HashMap<usize, usize>,
    /// Whether the next query bound is the statement's top-level query,
    /// which may lock rows (`SELECT ... FOR UPDATE`); cleared when it is.
    pub lock_allowed: bool,
    /// The row locks of the top-level query, once bound.
    pub locking: Option<locking::LockPlan>,
    /// Locking clauses for the next SELECT bound (the top-level query's).
    pending_locks: Option<Vec<locking::Clause>>,
}

/// Whether an expression contains an aggregate call at this query level.
pub fn has_aggregate(e: &Expr) -> bool {
    match e {
        Expr::Function(f) => {
            let n = f
                .name
                .0
                .last()
                .map(|p| p.to_string().to_lowercase())
                .unwrap_or_default();
            (n == "count" || crate::plan::aggregate_named(&n).is_some()) && f.over.is_none()
                || match &f.args {
                    sqlparser::ast::FunctionArguments::List(l) => l.args.iter().any(|a| match a {
                        sqlparser::ast::FunctionArg::Unnamed(
                            sqlparser::ast::FunctionArgExpr::Expr(x),
                        ) => has_aggregate(x),
                        _ => false,
                    }),
                    _ => false,
                }
        }
        Expr::BinaryOp { left, right, .. } => has_aggregate(left) || has_aggregate(right),
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::Cast { expr, .. }
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::Collate { expr, .. } => has_aggregate(expr),
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            operand.as_deref().is_some_and(has_aggregate)
                || conditions
                    .iter()
                    .any(|c| has_aggregate(&c.condition) || has_aggregate(&c.result))
                || else_result.as_deref().is_some_and(has_aggregate)
        }
        Expr::In {
            expr,
            target: sqlparser::ast::InTarget::List(list),
            ..
        } => has_aggregate(expr) || list.iter().any(has_aggregate),
        Expr::Between {
            expr, low, high, ..
        } => has_aggregate(expr) || has_aggregate(low) || has_aggregate(high),
        _ => false,
    }
}

impl<'c> Binder<'c> {
    /// A binder over `cat` with the transaction's NOW().
    pub fn new(cat: &'c Catalog, now: i64, pid: i32) -> Self {
        Binder {
            cat,
            scans: Vec::new(),
            scopes: Vec::new(),
            ctes: Vec::new(),
            agg: None,
            now,
            pid,
            lowest_scope: usize::MAX,
            levels_read: 0,
            from_start: 0,
            next_sub: 0,
            grouped_levels: Vec::new(),
            reads_time: false,
            params: None,
            windows: None,
            grouped_select: false,
            set_calls: None,
            recursive_terms: 0,
            derived_origins: HashMap::new(),
            correlated_ctes: HashMap::new(),
            lock_allowed: false,
            locking: None,
            pending_locks: None,
        }
    }

    /// Current scope (pushing one if there is none).
    pub fn scope(&mut self) -> &mut Scope {
        if self.scopes.is_empty() {
            self.scopes.push(Scope::default());
        }
        self.scopes.last_mut().expect("scope")
    }

    /// Registers CTEs of a WITH clause as a new level of names (also when
    /// it fails: the caller pops the level).
    ///
    /// Each CTE sees the ones before it: the level is pushed first and
    /// filled in order, and plans are shared, never copied, so a chain of
    /// CTEs each reading the previous one binds in linear time.
    pub fn push_ctes(&mut self, q: &Query) -> Result<(), SqlError> {
        self.ctes.push(HashMap::new());
        let Some(with) = &q.with else {
            return Ok(());
        };
        for cte in &with.cte_tables {
            let depth = self.scopes.len();
            // Bound under a placeholder for the level whose FROM reads it,
            // as derived tables are, so that the enclosing levels are
            // numbered as they are when it runs there.
            self.scopes.push(Scope::default());
            let saved_lowest = std::mem::replace(&mut self.lowest_scope, usize::MAX);
            let plan = if with.recursive && recursive::is_self_referencing(cte) {
                self.bind_recursive_cte(cte)
            } else {
                self.bind_plain_cte(cte)
            };
            let outer_ref = self.lowest_scope < depth;
            self.lowest_scope = saved_lowest.min(self.lowest_scope);
            self.scopes.pop();
            let plan = plan?;
            if outer_ref {
                // Readable only from the FROM of the level that defines it.
                self.correlated_ctes
                    .insert(Arc::as_ptr(&plan) as usize, depth + 1);
            }
            self.ctes
                .last_mut()
                .expect("pushed above")
                .insert(fold(&cte.alias.name), plan);
        }
        Ok(())
    }

    /// A CTE that does not read itself, with its column aliases.
    fn bind_plain_cte(&mut self, cte: &sqlparser::ast::Cte) -> Result<Arc<QueryPlan>, SqlError> {
        let mut plan = self.bind_query(&cte.query)?;
        let available = plan.columns.len();
        if cte.alias.columns.len() > available {
            return Err(SqlError::new(
                SqlState::INVALID_COLUMN_REFERENCE,
                format!(
                    "WITH query \"{}\" has {available} columns available but {} columns specified",
                    cte.alias.name.value,
                    cte.alias.columns.len()
                ),
            ));
        }
        for (i, c) in cte.alias.columns.iter().enumerate() {
            plan.columns[i].name = fold(&c.name);
        }
        Ok(Arc::new(plan))
    }

    /// Binds a full query.
    pub fn bind_query(&mut self, q: &Query) -> Result<QueryPlan, SqlError> {
        crate::parse::check_stack()?;
        let may_lock = std::mem::take(&mut self.lock_allowed);
        let result = self
            .push_ctes(q)
            .and_then(|()| self.bind_query_inner(q, may_lock));
        self.ctes.pop();
        result
    }

    fn bind_query_inner(&mut self, q: &Query, may_lock: bool) -> Result<QueryPlan, SqlError> {
        self.pending_locks = self.lock_clauses(q, may_lock)?;
        let order_exprs = match &q.order_by {
            None => Vec::new(),
            Some(ob) => match &ob.kind {
                OrderByKind::Expressions(v) => v.clone(),
                OrderByKind::All(_) => {
                    return Err(SqlError::unsupported("ORDER BY ALL is not supported"))
                }
            },
        };
        let (body, columns, order) = match q.body.as_ref() {
            SetExpr::Select(sel) => {
                let (plan, cols, order) = self.bind_select(sel, &order_exprs)?;
                (SetPlan::Select(Box::new(plan)), cols, order)
            }
            other => {
                let (plan, cols) = self.bind_set_expr(other)?;
                let mut order = Vec::new();
                for o in &order_exprs {
                    let idx = output_index(&o.expr, &cols)?.ok_or_else(|| {
                        SqlError::unsupported(format!(
                            "ORDER BY {} on a set operation must name a result column",
                            o.expr
                        ))
                    })?;
                    order.push(sort_key(idx, o));
                }
                (plan, cols, order)
            }
        };
        let (limit, offset) = self.bind_limits(q)?;
        Ok(QueryPlan {
            body,
            order,
            limit,
            offset,
            columns,
        })
    }

    /// Binds a set expression (SELECT without ORDER BY, VALUES, UNION).
    pub fn bind_set_expr(&mut self, e: &SetExpr) -> Result<(SetPlan, Vec<OutCol>), SqlError> {
        match e {
            SetExpr::Select(sel) => {
                let (plan, cols, _) = self.bind_select(sel, &[])?;
                Ok((SetPlan::Select(Box::new(plan)), cols))
            }
            SetExpr::Query(q) => {
                let plan = self.bind_query(q)?;
                let cols = plan.columns.clone();
                let sub = self.sub_as_set(plan);
                Ok((sub, cols))
            }
            SetExpr::Values(v) => {
                self.bind_values(v.rows.iter().map(|r| r.content.as_slice()).collect())
            }
            SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => self.bind_set_operation(left, op, set_quantifier, right),
            other => Err(SqlError::unsupported(format!(
                "unsupported query body: {other}"
            ))),
        }
    }

    fn sub_as_set(&mut self, plan: QueryPlan) -> SetPlan {
        let width = plan.columns.len();
        SetPlan::Select(Box::new(SelectPlan {
            from: FromPlan::Derived(Arc::new(plan)),
            filter: None,
            agg: None,
            having: None,
            windows: Vec::new(),
            set_calls: Vec::new(),
            projection: (0..width).map(|idx| BExpr::Col { up: 0, idx }).collect(),
            distinct: false,
            distinct_on: None,
        }))
    }

    /// Binds VALUES rows, resolving each column to a common type (all-unknown → text).
    pub fn bind_values(&mut self, rows: Vec<&[Expr]>) -> Result<(SetPlan, Vec<OutCol>), SqlError> {
        let width = rows.first().map(|r| r.len()).unwrap_or(0);
        let mut bound: Vec<Vec<(BExpr, Ty)>> = Vec::new();
        for r in &rows {
            if r.len() != width {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "VALUES lists must all be the same length",
                ));
            }
            let mut out = Vec::new();
            for e in r.iter() {
                out.push(self.bind_expr(e)?);
            }
            bound.push(out);
        }
        let mut types: Vec<Ty> = vec![None; width];
        for r in &bound {
            for (i, (_, t)) in r.iter().enumerate() {
                types[i] = common_type(&types[i], t, "VALUES")?;
            }
        }
        let types: Vec<PgType> = types
            .into_iter()
            .map(|t| t.unwrap_or(PgType::Text))
            .collect();
        let mut out_rows = Vec::new();
        for r in bound {
            let mut row = Vec::new();
            for (i, (b, t)) in r.into_iter().enumerate() {
                row.push(self.coerce(b, &t, &types[i], "VALUES")?);
            }
            out_rows.push(row);
        }
        let cols = types
            .into_iter()
            .enumerate()
            .map(|(i, t)| OutCol {
                name: format!("column{}", i + 1),
                ty: Some(t),
                origin: None,
            })
            .collect();
        Ok((SetPlan::Values(out_rows), cols))
    }

    /// Binds one SELECT with its ORDER BY (which may add hidden columns).
    pub fn bind_select(
        &mut self,
        sel: &Select,
        order_by: &[sqlparser::ast::OrderByExpr],
    ) -> Result<(SelectPlan, Vec<OutCol>, Vec<SortKey>), SqlError> {
        if sel.top.is_some()
            || sel.into.is_some()
            || !sel.lateral_views.is_empty()
            || sel.qualify.is_some()
        {
            return Err(SqlError::unsupported(format!(
                "unsupported SELECT clause in: {sel}"
            )));
        }
        self.scopes.push(Scope::default());
        let saved_agg = self.agg.take();
        let result = self.bind_select_inner(sel, order_by);
        self.agg = saved_agg;
        self.scopes.pop();
        result
    }

    fn bind_select_inner(
        &mut self,
        sel: &Select,
        order_by: &[sqlparser::ast::OrderByExpr],
    ) -> Result<(SelectPlan, Vec<OutCol>, Vec<SortKey>), SqlError> {
        let locks = self.pending_locks.take();
        let (from, filter) = self.bind_from_where(sel)?;
        let group_exprs = match &sel.group_by {
            GroupByExpr::Expressions(v, m) if m.is_empty() => v.clone(),
            other => {
                return Err(SqlError::unsupported(format!(
                    "unsupported GROUP BY: {other}"
                )))
            }
        };
        let projection_asts: Vec<&Expr> = sel
            .projection
            .iter()
            .filter_map(|p| match p {
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
                _ => None,
            })
            .collect();
        let is_agg = !group_exprs.is_empty()
            || projection_asts.iter().any(|e| has_aggregate(e))
            || sel.having.as_ref().is_some_and(has_aggregate)
            || order_by.iter().any(|o| has_aggregate(&o.expr));
        let agg_group = if is_agg {
            let (group, state) = self.bind_group_by(sel, &group_exprs, &projection_asts)?;
            self.agg = Some(state);
            group
        } else {
            Vec::new()
        };
        let width = self.scope().width;
        let outer_windows = match is_agg {
            // Window functions over grouped rows are not supported yet.
            true => self.windows.take(),
            false => self.windows.replace((width, Vec::new())),
        };
        let outer_grouped = std::mem::replace(&mut self.grouped_select, is_agg);
        let outer_set_calls = self.set_calls.replace(Vec::new());
        let bound = self.bind_select_list(sel, is_agg, order_by, &projection_asts);
        self.grouped_select = outer_grouped;
        let set_calls = std::mem::replace(&mut self.set_calls, outer_set_calls).unwrap_or_default();
        let windows = std::mem::replace(&mut self.windows, outer_windows)
            .map(|(_, calls)| calls)
            .unwrap_or_default();
        let SelectList {
            mut projection,
            cols,
            having,
            order,
            distinct_on,
        } = bound?;
        if !set_calls.is_empty() {
            // Set-returning calls add their columns after every other
            // column of the rows the projection reads.
            let width = match &self.agg {
                Some(state) if is_agg => state.group_asts.len() + state.calls.len(),
                _ => width + windows.len(),
            };
            for e in &mut projection {
                arrays::place_set_calls(e, width);
            }
        }
        let distinct = matches!(sel.distinct, Some(Distinct::Distinct));
        if distinct && projection.len() > cols.len() {
            return Err(SqlError::new(
                SqlState::INVALID_COLUMN_REFERENCE,
                "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
            ));
        }
        let agg = if is_agg {
            let state = self.agg.take().unwrap_or_default();
            Some(AggPlan {
                group: agg_group,
                calls: state.calls,
            })
        } else {
            None
        };
        if let (FromPlan::Scan(id), None, Some(agg)) = (&from, &filter, &agg) {
            self.scans[*id].filter.extreme = single_extreme(agg);
        }
        let mut plan = SelectPlan {
            from,
            filter,
            agg,
            having,
            windows,
            set_calls,
            projection,
            distinct,
            distinct_on,
        };
        if let Some(clauses) = locks {
            self.lock_select(clauses, &mut plan)?;
        }
        self.narrow_rows(&mut plan);
        Ok((plan, cols, order))
    }

    /// FROM and WHERE, with the WHERE's conjuncts pushed down to the scan
    /// or into the inner joins whose rows they can bound.
    fn bind_from_where(&mut self, sel: &Select) -> Result<(FromPlan, Option<BExpr>), SqlError> {
        let mut from = self.bind_from(&sel.from)?;
        let filter = match &sel.selection {
            Some(w) => Some(self.bind_bool(w, "WHERE")?),
            None => None,
        };
        if let (FromPlan::Scan(id), Some(f)) = (&from, &filter) {
            self.push_down(*id, f);
        }
        if let Some(f) = &filter {
            self.attach_to_inner_joins(&mut from, f);
        }
        self.plan_catalog_lookups(&mut from, filter.as_ref());
        Ok((from, filter))
    }

    /// The select list, HAVING, ORDER BY and DISTINCT ON of a SELECT, in
    /// that order (window functions are allowed in all but HAVING).
    fn bind_select_list(
        &mut self,
        sel: &Select,
        is_agg: bool,
        order_by: &[sqlparser::ast::OrderByExpr],
        projection_asts: &[&Expr],
    ) -> Result<SelectList, SqlError> {
        let (mut projection, cols) = self.bind_projection(sel, is_agg)?;
        // Window functions are not allowed in HAVING (42P20).
        let windows = self.windows.take();
        let set_calls = self.set_calls.take();
        let grouped = std::mem::replace(&mut self.grouped_select, false);
        let having = sel.having.as_ref().map(|h| self.bind_bool(h, "HAVING"));
        self.windows = windows;
        self.set_calls = set_calls;
        self.grouped_select = grouped;
        let having = having.transpose()?;
        let order = self.bind_order_by(order_by, &cols, projection_asts, &mut projection)?;
        let distinct_on = match &sel.distinct {
            Some(Distinct::On(exprs)) => Some(self.bind_distinct_on(
                exprs,
                (order_by, &order),
                &cols,
                projection_asts,
                &mut projection,
            )?),
            _ => None,
        };
        Ok(SelectList {
            projection,
            cols,
            having,
            order,
            distinct_on,
        })
    }

    /// The GROUP BY keys (an ordinal names a select item, an output alias
    /// its expression, as in PostgreSQL) and the aggregate state that the
    /// projection and HAVING bind against.
    fn bind_group_by(
        &mut self,
        sel: &Select,
        group_exprs: &[Expr],
        projection_asts: &[&Expr],
    ) -> Result<(Vec<BExpr>, AggState), SqlError> {
        let mut state = AggState::default();
        let mut group = Vec::new();
        for g in group_exprs {
            let g = match g {
                Expr::Value(v) => match &v.value {
                    Value::Number(n, _) => {
                        let i: usize = n.parse().unwrap_or(0);
                        projection_asts
                            .get(i.wrapping_sub(1))
                            .map(|e| (*e).clone())
                            .ok_or_else(|| {
                                SqlError::new(
                                    SqlState::INVALID_COLUMN_REFERENCE,
                                    format!("GROUP BY position {n} is not in select list"),
                                )
                            })?
                    }
                    _ => g.clone(),
                },
                _ => g.clone(),
            };
            let (g, (b, t)) = match self.bind_expr(&g) {
                Ok(bound) => (g, bound),
                // PostgreSQL also accepts an output-column alias in GROUP BY.
                Err(e) if e.code == SqlState::UNDEFINED_COLUMN => {
                    let aliased = match &g {
                        Expr::Identifier(id) => sel.projection.iter().find_map(|p| match p {
                            SelectItem::ExprWithAlias { expr, alias }
                                if fold(alias) == fold(id) =>
                            {
                                Some(expr.clone())
                            }
                            _ => None,
                        }),
                        _ => None,
                    };
                    match aliased {
                        Some(x) => {
                            let bound = self.bind_expr(&x)?;
                            (x, bound)
                        }
                        None => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            };
            group.push(b);
            state.group_asts.push(g);
            state.group_types.push(t);
        }
        Ok((group, state))
    }
}

/// `max(col)` or `min(col)` as the only aggregate, without GROUP BY: the one
/// row of its scan that the statement needs (see `ScanFilter::extreme`).
fn single_extreme(agg: &AggPlan) -> Option<Extreme> {
    match (agg.group.as_slice(), agg.calls.as_slice()) {
        ([], [call]) if call.filter.is_none() => match (call.func, call.args.as_slice()) {
            (func @ (AggFunc::Max | AggFunc::Min), [BExpr::Col { up: 0, idx }]) => Some(Extreme {
                column: *idx,
                largest: func == AggFunc::Max,
            }),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    fn expr(sql: &str) -> Expr {
        Parser::new(&PostgreSqlDialect {})
            .try_with_sql(sql)
            .unwrap()
            .parse_expr()
            .unwrap()
    }

    #[test]
    fn detects_aggregates() {
        assert!(has_aggregate(&expr("count(*) + 1")));
        assert!(has_aggregate(&expr("coalesce(max(a), 0)")));
        assert!(!has_aggregate(&expr("lower(a)")));
    }
}
