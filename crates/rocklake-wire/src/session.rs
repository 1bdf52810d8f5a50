//! What the wire server needs from the SQL layer: one [`SqlSession`] per client
//! connection, created by a [`SessionFactory`].
//!
//! A session sends what its statements produce to a
//! [`rocklake_types::ResultSink`] (the connection, which encodes
//! it for the client as it arrives) and stops its running statement when
//! its [`Interrupt`] says so. Keeping the contract here lets the server be
//! tested with fake sessions and keeps the engine free of wire concerns.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rocklake_types::output::{ResultSink, TxStatus};
use rocklake_types::params::{BindParam, Deallocate, Described};
use rocklake_types::{Interrupt, SinkError, SqlError};

use crate::startup::ClientParams;

/// One client's SQL session: its transaction state and statement execution.
#[async_trait]
pub trait SqlSession: Send {
    /// Runs a query string that may hold several `;`-separated statements,
    /// sending each statement's results to `sink` as they are produced, and
    /// stopping after the first error. Fails only when the sink reports the
    /// client connection gone.
    async fn run(&mut self, sql: &str, sink: &mut dyn ResultSink) -> Result<(), SinkError>;

    /// Runs one statement of the extended protocol with the values of its
    /// parameters (`$1` is `params[0]`), like [`SqlSession::run`].
    async fn run_bound(
        &mut self,
        sql: &str,
        params: &[BindParam],
        sink: &mut dyn ResultSink,
    ) -> Result<(), SinkError> {
        if params.is_empty() {
            return self.run(sql, sink).await;
        }
        sink.error(&SqlError::unsupported("bind parameters are not supported"))
            .await
    }

    /// Parse + Describe of a single statement without running it: its
    /// parameters' types (`param_types` as Parse declared them, 0 where not
    /// given) and its result columns (empty for a statement that returns no
    /// rows: the server then answers NoData).
    async fn describe(&mut self, sql: &str, param_types: &[u32]) -> Result<Described, SqlError>;

    /// The prepared statements `DEALLOCATE` statements dropped since the
    /// last call (the connection forgets them).
    fn take_deallocations(&mut self) -> Vec<Deallocate> {
        Vec::new()
    }

    /// Transaction state to report in ReadyForQuery.
    fn status(&self) -> TxStatus;

    /// An error of the extended protocol outside a statement's execution
    /// (at Parse, Bind, Describe or Close) happened: as in PostgreSQL, it
    /// aborts an open transaction block (later statements get 25P02 until
    /// ROLLBACK).
    fn protocol_error(&mut self) {}

    /// How long the session may wait for its client inside a transaction
    /// block (`idle_in_transaction_session_timeout`); `None` for no limit.
    fn idle_in_transaction_timeout(&self) -> Option<Duration> {
        None
    }

    /// The reported settings (PostgreSQL's `GUC_REPORT` ones) whose values
    /// changed since the client was last told them, with their new values:
    /// sent as ParameterStatus before ReadyForQuery.
    fn take_reported_changes(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Where notifications for the client wait (LISTEN/NOTIFY): the
    /// connection sends them while the session is idle outside a
    /// transaction block, and before ReadyForQuery once a block ends.
    fn mailbox(&self) -> Option<Arc<rocklake_types::notify::Mailbox>> {
        None
    }
}

/// What the server gives a new session.
pub struct SessionStart<'a> {
    /// The client's startup parameters (`database`, `user`, ...).
    pub client: &'a ClientParams,
    /// The session's process id, unique among the server's sessions: the
    /// one in BackendKeyData, which `pg_backend_pid()` should return.
    pub pid: i32,
    /// Stops the session's running statement (the server sets it on cancel
    /// requests, shutdown and a vanished client).
    pub interrupt: Arc<Interrupt>,
    /// The client's address (`pg_stat_activity.client_addr`).
    pub peer: Option<std::net::SocketAddr>,
}

/// Creates a fresh [`SqlSession`] for each authenticated connection. Any
/// `Fn() -> Box<dyn SqlSession>` closure is a factory (ignoring what
/// [`SessionStart`] says).
#[async_trait]
pub trait SessionFactory: Send + Sync {
    /// A new session for the client of `start`, or the error that ends the
    /// connection (sent as FATAL), e.g. 3D000 for an unknown database.
    async fn new_session(&self, start: SessionStart<'_>) -> Result<Box<dyn SqlSession>, SqlError>;

    /// Whether the server is a hot standby now (a read replica, or a
    /// standby that has not taken over): its new sessions report
    /// `in_hot_standby = on`, as libpq's `target_session_attrs` reads it.
    fn hot_standby(&self) -> bool {
        false
    }
}

#[async_trait]
impl<F> SessionFactory for F
where
    F: Fn() -> Box<dyn SqlSession> + Send + Sync,
{
    async fn new_session(&self, _start: SessionStart<'_>) -> Result<Box<dyn SqlSession>, SqlError> {
        Ok(self())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Idle;

    #[async_trait]
    impl SqlSession for Idle {
        async fn run(&mut self, _sql: &str, _sink: &mut dyn ResultSink) -> Result<(), SinkError> {
            Ok(())
        }
        async fn describe(&mut self, _sql: &str, _types: &[u32]) -> Result<Described, SqlError> {
            Ok(Described::default())
        }
        fn status(&self) -> TxStatus {
            TxStatus::Idle
        }
    }

    #[tokio::test]
    async fn closures_are_factories() {
        let factory: Arc<dyn SessionFactory> =
            Arc::new(|| -> Box<dyn SqlSession> { Box::new(Idle) });
        let session = factory
            .new_session(SessionStart {
                client: &ClientParams::default(),
                pid: 1,
                interrupt: Arc::default(),
                peer: None,
            })
            .await
            .unwrap();
        assert_eq!(session.status(), TxStatus::Idle);
        assert_eq!(session.idle_in_transaction_timeout(), None);
    }
}
