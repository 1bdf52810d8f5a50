//! Functions about the server's sessions (PostgreSQL's "Server Signaling
//! Functions" and "Session Information Functions"):
//! `pg_cancel_backend`, `pg_terminate_backend` with PostgreSQL's permission
//! rules, `pg_postmaster_start_time`, `inet_client_addr`,
//! `inet_client_port`, `pg_is_in_recovery`, `pg_blocking_pids`,
//! `pg_notify`, `pg_listening_channels`, `pg_notification_queue_usage`, and the delays `pg_sleep`, `pg_sleep_for`,
//! `pg_sleep_until`. They act on the server's board of sessions
//! ([`rocklake_types::activity`]), as `pg_stat_activity` shows it.

use std::time::{Duration, Instant};

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::{SqlError, SqlState};

use super::def::types::*;
use super::def::Library;
use crate::plan::{CallEnv, CallInfo, Param};
use crate::roles::Signal;

/// The library's array of the channels `pg_listening_channels()` returns
/// as a set.
pub(crate) const LISTENING_CHANNELS_ARRAY: &str = "pg_listening_channels (as array)";

/// Registers the session functions.
pub(super) fn register(lib: &mut Library) {
    lib.function("pg_cancel_backend", [INT4], BOOL, cancel)
        .volatile()
        .reads_session();
    lib.function("pg_terminate_backend", [INT4, INT8], BOOL, terminate)
        .defaults(vec![Datum::Int8(0)])
        .names(&["pid", "timeout"])
        .volatile()
        .reads_session();
    lib.function(
        "pg_postmaster_start_time",
        [Param::Any; 0],
        TIMESTAMPTZ,
        |_, _, env| Ok(Datum::TimestampTz(env.catalog.activity.started())),
    )
    .stable()
    .reads_session();
    lib.function(
        "inet_client_addr",
        [Param::Any; 0],
        PgType::Inet,
        |_, _, env| {
            Ok(own_client(env).map_or(Datum::Null, |peer| Datum::text(peer.ip().to_string())))
        },
    )
    .stable()
    .reads_session();
    // Queued with the statement's transaction, sent when it commits (see
    // crate::session::notify); a NULL channel is an empty one.
    lib.function("pg_notify", [TEXT, TEXT], PgType::Void, |a, _, env| {
        let channel = a[0].as_str().unwrap_or_default().to_string();
        let payload = a[1].as_str().unwrap_or_default().to_string();
        rocklake_types::notify::check(&channel, &payload)?;
        env.catalog
            .notifications
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((channel, payload));
        Ok(Datum::Null)
    })
    .not_strict()
    .volatile()
    .reads_session();
    lib.function(
        LISTENING_CHANNELS_ARRAY,
        [Param::Any; 0],
        PgType::array_of(TEXT),
        |_, _, env| {
            let channels = env
                .catalog
                .listening
                .as_ref()
                .map(|(mailbox, _)| mailbox.channels())
                .unwrap_or_default();
            Ok(Datum::array(
                channels.into_iter().map(Datum::text).collect::<Vec<_>>(),
            ))
        },
    )
    .volatile()
    .reads_session();
    lib.function(
        "pg_notification_queue_usage",
        [Param::Any; 0],
        FLOAT8,
        |_, _, env| {
            let usage = env
                .catalog
                .listening
                .as_ref()
                .map_or(0.0, |(_, hub)| hub.usage());
            Ok(Datum::Float8(usage))
        },
    )
    .volatile()
    .reads_session();
    lib.function("pg_sleep", [FLOAT8], PgType::Void, |a, _, env| {
        let seconds = match &a[0] {
            Datum::Float8(s) => *s,
            _ => 0.0,
        };
        sleep(seconds, env)
    })
    .volatile()
    .reads_session();
    lib.function("pg_sleep_for", [INTERVAL], PgType::Void, |a, _, env| {
        let Datum::Interval {
            months,
            days,
            micros,
        } = a[0]
        else {
            return Ok(Datum::text(""));
        };
        let span = (i64::from(months) * 30 + i64::from(days)) * 86_400_000_000 + micros;
        sleep(span as f64 / 1e6, env)
    })
    .volatile()
    .reads_session();
    lib.function(
        "pg_sleep_until",
        [TIMESTAMPTZ],
        PgType::Void,
        |a, _, env| {
            let Datum::TimestampTz(until) = a[0] else {
                return Ok(Datum::text(""));
            };
            let now = rocklake_types::datum::timestamptz_micros(std::time::SystemTime::now());
            sleep(until.saturating_sub(now) as f64 / 1e6, env)
        },
    )
    .volatile()
    .reads_session();
    lib.function(
        "pg_blocking_pids",
        [INT4],
        PgType::array_of(INT4),
        |a, _, env| {
            let pid = a[0].as_i64().unwrap_or(0) as i32;
            let sessions = env.catalog.activity.list();
            let pids = rocklake_types::activity::locks::blocking_pids(&sessions, pid);
            Ok(Datum::array(
                pids.into_iter().map(Datum::Int4).collect::<Vec<_>>(),
            ))
        },
    )
    .volatile()
    .reads_session();
    // True on a read replica (a hot standby), as PostgreSQL answers on a
    // standby; libpq's target_session_attrs=primary/standby asks it.
    lib.function("pg_is_in_recovery", [Param::Any; 0], BOOL, |_, _, env| {
        Ok(Datum::Bool(
            env.catalog.setting("in_hot_standby").as_deref() == Some("on"),
        ))
    })
    .stable()
    .reads_session();
    lib.function("inet_client_port", [Param::Any; 0], INT4, |_, _, env| {
        Ok(own_client(env).map_or(Datum::Null, |peer| Datum::Int4(peer.port().into())))
    })
    .stable()
    .reads_session();
}

/// Waits `seconds` (nothing for none or less), ended early like any
/// statement by a cancel, the statement timeout or shutdown.
fn sleep(seconds: f64, env: &CallEnv) -> Result<Datum, SqlError> {
    if seconds.is_finite() && seconds > 0.0 {
        let deadline = Instant::now() + Duration::from_secs_f64(seconds.min(1e9));
        loop {
            if let Some(interrupt) = env.interrupt {
                interrupt.check()?;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(10)));
        }
    }
    Ok(Datum::text(""))
}

fn own_client(env: &CallEnv) -> Option<std::net::SocketAddr> {
    env.catalog
        .activity
        .get(env.catalog.backend_pid)
        .and_then(|me| me.client)
}

/// The session of `pid` once the current user may send it `signal`;
/// `None` for a pid that is no session of this server.
fn target(
    a: &[Datum],
    env: &CallEnv,
    signal: Signal,
) -> Result<Option<std::sync::Arc<rocklake_types::activity::SessionActivity>>, SqlError> {
    let pid = a[0].as_i64().unwrap_or(0) as i32;
    let Some(session) = env.catalog.activity.get(pid) else {
        return Ok(None);
    };
    env.catalog
        .roles
        .who()
        .check_may_send(&session.user, signal)?;
    Ok(Some(session))
}

fn cancel(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Bool(match target(a, env, Signal::Cancel)? {
        Some(session) => {
            session.cancel();
            true
        }
        None => false,
    }))
}

/// Ends the session; with a timeout (milliseconds), waits that long for it
/// to be gone and answers whether it is.
fn terminate(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    let timeout = a.get(1).and_then(Datum::as_i64).unwrap_or(0);
    if timeout < 0 {
        return Err(SqlError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            "\"timeout\" must not be negative",
        ));
    }
    let Some(session) = target(a, env, Signal::Terminate)? else {
        return Ok(Datum::Bool(false));
    };
    session.terminate();
    if timeout == 0 || session.pid == env.catalog.backend_pid {
        return Ok(Datum::Bool(true));
    }
    let deadline = Instant::now() + Duration::from_millis(timeout as u64);
    while env.catalog.activity.get(session.pid).is_some() {
        if Instant::now() >= deadline {
            return Ok(Datum::Bool(false));
        }
        // The wait is canceled, timed out or ended like any statement.
        if let Some(interrupt) = env.interrupt {
            interrupt.check()?;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(Datum::Bool(true))
}
