//! [`Interrupt`]: how a running statement learns it must stop — a cancel
//! request (PostgreSQL's CancelRequest: psql's Ctrl-C, drivers' `cancel()`),
//! its statement timeout, the server shutting down, or its client gone — so it
//! stops promptly with PostgreSQL's error and releases what it holds.
//!
//! The wire server owns one per connection and sets it; the engine checks it
//! between rows ([`Interrupt::check`] is an atomic load and, now and then, a
//! clock read and a poll of the client's socket) and races its waits for
//! storage against [`Interrupt::stopped`].

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::error::SqlError;
use crate::sqlstate::SqlState;

/// Why a statement must stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The client sent a CancelRequest for this session.
    Canceled,
    /// The statement ran longer than `statement_timeout`.
    Timeout,
    /// The server is shutting down.
    Shutdown,
    /// The client closed its connection.
    ClientGone,
}

impl StopReason {
    /// The error the statement ends with, as PostgreSQL words it.
    pub fn error(self) -> SqlError {
        match self {
            StopReason::Canceled => SqlError::new(
                SqlState::QUERY_CANCELED,
                "canceling statement due to user request",
            ),
            StopReason::Timeout => SqlError::new(
                SqlState::QUERY_CANCELED,
                "canceling statement due to statement timeout",
            ),
            StopReason::Shutdown => SqlError::new(
                SqlState::ADMIN_SHUTDOWN,
                "terminating connection due to administrator command",
            ),
            StopReason::ClientGone => SqlError::new(
                SqlState::CONNECTION_FAILURE,
                "terminating statement: the client closed its connection",
            ),
        }
    }

    fn code(self) -> u8 {
        match self {
            StopReason::Canceled => 1,
            StopReason::Timeout => 2,
            StopReason::Shutdown => 3,
            StopReason::ClientGone => 4,
        }
    }

    fn from_code(code: u8) -> Option<StopReason> {
        match code {
            1 => Some(StopReason::Canceled),
            2 => Some(StopReason::Timeout),
            3 => Some(StopReason::Shutdown),
            4 => Some(StopReason::ClientGone),
            _ => None,
        }
    }
}

/// How often [`Interrupt::check`] looks at the clock and the client socket
/// (it is called every few hundred rows; the flags are read every time).
const SLOW_CHECK_EVERY: Duration = Duration::from_millis(50);

/// A test of whether the client is still connected.
pub type ClientProbe = Box<dyn Fn() -> bool + Send + Sync>;

/// The interrupt state of one session (see the module docs).
pub struct Interrupt {
    /// The pending [`StopReason`]'s code, 0 for none.
    reason: AtomicU8,
    /// When the running statement times out.
    deadline: Mutex<Option<Instant>>,
    /// Nanoseconds since `epoch` of the last slow check.
    last_slow_check: AtomicU64,
    epoch: Instant,
    client_alive: OnceLock<ClientProbe>,
    woken: tokio::sync::Notify,
}

impl Default for Interrupt {
    fn default() -> Self {
        Interrupt {
            reason: AtomicU8::new(0),
            deadline: Mutex::new(None),
            last_slow_check: AtomicU64::new(0),
            epoch: Instant::now(),
            client_alive: OnceLock::new(),
            woken: tokio::sync::Notify::new(),
        }
    }
}

impl Interrupt {
    /// Sets how to tell whether the client is still connected (once).
    pub fn set_client_probe(&self, probe: ClientProbe) {
        let _ = self.client_alive.set(probe);
    }

    /// A statement starts: it may run until `timeout` from now (`None` for
    /// no limit). A cancel request that arrived while the session was idle
    /// is forgotten, as in PostgreSQL; a shutdown is not.
    pub fn start_statement(&self, timeout: Option<Duration>) {
        let _ = self.reason.compare_exchange(
            StopReason::Canceled.code(),
            0,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        let _ = self.reason.compare_exchange(
            StopReason::Timeout.code(),
            0,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        *self.deadline.lock().unwrap_or_else(|e| e.into_inner()) =
            timeout.map(|t| Instant::now() + t);
    }

    /// The running statement ended: its timeout no longer applies.
    pub fn end_statement(&self) {
        *self.deadline.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Asks the running statement to stop (a later reason does not replace
    /// an earlier one, except that shutdown wins over all).
    pub fn stop(&self, reason: StopReason) {
        if reason == StopReason::Shutdown {
            self.reason.store(reason.code(), Ordering::Release);
        } else {
            let _ =
                self.reason
                    .compare_exchange(0, reason.code(), Ordering::AcqRel, Ordering::Acquire);
        }
        self.woken.notify_waiters();
        self.woken.notify_one();
    }

    /// The reason the running statement must stop, if any (without looking
    /// at the clock or the socket).
    pub fn pending(&self) -> Option<StopReason> {
        StopReason::from_code(self.reason.load(Ordering::Acquire))
    }

    /// Fails with the statement's stop error when it must stop: a cancel or
    /// shutdown was requested, its deadline passed, or its client is gone.
    pub fn check(&self) -> Result<(), SqlError> {
        if let Some(reason) = self.pending() {
            return Err(reason.error());
        }
        let now = self.epoch.elapsed().as_nanos() as u64;
        let last = self.last_slow_check.load(Ordering::Relaxed);
        if now.saturating_sub(last) < SLOW_CHECK_EVERY.as_nanos() as u64 {
            return Ok(());
        }
        self.last_slow_check.store(now, Ordering::Relaxed);
        self.check_slow()
    }

    /// The clock and the client socket (see [`Interrupt::check`]).
    fn check_slow(&self) -> Result<(), SqlError> {
        let expired = self
            .deadline
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|deadline| Instant::now() >= deadline);
        if expired {
            self.stop(StopReason::Timeout);
        } else if self.client_alive.get().is_some_and(|alive| !alive()) {
            self.stop(StopReason::ClientGone);
        }
        match self.pending() {
            Some(reason) => Err(reason.error()),
            None => Ok(()),
        }
    }

    /// Resolves once the session is to end: the server shuts down or an
    /// administrator command (`DROP DATABASE ... WITH (FORCE)`) ends it.
    pub async fn terminated(&self) {
        loop {
            let notified = self.woken.notified();
            if self.pending() == Some(StopReason::Shutdown) {
                return;
            }
            notified.await;
        }
    }

    /// Resolves with the stop error once the running statement must stop:
    /// for racing a wait (on storage, on a slow client) against interrupts.
    pub async fn stopped(&self) -> SqlError {
        loop {
            let notified = self.woken.notified();
            if let Err(error) = self.check_slow() {
                return error;
            }
            let deadline = *self.deadline.lock().unwrap_or_else(|e| e.into_inner());
            let wake = deadline
                .map(|d| d.min(Instant::now() + SLOW_CHECK_EVERY * 4))
                .unwrap_or_else(|| Instant::now() + SLOW_CHECK_EVERY * 4);
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep_until(wake.into()) => {}
            }
        }
    }
}

tokio::task_local! {
    /// The interrupt of the statement the current task runs (see [`within`]).
    static CURRENT: std::sync::Arc<Interrupt>;
}

/// Runs `future` as part of the statement `interrupt` governs, so waits
/// deep in the layers below the engine (storage) can race
/// [`current_stopped`] without the interrupt handed down through every call.
pub async fn within<F: std::future::Future>(
    interrupt: std::sync::Arc<Interrupt>,
    future: F,
) -> F::Output {
    CURRENT.scope(interrupt, future).await
}

/// Resolves with the stop error of the statement the current task runs
/// (see [`within`]) once it must stop; never, outside a statement.
pub async fn current_stopped() -> SqlError {
    match CURRENT.try_with(std::sync::Arc::clone) {
        Ok(interrupt) => interrupt.stopped().await,
        Err(_) => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancels_timeouts_and_shutdown_give_postgres_errors() {
        let interrupt = Interrupt::default();
        interrupt.start_statement(None);
        assert!(interrupt.check().is_ok());
        interrupt.stop(StopReason::Canceled);
        let error = interrupt.check().unwrap_err();
        assert_eq!(error.code, SqlState::QUERY_CANCELED);
        assert_eq!(error.message, "canceling statement due to user request");
        // A cancel that arrived before the statement started is forgotten.
        interrupt.start_statement(None);
        assert!(interrupt.check().is_ok());
        interrupt.start_statement(Some(Duration::ZERO));
        std::thread::sleep(SLOW_CHECK_EVERY + Duration::from_millis(5));
        let error = interrupt.check().unwrap_err();
        assert_eq!(
            error.message,
            "canceling statement due to statement timeout"
        );
        interrupt.stop(StopReason::Shutdown);
        interrupt.start_statement(None);
        assert_eq!(
            interrupt.check().unwrap_err().code,
            SqlState::ADMIN_SHUTDOWN
        );
    }

    #[test]
    fn a_vanished_client_stops_the_statement() {
        let interrupt = Interrupt::default();
        interrupt.set_client_probe(Box::new(|| false));
        interrupt.start_statement(None);
        std::thread::sleep(SLOW_CHECK_EVERY + Duration::from_millis(5));
        assert_eq!(
            interrupt.check().unwrap_err().code,
            SqlState::CONNECTION_FAILURE
        );
    }

    #[tokio::test]
    async fn waits_end_when_the_statement_is_stopped() {
        let interrupt = std::sync::Arc::new(Interrupt::default());
        interrupt.start_statement(None);
        let waiting = {
            let interrupt = interrupt.clone();
            tokio::spawn(async move { interrupt.stopped().await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        interrupt.stop(StopReason::Canceled);
        let error = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the wait ends at once")
            .unwrap();
        assert_eq!(error.code, SqlState::QUERY_CANCELED);
    }

    #[tokio::test]
    async fn a_wait_below_the_engine_hears_the_statement_it_serves() {
        let interrupt = std::sync::Arc::new(Interrupt::default());
        interrupt.start_statement(None);
        interrupt.stop(StopReason::Timeout);
        let error = within(interrupt.clone(), current_stopped()).await;
        assert_eq!(
            error.message,
            "canceling statement due to statement timeout"
        );
        // Outside a statement nothing stops the wait.
        let outside = tokio::time::timeout(Duration::from_millis(50), current_stopped()).await;
        assert!(outside.is_err());
    }
}
