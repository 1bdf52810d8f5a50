//! `rocklake serve`: opens a catalog and serves it over the PostgreSQL wire
//! protocol until interrupted.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rocklake::engine::EngineSessions;
use rocklake_store::{
    CatalogReplica, CatalogStorage, CatalogStore, ReplicaOptions, StoreLocation, StoreOptions,
};
use rocklake_wire::ServerConfig;

/// Settings of `rocklake serve`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Catalog location: a local directory (created if missing) or s3://bucket/prefix.
    #[arg(default_value = "./lake")]
    location: String,
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
    /// How often a read replica looks for new commits, in milliseconds.
    #[arg(long, default_value_t = 100, requires = "read_only")]
    poll_ms: u64,
    #[command(flatten)]
    security: crate::security::SecurityArgs,
}

/// Resolves when the process gets Ctrl-C or SIGTERM.
async fn shutdown_signal() {
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
    let security = args.security.configure(args.listen)?;
    let location = StoreLocation::parse(&args.location)?;
    location.check_reachable().await?;
    let catalog = if args.read_only {
        let options = ReplicaOptions {
            poll_interval: Duration::from_millis(args.poll_ms),
        };
        Catalog::Replica(
            CatalogReplica::open(&location, options)
                .await
                .with_context(|| format!("opening catalog {location} read-only"))?,
        )
    } else {
        Catalog::Writer(
            CatalogStore::open(&location, StoreOptions::default())
                .await
                .with_context(|| format!("opening catalog {location}"))?,
        )
    };
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let (role, storage) = match &catalog {
        Catalog::Writer(store) => (
            format!("writer epoch {}", store.epoch()),
            CatalogStorage::new(store.clone()),
        ),
        Catalog::Replica(replica) => (
            "read-only replica".to_string(),
            CatalogStorage::replica(replica.clone()),
        ),
    };
    eprintln!(
        "rocklake: serving catalog {location} ({role}) on {}",
        listener.local_addr()?
    );
    let sessions = Arc::new(EngineSessions::new(Arc::new(storage)));
    let config = ServerConfig {
        max_sessions: args.max_sessions,
        auth: security.auth,
        tls: security.tls,
        ..ServerConfig::default()
    };
    rocklake_wire::serve_until(listener, sessions, config, shutdown_signal()).await?;
    eprintln!("rocklake: shutting down");
    match catalog {
        Catalog::Writer(store) => store.close().await?,
        Catalog::Replica(replica) => replica.close().await?,
    }
    Ok(())
}

/// The catalog a server serves.
enum Catalog {
    Writer(CatalogStore),
    Replica(CatalogReplica),
}
