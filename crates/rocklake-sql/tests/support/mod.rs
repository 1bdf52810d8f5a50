//! Helpers shared by the session-level integration tests.
#![allow(dead_code)] // each test crate uses its own subset

use std::sync::Arc;

use rocklake_sql::{MemoryStorage, Session};
use rocklake_types::output::QueryOutput;

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
