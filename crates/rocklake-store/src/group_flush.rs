//! Group commit: concurrent commits share durable WAL writes.
//!
//! A commit applies its batch under the commit lock (so counters stay in
//! order), releases the lock, asks the [`GroupFlush`] for a WAL flush and
//! waits until its own write is durable. One flush runs at a time: commits
//! that arrive while it is in flight are written by the next one, together.
//! A lone commit costs one durable write, as before; under contention, N
//! commits waiting for the flush in flight share the next single write
//! instead of making N. A commit is acknowledged only once its own write is
//! durable, so "acknowledged = durable" holds for every member of a group.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use slatedb::Db;

/// Flushes a catalog's WAL for the commits waiting on it (see the module
/// docs).
#[derive(Default)]
pub(crate) struct GroupFlush {
    /// Commits arrived since the running flush began.
    wanted: AtomicBool,
    /// A flush task runs.
    running: AtomicBool,
}

impl GroupFlush {
    /// Makes sure a flush that starts after this call will run: starts the
    /// flush task when none runs, or leaves it a flush to do.
    pub(crate) fn request(self: &Arc<Self>, db: &Db) {
        self.wanted.store(true, Ordering::SeqCst);
        if self
            .running
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return;
        }
        let this = Arc::clone(self);
        let db = db.clone();
        tokio::spawn(async move {
            loop {
                while this.wanted.swap(false, Ordering::SeqCst) {
                    if let Err(error) = db.flush().await {
                        // The commits waiting see the failure themselves
                        // (their durability wait fails).
                        tracing::warn!(%error, "flushing the WAL for waiting commits failed");
                    }
                }
                this.running.store(false, Ordering::SeqCst);
                // A request between the last swap and the store above found
                // the task running and left: take it up again.
                if !this.wanted.load(Ordering::SeqCst)
                    || this
                        .running
                        .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                        .is_err()
                {
                    break;
                }
            }
        });
    }
}
