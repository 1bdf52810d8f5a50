//! [`CountingTxn`]: a storage transaction that counts the writes asked of
//! it, so that the session knows whether a statement changed anything (a
//! statement that failed before writing leaves a savepoint recoverable).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use rocklake_types::datum::Row;

use crate::storage::{
    LockStrength, LockWait, RelationChange, RelationDef, RelationList, RowId, ScanFilter, ScanRows,
    ScannedRow, StorageResult, StorageTxn,
};

/// How many writes a transaction was asked for (also those that failed:
/// a failed write may have changed part of what it was given).
#[derive(Debug, Clone, Default)]
pub(crate) struct WriteCount(Arc<AtomicU64>);

impl WriteCount {
    /// The writes so far.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn note(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Passes every call to `inner`, counting those that write.
pub(crate) struct CountingTxn {
    inner: Box<dyn StorageTxn>,
    count: WriteCount,
}

impl CountingTxn {
    /// Wraps `inner`; `count` goes up with each write.
    pub fn new(inner: Box<dyn StorageTxn>, count: WriteCount) -> Self {
        CountingTxn { inner, count }
    }
}

#[async_trait]
impl StorageTxn for CountingTxn {
    async fn relation(&mut self, schema: &str, name: &str) -> StorageResult<Option<RelationDef>> {
        self.inner.relation(schema, name).await
    }

    async fn relations(&mut self) -> StorageResult<RelationList> {
        self.inner.relations().await
    }

    async fn catalog_version(&mut self) -> StorageResult<Option<u64>> {
        self.inner.catalog_version().await
    }

    async fn create_relation(
        &mut self,
        def: RelationDef,
        if_not_exists: bool,
    ) -> StorageResult<bool> {
        self.count.note();
        self.inner.create_relation(def, if_not_exists).await
    }

    async fn drop_relation(
        &mut self,
        schema: &str,
        name: &str,
        if_exists: bool,
    ) -> StorageResult<bool> {
        self.count.note();
        self.inner.drop_relation(schema, name, if_exists).await
    }

    async fn alter_relation(
        &mut self,
        schema: &str,
        name: &str,
        change: RelationChange,
    ) -> StorageResult<RelationDef> {
        self.count.note();
        self.inner.alter_relation(schema, name, change).await
    }

    async fn database_bytes(&mut self) -> StorageResult<Option<u64>> {
        self.inner.database_bytes().await
    }

    async fn relation_bytes(&mut self) -> StorageResult<Vec<(String, String, u64)>> {
        self.inner.relation_bytes().await
    }

    async fn create_schema(&mut self, name: &str, if_not_exists: bool) -> StorageResult<bool> {
        self.count.note();
        self.inner.create_schema(name, if_not_exists).await
    }

    async fn drop_schema(
        &mut self,
        name: &str,
        if_exists: bool,
        cascade: bool,
    ) -> StorageResult<bool> {
        self.count.note();
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
        self.inner.scan(relation, filter).await
    }

    async fn scan_shared(
        &mut self,
        relation: &RelationDef,
        filter: &ScanFilter,
    ) -> StorageResult<ScanRows> {
        self.inner.scan_shared(relation, filter).await
    }

    async fn insert(&mut self, relation: &RelationDef, rows: Vec<Row>) -> StorageResult<()> {
        self.count.note();
        self.inner.insert(relation, rows).await
    }

    async fn update(
        &mut self,
        relation: &RelationDef,
        id: RowId,
        new_row: Row,
    ) -> StorageResult<()> {
        self.count.note();
        self.inner.update(relation, id, new_row).await
    }

    async fn delete(&mut self, relation: &RelationDef, id: RowId) -> StorageResult<()> {
        self.count.note();
        self.inner.delete(relation, id).await
    }

    async fn lock_row(
        &mut self,
        relation: &RelationDef,
        id: RowId,
        strength: LockStrength,
        wait: LockWait,
    ) -> StorageResult<bool> {
        self.inner.lock_row(relation, id, strength, wait).await
    }

    async fn commit(self: Box<Self>) -> StorageResult<()> {
        self.inner.commit().await
    }
}
