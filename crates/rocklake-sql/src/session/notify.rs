//! LISTEN, UNLISTEN, NOTIFY and `pg_notify` in a session, and the
//! notification the server sends after each DuckLake commit (see
//! [`rocklake_types::notify`]).
//!
//! As in PostgreSQL, what a transaction asks takes effect when it commits:
//! its notifications are sent then (each distinct channel and payload once),
//! its LISTEN and UNLISTEN change the session's channels then, and a
//! rollback forgets them all (a rollback to a savepoint, those queued after
//! it).
//!
//! A transaction that inserts a row into a lake's `ducklake_snapshot` (a
//! DuckLake commit) sends, once committed and when a session of the
//! database listens, a notification on channel [`SNAPSHOT_CHANNEL`] whose
//! payload is JSON: `{"database", "schema", "snapshot_id",
//! "snapshot_time", "schema_version", "changes_made"}` (the schema is the
//! lake's metadata schema; `changes_made` comes from the same commit's
//! `ducklake_snapshot_changes` row). A payload is kept under PostgreSQL's
//! 8000 bytes: a longer `changes_made` is cut, and `"changes_made_cut":
//! true` says so.

use std::sync::{Arc, Mutex};

use rocklake_types::notify::{Mailbox, Notification, NotificationHub};
use rocklake_types::{Datum, Row, SqlError, SqlState};

/// The channel of the notifications DuckLake commits send.
pub const SNAPSHOT_CHANNEL: &str = "ducklake_snapshot";

/// Rows a statement inserted into the tables a DuckLake commit writes,
/// kept while a session listens for commits.
#[derive(Debug, Default)]
pub struct InsertedSnapshots {
    rows: Mutex<Vec<InsertedRows>>,
}

#[derive(Debug)]
struct InsertedRows {
    schema: String,
    table: String,
    columns: Vec<String>,
    rows: Vec<Row>,
}

impl InsertedSnapshots {
    /// Keeps `rows` inserted into `table` when it is one a DuckLake commit
    /// writes.
    pub fn offer(&self, table: &crate::storage::RelationDef, rows: &[Row]) {
        if table.name == "ducklake_snapshot" || table.name == "ducklake_snapshot_changes" {
            self.lock().push(InsertedRows {
                schema: table.schema.clone(),
                table: table.name.clone(),
                columns: table.columns.iter().map(|c| c.name.clone()).collect(),
                rows: rows.to_vec(),
            });
        }
    }

    fn take(&self) -> Vec<InsertedRows> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<InsertedRows>> {
        self.rows.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A change of the session's channels, applied at commit.
enum ListenChange {
    Listen(String),
    Unlisten(Option<String>),
}

/// The session's side of LISTEN/NOTIFY.
pub(super) struct SessionNotifications {
    hub: Arc<NotificationHub>,
    mailbox: Arc<Mailbox>,
    database: String,
    pid: i32,
    /// NOTIFYs of the open transaction, in order, without duplicates.
    pending: Vec<Notification>,
    changes: Vec<ListenChange>,
    /// DuckLake commit rows of the open transaction.
    inserted: Arc<InsertedSnapshots>,
    /// Rows of the open transaction's statements so far.
    snapshot_rows: Vec<InsertedRows>,
}

impl SessionNotifications {
    pub(super) fn new(hub: Arc<NotificationHub>, database: &str, pid: i32) -> Self {
        SessionNotifications {
            mailbox: hub.mailbox(database),
            hub,
            database: database.to_string(),
            pid,
            pending: Vec::new(),
            changes: Vec::new(),
            inserted: Arc::default(),
            snapshot_rows: Vec::new(),
        }
    }

    pub(super) fn hub(&self) -> Arc<NotificationHub> {
        self.hub.clone()
    }

    pub(super) fn mailbox(&self) -> Arc<Mailbox> {
        self.mailbox.clone()
    }

    /// Where the next statement keeps DuckLake commit rows: only while a
    /// session of the database listens for commits.
    pub(super) fn snapshot_sink(&self) -> Option<Arc<InsertedSnapshots>> {
        self.hub
            .has_listeners(&self.database, SNAPSHOT_CHANNEL)
            .then(|| self.inserted.clone())
    }

    /// `LISTEN channel`.
    pub(super) fn listen(&mut self, channel: String) {
        self.changes.push(ListenChange::Listen(channel));
    }

    /// `UNLISTEN channel` (`None`: `UNLISTEN *`).
    pub(super) fn unlisten(&mut self, channel: Option<String>) {
        self.changes.push(ListenChange::Unlisten(channel));
    }

    /// `NOTIFY channel, 'payload'` or `pg_notify(channel, payload)`.
    pub(super) fn notify(&mut self, channel: String, payload: String) -> Result<(), SqlError> {
        rocklake_types::notify::check(&channel, &payload)?;
        let notification = Notification {
            pid: self.pid,
            channel,
            payload,
        };
        if !self.pending.contains(&notification) {
            self.pending.push(notification);
        }
        Ok(())
    }

    /// How many NOTIFYs and LISTEN changes are queued (for a savepoint).
    pub(super) fn mark(&self) -> super::savepoints::NotifyMark {
        (self.pending.len(), self.changes.len())
    }

    /// Forgets what was queued after `mark` (a rollback to a savepoint).
    pub(super) fn rollback_to(&mut self, (pending, changes): super::savepoints::NotifyMark) {
        self.pending.truncate(pending);
        self.changes.truncate(changes);
    }

    /// Takes what the statement that just succeeded kept.
    pub(super) fn statement_succeeded(&mut self) {
        self.snapshot_rows.extend(self.inserted.take());
    }

    /// Forgets what a failed statement kept.
    pub(super) fn statement_failed(&mut self) {
        self.inserted.take();
    }

    /// Fails with 54000 when a listener has no room for the transaction's
    /// notifications (before the transaction commits, as in PostgreSQL).
    pub(super) fn check_room(&self) -> Result<(), SqlError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.hub.check_room(&self.database, &self.pending)
    }

    /// The transaction ended: on commit its channel changes apply and its
    /// notifications go out; on rollback both are forgotten.
    pub(super) fn transaction_ended(&mut self, committed: bool) {
        let changes = std::mem::take(&mut self.changes);
        let mut notifications = std::mem::take(&mut self.pending);
        let rows = std::mem::take(&mut self.snapshot_rows);
        self.inserted.take();
        if !committed {
            return;
        }
        for change in changes {
            match change {
                ListenChange::Listen(channel) => self.mailbox.listen(&channel),
                ListenChange::Unlisten(channel) => self.mailbox.unlisten(channel.as_deref()),
            }
        }
        notifications.extend(snapshot_notifications(&self.database, self.pid, rows));
        if notifications.is_empty() {
            return;
        }
        let dropped = self.hub.publish(&self.database, &notifications);
        if dropped > 0 {
            tracing::warn!(
                dropped,
                database = %self.database,
                "notifications dropped: a listener's mailbox is full"
            );
        }
    }
}

/// The notifications of the DuckLake commits among `rows`.
fn snapshot_notifications(database: &str, pid: i32, rows: Vec<InsertedRows>) -> Vec<Notification> {
    let mut snapshots = Vec::new();
    let mut changes: Vec<(String, Option<i64>, Option<String>)> = Vec::new();
    for inserted in &rows {
        let column = |name: &str| inserted.columns.iter().position(|c| c == name);
        if inserted.table == "ducklake_snapshot_changes" {
            let (Some(id), Some(made)) = (column("snapshot_id"), column("changes_made")) else {
                continue;
            };
            for row in &inserted.rows {
                changes.push((
                    inserted.schema.clone(),
                    row.get(id).and_then(Datum::as_i64),
                    row.get(made)
                        .and_then(rocklake_types::value::text::format_text),
                ));
            }
            continue;
        }
        for row in &inserted.rows {
            let value = |name: &str| column(name).and_then(|i| row.get(i));
            snapshots.push((
                inserted.schema.clone(),
                value("snapshot_id").and_then(Datum::as_i64),
                value("snapshot_time").and_then(rocklake_types::value::text::format_text),
                value("schema_version").and_then(Datum::as_i64),
            ));
        }
    }
    snapshots
        .into_iter()
        .map(|(schema, id, time, schema_version)| {
            let made = changes
                .iter()
                .find(|(s, change_id, _)| *s == schema && *change_id == id)
                .and_then(|(_, _, made)| made.clone());
            let mut payload = serde_json::json!({
                "database": database,
                "schema": schema,
                "snapshot_id": id,
                "snapshot_time": time,
                "schema_version": schema_version,
                "changes_made": made,
            })
            .to_string();
            // Kept within PostgreSQL's payload limit, which listeners may
            // rely on: a long list of changes is cut (and says so).
            if payload.len() >= rocklake_types::notify::MAX_PAYLOAD_BYTES {
                let mut cut = made.unwrap_or_default();
                let keep = rocklake_types::notify::MAX_PAYLOAD_BYTES
                    .saturating_sub(payload.len() - cut.len() + 64);
                let mut end = keep.min(cut.len());
                while !cut.is_char_boundary(end) {
                    end -= 1;
                }
                cut.truncate(end);
                payload = serde_json::json!({
                    "database": database,
                    "schema": schema,
                    "snapshot_id": id,
                    "snapshot_time": time,
                    "schema_version": schema_version,
                    "changes_made": cut,
                    "changes_made_cut": true,
                })
                .to_string();
            }
            Notification {
                pid,
                channel: SNAPSHOT_CHANNEL.to_string(),
                payload,
            }
        })
        .collect()
}

/// The channel a LISTEN, UNLISTEN or NOTIFY names (an identifier).
pub(super) fn channel_name(ident: &sqlparser::ast::Ident) -> Result<String, SqlError> {
    let name = crate::ident::fold(ident);
    if name.is_empty() {
        return Err(SqlError::new(
            SqlState::SYNTAX_ERROR,
            "zero-length delimited identifier",
        ));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(table: &str, columns: &[&str], values: Vec<Datum>) -> InsertedRows {
        InsertedRows {
            schema: "public".to_string(),
            table: table.to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: vec![values],
        }
    }

    fn payload(changes_made: &str) -> serde_json::Value {
        let inserted = vec![
            rows(
                "ducklake_snapshot",
                &["snapshot_id", "snapshot_time", "schema_version"],
                vec![
                    Datum::Int8(4),
                    Datum::text("2026-12-06 10:00:00+00".to_string()),
                    Datum::Int8(2),
                ],
            ),
            rows(
                "ducklake_snapshot_changes",
                &["snapshot_id", "changes_made"],
                vec![Datum::Int8(4), Datum::text(changes_made.to_string())],
            ),
        ];
        let notes = snapshot_notifications("lake", 9, inserted);
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].channel, SNAPSHOT_CHANNEL);
        assert!(notes[0].payload.len() < rocklake_types::notify::MAX_PAYLOAD_BYTES);
        serde_json::from_str(&notes[0].payload).unwrap()
    }

    #[test]
    fn a_ducklake_commit_becomes_one_json_notification() {
        let json = payload("inserted_into_table:1");
        assert_eq!(json["database"], "lake");
        assert_eq!(json["schema"], "public");
        assert_eq!(json["snapshot_id"], 4);
        assert_eq!(json["schema_version"], 2);
        assert_eq!(json["snapshot_time"], "2026-12-06 10:00:00+00");
        assert_eq!(json["changes_made"], "inserted_into_table:1");
        assert!(json.get("changes_made_cut").is_none());
    }

    #[test]
    fn long_changes_are_cut_to_postgresql_s_payload_limit() {
        let long = "created_table:\"é\",".repeat(1000);
        let json = payload(&long);
        assert_eq!(json["changes_made_cut"], true);
        assert!(long.starts_with(json["changes_made"].as_str().unwrap()));
    }
}
