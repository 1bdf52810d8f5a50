//! Unique keys inserted by transactions still in flight, so that a second
//! insert of the same key waits for the first transaction and fails (or goes
//! on) at the statement, as PostgreSQL's unique indexes do.
//!
//! Without this a duplicate of two concurrent transactions surfaces only at
//! `COMMIT`, where SlateDB's conflict check catches it. DuckLake's commit
//! retries expect PostgreSQL's behaviour: the `INSERT INTO ducklake_snapshot`
//! of the losing writer fails inside its commit batch and the batch is
//! retried; a failed `COMMIT` instead leaves DuckDB holding that
//! transaction's connection, and a busy lake ran out of sessions.
//!
//! Only the writer process inserts, so an in-memory table of claimed keys is
//! the whole state. A transaction claims each unique key it inserts and
//! releases its claims when it ends (committed, failed or rolled back). A
//! transaction that finds a key claimed waits until the holder ends, then
//! checks the committed state again. A wait that would close a cycle of
//! waiting transactions fails with PostgreSQL's `40P01 deadlock detected`.
//! SlateDB's commit-time conflict check stays the final guard.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use rocklake_types::activity::locks::{show_lock_wait, HeldXid};

use crate::error::{StoreError, StoreResult};

/// The claims of every transaction in flight.
#[derive(Default)]
pub(crate) struct KeyLocks {
    next_id: AtomicU64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Claimed key → the transaction holding it.
    holders: HashMap<Vec<u8>, Arc<Holder>>,
    /// Waiting transaction → the transaction it waits for.
    waits_for: HashMap<u64, u64>,
}

/// A transaction as a holder of claims; its channel says when it ended.
pub(crate) struct Holder {
    id: u64,
    ended: watch::Sender<bool>,
    /// Its transaction id on the board of sessions, once it claimed a key.
    xid: std::sync::OnceLock<u32>,
}

/// What [`Claims::claim`] found.
pub(crate) enum Claim {
    /// The key is this transaction's now (or already was).
    Claimed,
    /// Another transaction in flight holds the key: wait for it with
    /// [`Claims::wait_for`], then look again.
    HeldBy(Arc<Holder>),
}

/// One transaction's claims, released when it is dropped (the transaction
/// ended).
pub(crate) struct Claims {
    locks: Arc<KeyLocks>,
    me: Arc<Holder>,
    keys: Vec<Vec<u8>>,
    /// The transaction id the session shows while it holds claims.
    shown: Option<HeldXid>,
}

impl KeyLocks {
    /// The claims of a transaction that begins.
    pub(crate) fn begin(self: &Arc<Self>) -> Claims {
        let (ended, _) = watch::channel(false);
        Claims {
            locks: Arc::clone(self),
            me: Arc::new(Holder {
                id: self.next_id.fetch_add(1, Ordering::Relaxed),
                ended,
                xid: std::sync::OnceLock::new(),
            }),
            keys: Vec::new(),
            shown: None,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Claims {
    /// Claims `key` for this transaction, or says who holds it.
    pub(crate) fn claim(&mut self, key: &[u8]) -> Claim {
        let mut state = self.locks.state();
        match state.holders.get(key) {
            Some(holder) if holder.id != self.me.id => Claim::HeldBy(Arc::clone(holder)),
            Some(_) => Claim::Claimed,
            None => {
                state.holders.insert(key.to_vec(), Arc::clone(&self.me));
                self.keys.push(key.to_vec());
                if self.shown.is_none() {
                    let shown = HeldXid::take();
                    if let Some(xid) = shown.xid() {
                        let _ = self.me.xid.set(xid);
                    }
                    self.shown = Some(shown);
                }
                Claim::Claimed
            }
        }
    }

    /// Waits until `holder` has ended. Fails with
    /// [`StoreError::Deadlock`] when `holder` waits, directly or through
    /// others, for this transaction.
    pub(crate) async fn wait_for(&self, holder: &Holder) -> StoreResult<()> {
        let mut ended = holder.ended.subscribe();
        {
            let mut state = self.locks.state();
            let mut next = holder.id;
            while let Some(&waited) = state.waits_for.get(&next) {
                if waited == self.me.id {
                    return Err(StoreError::Deadlock);
                }
                next = waited;
            }
            state.waits_for.insert(self.me.id, holder.id);
        }
        let _waiting = Waiting(self);
        // PostgreSQL shows a wait for another transaction so.
        let _shown = show_lock_wait(holder.xid.get().copied());
        // The sender lives as long as the holder: an error means it ended.
        let _ = ended.wait_for(|ended| *ended).await;
        Ok(())
    }
}

/// Removes a transaction's wait from the graph when the wait ends, however.
struct Waiting<'a>(&'a Claims);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.locks.state().waits_for.remove(&self.0.me.id);
    }
}

impl Drop for Claims {
    fn drop(&mut self) {
        {
            let mut state = self.locks.state();
            for key in self.keys.drain(..) {
                if state
                    .holders
                    .get(&key)
                    .is_some_and(|holder| holder.id == self.me.id)
                {
                    state.holders.remove(&key);
                }
            }
            state.waits_for.remove(&self.me.id);
        }
        self.me.ended.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_claimed_key_makes_others_wait_until_its_holder_ends() {
        let locks = Arc::new(KeyLocks::default());
        let mut first = locks.begin();
        let mut second = locks.begin();
        assert!(matches!(first.claim(b"k"), Claim::Claimed));
        assert!(matches!(first.claim(b"k"), Claim::Claimed));
        let Claim::HeldBy(holder) = second.claim(b"k") else {
            panic!("the key is held")
        };
        let waited = tokio::time::timeout(Duration::from_millis(50), second.wait_for(&holder));
        assert!(waited.await.is_err(), "must wait while the holder runs");
        drop(first);
        second.wait_for(&holder).await.unwrap();
        assert!(matches!(second.claim(b"k"), Claim::Claimed));
        assert!(locks.state().waits_for.is_empty());
    }

    #[tokio::test]
    async fn a_wait_closing_a_cycle_is_a_deadlock() {
        let locks = Arc::new(KeyLocks::default());
        let mut a = locks.begin();
        let mut b = locks.begin();
        assert!(matches!(a.claim(b"x"), Claim::Claimed));
        assert!(matches!(b.claim(b"y"), Claim::Claimed));
        let Claim::HeldBy(holder_of_y) = a.claim(b"y") else {
            panic!("y is held")
        };
        let Claim::HeldBy(holder_of_x) = b.claim(b"x") else {
            panic!("x is held")
        };
        let a_waits = async { a.wait_for(&holder_of_y).await };
        let b_waits = async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let result = b.wait_for(&holder_of_x).await;
            assert!(matches!(result, Err(StoreError::Deadlock)));
            drop(b);
        };
        let (a_result, ()) = tokio::join!(a_waits, b_waits);
        a_result.unwrap();
        assert!(matches!(a.claim(b"y"), Claim::Claimed));
    }
}
