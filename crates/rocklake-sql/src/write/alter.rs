//! ALTER TABLE, as PostgreSQL runs it, on any relation (DuckLake catalog
//! tables, inlined-data tables, other tables): the actions of one statement
//! apply in order inside the statement's transaction, so a ROLLBACK undoes
//! them. Storage changes only the relation's definition; rows are checked
//! (NOT NULL) or rewritten (a type change) here.

use sqlparser::ast::{
    AlterColumnOperation, AlterTable, AlterTableOperation, ColumnOption, Expr, Ident,
    RenameTableNameKind, UnaryOperator, Value,
};

use crate::bind::expr::pg_type_of;
use crate::bind::Binder;
use crate::exec::cast::assign;
use crate::exec::eval::eval;
use crate::exec::{ExecCtx, Scope, StmtEnv};
use crate::ident::{fold, name_parts};
use crate::storage::{RelationChange, RelationDef, ScanFilter, StorageTxn};
use crate::write::dml::resolve_target;
use rocklake_types::datum::{ColumnDef, Datum, PgType};
use rocklake_types::output::{Notice, QueryOutput};
use rocklake_types::value::text::format_text;
use rocklake_types::{SqlError, SqlState};

/// Executes `ALTER TABLE [IF EXISTS] name action [, ...]`.
pub async fn alter_table(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    at: &AlterTable,
) -> Result<QueryOutput, SqlError> {
    if at.location.is_some() || at.on_cluster.is_some() || at.table_type.is_some() {
        return Err(SqlError::unsupported(format!(
            "unsupported ALTER TABLE form: {at}"
        )));
    }
    let mut notices = Vec::new();
    let mut def = match resolve_target(env.cat, &at.name) {
        Ok(def) => def,
        Err(e) if at.if_exists && e.code == SqlState::UNDEFINED_TABLE => {
            let name = name_parts(&at.name)?.pop().unwrap_or_default();
            notices.push(Notice {
                code: SqlState::SUCCESSFUL_COMPLETION,
                message: format!("relation \"{name}\" does not exist, skipping"),
            });
            return Ok(done(notices));
        }
        Err(e) => return Err(e),
    };
    for operation in &at.operations {
        def = apply(txn, env, def, operation, &mut notices).await?;
    }
    Ok(done(notices))
}

fn done(notices: Vec<Notice>) -> QueryOutput {
    QueryOutput::Command {
        tag: "ALTER TABLE".into(),
        notices,
    }
}

fn undefined_column(def: &RelationDef, column: &str) -> SqlError {
    SqlError::new(
        SqlState::UNDEFINED_COLUMN,
        format!(
            "column \"{column}\" of relation \"{}\" does not exist",
            def.name
        ),
    )
}

fn null_values(def: &RelationDef, column: &str) -> SqlError {
    let mut e = SqlError::new(
        SqlState::NOT_NULL_VIOLATION,
        format!(
            "column \"{column}\" of relation \"{}\" contains null values",
            def.name
        ),
    );
    e.schema = Some(def.schema.clone());
    e.table = Some(def.name.clone());
    e
}

/// Applies one action and returns the altered definition.
async fn apply(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    def: RelationDef,
    operation: &AlterTableOperation,
    notices: &mut Vec<Notice>,
) -> Result<RelationDef, SqlError> {
    let change = match operation {
        AlterTableOperation::AddColumn {
            if_not_exists,
            column_def,
            column_position: None,
            ..
        } => {
            let name = fold(&column_def.name);
            if def.column_index(&name).is_some() && *if_not_exists {
                notices.push(Notice {
                    code: SqlState::DUPLICATE_COLUMN,
                    message: format!(
                        "column \"{name}\" of relation \"{}\" already exists, skipping",
                        def.name
                    ),
                });
                return Ok(def);
            }
            add_column(txn, env, &def, column_def).await?
        }
        AlterTableOperation::DropColumn {
            column_names,
            if_exists,
            ..
        } => {
            let mut def = def;
            for column in column_names.iter().map(fold) {
                if def.column_index(&column).is_none() && *if_exists {
                    notices.push(Notice {
                        code: SqlState::SUCCESSFUL_COMPLETION,
                        message: format!(
                            "column \"{column}\" of relation \"{}\" does not exist, skipping",
                            def.name
                        ),
                    });
                    continue;
                }
                def = txn
                    .alter_relation(&def.schema, &def.name, RelationChange::DropColumn(column))
                    .await?;
            }
            return Ok(def);
        }
        AlterTableOperation::RenameColumn {
            old_column_name,
            new_column_name,
        } => RelationChange::RenameColumn {
            from: fold(old_column_name),
            to: fold(new_column_name),
        },
        AlterTableOperation::RenameTable { table_name } => {
            let (RenameTableNameKind::To(name) | RenameTableNameKind::As(name)) = table_name;
            match name_parts(name)?.as_slice() {
                [to] => RelationChange::Rename(to.clone()),
                _ => {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        format!("syntax error at or near \".\": RENAME TO {name}"),
                    ))
                }
            }
        }
        AlterTableOperation::AlterColumn { column_name, op } => {
            return alter_column(txn, env, def, column_name, op).await;
        }
        other => {
            return Err(SqlError::unsupported(format!(
                "ALTER TABLE action not supported: {other}"
            )))
        }
    };
    txn.alter_relation(&def.schema, &def.name, change).await
}

/// `ADD COLUMN`: rows already in the table read the DEFAULT (evaluated
/// once, as PostgreSQL does for a non-volatile default).
async fn add_column(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    def: &RelationDef,
    column: &sqlparser::ast::ColumnDef,
) -> Result<RelationChange, SqlError> {
    let mut new = ColumnDef::new(fold(&column.name), pg_type_of(&column.data_type)?);
    let mut missing = None;
    for option in &column.options {
        match &option.option {
            ColumnOption::NotNull => new.not_null = true,
            ColumnOption::Null => new.not_null = false,
            ColumnOption::Default(expr) => {
                let value = constant_default(env, expr, &new)?;
                new.default = format_text(&value);
                missing = Some(value);
            }
            other => {
                return Err(SqlError::unsupported(format!(
                    "column option {other} is not supported in ADD COLUMN (column \"{}\")",
                    new.name
                )))
            }
        }
    }
    let fills_nulls = missing.as_ref().is_none_or(Datum::is_null);
    if new.not_null && fills_nulls && has_rows(txn, def).await? {
        return Err(null_values(def, &new.name));
    }
    Ok(RelationChange::AddColumn {
        column: new,
        missing,
    })
}

async fn has_rows(txn: &mut dyn StorageTxn, def: &RelationDef) -> Result<bool, SqlError> {
    Ok(!txn.scan(def, &ScanFilter::default()).await?.is_empty())
}

/// `ALTER COLUMN c SET/DROP NOT NULL | SET/DROP DEFAULT | [SET DATA] TYPE t`.
async fn alter_column(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    def: RelationDef,
    column_name: &Ident,
    op: &AlterColumnOperation,
) -> Result<RelationDef, SqlError> {
    let column = fold(column_name);
    let index = def
        .column_index(&column)
        .ok_or_else(|| undefined_column(&def, &column))?;
    let change = |default, not_null| RelationChange::AlterColumn {
        column: column.clone(),
        default,
        not_null,
    };
    let change = match op {
        AlterColumnOperation::SetNotNull => {
            let rows = txn.scan(&def, &ScanFilter::default()).await?;
            if rows.iter().any(|r| r.row[index].is_null()) {
                return Err(null_values(&def, &column));
            }
            change(None, Some(true))
        }
        AlterColumnOperation::DropNotNull => {
            if def.primary_key.contains(&index) {
                return Err(SqlError::new(
                    SqlState::INVALID_TABLE_DEFINITION,
                    format!("column \"{column}\" is in a primary key"),
                ));
            }
            change(None, Some(false))
        }
        AlterColumnOperation::SetDefault { value } => {
            let value = constant_default(env, value, &def.columns[index])?;
            change(Some(format_text(&value)), None)
        }
        AlterColumnOperation::DropDefault => change(Some(None), None),
        AlterColumnOperation::SetDataType {
            data_type,
            using: None,
            ..
        } => return set_type(txn, def, index, pg_type_of(data_type)?).await,
        other => {
            return Err(SqlError::unsupported(format!(
                "ALTER COLUMN action not supported: {other}"
            )))
        }
    };
    txn.alter_relation(&def.schema, &def.name, change).await
}

/// `ALTER COLUMN c TYPE t`: every value converted by the assignment cast
/// (as PostgreSQL does without USING), the rows rewritten.
async fn set_type(
    txn: &mut dyn StorageTxn,
    def: RelationDef,
    index: usize,
    pg_type: PgType,
) -> Result<RelationDef, SqlError> {
    let column = def.columns[index].name.clone();
    let rows = txn.scan(&def, &ScanFilter::default()).await?;
    let mut converted = Vec::with_capacity(rows.len());
    for scanned in rows {
        let mut row = scanned.row;
        row[index] =
            assign(std::mem::replace(&mut row[index], Datum::Null), &pg_type).map_err(|e| {
                SqlError::new(
                    e.code,
                    format!("{} (converting column \"{column}\")", e.message),
                )
            })?;
        converted.push((scanned.id, row));
    }
    let altered = txn
        .alter_relation(
            &def.schema,
            &def.name,
            RelationChange::SetType { column, pg_type },
        )
        .await?;
    for (id, row) in converted {
        txn.update(&altered, id, row).await?;
    }
    Ok(altered)
}

/// Whether `expr` is a constant: literals, casts and signs of constants.
fn is_constant(expr: &Expr) -> bool {
    match expr {
        Expr::Value(_) | Expr::TypedString { .. } => true,
        Expr::Cast { expr, .. } | Expr::Nested(expr) => is_constant(expr),
        Expr::UnaryOp {
            op: UnaryOperator::Minus | UnaryOperator::Plus,
            expr,
        } => is_constant(expr),
        _ => false,
    }
}

/// The value of a constant DEFAULT expression for `column`.
pub(crate) fn constant_default(
    env: &StmtEnv<'_>,
    expr: &Expr,
    column: &ColumnDef,
) -> Result<Datum, SqlError> {
    if !is_constant(expr) {
        return Err(SqlError::unsupported(format!(
            "DEFAULT {expr} is not supported: RockLake keeps constant defaults only (column \"{}\")",
            column.name
        )));
    }
    if matches!(expr, Expr::Value(v) if matches!(v.value, Value::Null)) {
        return Ok(Datum::Null);
    }
    let mut binder = Binder::new(env.cat, env.now, env.pid);
    let (bound, ty) = binder.bind_expr(expr)?;
    let bound = binder.coerce(
        bound,
        &ty,
        &column.pg_type,
        &format!("column \"{}\"", column.name),
    )?;
    let ctx = ExecCtx::new(&[], env.cat, env.limits);
    eval(&bound, &ctx, Scope::top(&[]))
}
