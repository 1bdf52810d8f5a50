//! PostgreSQL's LISTEN/NOTIFY between the sessions of one server: a
//! [`NotificationHub`] per server, a [`Mailbox`] per session.
//!
//! As in PostgreSQL, notifications go to the sessions of the same database
//! that listen on the channel, the notifying one included, once the
//! notifying transaction commits; a session receives them between
//! transactions (the wire server sends NotificationResponse when the session
//! is idle, and before ReadyForQuery after a transaction ends).
//!
//! A session that does not read its notifications holds them in its
//! mailbox, up to [`MAILBOX_BYTES`]. PostgreSQL shares one queue (8 GB) and
//! fails the notifying transaction once it is full ("too many notifications
//! in the NOTIFY queue", 54000); here a `NOTIFY` whose listener's mailbox
//! is full fails the same way at commit, while notifications the server
//! sends itself (after a DuckLake commit) never fail a commit: a full
//! mailbox drops them and counts the drop.

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::{SqlError, SqlState};

/// Bytes of payload (and channel names) one session's mailbox holds at most.
pub const MAILBOX_BYTES: usize = 16 << 20;

/// A payload must be shorter than this many bytes (PostgreSQL's limit).
pub const MAX_PAYLOAD_BYTES: usize = 8000;

/// A channel name is at most this many bytes (an identifier's length).
pub const MAX_CHANNEL_BYTES: usize = 63;

/// One notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The notifying session's process id.
    pub pid: i32,
    /// The channel.
    pub channel: String,
    /// The payload (empty when none was given).
    pub payload: String,
}

impl Notification {
    fn bytes(&self) -> usize {
        self.channel.len() + self.payload.len() + 16
    }
}

/// Checks a channel name and payload as PostgreSQL's `pg_notify` does.
pub fn check(channel: &str, payload: &str) -> Result<(), SqlError> {
    if channel.is_empty() {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "channel name cannot be empty",
        ));
    }
    if channel.len() > MAX_CHANNEL_BYTES {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "channel name too long",
        ));
    }
    if payload.len() >= MAX_PAYLOAD_BYTES {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "payload string too long",
        ));
    }
    Ok(())
}

/// One session's channels and the notifications waiting for it.
#[derive(Debug)]
pub struct Mailbox {
    database: String,
    channels: Mutex<BTreeSet<String>>,
    /// The hub's count of mailboxes listening on any channel.
    listening: Arc<AtomicUsize>,
    queue: Mutex<Queue>,
    dropped: AtomicU64,
    arrived: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct Queue {
    notifications: VecDeque<Notification>,
    bytes: usize,
}

impl Mailbox {
    /// Starts listening on `channel`.
    pub fn listen(&self, channel: &str) {
        let mut channels = self.lock_channels();
        if channels.is_empty() {
            self.listening.fetch_add(1, Ordering::AcqRel);
        }
        channels.insert(channel.to_string());
    }

    /// Stops listening on `channel` (`None`: on every channel).
    pub fn unlisten(&self, channel: Option<&str>) {
        let mut channels = self.lock_channels();
        let was_listening = !channels.is_empty();
        match channel {
            Some(channel) => {
                channels.remove(channel);
            }
            None => channels.clear(),
        }
        if was_listening && channels.is_empty() {
            self.listening.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// The channels the session listens on (`pg_listening_channels()`),
    /// in name order.
    pub fn channels(&self) -> Vec<String> {
        self.lock_channels().iter().cloned().collect()
    }

    /// The fraction of the mailbox that waiting notifications fill.
    fn usage(&self) -> f64 {
        self.lock_queue().bytes as f64 / MAILBOX_BYTES as f64
    }

    fn listens(&self, database: &str, channel: &str) -> bool {
        self.database == database && self.lock_channels().contains(channel)
    }

    fn room_for(&self, bytes: usize) -> bool {
        self.lock_queue().bytes + bytes <= MAILBOX_BYTES
    }

    fn deliver(&self, notification: &Notification) -> bool {
        let mut queue = self.lock_queue();
        if queue.bytes + notification.bytes() > MAILBOX_BYTES {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        queue.bytes += notification.bytes();
        queue.notifications.push_back(notification.clone());
        drop(queue);
        self.arrived.notify_one();
        true
    }

    /// The notifications waiting, oldest first (they leave the mailbox).
    pub fn take(&self) -> Vec<Notification> {
        let mut queue = self.lock_queue();
        queue.bytes = 0;
        queue.notifications.drain(..).collect()
    }

    /// Whether notifications are waiting.
    pub fn has_waiting(&self) -> bool {
        !self.lock_queue().notifications.is_empty()
    }

    /// Resolves when a notification arrives (at once when one arrived
    /// since the last wait).
    pub async fn arrival(&self) {
        self.arrived.notified().await
    }

    /// Notifications dropped because the mailbox was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn lock_channels(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.channels.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        if !self.lock_channels().is_empty() {
            self.listening.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The mailboxes of a server's sessions.
#[derive(Debug, Default)]
pub struct NotificationHub {
    mailboxes: Mutex<Vec<Weak<Mailbox>>>,
    /// How many mailboxes listen on some channel: while none does (the
    /// usual case), a commit learns that nobody listens from this alone.
    listening: Arc<AtomicUsize>,
}

impl NotificationHub {
    /// A new hub, shared by the sessions of one server.
    pub fn new() -> Arc<NotificationHub> {
        Arc::default()
    }

    /// A mailbox for a session of `database` (gone when dropped).
    pub fn mailbox(&self, database: &str) -> Arc<Mailbox> {
        let mailbox = Arc::new(Mailbox {
            database: database.to_string(),
            channels: Mutex::default(),
            listening: self.listening.clone(),
            queue: Mutex::default(),
            dropped: AtomicU64::new(0),
            arrived: tokio::sync::Notify::new(),
        });
        let mut mailboxes = self.lock();
        mailboxes.retain(|m| m.strong_count() > 0);
        mailboxes.push(Arc::downgrade(&mailbox));
        mailbox
    }

    fn listeners(&self, database: &str, channel: &str) -> Vec<Arc<Mailbox>> {
        self.lock()
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|m| m.listens(database, channel))
            .collect()
    }

    /// `pg_notification_queue_usage()`: the fraction of the fullest
    /// listener's mailbox in use (PostgreSQL has one queue for every
    /// listener; here each listener has its own, and the fullest one is
    /// where a NOTIFY first fails).
    pub fn usage(&self) -> f64 {
        self.lock()
            .iter()
            .filter_map(Weak::upgrade)
            .map(|m| m.usage())
            .fold(0.0, f64::max)
    }

    /// Whether a session of `database` listens on `channel`.
    pub fn has_listeners(&self, database: &str, channel: &str) -> bool {
        self.listening.load(Ordering::Acquire) > 0 && !self.listeners(database, channel).is_empty()
    }

    /// Fails with PostgreSQL's error when a listener of `notifications`
    /// has no room for them (checked at commit, before the transaction
    /// commits).
    pub fn check_room(
        &self,
        database: &str,
        notifications: &[Notification],
    ) -> Result<(), SqlError> {
        let mut needed: Vec<(Arc<Mailbox>, usize)> = Vec::new();
        for notification in notifications {
            for mailbox in self.listeners(database, &notification.channel) {
                match needed.iter_mut().find(|(m, _)| Arc::ptr_eq(m, &mailbox)) {
                    Some((_, bytes)) => *bytes += notification.bytes(),
                    None => needed.push((mailbox, notification.bytes())),
                }
            }
        }
        if needed
            .iter()
            .all(|(mailbox, bytes)| mailbox.room_for(*bytes))
        {
            Ok(())
        } else {
            Err(SqlError::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                "too many notifications in the NOTIFY queue",
            ))
        }
    }

    /// Delivers `notifications` to the sessions of `database` listening on
    /// their channels; returns how many deliveries a full mailbox dropped.
    pub fn publish(&self, database: &str, notifications: &[Notification]) -> usize {
        let mut dropped = 0;
        for notification in notifications {
            for mailbox in self.listeners(database, &notification.channel) {
                if !mailbox.deliver(notification) {
                    dropped += 1;
                }
            }
        }
        dropped
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Weak<Mailbox>>> {
        self.mailboxes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(channel: &str, payload: &str) -> Notification {
        Notification {
            pid: 7,
            channel: channel.to_string(),
            payload: payload.to_string(),
        }
    }

    #[test]
    fn channels_and_usage_are_what_the_listeners_hold() {
        let hub = NotificationHub::new();
        let a = hub.mailbox("lake");
        let b = hub.mailbox("lake");
        a.listen("jobs");
        a.listen("done");
        b.listen("jobs");
        assert_eq!(a.channels(), ["done", "jobs"]);
        assert_eq!(hub.usage(), 0.0);
        let big = note("jobs", &"x".repeat(MAX_PAYLOAD_BYTES - 1));
        hub.publish("lake", &[big.clone(), big.clone()]);
        b.take();
        let expected = 2.0 * big.bytes() as f64 / MAILBOX_BYTES as f64;
        assert_eq!(hub.usage(), expected, "the fullest mailbox");
        a.take();
        assert_eq!(hub.usage(), 0.0);
        a.unlisten(Some("done"));
        assert_eq!(a.channels(), ["jobs"]);
    }

    #[test]
    fn notifications_reach_the_listeners_of_the_database_and_channel() {
        let hub = NotificationHub::new();
        let a = hub.mailbox("lake");
        let b = hub.mailbox("lake");
        let other = hub.mailbox("other");
        a.listen("jobs");
        b.listen("done");
        other.listen("jobs");
        assert!(hub.has_listeners("lake", "jobs"));
        assert_eq!(
            hub.publish("lake", &[note("jobs", "1"), note("done", "2")]),
            0
        );
        assert_eq!(a.take(), [note("jobs", "1")]);
        assert_eq!(b.take(), [note("done", "2")]);
        assert!(other.take().is_empty(), "another database's listener");
        a.unlisten(None);
        hub.publish("lake", &[note("jobs", "3")]);
        assert!(!a.has_waiting());
        drop(b);
        assert!(!hub.has_listeners("lake", "done"), "a dropped mailbox");
        assert!(hub.has_listeners("other", "jobs"));
        other.unlisten(Some("jobs"));
        assert_eq!(hub.listening.load(Ordering::Acquire), 0, "nobody listens");
        a.listen("x");
        a.listen("y");
        assert_eq!(hub.listening.load(Ordering::Acquire), 1);
        drop(a);
        assert_eq!(hub.listening.load(Ordering::Acquire), 0);
    }

    #[test]
    fn a_full_mailbox_fails_notify_at_commit_and_drops_server_notifications() {
        let hub = NotificationHub::new();
        let slow = hub.mailbox("lake");
        slow.listen("c");
        let big = "x".repeat(MAX_PAYLOAD_BYTES - 1);
        let fits = MAILBOX_BYTES / note("c", &big).bytes();
        for _ in 0..fits {
            hub.publish("lake", &[note("c", &big)]);
        }
        let refused = hub.check_room("lake", &[note("c", &big)]).unwrap_err();
        assert_eq!(refused.code, SqlState::PROGRAM_LIMIT_EXCEEDED);
        assert_eq!(hub.publish("lake", &[note("c", &big)]), 1);
        assert_eq!(slow.dropped(), 1);
        assert_eq!(slow.take().len(), fits);
        hub.check_room("lake", &[note("c", &big)]).unwrap();
    }

    #[test]
    fn channel_and_payload_limits_are_postgresql_s() {
        assert!(check("c", &"x".repeat(7999)).is_ok());
        assert_eq!(
            check("c", &"x".repeat(8000)).unwrap_err().message,
            "payload string too long"
        );
        assert_eq!(
            check("", "").unwrap_err().message,
            "channel name cannot be empty"
        );
        assert_eq!(
            check(&"c".repeat(64), "").unwrap_err().message,
            "channel name too long"
        );
    }
}
