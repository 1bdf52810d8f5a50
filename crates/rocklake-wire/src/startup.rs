//! The connection start: SSL/GSS negotiation, the StartupMessage,
//! authentication, and the ParameterStatus / BackendKeyData that PostgreSQL 15
//! sends before the first ReadyForQuery.
//!
//! Each step is its own function so TLS (answer `S` to SSLRequest and wrap the
//! stream) and SCRAM (an [`AuthMethod`] variant with its exchange in
//! [`authenticate`]) can be added without touching query processing.

use bytes::BufMut;
use pgwire::messages::startup::{
    Authentication, BackendKeyData, NegotiateProtocolVersion, ParameterStatus, SecretKey,
};
use rocklake_sql::error::{codes, SqlError};
use rocklake_sql::output::TxStatus;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::backend::{self, Severity};
use crate::frontend::{ProtocolViolation, StartupPacket};
use crate::transport::{ConnectionError, Transport};

/// How clients prove who they are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AuthMethod {
    /// Everyone is let in (`AuthenticationOk` right away), as with
    /// PostgreSQL's `trust`.
    #[default]
    Trust,
}

/// What the client asked for in its StartupMessage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientParams {
    /// `user`.
    pub user: String,
    /// `database` (defaults to the user name, as in PostgreSQL).
    pub database: String,
    /// `application_name`, empty if not given.
    pub application_name: String,
    /// Minor protocol version the client requested.
    pub minor_version: u16,
    /// Protocol options (`_pq_.*`) the client asked for; none are supported.
    pub protocol_options: Vec<String>,
}

/// Outcome of the pre-authentication phase.
pub enum Handshake {
    /// A StartupMessage arrived.
    Startup(ClientParams),
    /// The client hung up, sent a CancelRequest, or was refused; nothing more
    /// to do on this connection.
    Done,
}

/// A FATAL error sent before closing.
pub fn send_fatal<S>(transport: &mut Transport<S>, code: &str, message: impl Into<String>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    backend::put_error(
        &mut transport.out,
        &SqlError::new(code, message),
        Severity::Fatal,
    );
}

/// Reads packets until a StartupMessage, refusing SSL and GSS encryption.
pub async fn negotiate<S>(transport: &mut Transport<S>) -> Result<Handshake, ConnectionError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    loop {
        let Some(packet) = transport.read_startup().await? else {
            return Ok(Handshake::Done);
        };
        match packet {
            StartupPacket::SslRequest | StartupPacket::GssEncRequest => {
                if transport.has_pending_input() {
                    // Bytes sent before our answer could be injected plaintext.
                    return Err(ProtocolViolation(
                        "received unencrypted data after SSL request".to_string(),
                    )
                    .into());
                }
                // TLS goes here: answer `S`, wrap the stream, continue.
                transport.out.put_u8(b'N');
                transport.flush().await?;
            }
            StartupPacket::Cancel { pid, .. } => {
                tracing::debug!(
                    pid,
                    "cancel request ignored (query cancellation is not supported)"
                );
                return Ok(Handshake::Done);
            }
            StartupPacket::Startup {
                major,
                minor,
                params,
            } => {
                if major != 3 {
                    send_fatal(
                        transport,
                        codes::FEATURE_NOT_SUPPORTED,
                        format!("unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0"),
                    );
                    return Ok(Handshake::Done);
                }
                let mut client = ClientParams {
                    minor_version: minor,
                    ..ClientParams::default()
                };
                for (name, value) in params {
                    match name.as_str() {
                        "user" => client.user = value,
                        "database" => client.database = value,
                        "application_name" => client.application_name = value,
                        _ if name.starts_with("_pq_.") => client.protocol_options.push(name),
                        _ => {}
                    }
                }
                if client.user.is_empty() {
                    send_fatal(
                        transport,
                        "28000",
                        "no PostgreSQL user name specified in startup packet",
                    );
                    return Ok(Handshake::Done);
                }
                if client.database.is_empty() {
                    client.database = client.user.clone();
                }
                return Ok(Handshake::Startup(client));
            }
        }
    }
}

/// Authenticates the client; `Ok(false)` if it was refused (the error is
/// already queued).
pub async fn authenticate<S>(
    transport: &mut Transport<S>,
    method: &AuthMethod,
    client: &ClientParams,
) -> Result<bool, ConnectionError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    if client.minor_version > 0 || !client.protocol_options.is_empty() {
        let message = NegotiateProtocolVersion::new(0, client.protocol_options.clone());
        let _ = backend::put(&mut transport.out, &message);
    }
    match method {
        AuthMethod::Trust => {
            let _ = backend::put(&mut transport.out, &Authentication::Ok);
            Ok(true)
        }
    }
}

/// Sends ParameterStatus like PostgreSQL 15, BackendKeyData and the first
/// ReadyForQuery.
pub async fn send_session_start<S>(
    transport: &mut Transport<S>,
    server_version: &str,
    client: &ClientParams,
    backend_key: (i32, i32),
) -> Result<(), ConnectionError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let params = [
        ("application_name", client.application_name.as_str()),
        ("client_encoding", "UTF8"),
        ("DateStyle", "ISO, MDY"),
        ("default_transaction_read_only", "off"),
        ("in_hot_standby", "off"),
        ("integer_datetimes", "on"),
        ("IntervalStyle", "postgres"),
        ("is_superuser", "on"),
        ("server_encoding", "UTF8"),
        ("server_version", server_version),
        ("session_authorization", client.user.as_str()),
        ("standard_conforming_strings", "on"),
        ("TimeZone", "UTC"),
    ];
    for (name, value) in params {
        let _ = backend::put(
            &mut transport.out,
            &ParameterStatus::new(name.to_string(), value.to_string()),
        );
    }
    let (pid, key) = backend_key;
    let _ = backend::put(
        &mut transport.out,
        &BackendKeyData::new(pid, SecretKey::I32(key)),
    );
    backend::put_ready(&mut transport.out, TxStatus::Idle);
    transport.flush().await
}
