//! Plugs RockLake's SQL engine ([`rocklake_sql::Session`]) into the server:
//! the engine's session is a [`SqlSession`], and [`EngineSessions`] opens one
//! per connection over a shared [`Storage`].

use std::sync::Arc;

use async_trait::async_trait;
use rocklake_sql::{CatalogResults, Session, Storage};
use rocklake_types::{BatchResult, ColumnDef, QueryOutput, Row, SqlError, TxStatus};
use rocklake_wire::startup::ClientParams;
use rocklake_wire::{SessionFactory, SqlSession};

/// The engine's [`Session`] as the wire server's [`SqlSession`].
pub struct EngineSession(pub Session);

#[async_trait]
impl SqlSession for EngineSession {
    async fn execute(&mut self, sql: &str) -> BatchResult {
        self.0.execute(sql).await
    }

    async fn describe(&mut self, sql: &str) -> Result<Vec<ColumnDef>, SqlError> {
        self.0.describe(sql).await
    }

    async fn copy_in_finish(&mut self, rows: Vec<Row>) -> Result<QueryOutput, SqlError> {
        self.0.copy_in_finish(rows).await
    }

    async fn copy_in_abort(&mut self) {
        self.0.copy_in_abort().await
    }

    fn status(&self) -> TxStatus {
        self.0.status()
    }

    fn backend_pid(&self) -> Option<i32> {
        Some(self.0.backend_pid())
    }
}

/// Opens an engine [`Session`] over `storage` for each connection, named
/// after the database the client asked for; the sessions share the results
/// of catalog queries.
pub struct EngineSessions {
    storage: Arc<dyn Storage>,
    catalog_results: Arc<CatalogResults>,
}

impl EngineSessions {
    /// A factory whose sessions all use `storage`.
    pub fn new(storage: Arc<dyn Storage>) -> Self {
        EngineSessions {
            storage,
            catalog_results: Arc::default(),
        }
    }
}

impl SessionFactory for EngineSessions {
    fn new_session(&self, client: &ClientParams) -> Box<dyn SqlSession> {
        let mut session =
            Session::sharing(Arc::clone(&self.storage), Arc::clone(&self.catalog_results));
        session.set_database(&client.database);
        session.set_identity(client.identity());
        Box::new(EngineSession(session))
    }
}
