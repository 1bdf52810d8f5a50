//! SCRAM-SHA-256 and TLS with a real client (tokio-postgres over rustls),
//! against certificates made at test time with rcgen.

mod common;

use std::sync::Arc;

use common::{error_field, start, RawClient};
use pgwire::messages::startup::Authentication;
use pgwire::messages::PgWireBackendMessage as M;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rocklake_wire::{AuthMethod, ScramUsers, ScramVerifier, ServerConfig, TlsConfig};
use rustls_pki_types::CertificateDer;
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};
use tokio_postgres_rustls::MakeRustlsConnect;

const USER: &str = "lake_user";
const PASSWORD: &str = "correct horse battery staple";

/// A CA and a server certificate for 127.0.0.1 and localhost signed by it:
/// (CA certificate, server certificate PEM, server key PEM).
fn certificates() -> (CertificateDer<'static>, String, String) {
    let mut ca_params = CertificateParams::new(Vec::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    (ca.der().clone(), cert.pem(), key.serialize_pem())
}

/// Users of the test servers: [`USER`] with [`PASSWORD`].
fn users() -> AuthMethod {
    let mut users = ScramUsers::new();
    users.insert(USER, ScramVerifier::new(PASSWORD));
    AuthMethod::ScramSha256(Arc::new(users))
}

/// A server with SCRAM and, if `tls` is given, TLS; returns its port and
/// the CA that signed its certificate.
async fn secure_server(tls: bool, require: bool) -> (common::TestServer, CertificateDer<'static>) {
    let (ca, cert, key) = certificates();
    let config = ServerConfig {
        auth: users(),
        tls: tls.then(|| TlsConfig::from_pem(cert.as_bytes(), key.as_bytes(), require).unwrap()),
        ..ServerConfig::default()
    };
    (start(config).await, ca)
}

fn tls_connector(ca: &CertificateDer<'static>) -> MakeRustlsConnect {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    MakeRustlsConnect::new(config)
}

fn conninfo(port: u16, user: &str, password: Option<&str>, sslmode: &str) -> String {
    let mut info = format!("host=127.0.0.1 port={port} user={user} dbname=lake sslmode={sslmode}");
    if let Some(password) = password {
        info.push_str(&format!(" password='{password}'"));
    }
    info
}

async fn connect_tls(
    port: u16,
    ca: &CertificateDer<'static>,
    user: &str,
    password: Option<&str>,
) -> Result<Client, tokio_postgres::Error> {
    let info = conninfo(port, user, password, "require");
    let (client, connection) = tokio_postgres::connect(&info, tls_connector(ca)).await?;
    tokio::spawn(connection);
    Ok(client)
}

async fn connect_plain(
    port: u16,
    user: &str,
    password: Option<&str>,
) -> Result<Client, tokio_postgres::Error> {
    let info = conninfo(port, user, password, "disable");
    let (client, connection) = tokio_postgres::connect(&info, NoTls).await?;
    tokio::spawn(connection);
    Ok(client)
}

async fn select_one(client: &Client) -> String {
    let messages = client.simple_query("select 1").await.unwrap();
    match &messages[1] {
        SimpleQueryMessage::Row(row) => row.get(0).unwrap().to_string(),
        other => panic!("expected a row, got {other:?}"),
    }
}

/// The SQLSTATE and message of a connection failure reported by the server.
fn server_error(error: &tokio_postgres::Error) -> (SqlState, String) {
    let db = error
        .as_db_error()
        .unwrap_or_else(|| panic!("expected a server error, got {error}"));
    assert_eq!(db.severity(), "FATAL");
    (db.code().clone(), db.message().to_string())
}

#[tokio::test]
async fn scram_over_tls_with_the_right_password() {
    let (server, ca) = secure_server(true, true).await;
    let client = connect_tls(server.port, &ca, USER, Some(PASSWORD))
        .await
        .unwrap();
    assert_eq!(select_one(&client).await, "1");
    // Several sessions at once, each with its own exchange.
    let second = connect_tls(server.port, &ca, USER, Some(PASSWORD))
        .await
        .unwrap();
    assert_eq!(select_one(&second).await, "1");
    assert_eq!(select_one(&client).await, "1");
}

#[tokio::test]
async fn wrong_password_and_unknown_user_get_28p01() {
    let (server, ca) = secure_server(true, true).await;
    let error = connect_tls(server.port, &ca, USER, Some("wrong"))
        .await
        .expect_err("a wrong password must be refused");
    assert_eq!(
        server_error(&error),
        (
            SqlState::INVALID_PASSWORD,
            format!("password authentication failed for user \"{USER}\"")
        )
    );
    let error = connect_tls(server.port, &ca, "nobody", Some(PASSWORD))
        .await
        .expect_err("an unknown user must be refused");
    assert_eq!(
        server_error(&error),
        (
            SqlState::INVALID_PASSWORD,
            "password authentication failed for user \"nobody\"".to_string()
        )
    );
    // The server is still fine.
    let client = connect_tls(server.port, &ca, USER, Some(PASSWORD))
        .await
        .unwrap();
    assert_eq!(select_one(&client).await, "1");
}

#[tokio::test]
async fn no_password_is_an_error() {
    let (server, ca) = secure_server(true, true).await;
    let error = connect_tls(server.port, &ca, USER, None)
        .await
        .expect_err("a client without a password must not get in");
    // tokio-postgres refuses locally ("invalid configuration: password
    // missing") once the server asks for SASL, and closes.
    assert!(format!("{error:?}").contains("password"), "{error:?}");
}

#[tokio::test]
async fn required_tls_refuses_plaintext_with_28000() {
    let (server, ca) = secure_server(true, true).await;
    let error = connect_plain(server.port, USER, Some(PASSWORD))
        .await
        .expect_err("plaintext must be refused");
    let (code, message) = server_error(&error);
    assert_eq!(code, SqlState::INVALID_AUTHORIZATION_SPECIFICATION);
    assert_eq!(
        message,
        format!(
            "no pg_hba.conf entry for host \"127.0.0.1\", user \"{USER}\", database \"lake\", no encryption"
        )
    );
    assert!(connect_tls(server.port, &ca, USER, Some(PASSWORD))
        .await
        .is_ok());
}

#[tokio::test]
async fn optional_tls_and_scram_without_tls() {
    // TLS offered but not required: both kinds of client get in.
    let (server, ca) = secure_server(true, false).await;
    let tls = connect_tls(server.port, &ca, USER, Some(PASSWORD))
        .await
        .unwrap();
    let plain = connect_plain(server.port, USER, Some(PASSWORD))
        .await
        .unwrap();
    assert_eq!(select_one(&tls).await, "1");
    assert_eq!(select_one(&plain).await, "1");
    // SCRAM alone (gs2 header `n,,`): right and wrong password.
    let (server, _) = secure_server(false, false).await;
    let client = connect_plain(server.port, USER, Some(PASSWORD))
        .await
        .unwrap();
    assert_eq!(select_one(&client).await, "1");
    let error = connect_plain(server.port, USER, Some("nope"))
        .await
        .err()
        .unwrap();
    assert_eq!(server_error(&error).0, SqlState::INVALID_PASSWORD);
}

#[tokio::test]
async fn verifier_in_postgres_format_is_accepted() {
    let verifier = ScramVerifier::new(PASSWORD).to_string();
    assert!(verifier.starts_with("SCRAM-SHA-256$4096:"));
    let mut users = ScramUsers::new();
    users.insert(USER, ScramVerifier::parse(&verifier).unwrap());
    let server = start(ServerConfig {
        auth: AuthMethod::ScramSha256(Arc::new(users)),
        ..ServerConfig::default()
    })
    .await;
    let client = connect_plain(server.port, USER, Some(PASSWORD))
        .await
        .unwrap();
    assert_eq!(select_one(&client).await, "1");
}

/// SASLInitialResponse with this mechanism and data.
fn initial_response(mechanism: &str, data: &[u8]) -> Vec<u8> {
    let mut body = mechanism.as_bytes().to_vec();
    body.push(0);
    body.extend_from_slice(&(data.len() as i32).to_be_bytes());
    body.extend_from_slice(data);
    body
}

#[tokio::test]
async fn malformed_sasl_messages_are_fatal_protocol_violations() {
    let (server, _) = secure_server(false, false).await;
    let cases: Vec<(u8, Vec<u8>, &str)> = vec![
        (
            b'p',
            initial_response("SCRAM-SHA-1", b"n,,n=,r=abc"),
            "08P01",
        ),
        (b'p', initial_response("SCRAM-SHA-256", b"garbage"), "08P01"),
        (b'p', b"SCRAM-SHA-256\0\0\0\0\x09n,,".to_vec(), "08P01"),
        (
            b'p',
            initial_response("SCRAM-SHA-256", b"n,a=x,n=,r=abc"),
            "0A000",
        ),
        (b'Q', b"select 1\0".to_vec(), "08P01"),
    ];
    for (kind, body, code) in cases {
        let mut client = RawClient::connect(server.port).await;
        assert!(matches!(
            client.recv().await,
            Some(M::Authentication(Authentication::SASL(m))) if m == ["SCRAM-SHA-256"]
        ));
        client.send(kind, &body).await;
        let error = client.recv().await.expect("an error, then close");
        assert_eq!(
            error_field(&error, b'C').as_deref(),
            Some(code),
            "{error:?}"
        );
        assert_eq!(error_field(&error, b'S').as_deref(), Some("FATAL"));
        assert!(client.recv().await.is_none(), "connection must close");
    }
}

#[tokio::test]
async fn oversized_sasl_message_is_refused_at_once() {
    // Before authentication a password message may not exceed PostgreSQL's
    // 65535-byte token limit: a client declaring 1 MiB is told off at once
    // instead of being buffered.
    let (server, _) = secure_server(false, false).await;
    let mut client = RawClient::connect(server.port).await;
    assert!(matches!(
        client.recv().await,
        Some(M::Authentication(Authentication::SASL(_)))
    ));
    client.send_raw(&[b'p', 0, 0x10, 0, 0]).await;
    let error = client.recv().await.expect("an error");
    assert_eq!(error_field(&error, b'C').as_deref(), Some("08P01"));
    assert!(client.recv().await.is_none());
}

#[tokio::test]
async fn stalled_authentication_is_cut_off_by_the_startup_timeout() {
    let config = ServerConfig {
        auth: users(),
        startup_timeout: std::time::Duration::from_millis(300),
        ..ServerConfig::default()
    };
    let server = start(config).await;
    let mut client = RawClient::connect(server.port).await;
    assert!(matches!(
        client.recv().await,
        Some(M::Authentication(Authentication::SASL(_)))
    ));
    // Say nothing more: the server hangs up (recv fails after 5 s).
    assert!(client.recv().await.is_none());
}

#[tokio::test]
async fn plaintext_sent_after_ssl_request_is_refused() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (server, _) = secure_server(true, false).await;
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    // SSLRequest and a StartupMessage in one write: the plaintext could have
    // been injected before the TLS handshake, so no `S` and a close.
    let mut bytes = vec![0, 0, 0, 8, 0x04, 0xD2, 0x16, 0x2F];
    bytes.extend_from_slice(&[0, 0, 0, 9, 0, 3, 0, 0, 0]);
    stream.write_all(&bytes).await.unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        stream.read_to_end(&mut answer),
    )
    .await
    .expect("the server must close");
    assert!(read.is_err() || answer.is_empty(), "{answer:?}");
}

#[tokio::test]
async fn ssl_request_inside_tls_is_refused() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (server, ca) = secure_server(true, true).await;
    let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    let ssl_request = [0, 0, 0, 8, 0x04, 0xD2, 0x16, 0x2F];
    tcp.write_all(&ssl_request).await.unwrap();
    let mut answer = [0u8; 1];
    tcp.read_exact(&mut answer).await.unwrap();
    assert_eq!(answer[0], b'S');
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = rustls_pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .unwrap();
    tls.write_all(&ssl_request).await.unwrap();
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        tls.read_to_end(&mut reply),
    )
    .await
    .expect("the server must answer and close");
    assert_eq!(reply.first(), Some(&b'E'), "{reply:?}");
    let text = String::from_utf8_lossy(&reply);
    assert!(text.contains("C0A000"), "{text}");
    assert!(
        text.contains("unsupported frontend protocol 1234.5679"),
        "{text}"
    );
}
