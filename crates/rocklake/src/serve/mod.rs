//! `rocklake serve`: opens every database under a root and serves them over
//! the PostgreSQL wire protocol until interrupted, as the writer (holding
//! the root's writer lease), a standby that takes over when the writer is
//! gone ([`takeover`]), or a read replica.

mod takeover;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use rocklake::engine::{EngineSessions, SessionLimits};
use rocklake_sql::Roles;

use crate::observe::{ServerRole, ServingState};
use rocklake_store::lease::{self, LeaseOptions, WhenHeld};
use rocklake_store::{LakeRoot, ReplicaOptions, ServedRoles, StoreLocation, StoreOptions};
use rocklake_wire::{AccessRules, ScramVerifier, ServerConfig, VerifierLookup};

/// The roles served now, where password lookups find them.
type RolesCell = Arc<Mutex<Option<Arc<ServedRoles>>>>;

/// Settings of `rocklake serve`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Root holding the databases: a local directory (created if missing)
    /// or s3://bucket/prefix. Each database is its own catalog under it. A
    /// location an earlier release wrote (one catalog) becomes database
    /// --default-database when the writer starts.
    #[arg(default_value = "./lake")]
    location: String,
    /// Database created on first start when the root has none of that name
    /// (the one clients name in `dbname=`).
    #[arg(long, default_value = rocklake_store::served::DEFAULT_DATABASE)]
    default_database: String,
    /// Do not create --default-database (databases come from CREATE DATABASE).
    #[arg(long)]
    no_default_database: bool,
    /// Limits users to databases: a file of `DATABASE USER` rules (each a
    /// comma-separated list or `all`, as the columns of pg_hba.conf); a
    /// connection no rule matches is refused with FATAL 28000.
    #[arg(long, value_name = "FILE")]
    database_access: Option<std::path::PathBuf>,
    /// Serve Prometheus metrics at http://ADDR/metrics, with /healthz
    /// (liveness) and /readyz (every catalog open, unfenced and readable).
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<SocketAddr>,
    /// Address to listen on. A non-loopback address needs password
    /// authentication and TLS (see below).
    #[arg(long, default_value = "127.0.0.1:5432")]
    listen: SocketAddr,
    /// Most client connections served at once.
    #[arg(long, default_value_t = 100)]
    max_sessions: usize,
    /// Serve a read replica: follow the catalog another `rocklake serve`
    /// writes, without fencing it. Reads (including time travel) work; writes
    /// fail with SQLSTATE 25006. Any number of replicas may run.
    #[arg(long)]
    read_only: bool,
    /// Serve a standby: reads as a replica while the writer lives, and
    /// become the writer of every database of the root once the writer is
    /// gone (its heartbeat unchanged for --takeover-after, or its process on
    /// this host exited). Of several standbys one takes over. A writer that
    /// loses the lease becomes a standby again.
    #[arg(long, conflicts_with = "read_only")]
    standby: bool,
    /// How long the writer's heartbeat may stay unchanged before a standby
    /// takes over; the writer stops committing after three quarters of it
    /// without a heartbeat.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    takeover_after: Duration,
    /// Start as the writer even while another writer holds the root's
    /// lease: fences it at once (a planned switchover). Without it a writer
    /// refuses to start next to a live one.
    #[arg(long, conflicts_with_all = ["read_only", "standby"])]
    take_over: bool,
    /// Keep about this much history in every lake: on a schedule the
    /// writer advances each lake's retention floor to the snapshot that was
    /// current this long ago (never past a tagged one) and excises what no
    /// later snapshot sees, so catalogs stay bounded without `gc`. A lake
    /// may set its own with `CALL rocklake_set_retention('7d' | 'off')`.
    /// E.g. `30d`; none by default.
    #[arg(long, value_parser = parse_duration)]
    retain: Option<Duration>,
    /// How often the writer applies retention (--retain, and lakes' own)
    /// and drops inlined tables no snapshot can read (hygiene).
    #[arg(long, default_value = "10min", value_parser = parse_duration)]
    retention_every: Duration,
    /// How often a read replica or standby looks for new commits, in
    /// milliseconds.
    #[arg(long, default_value_t = 100)]
    poll_ms: u64,
    /// Acknowledge commits of catalogs in a local directory once SlateDB has
    /// written them itself (a new WAL file each), not from the commit
    /// journal (`journal/` next to the catalog: one write and sync into a
    /// file allocated beforehand; see docs/storage.md).
    #[arg(long, conflicts_with = "read_only")]
    no_commit_journal: bool,
    /// Default `statement_timeout` of every session (sessions may SET it):
    /// a statement running longer is canceled with SQLSTATE 57014. `0` for
    /// none; units `ms`, `s`, `min`, `h` (milliseconds without one).
    #[arg(long, default_value = "0", value_parser = parse_duration)]
    statement_timeout: Duration,
    /// Default `idle_in_transaction_session_timeout`: a session idle inside
    /// a transaction block longer is ended (FATAL 25P03). `0` for none.
    #[arg(long, default_value = "0", value_parser = parse_duration)]
    idle_in_transaction_timeout: Duration,
    /// Memory one statement may hold in rows it keeps (joins' inner sides,
    /// sorts, groups, DISTINCT, subqueries); past it the statement fails
    /// with SQLSTATE 53200. E.g. `256MiB`, `1GiB`.
    #[arg(long, default_value = "256MiB", value_parser = parse_bytes)]
    statement_memory_limit: usize,
    /// Memory for whole-table binary COPY results kept encoded: a repeated
    /// `COPY (SELECT columns FROM table) TO STDOUT (FORMAT binary)` of rows
    /// no commit changed since (DuckDB 2.0's catalog reads) is answered
    /// with the tuples encoded the first time. Shared by every database;
    /// a result over half of it is not kept. `0` turns it off.
    #[arg(long, default_value = "256MiB", value_parser = parse_bytes)]
    copy_cache_size: usize,
    /// Largest message a client may send (a query string, a COPY chunk);
    /// a larger one ends the connection (FATAL 54000).
    #[arg(long, default_value = "256MiB", value_parser = parse_bytes)]
    max_message_bytes: usize,
    /// How long a commit waits for storage (a full disk, an object store
    /// that does not answer) before it fails with SQLSTATE 53100 or 58030;
    /// also how long shutdown waits to flush each catalog.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    storage_timeout: Duration,
    /// On SIGTERM or SIGINT: how long running statements may finish before
    /// they are canceled (a second signal exits at once).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    shutdown_grace: Duration,
    #[command(flatten)]
    security: crate::security::SecurityArgs,
    #[command(flatten)]
    catalog_keys: crate::catalog_key::CatalogKeyArgs,
}

/// A duration as `rocklake serve` takes it: a number with an optional unit
/// (`ms`, `s`, `min`, `h`, `d`; milliseconds without one).
fn parse_duration(text: &str) -> Result<Duration, String> {
    rocklake_types::settings::parse_duration(text)
        .ok_or_else(|| format!("{text:?} is not a duration (e.g. 500ms, 30s, 5min)"))
}

/// A size in bytes: a number with an optional unit (`kB`, `KiB`, `MB`,
/// `MiB`, `GB`, `GiB`; bytes without one).
fn parse_bytes(text: &str) -> Result<usize, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let number: usize = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 256MiB)"))?;
    let factor: usize = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" | "kib" | "k" => 1 << 10,
        "mb" | "mib" | "m" => 1 << 20,
        "gb" | "gib" | "g" => 1 << 30,
        other => return Err(format!("unknown size unit {other:?} in {text:?}")),
    };
    number
        .checked_mul(factor)
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// Resolves when the process gets Ctrl-C or SIGTERM. A second signal after
/// that exits the process at once.
async fn shutdown_signal() {
    wait_for_signal().await;
    tokio::spawn(async {
        wait_for_signal().await;
        eprintln!("rocklake: second signal, exiting at once");
        std::process::exit(130);
    });
}

/// Resolves at the next Ctrl-C or SIGTERM.
async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("install SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

/// Runs the server.
pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    // Roles' own passwords (CREATE ROLE ... PASSWORD) are looked up once the
    // roles are open; a role that may not log in authenticates, then is
    // refused (FATAL 28000), as in PostgreSQL.
    let roles_cell: RolesCell = Arc::default();
    let lookup: VerifierLookup = {
        let cell = roles_cell.clone();
        Arc::new(move |user: &str| {
            let catalog = cell
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()?
                .current();
            let role = catalog.role(user)?;
            ScramVerifier::parse(role.verifier.as_deref()?)
        })
    };
    let security = args.security.configure(args.listen, Some(lookup))?;
    rocklake_types::ident::check_name(&args.default_database, "--default-database")
        .map_err(|e| anyhow::anyhow!(e.message))?;
    let access = match &args.database_access {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let rules = AccessRules::parse(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            Some(Arc::new(rules))
        }
        None => None,
    };
    // The port first: a server that cannot listen must not open (and so
    // fence) the catalogs another server is serving.
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let metrics_listener = match args.metrics_listen {
        Some(listen) => Some(crate::observe::bind(listen).await?),
        None => None,
    };
    let location = StoreLocation::parse(&args.location)?;
    location.check_reachable().await?;
    let keys = args.catalog_keys.keys()?;
    let lake_root = LakeRoot::open(location.clone())?;
    if let Some(command) = lake_root
        .unfinished_work(rocklake_store::Work::Root)
        .await?
    {
        anyhow::bail!(
            "{location} is incomplete: an interrupted `rocklake {command}` left it; run that command again (it starts over)"
        );
    }
    if args.takeover_after < Duration::from_millis(200) {
        anyhow::bail!("--takeover-after must be at least 200ms");
    }
    let opener = takeover::Opener {
        lake_root: lake_root.clone(),
        writer: StoreOptions {
            keys: keys.clone(),
            commit_journal: !args.no_commit_journal,
            storage_timeout: args.storage_timeout,
            ..StoreOptions::default()
        },
        replica: ReplicaOptions {
            poll_interval: Duration::from_millis(args.poll_ms),
            keys,
        },
        default_database: (!args.no_default_database).then(|| args.default_database.clone()),
        enforced: !matches!(security.auth, rocklake_wire::AuthMethod::Trust),
        declared: security.declared.clone(),
        verifier: Arc::new(|password: &str| ScramVerifier::new(password).to_string()),
        lease: LeaseOptions {
            takeover_after: args.takeover_after,
            address: format!("rocklake serve on {}", listener.local_addr()?),
        },
        follow_every: Duration::from_millis((args.poll_ms * 10).max(1000)),
    };
    // Keys are checked first: a missing or wrong key changes nothing, not
    // even the lease.
    if !args.read_only {
        rocklake_store::served::check_keys(&lake_root, opener.writer.keys.as_ref()).await?;
    }
    // A writer claims the lease before it opens (and so fences) anything; a
    // standby becomes the writer at once when nobody holds the lease.
    let lease = if args.read_only {
        None
    } else if args.standby {
        lease::claim_if_free(&lake_root, &opener.lease).await?
    } else {
        let when_held = if args.take_over {
            WhenHeld::TakeOver
        } else {
            WhenHeld::Refuse
        };
        Some(lease::acquire(&lake_root, &opener.lease, when_held).await?)
    };
    let opened = match &lease {
        Some(held) => opener.writer(held.gate()).await?,
        None if args.standby => opener.reader(ServerRole::Standby).await?,
        None => opener.reader(ServerRole::Replica).await?,
    };
    *roles_cell.lock().unwrap_or_else(|e| e.into_inner()) = Some(opened.roles.clone());
    eprintln!(
        "rocklake: serving {location} ({}{}; databases: {}) on {}",
        opened.role.name(),
        lease
            .as_ref()
            .map(|held| format!(", lease term {}", held.term()))
            .unwrap_or_default(),
        opened.root.names().join(", "),
        listener.local_addr()?
    );
    let state = Arc::new(ServingState::default());
    state.set(opened.role, &opened.root);
    if let Some(listener) = metrics_listener {
        let bound = crate::observe::start(listener, state.clone())?;
        eprintln!("rocklake: status page at http://{bound}/ (metrics at /metrics, health at /healthz and /readyz)");
    }
    rocklake_sql::EncodedResults::shared().set_capacity(args.copy_cache_size);
    let limits = SessionLimits {
        statement_memory: Some(args.statement_memory_limit),
        statement_timeout: (!args.statement_timeout.is_zero()).then_some(args.statement_timeout),
        idle_in_transaction_timeout: (!args.idle_in_transaction_timeout.is_zero())
            .then_some(args.idle_in_transaction_timeout),
        max_connections: Some(args.max_sessions),
    };
    let sessions = Arc::new(
        EngineSessions::served(
            opened.root.clone(),
            opened.role != ServerRole::Writer,
            opened.roles.clone(),
        )
        .with_limits(limits),
    );
    state.set_board(sessions.board());
    let (exit, mut exit_requested) = tokio::sync::watch::channel(None::<String>);
    let keeper = Arc::new(takeover::RoleKeeper {
        opener,
        sessions: sessions.clone(),
        state,
        standby: args.standby,
        current: std::sync::Mutex::new(Arc::new(opened)),
        exit,
        storage_timeout: args.storage_timeout,
        roles_cell: roles_cell.clone(),
    });
    if !args.read_only {
        takeover::apply_retention_on_schedule(&keeper, args.retain, args.retention_every);
    }
    let (stop_roles, roles_stopped) = tokio::sync::watch::channel(false);
    let keeping = (!args.read_only).then(|| tokio::spawn(keeper.clone().run(lease, roles_stopped)));
    let config = ServerConfig {
        max_sessions: args.max_sessions,
        auth: security.auth,
        tls: security.tls,
        session_stack_bytes: rocklake_sql::parse::SESSION_STACK_BYTES,
        max_message_bytes: args.max_message_bytes,
        shutdown_grace: args.shutdown_grace,
        access,
        ..ServerConfig::default()
    };
    let stop = async move {
        tokio::select! {
            _ = shutdown_signal() => {}
            _ = exit_requested.wait_for(Option::is_some) => {}
        }
    };
    rocklake_wire::serve_until(listener, sessions.clone(), config, stop).await?;
    let _ = stop_roles.send(true);
    let still_held = match keeping {
        Some(keeping) => keeping.await.ok().flatten(),
        None => None,
    };
    if let Some(reason) = keeper.exit.borrow().clone() {
        anyhow::bail!("{reason}; exiting (every commit it acknowledged is in the catalog)");
    }
    eprintln!("rocklake: sessions ended; making the catalogs durable and closing them");
    // Acknowledged commits are durable already (in storage, or in the
    // commit journal a restart replays): a catalog whose storage does not
    // answer is left after the storage timeout rather than waited for.
    let root = keeper.current().root.clone();
    drop(sessions);
    let unwritten = root.close_within(args.storage_timeout).await;
    if !unwritten.is_empty() {
        for problem in &unwritten {
            eprintln!("rocklake: {problem}");
        }
        anyhow::bail!(
            "{} catalogs could not be flushed before exiting; every acknowledged commit is durable",
            unwritten.len()
        );
    }
    if let Some(held) = still_held {
        // The next writer or standby claims a released lease at once.
        held.release().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_read_with_their_units() {
        assert_eq!(parse_bytes("256MiB"), Ok(256 << 20));
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert!(parse_bytes("lots").is_err());
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(parse_duration("soon").is_err());
    }
}
