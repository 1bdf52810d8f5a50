//! Binding of FROM clauses: relation lookup (CTE, stored table, virtual
//! catalog table), joins with equi-condition extraction, and predicate
//! push-down to storage scans.

use std::sync::Arc;

use rocklake_types::datum::{Datum, PgType};
use sqlparser::ast::{Expr, JoinConstraint, Statement, TableFactor, TableWithJoins};

use crate::bind::joins::{check_full_join, join_kind};
use crate::bind::{Binder, Entry, EntryKind};
use crate::catalog::{pg_attnum, VirtualTable};
use crate::ident::{fold, name_parts};
use crate::plan::{BExpr, CmpOp, FromPlan, JoinKind, QueryPlan, ScanReq, ScanSource, SetPlan, Ty};
use crate::storage::{ColumnBound, RelationDef, ScanFilter};
use rocklake_types::{SqlError, SqlState};

impl Binder<'_> {
    /// Binds a FROM list (comma joins become inner joins). An item with
    /// joins after a comma joins onto everything before it: `a, b LEFT JOIN
    /// c ON (b.x = c.x)` is `(a CROSS JOIN b) LEFT JOIN c ON ...`, the same
    /// rows, as the ON condition may only name `b` and `c`.
    pub fn bind_from(&mut self, items: &[TableWithJoins]) -> Result<FromPlan, SqlError> {
        let width = self.scope().width;
        let saved_start = std::mem::replace(&mut self.from_start, width);
        let mut bound = || {
            let mut acc: Option<FromPlan> = None;
            for item in items {
                acc = Some(self.bind_table_with_joins_onto(acc, item)?);
            }
            Ok(acc.unwrap_or(FromPlan::Empty))
        };
        let result = bound();
        self.from_start = saved_start;
        result
    }

    pub(crate) fn bind_table_with_joins(
        &mut self,
        t: &TableWithJoins,
    ) -> Result<FromPlan, SqlError> {
        self.bind_table_with_joins_onto(None, t)
    }

    /// Binds `t`, cross-joined onto `before` (the comma items before it).
    fn bind_table_with_joins_onto(
        &mut self,
        before: Option<FromPlan>,
        t: &TableWithJoins,
    ) -> Result<FromPlan, SqlError> {
        let start = self.scope().width;
        if let Some(left) = before {
            if self.needs_own_rows(t)? {
                // `a, b RIGHT JOIN c` is `a CROSS JOIN (b RIGHT JOIN c)`,
                // which a join onto `a CROSS JOIN b` is not; USING and
                // NATURAL name the columns of `b` and `c` alone.
                let item = self.bind_table_with_joins_onto(None, t)?;
                return Ok(FromPlan::Join {
                    left: Box::new(left),
                    right: Box::new(item),
                    kind: JoinKind::Inner,
                    on: None,
                    left_width: start,
                    right_width: self.scope().width - start,
                    equi: Vec::new(),
                });
            }
            // Inner and left joins onto the comma items before them.
            return self.bind_joins_onto(Some(left), t);
        }
        self.bind_joins_onto(None, t)
    }

    /// Whether a comma item `t` must be joined as a whole (not its first
    /// item alone onto the items before it): it has a RIGHT or FULL join,
    /// or one with USING or NATURAL.
    fn needs_own_rows(&self, t: &TableWithJoins) -> Result<bool, SqlError> {
        for j in &t.joins {
            let (kind, constraint) = join_kind(&j.join_operator)?;
            if matches!(kind, JoinKind::Right | JoinKind::Full)
                || !matches!(
                    constraint,
                    Some(JoinConstraint::On(_) | JoinConstraint::None) | None
                )
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Binds `t`, its first item cross-joined onto `before` when given:
    /// `a, b JOIN c` as `(a CROSS JOIN b) JOIN c`, the same rows for inner
    /// and left joins, as the ON condition may only name `b` and `c`.
    fn bind_joins_onto(
        &mut self,
        before: Option<FromPlan>,
        t: &TableWithJoins,
    ) -> Result<FromPlan, SqlError> {
        let start = self.scope().width;
        // Widths below count from the start of what `acc` holds.
        let base = if before.is_some() { 0 } else { start };
        let factor = self.bind_factor(&t.relation)?;
        let mut acc = match before {
            None => factor,
            Some(left) => FromPlan::Join {
                left: Box::new(left),
                right: Box::new(factor),
                kind: JoinKind::Inner,
                on: None,
                left_width: start,
                right_width: self.scope().width - start,
                equi: Vec::new(),
            },
        };
        for j in &t.joins {
            let left_width = self.scope().width - base;
            let right = self.bind_factor(&j.relation)?;
            let right_width = self.scope().width - base - left_width;
            let (kind, constraint) = join_kind(&j.join_operator)?;
            let widths = (base, left_width, right_width);
            let on = match constraint {
                Some(JoinConstraint::On(e)) => Some(self.bind_bool(e, "JOIN/ON")?),
                Some(JoinConstraint::None) | None => None,
                Some(JoinConstraint::Using(names)) => {
                    let names = names
                        .iter()
                        .map(|n| Ok(name_parts(n)?.pop().unwrap_or_default()))
                        .collect::<Result<Vec<_>, SqlError>>()?;
                    Some(self.merge_columns(&names, kind, widths)?)
                }
                Some(JoinConstraint::UsingAlias(..)) => {
                    return Err(SqlError::unsupported(
                        "JOIN ... USING (...) AS alias is not supported",
                    ))
                }
                Some(JoinConstraint::Natural) => {
                    let names = self.common_columns(base, left_width, right_width);
                    match names.is_empty() {
                        true => None,
                        false => Some(self.merge_columns(&names, kind, widths)?),
                    }
                }
            };
            // A join nested in parentheses (or after a comma) was bound
            // over the whole FROM row; its condition runs over its own rows.
            let equi = on
                .as_ref()
                .map(|o| self.equi_pairs_from(o, base, left_width))
                .unwrap_or_default();
            let on = match on {
                Some(on) if base != 0 => Some(self.nested_join_condition(on, base)?),
                on => on,
            };
            if kind == JoinKind::Full {
                check_full_join(on.as_ref(), left_width)?;
            }
            if base != 0 && matches!(right, FromPlan::Lateral(_)) {
                return Err(SqlError::unsupported(
                    "LATERAL inside a parenthesized join is not supported",
                ));
            }
            if matches!(right, FromPlan::Lateral(_))
                && matches!(kind, JoinKind::Right | JoinKind::Full)
            {
                return Err(SqlError::new(
                    SqlState::INVALID_COLUMN_REFERENCE,
                    "invalid reference to FROM-clause entry: the combining JOIN type must be \
                     INNER or LEFT for a LATERAL reference",
                ));
            }
            acc = FromPlan::Join {
                left: Box::new(acc),
                right: Box::new(right),
                kind,
                on,
                left_width,
                right_width,
                equi,
            };
        }
        Ok(acc)
    }

    fn col_type(&self, idx: usize) -> Ty {
        let scope = self.scopes.last().cloned().unwrap_or_default();
        for e in &scope.entries {
            if idx >= e.offset && idx < e.offset + e.cols.len() {
                return e.cols[idx - e.offset].1.clone();
            }
            if e.ctid.is_some_and(|(c, _)| c == idx) {
                return Some(PgType::Tid);
            }
        }
        None
    }

    /// Equi-join column pairs of a join condition (hashable types only).
    pub fn equi_pairs(&self, on: &BExpr, left_width: usize) -> Vec<(usize, usize)> {
        self.equi_pairs_from(on, 0, left_width)
    }

    /// [`Self::equi_pairs`] of a join whose rows start at column `base` of
    /// the FROM row `on` is bound over: pairs relative to the join's sides.
    fn equi_pairs_from(&self, on: &BExpr, base: usize, left_width: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut stack = vec![on];
        while let Some(e) = stack.pop() {
            match e {
                BExpr::And(items) => stack.extend(items),
                BExpr::Cmp(CmpOp::Eq, a, b) => {
                    if let (BExpr::Col { up: 0, idx: x }, BExpr::Col { up: 0, idx: y }) =
                        (a.as_ref(), b.as_ref())
                    {
                        let (l, r) = if x < y { (*x, *y) } else { (*y, *x) };
                        let hashable = match (self.col_type(l), self.col_type(r)) {
                            (Some(a), Some(b)) => {
                                a == b
                                    || a.is_string() && b.is_string()
                                    || a.is_numeric()
                                        && b.is_numeric()
                                        && !matches!(
                                            a,
                                            PgType::Float4 | PgType::Float8 | PgType::Numeric(_)
                                        )
                                        && !matches!(
                                            b,
                                            PgType::Float4 | PgType::Float8 | PgType::Numeric(_)
                                        )
                            }
                            _ => false,
                        };
                        let split = base + left_width;
                        if l >= base && l < split && r >= split && hashable {
                            out.push((l - base, r - split));
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    fn bind_factor(&mut self, tf: &TableFactor) -> Result<FromPlan, SqlError> {
        match tf {
            TableFactor::Table {
                name,
                alias,
                args: Some(args),
                with_ordinality,
                ..
            } => {
                let mut exprs = Vec::with_capacity(args.args.len());
                for arg in &args.args {
                    match arg {
                        sqlparser::ast::FunctionArg::Unnamed(
                            sqlparser::ast::FunctionArgExpr::Expr(e),
                        ) => exprs.push(e),
                        other => {
                            return Err(SqlError::unsupported(format!(
                                "unsupported argument {other} of {name}"
                            )))
                        }
                    }
                }
                let parts = name_parts(name)?;
                let function = from_function_name(&parts)?;
                if self.scope().width > self.from_start && self.from_start == 0 {
                    // After other FROM items a function sees their columns
                    // (PostgreSQL's implicit LATERAL): bound as a LATERAL
                    // subquery.
                    let lateral = lateral_function(
                        name,
                        &exprs,
                        alias.as_ref(),
                        &function,
                        *with_ordinality,
                    )?;
                    return self.bind_factor(&lateral);
                }
                self.bind_from_function(&function, &exprs, alias.as_ref(), *with_ordinality)
            }
            TableFactor::UNNEST {
                alias,
                array_exprs,
                with_offset: false,
                with_ordinality: false,
                ..
            } if array_exprs.len() == 1 => {
                self.bind_from_function("unnest", &[&array_exprs[0]], alias.as_ref(), false)
            }
            TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => {
                let parts = name_parts(name)?;
                let (plan, cols, ctid, schema) = self.resolve_table(&parts)?;
                let tname = parts.last().cloned().unwrap_or_default();
                let scan = match (&plan, ctid) {
                    (FromPlan::Scan(id), true) => Some(*id),
                    _ => None,
                };
                let kind = match (&plan, ctid) {
                    (_, true) => EntryKind::Stored,
                    (FromPlan::Derived(_), _) => EntryKind::Cte,
                    _ => EntryKind::Virtual,
                };
                self.add_entry(alias.as_ref(), tname, schema, cols, (scan, kind))?;
                let origins = self.origins_of(&plan);
                self.set_last_origins(origins);
                Ok(plan)
            }
            TableFactor::Derived {
                lateral,
                subquery,
                alias,
                ..
            } => {
                // A derived table cannot see sibling FROM items: bind it under an
                // empty placeholder level (the executor passes an empty row for it).
                // A LATERAL one sees the items before it: their columns are the
                // level above its own (the executor passes each row of them).
                let mut lateral = *lateral && self.scope().width > self.from_start;
                if lateral && self.from_start > 0 {
                    // UPDATE ... FROM: the target's columns come first.
                    return Err(SqlError::unsupported(
                        "LATERAL in the FROM list of UPDATE is not supported",
                    ));
                }
                let saved = (!lateral).then(|| std::mem::take(self.scope()));
                let saved_agg = self.agg.take();
                let saved_levels = std::mem::take(&mut self.levels_read);
                let level = self.scopes.len();
                let plan = self.bind_query(subquery);
                // A LATERAL subquery that reads no column of the FROM items
                // before it (this level's) is a plain derived table.
                lateral &= level > 64 || (self.levels_read >> (level - 1)) & 1 == 1;
                self.levels_read |= saved_levels;
                self.agg = saved_agg;
                if let Some(saved) = saved {
                    *self.scope() = saved;
                }
                let plan = plan?;
                let cols = plan
                    .columns
                    .iter()
                    .map(|c| (c.name.clone(), c.ty.clone()))
                    .collect();
                let name = alias.as_ref().map(|a| fold(&a.name)).unwrap_or_default();
                let origins = self.derived_origins.get(&name).cloned();
                self.add_entry(
                    alias.as_ref(),
                    name,
                    None,
                    cols,
                    (None, EntryKind::Subquery),
                )?;
                let plan = match lateral {
                    true => FromPlan::Lateral(Arc::new(plan)),
                    false => FromPlan::Derived(Arc::new(plan)),
                };
                let origins = origins.unwrap_or_else(|| self.origins_of(&plan));
                self.set_last_origins(origins);
                Ok(plan)
            }
            TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                if alias.is_some() {
                    return Err(SqlError::unsupported(
                        "aliased parenthesized joins are not supported",
                    ));
                }
                self.bind_table_with_joins(table_with_joins)
            }
            other => Err(SqlError::unsupported(format!(
                "unsupported FROM item: {other}"
            ))),
        }
    }

    /// Adds a FROM function's columns to the scope.
    pub(super) fn add_function_entry(
        &mut self,
        alias: Option<&sqlparser::ast::TableAlias>,
        name: String,
        cols: Vec<(String, Ty)>,
    ) {
        // Never fails without a stored scan.
        let _ = self.add_entry(alias, name, None, cols, (None, EntryKind::Function));
    }

    fn add_entry(
        &mut self,
        alias: Option<&sqlparser::ast::TableAlias>,
        name: String,
        schema: Option<String>,
        mut cols: Vec<(String, Ty)>,
        (stored_scan, kind): (Option<usize>, EntryKind),
    ) -> Result<(), SqlError> {
        let alias_name = match alias {
            Some(a) => {
                for (i, c) in a.columns.iter().enumerate() {
                    if let Some(col) = cols.get_mut(i) {
                        col.0 = fold(&c.name);
                    }
                }
                fold(&a.name)
            }
            None => name,
        };
        let scope = self.scope();
        let offset = scope.width;
        let n = cols.len();
        scope.entries.push(Entry {
            alias: alias_name,
            schema: if alias.is_some() { None } else { schema },
            cols,
            offset,
            ctid: stored_scan.map(|scan| (offset + n, scan)),
            origins: Vec::new(),
            kind,
        });
        scope.width += n + usize::from(stored_scan.is_some());
        Ok(())
    }

    /// The table column each column of a FROM item reads as it is: a
    /// stored table's own columns, a `pg_catalog` table's by PostgreSQL's
    /// numbers, a subquery's (or CTE's) where it reads one.
    fn origins_of(&self, plan: &FromPlan) -> Vec<Option<(u32, i16)>> {
        match plan {
            FromPlan::Scan(id) => match self.scans.get(*id).map(|s| &s.source) {
                Some(ScanSource::Table(def)) => {
                    let oid = crate::catalog::Catalog::rel_oid(def);
                    (1..=def.columns.len())
                        .map(|n| i16::try_from(n).ok().map(|n| (oid, n)))
                        .collect()
                }
                Some(ScanSource::Virtual(table)) => {
                    let oid = table.oid();
                    table
                        .columns()
                        .iter()
                        .map(|c| pg_attnum(oid, &c.name).map(|n| (oid, n)))
                        .collect()
                }
                _ => Vec::new(),
            },
            FromPlan::Derived(sub) | FromPlan::Lateral(sub) => {
                sub.columns.iter().map(|c| c.origin).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Sets the origins of the FROM item added last.
    fn set_last_origins(&mut self, origins: Vec<Option<(u32, i16)>>) {
        if let Some(entry) = self.scope().entries.last_mut() {
            entry.origins = origins;
        }
    }

    /// The table column a select-list expression reads as it is: a plain
    /// (possibly qualified, parenthesized) reference to a column of this
    /// query level's FROM items that has one, as PostgreSQL marks result
    /// columns' origins; `None` for anything computed.
    pub(super) fn column_origin(&self, e: &sqlparser::ast::Expr) -> Option<(u32, i16)> {
        use sqlparser::ast::Expr;
        let parts: Vec<String> = match e {
            Expr::Nested(inner) => return self.column_origin(inner),
            Expr::Identifier(id) => vec![fold(id)],
            Expr::CompoundIdentifier(ids) => ids.iter().map(fold).collect(),
            _ => return None,
        };
        let (qual, schema, col) = match parts.as_slice() {
            [c] => (None, None, c),
            [t, c] => (Some(t), None, c),
            [s, t, c] => (Some(t), Some(s), c),
            _ => return None,
        };
        let scope = self.scopes.last()?;
        let mut hits = scope.entries.iter().filter_map(|entry| {
            if qual.is_some_and(|q| *q != entry.alias)
                || schema.is_some_and(|s| entry.schema.as_ref() != Some(s))
            {
                return None;
            }
            let i = entry.cols.iter().position(|(c, _)| c == col)?;
            let flat = entry.offset + i;
            if qual.is_none() {
                if scope.merged.iter().any(|m| m.right == flat) {
                    return None;
                }
                if let Some(merged) = scope.merged_column(flat) {
                    return Some(scope.expr_origin(&merged.expr));
                }
            }
            Some(entry.origin(i))
        });
        let origin = hits.next()?;
        hits.next().is_none().then_some(origin).flatten()
    }

    /// Resolves a relation name: CTE, stored table, or virtual catalog table.
    #[allow(clippy::type_complexity)]
    fn resolve_table(
        &mut self,
        parts: &[String],
    ) -> Result<(FromPlan, Vec<(String, Ty)>, bool, Option<String>), SqlError> {
        let (schema, name) = crate::ident::relation_name(parts, &self.cat.database)?;
        let (schema, name) = (schema.map(str::to_string), name.to_string());
        if schema.is_none() {
            for level in self.ctes.iter().rev() {
                if let Some(plan) = level.get(&name) {
                    let readable_at = self.correlated_ctes.get(&(Arc::as_ptr(plan) as usize));
                    if readable_at.is_some_and(|&depth| depth != self.scopes.len()) {
                        return Err(SqlError::unsupported(format!(
                            "WITH query \"{name}\" reads columns of an enclosing query: it can only be read in the FROM of the query it belongs to"
                        )));
                    }
                    let cols = plan
                        .columns
                        .iter()
                        .map(|c| (c.name.clone(), c.ty.clone()))
                        .collect();
                    return Ok((FromPlan::Derived(Arc::clone(plan)), cols, false, None));
                }
            }
        }
        let def = self.lookup_relation(schema.as_deref(), &name);
        if let Some(def) = def {
            let cols = def
                .columns
                .iter()
                .map(|c| (c.name.clone(), Some(c.pg_type.clone())))
                .collect();
            let s = def.schema.clone();
            self.scans.push(ScanReq {
                source: ScanSource::Table(def),
                filter: ScanFilter::default(),
                keyed_by: Vec::new(),
                reads_ctid: false,
                looked_up: false,
                columns: None,
            });
            return Ok((FromPlan::Scan(self.scans.len() - 1), cols, true, Some(s)));
        }
        if let Some(v) = VirtualTable::lookup(schema.as_deref(), &name) {
            if v == VirtualTable::Authid && !self.cat.roles.who().is_superuser() {
                return Err(SqlError::new(
                    SqlState::INSUFFICIENT_PRIVILEGE,
                    "permission denied for table pg_authid",
                ));
            }
            let cols = v
                .columns()
                .iter()
                .map(|c| (c.name.clone(), Some(c.pg_type.clone())))
                .collect();
            self.scans.push(ScanReq {
                source: ScanSource::Virtual(v),
                filter: ScanFilter::default(),
                keyed_by: Vec::new(),
                reads_ctid: false,
                looked_up: false,
                columns: None,
            });
            return Ok((FromPlan::Scan(self.scans.len() - 1), cols, false, schema));
        }
        let shown = match &schema {
            Some(s) => format!("{s}.{name}"),
            None => name,
        };
        Err(SqlError::new(
            SqlState::UNDEFINED_TABLE,
            format!("relation \"{shown}\" does not exist"),
        ))
    }

    /// A stored relation by (optional) schema and name.
    pub fn lookup_relation(&self, schema: Option<&str>, name: &str) -> Option<RelationDef> {
        self.cat.find_opt(schema, name).cloned()
    }

    /// Records simple `col op constant` conjuncts of `filter` as scan bounds.
    pub fn push_down(&mut self, scan: usize, filter: &BExpr) {
        let ncols = match &self.scans[scan].source {
            ScanSource::Table(def) => def.columns.len(),
            ScanSource::Virtual(table) => table.columns().len(),
            ScanSource::DatabaseSize | ScanSource::RelationSizes => return,
        };
        let mut bounds = Vec::new();
        let mut keyed_by = Vec::new();
        let mut stack = vec![filter];
        while let Some(e) = stack.pop() {
            match e {
                BExpr::And(items) => stack.extend(items),
                BExpr::Cmp(CmpOp::Eq, a, b)
                    if matches!(
                        (a.as_ref(), b.as_ref()),
                        (BExpr::Col { up: 0, .. }, BExpr::Scalar(_))
                            | (BExpr::Scalar(_), BExpr::Col { up: 0, .. })
                    ) =>
                {
                    let ((BExpr::Col { idx, .. }, BExpr::Scalar(sub))
                    | (BExpr::Scalar(sub), BExpr::Col { idx, .. })) = (a.as_ref(), b.as_ref())
                    else {
                        continue;
                    };
                    if *idx < ncols && !sub.correlated && self.reads_one_plain_scan(&sub.plan) {
                        keyed_by.push((*idx, sub.clone()));
                    }
                }
                BExpr::Cmp(op, a, b) => {
                    let (col, val, op) = match (a.as_ref(), b.as_ref()) {
                        (BExpr::Col { up: 0, idx }, BExpr::Const(d)) => (*idx, d, *op),
                        (BExpr::Const(d), BExpr::Col { up: 0, idx }) => (*idx, d, flip(*op)),
                        _ => continue,
                    };
                    if col >= ncols || val.is_null() {
                        continue;
                    }
                    let v = Some((val.clone(), true));
                    let x = Some((val.clone(), false));
                    let bound = match op {
                        CmpOp::Eq => ColumnBound::Eq(val.clone()),
                        CmpOp::Lt => ColumnBound::Range {
                            lower: None,
                            upper: x,
                        },
                        CmpOp::Le => ColumnBound::Range {
                            lower: None,
                            upper: v,
                        },
                        CmpOp::Gt => ColumnBound::Range {
                            lower: x,
                            upper: None,
                        },
                        CmpOp::Ge => ColumnBound::Range {
                            lower: v,
                            upper: None,
                        },
                        CmpOp::Ne => continue,
                    };
                    bounds.push((col, bound));
                }
                BExpr::InSet(a, set, false) => match a.as_ref() {
                    BExpr::Col { up: 0, idx } if *idx < ncols && !set.values.is_empty() => {
                        bounds.push((*idx, ColumnBound::In(set.values.clone())));
                    }
                    _ => {}
                },
                BExpr::InList(a, list, false) => {
                    if let BExpr::Col { up: 0, idx } = a.as_ref() {
                        let vals: Option<Vec<Datum>> = list
                            .iter()
                            .map(|x| match x {
                                BExpr::Const(d) if !d.is_null() => Some(d.clone()),
                                _ => None,
                            })
                            .collect();
                        if let (Some(vals), true) = (vals, *idx < ncols) {
                            bounds.push((*idx, ColumnBound::In(vals)));
                        }
                    }
                }
                _ => {}
            }
        }
        self.scans[scan].filter.bounds = bounds;
        self.scans[scan].keyed_by = keyed_by;
    }

    /// Whether `plan` is one SELECT over one scan whose rows need nothing else
    /// prefetched first (no subqueries, no subquery-keyed scan), so it can run
    /// before the scans it keys.
    fn reads_one_plain_scan(&self, plan: &QueryPlan) -> bool {
        let SetPlan::Select(select) = &plan.body else {
            return false;
        };
        let FromPlan::Scan(id) = select.from else {
            return false;
        };
        self.scans[id].keyed_by.is_empty()
            && plan.limit.is_none()
            && plan.offset.is_none()
            && !select.filter.as_ref().is_some_and(has_subquery)
            && !select.having.as_ref().is_some_and(has_subquery)
            && !select.projection.iter().any(has_subquery)
            && select.agg.as_ref().is_none_or(|agg| {
                !agg.group.iter().any(has_subquery)
                    && !agg
                        .calls
                        .iter()
                        .flat_map(|call| call.args.iter().chain(call.filter.iter()))
                        .any(has_subquery)
            })
    }
}

fn has_subquery(e: &BExpr) -> bool {
    e.has_subquery()
}

fn flip(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        other => other,
    }
}

/// A function in FROM after other items, as a LATERAL subquery:
/// `LATERAL (SELECT * FROM name(args) AS alias) AS alias` for a
/// set-returning one (its columns as in the first place), `LATERAL
/// (SELECT name(args) AS column) AS alias` for another (its column named by
/// the alias's column list, else the alias, else the function).
fn lateral_function(
    name: &sqlparser::ast::ObjectName,
    args: &[&Expr],
    alias: Option<&sqlparser::ast::TableAlias>,
    function: &str,
    with_ordinality: bool,
) -> Result<TableFactor, SqlError> {
    let inner_alias = match alias {
        Some(a) => a.to_string(),
        None => format!("AS {}", sqlparser::ast::Ident::with_quote('"', function)),
    };
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let ordinality = if with_ordinality {
        " WITH ORDINALITY"
    } else {
        ""
    };
    let sql = if super::arrays::is_set_function(function) {
        format!(
            "SELECT * FROM {name}({}){ordinality} {inner_alias}",
            args.join(", ")
        )
    } else {
        // Any other function: its one value, named by the alias.
        let column = alias
            .and_then(|a| a.columns.first().map(|c| c.name.clone()))
            .or_else(|| alias.map(|a| a.name.clone()))
            .unwrap_or_else(|| sqlparser::ast::Ident::with_quote('"', function));
        format!("SELECT {name}({}) AS {column}", args.join(", "))
    };
    let Some(Statement::Query(query)) = crate::parse::parse(&sql)?.into_iter().next() else {
        return Err(SqlError::unsupported(format!("function {name} in FROM")));
    };
    // The columns are named inside; outside only the item.
    let alias = sqlparser::ast::TableAlias {
        explicit: true,
        name: alias.map_or_else(
            || sqlparser::ast::Ident::with_quote('"', function),
            |a| a.name.clone(),
        ),
        columns: Vec::new(),
        at: None,
    };
    Ok(TableFactor::Derived {
        lateral: true,
        subquery: query,
        alias: Some(alias),
        sample: None,
    })
}

/// The function a FROM item names (`pg_catalog.` optional).
fn from_function_name(parts: &[String]) -> Result<String, SqlError> {
    match parts {
        [n] => Ok(n.clone()),
        [s, n] if s == "pg_catalog" => Ok(n.clone()),
        [s, n] if s == "information_schema" && n == "_pg_expandarray" => {
            Ok(super::arrays::EXPAND_ARRAY.to_string())
        }
        _ => Err(SqlError::new(
            SqlState::UNDEFINED_FUNCTION,
            format!("function {} does not exist", parts.join(".")),
        )),
    }
}
