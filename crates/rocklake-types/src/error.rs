//! What a statement tells the client besides its result: SQL errors carrying
//! a PostgreSQL SQLSTATE and the fields of an ErrorResponse, and notices
//! (NoticeResponse).

use std::fmt;

use crate::sqlstate::SqlState;

/// A non-error message to send before a statement's result (`NoticeResponse`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// SQLSTATE of the notice, e.g. `42P07` for "relation already exists, skipping".
    pub code: SqlState,
    /// Notice text.
    pub message: String,
}

/// An error raised while parsing, planning or executing a statement, shaped like
/// a PostgreSQL `ErrorResponse`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlError {
    /// The SQLSTATE, e.g. [`SqlState::UNIQUE_VIOLATION`].
    pub code: SqlState,
    /// Primary message (`M` field).
    pub message: String,
    /// Optional detail (`D` field).
    pub detail: Option<String>,
    /// Optional hint: what to do about it (`H` field).
    pub hint: Option<String>,
    /// Schema name (`s` field), for constraint violations.
    pub schema: Option<String>,
    /// Table name (`t` field), for constraint violations.
    pub table: Option<String>,
    /// Constraint name (`n` field), for constraint violations.
    pub constraint: Option<String>,
}

impl SqlError {
    /// An error with a SQLSTATE and a message.
    pub fn new(code: SqlState, message: impl Into<String>) -> Self {
        SqlError {
            code,
            message: message.into(),
            detail: None,
            hint: None,
            schema: None,
            table: None,
            constraint: None,
        }
    }

    /// Adds a detail line.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Adds a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// `25006 read_only_sql_transaction`: a read-only transaction refuses
    /// `command` (`CREATE TABLE`, `INSERT`, ...).
    pub fn read_only(command: &str) -> Self {
        SqlError::new(
            SqlState::READ_ONLY_SQL_TRANSACTION,
            format!("cannot execute {command} in a read-only transaction"),
        )
    }

    /// `0A000 feature_not_supported`.
    pub fn unsupported(message: impl Into<String>) -> Self {
        SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, message)
    }

    /// `XX000 internal_error`.
    pub fn internal(message: impl Into<String>) -> Self {
        SqlError::new(SqlState::INTERNAL_ERROR, message)
    }

    /// PostgreSQL's unique-violation error for a duplicate primary key, with the
    /// exact message shape DuckLake's retry logic looks for.
    pub fn unique_violation(
        schema: &str,
        table: &str,
        key_columns: &str,
        key_values: &str,
    ) -> Self {
        let constraint = format!("{table}_pkey");
        SqlError {
            code: SqlState::UNIQUE_VIOLATION,
            message: format!("duplicate key value violates unique constraint \"{constraint}\""),
            detail: Some(format!(
                "Key ({key_columns})=({key_values}) already exists."
            )),
            hint: None,
            schema: Some(schema.to_string()),
            table: Some(table.to_string()),
            constraint: Some(constraint),
        }
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (SQLSTATE {})", self.message, self.code)?;
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SqlError {}
