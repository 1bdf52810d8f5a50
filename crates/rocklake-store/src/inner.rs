//! [`StoreInner`]: the state a catalog's writer shares with its transactions:
//! the SlateDB handle, the writer epoch, the counters handed out in memory,
//! the commit lock, the scan cache, the unique keys of transactions in
//! flight, the group flush, the commit journal and the health of storage.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use slatedb::Db;

use crate::error::{StoreError, StoreResult};
use crate::faults::{Fault, StorageHealth};
use crate::group_flush::GroupFlush;
use crate::journal::Journal;
use crate::key_locks::KeyLocks;
use crate::reader::Reads;
use crate::scan_cache::ScanCache;

/// State shared by a store handle and its transactions.
pub(crate) struct StoreInner {
    pub(crate) db: Db,
    pub(crate) epoch: u64,
    pub(crate) next_row_seq: AtomicU64,
    pub(crate) next_relation_id: AtomicU64,
    pub(crate) next_namespace_id: AtomicU64,
    /// Serialises commits so counters are written in increasing order.
    pub(crate) commit_lock: Arc<tokio::sync::Mutex<()>>,
    /// Decoded rows of whole-prefix scans, kept until a commit changes them.
    pub(crate) scan_cache: Arc<ScanCache>,
    /// Unique keys inserted by transactions in flight.
    pub(crate) key_locks: Arc<KeyLocks>,
    /// Shares durable WAL writes between concurrent commits.
    pub(crate) group_flush: Arc<GroupFlush>,
    /// The commit journal of a catalog in a local directory (`None` on S3
    /// or when turned off).
    pub(crate) journal: Option<Journal>,
    /// The faults storage reported last.
    pub(crate) health: Arc<StorageHealth>,
    /// How long a commit waits for storage before it gives up.
    pub(crate) storage_timeout: Duration,
    /// The writer lease commits need (see [`crate::lease`]).
    pub(crate) lease: Option<std::sync::Arc<crate::lease::LeaseGate>>,
    /// A commit applied whose durability storage has not confirmed in
    /// time: no commit is accepted until it is.
    pub(crate) stall: Mutex<Option<Stall>>,
}

/// Applied commits storage did not confirm in time: the latest of each
/// kind (storage confirms in commit order, so confirming it confirms the
/// earlier ones).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Stall {
    /// A journaled commit: the journal's writer must sync this sequence
    /// number.
    pub(crate) journal_seq: Option<u64>,
    /// A commit SlateDB writes itself: its durable sequence number must
    /// reach this one.
    pub(crate) slate_seq: Option<u64>,
    /// When the first wait gave up.
    pub(crate) since: Option<Instant>,
}

/// What confirms an applied commit durable.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Confirmation {
    /// The journal's writer synced this sequence number.
    Journal(u64),
    /// SlateDB's durable sequence number reached this one.
    Slate(u64),
}

impl StoreInner {
    /// Hands out `count` consecutive row sequence numbers.
    pub(crate) fn allocate_row_seqs(&self, count: u64) -> u64 {
        self.next_row_seq.fetch_add(count, Ordering::SeqCst)
    }

    /// Fails, before a commit changes anything, while storage fails its
    /// writes (the last write failed and none succeeded since: SlateDB keeps
    /// retrying it), while an earlier commit waits for storage to confirm it
    /// (see [`Stall`]), or when the journal takes no more commits.
    pub(crate) fn check_accepting(&self) -> StoreResult<()> {
        if let Some(journal) = &self.journal {
            journal.check_usable(self.epoch)?;
        }
        if let Some(fault) = self.health.write_fault() {
            return Err(StoreError::StorageFault {
                fault,
                detail: format!(
                    "Storage fails its writes; commits resume when it takes them again. {}",
                    crate::journal::NOT_APPLIED
                ),
            });
        }
        let mut stall = self.stall.lock().unwrap_or_else(|e| e.into_inner());
        let Some(current) = *stall else {
            return Ok(());
        };
        let journal_confirmed = match (current.journal_seq, &self.journal) {
            (Some(seq), Some(journal)) => journal.confirmed_seq() >= seq,
            _ => true,
        };
        let slate_confirmed = current
            .slate_seq
            .is_none_or(|seq| self.db.status().durable_seq >= seq);
        if journal_confirmed && slate_confirmed {
            let after = current.since.map(|since| since.elapsed());
            tracing::warn!(
                ?after,
                "storage confirmed the commits it had kept waiting; accepting commits again"
            );
            *stall = None;
            return Ok(());
        }
        let fault = self
            .health
            .fault_or(|| Fault::io("storage has not confirmed an earlier commit".to_string()));
        Err(StoreError::StorageFault {
            fault,
            detail: format!(
                "An earlier commit still waits for storage to confirm it; no commit is accepted until it does. {}",
                crate::journal::NOT_APPLIED
            ),
        })
    }

    /// Records that the wait for a commit confirmed by `until` gave up.
    pub(crate) fn stalled(&self, until: Confirmation) {
        let mut stall = self.stall.lock().unwrap_or_else(|e| e.into_inner());
        let current = stall.get_or_insert_with(|| {
            tracing::error!(
                ?until,
                "storage did not confirm a commit in time; refusing commits until it does"
            );
            Stall {
                since: Some(Instant::now()),
                ..Stall::default()
            }
        });
        match until {
            Confirmation::Journal(seq) => {
                current.journal_seq = Some(current.journal_seq.unwrap_or(0).max(seq))
            }
            Confirmation::Slate(seq) => {
                current.slate_seq = Some(current.slate_seq.unwrap_or(0).max(seq))
            }
        }
    }

    /// Waits for an applied commit to be durable, at most the storage
    /// timeout; a wait that gives up stalls further commits until storage
    /// confirms it (`until`).
    pub(crate) async fn confirm(
        &self,
        durable: impl std::future::Future<Output = StoreResult<()>>,
        until: Confirmation,
    ) -> StoreResult<()> {
        match tokio::time::timeout(self.storage_timeout, durable).await {
            Ok(outcome) => outcome,
            Err(_) => {
                self.stalled(until);
                let fault = self.health.fault_or(|| {
                    Fault::io(format!(
                        "storage did not confirm the commit within {}",
                        crate::faults::format_timeout(self.storage_timeout)
                    ))
                });
                Err(StoreError::StorageFault {
                    fault,
                    detail: crate::journal::APPLIED_UNCONFIRMED.to_string(),
                })
            }
        }
    }

    pub(crate) fn reads(&self) -> Reads<'_, Db> {
        Reads {
            source: &self.db,
            epoch: self.epoch,
        }
    }
}
