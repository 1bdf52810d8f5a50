//! INSERT, UPDATE and DELETE: bound with the query binder, run by the executor,
//! then applied through the [`StorageTxn`].

mod conflict;
pub(crate) mod keys;
pub(crate) mod returning;

use std::collections::HashSet;

use rocklake_types::datum::{Datum, Row};
use sqlparser::ast::{
    AssignmentTarget, Delete, FromTable, Insert, ObjectName, Query, SetExpr, TableObject, Update,
    UpdateTableFromKind,
};

use crate::bind::{Binder, Scope};
use crate::catalog::{Catalog, VirtualTable};
use crate::exec::cast::assign;
use crate::exec::fetch::prefetch;
use crate::exec::select::{run_query, select_stream};
use crate::exec::stream::collect;
use crate::exec::ExecCtx;
use crate::exec::StmtEnv;
use crate::ident::name_parts;
use crate::plan::{BExpr, FromPlan, JoinKind, SelectPlan};
use rocklake_types::output::QueryOutput;
use rocklake_types::rows::RowId;
use rocklake_types::{SqlError, SqlState};

use crate::storage::{RelationDef, StorageTxn};
use returning::{finish, target_alias, RowExpressions};
use rocklake_types::value::text::{format_text, parse_text};

/// The stored relation a DML statement targets.
pub fn resolve_target(cat: &Catalog, name: &ObjectName) -> Result<RelationDef, SqlError> {
    let parts = name_parts(name)?;
    let (schema, rel) = crate::ident::relation_name(&parts, &cat.database)?;
    let (schema, rel) = (schema.map(str::to_string), rel.to_string());
    if let Some(def) = cat.find_opt(schema.as_deref(), &rel) {
        return Ok(def.clone());
    }
    if VirtualTable::lookup(schema.as_deref(), &rel).is_some() {
        return Err(SqlError::new(
            SqlState::WRONG_OBJECT_TYPE,
            format!("cannot change relation \"{rel}\""),
        ));
    }
    let shown = schema.map(|s| format!("{s}.{rel}")).unwrap_or(rel);
    Err(SqlError::new(
        SqlState::UNDEFINED_TABLE,
        format!("relation \"{shown}\" does not exist"),
    ))
}

/// Fails with 23502 when a NOT NULL (or primary-key) column is NULL.
pub fn check_not_null(def: &RelationDef, row: &Row) -> Result<(), SqlError> {
    for (i, c) in def.columns.iter().enumerate() {
        if (c.not_null || def.primary_key.contains(&i)) && row[i].is_null() {
            let shown: Vec<String> = row
                .iter()
                .map(|d| format_text(d).unwrap_or_else(|| "null".into()))
                .collect();
            let mut e = SqlError::new(
                SqlState::NOT_NULL_VIOLATION,
                format!(
                    "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                    c.name, def.name
                ),
            )
            .with_detail(format!("Failing row contains ({}).", shown.join(", ")));
            e.schema = Some(def.schema.clone());
            e.table = Some(def.name.clone());
            return Err(e);
        }
    }
    Ok(())
}

/// Resolves column names of a target list to indexes.
pub(crate) fn target_columns(
    def: &RelationDef,
    names: &[ObjectName],
) -> Result<Vec<usize>, SqlError> {
    if names.is_empty() {
        return Ok((0..def.columns.len()).collect());
    }
    names
        .iter()
        .map(|n| {
            let c = name_parts(n)?.last().cloned().unwrap_or_default();
            def.column_index(&c).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{c}\" of relation \"{}\" does not exist", def.name),
                )
            })
        })
        .collect()
}

/// Builds full rows from values for `targets`, casting and NOT NULL checking.
pub fn complete_rows(
    def: &RelationDef,
    targets: &[usize],
    rows: Vec<Row>,
) -> Result<Vec<Row>, SqlError> {
    let defaults = def
        .columns
        .iter()
        .map(|c| match &c.default {
            Some(text) => parse_text(text, &c.pg_type),
            None => Ok(Datum::Null),
        })
        .collect::<Result<Vec<_>, SqlError>>()?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let mut full = defaults.clone();
        for (v, &i) in r.into_iter().zip(targets) {
            full[i] = assign(v, &def.columns[i].pg_type).map_err(|e| {
                SqlError::new(
                    e.code,
                    format!("{} (column \"{}\")", e.message, def.columns[i].name),
                )
            })?;
        }
        check_not_null(def, &full)?;
        out.push(full);
    }
    Ok(out)
}

/// Executes INSERT ... VALUES / INSERT ... SELECT.
pub async fn insert(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    ins: &Insert,
) -> Result<QueryOutput, SqlError> {
    if matches!(
        ins.on,
        Some(sqlparser::ast::OnInsert::DuplicateKeyUpdate(_))
    ) || ins.or.is_some()
        || ins.ignore
        || ins.overwrite
    {
        return Err(SqlError::unsupported(format!(
            "unsupported INSERT clause in: {ins}"
        )));
    }
    let TableObject::TableName(name) = &ins.table else {
        return Err(SqlError::unsupported(
            "INSERT INTO a table function is not supported",
        ));
    };
    let def = resolve_target(env.cat, name)?;
    let targets = target_columns(&def, &ins.columns)?;
    let alias = target_alias(&def, ins.table_alias.as_ref().map(|a| &a.alias));
    let returning = match &ins.returning {
        Some(items) => Some(RowExpressions::returning(env, &def, &alias, items)?),
        None => None,
    };
    let conflicts = match &ins.on {
        Some(sqlparser::ast::OnInsert::OnConflict(on)) => {
            Some(conflict::Conflicts::bind(env, &def, &alias, on)?)
        }
        _ => None,
    };
    let Some(source) = &ins.source else {
        return Err(SqlError::unsupported(
            "INSERT without VALUES or SELECT is not supported",
        ));
    };
    let mut b = Binder::new(env.cat, env.now, env.pid);
    let simple_values =
        source.with.is_none() && source.order_by.is_none() && source.limit_clause.is_none();
    let rows = match source.body.as_ref() {
        SetExpr::Values(v) if simple_values => {
            let mut bound = Vec::new();
            for r in &v.rows {
                if r.content.len() > targets.len() {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        "INSERT has more expressions than target columns",
                    ));
                }
                let mut row = Vec::new();
                for (e, &ci) in r.content.iter().zip(&targets) {
                    let (x, t) = b.bind_expr(e)?;
                    let col = &def.columns[ci];
                    row.push(
                        b.coerce(x, &t, &col.pg_type, &format!("column \"{}\"", col.name))
                            .map_err(|e| {
                                if e.code == SqlState::INVALID_TEXT_REPRESENTATION
                                    || e.code == SqlState::NUMERIC_VALUE_OUT_OF_RANGE
                                {
                                    e
                                } else {
                                    SqlError::new(
                                        e.code,
                                        format!("{} (column \"{}\")", e.message, col.name),
                                    )
                                }
                            })?,
                    );
                }
                bound.push(row);
            }
            let data = prefetch(txn, env.cat, &b.scans, false, env.limits).await?;
            let ctx = ExecCtx::new(&data, env.cat, env.limits);
            let mut rows = Vec::with_capacity(bound.len());
            for r in &bound {
                let mut row = Vec::with_capacity(r.len());
                for e in r {
                    row.push(crate::exec::eval::eval(
                        e,
                        &ctx,
                        crate::exec::Scope::top(&[]),
                    )?);
                }
                rows.push(row);
            }
            rows
        }
        _ => {
            let plan = b.bind_query(source)?;
            if plan.columns.len() > targets.len() {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "INSERT has more expressions than target columns",
                ));
            }
            let data = prefetch(txn, env.cat, &b.scans, false, env.limits).await?;
            let ctx = ExecCtx::new(&data, env.cat, env.limits);
            run_query(&plan, &ctx, &[])?
        }
    };
    let full = complete_rows(&def, &targets, rows)?;
    let changed = match conflicts {
        Some(conflicts) => conflicts.apply(txn, env, full).await?.changed,
        None => {
            let copy = if returning.is_some() {
                full.clone()
            } else {
                Vec::new()
            };
            let n = full.len();
            keys::check_inserts(txn, &def, &full).await?;
            if let Some(inserted) = &env.cat.inserted_snapshots {
                inserted.offer(&def, &full);
            }
            env.limits.unless_stopped(txn.insert(&def, full)).await?;
            if returning.is_none() {
                return Ok(QueryOutput::command(&format!("INSERT 0 {n}")));
            }
            copy
        }
    };
    let tag = format!("INSERT 0 {}", changed.len());
    finish(txn, env, returning.as_ref(), &changed, tag).await
}

fn single_table(
    items: &[sqlparser::ast::TableWithJoins],
    what: &str,
) -> Result<ObjectName, SqlError> {
    match items {
        [t] if t.joins.is_empty() => match &t.relation {
            sqlparser::ast::TableFactor::Table { name, .. } => Ok(name.clone()),
            other => Err(SqlError::unsupported(format!(
                "{what} target must be a table, not {other}"
            ))),
        },
        _ => Err(SqlError::unsupported(format!(
            "{what} of several tables is not supported"
        ))),
    }
}

fn tid_of(d: &Datum) -> Result<RowId, SqlError> {
    match d {
        Datum::Tid { block, offset } => {
            RowId::from_tid(*block, *offset).ok_or_else(|| SqlError::internal("invalid ctid"))
        }
        _ => Err(SqlError::internal("missing ctid")),
    }
}

/// The rows an UPDATE or DELETE visits: `plan` (over the target table and
/// the statement's other FROM items) run to completion, before any row is
/// changed (only the rows it keeps are held, see [`prefetch`]).
async fn target_rows(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    binder: &Binder<'_>,
    plan: &SelectPlan,
) -> Result<Vec<Row>, SqlError> {
    let data = prefetch(txn, env.cat, &binder.scans, false, env.limits).await?;
    let ctx = ExecCtx::new(&data, env.cat, env.limits);
    let (rows, _held) = collect(select_stream(plan, &ctx, Vec::new())?, &ctx)?;
    Ok(rows)
}

/// Executes UPDATE \[FROM\], optionally under a WITH clause (`with_query`).
pub async fn update(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    upd: &Update,
    with_query: Option<&Query>,
) -> Result<QueryOutput, SqlError> {
    if upd.or.is_some() || upd.limit.is_some() || !upd.order_by.is_empty() {
        return Err(SqlError::unsupported(format!(
            "unsupported UPDATE clause in: {upd}"
        )));
    }
    let name = single_table(std::slice::from_ref(&upd.table), "UPDATE")?;
    let def = resolve_target(env.cat, &name)?;
    let ncols = def.columns.len();
    let returning = match &upd.returning {
        Some(items) => {
            let alias = target_alias(&def, factor_alias(&upd.table.relation));
            Some(RowExpressions::returning(env, &def, &alias, items)?)
        }
        None => None,
    };
    let mut b = Binder::new(env.cat, env.now, env.pid);
    if let Some(q) = with_query {
        b.push_ctes(q)?;
    }
    b.scopes.push(Scope::default());
    let (from, filter) = bind_update_source(&mut b, upd, ncols)?;
    let (projection, set_cols) = bind_assignments(&mut b, upd, &def)?;
    let plan = SelectPlan::plain(from, filter, projection);
    let rows = target_rows(txn, env, &b, &plan).await?;
    let sets_key = set_cols.iter().any(|c| def.primary_key.contains(c));
    let mut seen = HashSet::new();
    let mut old = std::collections::HashMap::new();
    let mut updates = Vec::new();
    for r in rows {
        let id = tid_of(&r[0])?;
        if !seen.insert(id) {
            continue;
        }
        let mut new_row: Row = r[1..=ncols].to_vec();
        if sets_key {
            old.insert(id, new_row.clone());
        }
        for (j, &ci) in set_cols.iter().enumerate() {
            new_row[ci] = assign(r[ncols + 1 + j].clone(), &def.columns[ci].pg_type)?;
        }
        check_not_null(&def, &new_row)?;
        updates.push((id, new_row));
    }
    if sets_key {
        keys::check_updates(txn, &def, &old, &updates).await?;
    }
    let mut changed = Vec::new();
    for (id, new_row) in updates {
        if returning.is_some() {
            changed.push(new_row.clone());
        }
        env.limits
            .unless_stopped(txn.update(&def, id, new_row))
            .await?;
    }
    let tag = format!("UPDATE {}", seen.len());
    finish(txn, env, returning.as_ref(), &changed, tag).await
}

/// The alias of a FROM item, if it has one.
fn factor_alias(factor: &sqlparser::ast::TableFactor) -> Option<&sqlparser::ast::Ident> {
    match factor {
        sqlparser::ast::TableFactor::Table {
            alias: Some(alias), ..
        } => Some(&alias.name),
        _ => None,
    }
}

/// The rows an UPDATE reads: its target, joined with its FROM items, and
/// its WHERE (pushed down, or turned into equi-join pairs).
fn bind_update_source(
    b: &mut Binder<'_>,
    upd: &Update,
    ncols: usize,
) -> Result<(FromPlan, Option<BExpr>), SqlError> {
    let target = b.bind_from(std::slice::from_ref(&upd.table))?;
    let from = match &upd.from {
        None => target,
        Some(UpdateTableFromKind::AfterSet(items) | UpdateTableFromKind::BeforeSet(items)) => {
            let right = b.bind_from(items)?;
            let right_width = b.scope().width - (ncols + 1);
            FromPlan::Join {
                left: Box::new(target),
                right: Box::new(right),
                kind: JoinKind::Inner,
                on: None,
                left_width: ncols + 1,
                right_width,
                equi: Vec::new(),
            }
        }
    };
    let filter = match &upd.selection {
        Some(w) => Some(b.bind_bool(w, "WHERE")?),
        None => None,
    };
    let from = match (from, &filter) {
        (
            FromPlan::Join {
                left,
                right,
                kind,
                on,
                left_width,
                right_width,
                ..
            },
            Some(f),
        ) => {
            let equi = b.equi_pairs(f, left_width);
            FromPlan::Join {
                left,
                right,
                kind,
                on,
                left_width,
                right_width,
                equi,
            }
        }
        (FromPlan::Scan(id), Some(f)) => {
            b.push_down(id, f);
            FromPlan::Scan(id)
        }
        (other, _) => other,
    };
    Ok((from, filter))
}

/// The projection of an UPDATE's input (the row's `ctid`, its columns,
/// then each assigned value) and the columns the values go to.
fn bind_assignments(
    b: &mut Binder<'_>,
    upd: &Update,
    def: &RelationDef,
) -> Result<(Vec<BExpr>, Vec<usize>), SqlError> {
    let ncols = def.columns.len();
    let mut projection: Vec<BExpr> = (0..=ncols)
        .map(|idx| BExpr::Col {
            up: 0,
            idx: (idx + ncols) % (ncols + 1),
        })
        .collect();
    let mut set_cols = Vec::new();
    for a in &upd.assignments {
        let AssignmentTarget::ColumnName(cn) = &a.target else {
            return Err(SqlError::unsupported(
                "UPDATE of a column tuple is not supported",
            ));
        };
        let c = name_parts(cn)?.last().cloned().unwrap_or_default();
        let ci = def.column_index(&c).ok_or_else(|| {
            SqlError::new(
                SqlState::UNDEFINED_COLUMN,
                format!("column \"{c}\" of relation \"{}\" does not exist", def.name),
            )
        })?;
        let (x, t) = b.bind_expr(&a.value)?;
        projection.push(b.coerce(x, &t, &def.columns[ci].pg_type, &format!("column \"{c}\""))?);
        set_cols.push(ci);
    }
    Ok((projection, set_cols))
}

/// Executes DELETE FROM t [WHERE ...].
pub async fn delete(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    del: &Delete,
) -> Result<QueryOutput, SqlError> {
    if del.using.is_some()
        || del.limit.is_some()
        || !del.order_by.is_empty()
        || !del.tables.is_empty()
    {
        return Err(SqlError::unsupported(format!(
            "unsupported DELETE clause in: {del}"
        )));
    }
    let items = match &del.from {
        FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v) => v,
    };
    let name = single_table(items, "DELETE")?;
    let def = resolve_target(env.cat, &name)?;
    let returning = match &del.returning {
        Some(list) => {
            let alias = target_alias(&def, items.first().and_then(|t| factor_alias(&t.relation)));
            Some(RowExpressions::returning(env, &def, &alias, list)?)
        }
        None => None,
    };
    let mut b = Binder::new(env.cat, env.now, env.pid);
    b.scopes.push(Scope::default());
    let from = b.bind_from(items)?;
    let filter = match &del.selection {
        Some(w) => Some(b.bind_bool(w, "WHERE")?),
        None => None,
    };
    if let (FromPlan::Scan(id), Some(f)) = (&from, &filter) {
        b.push_down(*id, f);
    }
    // The ctid, then (for RETURNING) the row's values.
    let mut projection = vec![BExpr::Col {
        up: 0,
        idx: def.columns.len(),
    }];
    if returning.is_some() {
        projection.extend((0..def.columns.len()).map(|idx| BExpr::Col { up: 0, idx }));
    }
    let plan = SelectPlan::plain(from, filter, projection);
    let rows = target_rows(txn, env, &b, &plan).await?;
    let mut seen = HashSet::new();
    let mut deleted = Vec::new();
    for r in rows {
        let id = tid_of(&r[0])?;
        if seen.insert(id) {
            txn.delete(&def, id).await?;
            if returning.is_some() {
                deleted.push(r[1..].to_vec());
            }
        }
    }
    let tag = format!("DELETE {}", seen.len());
    finish(txn, env, returning.as_ref(), &deleted, tag).await
}

/// Column list of `COPY t [(cols)]` as indexes.
pub fn copy_targets(
    def: &RelationDef,
    cols: &[sqlparser::ast::Ident],
) -> Result<Vec<usize>, SqlError> {
    let names: Vec<ObjectName> = cols
        .iter()
        .map(|c| ObjectName::from(vec![c.clone()]))
        .collect();
    target_columns(def, &names)
}
