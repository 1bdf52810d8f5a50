//! Store errors as the PostgreSQL errors a client gets.

use rocklake_codec::relations::alter::AlterError;
use rocklake_codec::values::ValueError;
use rocklake_types::{SqlError, SqlState};

use crate::error::{ObjectKind, StoreError};
use crate::faults::FaultKind;

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
        StoreError::Fenced { .. } | StoreError::LeaseLost(_) | StoreError::LeaseHeld { .. } => {
            SqlError::new(SqlState::ADMIN_SHUTDOWN, error.to_string())
        }
        StoreError::ReadOnly => SqlError::read_only("this statement"),
        StoreError::SnapshotTagged { .. } => SqlError::new(
            SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
            error.to_string(),
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
        StoreError::InvalidName { reason } => SqlError::new(SqlState::INVALID_NAME, reason),
        StoreError::DependentObjects {
            ref schema,
            ref relations,
        } => {
            let detail = relations
                .iter()
                .map(|relation| format!("table {schema}.{relation} depends on schema {schema}"))
                .collect::<Vec<_>>()
                .join("\n");
            SqlError::new(SqlState::DEPENDENT_OBJECTS_STILL_EXIST, error.to_string())
                .with_detail(detail)
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too.")
        }
        StoreError::StorageFault {
            ref fault,
            ref detail,
        } => {
            let error = match fault.kind {
                FaultKind::DiskFull => SqlError::new(SqlState::DISK_FULL, error.to_string())
                    .with_hint(
                        "Free space on the catalog's storage; commits resume by themselves.",
                    ),
                FaultKind::Io => SqlError::new(SqlState::IO_ERROR, error.to_string()),
            };
            error.with_detail(detail.clone())
        }
        StoreError::Interrupted(error) => *error,
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
        // What storage said can name the server's paths and addresses:
        // the client gets the operating system's or object store's reason,
        // the log the whole error (this is where the rest is dropped).
        StoreError::Storage { ref source, .. } => {
            tracing::error!(%error, "catalog storage failed");
            let fault = crate::faults::Fault::of(source);
            let code = match fault.kind {
                FaultKind::DiskFull => SqlState::DISK_FULL,
                FaultKind::Io => SqlState::IO_ERROR,
            };
            SqlError::new(
                code,
                format!("could not access the catalog storage: {fault}"),
            )
        }
        StoreError::Journal(_) => {
            tracing::error!(%error, "commit journal failed");
            SqlError::new(
                SqlState::IO_ERROR,
                "could not write the commit journal (see the server log)",
            )
        }
        other => {
            tracing::error!(error = %other, "catalog storage failed");
            SqlError::internal("the catalog storage failed (see the server log)")
        }
    }
}
