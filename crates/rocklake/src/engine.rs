//! Plugs RockLake's SQL engine ([`rocklake_sql::Session`]) into the server:
//! the engine's session is a [`SqlSession`], and [`EngineSessions`] opens one
//! per connection over a shared [`Storage`].

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rocklake_sql::{format_milliseconds, CatalogResults, Session, Storage};
use rocklake_types::{BindParam, Deallocate, Described, ResultSink, SinkError, SqlError, TxStatus};
use rocklake_wire::{SessionFactory, SessionStart, SqlSession};

/// The engine's [`Session`] as the wire server's [`SqlSession`].
pub struct EngineSession(pub Session);

#[async_trait]
impl SqlSession for EngineSession {
    async fn run(&mut self, sql: &str, sink: &mut dyn ResultSink) -> Result<(), SinkError> {
        self.0.run(sql, sink).await
    }

    async fn run_bound(
        &mut self,
        sql: &str,
        params: &[BindParam],
        sink: &mut dyn ResultSink,
    ) -> Result<(), SinkError> {
        self.0.run_bound(sql, params, sink).await
    }

    async fn describe(&mut self, sql: &str, param_types: &[u32]) -> Result<Described, SqlError> {
        self.0.describe(sql, param_types).await
    }

    fn take_deallocations(&mut self) -> Vec<Deallocate> {
        self.0.take_deallocations()
    }

    fn status(&self) -> TxStatus {
        self.0.status()
    }

    fn idle_in_transaction_timeout(&self) -> Option<Duration> {
        self.0.idle_in_transaction_timeout()
    }
}

/// Limits every session of a server gets (from `rocklake serve`'s flags).
#[derive(Debug, Clone, Default)]
pub struct SessionLimits {
    /// Bytes one statement may hold in kept rows; `None` for the engine's
    /// default.
    pub statement_memory: Option<usize>,
    /// Default of `statement_timeout` (sessions may change it).
    pub statement_timeout: Option<Duration>,
    /// Default of `idle_in_transaction_session_timeout`.
    pub idle_in_transaction_timeout: Option<Duration>,
}

/// Opens an engine [`Session`] over `storage` for each connection, named
/// after the database the client asked for; the sessions share the results
/// of catalog queries.
pub struct EngineSessions {
    storage: Arc<dyn Storage>,
    catalog_results: Arc<CatalogResults>,
    limits: SessionLimits,
}

impl EngineSessions {
    /// A factory whose sessions all use `storage`.
    pub fn new(storage: Arc<dyn Storage>) -> Self {
        EngineSessions {
            storage,
            catalog_results: Arc::default(),
            limits: SessionLimits::default(),
        }
    }

    /// Gives every session these limits.
    pub fn with_limits(mut self, limits: SessionLimits) -> Self {
        self.limits = limits;
        self
    }
}

impl SessionFactory for EngineSessions {
    fn new_session(&self, start: SessionStart<'_>) -> Box<dyn SqlSession> {
        let mut session =
            Session::sharing(Arc::clone(&self.storage), Arc::clone(&self.catalog_results));
        session.set_database(&start.client.database);
        session.set_identity(start.client.identity());
        session.set_backend_pid(start.pid);
        session.set_interrupt(start.interrupt);
        if let Some(bytes) = self.limits.statement_memory {
            session.set_memory_limit(bytes);
        }
        let time_defaults = [
            ("statement_timeout", self.limits.statement_timeout),
            (
                "idle_in_transaction_session_timeout",
                self.limits.idle_in_transaction_timeout,
            ),
        ];
        for (name, timeout) in time_defaults {
            let Some(timeout) = timeout else { continue };
            if let Err(error) = session.set_default_setting(name, &format_milliseconds(timeout)) {
                tracing::warn!(name, %error, "server default of a setting refused");
            }
        }
        Box::new(EngineSession(session))
    }
}
