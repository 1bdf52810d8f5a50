//! Copying a lake's catalog, key by key, from one consistent state into a
//! new location: what `rocklake backup` does for every lake of a root.
//!
//! The source is read without opening it as a writer (no server is
//! fenced): from a named checkpoint, or from the latest state a reader
//! replays (every acknowledged commit, the WAL included), pinned by the
//! reader's own temporary checkpoint while the copy runs. One scan reads
//! one state of the database, and each commit is one SlateDB write batch,
//! so the copy holds whole commits only. Every key comes over as it is
//! (catalog rows with their MVCC versions, counters, system keys), so the
//! copy opens as the same catalog; its SSTs are new and compacted, and an
//! encrypted catalog is copied encrypted with the same keys. The commits a
//! local catalog's writer acknowledged from its commit journal, but SlateDB
//! had not written yet, are added on top (see [`crate::journal`]).

use std::ops::RangeFull;
use std::sync::Arc;

use slatedb::config::{DbReaderOptions, ScanOptions};
use slatedb::{Db, DbReader, DbReaderMode, WriteBatch};

use crate::encryption::{CatalogKeys, Opening};
use crate::error::{StoreError, StoreResult};
use crate::journal::PendingCommits;
use crate::location::StoreLocation;
use crate::opening::CatalogDb;

/// Bytes of keys and values per write batch of the copy.
const BATCH_BYTES: usize = 4 << 20;

/// What a copy wrote.
#[derive(Debug, Default, Clone, Copy)]
pub struct CopyReport {
    /// Keys copied.
    pub keys: u64,
    /// Bytes of keys and values copied.
    pub bytes: u64,
    /// Commits added from the source's commit journal (acknowledged, not
    /// yet written by SlateDB; see [`crate::journal`]).
    pub journaled: u64,
}

/// Copies the catalog at `source` (its checkpoint `checkpoint`, or its
/// latest state) into `target`, which must hold no catalog.
pub async fn copy_catalog(
    source: &StoreLocation,
    checkpoint: Option<&str>,
    target: &StoreLocation,
    keys: Option<&Arc<CatalogKeys>>,
) -> StoreResult<CopyReport> {
    if target.holds_catalog().await? {
        return Err(StoreError::InvalidRequest(format!(
            "{target} already holds a catalog"
        )));
    }
    let mode = match checkpoint {
        Some(name) => DbReaderMode::Checkpoint(crate::checkpoints::find(source, name).await?.id),
        None => DbReaderMode::ManagedCheckpoint,
    };
    let source_db = CatalogDb::prepare(source, keys, Opening::Reader).await?;
    // The latest state includes what the writer acknowledged from its
    // journal: read before the reader opens (see PendingCommits).
    let pending = match checkpoint {
        Some(_) => None,
        None => Some(PendingCommits::read(source, source_db.cipher.as_ref()).await?),
    };
    let reader = source_db
        .reader()
        .with_options(DbReaderOptions::default())
        .with_reader_mode(mode)
        .build()
        .await
        .map_err(|e| StoreError::storage(format!("opening {source} to copy it"), e, 0))?;
    let writer = CatalogDb::prepare(target, keys, Opening::Writer)
        .await?
        .writer()
        .build()
        .await
        .map_err(|e| StoreError::storage(format!("creating the copy at {target}"), e, 0))?;
    let mut copied = copy_keys(&reader, &writer, source, target).await;
    if let (Ok(report), Some(pending)) = (&mut copied, &pending) {
        match add_journaled(&reader, &writer, pending, target).await {
            Ok(commits) => report.journaled = commits,
            Err(error) => copied = Err(error),
        }
    }
    let closed = writer
        .close()
        .await
        .map_err(|e| StoreError::storage(format!("closing the copy at {target}"), e, 0));
    let _ = reader.close().await;
    let report = copied?;
    closed?;
    Ok(report)
}

async fn copy_keys(
    reader: &DbReader,
    writer: &Db,
    source: &StoreLocation,
    target: &StoreLocation,
) -> StoreResult<CopyReport> {
    let reading = || format!("reading {source} to copy it");
    let options = ScanOptions {
        read_ahead_bytes: 1 << 20,
        cache_blocks: false,
        ..ScanOptions::default()
    };
    let mut iter = reader
        .scan_with_options::<RangeFull>(.., &options)
        .await
        .map_err(|e| StoreError::storage(reading(), e, 0))?;
    let mut report = CopyReport::default();
    let mut batch = WriteBatch::new();
    let mut batch_bytes = 0;
    while let Some(kv) = iter
        .next()
        .await
        .map_err(|e| StoreError::storage(reading(), e, 0))?
    {
        let size = kv.key.len() + kv.value.len();
        batch.put(&kv.key, &kv.value);
        batch_bytes += size;
        report.keys += 1;
        report.bytes += size as u64;
        if batch_bytes >= BATCH_BYTES {
            write(writer, std::mem::take(&mut batch), target).await?;
            batch_bytes = 0;
        }
    }
    write(writer, batch, target).await?;
    Ok(report)
}

/// Writes the commits of `pending` the copied state does not hold, in
/// order; returns how many.
async fn add_journaled(
    reader: &DbReader,
    writer: &Db,
    pending: &PendingCommits,
    target: &StoreLocation,
) -> StoreResult<u64> {
    let missing = pending.missing_from(reader).await?;
    for commit in &missing {
        write(writer, commit.batch(), target).await?;
    }
    Ok(missing.len() as u64)
}

async fn write(writer: &Db, batch: WriteBatch, target: &StoreLocation) -> StoreResult<()> {
    writer
        .write(batch)
        .await
        .map_err(|e| StoreError::storage(format!("writing the copy at {target}"), e, 0))?;
    Ok(())
}
