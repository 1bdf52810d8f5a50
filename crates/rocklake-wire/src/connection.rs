//! Query processing on one authenticated connection: the simple-query
//! protocol (multi-statement batches, COPY in both directions) and the
//! extended protocol (Parse / Bind / Describe / Execute / Close / Sync).
//!
//! The session sends each statement's results to a `ClientSink` as they
//! are produced, which encodes them straight into the connection's output
//! buffer and writes it out whenever it fills: a result streams to the
//! client, and a client that stops reading stops the statement producing.
//!
//! This is written against `pgwire::messages` rather than pgwire's handler
//! traits because the handlers own the parts RockLake must control exactly:
//! the framing of binary COPY OUT (PostgreSQL sends the header even for zero
//! rows, pgwire does not), COPY IN inside a batch, ReadyForQuery status taken
//! from the session instead of guessed from command tags, and every field of
//! an ErrorResponse.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use rocklake_types::datum::ColumnDef;
use rocklake_types::params::{BindParam, Deallocate, Described, UNKNOWN_OID};
use rocklake_types::{Interrupt, SinkError, SqlError, SqlState};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use crate::backend::{self, Severity, FORMAT_BINARY, FORMAT_TEXT};
use crate::client_sink::{ClientSink, HeldRows, Mode};
use crate::frontend::FrontendMessage;
use crate::session::SqlSession;
use crate::transport::{ConnectionError, Transport};
use pgwire::messages::extendedquery::{BindComplete, CloseComplete, ParseComplete};

/// A parsed (and described) statement.
struct Prepared {
    sql: String,
    /// Parameter types as Parse declared them (0: not given).
    declared: Vec<u32>,
    /// Parameter types as Describe reports them (declared or inferred).
    param_types: Vec<u32>,
    columns: Vec<ColumnDef>,
}

/// A bound statement, ready to execute.
struct Portal {
    sql: String,
    params: Vec<BindParam>,
    columns: Vec<ColumnDef>,
    formats: Vec<i16>,
    /// The rest of a result an Execute's row limit suspended: later
    /// Executes of the portal send it instead of running the statement.
    suspended: Option<HeldRows>,
}

/// The per-connection protocol state machine.
pub struct Connection<S> {
    transport: Transport<S>,
    session: Box<dyn SqlSession>,
    statements: HashMap<String, Prepared>,
    portals: HashMap<String, Portal>,
    /// After an error in extended-protocol mode, messages are skipped until
    /// Sync.
    skip_until_sync: bool,
    /// Becomes true when the server shuts down: the connection then ends
    /// as soon as it is waiting for its client.
    shutdown: Option<watch::Receiver<bool>>,
    /// The session's interrupt: the connection ends when it says so while
    /// the session waits for its client.
    interrupt: Option<Arc<Interrupt>>,
    /// Notifications for the client (LISTEN/NOTIFY).
    mailbox: Option<Arc<rocklake_types::notify::Mailbox>>,
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Connection<S> {
    /// A connection that has completed startup.
    pub fn new(transport: Transport<S>, session: Box<dyn SqlSession>) -> Self {
        let mailbox = session.mailbox();
        Connection {
            transport,
            session,
            mailbox,
            statements: HashMap::new(),
            portals: HashMap::new(),
            skip_until_sync: false,
            shutdown: None,
            interrupt: None,
        }
    }

    /// Ends the connection (FATAL 57P01) when `interrupt` is told to
    /// terminate the session while it waits for its client.
    pub fn with_interrupt(mut self, interrupt: Arc<Interrupt>) -> Self {
        self.interrupt = Some(interrupt);
        self
    }

    /// Ends the connection (FATAL 57P01) when `shutdown` becomes true while
    /// it waits for its client.
    pub fn with_shutdown(mut self, shutdown: watch::Receiver<bool>) -> Self {
        self.shutdown = Some(shutdown);
        self
    }

    /// Serves messages until the client terminates or disconnects.
    pub async fn run(mut self) -> Result<(), ConnectionError> {
        let result = self.serve_messages().await;
        if let Some(error) = result.as_ref().err().and_then(ConnectionError::fatal_error) {
            backend::put_error(&mut self.transport.out, &error, Severity::Fatal);
        }
        self.transport.shutdown().await;
        result
    }

    /// The next message from the client. While the session is inside a
    /// transaction block it waits at most its idle-in-transaction timeout;
    /// a server shutdown ends the wait.
    async fn next_message(&mut self) -> Result<Option<FrontendMessage>, ConnectionError> {
        let idle_limit = match self.session.status() {
            rocklake_types::TxStatus::Idle => None,
            _ => self.session.idle_in_transaction_timeout(),
        };
        let idle = async {
            match idle_limit {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let mut shutdown = self.shutdown.clone();
        let interrupt = self.interrupt.clone();
        let stopping = async {
            let server = async {
                match &mut shutdown {
                    Some(shutdown) => {
                        let _ = shutdown.wait_for(|stop| *stop).await;
                    }
                    None => std::future::pending().await,
                }
            };
            let session = async {
                match &interrupt {
                    Some(interrupt) => interrupt.terminated().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = server => {},
                _ = session => {},
            }
        };
        // Outside a transaction block, notifications go out as they arrive.
        let deliver = self
            .mailbox
            .clone()
            .filter(|_| self.session.status() == rocklake_types::TxStatus::Idle);
        tokio::pin!(idle, stopping);
        loop {
            let arrival = async {
                match &deliver {
                    Some(mailbox) => mailbox.arrival().await,
                    None => std::future::pending().await,
                }
            };
            // Reading is cancel-safe (bytes read stay in the input buffer),
            // so a notification sent meanwhile loses nothing.
            tokio::select! {
                message = self.transport.read_message() => return message,
                _ = arrival => {
                    self.put_notifications();
                    self.transport.flush().await?;
                }
                _ = &mut idle => return Err(ConnectionError::Terminated(SqlError::new(
                    SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT,
                    "terminating connection due to idle-in-transaction timeout",
                ))),
                _ = &mut stopping => return Err(ConnectionError::Terminated(SqlError::new(
                    SqlState::ADMIN_SHUTDOWN,
                    "terminating connection due to administrator command",
                ))),
            }
        }
    }

    /// Sends the notifications waiting for the client.
    fn put_notifications(&mut self) {
        if let Some(mailbox) = &self.mailbox {
            for notification in mailbox.take() {
                backend::put_notification(&mut self.transport.out, &notification);
            }
        }
    }

    async fn serve_messages(&mut self) -> Result<(), ConnectionError> {
        while let Some(message) = self.next_message().await? {
            if self.skip_until_sync
                && !matches!(message, FrontendMessage::Sync | FrontendMessage::Terminate)
            {
                // The error is already queued: a Flush still sends it (as
                // PostgreSQL sends errors at once), so a client that waits
                // after Parse + Describe + Flush (asyncpg) hears of it.
                if matches!(message, FrontendMessage::Flush) {
                    self.transport.flush().await?;
                }
                continue;
            }
            match message {
                FrontendMessage::Query(sql) => self.simple_query(&sql).await?,
                FrontendMessage::Parse {
                    name,
                    sql,
                    param_types,
                } => self.parse(name, sql, param_types).await?,
                FrontendMessage::Bind {
                    portal,
                    statement,
                    param_formats,
                    params,
                    result_formats,
                } => self.bind(portal, &statement, &param_formats, params, result_formats),
                FrontendMessage::Describe { kind, name } => self.describe(kind, &name),
                FrontendMessage::Execute { portal, max_rows } => {
                    self.execute(&portal, max_rows).await?
                }
                FrontendMessage::Close { kind, name } => self.close(kind, &name),
                FrontendMessage::Sync => {
                    self.skip_until_sync = false;
                    self.ready_for_query();
                    self.transport.flush().await?;
                }
                FrontendMessage::Flush => self.transport.flush().await?,
                FrontendMessage::Terminate => return Ok(()),
                // Leftovers of a COPY IN that already failed: PostgreSQL
                // accepts and ignores them.
                FrontendMessage::CopyData(_)
                | FrontendMessage::CopyDone
                | FrontendMessage::CopyFail(_) => {}
                FrontendMessage::Password(_) => {
                    return Err(crate::frontend::ProtocolViolation(
                        "unexpected password message after authentication".to_string(),
                    )
                    .into())
                }
            }
            self.transport.flush_if_full().await?;
        }
        Ok(())
    }

    /// Queues an error; in extended mode also starts skipping until Sync.
    fn fail(&mut self, error: &SqlError, mode: Mode) {
        tracing::info!(code = %error.code, error = %error.message, "statement failed");
        backend::put_error(&mut self.transport.out, error, Severity::Error);
        if mode == Mode::Extended {
            self.skip_until_sync = true;
            self.session.protocol_error();
        }
    }

    /// Runs `sql` in the session with its results going to the client. A
    /// panic in the session ends the connection (FATAL XX000), never the
    /// server.
    async fn run_statements(
        &mut self,
        sql: &str,
        params: &[BindParam],
        mode: Mode,
        formats: Vec<i16>,
        max_rows: i32,
    ) -> Result<Option<HeldRows>, ConnectionError> {
        let mut sink = ClientSink::new(&mut self.transport, mode, formats, max_rows);
        // A Query message runs as the simple protocol (the lexer's notices
        // first, the last completion after the implicit commit); Execute as
        // the extended one.
        let running = match mode {
            Mode::Simple => self.session.run(sql, &mut sink),
            Mode::Extended => self.session.run_bound(sql, params, &mut sink),
        };
        let outcome = AssertUnwindSafe(running).catch_unwind().await;
        let failed = sink.failed;
        let held = sink.held.take();
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(SinkError::Connection(reason))) => {
                return Err(ConnectionError::Io(std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    reason,
                )))
            }
            Ok(Err(SinkError::Statement(error))) => self.fail(&error, mode),
            Err(panic) => return Err(ConnectionError::Panic(panic_message(&panic))),
        }
        if failed && mode == Mode::Extended {
            self.skip_until_sync = true;
        }
        for deallocated in self.session.take_deallocations() {
            match deallocated {
                Deallocate::All => self.statements.clear(),
                Deallocate::Named(name) => drop(self.statements.remove(&name)),
            }
        }
        Ok(held.filter(|_| !failed))
    }

    /// ParameterStatus for each reported setting that changed, then
    /// ReadyForQuery, as PostgreSQL ends a query cycle.
    fn ready_for_query(&mut self) {
        for (name, value) in self.session.take_reported_changes() {
            backend::put_parameter_status(&mut self.transport.out, &name, &value);
        }
        if self.session.status() == rocklake_types::TxStatus::Idle {
            self.put_notifications();
        }
        backend::put_ready(&mut self.transport.out, self.session.status());
    }

    async fn simple_query(&mut self, sql: &str) -> Result<(), ConnectionError> {
        // A simple Query destroys the unnamed statement and portal.
        self.statements.remove("");
        self.portals.remove("");
        if is_empty_query(sql) {
            backend::put_empty_query(&mut self.transport.out);
        } else {
            self.run_statements(sql, &[], Mode::Simple, Vec::new(), 0)
                .await?;
        }
        self.ready_for_query();
        self.transport.flush().await
    }

    async fn parse(
        &mut self,
        name: String,
        sql: String,
        param_types: Vec<u32>,
    ) -> Result<(), ConnectionError> {
        if !name.is_empty() && self.statements.contains_key(&name) {
            let error = SqlError::new(
                SqlState::DUPLICATE_PREPARED_STATEMENT,
                format!("prepared statement \"{name}\" already exists"),
            );
            self.fail(&error, Mode::Extended);
            return Ok(());
        }
        let described = if is_empty_query(&sql) {
            Described {
                params: param_types.clone(),
                ..Described::default()
            }
        } else {
            let described = AssertUnwindSafe(self.session.describe(&sql, &param_types))
                .catch_unwind()
                .await
                .map_err(|panic| ConnectionError::Panic(panic_message(&panic)))?;
            match described {
                Ok(described) => described,
                Err(error) => {
                    self.fail(&error, Mode::Extended);
                    return Ok(());
                }
            }
        };
        for notice in &described.notices {
            backend::put_notice(&mut self.transport.out, notice);
        }
        self.statements.insert(
            name,
            Prepared {
                sql,
                declared: param_types,
                param_types: described.params,
                columns: described.columns,
            },
        );
        let _ = backend::put(&mut self.transport.out, &ParseComplete::new());
        Ok(())
    }

    fn bind(
        &mut self,
        portal: String,
        statement: &str,
        param_formats: &[i16],
        values: Vec<Option<bytes::Bytes>>,
        formats: Vec<i16>,
    ) {
        let param_count = values.len();
        let Some(prepared) = self.statements.get(statement) else {
            let error = SqlError::new(
                SqlState::INVALID_SQL_STATEMENT_NAME,
                format!("prepared statement \"{statement}\" does not exist"),
            );
            return self.fail(&error, Mode::Extended);
        };
        if param_count != prepared.param_types.len() {
            let error = SqlError::new(
                SqlState::PROTOCOL_VIOLATION,
                format!(
                    "bind message supplies {param_count} parameters, but prepared statement \"{statement}\" requires {}",
                    prepared.param_types.len()
                ),
            );
            return self.fail(&error, Mode::Extended);
        }
        let params = match bind_params(prepared, param_formats, values) {
            Ok(params) => params,
            Err(error) => return self.fail(&error, Mode::Extended),
        };
        let columns = prepared.columns.clone();
        let formats = match result_formats(&formats, columns.len()) {
            Ok(formats) => formats,
            Err(error) => return self.fail(&error, Mode::Extended),
        };
        let sql = prepared.sql.clone();
        self.portals.insert(
            portal,
            Portal {
                sql,
                params,
                columns,
                formats,
                suspended: None,
            },
        );
        let _ = backend::put(&mut self.transport.out, &BindComplete::new());
    }

    fn describe(&mut self, kind: u8, name: &str) {
        let out = &mut self.transport.out;
        let result = match kind {
            b'S' => match self.statements.get(name) {
                Some(prepared) => backend::put_parameter_description(out, &prepared.param_types)
                    .and_then(|()| {
                        let formats = vec![FORMAT_TEXT; prepared.columns.len()];
                        describe_rows(out, &prepared.columns, &formats)
                    }),
                None => Err(SqlError::new(
                    SqlState::INVALID_SQL_STATEMENT_NAME,
                    format!("prepared statement \"{name}\" does not exist"),
                )),
            },
            b'P' => match self.portals.get(name) {
                Some(portal) => describe_rows(out, &portal.columns, &portal.formats),
                None => Err(SqlError::new(
                    SqlState::INVALID_CURSOR_NAME,
                    format!("portal \"{name}\" does not exist"),
                )),
            },
            other => Err(SqlError::new(
                SqlState::PROTOCOL_VIOLATION,
                format!("invalid DESCRIBE message subtype {other}"),
            )),
        };
        if let Err(error) = result {
            self.fail(&error, Mode::Extended);
        }
    }

    /// Close: forgetting an unknown name is not an error.
    fn close(&mut self, kind: u8, name: &str) {
        match kind {
            b'S' => drop(self.statements.remove(name)),
            b'P' => drop(self.portals.remove(name)),
            other => {
                let error = SqlError::new(
                    SqlState::PROTOCOL_VIOLATION,
                    format!("invalid CLOSE message subtype {other}"),
                );
                return self.fail(&error, Mode::Extended);
            }
        }
        let _ = backend::put(&mut self.transport.out, &CloseComplete::new());
    }

    async fn execute(&mut self, portal: &str, max_rows: i32) -> Result<(), ConnectionError> {
        let Some(bound) = self.portals.get(portal) else {
            let error = SqlError::new(
                SqlState::INVALID_CURSOR_NAME,
                format!("portal \"{portal}\" does not exist"),
            );
            self.fail(&error, Mode::Extended);
            return Ok(());
        };
        if is_empty_query(&bound.sql) {
            backend::put_empty_query(&mut self.transport.out);
            return Ok(());
        }
        if bound.suspended.is_some() {
            self.resume(portal, max_rows);
            return Ok(());
        }
        let (sql, params, formats) = (
            bound.sql.clone(),
            bound.params.clone(),
            bound.formats.clone(),
        );
        let held = self
            .run_statements(&sql, &params, Mode::Extended, formats, max_rows)
            .await?;
        if let (Some(held), Some(bound)) = (held, self.portals.get_mut(portal)) {
            bound.suspended = Some(held);
        }
        Ok(())
    }

    /// An Execute of a suspended portal: the next `max_rows` rows held (all
    /// if 0), then PortalSuspended, or CommandComplete once none are left
    /// (tagged with the rows this Execute sent, as PostgreSQL tags a fetch).
    fn resume(&mut self, portal: &str, max_rows: i32) {
        let Some(held) = self
            .portals
            .get_mut(portal)
            .and_then(|p| p.suspended.as_mut())
        else {
            return;
        };
        let limit = usize::try_from(max_rows)
            .ok()
            .filter(|n| *n > 0)
            .unwrap_or(usize::MAX);
        let mut sent = 0;
        while sent < limit {
            let Some(row) = held.rows.pop_front() else {
                break;
            };
            held.bytes -= row.len();
            self.transport.out.extend_from_slice(&row);
            sent += 1;
        }
        if !held.rows.is_empty() {
            backend::put_portal_suspended(&mut self.transport.out);
            return;
        }
        let tag = match held.tag.split_once(' ') {
            Some(("SELECT", _)) => format!("SELECT {sent}"),
            _ => held.tag.clone(),
        };
        // The portal stays exhausted: a later Execute returns no rows.
        let _ = backend::put_command_complete(&mut self.transport.out, &tag);
    }
}

/// The values of a Bind for `prepared`, each with the type the session
/// decodes it by: declared by Parse; else, for a binary value, the type
/// Describe reported (the client encoded it so); else none (text of unknown
/// type, resolved by the statement).
fn bind_params(
    prepared: &Prepared,
    formats: &[i16],
    values: Vec<Option<bytes::Bytes>>,
) -> Result<Vec<BindParam>, SqlError> {
    if formats.len() > 1 && formats.len() != values.len() {
        return Err(SqlError::new(
            SqlState::PROTOCOL_VIOLATION,
            format!(
                "bind message has {} parameter formats but {} parameters",
                formats.len(),
                values.len()
            ),
        ));
    }
    values
        .into_iter()
        .enumerate()
        .map(|(i, value)| {
            let format = match formats {
                [] => FORMAT_TEXT,
                [one] => *one,
                many => many[i],
            };
            if format != FORMAT_TEXT && format != FORMAT_BINARY {
                return Err(SqlError::new(
                    SqlState::PROTOCOL_VIOLATION,
                    format!("unsupported format code: {format}"),
                ));
            }
            let binary = format == FORMAT_BINARY;
            let declared = prepared.declared.get(i).copied().unwrap_or(0);
            let type_oid = match declared {
                0 | UNKNOWN_OID if binary => prepared.param_types.get(i).copied().unwrap_or(0),
                UNKNOWN_OID => 0,
                oid => oid,
            };
            Ok(BindParam {
                type_oid,
                binary,
                value: value.map(|v| v.to_vec()),
            })
        })
        .collect()
}

/// The text of a panic's payload.
fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
}

/// RowDescription, or NoData for a statement without result columns.
fn describe_rows(
    out: &mut bytes::BytesMut,
    columns: &[ColumnDef],
    formats: &[i16],
) -> Result<(), SqlError> {
    if columns.is_empty() {
        backend::put_no_data(out);
        Ok(())
    } else {
        backend::put_row_description(out, columns, formats)
    }
}

/// Expands Bind's result format codes to one per column.
fn result_formats(codes: &[i16], columns: usize) -> Result<Vec<i16>, SqlError> {
    let formats = match codes.len() {
        0 => vec![FORMAT_TEXT; columns],
        1 => vec![codes[0]; columns],
        n if n == columns => codes.to_vec(),
        n => {
            return Err(SqlError::new(
                SqlState::PROTOCOL_VIOLATION,
                format!("bind message has {n} result formats but query has {columns} columns"),
            ))
        }
    };
    if let Some(bad) = formats
        .iter()
        .find(|f| **f != FORMAT_TEXT && **f != FORMAT_BINARY)
    {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("unsupported format code: {bad}"),
        ));
    }
    Ok(formats)
}

/// True for a query string with nothing but whitespace and semicolons.
fn is_empty_query(sql: &str) -> bool {
    sql.trim_matches(|c: char| c.is_whitespace() || c == ';')
        .is_empty()
}
