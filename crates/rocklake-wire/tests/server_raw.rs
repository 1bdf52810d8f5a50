//! Byte-level protocol checks against the server with a raw client: message
//! sequences, COPY framing, ReadyForQuery states, error recovery.

mod common;

use common::{error_field, kind, start, RawClient};
use pgwire::messages::PgWireBackendMessage as M;
use rocklake_types::copy::binary::encode_stream;
use rocklake_types::datum::PgType;
use rocklake_wire::ServerConfig;

fn kinds(messages: &[M]) -> Vec<String> {
    messages.iter().map(kind).collect()
}

async fn ready_client(port: u16) -> RawClient {
    let mut client = RawClient::connect(port).await;
    client.until_ready().await;
    client
}

fn copy_types() -> Vec<PgType> {
    common::copy_columns()
        .into_iter()
        .map(|c| c.pg_type)
        .collect()
}

#[tokio::test]
async fn startup_reports_postgres_15_parameters() {
    let server = start(ServerConfig::default()).await;
    let mut client = RawClient::connect(server.port).await;
    let messages = client.until_ready().await;
    let seq = kinds(&messages);
    assert_eq!(seq.first().map(String::as_str), Some("R"));
    assert_eq!(seq.last().map(String::as_str), Some("ZI"));
    let key = messages.iter().find_map(|m| match m {
        M::BackendKeyData(k) => Some(k.pid),
        _ => None,
    });
    let session_pid = server.log.lock().unwrap().pids.first().copied();
    assert_eq!(
        key, session_pid,
        "BackendKeyData must carry the session's pid"
    );
    assert_eq!(server.log.lock().unwrap().databases, ["lake"]);
    let params: Vec<(String, String)> = messages
        .iter()
        .filter_map(|m| match m {
            M::ParameterStatus(p) => Some((p.name.clone(), p.value.clone())),
            _ => None,
        })
        .collect();
    for (name, value) in [
        ("server_version", "15.18"),
        ("server_encoding", "UTF8"),
        ("client_encoding", "UTF8"),
        ("DateStyle", "ISO, MDY"),
        ("integer_datetimes", "on"),
        ("TimeZone", "Etc/UTC"),
        ("standard_conforming_strings", "on"),
        ("session_authorization", "postgres"),
    ] {
        assert!(
            params.contains(&(name.to_string(), value.to_string())),
            "missing {name}={value} in {params:?}"
        );
    }
}

#[tokio::test]
async fn multi_statement_batch_in_one_execute() {
    let server = start(ServerConfig::default()).await;
    let mut client = ready_client(server.port).await;
    client.query("begin; select 1; insert; create").await;
    let seq = kinds(&client.until_ready().await);
    assert_eq!(
        seq,
        [
            "C:BEGIN",
            "T",
            "D",
            "C:SELECT 1",
            "C:INSERT 0 3",
            "N",
            "C:CREATE TABLE",
            "ZT"
        ]
    );
    assert_eq!(
        server.log.lock().unwrap().executed,
        ["begin; select 1; insert; create"]
    );
}

#[tokio::test]
async fn error_mid_batch_stops_and_reports_failed_transaction() {
    let server = start(ServerConfig::default()).await;
    let mut client = ready_client(server.port).await;
    client.query("begin; insert; fail; insert").await;
    let messages = client.until_ready().await;
    assert_eq!(kinds(&messages), ["C:BEGIN", "C:INSERT 0 3", "E", "ZE"]);
    let error = &messages[2];
    assert_eq!(error_field(error, b'S').as_deref(), Some("ERROR"));
    assert_eq!(error_field(error, b'V').as_deref(), Some("ERROR"));
    assert_eq!(error_field(error, b'C').as_deref(), Some("23505"));
    assert_eq!(
        error_field(error, b'M').as_deref(),
        Some("duplicate key value violates unique constraint \"ducklake_snapshot_pkey\"")
    );
    assert_eq!(
        error_field(error, b'D').as_deref(),
        Some("Key (snapshot_id)=(13) already exists.")
    );
    assert_eq!(error_field(error, b's').as_deref(), Some("public"));
    assert_eq!(
        error_field(error, b't').as_deref(),
        Some("ducklake_snapshot")
    );
    assert_eq!(
        error_field(error, b'n').as_deref(),
        Some("ducklake_snapshot_pkey")
    );

    client.query("select 1").await;
    let messages = client.until_ready().await;
    assert_eq!(kinds(&messages), ["E", "ZE"]);
    assert_eq!(error_field(&messages[0], b'C').as_deref(), Some("25P02"));
    client.query("ROLLBACK").await;
    assert_eq!(kinds(&client.until_ready().await), ["C:ROLLBACK", "ZI"]);
}

#[tokio::test]
async fn empty_queries() {
    let server = start(ServerConfig::default()).await;
    let mut client = ready_client(server.port).await;
    for sql in ["", "  ;  "] {
        client.query(sql).await;
        assert_eq!(kinds(&client.until_ready().await), ["I", "ZI"]);
    }
    assert!(server.log.lock().unwrap().executed.is_empty());
}

fn copy_payloads(messages: &[M]) -> Vec<Vec<u8>> {
    messages
        .iter()
        .filter_map(|m| match m {
            M::CopyData(d) => Some(d.data.to_vec()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn copy_out_framing_matches_postgres() {
    let server = start(ServerConfig::default()).await;
    let mut client = ready_client(server.port).await;
    client.query("copy out").await;
    let messages = client.until_ready().await;
    assert_eq!(
        kinds(&messages),
        ["H", "d", "d", "d", "c", "C:COPY 2", "ZI"]
    );
    match &messages[0] {
        M::CopyOutResponse(r) => {
            assert_eq!(r.format, 1);
            assert_eq!(r.column_formats, vec![1; 5]);
        }
        other => panic!("expected CopyOutResponse, got {other:?}"),
    }
    let payloads = copy_payloads(&messages);
    let whole = encode_stream(&copy_types(), &common::copy_rows()).unwrap();
    // Header + row 1, then row 2, then the trailer alone.
    assert!(payloads[0].starts_with(b"PGCOPY\n\xff\r\n\0"));
    assert_eq!(payloads[2], vec![0xFF, 0xFF]);
    assert_eq!(payloads.concat(), whole.to_vec());

    client.query("copy empty").await;
    let messages = client.until_ready().await;
    assert_eq!(kinds(&messages), ["H", "d", "c", "C:COPY 0", "ZI"]);
    let payloads = copy_payloads(&messages);
    assert_eq!(payloads[0].len(), 21);
    assert_eq!(&payloads[0][19..], &[0xFF, 0xFF]);
}

#[tokio::test]
async fn copy_out_row_that_cannot_be_encoded_ends_with_error() {
    let server = start(ServerConfig::default()).await;
    let mut client = ready_client(server.port).await;
    client.query("bad row").await;
    let messages = client.until_ready().await;
    assert_eq!(kinds(&messages), ["H", "d", "E", "ZI"]);
    assert_eq!(error_field(&messages[2], b'C').as_deref(), Some("XX000"));
}

#[tokio::test]
async fn copy_in_as_duckdb_sends_it() {
    let server = start(ServerConfig::default()).await;
    let mut client = ready_client(server.port).await;
    client.query("copy in").await;
    let response = client.recv().await.unwrap();
    match &response {
        M::CopyInResponse(r) => {
            assert_eq!(r.format, 1);
            assert_eq!(r.column_formats, vec![1; 5]);
        }
        other => panic!("expected CopyInResponse, got {other:?}"),
    }
    let stream = encode_stream(&copy_types(), &common::copy_rows()).unwrap();
    let (header, rest) = stream.split_at(19);
    let (tuples, trailer) = rest.split_at(rest.len() - 2);
    for part in [header, tuples, trailer] {
        client.send(b'd', part).await;
    }
    client.send(b'c', b"").await;
    assert_eq!(kinds(&client.until_ready().await), ["C:COPY 2", "ZI"]);
    assert_eq!(server.log.lock().unwrap().copied, common::copy_rows());
}

#[tokio::test]
async fn copy_in_fail_and_bad_data() {
    let server = start(ServerConfig::default()).await;
    let mut client = ready_client(server.port).await;

    client.query("copy in").await;
    assert_eq!(kind(&client.recv().await.unwrap()), "G");
    client.send(b'f', b"client gave up\0").await;
    let messages = client.until_ready().await;
    assert_eq!(kinds(&messages), ["E", "ZI"]);
    assert_eq!(error_field(&messages[0], b'C').as_deref(), Some("57014"));
    assert_eq!(
        error_field(&messages[0], b'M').as_deref(),
        Some("COPY from stdin failed: client gave up")
    );

    // Malformed data is reported at once; the client's remaining CopyData and
    // CopyDone are ignored.
    client.query("begin; copy in").await;
    assert_eq!(kinds(&[client.recv().await.unwrap()]), ["C:BEGIN"]);
    assert_eq!(kind(&client.recv().await.unwrap()), "G");
    client.send(b'd', b"PGCOPY\nNOPE").await;
    let messages = client.until_ready().await;
    assert_eq!(kinds(&messages), ["E", "ZE"]);
    assert_eq!(error_field(&messages[0], b'C').as_deref(), Some("22P04"));
    client.send(b'd', b"more").await;
    client.send(b'c', b"").await;
    client.query("rollback").await;
    assert_eq!(kinds(&client.until_ready().await), ["C:ROLLBACK", "ZI"]);
    assert_eq!(server.log.lock().unwrap().aborts, 2);
}

fn parse_body(name: &str, sql: &str) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(name.as_bytes());
    body.push(0);
    body.extend_from_slice(sql.as_bytes());
    body.push(0);
    body.extend_from_slice(&[0, 0]);
    body
}

#[tokio::test]
async fn parse_then_describe_like_pqprepare() {
    let server = start(ServerConfig::default()).await;
    let mut client = ready_client(server.port).await;
    client.send(b'P', &parse_body("", "select types")).await;
    client.send(b'S', b"").await;
    assert_eq!(kinds(&client.until_ready().await), ["1", "ZI"]);
    client.send(b'D', b"S\0").await;
    client.send(b'S', b"").await;
    let messages = client.until_ready().await;
    assert_eq!(kinds(&messages), ["t", "T", "ZI"]);
    match (&messages[0], &messages[1]) {
        (M::ParameterDescription(p), M::RowDescription(r)) => {
            assert!(p.types.is_empty());
            let names: Vec<&str> = r.fields.iter().map(|f| f.name.as_str()).collect();
            assert_eq!(
                names,
                ["i4", "i8", "b", "t", "f8", "by", "k", "n", "nothing"]
            );
            let oids: Vec<u32> = r.fields.iter().map(|f| f.type_id).collect();
            assert_eq!(oids, [23, 20, 16, 25, 701, 17, 1005, 1700, 25]);
            assert_eq!(r.fields[7].type_modifier, (9 << 16 | 2) + 4);
        }
        other => panic!("unexpected {other:?}"),
    }
    // A statement without rows describes as NoData; the unnamed statement
    // is simply replaced.
    client.send(b'P', &parse_body("", "insert")).await;
    client.send(b'D', b"S\0").await;
    client.send(b'S', b"").await;
    assert_eq!(kinds(&client.until_ready().await), ["1", "t", "n", "ZI"]);
}

#[tokio::test]
async fn extended_errors_skip_until_sync() {
    let server = start(ServerConfig::default()).await;
    let mut client = ready_client(server.port).await;
    client.send(b'P', &parse_body("", "bogus")).await;
    client.send(b'D', b"S\0").await;
    client.send(b'S', b"").await;
    let messages = client.until_ready().await;
    assert_eq!(kinds(&messages), ["E", "ZI"]);
    assert_eq!(error_field(&messages[0], b'C').as_deref(), Some("42601"));
    // Unknown statement.
    client.send(b'D', b"Snope\0").await;
    client.send(b'S', b"").await;
    let messages = client.until_ready().await;
    assert_eq!(error_field(&messages[0], b'C').as_deref(), Some("26000"));
}

#[tokio::test]
async fn bind_execute_runs_through_the_session() {
    let server = start(ServerConfig::default()).await;
    let mut client = ready_client(server.port).await;
    client.send(b'P', &parse_body("s1", "select 1")).await;
    // Bind portal "" to s1: no params, all results text.
    client.send(b'B', b"\0s1\0\0\0\0\0\0\0").await;
    client.send(b'D', b"P\0").await;
    client.send(b'E', b"\0\0\0\0\0").await;
    client.send(b'S', b"").await;
    let seq = kinds(&client.until_ready().await);
    assert_eq!(seq, ["1", "2", "T", "D", "C:SELECT 1", "ZI"]);
    // Close the statement: a later Bind to it fails.
    client.send(b'C', b"Ss1\0").await;
    client.send(b'B', b"\0s1\0\0\0\0\0\0\0").await;
    client.send(b'S', b"").await;
    let messages = client.until_ready().await;
    assert_eq!(kinds(&messages), ["3", "E", "ZI"]);
    assert_eq!(error_field(&messages[1], b'C').as_deref(), Some("26000"));

    // A session that takes no parameters (the trait's default) refuses them
    // cleanly at Execute, and the rest up to Sync is skipped.
    client
        .send(b'P', &{
            let mut body = parse_body("", "select 1");
            body.truncate(body.len() - 2);
            body.extend_from_slice(&[0, 1, 0, 0, 0, 23]);
            body
        })
        .await;
    client.send(b'B', b"\0\0\0\0\0\x01\0\0\0\x011\0\0").await;
    client.send(b'E', b"\0\0\0\0\0").await;
    client.send(b'S', b"").await;
    let messages = client.until_ready().await;
    assert_eq!(kinds(&messages), ["1", "2", "E", "ZI"]);
    assert_eq!(error_field(&messages[2], b'C').as_deref(), Some("0A000"));
}

#[tokio::test]
async fn terminate_closes_and_garbage_is_fatal() {
    let server = start(ServerConfig::default()).await;
    let mut client = ready_client(server.port).await;
    client.send(b'X', b"").await;
    assert!(client.recv().await.is_none());

    let mut client = ready_client(server.port).await;
    client.send(b'!', b"").await;
    let error = client.recv().await.unwrap();
    assert_eq!(error_field(&error, b'S').as_deref(), Some("FATAL"));
    assert_eq!(error_field(&error, b'C').as_deref(), Some("08P01"));
    assert!(client.recv().await.is_none());
    assert_eq!(client.pending(), 0);
}

#[tokio::test]
async fn max_sessions_refuses_extra_clients() {
    let config = ServerConfig {
        max_sessions: 1,
        ..ServerConfig::default()
    };
    let server = start(config).await;
    let first = ready_client(server.port).await;
    let mut second = RawClient::connect(server.port).await;
    let error = second.recv().await.unwrap();
    assert_eq!(error_field(&error, b'S').as_deref(), Some("FATAL"));
    assert_eq!(error_field(&error, b'C').as_deref(), Some("53300"));
    assert_eq!(
        error_field(&error, b'M').as_deref(),
        Some("sorry, too many clients already")
    );
    assert!(second.recv().await.is_none());
    // The slot is released when the first client leaves.
    drop(first);
    let mut third = None;
    for _ in 0..50 {
        let mut client = RawClient::connect(server.port).await;
        if matches!(client.recv().await, Some(M::Authentication(_))) {
            third = Some(client);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(third.is_some(), "slot was not released");
}

#[tokio::test]
async fn silent_clients_are_dropped_after_the_startup_timeout() {
    use tokio::io::AsyncReadExt;
    let config = ServerConfig {
        startup_timeout: std::time::Duration::from_millis(200),
        ..ServerConfig::default()
    };
    let server = start(config).await;
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    let mut buf = [0u8; 1];
    let read = tokio::time::timeout(std::time::Duration::from_secs(5), stream.read(&mut buf))
        .await
        .expect("server kept a silent client open");
    assert_eq!(read.unwrap(), 0);
}

#[tokio::test]
async fn cancel_request_closes_quietly_and_startup_needs_a_user() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = start(ServerConfig::default()).await;
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    // CancelRequest: length 16, code 80877102, pid, key.
    let mut packet = vec![0, 0, 0, 16, 0x04, 0xD2, 0x16, 0x2E];
    packet.extend_from_slice(&[0, 0, 0x10, 0x92, 0, 0, 0, 1]);
    stream.write_all(&packet).await.unwrap();
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty());

    // StartupMessage without `user`.
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    let mut body = 196_608i32.to_be_bytes().to_vec();
    body.extend_from_slice(b"database\0lake\0\0");
    let mut packet = (4 + body.len() as i32).to_be_bytes().to_vec();
    packet.extend_from_slice(&body);
    stream.write_all(&packet).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    assert_eq!(answer.first(), Some(&b'E'));
    let text = String::from_utf8_lossy(&answer);
    assert!(text.contains("SFATAL") && text.contains("C28000"), "{text}");
}

#[tokio::test]
async fn newer_protocol_minor_is_negotiated_down() {
    let server = start(ServerConfig::default()).await;
    let params = b"user\0postgres\0_pq_.test_option\0x\0\0";
    let mut client = RawClient::connect_with(server.port, 196_610, params).await;
    let messages = client.until_ready().await;
    match &messages[0] {
        M::NegotiateProtocolVersion(n) => {
            assert_eq!(n.newest_minor_protocol, 0);
            assert_eq!(n.unsupported_options, ["_pq_.test_option"]);
        }
        other => panic!("expected NegotiateProtocolVersion, got {other:?}"),
    }
    assert_eq!(kind(&messages[1]), "R");
    // The database defaults to the user name.
    assert_eq!(server.log.lock().unwrap().databases, ["postgres"]);
}
