//! Transaction characteristics as PostgreSQL has them: the isolation level
//! and read-only flag a transaction starts with (`BEGIN ...` modes, else
//! `default_transaction_isolation` / `default_transaction_read_only`, which
//! `SET SESSION CHARACTERISTICS AS TRANSACTION ...` sets), changed by `SET
//! TRANSACTION ...` before its first query, and the statements a read-only
//! transaction refuses (`25006`).
//!
//! RockLake's transactions all read one snapshot taken when they begin and
//! fail on write conflicts (`40001`): snapshot isolation, what PostgreSQL
//! calls REPEATABLE READ. READ COMMITTED and READ UNCOMMITTED are shown as
//! set and run the same way (a transaction block does not see what others
//! commit while it runs); SERIALIZABLE is refused with `0A000`
//! ([`rocklake_types::settings::check_isolation`]).

use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{
    ObjectType, Set, SetExpr, Statement, TransactionAccessMode, TransactionIsolationLevel,
    TransactionMode,
};

use rocklake_types::settings::{canonical_value, check_isolation};

/// A transaction's isolation level (as `transaction_isolation` shows it)
/// and whether it is read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TxnMode {
    /// `read committed`, `repeatable read`, ...
    pub isolation: String,
    /// `READ ONLY`.
    pub read_only: bool,
}

impl TxnMode {
    /// `defaults` (the session's) changed by the modes of `BEGIN` / `SET
    /// TRANSACTION` / `SET SESSION CHARACTERISTICS`.
    pub fn with_modes(mut self, modes: &[TransactionMode]) -> Result<TxnMode, SqlError> {
        for mode in modes {
            match mode {
                TransactionMode::AccessMode(access) => {
                    self.read_only = matches!(access, TransactionAccessMode::ReadOnly);
                }
                TransactionMode::IsolationLevel(level) => self.isolation = level_name(level)?,
            }
        }
        Ok(self)
    }

    /// Applies `SET TRANSACTION modes` to the current transaction, which has
    /// run a query already when `queried` (PostgreSQL's rules: the level
    /// and READ WRITE only before the first query, READ ONLY any time).
    pub fn set(&mut self, modes: &[TransactionMode], queried: bool) -> Result<(), SqlError> {
        let wanted = self.clone().with_modes(modes)?;
        if wanted.isolation != self.isolation && queried {
            return Err(SqlError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                "SET TRANSACTION ISOLATION LEVEL must be called before any query",
            ));
        }
        if self.read_only && !wanted.read_only && queried {
            return Err(SqlError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                "transaction read-write mode must be set before any query",
            ));
        }
        *self = wanted;
        Ok(())
    }
}

/// The name PostgreSQL shows for an isolation level; SERIALIZABLE fails.
fn level_name(level: &TransactionIsolationLevel) -> Result<String, SqlError> {
    let name = match level {
        TransactionIsolationLevel::ReadUncommitted => "read uncommitted",
        TransactionIsolationLevel::ReadCommitted => "read committed",
        TransactionIsolationLevel::RepeatableRead => "repeatable read",
        TransactionIsolationLevel::Serializable => "serializable",
        TransactionIsolationLevel::Snapshot => {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "syntax error at or near \"SNAPSHOT\"",
            ))
        }
    };
    check_isolation(name)?;
    Ok(name.to_string())
}

/// `SET transaction_isolation = ...` / `SET transaction_read_only = ...` as
/// the `SET TRANSACTION` modes they stand for; `None` for other settings.
pub(crate) fn transaction_setting(set: &Set) -> Result<Option<Vec<TransactionMode>>, SqlError> {
    let Some((name, value)) = crate::session::settings::assignment(set) else {
        return Ok(None);
    };
    let mode = match name.to_lowercase().as_str() {
        name @ "transaction_isolation" => {
            let level = match canonical_value(name, &value)?.as_str() {
                "read uncommitted" => TransactionIsolationLevel::ReadUncommitted,
                "read committed" => TransactionIsolationLevel::ReadCommitted,
                "repeatable read" => TransactionIsolationLevel::RepeatableRead,
                _ => TransactionIsolationLevel::Serializable,
            };
            TransactionMode::IsolationLevel(level)
        }
        name @ "transaction_read_only" => {
            TransactionMode::AccessMode(if canonical_value(name, &value)? == "on" {
                TransactionAccessMode::ReadOnly
            } else {
                TransactionAccessMode::ReadWrite
            })
        }
        _ => return Ok(None),
    };
    Ok(Some(vec![mode]))
}

/// `SET TRANSACTION ... ` outside a transaction block: PostgreSQL's warning.
pub(crate) fn outside_block_warning() -> rocklake_types::output::Notice {
    rocklake_types::output::Notice {
        code: SqlState::NO_ACTIVE_SQL_TRANSACTION,
        message: "SET TRANSACTION can only be used in transaction blocks".into(),
    }
}

/// The command a read-only transaction refuses `stmt` as (PostgreSQL's
/// `PreventCommandIfReadOnly` names), or `None` for one it may run.
pub(crate) fn write_command(stmt: &Statement) -> Option<String> {
    let command = match stmt {
        Statement::Insert(_) => "INSERT",
        Statement::Update(_) => "UPDATE",
        Statement::Delete(_) => "DELETE",
        Statement::Merge(_) => "MERGE",
        Statement::Copy { to: false, .. } => "COPY FROM",
        Statement::CreateTable(_) => "CREATE TABLE",
        Statement::CreateSchema { .. } => "CREATE SCHEMA",
        Statement::CreateView(_) => "CREATE VIEW",
        Statement::CreateIndex(_) => "CREATE INDEX",
        Statement::CreateSequence { .. } => "CREATE SEQUENCE",
        Statement::AlterTable(_) => "ALTER TABLE",
        Statement::Comment { .. } => "COMMENT",
        Statement::Truncate(_) => "TRUNCATE TABLE",
        Statement::Drop { object_type, .. } => {
            return Some(format!("DROP {}", drop_name(object_type)));
        }
        Statement::Query(q) => {
            let writes = |body: &SetExpr| {
                matches!(
                    body,
                    SetExpr::Insert(_)
                        | SetExpr::Update(_)
                        | SetExpr::Delete(_)
                        | SetExpr::Merge(_)
                )
            };
            let ctes = q
                .with
                .iter()
                .flat_map(|w| &w.cte_tables)
                .any(|cte| writes(cte.query.body.as_ref()));
            return match q.body.as_ref() {
                SetExpr::Insert(s) | SetExpr::Update(s) | SetExpr::Delete(s) => write_command(s),
                SetExpr::Merge(_) => Some("MERGE".into()),
                _ if ctes => Some("SELECT".into()),
                _ => None,
            };
        }
        _ => return None,
    };
    Some(command.to_string())
}

/// The object type as `DROP ...` names it.
fn drop_name(object_type: &ObjectType) -> String {
    match object_type {
        ObjectType::MaterializedView => "MATERIALIZED VIEW".into(),
        other => other.to_string().to_uppercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(sql: &str) -> Statement {
        crate::parse::parse(sql).unwrap().remove(0)
    }

    #[test]
    fn writes_are_named_as_postgres_names_them() {
        for (sql, command) in [
            ("INSERT INTO t VALUES (1)", Some("INSERT")),
            ("UPDATE t SET a = 1", Some("UPDATE")),
            ("DELETE FROM t", Some("DELETE")),
            ("COPY t FROM STDIN", Some("COPY FROM")),
            ("COPY t TO STDOUT", None),
            ("CREATE TABLE u (a int)", Some("CREATE TABLE")),
            ("DROP TABLE t", Some("DROP TABLE")),
            ("DROP SCHEMA s", Some("DROP SCHEMA")),
            ("ALTER TABLE t ADD COLUMN b int", Some("ALTER TABLE")),
            ("CREATE SCHEMA s", Some("CREATE SCHEMA")),
            (
                "WITH x AS (INSERT INTO t VALUES (1) RETURNING a) SELECT * FROM x",
                Some("SELECT"),
            ),
            ("SELECT 1", None),
        ] {
            assert_eq!(write_command(&parse(sql)).as_deref(), command, "{sql}");
        }
    }

    #[test]
    fn set_transaction_follows_postgres_rules() {
        let mut mode = TxnMode {
            isolation: "read committed".into(),
            read_only: true,
        };
        let Statement::StartTransaction { modes, .. } =
            parse("BEGIN ISOLATION LEVEL REPEATABLE READ, READ WRITE")
        else {
            panic!("not BEGIN");
        };
        assert_eq!(
            mode.clone().with_modes(&modes).unwrap(),
            TxnMode {
                isolation: "repeatable read".into(),
                read_only: false
            }
        );
        let error = mode.set(&modes, true).unwrap_err();
        assert_eq!(error.code, SqlState::ACTIVE_SQL_TRANSACTION);
        mode.set(&modes, false).unwrap();
        assert!(!mode.read_only);
        let Statement::StartTransaction { modes, .. } = parse("BEGIN ISOLATION LEVEL SERIALIZABLE")
        else {
            panic!("not BEGIN");
        };
        let error = mode.set(&modes, false).unwrap_err();
        assert_eq!(error.code, SqlState::FEATURE_NOT_SUPPORTED);
    }
}
