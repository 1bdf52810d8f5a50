//! The locks sessions hold and wait for, as `pg_locks`, `pg_blocking_pids`
//! and `pg_stat_activity`'s wait columns show them. RockLake's locks are
//! row and unique-key claims of a transaction (the store's key locks): a
//! transaction that claims one gets a transaction id, which it holds
//! (`transactionid`, `ExclusiveLock`) until it ends; a transaction that
//! finds a key claimed waits for that transaction id (`ShareLock`, not
//! granted), as PostgreSQL's row locks show. Every open transaction holds
//! its virtual transaction id. The store reports these from the thread
//! that runs the session ([`super::current`]).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use super::{now, SessionActivity};

/// Transaction ids, unique in the server (PostgreSQL's start at 3).
static NEXT_XID: AtomicU32 = AtomicU32::new(1000);

/// A transaction's hold of its transaction id, released when dropped (the
/// transaction ended).
pub struct HeldXid {
    activity: Option<Arc<SessionActivity>>,
}

impl HeldXid {
    /// The session of this thread takes a transaction id for the
    /// transaction that runs (its first lock).
    pub fn take() -> HeldXid {
        let activity = super::current();
        if let Some(activity) = &activity {
            let xid = NEXT_XID.fetch_add(1, Ordering::Relaxed);
            activity.state().xid = Some(xid);
        }
        HeldXid { activity }
    }

    /// The transaction id held, if the session has one.
    pub fn xid(&self) -> Option<u32> {
        self.activity.as_ref().and_then(|a| a.state().xid)
    }
}

impl Drop for HeldXid {
    fn drop(&mut self) {
        if let Some(activity) = &self.activity {
            activity.state().xid = None;
        }
    }
}

/// Shows the session of this thread waiting for the transaction `xid`
/// (`None`: a transaction of no session) until the returned guard drops:
/// `wait_event_type` `Lock`, `wait_event` `transactionid`.
pub fn show_lock_wait(xid: Option<u32>) -> ShownWait {
    let activity = super::current();
    if let Some(activity) = &activity {
        let mut state = activity.state();
        state.wait = Some(("Lock", "transactionid"));
        state.lock_wait = xid.map(|xid| (xid, now()));
    }
    ShownWait { activity }
}

/// A wait shown on the board, until dropped.
pub struct ShownWait {
    activity: Option<Arc<SessionActivity>>,
}

impl Drop for ShownWait {
    fn drop(&mut self) {
        if let Some(activity) = &self.activity {
            let mut state = activity.state();
            state.wait = None;
            state.lock_wait = None;
        }
    }
}

/// One row of `pg_locks`.
#[derive(Debug, Clone, PartialEq)]
pub struct LockRow {
    /// `virtualxid` or `transactionid`.
    pub locktype: &'static str,
    /// The virtual transaction id locked (`virtualxid` locks).
    pub virtualxid: Option<String>,
    /// The transaction id locked (`transactionid` locks).
    pub transactionid: Option<u32>,
    /// The holder's or waiter's virtual transaction id.
    pub virtualtransaction: String,
    /// Its session.
    pub pid: i32,
    /// `ExclusiveLock` or `ShareLock`.
    pub mode: &'static str,
    /// Held (`true`) or waited for.
    pub granted: bool,
    /// Whether PostgreSQL would take it on its fast path.
    pub fastpath: bool,
    /// Since when it is waited for.
    pub waitstart: Option<i64>,
}

/// The locks of `sessions`: each open transaction's virtual transaction
/// id, each transaction id held, each wait.
pub fn lock_rows(sessions: &[Arc<SessionActivity>]) -> Vec<LockRow> {
    let mut rows = Vec::new();
    for session in sessions {
        let state = session.state().clone();
        if state.xact_start.is_none() {
            continue;
        }
        let vxid = format!("{}/{}", session.backend_id, state.transaction_number);
        rows.push(LockRow {
            locktype: "virtualxid",
            virtualxid: Some(vxid.clone()),
            transactionid: None,
            virtualtransaction: vxid.clone(),
            pid: session.pid,
            mode: "ExclusiveLock",
            granted: true,
            fastpath: true,
            waitstart: None,
        });
        if let Some(xid) = state.xid {
            rows.push(LockRow {
                locktype: "transactionid",
                virtualxid: None,
                transactionid: Some(xid),
                virtualtransaction: vxid.clone(),
                pid: session.pid,
                mode: "ExclusiveLock",
                granted: true,
                fastpath: false,
                waitstart: None,
            });
        }
        if let Some((xid, since)) = state.lock_wait {
            rows.push(LockRow {
                locktype: "transactionid",
                virtualxid: None,
                transactionid: Some(xid),
                virtualtransaction: vxid,
                pid: session.pid,
                mode: "ShareLock",
                granted: false,
                fastpath: false,
                waitstart: Some(since),
            });
        }
    }
    rows
}

/// `pg_blocking_pids(pid)`: the sessions holding the transaction `pid`
/// waits for.
pub fn blocking_pids(sessions: &[Arc<SessionActivity>], pid: i32) -> Vec<i32> {
    let Some(waited) = sessions
        .iter()
        .find(|s| s.pid == pid)
        .and_then(|s| s.state().lock_wait.map(|(xid, _)| xid))
    else {
        return Vec::new();
    };
    sessions
        .iter()
        .filter(|s| s.state().xid == Some(waited))
        .map(|s| s.pid)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{ActivityBoard, NewSession};
    use super::*;
    use crate::interrupt::Interrupt;

    #[test]
    fn holders_and_waiters_show_as_postgresql_shows_row_locks() {
        let board = Arc::new(ActivityBoard::new());
        let join = |pid| {
            board.join(
                NewSession {
                    pid,
                    database: "lake".into(),
                    user: "u".into(),
                    application_name: String::new(),
                    client: None,
                },
                Arc::new(Interrupt::default()),
            )
        };
        let (holder, waiter) = (join(1), join(2));
        holder
            .activity()
            .statement_started("SELECT 1 FOR UPDATE", true);
        super::super::enter(&holder.activity());
        let held = HeldXid::take();
        let xid = held.xid().unwrap();
        waiter
            .activity()
            .statement_started("SELECT 1 FOR UPDATE", true);
        super::super::enter(&waiter.activity());
        let wait = show_lock_wait(Some(xid));
        let sessions = board.list();
        assert_eq!(blocking_pids(&sessions, 2), vec![1]);
        let rows = lock_rows(&sessions);
        let waiting: Vec<_> = rows.iter().filter(|r| !r.granted).collect();
        assert_eq!(waiting.len(), 1);
        assert_eq!((waiting[0].pid, waiting[0].transactionid), (2, Some(xid)));
        assert!(rows
            .iter()
            .any(|r| r.pid == 1 && r.transactionid == Some(xid) && r.granted));
        drop(wait);
        drop(held);
        let sessions = board.list();
        assert!(blocking_pids(&sessions, 2).is_empty());
        assert!(lock_rows(&sessions)
            .iter()
            .all(|r| r.locktype == "virtualxid"));
    }
}
