//! SQL errors carrying a PostgreSQL SQLSTATE and the fields of an ErrorResponse.

use std::fmt;

/// An error raised while parsing, planning or executing a statement, shaped like
/// a PostgreSQL `ErrorResponse`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlError {
    /// Five-character SQLSTATE, e.g. `23505`.
    pub code: String,
    /// Primary message (`M` field).
    pub message: String,
    /// Optional detail (`D` field).
    pub detail: Option<String>,
    /// Schema name (`s` field), for constraint violations.
    pub schema: Option<String>,
    /// Table name (`t` field), for constraint violations.
    pub table: Option<String>,
    /// Constraint name (`n` field), for constraint violations.
    pub constraint: Option<String>,
}

impl SqlError {
    /// An error with a SQLSTATE and a message.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        SqlError {
            code: code.to_string(),
            message: message.into(),
            detail: None,
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

    /// `0A000 feature_not_supported`.
    pub fn unsupported(message: impl Into<String>) -> Self {
        SqlError::new(codes::FEATURE_NOT_SUPPORTED, message)
    }

    /// `XX000 internal_error`.
    pub fn internal(message: impl Into<String>) -> Self {
        SqlError::new(codes::INTERNAL_ERROR, message)
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
            code: codes::UNIQUE_VIOLATION.to_string(),
            message: format!("duplicate key value violates unique constraint \"{constraint}\""),
            detail: Some(format!(
                "Key ({key_columns})=({key_values}) already exists."
            )),
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

/// SQLSTATE codes RockLake raises.
pub mod codes {
    /// Successful completion (used for notices that are not warnings).
    pub const SUCCESSFUL_COMPLETION: &str = "00000";
    /// A feature RockLake does not implement.
    pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
    /// Syntax error.
    pub const SYNTAX_ERROR: &str = "42601";
    /// Unknown table.
    pub const UNDEFINED_TABLE: &str = "42P01";
    /// Unknown column.
    pub const UNDEFINED_COLUMN: &str = "42703";
    /// Unknown function.
    pub const UNDEFINED_FUNCTION: &str = "42883";
    /// Unknown type.
    pub const UNDEFINED_OBJECT: &str = "42704";
    /// Table exists.
    pub const DUPLICATE_TABLE: &str = "42P07";
    /// invalid_table_definition
    pub const INVALID_TABLE_DEFINITION: &str = "42P16";
    /// Schema exists.
    pub const DUPLICATE_SCHEMA: &str = "42P06";
    /// Unknown schema.
    pub const INVALID_SCHEMA_NAME: &str = "3F000";
    /// Type mismatch.
    pub const DATATYPE_MISMATCH: &str = "42804";
    /// Bad text representation of a value.
    pub const INVALID_TEXT_REPRESENTATION: &str = "22P02";
    /// Numeric overflow.
    pub const NUMERIC_VALUE_OUT_OF_RANGE: &str = "22003";
    /// Division by zero.
    pub const DIVISION_BY_ZERO: &str = "22012";
    /// NOT NULL violated.
    pub const NOT_NULL_VIOLATION: &str = "23502";
    /// Primary key violated.
    pub const UNIQUE_VIOLATION: &str = "23505";
    /// Commands ignored until end of transaction block.
    pub const IN_FAILED_SQL_TRANSACTION: &str = "25P02";
    /// Write in a read-only transaction.
    pub const READ_ONLY_SQL_TRANSACTION: &str = "25006";
    /// Serialization failure (concurrent commit conflict).
    pub const SERIALIZATION_FAILURE: &str = "40001";
    /// Catch-all internal error.
    pub const INTERNAL_ERROR: &str = "XX000";
    /// Storage I/O failure.
    pub const IO_ERROR: &str = "58030";
    /// Cardinality violation (scalar subquery returned several rows).
    pub const CARDINALITY_VIOLATION: &str = "21000";
    /// A protocol violation by the client.
    pub const PROTOCOL_VIOLATION: &str = "08P01";
    /// Too many connections.
    pub const TOO_MANY_CONNECTIONS: &str = "53300";
    /// Admin shutdown / fenced writer.
    pub const ADMIN_SHUTDOWN: &str = "57P01";
    /// `snapshot_too_old`: the snapshot asked for is below the retention floor.
    pub const SNAPSHOT_TOO_OLD: &str = "72000";
    /// `active_sql_transaction`: the statement cannot run in a transaction block.
    pub const ACTIVE_SQL_TRANSACTION: &str = "25001";
    /// `invalid_parameter_value`.
    pub const INVALID_PARAMETER_VALUE: &str = "22023";
}
