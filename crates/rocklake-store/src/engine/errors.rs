//! Store errors as the PostgreSQL errors a client gets.

use rocklake_codec::relations::alter::AlterError;
use rocklake_codec::values::ValueError;
use rocklake_types::{SqlError, SqlState};

use crate::error::{ObjectKind, StoreError};

/// Maps a store error to the PostgreSQL error a client would get.
pub fn to_sql(error: StoreError) -> SqlError {
    match error {
        StoreError::UniqueViolation {
            schema,
            table,
            columns,
            values,
        } => {
            if table == "ducklake_snapshot" {
                rocklake_metrics::metrics().snapshot_conflict();
            }
            SqlError::unique_violation(&schema, &table, &columns, &values)
        }
        StoreError::Conflict { .. } => SqlError::new(
            SqlState::SERIALIZATION_FAILURE,
            "could not serialize access due to concurrent update",
        )
        .with_detail(error.to_string()),
        StoreError::Deadlock => SqlError::new(SqlState::DEADLOCK_DETECTED, "deadlock detected")
            .with_detail(error.to_string()),
        StoreError::LockNotAvailable { .. } => {
            SqlError::new(SqlState::LOCK_NOT_AVAILABLE, error.to_string())
        }
        StoreError::Fenced { .. } => SqlError::new(SqlState::ADMIN_SHUTDOWN, error.to_string()),
        StoreError::ReadOnly => SqlError::new(
            SqlState::READ_ONLY_SQL_TRANSACTION,
            "cannot execute this statement in a read-only transaction",
        ),
        StoreError::AlreadyExists {
            kind: ObjectKind::Schema,
            name,
        } => SqlError::new(
            SqlState::DUPLICATE_SCHEMA,
            format!("schema \"{name}\" already exists"),
        ),
        StoreError::AlreadyExists {
            kind: ObjectKind::Checkpoint,
            name,
        } => SqlError::new(
            SqlState::DUPLICATE_OBJECT,
            format!("checkpoint \"{name}\" already exists"),
        ),
        StoreError::NotFound {
            kind: ObjectKind::Checkpoint,
            name,
        } => SqlError::new(
            SqlState::UNDEFINED_OBJECT,
            format!("checkpoint \"{name}\" does not exist"),
        ),
        StoreError::AlreadyExists { name, .. } => SqlError::new(
            SqlState::DUPLICATE_TABLE,
            format!("relation \"{name}\" already exists"),
        ),
        StoreError::NotFound {
            kind: ObjectKind::Schema,
            name,
        } => SqlError::new(
            SqlState::INVALID_SCHEMA_NAME,
            format!("schema \"{name}\" does not exist"),
        ),
        StoreError::NotFound {
            kind: ObjectKind::Relation,
            name,
        } => SqlError::new(
            SqlState::UNDEFINED_TABLE,
            format!("table \"{name}\" does not exist"),
        ),
        StoreError::NotFound { name, .. } => SqlError::new(
            SqlState::UNDEFINED_TABLE,
            format!("relation \"{name}\" does not exist"),
        ),
        StoreError::Unsupported(message) => SqlError::unsupported(message),
        StoreError::Alter(alter) => SqlError::new(
            match alter {
                AlterError::NoSuchColumn { .. } => SqlState::UNDEFINED_COLUMN,
                AlterError::DuplicateColumn { .. } => SqlState::DUPLICATE_COLUMN,
                AlterError::KeyColumn { .. } => SqlState::FEATURE_NOT_SUPPORTED,
            },
            alter.to_string(),
        ),
        StoreError::InvalidRequest(message) => {
            SqlError::new(SqlState::INVALID_PARAMETER_VALUE, message)
        }
        StoreError::BelowRetention { .. } => {
            SqlError::new(SqlState::SNAPSHOT_TOO_OLD, error.to_string())
        }
        StoreError::Value(value) => match &value {
            ValueError::NotNull { column, .. } | ValueError::NullKey { column, .. } => {
                SqlError::new(
                    SqlState::NOT_NULL_VIOLATION,
                    format!("null value in column \"{column}\" violates not-null constraint"),
                )
                .with_detail(value.to_string())
            }
            ValueError::TypeMismatch { .. } | ValueError::Arity { .. } => {
                SqlError::new(SqlState::DATATYPE_MISMATCH, value.to_string())
            }
            ValueError::NegativeKey { .. } => {
                SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, value.to_string())
            }
            ValueError::Corrupt { .. } => {
                SqlError::new(SqlState::DATA_CORRUPTED, value.to_string())
            }
        },
        StoreError::Storage { .. } | StoreError::Journal(_) => {
            SqlError::new(SqlState::IO_ERROR, error.to_string())
        }
        other => SqlError::internal(other.to_string()),
    }
}
