//! Runs the wire server with the real SQL engine over in-memory storage, for
//! trying clients (psql, DuckDB) by hand:
//! `cargo run -p rocklake --example memory_server -- 55433`.
//! Stops by itself after ten minutes.

use std::sync::Arc;
use std::time::Duration;

use rocklake::engine::EngineSessions;
use rocklake_sql::MemoryStorage;
use rocklake_wire::ServerConfig;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(55433);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("RockLake wire server (in-memory engine) on 127.0.0.1:{port}");
    let factory = Arc::new(EngineSessions::new(Arc::new(MemoryStorage::new())));
    let stop = tokio::time::sleep(Duration::from_secs(600));
    rocklake_wire::serve_until(listener, factory, ServerConfig::default(), stop).await
}
