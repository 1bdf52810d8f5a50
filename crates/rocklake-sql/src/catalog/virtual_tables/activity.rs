//! `pg_stat_activity`, `pg_stat_database` and `pg_locks`. `pg_stat_activity`: one row
//! per session of the server, from its board
//! of sessions ([`rocklake_types::activity`]), with PostgreSQL 15's
//! columns. Like PostgreSQL, a role sees the query, state and times of
//! other roles' sessions only with the privileges of their user (or of
//! `pg_read_all_stats`); otherwise `query` reads
//! `<insufficient privilege>` and those columns are NULL.

use std::sync::atomic::Ordering;

use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};

use super::roles::role_oid;
use super::{col, text};
use crate::catalog::Catalog;

pub(super) fn pg_stat_activity_columns() -> Vec<ColumnDef> {
    use PgType::*;
    vec![
        col("datid", Oid),
        col("datname", Name),
        col("pid", Int4),
        col("leader_pid", Int4),
        col("usesysid", Oid),
        col("usename", Name),
        col("application_name", Text),
        col("client_addr", Inet),
        col("client_hostname", Text),
        col("client_port", Int4),
        col("backend_start", TimestampTz),
        col("xact_start", TimestampTz),
        col("query_start", TimestampTz),
        col("state_change", TimestampTz),
        col("wait_event_type", Text),
        col("wait_event", Text),
        col("state", Text),
        col("backend_xid", Xid),
        col("backend_xmin", Xid),
        col("query_id", Int8),
        col("query", Text),
        col("backend_type", Text),
    ]
}

fn time(micros: Option<i64>) -> Datum {
    micros.map_or(Datum::Null, Datum::TimestampTz)
}

fn optional_text(value: Option<&str>) -> Datum {
    value.map_or(Datum::Null, text)
}

pub(super) fn pg_stat_activity_rows(cat: &Catalog) -> Vec<Row> {
    let who = cat.roles.who();
    cat.activity
        .list()
        .into_iter()
        .map(|session| {
            let state = session.snapshot();
            let visible = who.has_privs_of(&session.user) || who.has_privs_of("pg_read_all_stats");
            let mut row = vec![
                Datum::Oid(Catalog::database_oid(&session.database)),
                text(&session.database),
                Datum::Int4(session.pid),
                Datum::Null,
                role_oid(cat, &session.user).map_or(Datum::Null, Datum::Oid),
                text(&session.user),
                text(&session.application_name),
            ];
            if visible {
                row.extend([
                    session
                        .client
                        .map_or(Datum::Null, |peer| text(&peer.ip().to_string())),
                    Datum::Null,
                    session
                        .client
                        .map_or(Datum::Int4(-1), |peer| Datum::Int4(peer.port().into())),
                    Datum::TimestampTz(session.backend_start),
                    time(state.xact_start),
                    time(state.query_start),
                    Datum::TimestampTz(state.state_change),
                    optional_text(state.wait.map(|(kind, _)| kind)),
                    optional_text(state.wait.map(|(_, event)| event)),
                    text(state.state.as_str()),
                    state.xid.map_or(Datum::Null, Datum::Oid),
                    Datum::Null,
                    Datum::Null,
                    text(&state.query),
                ]);
            } else {
                row.extend(std::iter::repeat_n(Datum::Null, 13));
                row.push(text("<insufficient privilege>"));
            }
            row.push(text("client backend"));
            row
        })
        .collect()
}

/// `pg_stat_database` (PostgreSQL 15's columns): one row per database and
/// one for shared objects (`datid` 0).
pub(super) fn pg_stat_database_columns() -> Vec<ColumnDef> {
    use PgType::*;
    let mut columns = vec![
        col("datid", Oid),
        col("datname", Name),
        col("numbackends", Int4),
    ];
    for name in [
        "xact_commit",
        "xact_rollback",
        "blks_read",
        "blks_hit",
        "tup_returned",
        "tup_fetched",
        "tup_inserted",
        "tup_updated",
        "tup_deleted",
        "conflicts",
        "temp_files",
        "temp_bytes",
        "deadlocks",
        "checksum_failures",
    ] {
        columns.push(col(name, Int8));
    }
    columns.push(col("checksum_last_failure", TimestampTz));
    for name in [
        "blk_read_time",
        "blk_write_time",
        "session_time",
        "active_time",
        "idle_in_transaction_time",
    ] {
        columns.push(col(name, Float8));
    }
    for name in [
        "sessions",
        "sessions_abandoned",
        "sessions_fatal",
        "sessions_killed",
    ] {
        columns.push(col(name, Int8));
    }
    columns.push(col("stats_reset", TimestampTz));
    columns
}

/// What RockLake counts is filled from the board of sessions: backends,
/// commits and rollbacks, sessions and those terminated, the time sessions
/// spent (in milliseconds, the connected ones' time so far included).
/// `conflicts`, `temp_files`, `temp_bytes` are 0 (no standby conflicts and
/// no temporary files, as RockLake has none), `blk_read_time` and
/// `blk_write_time` 0 (as PostgreSQL without `track_io_timing`),
/// `checksum_failures` NULL (as without data checksums); what it does not
/// count (blocks, tuples, deadlocks, sessions abandoned or ended by a
/// fatal error) is NULL.
pub(super) fn pg_stat_database_rows(cat: &Catalog) -> Vec<Row> {
    let sessions = cat.activity.list();
    let since = Datum::TimestampTz(cat.activity.started());
    // The row of shared objects (`datid` 0, no name): no sessions.
    let mut rows = vec![database_stats_row(Datum::Oid(0), Datum::Null, None, &since)];
    for name in cat.databases.iter() {
        let totals = cat.activity.totals(name);
        let load = |counter: &std::sync::atomic::AtomicI64| counter.load(Ordering::Relaxed);
        let mut counts = Counts {
            backends: 0,
            commits: load(&totals.commits),
            rollbacks: load(&totals.rollbacks),
            session_micros: load(&totals.session_micros),
            active_micros: load(&totals.active_micros),
            idle_micros: load(&totals.idle_in_transaction_micros),
            sessions: load(&totals.sessions),
            killed: load(&totals.sessions_killed),
        };
        for s in sessions.iter().filter(|s| s.database == *name) {
            let (spent, running, waiting) = s.uncounted_micros();
            counts.backends += 1;
            counts.session_micros += spent;
            counts.active_micros += running;
            counts.idle_micros += waiting;
        }
        let datid = Datum::Oid(Catalog::database_oid(name));
        rows.push(database_stats_row(datid, text(name), Some(counts), &since));
    }
    rows
}

/// What a database's row of `pg_stat_database` counts.
struct Counts {
    backends: i32,
    commits: i64,
    rollbacks: i64,
    session_micros: i64,
    active_micros: i64,
    idle_micros: i64,
    sessions: i64,
    killed: i64,
}

/// One row of `pg_stat_database`; without `counts` (the shared objects),
/// no backends, transactions or sessions and no times.
fn database_stats_row(datid: Datum, datname: Datum, counts: Option<Counts>, since: &Datum) -> Row {
    let millis = |micros: i64| Datum::Float8(micros as f64 / 1000.0);
    let counted = |value: Option<Datum>| value.unwrap_or(Datum::Null);
    let c = counts.as_ref();
    let mut row = vec![
        datid,
        datname,
        Datum::Int4(c.map_or(0, |c| c.backends)),
        Datum::Int8(c.map_or(0, |c| c.commits)),
        Datum::Int8(c.map_or(0, |c| c.rollbacks)),
    ];
    // blks_read .. tup_deleted: not counted.
    row.extend(std::iter::repeat_n(Datum::Null, 7));
    // conflicts, temp_files, temp_bytes; deadlocks, checksum_failures,
    // checksum_last_failure.
    row.extend([Datum::Int8(0), Datum::Int8(0), Datum::Int8(0)]);
    row.extend([Datum::Null, Datum::Null, Datum::Null]);
    row.extend([
        Datum::Float8(0.0),
        Datum::Float8(0.0),
        counted(c.map(|c| millis(c.session_micros))),
        counted(c.map(|c| millis(c.active_micros))),
        counted(c.map(|c| millis(c.idle_micros))),
        counted(c.map(|c| Datum::Int8(c.sessions))),
        Datum::Null,
        Datum::Null,
        counted(c.map(|c| Datum::Int8(c.killed))),
        since.clone(),
    ]);
    row
}

/// `pg_locks` (PostgreSQL 15's columns): RockLake's locks, from the board
/// of sessions ([`rocklake_types::activity::locks`]): each open
/// transaction's virtual transaction id, each transaction id held by a
/// transaction with row or key locks, each wait for one.
pub(super) fn pg_locks_columns() -> Vec<ColumnDef> {
    use PgType::*;
    vec![
        col("locktype", Text),
        col("database", Oid),
        col("relation", Oid),
        col("page", Int4),
        col("tuple", Int2),
        col("virtualxid", Text),
        col("transactionid", Xid),
        col("classid", Oid),
        col("objid", Oid),
        col("objsubid", Int2),
        col("virtualtransaction", Text),
        col("pid", Int4),
        col("mode", Text),
        col("granted", Bool),
        col("fastpath", Bool),
        col("waitstart", TimestampTz),
    ]
}

pub(super) fn pg_locks_rows(cat: &Catalog) -> Vec<Row> {
    let sessions = cat.activity.list();
    rocklake_types::activity::locks::lock_rows(&sessions)
        .into_iter()
        .map(|lock| {
            vec![
                text(lock.locktype),
                Datum::Null,
                Datum::Null,
                Datum::Null,
                Datum::Null,
                optional_text(lock.virtualxid.as_deref()),
                lock.transactionid.map_or(Datum::Null, Datum::Oid),
                Datum::Null,
                Datum::Null,
                Datum::Null,
                text(&lock.virtualtransaction),
                Datum::Int4(lock.pid),
                text(lock.mode),
                Datum::Bool(lock.granted),
                Datum::Bool(lock.fastpath),
                time(lock.waitstart),
            ]
        })
        .collect()
}
