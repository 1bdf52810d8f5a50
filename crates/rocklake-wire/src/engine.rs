//! Plugs RockLake's SQL engine ([`rocklake_sql::Session`]) into the server:
//! the engine's session is a [`SqlSession`], and [`EngineSessions`] opens one
//! per connection over a shared [`Storage`].

use std::sync::Arc;

use async_trait::async_trait;
use rocklake_codec::datum::{ColumnDef, Row};
use rocklake_sql::catalog_results::CatalogResults;
use rocklake_sql::error::SqlError;
use rocklake_sql::output::{BatchResult, QueryOutput, TxStatus};
use rocklake_sql::storage::Storage;
use rocklake_sql::Session;

use crate::session::{SessionFactory, SqlSession};
use crate::startup::ClientParams;

#[async_trait]
impl SqlSession for Session {
    async fn execute(&mut self, sql: &str) -> BatchResult {
        Session::execute(self, sql).await
    }

    async fn describe(&mut self, sql: &str) -> Result<Vec<ColumnDef>, SqlError> {
        Session::describe(self, sql).await
    }

    async fn copy_in_finish(&mut self, rows: Vec<Row>) -> Result<QueryOutput, SqlError> {
        Session::copy_in_finish(self, rows).await
    }

    async fn copy_in_abort(&mut self) {
        Session::copy_in_abort(self).await
    }

    fn status(&self) -> TxStatus {
        Session::status(self)
    }

    fn backend_pid(&self) -> Option<i32> {
        Some(Session::backend_pid(self))
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
        Box::new(session)
    }
}
