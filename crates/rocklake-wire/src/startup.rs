//! The connection start: SSL/GSS negotiation, the StartupMessage,
//! authentication, and the ParameterStatus / BackendKeyData that PostgreSQL 15
//! sends before the first ReadyForQuery.
//!
//! Each step is its own function: [`negotiate`] answers SSLRequest (`S` when
//! TLS is configured, the server then wraps the stream and negotiates again),
//! [`authenticate`] runs the [`AuthMethod`]'s exchange, and
//! [`send_session_start`] reports the session parameters.

use bytes::BufMut;
use pgwire::messages::startup::{
    Authentication, BackendKeyData, NegotiateProtocolVersion, ParameterStatus, SecretKey,
};
use rocklake_types::ident::truncate_name;
use rocklake_types::output::TxStatus;
use rocklake_types::settings::{self, SessionIdentity};
use rocklake_types::{SqlError, SqlState};
use tokio::io::{AsyncRead, AsyncWrite};

use std::sync::Arc;

use bytes::{Buf, Bytes};

use crate::backend::{self, Severity};
use crate::frontend::{FrontendMessage, ProtocolViolation, StartupPacket};
use crate::scram::{self, Exchange, ScramError, ScramUsers};
use crate::transport::{ConnectionError, Transport};

/// How clients prove who they are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AuthMethod {
    /// Everyone is let in (`AuthenticationOk` right away), as with
    /// PostgreSQL's `trust`.
    #[default]
    Trust,
    /// SCRAM-SHA-256 against these users' verifiers, as with PostgreSQL's
    /// `scram-sha-256`.
    ScramSha256(Arc<ScramUsers>),
}

/// Whether the connection can be, or already is, encrypted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encryption {
    /// No TLS configured: SSLRequest is answered `N`.
    Unavailable,
    /// TLS configured: SSLRequest is answered `S` and [`negotiate`] returns
    /// [`Handshake::StartTls`].
    Available,
    /// TLS is already running on this connection.
    Active,
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
    /// Settings the client started the session with (a startup parameter
    /// naming one a client may set, such as `TimeZone`, or `-c name=value`
    /// in `options`): the session's values before it changes them.
    pub settings: Vec<(String, String)>,
    /// Whether the server is a hot standby (from the server's configuration,
    /// not from the client): the session's `in_hot_standby`.
    pub hot_standby: bool,
}

impl ClientParams {
    /// Who the session belongs to, for the defaults of its settings.
    pub fn identity(&self) -> SessionIdentity {
        SessionIdentity {
            user: self.user.clone(),
            application_name: self.application_name.clone(),
            hot_standby: self.hot_standby,
        }
    }
}

/// Outcome of the pre-authentication phase.
pub enum Handshake {
    /// A StartupMessage arrived.
    Startup(ClientParams),
    /// The client asked for TLS and was answered `S`: the caller runs the
    /// TLS handshake on the stream and negotiates again over it.
    StartTls,
    /// The client asked to cancel the running statement of the session
    /// with this process id and secret key; the connection ends.
    Cancel {
        /// The session's process id (from its BackendKeyData).
        pid: i32,
        /// Its secret key.
        key: i32,
    },
    /// The client hung up or was refused; nothing more to do on this
    /// connection.
    Done,
}

/// A FATAL error sent before closing.
pub fn send_fatal<S>(transport: &mut Transport<S>, code: SqlState, message: impl Into<String>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    backend::put_error(
        &mut transport.out,
        &SqlError::new(code, message),
        Severity::Fatal,
    );
}

/// Reads packets until a StartupMessage or an SSLRequest that is accepted;
/// GSS encryption is always refused.
pub async fn negotiate<S>(
    transport: &mut Transport<S>,
    encryption: Encryption,
) -> Result<Handshake, ConnectionError>
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
                let is_ssl = packet == StartupPacket::SslRequest;
                if is_ssl && encryption == Encryption::Active {
                    // PostgreSQL reads a second SSLRequest as a startup
                    // packet of protocol 1234.5679.
                    send_fatal(
                        transport,
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0",
                    );
                    return Ok(Handshake::Done);
                }
                if is_ssl && encryption == Encryption::Available {
                    transport.out.put_u8(b'S');
                    transport.flush().await?;
                    return Ok(Handshake::StartTls);
                }
                transport.out.put_u8(b'N');
                transport.flush().await?;
            }
            StartupPacket::Cancel { pid, key } => return Ok(Handshake::Cancel { pid, key }),
            StartupPacket::Startup {
                major,
                minor,
                params,
            } => {
                if major != 3 {
                    send_fatal(
                        transport,
                        SqlState::FEATURE_NOT_SUPPORTED,
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
                        "options" => client.settings.extend(command_line_settings(&value)),
                        _ if name.starts_with("_pq_.") => client.protocol_options.push(name),
                        _ if settings::settable_at_startup(&name) => {
                            client.settings.push((name, value))
                        }
                        _ => {}
                    }
                }
                if client.user.is_empty() {
                    send_fatal(
                        transport,
                        SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
                        "no PostgreSQL user name specified in startup packet",
                    );
                    return Ok(Handshake::Done);
                }
                if client.database.is_empty() {
                    client.database = client.user.clone();
                }
                // As PostgreSQL: longer names than a name can hold are cut,
                // so they find the object their cut name names.
                client.database = truncate_name(&client.database).to_string();
                client.user = truncate_name(&client.user).to_string();
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
        AuthMethod::ScramSha256(users) => scram_exchange(transport, users, &client.user).await,
    }
}

/// The next SASL message of the client; `None` (with the error queued) if it
/// sent something else or hung up.
async fn read_sasl<S>(transport: &mut Transport<S>) -> Result<Option<Bytes>, ConnectionError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    match transport.read_auth_message().await {
        Ok(Some(FrontendMessage::Password(body))) => Ok(Some(body)),
        // A client that hangs up instead of answering (e.g. it has no
        // password) is not told anything, as in PostgreSQL.
        Ok(_) => Ok(None),
        Err(ConnectionError::Protocol(violation)) => {
            send_fatal(transport, SqlState::PROTOCOL_VIOLATION, violation.0);
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Splits SASLInitialResponse into mechanism and client-first-message.
fn parse_initial_response(mut body: Bytes) -> Option<(String, Bytes)> {
    let end = body.iter().position(|b| *b == 0)?;
    let mechanism = String::from_utf8(body.split_to(end).to_vec()).ok()?;
    body.advance(1);
    if body.remaining() < 4 {
        return None;
    }
    let len = body.get_i32();
    (usize::try_from(len).ok()? == body.remaining()).then_some((mechanism, body))
}

/// Runs SCRAM-SHA-256: AuthenticationSASL, SASLInitialResponse,
/// AuthenticationSASLContinue, SASLResponse, AuthenticationSASLFinal and
/// AuthenticationOk.
async fn scram_exchange<S>(
    transport: &mut Transport<S>,
    users: &ScramUsers,
    user: &str,
) -> Result<bool, ConnectionError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let _ = backend::put(
        &mut transport.out,
        &Authentication::SASL(vec![scram::MECHANISM.into()]),
    );
    transport.flush().await?;
    let Some(initial) = read_sasl(transport).await? else {
        return Ok(false);
    };
    let Some((mechanism, client_first)) = parse_initial_response(initial) else {
        send_fatal(
            transport,
            SqlState::PROTOCOL_VIOLATION,
            "malformed SASL initial response",
        );
        return Ok(false);
    };
    if mechanism != scram::MECHANISM {
        send_fatal(
            transport,
            SqlState::PROTOCOL_VIOLATION,
            "client selected an invalid SASL authentication mechanism",
        );
        return Ok(false);
    }
    let result = match Exchange::start(users, user, &client_first) {
        Ok(exchange) => {
            let first = Bytes::from(exchange.server_first().to_string());
            let _ = backend::put(&mut transport.out, &Authentication::SASLContinue(first));
            transport.flush().await?;
            let Some(client_final) = read_sasl(transport).await? else {
                return Ok(false);
            };
            exchange.finish(&client_final)
        }
        Err(e) => Err(e),
    };
    match result {
        Ok(server_final) => {
            let _ = backend::put(
                &mut transport.out,
                &Authentication::SASLFinal(server_final.into()),
            );
            let _ = backend::put(&mut transport.out, &Authentication::Ok);
            Ok(true)
        }
        Err(ScramError::Protocol(error)) => {
            backend::put_error(&mut transport.out, &error, Severity::Fatal);
            Ok(false)
        }
        Err(ScramError::Failed) => {
            send_fatal(
                transport,
                SqlState::INVALID_PASSWORD,
                format!("password authentication failed for user \"{user}\""),
            );
            Ok(false)
        }
    }
}

/// The `-c name=value` and `--name=value` settings of the `options`
/// startup parameter (words split at spaces, `\ ` a space in a value), of
/// settings a client may set.
fn command_line_settings(options: &str) -> Vec<(String, String)> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut out = Vec::new();
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        let assignment = match word.strip_prefix("--") {
            Some(rest) => Some(rest.to_string()),
            None if word == "-c" => words.next(),
            None => word.strip_prefix("-c").map(str::to_string),
        };
        if let Some((name, value)) = assignment.as_deref().and_then(|a| a.split_once('=')) {
            let name = name.replace('-', "_");
            if settings::settable_at_startup(&name) {
                out.push((name, value.to_string()));
            }
        }
    }
    out
}

/// Sends the ParameterStatus of every reported setting (the server's one
/// settings table, as PostgreSQL 15 reports them; with the client's
/// startup values), BackendKeyData and the first ReadyForQuery.
pub async fn send_session_start<S>(
    transport: &mut Transport<S>,
    client: &ClientParams,
    backend_key: (i32, i32),
) -> Result<(), ConnectionError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    for (name, default) in settings::reported(&client.identity()) {
        let given = client
            .settings
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| settings::canonical_value(name, v).ok());
        let value = given.unwrap_or(default);
        let _ = backend::put(
            &mut transport.out,
            &ParameterStatus::new(name.to_string(), value),
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
