//! Row locks (`SELECT ... FOR UPDATE` / `FOR SHARE`) of a write
//! transaction.
//!
//! A lock on the row stored under `key`:
//!
//! 1. claims `ROW_LOCK_PREFIX ++ key` in [`crate::key_locks`], so a second
//!    locker of the row waits until the first transaction ends (`NOWAIT`
//!    fails with 55P03 instead, `SKIP LOCKED` leaves the row out); a wait
//!    that closes a cycle fails with 40P01. Every strength is exclusive
//!    among lockers here: two `FOR SHARE` lockers of one row wait for each
//!    other, where PostgreSQL lets them share it;
//! 2. once held, compares the row's latest committed value with the one this
//!    transaction's snapshot holds: a row changed or deleted by a transaction
//!    that committed after this one began fails with 40001, as PostgreSQL's
//!    REPEATABLE READ does (rows this transaction wrote itself are left to
//!    the commit's write-write check);
//! 3. marks the key read in the SlateDB transaction, so a change of the row
//!    committed before this transaction commits makes its commit fail with
//!    a conflict (40001): writers do not take row locks, so an UPDATE does
//!    not wait for the locker as in PostgreSQL; the locker's commit fails
//!    instead.
//!
//! The claim is released when the transaction ends, with its other claims.

use rocklake_codec::relations::Relation;

use super::WriteTxn;
use crate::error::{StoreError, StoreResult};
use crate::key_locks::Claim;

/// Starts every row-lock claim. Unique-key claims start with a row's or a
/// key's tag byte, which is never 0xFF.
const ROW_LOCK_PREFIX: &[u8] = b"\xff\xffrow-lock\x00";

/// What a row lock does when another transaction in flight holds the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowLockWait {
    /// Wait until it ends.
    Wait,
    /// Fail with [`StoreError::LockNotAvailable`].
    Nowait,
    /// Give up on the row.
    Skip,
}

impl WriteTxn {
    /// Locks the row of `relation` stored under `key` (as read in this
    /// transaction) until this transaction ends; see the module
    /// documentation. Returns `false` when `wait` is [`RowLockWait::Skip`]
    /// and another transaction holds the row.
    pub async fn lock_row(
        &mut self,
        relation: &Relation,
        key: &[u8],
        wait: RowLockWait,
    ) -> StoreResult<bool> {
        let mut claim = ROW_LOCK_PREFIX.to_vec();
        claim.extend_from_slice(key);
        loop {
            match self.claims.claim(&claim) {
                Claim::Claimed => break,
                Claim::HeldBy(holder) => match wait {
                    RowLockWait::Wait => self.claims.wait_for(&holder).await?,
                    RowLockWait::Nowait => {
                        return Err(StoreError::LockNotAvailable {
                            table: relation.name.clone(),
                        })
                    }
                    RowLockWait::Skip => return Ok(false),
                },
            }
        }
        if !self.may_have_written(key) {
            let seen = self.view().reads().get(key).await?;
            let latest = self.inner.reads().get(key).await?;
            if seen != latest {
                return Err(StoreError::Conflict {
                    context: format!(
                        "a row of \"{}\" was changed by a transaction that committed after this one began",
                        relation.name
                    ),
                });
            }
        }
        self.txn
            .mark_read([key])
            .map_err(|e| self.storage_error("marking a locked row read", e))?;
        Ok(true)
    }

    /// Whether this transaction may have written `key` (inserted, updated
    /// or deleted the row): its snapshot value then is not what it reads.
    fn may_have_written(&self, key: &[u8]) -> bool {
        let Some(&tag) = key.first() else {
            return false;
        };
        if !self.written_tags.contains(tag) {
            return false;
        }
        match &self.writes {
            Some(writes) => writes.contains_key(key),
            // Too many writes to tell: the commit's checks stay.
            None => true,
        }
    }
}
