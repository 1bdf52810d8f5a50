//! What every session of a server is doing, for `pg_stat_activity` and for
//! `pg_cancel_backend`/`pg_terminate_backend`: one [`ActivityBoard`] per
//! server, a [`SessionActivity`] per session that its session updates at
//! each statement's start and end.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use crate::datum::timestamptz_micros;
use crate::interrupt::{Interrupt, StopReason};

/// A session's state as `pg_stat_activity.state` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionState {
    /// Running a statement.
    Active,
    /// Waiting for a command, outside a transaction block.
    Idle,
    /// Waiting for a command inside a transaction block.
    IdleInTransaction,
    /// Inside a failed transaction block.
    IdleInTransactionAborted,
}

impl SessionState {
    /// PostgreSQL's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Active => "active",
            SessionState::Idle => "idle",
            SessionState::IdleInTransaction => "idle in transaction",
            SessionState::IdleInTransactionAborted => "idle in transaction (aborted)",
        }
    }
}

/// What changes as a session works.
#[derive(Debug, Clone)]
pub struct ActivityState {
    /// The state.
    pub state: SessionState,
    /// When the current transaction started (microseconds since the Unix
    /// epoch), if one is open.
    pub xact_start: Option<i64>,
    /// When the current or last statement started.
    pub query_start: Option<i64>,
    /// When `state` last changed.
    pub state_change: i64,
    /// The current or last query's text.
    pub query: String,
    /// What the session waits for (`pg_stat_activity.wait_event_type`,
    /// `wait_event`), if it waits.
    pub wait: Option<(&'static str, &'static str)>,
    /// The number of the session's current (or last) transaction, the
    /// second half of its virtual transaction id (`pg_locks`).
    pub transaction_number: u32,
    /// The transaction id of the current transaction once it holds a row
    /// or key lock ([`locks`]).
    pub xid: Option<u32>,
    /// The transaction the session waits for, and since when.
    pub lock_wait: Option<(u32, i64)>,
}

/// One session's entry on the board.
pub struct SessionActivity {
    /// The backend process id (the BackendKeyData one).
    pub pid: i32,
    /// The database connected to.
    pub database: String,
    /// The authenticated user.
    pub user: String,
    /// The client's `application_name` at startup.
    pub application_name: String,
    /// The client's address, if it came over TCP.
    pub client: Option<SocketAddr>,
    /// When the session started.
    pub backend_start: i64,
    /// The first half of its virtual transaction ids (`3/17`).
    pub backend_id: u32,
    state: Mutex<ActivityState>,
    interrupt: Arc<Interrupt>,
    /// The counters of its database.
    totals: Arc<DatabaseTotals>,
}

/// What the sessions of one database did since the server started
/// (`pg_stat_database`): transactions committed and rolled back, sessions,
/// sessions ended by `pg_terminate_backend`, and the time sessions spent,
/// in microseconds: in all, running statements, idle in a transaction. The
/// time of sessions still connected is added when they end or change state.
#[derive(Debug, Default)]
pub struct DatabaseTotals {
    /// `xact_commit`.
    pub commits: AtomicI64,
    /// `xact_rollback`.
    pub rollbacks: AtomicI64,
    /// `sessions`.
    pub sessions: AtomicI64,
    /// `sessions_killed`.
    pub sessions_killed: AtomicI64,
    /// `session_time` of ended sessions.
    pub session_micros: AtomicI64,
    /// `active_time`.
    pub active_micros: AtomicI64,
    /// `idle_in_transaction_time`.
    pub idle_in_transaction_micros: AtomicI64,
}

fn now() -> i64 {
    timestamptz_micros(SystemTime::now())
}

/// What an idle session waits for: its client's next message.
const CLIENT_READ: (&str, &str) = ("Client", "ClientRead");

/// Longest query text kept (PostgreSQL's `track_activity_query_size`).
pub const QUERY_TEXT_BYTES: usize = 1024;

impl SessionActivity {
    pub(crate) fn state(&self) -> MutexGuard<'_, ActivityState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the session does now.
    pub fn snapshot(&self) -> ActivityState {
        self.state().clone()
    }

    /// Adds the time since the last change of state to its state's total.
    fn count_time(&self, state: &ActivityState, now: i64) {
        let spent = (now - state.state_change).max(0);
        let total = match state.state {
            SessionState::Active => &self.totals.active_micros,
            SessionState::IdleInTransaction | SessionState::IdleInTransactionAborted => {
                &self.totals.idle_in_transaction_micros
            }
            SessionState::Idle => return,
        };
        total.fetch_add(spent, Ordering::Relaxed);
    }

    /// A transaction of the session ended: committed or rolled back.
    pub fn transaction_ended(&self, committed: bool) {
        let count = if committed {
            &self.totals.commits
        } else {
            &self.totals.rollbacks
        };
        count.fetch_add(1, Ordering::Relaxed);
    }

    /// The time the session spent so far in its current state, by total
    /// (session, active, idle in transaction), not yet counted.
    pub fn uncounted_micros(&self) -> (i64, i64, i64) {
        let now = now();
        let state = self.state();
        let spent = (now - state.state_change).max(0);
        let (active, idle) = match state.state {
            SessionState::Active => (spent, 0),
            SessionState::IdleInTransaction | SessionState::IdleInTransactionAborted => (0, spent),
            SessionState::Idle => (0, 0),
        };
        ((now - self.backend_start).max(0), active, idle)
    }

    /// A statement `query` starts; `new_transaction` when it also starts a
    /// transaction.
    pub fn statement_started(&self, query: &str, new_transaction: bool) {
        let now = now();
        let mut text = query.trim();
        if text.len() > QUERY_TEXT_BYTES - 1 {
            let mut cut = QUERY_TEXT_BYTES - 1;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text = &text[..cut];
        }
        let mut state = self.state();
        self.count_time(&state, now);
        if new_transaction {
            state.xact_start = Some(now);
            state.transaction_number = state.transaction_number.wrapping_add(1);
        }
        state.query_start = Some(now);
        // The buffer of the last query is reused: no allocation per statement.
        state.query.clear();
        state.query.push_str(text);
        state.state = SessionState::Active;
        state.state_change = now;
        state.wait = None;
    }

    /// The statement ended; the session is now in `after` (its transaction
    /// ended when that is [`SessionState::Idle`]; a failed block shows no
    /// start either, as in PostgreSQL).
    pub fn statement_ended(&self, after: SessionState) {
        let now = now();
        let mut state = self.state();
        self.count_time(&state, now);
        if matches!(
            after,
            SessionState::Idle | SessionState::IdleInTransactionAborted
        ) {
            state.xact_start = None;
        }
        state.state = after;
        state.state_change = now;
        state.wait = Some(CLIENT_READ);
    }

    /// The session waits for `event` of `kind` (`Lock`/`tuple`, ...), or
    /// no longer waits.
    pub fn set_wait(&self, wait: Option<(&'static str, &'static str)>) {
        self.state().wait = wait;
    }

    /// Cancels the session's running statement (a no-op when idle).
    pub fn cancel(&self) {
        if self.state().state == SessionState::Active {
            self.interrupt.stop(StopReason::Canceled);
        }
    }

    /// Ends the session (FATAL 57P01 to its client).
    pub fn terminate(&self) {
        self.totals.sessions_killed.fetch_add(1, Ordering::Relaxed);
        self.interrupt.stop(StopReason::Shutdown);
    }
}

pub mod locks;

thread_local! {
    /// The session the thread runs (each session has its own thread), as
    /// PostgreSQL's backends know their own entry: what deep code that
    /// waits (a row or key lock) shows in `pg_stat_activity`.
    static CURRENT: std::cell::RefCell<Option<Arc<SessionActivity>>> =
        const { std::cell::RefCell::new(None) };
}

/// Makes `activity` the session of this thread.
pub fn enter(activity: &Arc<SessionActivity>) {
    CURRENT.with(|current| {
        let mut current = current.borrow_mut();
        if !current.as_ref().is_some_and(|c| Arc::ptr_eq(c, activity)) {
            *current = Some(Arc::clone(activity));
        }
    });
}

/// The session this thread runs, if it runs one.
pub fn current() -> Option<Arc<SessionActivity>> {
    CURRENT.with(|current| current.borrow().clone())
}

/// Every session of one server.
#[derive(Default)]
pub struct ActivityBoard {
    sessions: Mutex<BTreeMap<i32, Arc<SessionActivity>>>,
    /// Each database's counters, from its first session on.
    databases: Mutex<BTreeMap<String, Arc<DatabaseTotals>>>,
    /// Numbers the sessions (`backend_id`).
    next_backend_id: AtomicI64,
    /// When the server started (`pg_postmaster_start_time()`).
    started: Option<i64>,
}

/// What a new session says of itself.
#[derive(Debug, Clone)]
pub struct NewSession {
    /// Its pid.
    pub pid: i32,
    /// Its database.
    pub database: String,
    /// Its user.
    pub user: String,
    /// Its `application_name`.
    pub application_name: String,
    /// Its client's address.
    pub client: Option<SocketAddr>,
}

impl std::fmt::Debug for ActivityBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ActivityBoard({} sessions)", self.sessions().len())
    }
}

impl ActivityBoard {
    /// A board for a server starting now.
    pub fn new() -> ActivityBoard {
        ActivityBoard {
            sessions: Mutex::default(),
            databases: Mutex::default(),
            next_backend_id: AtomicI64::new(0),
            started: Some(now()),
        }
    }

    fn sessions(&self) -> MutexGuard<'_, BTreeMap<i32, Arc<SessionActivity>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// When the server started.
    pub fn started(&self) -> i64 {
        self.started.unwrap_or_else(now)
    }

    /// Adds a session; it leaves the board when the returned guard drops.
    pub fn join(self: &Arc<Self>, session: NewSession, interrupt: Arc<Interrupt>) -> ActivityGuard {
        let now = now();
        let totals = self.totals(&session.database);
        totals.sessions.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(SessionActivity {
            pid: session.pid,
            database: session.database,
            user: session.user,
            application_name: session.application_name,
            client: session.client,
            backend_start: now,
            state: Mutex::new(ActivityState {
                state: SessionState::Idle,
                xact_start: None,
                query_start: None,
                state_change: now,
                query: String::new(),
                wait: Some(CLIENT_READ),
                transaction_number: 0,
                xid: None,
                lock_wait: None,
            }),
            interrupt,
            totals,
            backend_id: self.next_backend_id.fetch_add(1, Ordering::Relaxed) as u32 + 1,
        });
        self.sessions().insert(session.pid, activity.clone());
        ActivityGuard {
            board: self.clone(),
            activity,
        }
    }

    /// The counters of `database` (zero before its first session).
    pub fn totals(&self, database: &str) -> Arc<DatabaseTotals> {
        let mut databases = self.databases.lock().unwrap_or_else(|e| e.into_inner());
        databases.entry(database.to_string()).or_default().clone()
    }

    /// Every session, by pid.
    pub fn list(&self) -> Vec<Arc<SessionActivity>> {
        self.sessions().values().cloned().collect()
    }

    /// The session of `pid`, if it is one of this server's.
    pub fn get(&self, pid: i32) -> Option<Arc<SessionActivity>> {
        self.sessions().get(&pid).cloned()
    }
}

/// A session's place on the board, removed when dropped.
pub struct ActivityGuard {
    board: Arc<ActivityBoard>,
    activity: Arc<SessionActivity>,
}

impl ActivityGuard {
    /// The session's entry.
    pub fn activity(&self) -> Arc<SessionActivity> {
        self.activity.clone()
    }

    /// The board it is on.
    pub fn board(&self) -> Arc<ActivityBoard> {
        self.board.clone()
    }
}

impl Drop for ActivityGuard {
    fn drop(&mut self) {
        self.board.sessions().remove(&self.activity.pid);
        let (session, active, idle) = self.activity.uncounted_micros();
        let totals = &self.activity.totals;
        totals.session_micros.fetch_add(session, Ordering::Relaxed);
        totals.active_micros.fetch_add(active, Ordering::Relaxed);
        totals
            .idle_in_transaction_micros
            .fetch_add(idle, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_shows_its_statements_and_leaves_the_board() {
        let board = Arc::new(ActivityBoard::new());
        let guard = board.join(
            NewSession {
                pid: 7,
                database: "lake".into(),
                user: "alice".into(),
                application_name: "psql".into(),
                client: None,
            },
            Arc::default(),
        );
        let me = guard.activity();
        me.statement_started("BEGIN", true);
        me.statement_ended(SessionState::IdleInTransaction);
        let seen = board.get(7).unwrap().snapshot();
        assert_eq!(seen.state, SessionState::IdleInTransaction);
        assert!(seen.xact_start.is_some());
        assert_eq!(seen.query, "BEGIN");
        me.statement_started("COMMIT", false);
        me.statement_ended(SessionState::Idle);
        assert_eq!(board.get(7).unwrap().snapshot().xact_start, None);
        drop(guard);
        assert!(board.list().is_empty());
    }

    #[test]
    fn long_queries_are_cut_on_a_character_boundary() {
        let board = Arc::new(ActivityBoard::new());
        let guard = board.join(
            NewSession {
                pid: 1,
                database: String::new(),
                user: String::new(),
                application_name: String::new(),
                client: None,
            },
            Arc::default(),
        );
        guard.activity().statement_started(&"é".repeat(2000), true);
        assert!(guard.activity().snapshot().query.len() < QUERY_TEXT_BYTES);
    }
}
