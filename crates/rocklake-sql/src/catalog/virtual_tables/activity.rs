//! `pg_stat_activity`: one row per session of the server, from its board
//! of sessions ([`rocklake_types::activity`]), with PostgreSQL 15's
//! columns. Like PostgreSQL, a role sees the query, state and times of
//! other roles' sessions only with the privileges of their user (or of
//! `pg_read_all_stats`); otherwise `query` reads
//! `<insufficient privilege>` and those columns are NULL.

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
                    Datum::Null,
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
