//! `rocklake serve`: opens a catalog and serves it over the PostgreSQL wire
//! protocol until interrupted.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use rocklake_store::{CatalogStore, StoreLocation, StoreOptions, StoreStorage};
use rocklake_wire::{EngineSessions, ServerConfig};

/// Settings of `rocklake serve`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Catalog location: a local directory (created if missing) or s3://bucket/prefix.
    #[arg(default_value = "./lake")]
    location: String,
    /// Address to listen on. Only loopback addresses are accepted until password
    /// authentication and TLS are available.
    #[arg(long, default_value = "127.0.0.1:5432")]
    listen: SocketAddr,
    /// Most client connections served at once.
    #[arg(long, default_value_t = 100)]
    max_sessions: usize,
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
    if !args.listen.ip().is_loopback() {
        anyhow::bail!(
            "refusing to listen on {}: RockLake has no password authentication or TLS yet, so it only listens on loopback addresses",
            args.listen
        );
    }
    let location = StoreLocation::parse(&args.location)?;
    location.check_reachable().await?;
    let store = CatalogStore::open(&location, StoreOptions::default())
        .await
        .with_context(|| format!("opening catalog {location}"))?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    eprintln!(
        "rocklake: serving catalog {location} (writer epoch {}) on {}",
        store.epoch(),
        listener.local_addr()?
    );
    let sessions = Arc::new(EngineSessions::new(Arc::new(StoreStorage::new(
        store.clone(),
    ))));
    let config = ServerConfig {
        max_sessions: args.max_sessions,
        ..ServerConfig::default()
    };
    rocklake_wire::serve_until(listener, sessions, config, shutdown_signal()).await?;
    eprintln!("rocklake: shutting down");
    store.close().await?;
    Ok(())
}
