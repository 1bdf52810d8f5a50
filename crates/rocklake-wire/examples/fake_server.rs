//! Runs the wire server with the scripted fake session of the tests, for trying
//! clients by hand: `cargo run -p rocklake-wire --example fake_server -- 55432`
//! then `psql -h 127.0.0.1 -p 55432 -U postgres -c 'select types'`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Duration;

#[tokio::main]
async fn main() {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(55432);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("bind");
    drop(listener);
    let server = common::start_on(port, rocklake_wire::ServerConfig::default()).await;
    println!("fake RockLake wire server on 127.0.0.1:{}", server.port);
    // Bounded lifetime: this is a development aid, not a service.
    tokio::time::sleep(Duration::from_secs(600)).await;
}
