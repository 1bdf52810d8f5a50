//! [`StoreInner`]: the state a catalog's writer shares with its transactions:
//! the SlateDB handle, the writer epoch, the counters handed out in memory,
//! the commit lock, the scan cache, the unique keys of transactions in
//! flight, the group flush and the commit journal.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use slatedb::Db;

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
    pub(crate) commit_lock: tokio::sync::Mutex<()>,
    /// Decoded rows of whole-prefix scans, kept until a commit changes them.
    pub(crate) scan_cache: Arc<ScanCache>,
    /// Unique keys inserted by transactions in flight.
    pub(crate) key_locks: Arc<KeyLocks>,
    /// Shares durable WAL writes between concurrent commits.
    pub(crate) group_flush: Arc<GroupFlush>,
    /// The commit journal of a catalog in a local directory (`None` on S3
    /// or when turned off).
    pub(crate) journal: Option<Journal>,
}

impl StoreInner {
    /// Hands out `count` consecutive row sequence numbers.
    pub(crate) fn allocate_row_seqs(&self, count: u64) -> u64 {
        self.next_row_seq.fetch_add(count, Ordering::SeqCst)
    }

    pub(crate) fn reads(&self) -> Reads<'_, Db> {
        Reads {
            source: &self.db,
            epoch: self.epoch,
        }
    }
}
