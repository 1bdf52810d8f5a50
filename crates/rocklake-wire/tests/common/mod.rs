//! Shared test fixtures: a scripted fake session, a server on an ephemeral
//! port, and a raw protocol client for byte-exact checks.

#![allow(dead_code, clippy::result_large_err)]

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::{Buf, BufMut, BytesMut};
use pgwire::messages::{DecodeContext, PgWireBackendMessage, ProtocolVersion};
use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};
use rocklake_types::output::{send_results, Notice, QueryOutput, ResultSink, TxStatus};
use rocklake_types::params::Described;
use rocklake_types::SinkError;
use rocklake_types::{SqlError, SqlState};
use rocklake_wire::{ServerConfig, SessionFactory, SessionStart, SqlSession};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the fake sessions of one server recorded.
#[derive(Default)]
pub struct Log {
    /// Every SQL string passed to `execute`.
    pub executed: Vec<String>,
    /// Rows received by `copy_in_finish`.
    pub copied: Vec<Row>,
    /// Number of `copy_in_abort` calls.
    pub aborts: usize,
    /// `database` of each client a session was opened for.
    pub databases: Vec<String>,
    /// The process id the server gave each session.
    pub pids: Vec<i32>,
    /// The SQLSTATE each interrupted `wait` statement ended with.
    pub interrupted: Vec<String>,
}

/// Columns of the `copy in` target and of `copy out`.
pub fn copy_columns() -> Vec<ColumnDef> {
    vec![
        ColumnDef::new("id", PgType::Int8),
        ColumnDef::new("at", PgType::TimestampTz),
        ColumnDef::new("name", PgType::Varchar),
        ColumnDef::new("flag", PgType::Bool),
        ColumnDef::new("uid", PgType::Uuid),
    ]
}

/// Rows returned by `copy out`.
pub fn copy_rows() -> Vec<Row> {
    vec![
        vec![
            Datum::Int8(1),
            Datum::TimestampTz(849_524_998_766_649),
            Datum::Text("main".into()),
            Datum::Bool(true),
            Datum::Uuid([7; 16]),
        ],
        vec![
            Datum::Int8(-2),
            Datum::Null,
            Datum::Text("ünïcode".into()),
            Datum::Bool(false),
            Datum::Null,
        ],
    ]
}

/// Columns of `select types`.
pub fn type_columns() -> Vec<ColumnDef> {
    vec![
        ColumnDef::new("i4", PgType::Int4),
        ColumnDef::new("i8", PgType::Int8),
        ColumnDef::new("b", PgType::Bool),
        ColumnDef::new("t", PgType::Text),
        ColumnDef::new("f8", PgType::Float8),
        ColumnDef::new("by", PgType::Bytea),
        ColumnDef::new("k", PgType::array_of(PgType::Int2)),
        ColumnDef::new("n", PgType::Numeric(Some((9, 2)))),
        ColumnDef::new("nothing", PgType::Text),
    ]
}

/// The single row of `select types`.
pub fn type_row() -> Row {
    vec![
        Datum::Int4(42),
        Datum::Int8(-7),
        Datum::Bool(true),
        Datum::Text("hi".into()),
        Datum::Float8(0.1),
        Datum::Bytea(vec![0xDE, 0xAD]),
        Datum::array(vec![Datum::Int2(1), Datum::Int2(2)]),
        Datum::Numeric("-12.34".into()),
        Datum::Null,
    ]
}

/// A session whose statements are scripted by their text. Besides the
/// fixed answers, `wait` runs until the session is interrupted (cancel,
/// client gone, shutdown) and `panic` panics.
pub struct FakeSession {
    status: TxStatus,
    log: Arc<Mutex<Log>>,
    interrupt: Arc<rocklake_types::Interrupt>,
}

impl FakeSession {
    fn statement(&mut self, stmt: &str) -> Result<QueryOutput, SqlError> {
        let command = |tag: &str| QueryOutput::Command {
            tag: tag.to_string(),
            notices: Vec::new(),
        };
        let lower = stmt.to_ascii_lowercase();
        if self.status == TxStatus::Failed && lower != "rollback" && lower != "commit" {
            return Err(SqlError::new(
                SqlState::IN_FAILED_SQL_TRANSACTION,
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        let output = match lower.as_str() {
            "begin" => {
                self.status = TxStatus::InBlock;
                command("BEGIN")
            }
            "commit" | "rollback" => {
                let tag = if self.status == TxStatus::Failed {
                    "ROLLBACK"
                } else {
                    &lower.to_uppercase()
                };
                let tag = tag.to_string();
                self.status = TxStatus::Idle;
                command(&tag)
            }
            "select 1" => QueryOutput::Rows {
                columns: vec![ColumnDef::new("?column?", PgType::Int4)],
                rows: vec![vec![Datum::Int4(1)]].into(),
            },
            "select types" => QueryOutput::Rows {
                columns: type_columns(),
                rows: vec![type_row()].into(),
            },
            "insert" => command("INSERT 0 3"),
            "create" => QueryOutput::Command {
                tag: "CREATE TABLE".into(),
                notices: vec![Notice {
                    code: SqlState::DUPLICATE_TABLE,
                    message: "relation \"t\" already exists, skipping".into(),
                }],
            },
            "fail" => {
                if self.status == TxStatus::InBlock {
                    self.status = TxStatus::Failed;
                }
                return Err(SqlError::unique_violation(
                    "public",
                    "ducklake_snapshot",
                    "snapshot_id",
                    "13",
                ));
            }
            "copy out" => QueryOutput::CopyOut {
                columns: copy_columns(),
                rows: copy_rows().into(),
            },
            "copy empty" => QueryOutput::CopyOut {
                columns: copy_columns(),
                rows: Vec::<rocklake_types::datum::Row>::new().into(),
            },
            "bad row" => QueryOutput::CopyOut {
                columns: vec![ColumnDef::new("x", PgType::Int8)],
                rows: vec![vec![Datum::Int8(1)], vec![Datum::Text("oops".into())]].into(),
            },
            _ => {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("syntax error at or near \"{stmt}\""),
                ));
            }
        };
        Ok(output)
    }
}

#[async_trait]
impl SqlSession for FakeSession {
    async fn run(&mut self, sql: &str, sink: &mut dyn ResultSink) -> Result<(), SinkError> {
        self.log.lock().unwrap().executed.push(sql.to_string());
        for stmt in sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            if stmt.eq_ignore_ascii_case("copy in") {
                match sink
                    .copy_in(&copy_columns(), &rocklake_types::copy::CopyFormat::Binary)
                    .await?
                {
                    Ok(rows) => {
                        let n = rows.len();
                        self.log.lock().unwrap().copied.extend(rows);
                        sink.complete(&format!("COPY {n}"), &[]).await?;
                        continue;
                    }
                    Err(error) => {
                        self.log.lock().unwrap().aborts += 1;
                        if self.status == TxStatus::InBlock {
                            self.status = TxStatus::Failed;
                        }
                        return sink.error(&error).await;
                    }
                }
            }
            let result = match stmt.to_ascii_lowercase().as_str() {
                "wait" => {
                    self.interrupt.start_statement(None);
                    let stopped = self.interrupt.stopped().await;
                    self.interrupt.end_statement();
                    let code = stopped.code.to_string();
                    self.log.lock().unwrap().interrupted.push(code);
                    Err(stopped)
                }
                "panic" => panic!("the fake session panics on purpose"),
                _ => self.statement(stmt),
            };
            let failed = result.is_err();
            send_results(vec![result], sink).await?;
            if failed {
                break;
            }
        }
        Ok(())
    }

    async fn describe(&mut self, sql: &str, params: &[u32]) -> Result<Described, SqlError> {
        let columns = match sql.trim().to_ascii_lowercase().as_str() {
            "select 1" => vec![ColumnDef::new("?column?", PgType::Int4)],
            "select types" => type_columns(),
            "bogus" => {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "syntax error at or near \"bogus\"",
                ))
            }
            _ => Vec::new(),
        };
        Ok(Described {
            params: params.to_vec(),
            columns,
            ..Described::default()
        })
    }

    fn status(&self) -> TxStatus {
        self.status
    }
}

/// Opens [`FakeSession`]s, recording each client's database.
struct FakeFactory {
    log: Arc<Mutex<Log>>,
}

#[async_trait::async_trait]
impl SessionFactory for FakeFactory {
    async fn new_session(
        &self,
        start: SessionStart<'_>,
    ) -> Result<Box<dyn SqlSession>, rocklake_types::SqlError> {
        let mut log = self.log.lock().unwrap();
        log.databases.push(start.client.database.clone());
        log.pids.push(start.pid);
        drop(log);
        Ok(Box::new(FakeSession {
            status: TxStatus::Idle,
            log: Arc::clone(&self.log),
            interrupt: start.interrupt,
        }))
    }
}

/// A running test server.
pub struct TestServer {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// What its sessions recorded.
    pub log: Arc<Mutex<Log>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    /// Shuts the server down and waits until `serve_until` returns; how
    /// long that took.
    pub async fn shut_down(mut self) -> std::time::Duration {
        let started = std::time::Instant::now();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let served = self.served.take().expect("served");
        tokio::time::timeout(std::time::Duration::from_secs(30), served)
            .await
            .expect("serve_until did not return within 30 s")
            .unwrap()
            .unwrap();
        started.elapsed()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Starts a server with fake sessions on 127.0.0.1:0.
pub async fn start(config: ServerConfig) -> TestServer {
    start_on(0, config).await
}

/// Starts a server with fake sessions on 127.0.0.1:`port` (0 for any).
pub async fn start_on(port: u16, config: ServerConfig) -> TestServer {
    let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = Arc::new(Mutex::new(Log::default()));
    let factory = FakeFactory {
        log: Arc::clone(&log),
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(rocklake_wire::serve_until(
        listener,
        Arc::new(factory),
        config,
        async {
            let _ = stopped.await;
        },
    ));
    TestServer {
        port,
        log,
        stop: Some(stop),
        served: Some(served),
    }
}

/// A minimal protocol client that shows every backend message.
pub struct RawClient {
    stream: TcpStream,
    input: BytesMut,
}

impl RawClient {
    /// Connects and completes startup (SSLRequest first, like libpq).
    pub async fn connect(port: u16) -> RawClient {
        Self::connect_with(port, 196_608, b"user\0postgres\0database\0lake\0\0").await
    }

    /// Connects with this protocol version code and raw startup parameters.
    pub async fn connect_with(port: u16, version: i32, params: &[u8]) -> RawClient {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream
            .write_all(&[0, 0, 0, 8, 0x04, 0xD2, 0x16, 0x2F])
            .await
            .unwrap();
        let mut answer = [0u8; 1];
        stream.read_exact(&mut answer).await.unwrap();
        assert_eq!(answer[0], b'N', "SSLRequest must be refused with N");
        let mut body = BytesMut::new();
        body.put_i32(version);
        body.put_slice(params);
        let mut packet = BytesMut::new();
        packet.put_i32(4 + body.len() as i32);
        packet.put_slice(&body);
        stream.write_all(&packet).await.unwrap();
        RawClient {
            stream,
            input: BytesMut::new(),
        }
    }

    /// Sends one typed message.
    pub async fn send(&mut self, kind: u8, body: &[u8]) {
        let mut frame = BytesMut::new();
        frame.put_u8(kind);
        frame.put_i32(4 + body.len() as i32);
        frame.put_slice(body);
        self.stream.write_all(&frame).await.unwrap();
    }

    /// Sends raw bytes.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.unwrap();
    }

    /// The (process id, secret key) of the BackendKeyData among `messages`.
    pub fn backend_key(messages: &[PgWireBackendMessage]) -> (i32, i32) {
        messages
            .iter()
            .find_map(|m| match m {
                PgWireBackendMessage::BackendKeyData(k) => match k.secret_key {
                    pgwire::messages::startup::SecretKey::I32(key) => Some((k.pid, key)),
                    _ => None,
                },
                _ => None,
            })
            .expect("BackendKeyData")
    }

    /// Sends a CancelRequest for (`pid`, `key`) on a new connection, as
    /// libpq does, and waits for the server to close it.
    pub async fn cancel(port: u16, pid: i32, key: i32) {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let mut packet = vec![0, 0, 0, 16, 0x04, 0xD2, 0x16, 0x2E];
        packet.extend_from_slice(&pid.to_be_bytes());
        packet.extend_from_slice(&key.to_be_bytes());
        stream.write_all(&packet).await.unwrap();
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest).await;
    }

    /// The next backend message if one comes within `wait`.
    pub async fn recv_within(&mut self, wait: std::time::Duration) -> Option<PgWireBackendMessage> {
        tokio::time::timeout(wait, self.recv()).await.ok().flatten()
    }

    /// Closes the sending side; the server sees end of stream.
    pub async fn close_write(&mut self) {
        let _ = self.stream.shutdown().await;
    }

    /// Sends a simple Query.
    pub async fn query(&mut self, sql: &str) {
        let mut body = sql.as_bytes().to_vec();
        body.push(0);
        self.send(b'Q', &body).await;
    }

    /// The next backend message, or `None` at end of stream.
    pub async fn recv(&mut self) -> Option<PgWireBackendMessage> {
        let ctx = DecodeContext::new(ProtocolVersion::PROTOCOL3_0);
        loop {
            if let Some(message) = PgWireBackendMessage::decode(&mut self.input, &ctx).unwrap() {
                return Some(message);
            }
            let read = tokio::time::timeout(
                std::time::Duration::from_secs(5),
                self.stream.read_buf(&mut self.input),
            )
            .await
            .expect("server did not answer within 5 s")
            .unwrap();
            if read == 0 {
                return None;
            }
        }
    }

    /// Messages up to and including the next ReadyForQuery.
    pub async fn until_ready(&mut self) -> Vec<PgWireBackendMessage> {
        let mut messages = Vec::new();
        while let Some(message) = self.recv().await {
            let ready = matches!(message, PgWireBackendMessage::ReadyForQuery(_));
            messages.push(message);
            if ready {
                return messages;
            }
        }
        panic!("connection closed before ReadyForQuery: {messages:?}");
    }

    /// The raw bytes still buffered (for framing checks).
    pub fn pending(&self) -> usize {
        self.input.remaining()
    }
}

/// A compact name for each backend message, for sequence assertions.
pub fn kind(message: &PgWireBackendMessage) -> String {
    use PgWireBackendMessage as M;
    match message {
        M::Authentication(_) => "R".into(),
        M::ParameterStatus(_) => "S".into(),
        M::BackendKeyData(_) => "K".into(),
        M::ReadyForQuery(r) => format!("Z{}", r.status as u8 as char),
        M::RowDescription(_) => "T".into(),
        M::DataRow(_) => "D".into(),
        M::CommandComplete(c) => format!("C:{}", c.tag),
        M::ErrorResponse(_) => "E".into(),
        M::NoticeResponse(_) => "N".into(),
        M::EmptyQueryResponse(_) => "I".into(),
        M::ParseComplete(_) => "1".into(),
        M::BindComplete(_) => "2".into(),
        M::CloseComplete(_) => "3".into(),
        M::ParameterDescription(_) => "t".into(),
        M::NoData(_) => "n".into(),
        M::CopyOutResponse(_) => "H".into(),
        M::CopyInResponse(_) => "G".into(),
        M::CopyData(_) => "d".into(),
        M::CopyDone(_) => "c".into(),
        other => format!("{other:?}"),
    }
}

/// Field `code` of an ErrorResponse.
pub fn error_field(message: &PgWireBackendMessage, code: u8) -> Option<String> {
    match message {
        PgWireBackendMessage::ErrorResponse(e) => e
            .fields
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, v)| v.clone()),
        _ => None,
    }
}
