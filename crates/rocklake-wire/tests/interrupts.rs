//! Interrupting sessions: CancelRequest with the BackendKeyData's secret
//! key, a client that vanishes mid-statement, graceful shutdown, a session
//! that panics, and the message size limit. The fake session's `wait`
//! statement runs until its session is interrupted.
//!
//! Timings are generous bounds that only detect a hang.

mod common;

use std::time::{Duration, Instant};

use common::{error_field, kind, start, RawClient};
use rocklake_wire::ServerConfig;

const HANG: Duration = Duration::from_secs(10);

/// Waits until the fake sessions recorded `count` interrupted statements.
async fn interrupted(server: &common::TestServer, count: usize) -> Vec<String> {
    let deadline = Instant::now() + HANG;
    loop {
        let log = server.log.lock().unwrap().interrupted.clone();
        if log.len() >= count || Instant::now() > deadline {
            return log;
        }
        drop(log);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_request_needs_the_secret_key_and_stops_the_statement() {
    let server = start(ServerConfig::default()).await;
    let mut client = RawClient::connect(server.port).await;
    let (pid, key) = RawClient::backend_key(&client.until_ready().await);
    client.query("wait").await;

    // A wrong key, or another process id, cancels nothing.
    RawClient::cancel(server.port, pid, key.wrapping_add(1)).await;
    RawClient::cancel(server.port, pid + 1, key).await;
    let early = client.recv_within(Duration::from_millis(500)).await;
    assert!(early.is_none(), "canceled without the key: {early:?}");

    let sent = Instant::now();
    RawClient::cancel(server.port, pid, key).await;
    let messages = client.until_ready().await;
    let took = sent.elapsed();
    assert!(took < HANG, "cancel took {took:?}");
    let error = messages.iter().find(|m| kind(m) == "E").expect("an error");
    assert_eq!(error_field(error, b'C').as_deref(), Some("57014"));
    assert_eq!(
        error_field(error, b'M').as_deref(),
        Some("canceling statement due to user request")
    );
    assert_eq!(kind(messages.last().unwrap()), "ZI");

    // The session goes on, and a cancel between statements is forgotten.
    RawClient::cancel(server.port, pid, key).await;
    client.query("select 1").await;
    let kinds: Vec<String> = client.until_ready().await.iter().map(kind).collect();
    assert_eq!(kinds, ["T", "D", "C:SELECT 1", "ZI"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_vanishes_stops_its_statement() {
    let server = start(ServerConfig::default()).await;
    let mut client = RawClient::connect(server.port).await;
    client.until_ready().await;
    client.query("wait").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(client);
    assert_eq!(interrupted(&server, 1).await, ["08006"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_session_ends_alone_with_xx000() {
    let server = start(ServerConfig::default()).await;
    let mut other = RawClient::connect(server.port).await;
    other.until_ready().await;

    let mut client = RawClient::connect(server.port).await;
    client.until_ready().await;
    client.query("panic").await;
    let mut messages = Vec::new();
    while let Some(message) = client.recv().await {
        messages.push(message);
    }
    let error = messages.iter().find(|m| kind(m) == "E").expect("an error");
    assert_eq!(error_field(error, b'C').as_deref(), Some("XX000"));
    assert_eq!(error_field(error, b'S').as_deref(), Some("FATAL"));

    let mut fresh = RawClient::connect(server.port).await;
    fresh.until_ready().await;
    for client in [&mut other, &mut fresh] {
        client.query("select 1").await;
        let kinds: Vec<String> = client.until_ready().await.iter().map(kind).collect();
        assert_eq!(kinds, ["T", "D", "C:SELECT 1", "ZI"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_idle_sessions_then_cancels_statements_after_the_grace() {
    let grace = Duration::from_millis(300);
    let server = start(ServerConfig {
        shutdown_grace: grace,
        ..ServerConfig::default()
    })
    .await;
    let port = server.port;
    let mut idle = RawClient::connect(port).await;
    idle.until_ready().await;
    let mut busy = RawClient::connect(port).await;
    busy.until_ready().await;
    busy.query("wait").await;
    tokio::time::sleep(Duration::from_millis(100)).await;

    let took = server.shut_down().await;
    assert!(took >= grace, "returned before the grace period: {took:?}");
    assert!(took < HANG, "shutdown took {took:?}");
    for (client, code) in [(&mut idle, "57P01"), (&mut busy, "57P01")] {
        let mut messages = Vec::new();
        while let Some(message) = client.recv().await {
            messages.push(message);
        }
        let error = messages.iter().find(|m| kind(m) == "E").expect("an error");
        assert_eq!(
            error_field(error, b'C').as_deref(),
            Some(code),
            "{messages:?}"
        );
    }
    assert!(
        tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err(),
        "still accepting connections"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_over_the_size_limit_ends_the_session_with_54000() {
    let server = start(ServerConfig {
        max_message_bytes: 1024,
        ..ServerConfig::default()
    })
    .await;
    let mut client = RawClient::connect(server.port).await;
    client.until_ready().await;
    client
        .query(&format!("select '{}'", "x".repeat(2000)))
        .await;
    let mut messages = Vec::new();
    while let Some(message) = client.recv().await {
        messages.push(message);
    }
    let error = messages.iter().find(|m| kind(m) == "E").expect("an error");
    assert_eq!(error_field(error, b'C').as_deref(), Some("54000"));
    assert_eq!(error_field(error, b'S').as_deref(), Some("FATAL"));

    let mut client = RawClient::connect(server.port).await;
    client.until_ready().await;
    client.query("select 1").await;
    assert_eq!(kind(client.until_ready().await.last().unwrap()), "ZI");
}
