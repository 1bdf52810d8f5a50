//! What the wire server needs from the SQL layer: one [`SqlSession`] per client
//! connection, created by a [`SessionFactory`].
//!
//! The trait mirrors the session the SQL engine exposes; keeping it here lets
//! the server be tested with fake sessions and keeps the engine free of wire
//! concerns.

use async_trait::async_trait;
use rocklake_types::datum::{ColumnDef, Row};
use rocklake_types::output::{BatchResult, QueryOutput, TxStatus};
use rocklake_types::SqlError;

use crate::startup::ClientParams;

/// One client's SQL session: its transaction state and statement execution.
#[async_trait]
pub trait SqlSession: Send {
    /// Runs a query string that may hold several `;`-separated statements.
    /// Returns one entry per statement executed, stopping at (and including)
    /// the first error. A [`QueryOutput::CopyIn`] entry must be the last one:
    /// the server then collects the COPY data and calls
    /// [`SqlSession::copy_in_finish`] or [`SqlSession::copy_in_abort`].
    async fn execute(&mut self, sql: &str) -> BatchResult;

    /// Result columns of a single statement without running it; empty for a
    /// statement that returns no rows (the server then answers NoData).
    async fn describe(&mut self, sql: &str) -> Result<Vec<ColumnDef>, SqlError>;

    /// Completes the pending `COPY ... FROM STDIN` with the decoded rows and
    /// returns its result (normally `Command { tag: "COPY n" }`).
    async fn copy_in_finish(&mut self, rows: Vec<Row>) -> Result<QueryOutput, SqlError>;

    /// Abandons the pending `COPY ... FROM STDIN` (client CopyFail, malformed
    /// data, or a dropped connection); the session treats it like a failed
    /// statement.
    async fn copy_in_abort(&mut self);

    /// Transaction state to report in ReadyForQuery.
    fn status(&self) -> TxStatus;

    /// Process id to report in BackendKeyData (what `pg_backend_pid()`
    /// returns); `None` lets the server number connections itself.
    fn backend_pid(&self) -> Option<i32> {
        None
    }
}

/// Creates a fresh [`SqlSession`] for each authenticated connection. Any
/// `Fn() -> Box<dyn SqlSession>` closure is a factory (ignoring the client's
/// startup parameters).
pub trait SessionFactory: Send + Sync {
    /// A new session for a client that asked for `client.database` as
    /// `client.user`.
    fn new_session(&self, client: &ClientParams) -> Box<dyn SqlSession>;
}

impl<F> SessionFactory for F
where
    F: Fn() -> Box<dyn SqlSession> + Send + Sync,
{
    fn new_session(&self, _client: &ClientParams) -> Box<dyn SqlSession> {
        self()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Idle;

    #[async_trait]
    impl SqlSession for Idle {
        async fn execute(&mut self, _sql: &str) -> BatchResult {
            Vec::new()
        }
        async fn describe(&mut self, _sql: &str) -> Result<Vec<ColumnDef>, SqlError> {
            Ok(Vec::new())
        }
        async fn copy_in_finish(&mut self, _rows: Vec<Row>) -> Result<QueryOutput, SqlError> {
            Err(SqlError::internal("no COPY in progress"))
        }
        async fn copy_in_abort(&mut self) {}
        fn status(&self) -> TxStatus {
            TxStatus::Idle
        }
    }

    #[test]
    fn closures_are_factories() {
        let factory: std::sync::Arc<dyn SessionFactory> =
            std::sync::Arc::new(|| -> Box<dyn SqlSession> { Box::new(Idle) });
        let session = factory.new_session(&ClientParams::default());
        assert_eq!(session.status(), TxStatus::Idle);
        assert_eq!(session.backend_pid(), None);
    }
}
