//! CREATE TABLE and CREATE SCHEMA.

use rocklake_types::datum::ColumnDef;
use sqlparser::ast::{
    ColumnOption, CreateTable, ObjectName, OnCommit, SchemaName, TableConstraint,
};

use crate::bind::expr::pg_type_of;
use crate::exec::StmtEnv;
use crate::ident::{fold, name_parts};
use crate::storage::route::TEMP_SCHEMA;
use crate::storage::{RelationDef, StorageTxn};
use rocklake_types::output::{Notice, QueryOutput};
use rocklake_types::{SqlError, SqlState};

fn index_column_name(c: &sqlparser::ast::IndexColumn) -> Result<String, SqlError> {
    match &c.column.expr {
        sqlparser::ast::Expr::Identifier(id) => Ok(fold(id)),
        other => Err(SqlError::unsupported(format!(
            "unsupported key column {other}"
        ))),
    }
}

/// Builds the relation definition a CREATE TABLE describes. Column
/// `DEFAULT`s (constants) are evaluated in `env`; without one, a DEFAULT is
/// refused.
pub fn relation_def(ct: &CreateTable, env: Option<&StmtEnv<'_>>) -> Result<RelationDef, SqlError> {
    check_create_form(ct)?;
    let database = env.map_or("", |env| env.cat.database.as_str());
    let (schema, name) = table_name(ct, database)?;
    let (mut columns, mut primary_key) = column_defs(ct, env)?;
    apply_constraints(ct, &name, &mut columns, &mut primary_key)?;
    Ok(RelationDef::new(schema, name, columns, primary_key))
}

/// Rejects the CREATE TABLE forms RockLake does not implement.
fn check_create_form(ct: &CreateTable) -> Result<(), SqlError> {
    // Temporary tables live only as long as their transaction (ON COMMIT DROP):
    // see `crate::temp`. Session-long temporary tables are not supported.
    let temp_ok = ct.temporary && ct.on_commit == Some(OnCommit::Drop) && ct.global != Some(true);
    if ct.query.is_some()
        || ct.like.is_some()
        || ct.clone.is_some()
        || (ct.temporary && !temp_ok)
        || ct.external
    {
        return Err(SqlError::unsupported(format!(
            "unsupported CREATE TABLE form: {ct}"
        )));
    }
    if !ct.temporary && ct.on_commit.is_some() {
        return Err(SqlError::new(
            SqlState::INVALID_TABLE_DEFINITION,
            "ON COMMIT can only be used on temporary tables",
        ));
    }
    Ok(())
}

/// The schema and name of the new table (temporary tables go to the
/// session's temporary schema).
fn table_name(ct: &CreateTable, database: &str) -> Result<(String, String), SqlError> {
    let parts = name_parts(&ct.name)?;
    let (schema, name) = match crate::ident::relation_name(&parts, database)? {
        (None, n) if ct.temporary => (TEMP_SCHEMA.to_string(), n.to_string()),
        (None, n) => ("public".to_string(), n.to_string()),
        (Some(s), n) => (s.to_string(), n.to_string()),
    };
    if ct.temporary && schema != TEMP_SCHEMA {
        return Err(SqlError::new(
            SqlState::INVALID_TABLE_DEFINITION,
            "cannot create temporary relation in non-temporary schema",
        ));
    }
    Ok((schema, name))
}

/// The declared columns, and the primary key their options declare.
fn column_defs(
    ct: &CreateTable,
    env: Option<&StmtEnv<'_>>,
) -> Result<(Vec<ColumnDef>, Vec<usize>), SqlError> {
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
                ColumnOption::Default(expr) => {
                    let Some(env) = env else {
                        return Err(SqlError::unsupported(format!(
                            "DEFAULT is not supported here (column \"{}\")",
                            def.name
                        )));
                    };
                    let value = crate::write::alter::constant_default(env, expr, &def)?;
                    def.default = rocklake_types::value::text::format_text(&value);
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
            return Err(SqlError::new(
                SqlState::DUPLICATE_COLUMN,
                format!("column \"{}\" specified more than once", def.name),
            ));
        }
        columns.push(def);
    }
    Ok((columns, primary_key))
}

/// Table constraints (a `PRIMARY KEY (...)`); one primary key per table.
fn apply_constraints(
    ct: &CreateTable,
    name: &str,
    columns: &mut [ColumnDef],
    primary_key: &mut Vec<usize>,
) -> Result<(), SqlError> {
    for tc in &ct.constraints {
        match tc {
            TableConstraint::PrimaryKey(pk) => {
                if !primary_key.is_empty() {
                    return Err(SqlError::new(
                        SqlState::INVALID_TABLE_DEFINITION,
                        format!("multiple primary keys for table \"{name}\" are not allowed"),
                    ));
                }
                for ic in &pk.columns {
                    let cn = index_column_name(ic)?;
                    let idx = columns.iter().position(|c| c.name == cn).ok_or_else(|| {
                        SqlError::new(
                            SqlState::UNDEFINED_COLUMN,
                            format!("column \"{cn}\" named in key does not exist"),
                        )
                    })?;
                    columns[idx].not_null = true;
                    primary_key.push(idx);
                }
            }
            other => {
                return Err(SqlError::unsupported(format!(
                    "table constraint {other} is not supported"
                )))
            }
        }
    }
    if primary_key.len() > 1
        && ct
            .columns
            .iter()
            .filter(|c| {
                c.options
                    .iter()
                    .any(|o| matches!(o.option, ColumnOption::PrimaryKey(_)))
            })
            .count()
            > 1
    {
        return Err(SqlError::new(
            SqlState::INVALID_TABLE_DEFINITION,
            format!("multiple primary keys for table \"{name}\" are not allowed"),
        ));
    }
    Ok(())
}

/// Executes CREATE TABLE [IF NOT EXISTS].
pub async fn create_table(
    txn: &mut dyn StorageTxn,
    def: RelationDef,
    if_not_exists: bool,
) -> Result<QueryOutput, SqlError> {
    let name = def.name.clone();
    let created = txn.create_relation(def, if_not_exists).await?;
    let notices = if created {
        Vec::new()
    } else {
        vec![Notice {
            code: SqlState::DUPLICATE_TABLE,
            message: format!("relation \"{name}\" already exists, skipping"),
        }]
    };
    Ok(QueryOutput::Command {
        tag: "CREATE TABLE".into(),
        notices,
    })
}

/// Executes DROP TABLE [IF EXISTS] name [, ...].
pub async fn drop_tables(
    txn: &mut dyn StorageTxn,
    database: &str,
    names: &[ObjectName],
    if_exists: bool,
) -> Result<QueryOutput, SqlError> {
    let mut notices = Vec::new();
    for name in names {
        let parts = name_parts(name)?;
        let (schema, table) = match crate::ident::relation_name(&parts, database)? {
            (None, table) => {
                let temp = txn.relation(TEMP_SCHEMA, table).await?.is_some();
                let schema = if temp { TEMP_SCHEMA } else { "public" };
                (schema.to_string(), table.to_string())
            }
            (Some(schema), table) => (schema.to_string(), table.to_string()),
        };
        if !txn.drop_relation(&schema, &table, if_exists).await? {
            notices.push(Notice {
                code: SqlState::SUCCESSFUL_COMPLETION,
                message: format!("table \"{table}\" does not exist, skipping"),
            });
        }
    }
    Ok(QueryOutput::Command {
        tag: "DROP TABLE".into(),
        notices,
    })
}

/// Executes CREATE SCHEMA [IF NOT EXISTS].
pub async fn create_schema(
    txn: &mut dyn StorageTxn,
    name: &SchemaName,
    if_not_exists: bool,
) -> Result<QueryOutput, SqlError> {
    let SchemaName::Simple(n) = name else {
        return Err(SqlError::unsupported(
            "CREATE SCHEMA ... AUTHORIZATION is not supported",
        ));
    };
    let parts = name_parts(n)?;
    let [schema] = parts.as_slice() else {
        return Err(SqlError::new(
            SqlState::SYNTAX_ERROR,
            "syntax error at or near \".\"",
        ));
    };
    let created = txn.create_schema(schema, if_not_exists).await?;
    let notices = if created {
        Vec::new()
    } else {
        vec![Notice {
            code: SqlState::DUPLICATE_SCHEMA,
            message: format!("schema \"{schema}\" already exists, skipping"),
        }]
    };
    Ok(QueryOutput::Command {
        tag: "CREATE SCHEMA".into(),
        notices,
    })
}

/// Executes DROP SCHEMA [IF EXISTS] name [, ...] [CASCADE | RESTRICT].
pub async fn drop_schemas(
    txn: &mut dyn StorageTxn,
    names: &[ObjectName],
    if_exists: bool,
    cascade: bool,
) -> Result<QueryOutput, SqlError> {
    let mut notices = Vec::new();
    for name in names {
        let parts = name_parts(name)?;
        let [schema] = parts.as_slice() else {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("improper qualified name (too many dotted names): {name}"),
            ));
        };
        if !txn.drop_schema(schema, if_exists, cascade).await? {
            notices.push(Notice {
                code: SqlState::SUCCESSFUL_COMPLETION,
                message: format!("schema \"{schema}\" does not exist, skipping"),
            });
        }
    }
    Ok(QueryOutput::Command {
        tag: "DROP SCHEMA".into(),
        notices,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocklake_types::datum::PgType;
    use sqlparser::ast::Statement;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    fn def(sql: &str) -> Result<RelationDef, SqlError> {
        match Parser::parse_sql(&PostgreSqlDialect {}, sql)
            .unwrap()
            .remove(0)
        {
            Statement::CreateTable(ct) => relation_def(&ct, None),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn builds_relation_definitions() {
        let d = def("CREATE TABLE \"public\".\"ducklake_snapshot\"(\"snapshot_id\" BIGINT PRIMARY KEY, \"snapshot_time\" TIMESTAMP WITH TIME ZONE)").unwrap();
        assert_eq!(
            (d.schema.as_str(), d.name.as_str()),
            ("public", "ducklake_snapshot")
        );
        assert_eq!(d.primary_key, vec![0]);
        assert!(d.columns[0].not_null);
        assert_eq!(d.columns[1].pg_type, PgType::TimestampTz);
        let d = def("CREATE TABLE t(a INT, B DECIMAL(18,3) NOT NULL, PRIMARY KEY (a))").unwrap();
        assert_eq!(d.schema, "public");
        assert_eq!(d.columns[1].name, "b");
        assert_eq!(d.columns[1].pg_type, PgType::Numeric(Some((18, 3))));
        assert_eq!(d.primary_key, vec![0]);
        assert_eq!(
            def("CREATE TABLE t(c TIME_NS)").unwrap_err().message,
            "type \"time_ns\" does not exist"
        );
        assert_eq!(
            def("CREATE TABLE t(a INT DEFAULT 1)").unwrap_err().code,
            "0A000"
        );
        assert_eq!(
            def("CREATE TABLE t(a INT, a INT)").unwrap_err().code,
            "42701"
        );
    }
}
