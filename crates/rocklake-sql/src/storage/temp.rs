//! Temporary tables: `CREATE [LOCAL] TEMPORARY TABLE ... ON COMMIT DROP`.
//!
//! postgres_scanner sends this for an UPDATE that DuckDB cannot express as one
//! statement (e.g. `ducklake_set_option` overwriting an option): a temporary
//! table, a text `COPY ... FROM STDIN` into it, then `UPDATE t SET ... FROM tmp
//! WHERE t.ctid = tmp.__page_id_string::TID`, all in one transaction.
//!
//! [`TempOverlay`] wraps a transaction of the real storage. Relations in the
//! schema [`TEMP_SCHEMA`] live in an in-memory store private to the overlay;
//! everything else goes to the real transaction. The in-memory store is simply
//! dropped with the overlay, so temporary tables never reach the catalog:
//! exactly `ON COMMIT DROP` (and the table also vanishes on ROLLBACK, as in
//! PostgreSQL).

use std::sync::Arc;

use async_trait::async_trait;
use rocklake_types::datum::Row;

use crate::storage::memory::MemoryStorage;
use crate::storage::{
    LockStrength, LockWait, RelationChange, RelationDef, RelationList, ScanFilter, ScanRows,
    Storage, StorageResult, StorageTxn,
};
use rocklake_types::rows::{RowId, ScannedRow};

/// The schema temporary relations live in; unqualified names look here first.
pub const TEMP_SCHEMA: &str = "pg_temp";

/// A storage transaction plus this transaction's temporary tables.
pub struct TempOverlay {
    inner: Box<dyn StorageTxn>,
    temp: Option<Box<dyn StorageTxn>>,
}

impl TempOverlay {
    /// Wraps `inner`; no temporary store exists until the first temporary table.
    pub fn new(inner: Box<dyn StorageTxn>) -> Self {
        TempOverlay { inner, temp: None }
    }

    async fn temp(&mut self) -> StorageResult<&mut Box<dyn StorageTxn>> {
        if self.temp.is_none() {
            let mut txn = MemoryStorage::new().begin(false).await?;
            txn.create_schema(TEMP_SCHEMA, true).await?;
            self.temp = Some(txn);
        }
        Ok(self.temp.as_mut().expect("just created"))
    }

    async fn route(&mut self, schema: &str) -> StorageResult<&mut Box<dyn StorageTxn>> {
        if schema == TEMP_SCHEMA {
            self.temp().await
        } else {
            Ok(&mut self.inner)
        }
    }
}

#[async_trait]
impl StorageTxn for TempOverlay {
    async fn relation(&mut self, schema: &str, name: &str) -> StorageResult<Option<RelationDef>> {
        if schema == TEMP_SCHEMA && self.temp.is_none() {
            return Ok(None);
        }
        self.route(schema).await?.relation(schema, name).await
    }

    async fn relations(&mut self) -> StorageResult<RelationList> {
        let stored = self.inner.relations().await?;
        let Some(temp) = self.temp.as_mut() else {
            return Ok(stored);
        };
        let mut all = Vec::clone(&stored);
        all.extend(temp.relations().await?.iter().cloned());
        Ok(Arc::new(all))
    }

    /// Temporary tables live in this transaction only: with any, the lists
    /// are this transaction's own.
    async fn catalog_version(&mut self) -> StorageResult<Option<u64>> {
        if self.temp.is_some() {
            return Ok(None);
        }
        self.inner.catalog_version().await
    }

    async fn create_relation(
        &mut self,
        def: RelationDef,
        if_not_exists: bool,
    ) -> StorageResult<bool> {
        let schema = def.schema.clone();
        self.route(&schema)
            .await?
            .create_relation(def, if_not_exists)
            .await
    }

    async fn drop_relation(
        &mut self,
        schema: &str,
        name: &str,
        if_exists: bool,
    ) -> StorageResult<bool> {
        self.route(schema)
            .await?
            .drop_relation(schema, name, if_exists)
            .await
    }

    async fn alter_relation(
        &mut self,
        schema: &str,
        name: &str,
        change: RelationChange,
    ) -> StorageResult<RelationDef> {
        self.route(schema)
            .await?
            .alter_relation(schema, name, change)
            .await
    }

    async fn database_bytes(&mut self) -> StorageResult<Option<u64>> {
        self.inner.database_bytes().await
    }

    async fn relation_bytes(&mut self) -> StorageResult<Vec<(String, String, u64)>> {
        self.inner.relation_bytes().await
    }

    async fn create_schema(&mut self, name: &str, if_not_exists: bool) -> StorageResult<bool> {
        self.inner.create_schema(name, if_not_exists).await
    }

    async fn drop_schema(
        &mut self,
        name: &str,
        if_exists: bool,
        cascade: bool,
    ) -> StorageResult<bool> {
        self.inner.drop_schema(name, if_exists, cascade).await
    }

    async fn schemas(&mut self) -> StorageResult<Vec<String>> {
        self.inner.schemas().await
    }

    async fn scan(
        &mut self,
        relation: &RelationDef,
        filter: &ScanFilter,
    ) -> StorageResult<Vec<ScannedRow>> {
        self.route(&relation.schema)
            .await?
            .scan(relation, filter)
            .await
    }

    async fn scan_shared(
        &mut self,
        relation: &RelationDef,
        filter: &ScanFilter,
    ) -> StorageResult<ScanRows> {
        self.route(&relation.schema)
            .await?
            .scan_shared(relation, filter)
            .await
    }

    async fn insert(&mut self, relation: &RelationDef, rows: Vec<Row>) -> StorageResult<()> {
        self.route(&relation.schema)
            .await?
            .insert(relation, rows)
            .await
    }

    async fn update(
        &mut self,
        relation: &RelationDef,
        id: RowId,
        new_row: Row,
    ) -> StorageResult<()> {
        self.route(&relation.schema)
            .await?
            .update(relation, id, new_row)
            .await
    }

    async fn delete(&mut self, relation: &RelationDef, id: RowId) -> StorageResult<()> {
        self.route(&relation.schema)
            .await?
            .delete(relation, id)
            .await
    }

    async fn lock_row(
        &mut self,
        relation: &RelationDef,
        id: RowId,
        strength: LockStrength,
        wait: LockWait,
    ) -> StorageResult<bool> {
        // Temporary tables are the session's own: nothing to lock.
        if relation.schema == TEMP_SCHEMA {
            return Ok(true);
        }
        self.inner.lock_row(relation, id, strength, wait).await
    }

    /// Commits the real transaction; the temporary tables are dropped.
    async fn commit(self: Box<Self>) -> StorageResult<()> {
        self.inner.commit().await
    }
}
