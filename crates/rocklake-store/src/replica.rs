//! Read replicas: a catalog opened without writing, following its writer.
//!
//! A replica is a SlateDB [`DbReader`]: it never takes the writer epoch, so
//! any number of replicas can serve one catalog next to its writer. It polls
//! the writer's manifest and replays new WAL every `poll_interval`, so it sees
//! a commit about that long after the writer acknowledged it.
//!
//! SlateDB readers have no snapshots. A replica transaction therefore reads
//! the state replayed when each read runs. DuckLake reads pin a snapshot id
//! and filter every versioned row by it, so a transaction that sees a newer
//! replay still answers for the snapshot it chose; only rows that DuckLake
//! deletes outright (snapshot expiry, file cleanup) can vanish under it.

use std::sync::Arc;
use std::time::Duration;

use rocklake_codec::keys::SystemKey;
use slatedb::config::DbReaderOptions;
use slatedb::{DbReader, DbReaderMode};

use crate::error::{StoreError, StoreResult};
use crate::format::{FORMAT_VERSION, FORMAT_WITHOUT_PLACEMENTS};
use crate::journal::PendingCommits;
use crate::location::StoreLocation;
use crate::reader::Reads;
use crate::txn::ReadTxn;
use crate::view::ReadView;

/// How a replica follows its writer.
#[derive(Debug, Clone)]
pub struct ReplicaOptions {
    /// How often the replica polls the manifest and replays new WAL.
    pub poll_interval: Duration,
    /// Keys of an encrypted catalog (see [`crate::encryption`]).
    pub keys: Option<Arc<crate::encryption::CatalogKeys>>,
}

impl Default for ReplicaOptions {
    fn default() -> Self {
        ReplicaOptions {
            poll_interval: Duration::from_millis(100),
            keys: None,
        }
    }
}

/// A replica holding every commit acknowledged before it opened (see
/// [`CatalogReplica::open_latest`]).
pub struct LatestReplica {
    /// The replica.
    pub replica: CatalogReplica,
    /// The local copy it reads, when it reads one (removed when dropped).
    _copy: Option<tempfile::TempDir>,
}

/// A read-only view of a catalog that another process writes.
#[derive(Clone)]
pub struct CatalogReplica {
    reader: Arc<DbReader>,
    location: StoreLocation,
}

impl CatalogReplica {
    /// Opens the catalog at `location` read-only. The catalog must exist (a
    /// writer must have opened it once); its format version must match.
    pub async fn open(location: &StoreLocation, options: ReplicaOptions) -> StoreResult<Self> {
        if !location.holds_catalog().await? {
            return Err(no_catalog(location));
        }
        let reader_options = DbReaderOptions {
            manifest_poll_interval: options.poll_interval,
            ..DbReaderOptions::default()
        };
        let opened = crate::opening::CatalogDb::prepare(
            location,
            options.keys.as_ref(),
            crate::encryption::Opening::Reader,
        )
        .await?;
        let reader = opened
            .reader()
            .with_options(reader_options)
            .with_reader_mode(DbReaderMode::FollowLatest)
            .build()
            .await
            .map_err(|e| StoreError::storage(format!("opening {location} read-only"), e, 0))?;
        let reads = Reads {
            source: &reader,
            epoch: 0,
        };
        match reads.get_u64(&SystemKey::FormatVersion.key()).await? {
            // A replica reads format 1 as it is (its writer upgrades it).
            Some(FORMAT_VERSION | FORMAT_WITHOUT_PLACEMENTS) => {}
            Some(found) => {
                return Err(StoreError::FormatVersion {
                    found,
                    supported: FORMAT_VERSION,
                })
            }
            None => return Err(no_catalog(location)),
        }
        Ok(CatalogReplica {
            reader: Arc::new(reader),
            location: location.clone(),
        })
    }

    /// Opens the catalog at `location` read-only with every commit its
    /// writer acknowledged before the call (for one-off readers such as
    /// `rocklake export`; a following replica sees a commit once SlateDB
    /// wrote it). When the writer acknowledged commits from its commit
    /// journal that SlateDB does not hold yet, the replica reads a local copy
    /// that adds them ([`crate::backup_copy`]).
    pub async fn open_latest(
        location: &StoreLocation,
        options: ReplicaOptions,
    ) -> StoreResult<LatestReplica> {
        let cipher = crate::encryption::prepare(
            location,
            options.keys.as_ref(),
            crate::encryption::Opening::Reader,
        )
        .await?;
        let pending = PendingCommits::read(location, cipher.as_ref()).await?;
        let replica = Self::open(location, options.clone()).await?;
        if pending
            .missing_from(replica.reader.as_ref())
            .await?
            .is_empty()
        {
            return Ok(LatestReplica {
                replica,
                _copy: None,
            });
        }
        replica.close().await?;
        let directory = tempfile::tempdir().map_err(|e| StoreError::Location {
            location: location.to_string(),
            reason: format!("cannot create a temporary copy: {e}"),
        })?;
        let copy = StoreLocation::Local(directory.path().to_path_buf());
        crate::backup_copy::copy_catalog(location, None, &copy, options.keys.as_ref()).await?;
        Ok(LatestReplica {
            replica: Self::open(&copy, options).await?,
            _copy: Some(directory),
        })
    }

    /// Where the catalog lives.
    pub fn location(&self) -> &StoreLocation {
        &self.location
    }

    /// A read transaction over the replayed state.
    pub fn read(&self) -> ReadTxn {
        ReadTxn::over(ReadView::Replica(self.reader.clone()), 0)
    }

    /// Whether the replica can serve: not closed, and a read answers
    /// within a few seconds (for `/readyz`).
    pub async fn check_ready(&self) -> Result<(), String> {
        let reads = Reads {
            source: self.reader.as_ref(),
            epoch: 0,
        };
        crate::reader::ready(&self.location, self.reader.status().close_reason, reads).await
    }

    /// Stops following the writer.
    pub async fn close(&self) -> StoreResult<()> {
        self.reader
            .close()
            .await
            .map_err(|e| StoreError::storage("closing the replica", e, 0))
    }
}

pub(crate) fn no_catalog(location: &StoreLocation) -> StoreError {
    StoreError::Location {
        location: location.to_string(),
        reason: "no catalog here yet: start a writer (`rocklake serve`) on it first".to_string(),
    }
}
