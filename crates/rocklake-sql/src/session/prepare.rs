//! Parse + Describe of one statement: its result columns and the types of
//! its parameters, found by binding it with the parameters as placeholders
//! (see [`crate::session::params`]).

use sqlparser::ast::{
    AssignmentTarget, Delete, FromTable, Insert, Query, SetExpr, Statement, Update,
    UpdateTableFromKind,
};

use crate::bind::Binder;
use crate::catalog::Catalog;
use crate::ident::name_parts;
use crate::parse;
use crate::plan::params::ParamTypes;
use crate::query::out_columns;
use crate::write::dml::returning::{target_alias, RowExpressions};
use crate::write::dml::{resolve_target, target_columns};
use rocklake_types::datum::ColumnDef;
use rocklake_types::SqlError;

/// Binds `statement` against `cat` to describe it; the parameters' inferred
/// types go to `params`. Statements other than queries and DML describe as
/// no columns, their parameters as declared.
pub(crate) fn describe(
    cat: &Catalog,
    now: i64,
    pid: i32,
    statement: &Statement,
    params: &mut ParamTypes,
) -> Result<Vec<ColumnDef>, SqlError> {
    let mut binder = Binder::new(cat, now, pid);
    binder.params = Some(std::mem::take(params));
    let described = match statement {
        Statement::Query(q) => match q.body.as_ref() {
            SetExpr::Update(Statement::Update(u)) => update(&mut binder, u).map(|()| Vec::new()),
            SetExpr::Insert(_) | SetExpr::Delete(_) | SetExpr::Update(_) => Ok(Vec::new()),
            _ => query(&mut binder, q),
        },
        Statement::Insert(insert) => self::insert(&mut binder, insert).and_then(|()| {
            let sqlparser::ast::TableObject::TableName(name) = &insert.table else {
                return Ok(Vec::new());
            };
            returning_columns(
                cat,
                now,
                pid,
                name,
                insert.table_alias.as_ref().map(|a| &a.alias),
                insert.returning.as_deref(),
            )
        }),
        Statement::Update(u) => update(&mut binder, u).and_then(|()| match &u.table.relation {
            sqlparser::ast::TableFactor::Table { name, alias, .. } => returning_columns(
                cat,
                now,
                pid,
                name,
                alias.as_ref().map(|a| &a.name),
                u.returning.as_deref(),
            ),
            _ => Ok(Vec::new()),
        }),
        Statement::Delete(d) => delete(&mut binder, d).and_then(|()| {
            let (FromTable::WithFromKeyword(tables) | FromTable::WithoutKeyword(tables)) = &d.from;
            match tables.first().map(|t| &t.relation) {
                Some(sqlparser::ast::TableFactor::Table { name, alias, .. }) => returning_columns(
                    cat,
                    now,
                    pid,
                    name,
                    alias.as_ref().map(|a| &a.name),
                    d.returning.as_deref(),
                ),
                _ => Ok(Vec::new()),
            }
        }),
        _ => Ok(Vec::new()),
    };
    *params = binder.params.take().unwrap_or_default();
    described
}

/// The columns of a DML statement's RETURNING list (none without one).
fn returning_columns(
    cat: &Catalog,
    now: i64,
    pid: i32,
    table: &sqlparser::ast::ObjectName,
    alias: Option<&sqlparser::ast::Ident>,
    items: Option<&[sqlparser::ast::SelectItem]>,
) -> Result<Vec<ColumnDef>, SqlError> {
    let Some(items) = items else {
        return Ok(Vec::new());
    };
    let def = resolve_target(cat, table)?;
    let alias = target_alias(&def, alias);
    let items: Vec<String> = items.iter().map(ToString::to_string).collect();
    let bound = RowExpressions::bind(cat, now, pid, &[(&def, &alias)], &items)?;
    Ok(bound.result_columns())
}

fn query(binder: &mut Binder, q: &Query) -> Result<Vec<ColumnDef>, SqlError> {
    binder.lock_allowed = true;
    let plan = binder.bind_query(q)?;
    Ok(out_columns(&plan.columns))
}

/// `INSERT ... VALUES`: each value is coerced to its target column's type
/// (as the INSERT itself does); `INSERT ... SELECT`: the query is bound.
fn insert(binder: &mut Binder, insert: &Insert) -> Result<(), SqlError> {
    let sqlparser::ast::TableObject::TableName(name) = &insert.table else {
        return Ok(());
    };
    let def = resolve_target(binder.cat, name)?;
    let targets = target_columns(&def, &insert.columns)?;
    let Some(source) = &insert.source else {
        return Ok(());
    };
    match source.body.as_ref() {
        SetExpr::Values(values) => {
            for row in &values.rows {
                for (expr, &column) in row.content.iter().zip(&targets) {
                    let (bound, ty) = binder.bind_expr(expr)?;
                    let column = &def.columns[column];
                    binder.coerce(bound, &ty, &column.pg_type, &column.name)?;
                }
            }
            Ok(())
        }
        _ => query(binder, source).map(|_| ()),
    }
}

/// Binds the conditions of an UPDATE or DELETE as the query
/// `SELECT <values> FROM <tables> WHERE <condition>`, whose scope is the
/// statement's, and coerces `SET column = $n` to the column's type.
fn update(binder: &mut Binder, update: &Update) -> Result<(), SqlError> {
    let def = match &update.table.relation {
        sqlparser::ast::TableFactor::Table { name, .. } => resolve_target(binder.cat, name)?,
        _ => return Ok(()),
    };
    let mut tables = vec![update.table.to_string()];
    if let Some(UpdateTableFromKind::AfterSet(from) | UpdateTableFromKind::BeforeSet(from)) =
        &update.from
    {
        tables.extend(from.iter().map(ToString::to_string));
    }
    let mut values = Vec::new();
    for assignment in &update.assignments {
        let AssignmentTarget::ColumnName(column) = &assignment.target else {
            continue;
        };
        let column = name_parts(column)?.pop().unwrap_or_default();
        if let Some(index) = def.column_index(&column) {
            values.push(format!(
                "CAST({} AS {})",
                assignment.value,
                def.columns[index].pg_type.type_name()
            ));
        }
    }
    bind_condition(binder, &values, &tables, update.selection.as_ref())
}

fn delete(binder: &mut Binder, delete: &Delete) -> Result<(), SqlError> {
    let (FromTable::WithFromKeyword(tables) | FromTable::WithoutKeyword(tables)) = &delete.from;
    let mut tables: Vec<String> = tables.iter().map(ToString::to_string).collect();
    if let Some(using) = &delete.using {
        tables.extend(using.iter().map(ToString::to_string));
    }
    bind_condition(binder, &[], &tables, delete.selection.as_ref())
}

fn bind_condition(
    binder: &mut Binder,
    values: &[String],
    tables: &[String],
    condition: Option<&sqlparser::ast::Expr>,
) -> Result<(), SqlError> {
    let projection = if values.is_empty() {
        "1".to_string()
    } else {
        values.join(", ")
    };
    let mut sql = format!("SELECT {projection} FROM {}", tables.join(", "));
    if let Some(condition) = condition {
        sql.push_str(&format!(" WHERE {condition}"));
    }
    let statements = parse::parse(&sql)?;
    match statements.first() {
        Some(Statement::Query(q)) => query(binder, q).map(|_| ()),
        _ => Ok(()),
    }
}
