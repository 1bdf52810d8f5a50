//! Helpers shared by the session-level integration tests.
#![allow(dead_code)] // each test crate uses its own subset

use std::sync::Arc;

use rocklake_sql::{MemoryStorage, Session};
use rocklake_types::datum::PgType;
use rocklake_types::output::QueryOutput;
use rocklake_types::value::text::format_text;
use rocklake_types::SqlError;

/// A session over (a clone of) `storage`.
pub fn session(storage: &MemoryStorage) -> Session {
    Session::new(Arc::new(storage.clone()))
}

/// The outputs of `sql`'s statements; panics (naming `sql`) on an error.
pub async fn ok(s: &mut Session, sql: &str) -> Vec<QueryOutput> {
    s.execute(sql)
        .await
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{sql}: {e}")))
        .collect()
}

/// The rows of `sql` (one statement), each as its values' text forms
/// joined by `|`, NULL as `NULL`; panics on an error.
pub async fn text_rows(s: &mut Session, sql: &str) -> Vec<String> {
    let mut outputs = ok(s, sql).await;
    assert_eq!(outputs.len(), 1, "{sql}");
    match outputs.remove(0) {
        QueryOutput::Rows { rows, .. } => rows
            .into_rows()
            .iter()
            .map(|row| {
                row.iter()
                    .map(|d| format_text(d).unwrap_or_else(|| "NULL".into()))
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect(),
        other => panic!("{sql}: expected rows, got {other:?}"),
    }
}

/// The names and types of the result columns of `sql` (one statement).
pub async fn result_columns(s: &mut Session, sql: &str) -> Vec<(String, PgType)> {
    let mut outputs = ok(s, sql).await;
    match outputs.remove(0) {
        QueryOutput::Rows { columns, .. } => {
            columns.into_iter().map(|c| (c.name, c.pg_type)).collect()
        }
        other => panic!("{sql}: expected rows, got {other:?}"),
    }
}

/// The error `sql` fails with (its last statement's).
pub async fn error(s: &mut Session, sql: &str) -> SqlError {
    match s.execute(sql).await.into_iter().last() {
        Some(Err(e)) => e,
        other => panic!("{sql}: expected an error, got {other:?}"),
    }
}
