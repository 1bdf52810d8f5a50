//! CREATE TABLE and CREATE SCHEMA.

use rocklake_codec::datum::ColumnDef;
use sqlparser::ast::{ColumnOption, CreateTable, SchemaName, TableConstraint};

use crate::bind::{fold, name_parts};
use crate::bind_expr::pg_type_of;
use crate::error::{codes, SqlError};
use crate::output::{Notice, QueryOutput};
use crate::storage::{RelationDef, StorageTxn};

fn index_column_name(c: &sqlparser::ast::IndexColumn) -> Result<String, SqlError> {
    match &c.column.expr {
        sqlparser::ast::Expr::Identifier(id) => Ok(fold(id)),
        other => Err(SqlError::unsupported(format!("unsupported key column {other}"))),
    }
}

/// Builds the relation definition a CREATE TABLE describes.
pub fn relation_def(ct: &CreateTable) -> Result<RelationDef, SqlError> {
    if ct.query.is_some() || ct.like.is_some() || ct.clone.is_some() || ct.temporary || ct.external {
        return Err(SqlError::unsupported(format!("unsupported CREATE TABLE form: {ct}")));
    }
    let parts = name_parts(&ct.name)?;
    let (schema, name) = match parts.as_slice() {
        [n] => ("public".to_string(), n.clone()),
        [s, n] | [_, s, n] => (s.clone(), n.clone()),
        _ => return Err(SqlError::new(codes::SYNTAX_ERROR, format!("improper relation name {}", ct.name))),
    };
    let mut columns = Vec::new();
    let mut primary_key = Vec::new();
    for (i, c) in ct.columns.iter().enumerate() {
        let mut def = ColumnDef::new(fold(&c.name), pg_type_of(&c.data_type)?);
        for o in &c.options {
            match &o.option {
                ColumnOption::NotNull => def.not_null = true,
                ColumnOption::Null => def.not_null = false,
                ColumnOption::PrimaryKey(_) => {
                    def.not_null = true;
                    primary_key.push(i);
                }
                other => {
                    return Err(SqlError::unsupported(format!(
                        "column option {other} is not supported (column \"{}\")",
                        def.name
                    )))
                }
            }
        }
        if columns.iter().any(|x: &ColumnDef| x.name == def.name) {
            return Err(SqlError::new("42701", format!("column \"{}\" specified more than once", def.name)));
        }
        columns.push(def);
    }
    for tc in &ct.constraints {
        match tc {
            TableConstraint::PrimaryKey(pk) => {
                if !primary_key.is_empty() {
                    return Err(SqlError::new(
                        "42P16",
                        format!("multiple primary keys for table \"{name}\" are not allowed"),
                    ));
                }
                for ic in &pk.columns {
                    let cn = index_column_name(ic)?;
                    let idx = columns.iter().position(|c| c.name == cn).ok_or_else(|| {
                        SqlError::new(codes::UNDEFINED_COLUMN, format!("column \"{cn}\" named in key does not exist"))
                    })?;
                    columns[idx].not_null = true;
                    primary_key.push(idx);
                }
            }
            other => return Err(SqlError::unsupported(format!("table constraint {other} is not supported"))),
        }
    }
    if primary_key.len() > 1 && ct.columns.iter().filter(|c| c.options.iter().any(|o| matches!(o.option, ColumnOption::PrimaryKey(_)))).count() > 1 {
        return Err(SqlError::new("42P16", format!("multiple primary keys for table \"{name}\" are not allowed")));
    }
    Ok(RelationDef { schema, name, columns, primary_key })
}

/// Executes CREATE TABLE [IF NOT EXISTS].
pub async fn create_table(txn: &mut dyn StorageTxn, ct: &CreateTable) -> Result<QueryOutput, SqlError> {
    let def = relation_def(ct)?;
    let name = def.name.clone();
    let created = txn.create_relation(def, ct.if_not_exists).await?;
    let notices = if created {
        Vec::new()
    } else {
        vec![Notice { code: codes::DUPLICATE_TABLE.into(), message: format!("relation \"{name}\" already exists, skipping") }]
    };
    Ok(QueryOutput::Command { tag: "CREATE TABLE".into(), notices })
}

/// Executes CREATE SCHEMA [IF NOT EXISTS].
pub async fn create_schema(txn: &mut dyn StorageTxn, name: &SchemaName, if_not_exists: bool) -> Result<QueryOutput, SqlError> {
    let SchemaName::Simple(n) = name else {
        return Err(SqlError::unsupported("CREATE SCHEMA ... AUTHORIZATION is not supported"));
    };
    let parts = name_parts(n)?;
    let schema = parts.last().cloned().unwrap_or_default();
    let created = txn.create_schema(&schema, if_not_exists).await?;
    let notices = if created {
        Vec::new()
    } else {
        vec![Notice { code: codes::DUPLICATE_SCHEMA.into(), message: format!("schema \"{schema}\" already exists, skipping") }]
    };
    Ok(QueryOutput::Command { tag: "CREATE SCHEMA".into(), notices })
}
