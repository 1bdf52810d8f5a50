//! Opening a catalog on SlateDB: writer fencing, format version, counters and
//! the system keys.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rocklake_codec::keys::{Counter, SystemKey};
use slatedb::config::{GarbageCollectorDirectoryOptions, GarbageCollectorOptions};
use slatedb::Settings;

use crate::encryption::{CatalogKeys, Opening};
use crate::error::{StoreError, StoreResult};
use crate::format::{stored_format, FORMAT_VERSION, FORMAT_WITHOUT_PLACEMENTS};
use crate::inner::StoreInner;
use crate::journal::{Journal, PendingCommits};
use crate::location::StoreLocation;
use crate::opening::CatalogDb;
use crate::reader::Reads;
use crate::scan_cache::ScanCache;
use crate::txn::{ReadTxn, WriteTxn};
use crate::upgrade::upgrade_to_current;

/// How to open a catalog.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Interval of SlateDB's background WAL flush. With the commit journal
    /// this flush is what writes journaled commits into SlateDB (replicas
    /// see them then); without it commits flush explicitly anyway. `None`
    /// disables the background flush (tests use it to simulate a crash
    /// before a batch reaches storage).
    pub flush_interval: Option<Duration>,
    /// Size at which the memtable is written out as an L0 table. Every commit
    /// updates the same few rows (table statistics, column statistics), and
    /// the memtable keeps every version of them until it is flushed, so a scan
    /// of those rows walks every version written since the last flush. With
    /// SlateDB's defaults (64 MiB, or 4096 WAL flushes, i.e. 4096 commits) a
    /// 1-row insert became four times slower after 3,000 snapshots. A flush
    /// keeps only the versions open snapshots still need.
    pub memtable_bytes: usize,
    /// Catalog keys: a new catalog is encrypted with them, an encrypted
    /// one needs one of them (see [`crate::encryption`]).
    pub keys: Option<Arc<CatalogKeys>>,
    /// Whether a catalog in a local directory acknowledges commits from its
    /// commit journal (see [`crate::journal`]) rather than from SlateDB's
    /// own durable write. Ignored on S3.
    pub commit_journal: bool,
    /// Size of the commit journal file (allocated when the writer opens;
    /// a full journal costs one SlateDB flush).
    pub journal_bytes: u64,
    /// How long a commit waits for storage (room in the journal, a durable
    /// write) before it fails with 53100 or 58030 (see [`crate::faults`]);
    /// also how long closing waits to flush.
    pub storage_timeout: Duration,
    /// The writer lease the server holds: commits are acknowledged only
    /// while it is (see [`crate::lease`]). `None` outside a server.
    pub lease: Option<Arc<crate::lease::LeaseGate>>,
}

/// [`StoreOptions::storage_timeout`] by default: long enough for an object
/// store's retries of a slow request, short enough that a client learns of
/// a full disk or an unreachable store within one statement.
pub const DEFAULT_STORAGE_TIMEOUT: Duration = Duration::from_secs(10);

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            flush_interval: Some(Duration::from_millis(100)),
            memtable_bytes: 256 * 1024,
            keys: None,
            commit_journal: true,
            journal_bytes: crate::journal::DEFAULT_FILE_BYTES,
            storage_timeout: DEFAULT_STORAGE_TIMEOUT,
            lease: None,
        }
    }
}

/// SlateDB's garbage collector as a catalog needs it. Every commit writes a
/// WAL object and the memtable becomes an L0 table every
/// [`StoreOptions::memtable_bytes`], so a busy catalog makes thousands of
/// small objects an hour that compaction soon makes obsolete. SlateDB's
/// default pass every 10 minutes lets 15 minutes' worth pile up; a pass every
/// minute keeps about 6 minutes' worth, for a few LIST requests a minute on
/// S3. The minimum age stays SlateDB's 5 minutes: read replicas follow the
/// WAL objects and need them for as long as they may lag.
///
/// Before it deletes manifests SlateDB advances a boundary file with a
/// conditional overwrite, which a local directory cannot do: there the
/// collector would log an error every pass and keep every manifest forever.
/// Without boundary files, SlateDB warns, a writer or compactor suspended for
/// longer than the minimum age could recreate a deleted manifest; on a local
/// directory that takes a process frozen for 5 minutes on the same host,
/// a risk taken over a directory that grows without end.
fn catalog_gc_options(location: &StoreLocation) -> GarbageCollectorOptions {
    let every_minute = GarbageCollectorDirectoryOptions {
        interval: Some(Duration::from_secs(60)),
        ..GarbageCollectorDirectoryOptions::default()
    };
    GarbageCollectorOptions {
        manifest_options: Some(every_minute),
        wal_options: Some(every_minute),
        compacted_options: Some(every_minute),
        boundary_files_enabled: !matches!(location, StoreLocation::Local(_)),
        ..GarbageCollectorOptions::default()
    }
}

/// The DuckLake catalog of one lake, stored in SlateDB. Cheap to clone; every
/// clone shares the same database handle.
#[derive(Clone)]
pub struct CatalogStore {
    pub(crate) inner: Arc<StoreInner>,
    location: StoreLocation,
}

impl CatalogStore {
    /// Opens (creating if needed) the catalog at `location` as its writer.
    /// Opening fences any previous writer of the same catalog: its later commits
    /// fail with [`StoreError::Fenced`]. The `writer-epoch` system key records
    /// the new writer's epoch.
    pub async fn open(
        location: &StoreLocation,
        options: StoreOptions,
    ) -> StoreResult<CatalogStore> {
        // The writer being fenced may still be writing: when its WAL write
        // wins the race with this writer's first one, SlateDB reports this
        // (newest) writer fenced. Opening again fences it for good.
        let mut attempts = 0;
        loop {
            match Self::open_once(location, options.clone()).await {
                Err(StoreError::Fenced { .. }) if attempts < 3 => {
                    attempts += 1;
                    tracing::warn!(%location, attempts, "fenced while opening: the previous writer was still writing; opening again");
                    tokio::time::sleep(Duration::from_millis(100 * attempts)).await;
                }
                outcome => return outcome,
            }
        }
    }

    async fn open_once(
        location: &StoreLocation,
        options: StoreOptions,
    ) -> StoreResult<CatalogStore> {
        let opened = CatalogDb::prepare(location, options.keys.as_ref(), Opening::Writer).await?;
        let settings = Settings {
            flush_interval: options.flush_interval,
            l0_sst_size_bytes: options.memtable_bytes,
            garbage_collector_options: Some(catalog_gc_options(location)),
            ..Settings::default()
        };
        let db = opened
            .writer()
            .with_settings(settings)
            .build()
            .await
            .map_err(|e| StoreError::storage(format!("opening catalog at {location}"), e, 0))?;
        let reads = Reads {
            source: &db,
            epoch: 0,
        };
        let format = stored_format(&reads).await?;
        let previous_epoch = reads
            .get_u64(&SystemKey::WriterEpoch.key())
            .await?
            .unwrap_or(0);
        let epoch = previous_epoch + 1;
        let mut batch = slatedb::WriteBatch::new();
        batch.put(SystemKey::WriterEpoch.key(), epoch.to_be_bytes());
        batch.put(SystemKey::FormatVersion.key(), format.to_be_bytes());
        db.write(batch)
            .await
            .map_err(|e| StoreError::storage("recording the writer epoch", e, epoch))?;
        db.flush()
            .await
            .map_err(|e| StoreError::storage("recording the writer epoch", e, epoch))?;
        // Once this writer's epoch is durable (so no other writer opened
        // since), it claims the journal and replays what older writers
        // acknowledged from it; the format and counters are read after.
        let journal = match location.journal_directory() {
            Some(directory) if options.commit_journal => Some(
                Journal::open(
                    &directory,
                    options.journal_bytes,
                    epoch,
                    &db,
                    opened.cipher.clone(),
                )
                .await?,
            ),
            _ => None,
        };
        let format = stored_format(&reads).await?;
        let mut counters = [0u64; 3];
        for (slot, counter) in counters.iter_mut().zip([
            Counter::NextRowSeq,
            Counter::NextRelationId,
            Counter::NextNamespaceId,
        ]) {
            *slot = reads.get_u64(&counter.key()).await?.unwrap_or(1);
        }
        tracing::info!(%location, epoch, "catalog opened");
        let store = CatalogStore {
            inner: Arc::new(StoreInner {
                db,
                epoch,
                next_row_seq: AtomicU64::new(counters[0]),
                next_relation_id: AtomicU64::new(counters[1]),
                next_namespace_id: AtomicU64::new(counters[2]),
                commit_lock: Arc::default(),
                scan_cache: Arc::new(ScanCache::new()),
                key_locks: Arc::default(),
                group_flush: Arc::default(),
                journal,
                health: opened.health.clone(),
                storage_timeout: options.storage_timeout,
                lease: options.lease.clone(),
                stall: std::sync::Mutex::default(),
            }),
            location: location.clone(),
        };
        if format == FORMAT_WITHOUT_PLACEMENTS {
            let mut txn = store.write()?;
            let report = upgrade_to_current(&mut txn).await?;
            txn.commit().await?;
            tracing::info!(
                relations = report.relations,
                moved = ?report.moved,
                "catalog upgraded from format {FORMAT_WITHOUT_PLACEMENTS} to {FORMAT_VERSION}"
            );
        }
        Ok(store)
    }

    /// Where the catalog lives.
    pub fn location(&self) -> &StoreLocation {
        &self.location
    }

    /// This writer's epoch.
    pub fn epoch(&self) -> u64 {
        self.inner.epoch
    }

    /// Starts a read-only transaction on a consistent snapshot.
    pub fn read(&self) -> StoreResult<ReadTxn> {
        ReadTxn::begin(self.inner.clone())
    }

    /// Starts a write transaction: snapshot-isolated reads, atomic commit.
    pub fn write(&self) -> StoreResult<WriteTxn> {
        WriteTxn::begin(self.inner.clone())
    }

    /// How many syncs of the commit journal acknowledged this writer's
    /// commits so far; `None` without a journal (see [`StoreOptions`]).
    pub fn journal_syncs(&self) -> Option<u64> {
        self.inner.journal.as_ref().map(Journal::syncs)
    }

    /// Current value of a counter as last committed.
    pub async fn counter(&self, counter: Counter) -> StoreResult<Option<u64>> {
        self.inner.reads().get_u64(&counter.key()).await
    }

    /// The value of a numeric system key (`writer-epoch`, `retain-from`,
    /// `format-version`).
    pub async fn system_u64(&self, key: SystemKey) -> StoreResult<Option<u64>> {
        self.inner.reads().get_u64(&key.key()).await
    }

    /// Every key and value of the catalog in key order (for `rocklake keys`).
    pub async fn dump(&self) -> StoreResult<Vec<(Bytes, Bytes)>> {
        let mut iter = self
            .inner
            .db
            .scan(..)
            .await
            .map_err(|e| StoreError::storage("scanning all keys", e, self.inner.epoch))?;
        let mut out = Vec::new();
        while let Some(kv) = iter
            .next()
            .await
            .map_err(|e| StoreError::storage("scanning all keys", e, self.inner.epoch))?
        {
            out.push((kv.key, kv.value));
        }
        Ok(out)
    }

    /// Every key and value of the catalog at `location`, read without opening it
    /// as a writer: a running server is neither fenced nor written to. Includes
    /// the commits its writer acknowledged from the commit journal.
    pub async fn dump_read_only(
        location: &StoreLocation,
        keys: Option<&Arc<CatalogKeys>>,
    ) -> StoreResult<Vec<(Bytes, Bytes)>> {
        let opened = CatalogDb::prepare(location, keys, Opening::Reader).await?;
        let pending = PendingCommits::read(location, opened.cipher.as_ref()).await?;
        let builder = opened
            .reader()
            .with_reader_mode(slatedb::DbReaderMode::FollowLatest);
        // SlateDB only says a block "could not be transformed": name the
        // reason (e.g. the key a block is sealed with) when a key failed,
        // whether opening (replaying WAL objects) or scanning.
        let failed = |doing: String| {
            move |e: slatedb::Error| match keys.and_then(|keys| keys.last_failure()) {
                Some(reason) => StoreError::CatalogKey {
                    location: location.to_string(),
                    reason,
                },
                None => StoreError::storage(doing.clone(), e, 0),
            }
        };
        let reader = builder
            .build()
            .await
            .map_err(failed(format!("opening {location} read-only")))?;
        let scanning = failed("scanning all keys".to_string());
        let mut iter = slatedb::DbReadOps::scan(&reader, ..)
            .await
            .map_err(&scanning)?;
        let mut out = std::collections::BTreeMap::new();
        while let Some(kv) = iter.next().await.map_err(&scanning)? {
            out.insert(kv.key, kv.value);
        }
        let missing = pending.missing_from(&reader).await?;
        for commit in missing {
            for (key, value) in commit.writes() {
                match value {
                    Some(value) => {
                        out.insert(Bytes::copy_from_slice(key), Bytes::copy_from_slice(value))
                    }
                    None => out.remove(key),
                };
            }
        }
        reader
            .close()
            .await
            .map_err(|e| StoreError::storage("closing the reader", e, 0))?;
        Ok(out.into_iter().collect())
    }

    /// Whether the catalog can serve: not closed or fenced, and a read of
    /// it answers within a few seconds (for `/readyz`).
    pub async fn check_ready(&self) -> Result<(), String> {
        let reads = Reads {
            source: &self.inner.db,
            epoch: self.inner.epoch,
        };
        crate::reader::ready(&self.location, self.inner.db.status().close_reason, reads).await
    }

    /// Flushes and closes the database (after which the commit journal
    /// holds nothing SlateDB does not, and is removed).
    pub async fn close(&self) -> StoreResult<()> {
        self.inner
            .db
            .close()
            .await
            .map_err(|e| StoreError::storage("closing the catalog", e, self.inner.epoch))?;
        if let Some(journal) = &self.inner.journal {
            journal.remove_file();
        }
        Ok(())
    }
}
