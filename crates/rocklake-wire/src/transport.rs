//! A client connection's byte stream with its input and output buffers:
//! reads whole frontend messages, batches backend messages and flushes them.
//! Generic over the stream so a TLS stream can replace the TCP one.

use std::io;

use bytes::BytesMut;
use rocklake_types::{SqlError, SqlState};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::frontend::{self, FrontendMessage, ProtocolViolation, StartupPacket};

/// Output is written to the socket once this much is buffered, even before
/// the next flush point (keeps memory bounded for large results).
const FLUSH_THRESHOLD: usize = 64 * 1024;
/// Largest password / SASL message body accepted during authentication
/// (PostgreSQL's `PG_MAX_AUTH_TOKEN_LENGTH`), plus the length word.
const MAX_AUTH_LEN: i32 = 65_535 + 4;

/// Why a connection ended abnormally.
#[derive(Debug)]
pub enum ConnectionError {
    /// Socket error.
    Io(io::Error),
    /// The client broke the protocol.
    Protocol(ProtocolViolation),
    /// The server ended the session (shutdown, idle-in-transaction
    /// timeout) with this error.
    Terminated(SqlError),
    /// The session panicked while serving the client.
    Panic(String),
}

impl ConnectionError {
    /// The FATAL error to send the client before closing, if it can still
    /// be told.
    pub fn fatal_error(&self) -> Option<SqlError> {
        match self {
            ConnectionError::Io(_) => None,
            ConnectionError::Protocol(violation) => Some(SqlError::new(
                SqlState::PROTOCOL_VIOLATION,
                violation.0.clone(),
            )),
            ConnectionError::Terminated(error) => Some(error.clone()),
            ConnectionError::Panic(message) => Some(SqlError::internal(format!(
                "internal error: the session failed ({message}) and was closed; the server goes on"
            ))),
        }
    }
}

impl std::fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectionError::Io(e) => write!(f, "I/O error: {e}"),
            ConnectionError::Protocol(v) => write!(f, "protocol violation: {v}"),
            ConnectionError::Terminated(e) => write!(f, "terminated: {}", e.message),
            ConnectionError::Panic(message) => write!(f, "session panicked: {message}"),
        }
    }
}

impl From<io::Error> for ConnectionError {
    fn from(e: io::Error) -> Self {
        ConnectionError::Io(e)
    }
}

impl From<ProtocolViolation> for ConnectionError {
    fn from(v: ProtocolViolation) -> Self {
        ConnectionError::Protocol(v)
    }
}

/// Largest message accepted after startup unless configured otherwise.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;

/// Buffered, message-oriented access to a client stream.
pub struct Transport<S> {
    stream: S,
    input: BytesMut,
    /// Backend messages not yet written to the stream.
    pub out: BytesMut,
    /// Largest message (a query string, a COPY data chunk) accepted.
    max_message: usize,
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Transport<S> {
    /// Wraps a connected stream.
    pub fn new(stream: S) -> Self {
        Transport {
            stream,
            input: BytesMut::with_capacity(8 * 1024),
            out: BytesMut::with_capacity(8 * 1024),
            max_message: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }

    /// Refuses messages larger than `bytes` (FATAL 54000) before reading them.
    pub fn set_max_message(&mut self, bytes: usize) {
        self.max_message = bytes;
    }

    /// Fails when the message at the front of the input declares more than
    /// the configured limit.
    fn check_message_size(&self) -> Result<(), ConnectionError> {
        if self.input.len() < 5 {
            return Ok(());
        }
        let len = u32::from_be_bytes([self.input[1], self.input[2], self.input[3], self.input[4]]);
        if len as usize > self.max_message {
            return Err(ConnectionError::Terminated(SqlError::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "message of {len} bytes is larger than the server's limit of {} bytes (--max-message-bytes)",
                    self.max_message
                ),
            )));
        }
        Ok(())
    }

    /// Reads more input; `Ok(false)` at end of stream.
    async fn fill(&mut self) -> Result<bool, ConnectionError> {
        let n = self.stream.read_buf(&mut self.input).await?;
        if n == 0 && !self.input.is_empty() {
            return Err(ProtocolViolation(format!(
                "connection closed inside a message ({} bytes pending)",
                self.input.len()
            ))
            .into());
        }
        Ok(n > 0)
    }

    /// Next startup-phase packet; `None` when the client hung up.
    pub async fn read_startup(&mut self) -> Result<Option<StartupPacket>, ConnectionError> {
        loop {
            if let Some(packet) = frontend::decode_startup(&mut self.input)? {
                return Ok(Some(packet));
            }
            if !self.fill().await? {
                return Ok(None);
            }
        }
    }

    /// Next typed message; `None` when the client hung up.
    pub async fn read_message(&mut self) -> Result<Option<FrontendMessage>, ConnectionError> {
        loop {
            self.check_message_size()?;
            if let Some(message) = frontend::decode_message(&mut self.input)? {
                return Ok(Some(message));
            }
            if !self.fill().await? {
                return Ok(None);
            }
        }
    }

    /// Next message during authentication: only password / SASL messages
    /// of at most PostgreSQL's `PG_MAX_AUTH_TOKEN_LENGTH` are framed, so an
    /// unauthenticated client cannot make the server buffer a large message.
    pub async fn read_auth_message(&mut self) -> Result<Option<FrontendMessage>, ConnectionError> {
        loop {
            if self.input.len() >= 5 {
                let len = i32::from_be_bytes([
                    self.input[1],
                    self.input[2],
                    self.input[3],
                    self.input[4],
                ]);
                if self.input[0] != b'p' {
                    return Err(ProtocolViolation(format!(
                        "expected SASL response, got message type {}",
                        self.input[0]
                    ))
                    .into());
                }
                if !(4..=MAX_AUTH_LEN).contains(&len) {
                    return Err(ProtocolViolation(format!(
                        "invalid message length {len} for message type 0x70"
                    ))
                    .into());
                }
            }
            if let Some(message) = frontend::decode_message(&mut self.input)? {
                return Ok(Some(message));
            }
            if !self.fill().await? {
                return Ok(None);
            }
        }
    }

    /// The stream (e.g. to ask whether it is encrypted).
    pub fn get_ref(&self) -> &S {
        &self.stream
    }

    /// True when input bytes beyond the last decoded message are buffered
    /// (an SSLRequest answer must not be followed by plaintext the client
    /// sent early).
    pub fn has_pending_input(&self) -> bool {
        !self.input.is_empty()
    }

    /// Writes out everything buffered.
    pub async fn flush(&mut self) -> Result<(), ConnectionError> {
        if !self.out.is_empty() {
            self.stream.write_all(&self.out).await?;
            self.out.clear();
        }
        self.stream.flush().await?;
        Ok(())
    }

    /// Writes out the buffer if it has grown past the threshold.
    pub async fn flush_if_full(&mut self) -> Result<(), ConnectionError> {
        if self.out.len() >= FLUSH_THRESHOLD {
            self.stream.write_all(&self.out).await?;
            self.out.clear();
        }
        Ok(())
    }

    /// The stream, mutably (e.g. to hand it to the session thread).
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.stream
    }

    /// Gives the stream back (e.g. to wrap it in TLS after SSLRequest).
    pub fn into_inner(self) -> S {
        self.stream
    }

    /// Shuts the write side down after flushing.
    pub async fn shutdown(&mut self) {
        let _ = self.flush().await;
        let _ = self.stream.shutdown().await;
    }
}
