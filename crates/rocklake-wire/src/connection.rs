//! Query processing on one authenticated connection: the simple-query
//! protocol (multi-statement batches, COPY in both directions) and the
//! extended protocol (Parse / Bind / Describe / Execute / Close / Sync).
//!
//! This is written against `pgwire::messages` rather than pgwire's handler
//! traits because the handlers own the parts RockLake must control exactly:
//! the framing of binary COPY OUT (PostgreSQL sends the header even for zero
//! rows, pgwire does not), COPY IN inside a batch, ReadyForQuery status taken
//! from the session instead of guessed from command tags, and every field of
//! an ErrorResponse.

use std::collections::HashMap;

use rocklake_types::datum::{ColumnDef, PgType, Row};
use rocklake_types::output::QueryOutput;
use rocklake_types::rows::{ResultRows, RowRef};
use rocklake_types::{SqlError, SqlState};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::backend::{self, Severity, FORMAT_BINARY, FORMAT_TEXT};
use crate::frontend::FrontendMessage;
use crate::session::SqlSession;
use crate::transport::{ConnectionError, Transport};
use pgwire::messages::copy::{CopyDone, CopyInResponse, CopyOutResponse};
use pgwire::messages::extendedquery::{BindComplete, CloseComplete, ParseComplete};
use rocklake_types::copy::binary::{self as copy_binary, CopyInDecoder};
use rocklake_types::copy::text::{self as copy_text, TextCopyFormat};

/// The decoder of a COPY IN stream: binary rows decoded as they arrive, or
/// text collected and decoded at CopyDone.
enum InDecoder {
    Binary(CopyInDecoder),
    Text {
        data: Vec<u8>,
        columns: Vec<ColumnDef>,
        format: TextCopyFormat,
    },
}

impl InDecoder {
    fn feed(&mut self, chunk: &[u8]) -> Result<(), SqlError> {
        match self {
            InDecoder::Binary(d) => d.feed(chunk),
            InDecoder::Text { data, .. } => {
                data.extend_from_slice(chunk);
                Ok(())
            }
        }
    }

    fn finish(self) -> Result<Vec<Row>, SqlError> {
        match self {
            InDecoder::Binary(d) => d.finish(),
            InDecoder::Text {
                data,
                columns,
                format,
            } => copy_text::decode(&data, &columns, &format),
        }
    }
}

/// A parsed (and described) statement.
struct Prepared {
    sql: String,
    param_types: Vec<u32>,
    columns: Vec<ColumnDef>,
}

/// A bound statement, ready to execute.
struct Portal {
    sql: String,
    columns: Vec<ColumnDef>,
    formats: Vec<i16>,
}

/// Which protocol started a COPY; it decides how errors are recovered from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Simple,
    Extended,
}

/// How a statement's processing ended.
enum Outcome {
    Done,
    Failed,
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
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Connection<S> {
    /// A connection that has completed startup.
    pub fn new(transport: Transport<S>, session: Box<dyn SqlSession>) -> Self {
        Connection {
            transport,
            session,
            statements: HashMap::new(),
            portals: HashMap::new(),
            skip_until_sync: false,
        }
    }

    /// Serves messages until the client terminates or disconnects.
    pub async fn run(mut self) -> Result<(), ConnectionError> {
        let result = self.serve_messages().await;
        if let Err(ConnectionError::Protocol(violation)) = &result {
            let error = SqlError::new(SqlState::PROTOCOL_VIOLATION, violation.0.clone());
            backend::put_error(&mut self.transport.out, &error, Severity::Fatal);
        }
        self.transport.shutdown().await;
        result
    }

    async fn serve_messages(&mut self) -> Result<(), ConnectionError> {
        while let Some(message) = self.transport.read_message().await? {
            if self.skip_until_sync
                && !matches!(message, FrontendMessage::Sync | FrontendMessage::Terminate)
            {
                continue;
            }
            match message {
                FrontendMessage::Query(sql) => self.simple_query(&sql).await?,
                FrontendMessage::Parse {
                    name,
                    sql,
                    param_types,
                } => self.parse(name, sql, param_types).await,
                FrontendMessage::Bind {
                    portal,
                    statement,
                    params,
                    result_formats,
                } => self.bind(portal, &statement, params.len(), result_formats),
                FrontendMessage::Describe { kind, name } => self.describe(kind, &name),
                FrontendMessage::Execute { portal, max_rows } => {
                    self.execute(&portal, max_rows).await?
                }
                FrontendMessage::Close { kind, name } => self.close(kind, &name),
                FrontendMessage::Sync => {
                    self.skip_until_sync = false;
                    backend::put_ready(&mut self.transport.out, self.session.status());
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
        }
    }

    async fn simple_query(&mut self, sql: &str) -> Result<(), ConnectionError> {
        // A simple Query destroys the unnamed statement and portal.
        self.statements.remove("");
        self.portals.remove("");
        let results = if is_empty_query(sql) {
            Vec::new()
        } else {
            self.session.execute(sql).await
        };
        if results.is_empty() {
            backend::put_empty_query(&mut self.transport.out);
        }
        let count = results.len();
        for (index, result) in results.into_iter().enumerate() {
            let output = match result {
                Ok(output) => output,
                Err(error) => {
                    self.fail(&error, Mode::Simple);
                    break;
                }
            };
            if let QueryOutput::CopyIn { columns, text } = output {
                if index + 1 < count {
                    tracing::warn!(
                        dropped = count - index - 1,
                        "session returned results after COPY FROM STDIN; ignoring them"
                    );
                }
                self.copy_in(columns, text, Mode::Simple).await?;
                break;
            }
            let formats = match &output {
                QueryOutput::Rows { columns, .. } => {
                    let formats = vec![FORMAT_TEXT; columns.len()];
                    let out = &mut self.transport.out;
                    if let Err(e) = backend::put_row_description(out, columns, &formats) {
                        self.fail(&e, Mode::Simple);
                        break;
                    }
                    formats
                }
                _ => Vec::new(),
            };
            if let Outcome::Failed = self.send_output(output, &formats, Mode::Simple, 0).await? {
                break;
            }
        }
        backend::put_ready(&mut self.transport.out, self.session.status());
        self.transport.flush().await
    }

    /// Sends one statement's result (without RowDescription, which the caller
    /// sends in simple mode and Describe sends in extended mode).
    async fn send_output(
        &mut self,
        output: QueryOutput,
        formats: &[i16],
        mode: Mode,
        max_rows: i32,
    ) -> Result<Outcome, ConnectionError> {
        match output {
            QueryOutput::Rows { columns, rows } => {
                if max_rows > 0 && rows.len() > max_rows as usize {
                    let error = SqlError::unsupported(format!(
                        "fetching {max_rows} of {} rows from a portal is not supported",
                        rows.len()
                    ));
                    self.fail(&error, mode);
                    return Ok(Outcome::Failed);
                }
                let count = rows.len();
                for row in rows.iter() {
                    let out = &mut self.transport.out;
                    if let Err(e) = backend::put_data_row(out, &columns, formats, row.iter()) {
                        tracing::error!(error = %e, "cannot encode a result row");
                        self.fail(&e, mode);
                        return Ok(Outcome::Failed);
                    }
                    self.transport.flush_if_full().await?;
                }
                self.complete(&format!("SELECT {count}"), mode)
            }
            QueryOutput::Command { tag, notices } => {
                for notice in &notices {
                    backend::put_notice(&mut self.transport.out, notice);
                }
                self.complete(&tag, mode)
            }
            QueryOutput::CopyOut { columns, rows } => self.copy_out(&columns, &rows, mode).await,
            QueryOutput::CopyIn { columns, text } => self.copy_in(columns, text, mode).await,
        }
    }

    fn complete(&mut self, tag: &str, mode: Mode) -> Result<Outcome, ConnectionError> {
        match backend::put_command_complete(&mut self.transport.out, tag) {
            Ok(()) => Ok(Outcome::Done),
            Err(e) => {
                self.fail(&e, mode);
                Ok(Outcome::Failed)
            }
        }
    }

    /// Binary COPY OUT framed like PostgreSQL: CopyOutResponse, the header in
    /// the first CopyData together with row 1, one CopyData per further row,
    /// the trailer in its own CopyData (or header and trailer together for
    /// zero rows), CopyDone, `COPY n`.
    async fn copy_out(
        &mut self,
        columns: &[ColumnDef],
        rows: &ResultRows,
        mode: Mode,
    ) -> Result<Outcome, ConnectionError> {
        let types: Vec<PgType> = columns.iter().map(|c| c.pg_type.clone()).collect();
        let response =
            CopyOutResponse::new(1, types.len() as i16, vec![FORMAT_BINARY; types.len()]);
        if let Err(e) = backend::put(&mut self.transport.out, &response) {
            self.fail(&e, mode);
            return Ok(Outcome::Failed);
        }
        let frame = |out: &mut bytes::BytesMut, first: bool, row: Option<RowRef<'_>>| {
            let at = backend::begin_frame(out, b'd');
            if first {
                copy_binary::put_header(out);
            }
            match row {
                Some(row) => copy_binary::put_tuple(out, &types, row.iter())?,
                None => copy_binary::put_trailer(out),
            }
            backend::end_frame(out, at)
        };
        let mut first = true;
        for row in rows.iter() {
            let out = &mut self.transport.out;
            let start = out.len();
            if let Err(e) = frame(out, first, Some(row)) {
                // An ErrorResponse ends COPY OUT mode on the client side.
                out.truncate(start);
                tracing::error!(error = %e, "cannot encode a COPY row");
                self.fail(&e, mode);
                return Ok(Outcome::Failed);
            }
            first = false;
            self.transport.flush_if_full().await?;
        }
        let out = &mut self.transport.out;
        if let Err(e) = frame(out, first, None) {
            self.fail(&e, mode);
            return Ok(Outcome::Failed);
        }
        let _ = backend::put(out, &CopyDone::new());
        self.complete(&format!("COPY {}", rows.len()), mode)
    }

    /// COPY IN: CopyInResponse, then CopyData decoded (binary: as it arrives;
    /// text: at the end) until CopyDone (hand the rows to the session) or
    /// CopyFail / bad data (abort the session's COPY and report the error).
    async fn copy_in(
        &mut self,
        columns: Vec<ColumnDef>,
        text: Option<TextCopyFormat>,
        mode: Mode,
    ) -> Result<Outcome, ConnectionError> {
        let format = if text.is_some() {
            FORMAT_TEXT
        } else {
            FORMAT_BINARY
        };
        let response = CopyInResponse::new(
            format as i8,
            columns.len() as i16,
            vec![format; columns.len()],
        );
        if let Err(e) = backend::put(&mut self.transport.out, &response) {
            self.session.copy_in_abort().await;
            self.fail(&e, mode);
            return Ok(Outcome::Failed);
        }
        self.transport.flush().await?;
        let mut decoder = match text {
            None => InDecoder::Binary(CopyInDecoder::new(columns)),
            Some(format) => InDecoder::Text {
                data: Vec::new(),
                columns,
                format,
            },
        };
        let failure = loop {
            let message = match self.transport.read_message().await {
                Ok(Some(message)) => message,
                Ok(None) => {
                    self.session.copy_in_abort().await;
                    return Err(ConnectionError::Io(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "client disconnected during COPY FROM STDIN",
                    )));
                }
                Err(e) => {
                    self.session.copy_in_abort().await;
                    return Err(e);
                }
            };
            match message {
                FrontendMessage::CopyData(data) => {
                    if let Err(e) = decoder.feed(&data) {
                        break e;
                    }
                }
                FrontendMessage::CopyDone => {
                    let rows = match decoder.finish() {
                        Ok(rows) => rows,
                        Err(e) => break e,
                    };
                    return match self.session.copy_in_finish(rows).await {
                        Ok(QueryOutput::Command { tag, notices }) => {
                            for notice in &notices {
                                backend::put_notice(&mut self.transport.out, notice);
                            }
                            self.complete(&tag, mode)
                        }
                        Ok(other) => {
                            let error = SqlError::internal(format!(
                                "COPY FROM STDIN finished with an unexpected result: {other:?}"
                            ));
                            self.fail(&error, mode);
                            Ok(Outcome::Failed)
                        }
                        Err(error) => {
                            self.fail(&error, mode);
                            Ok(Outcome::Failed)
                        }
                    };
                }
                FrontendMessage::CopyFail(reason) => {
                    break SqlError::new(
                        SqlState::QUERY_CANCELED,
                        format!("COPY from stdin failed: {reason}"),
                    );
                }
                FrontendMessage::Flush | FrontendMessage::Sync => {}
                other => {
                    break SqlError::new(
                        SqlState::PROTOCOL_VIOLATION,
                        format!(
                            "unexpected message during COPY from stdin: {}",
                            message_name(&other)
                        ),
                    );
                }
            }
        };
        self.session.copy_in_abort().await;
        self.fail(&failure, mode);
        Ok(Outcome::Failed)
    }

    async fn parse(&mut self, name: String, sql: String, param_types: Vec<u32>) {
        if !name.is_empty() && self.statements.contains_key(&name) {
            let error = SqlError::new(
                SqlState::DUPLICATE_PREPARED_STATEMENT,
                format!("prepared statement \"{name}\" already exists"),
            );
            return self.fail(&error, Mode::Extended);
        }
        let columns = if is_empty_query(&sql) {
            Vec::new()
        } else {
            match self.session.describe(&sql).await {
                Ok(columns) => columns,
                Err(error) => return self.fail(&error, Mode::Extended),
            }
        };
        self.statements.insert(
            name,
            Prepared {
                sql,
                param_types,
                columns,
            },
        );
        let _ = backend::put(&mut self.transport.out, &ParseComplete::new());
    }

    fn bind(&mut self, portal: String, statement: &str, param_count: usize, formats: Vec<i16>) {
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
        if param_count > 0 {
            let error =
                SqlError::unsupported("bind parameters are not supported; inline the values");
            return self.fail(&error, Mode::Extended);
        }
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
                columns,
                formats,
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
        let (sql, formats) = (bound.sql.clone(), bound.formats.clone());
        let mut results = self.session.execute(&sql).await.into_iter();
        let Some(first) = results.next() else {
            backend::put_empty_query(&mut self.transport.out);
            return Ok(());
        };
        let outcome = match first {
            Ok(output) => {
                self.send_output(output, &formats, Mode::Extended, max_rows)
                    .await?
            }
            Err(error) => {
                self.fail(&error, Mode::Extended);
                Outcome::Failed
            }
        };
        if matches!(outcome, Outcome::Done) && results.next().is_some() {
            let error = SqlError::new(
                SqlState::SYNTAX_ERROR,
                "cannot insert multiple commands into a prepared statement",
            );
            self.fail(&error, Mode::Extended);
        }
        Ok(())
    }
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

fn message_name(message: &FrontendMessage) -> &'static str {
    match message {
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
