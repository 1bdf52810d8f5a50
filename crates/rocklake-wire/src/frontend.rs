//! Decoding of the messages a client sends: the untyped startup packets and the
//! typed messages of protocol 3.0. Decoding is pure (bytes in, message out) and
//! never panics on malformed input: every problem is a [`ProtocolViolation`].
//!
//! pgwire's frontend decoders read bodies with panicking `Buf` getters and do
//! not bound a body to its declared length, so this module frames and parses
//! client input itself; backend messages are encoded with `pgwire::messages`.

use bytes::{Buf, Bytes, BytesMut};

/// Largest startup packet accepted (PostgreSQL's `MAX_STARTUP_PACKET_LENGTH`).
const MAX_STARTUP_LEN: usize = 10_000;
/// Largest Query / Parse / Bind / CopyData / CopyFail message (1 GiB - 1, as in
/// PostgreSQL).
const MAX_LARGE_LEN: usize = 0x3FFF_FFFF;
/// Largest of the other messages (PostgreSQL's `PQ_SMALL_MESSAGE_LIMIT`).
const MAX_SMALL_LEN: usize = 10_000;

const SSL_REQUEST_CODE: i32 = 80_877_103;
const GSSENC_REQUEST_CODE: i32 = 80_877_104;
const CANCEL_REQUEST_CODE: i32 = 80_877_102;

/// The client broke the protocol; the connection cannot continue (SQLSTATE
/// 08P01, sent as FATAL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolViolation(pub String);

impl std::fmt::Display for ProtocolViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A packet of the untyped startup phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartupPacket {
    /// SSLRequest: answer `S` (and start TLS) or `N`.
    SslRequest,
    /// GSSENCRequest: answer `G` or `N`.
    GssEncRequest,
    /// CancelRequest for the backend with this pid and secret key.
    Cancel {
        /// Backend process id from BackendKeyData.
        pid: i32,
        /// Secret key from BackendKeyData.
        key: i32,
    },
    /// StartupMessage with protocol version and parameters (`user`,
    /// `database`, ...), in the order sent.
    Startup {
        /// Major protocol version (3).
        major: u16,
        /// Minor protocol version requested.
        minor: u16,
        /// Name/value parameters.
        params: Vec<(String, String)>,
    },
}

/// A typed message sent after startup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontendMessage {
    /// `Q`: simple query.
    Query(String),
    /// `P`: Parse.
    Parse {
        /// Statement name; empty for the unnamed statement.
        name: String,
        /// SQL text.
        sql: String,
        /// Parameter type OIDs the client specified.
        param_types: Vec<u32>,
    },
    /// `B`: Bind.
    Bind {
        /// Portal name; empty for the unnamed portal.
        portal: String,
        /// Statement name.
        statement: String,
        /// Parameter format codes (none: all text; one: for every parameter;
        /// else one per parameter).
        param_formats: Vec<i16>,
        /// Parameter values (`None` for NULL).
        params: Vec<Option<Bytes>>,
        /// Result column format codes.
        result_formats: Vec<i16>,
    },
    /// `D`: Describe a statement (`S`) or portal (`P`).
    Describe {
        /// `S` or `P`.
        kind: u8,
        /// Name of the statement or portal.
        name: String,
    },
    /// `E`: Execute a portal.
    Execute {
        /// Portal name.
        portal: String,
        /// Row limit; 0 for no limit.
        max_rows: i32,
    },
    /// `C`: Close a statement (`S`) or portal (`P`).
    Close {
        /// `S` or `P`.
        kind: u8,
        /// Name of the statement or portal.
        name: String,
    },
    /// `S`: Sync.
    Sync,
    /// `H`: Flush.
    Flush,
    /// `X`: Terminate.
    Terminate,
    /// `d`: CopyData.
    CopyData(Bytes),
    /// `c`: CopyDone.
    CopyDone,
    /// `f`: CopyFail with the client's reason.
    CopyFail(String),
    /// `p`: a password / SASL message, kept raw for the authentication step.
    Password(Bytes),
}

impl FrontendMessage {
    /// The message's name in the protocol documentation (`Query`, `Parse`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            FrontendMessage::Query(_) => "Query",
            FrontendMessage::Parse { .. } => "Parse",
            FrontendMessage::Bind { .. } => "Bind",
            FrontendMessage::Describe { .. } => "Describe",
            FrontendMessage::Execute { .. } => "Execute",
            FrontendMessage::Close { .. } => "Close",
            FrontendMessage::Sync => "Sync",
            FrontendMessage::Flush => "Flush",
            FrontendMessage::Terminate => "Terminate",
            FrontendMessage::CopyData(_) => "CopyData",
            FrontendMessage::CopyDone => "CopyDone",
            FrontendMessage::CopyFail(_) => "CopyFail",
            FrontendMessage::Password(_) => "PasswordMessage",
        }
    }
}

fn violation(message: impl Into<String>) -> ProtocolViolation {
    ProtocolViolation(message.into())
}

/// A bounds-checked reader over one message body.
struct Body {
    bytes: Bytes,
}

impl Body {
    fn need(&self, n: usize) -> Result<(), ProtocolViolation> {
        if self.bytes.remaining() < n {
            return Err(violation("insufficient data left in message"));
        }
        Ok(())
    }
    fn u8(&mut self) -> Result<u8, ProtocolViolation> {
        self.need(1)?;
        Ok(self.bytes.get_u8())
    }
    fn i16(&mut self) -> Result<i16, ProtocolViolation> {
        self.need(2)?;
        Ok(self.bytes.get_i16())
    }
    fn i32(&mut self) -> Result<i32, ProtocolViolation> {
        self.need(4)?;
        Ok(self.bytes.get_i32())
    }
    fn count(&mut self) -> Result<usize, ProtocolViolation> {
        let n = self.i16()?;
        usize::try_from(n).map_err(|_| violation(format!("invalid count {n} in message")))
    }
    fn cstr(&mut self) -> Result<String, ProtocolViolation> {
        let end = self
            .bytes
            .iter()
            .position(|b| *b == 0)
            .ok_or_else(|| violation("invalid string in message"))?;
        let raw = self.bytes.split_to(end);
        self.bytes.advance(1);
        String::from_utf8(raw.to_vec())
            .map_err(|_| violation("invalid byte sequence for encoding \"UTF8\" in message"))
    }
    fn take(&mut self, n: usize) -> Result<Bytes, ProtocolViolation> {
        self.need(n)?;
        Ok(self.bytes.split_to(n))
    }
    fn end(self) -> Result<(), ProtocolViolation> {
        if self.bytes.has_remaining() {
            return Err(violation("invalid message format"));
        }
        Ok(())
    }
}

/// Decodes one startup-phase packet from the front of `buf`, or returns
/// `Ok(None)` when more bytes are needed.
pub fn decode_startup(buf: &mut BytesMut) -> Result<Option<StartupPacket>, ProtocolViolation> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let len = i32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
    if len < 8 || len as usize > MAX_STARTUP_LEN {
        return Err(violation(format!(
            "invalid length of startup packet: {len}"
        )));
    }
    let len = len as usize;
    if buf.len() < len {
        return Ok(None);
    }
    let mut packet = buf.split_to(len).freeze();
    packet.advance(4);
    let mut body = Body { bytes: packet };
    let code = body.i32()?;
    let packet = match code {
        SSL_REQUEST_CODE => StartupPacket::SslRequest,
        GSSENC_REQUEST_CODE => StartupPacket::GssEncRequest,
        CANCEL_REQUEST_CODE => {
            let pid = body.i32()?;
            let key = body.i32()?;
            StartupPacket::Cancel { pid, key }
        }
        _ => {
            let (major, minor) = ((code >> 16) as u16, code as u16);
            let mut params = Vec::new();
            loop {
                let name = body.cstr()?;
                if name.is_empty() {
                    break;
                }
                let value = body.cstr()?;
                params.push((name, value));
            }
            StartupPacket::Startup {
                major,
                minor,
                params,
            }
        }
    };
    body.end()?;
    Ok(Some(packet))
}

/// Decodes one typed message from the front of `buf`, or returns `Ok(None)`
/// when more bytes are needed.
pub fn decode_message(buf: &mut BytesMut) -> Result<Option<FrontendMessage>, ProtocolViolation> {
    if buf.len() < 5 {
        return Ok(None);
    }
    let kind = buf[0];
    let len = i32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]);
    let limit = match kind {
        b'Q' | b'P' | b'B' | b'd' | b'f' | b'p' => MAX_LARGE_LEN,
        _ => MAX_SMALL_LEN,
    };
    if len < 4 || len as usize > limit {
        return Err(violation(format!(
            "invalid message length {len} for message type 0x{kind:02X}"
        )));
    }
    let total = 1 + len as usize;
    if buf.len() < total {
        // Grow towards the declared size in steps, so a bogus huge length
        // does not allocate it all up front.
        buf.reserve((total - buf.len()).min(1 << 20));
        return Ok(None);
    }
    let mut frame = buf.split_to(total).freeze();
    frame.advance(5);
    let mut body = Body { bytes: frame };
    let message = match kind {
        b'Q' => FrontendMessage::Query(body.cstr()?),
        b'P' => {
            let name = body.cstr()?;
            let sql = body.cstr()?;
            let count = body.count()?;
            let mut param_types = Vec::with_capacity(count.min(1024));
            for _ in 0..count {
                param_types.push(body.i32()? as u32);
            }
            FrontendMessage::Parse {
                name,
                sql,
                param_types,
            }
        }
        b'B' => {
            let portal = body.cstr()?;
            let statement = body.cstr()?;
            let format_count = body.count()?;
            let mut param_formats = Vec::with_capacity(format_count.min(1024));
            for _ in 0..format_count {
                param_formats.push(body.i16()?);
            }
            let param_count = body.count()?;
            let mut params = Vec::with_capacity(param_count.min(1024));
            for _ in 0..param_count {
                let len = body.i32()?;
                params.push(match len {
                    -1 => None,
                    n if n >= 0 => Some(body.take(n as usize)?),
                    n => return Err(violation(format!("invalid parameter length {n}"))),
                });
            }
            let result_count = body.count()?;
            let mut result_formats = Vec::with_capacity(result_count.min(1024));
            for _ in 0..result_count {
                result_formats.push(body.i16()?);
            }
            FrontendMessage::Bind {
                portal,
                statement,
                param_formats,
                params,
                result_formats,
            }
        }
        b'D' => FrontendMessage::Describe {
            kind: body.u8()?,
            name: body.cstr()?,
        },
        b'E' => FrontendMessage::Execute {
            portal: body.cstr()?,
            max_rows: body.i32()?,
        },
        b'C' => FrontendMessage::Close {
            kind: body.u8()?,
            name: body.cstr()?,
        },
        b'S' => FrontendMessage::Sync,
        b'H' => FrontendMessage::Flush,
        b'X' => FrontendMessage::Terminate,
        b'd' => {
            let data = body.bytes.split_off(0);
            FrontendMessage::CopyData(data)
        }
        b'c' => FrontendMessage::CopyDone,
        b'f' => FrontendMessage::CopyFail(body.cstr()?),
        b'p' => FrontendMessage::Password(body.bytes.split_off(0)),
        other => {
            return Err(violation(format!(
                "invalid frontend message type {}",
                other
            )))
        }
    };
    body.end()?;
    Ok(Some(message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BufMut;

    fn frame(kind: u8, body: &[u8]) -> BytesMut {
        let mut buf = BytesMut::new();
        buf.put_u8(kind);
        buf.put_i32(4 + body.len() as i32);
        buf.put_slice(body);
        buf
    }

    #[test]
    fn startup_packets() {
        let mut buf = BytesMut::from(&[0, 0, 0, 8, 0x04, 0xD2, 0x16, 0x2F][..]);
        assert_eq!(
            decode_startup(&mut buf).unwrap(),
            Some(StartupPacket::SslRequest)
        );
        assert!(buf.is_empty());

        let mut body = Vec::new();
        body.extend_from_slice(&196_608i32.to_be_bytes());
        body.extend_from_slice(b"user\0postgres\0database\0db\0\0");
        let mut buf = BytesMut::new();
        buf.put_i32(4 + body.len() as i32);
        // Arrives in two pieces.
        buf.put_slice(&body[..5]);
        assert_eq!(decode_startup(&mut buf).unwrap(), None);
        buf.put_slice(&body[5..]);
        assert_eq!(
            decode_startup(&mut buf).unwrap(),
            Some(StartupPacket::Startup {
                major: 3,
                minor: 0,
                params: vec![
                    ("user".into(), "postgres".into()),
                    ("database".into(), "db".into())
                ],
            })
        );
    }

    #[test]
    fn rejects_bad_startup_length() {
        let mut buf = BytesMut::from(&[0, 0, 0, 2, 0, 0, 0, 0][..]);
        assert!(decode_startup(&mut buf).is_err());
        let mut buf = BytesMut::from(&[0, 1, 0, 0][..]);
        assert!(decode_startup(&mut buf).is_err());
    }

    #[test]
    fn typed_messages() {
        let mut buf = frame(b'Q', b"select 1\0");
        buf.extend_from_slice(&frame(b'P', b"\0select 2\0\0\0"));
        buf.extend_from_slice(&frame(b'D', b"S\0"));
        buf.extend_from_slice(&frame(b'S', b""));
        assert_eq!(
            decode_message(&mut buf).unwrap(),
            Some(FrontendMessage::Query("select 1".into()))
        );
        assert_eq!(
            decode_message(&mut buf).unwrap(),
            Some(FrontendMessage::Parse {
                name: String::new(),
                sql: "select 2".into(),
                param_types: vec![]
            })
        );
        assert_eq!(
            decode_message(&mut buf).unwrap(),
            Some(FrontendMessage::Describe {
                kind: b'S',
                name: String::new()
            })
        );
        assert_eq!(
            decode_message(&mut buf).unwrap(),
            Some(FrontendMessage::Sync)
        );
        assert_eq!(decode_message(&mut buf).unwrap(), None);
    }

    #[test]
    fn bind_with_params_and_formats() {
        let mut body = Vec::new();
        body.extend_from_slice(b"p\0s\0");
        body.extend_from_slice(&[0, 1, 0, 0]); // one param format: text
        body.extend_from_slice(&[0, 2, 0, 0, 0, 1, b'7', 0xFF, 0xFF, 0xFF, 0xFF]);
        body.extend_from_slice(&[0, 1, 0, 1]); // one result format: binary
        let mut buf = frame(b'B', &body);
        assert_eq!(
            decode_message(&mut buf).unwrap(),
            Some(FrontendMessage::Bind {
                portal: "p".into(),
                statement: "s".into(),
                param_formats: vec![0],
                params: vec![Some(Bytes::from_static(b"7")), None],
                result_formats: vec![1],
            })
        );
    }

    #[test]
    fn huge_declared_length_does_not_allocate_it_up_front() {
        // A 1 GiB Query header with no body: wait for more input, but grow
        // the buffer in bounded steps.
        let mut buf = BytesMut::from(&[b'Q', 0x3F, 0xFF, 0xFF, 0xFF][..]);
        assert_eq!(decode_message(&mut buf).unwrap(), None);
        assert!(buf.capacity() <= 2 << 20, "{}", buf.capacity());
    }

    #[test]
    fn malformed_messages_are_violations() {
        // Parse body without its parameter count.
        assert!(decode_message(&mut frame(b'P', b"\0select\0")).is_err());
        // Query string without its terminator.
        assert!(decode_message(&mut frame(b'Q', b"select")).is_err());
        // Trailing garbage after Sync.
        assert!(decode_message(&mut frame(b'S', b"x")).is_err());
        // Unknown type byte.
        assert!(decode_message(&mut frame(b'!', b"")).is_err());
        // Negative length.
        let mut buf = BytesMut::from(&[b'Q', 0xFF, 0xFF, 0xFF, 0xFF][..]);
        assert!(decode_message(&mut buf).is_err());
        // Oversized small message.
        let mut buf = BytesMut::from(&[b'S', 0, 1, 0, 0][..]);
        assert!(decode_message(&mut buf).is_err());
    }
}
