//! [`ClientSink`]: a statement's results going to the client. It encodes
//! them straight into the connection's output buffer and writes it out
//! whenever it fills, so a result streams to the client and a client that
//! stops reading stops the statement producing; rows beyond an Execute's
//! row limit are held for the suspended portal; COPY IN data is read and
//! decoded as it arrives ([`InDecoder`]).

use async_trait::async_trait;
use rocklake_types::copy::binary::{self as copy_binary, CopyInDecoder};
use rocklake_types::copy::encoded::EncodedTuples;
use rocklake_types::copy::text as copy_text;
use rocklake_types::copy::CopyFormat;
use rocklake_types::datum::{ColumnDef, PgType, Row};
use rocklake_types::output::{Notice, ResultSink, SinkResult};
use rocklake_types::rows::{ResultRows, RowRef};
use rocklake_types::{SinkError, SqlError, SqlState};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::backend::{self, Severity, FORMAT_BINARY, FORMAT_TEXT};
use crate::frontend::FrontendMessage;
use crate::transport::Transport;
use pgwire::messages::copy::{CopyDone, CopyInResponse, CopyOutResponse};

/// The decoder of a COPY IN stream: binary rows decoded as they arrive, or
/// text or CSV collected and decoded at CopyDone.
pub(crate) enum InDecoder {
    Binary(CopyInDecoder),
    Text {
        data: Vec<u8>,
        columns: Vec<ColumnDef>,
        format: CopyFormat,
    },
}

impl InDecoder {
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<(), SqlError> {
        match self {
            InDecoder::Binary(d) => d.feed(chunk),
            InDecoder::Text { data, .. } => {
                data.extend_from_slice(chunk);
                Ok(())
            }
        }
    }

    pub(crate) fn finish(self) -> Result<Vec<Row>, SqlError> {
        match self {
            InDecoder::Binary(d) => d.finish(),
            InDecoder::Text {
                data,
                columns,
                format: CopyFormat::Csv(csv),
            } => csv.decode(&data, &columns),
            InDecoder::Text {
                data,
                columns,
                format: CopyFormat::Text(text),
            } => copy_text::decode(&data, &columns, &text),
            InDecoder::Text { .. } => Err(SqlError::internal("binary COPY decoded as text")),
        }
    }
}

/// Result rows beyond an Execute's row limit, encoded as DataRows, and the
/// statement's command tag.
#[derive(Default)]
pub(crate) struct HeldRows {
    /// The DataRows, in order.
    pub(crate) rows: std::collections::VecDeque<bytes::Bytes>,
    /// Their size.
    pub(crate) bytes: usize,
    /// The statement's command tag.
    pub(crate) tag: String,
}

/// The most a suspended portal holds (its rows are kept encoded until the
/// client fetches them).
pub(crate) const MAX_HELD_BYTES: usize = 256 << 20;

/// Which protocol a statement runs under; it decides what precedes rows
/// and how errors are recovered from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Simple query: RowDescription before rows, text format.
    Simple,
    /// Extended query (Execute): the portal's formats, Describe sent the
    /// RowDescription, an error skips messages until Sync.
    Extended,
}

/// What a [`ClientSink`] is in the middle of.
enum Sending {
    Nothing,
    /// DataRows of a result set, with the formats of its columns.
    Rows(Vec<ColumnDef>, Vec<i16>),
    /// Binary COPY OUT of rows with these types; whether the stream's
    /// header has been sent.
    CopyOut(Vec<PgType>, bool),
    /// Text or CSV COPY OUT: one line per row, in this format, with the
    /// columns FORCE_QUOTE names.
    CopyOutText(CopyFormat, Vec<bool>),
}

/// What a binary COPY OUT frame carries after the stream header.
enum CopyFrame<'r> {
    /// A row, to encode as a tuple.
    Row(RowRef<'r>),
    /// A tuple already encoded.
    Encoded(&'r [u8]),
    /// The stream's trailer.
    Trailer,
}

/// A statement's results going to the client (see the module docs).
pub(crate) struct ClientSink<'c, S> {
    transport: &'c mut Transport<S>,
    mode: Mode,
    /// The portal's result formats (extended mode).
    formats: Vec<i16>,
    /// Rows an Execute may return (0 for all).
    max_rows: usize,
    sent_rows: usize,
    state: Sending,
    /// Whether a statement failed (extended mode then skips until Sync).
    pub(crate) failed: bool,
    /// Rows beyond `max_rows`, for the portal to send on later Executes.
    pub(crate) held: Option<HeldRows>,
}

impl<'c, S: AsyncRead + AsyncWrite + Unpin + Send> ClientSink<'c, S> {
    pub(crate) fn new(
        transport: &'c mut Transport<S>,
        mode: Mode,
        formats: Vec<i16>,
        max_rows: i32,
    ) -> Self {
        ClientSink {
            transport,
            mode,
            formats,
            max_rows: usize::try_from(max_rows).unwrap_or(0),
            sent_rows: 0,
            state: Sending::Nothing,
            failed: false,
            held: None,
        }
    }

    /// Writes the buffered output once it is large.
    async fn flush_if_full(&mut self) -> SinkResult<()> {
        self.transport
            .flush_if_full()
            .await
            .map_err(|e| SinkError::Connection(e.to_string()))
    }

    /// One binary COPY OUT frame (CopyData message): the stream header in
    /// the first, as PostgreSQL sends it (DuckDB's reader refuses a message
    /// holding the header alone), then a tuple or the trailer.
    fn copy_frame(&mut self, frame: CopyFrame<'_>) -> Result<(), SqlError> {
        let Sending::CopyOut(types, started) = &mut self.state else {
            return Err(SqlError::internal("COPY data outside a COPY"));
        };
        let out = &mut self.transport.out;
        let start = out.len();
        let result = (|| {
            let at = backend::begin_frame(out, b'd');
            if !*started {
                copy_binary::put_header(out);
            }
            match frame {
                CopyFrame::Row(row) => copy_binary::put_tuple(out, types, row.iter())?,
                CopyFrame::Encoded(tuple) => out.extend_from_slice(tuple),
                CopyFrame::Trailer => copy_binary::put_trailer(out),
            }
            backend::end_frame(out, at)
        })();
        match result {
            Ok(()) => {
                *started = true;
                Ok(())
            }
            Err(e) => {
                out.truncate(start);
                Err(e)
            }
        }
    }

    async fn read_copy_data(
        &mut self,
        mut decoder: InDecoder,
    ) -> SinkResult<Result<Vec<Row>, SqlError>> {
        loop {
            let message = match self.transport.read_message().await {
                Ok(Some(message)) => message,
                Ok(None) => {
                    return Err(SinkError::Connection(
                        "client disconnected during COPY FROM STDIN".to_string(),
                    ))
                }
                Err(e) => return Err(SinkError::Connection(e.to_string())),
            };
            match message {
                FrontendMessage::CopyData(data) => {
                    if let Err(e) = decoder.feed(&data) {
                        return Ok(Err(e));
                    }
                }
                FrontendMessage::CopyDone => return Ok(decoder.finish()),
                FrontendMessage::CopyFail(reason) => {
                    return Ok(Err(SqlError::new(
                        SqlState::QUERY_CANCELED,
                        format!("COPY from stdin failed: {reason}"),
                    )))
                }
                FrontendMessage::Flush | FrontendMessage::Sync => {}
                other => {
                    return Ok(Err(SqlError::new(
                        SqlState::PROTOCOL_VIOLATION,
                        format!(
                            "unexpected message during COPY from stdin: {}",
                            other.name()
                        ),
                    )))
                }
            }
        }
    }
}

#[async_trait]
impl<S: AsyncRead + AsyncWrite + Unpin + Send> ResultSink for ClientSink<'_, S> {
    async fn begin_rows(&mut self, columns: &[ColumnDef]) -> SinkResult<()> {
        let formats = match self.mode {
            Mode::Simple => {
                let formats = vec![FORMAT_TEXT; columns.len()];
                backend::put_row_description(&mut self.transport.out, columns, &formats)
                    .map_err(SinkError::Statement)?;
                formats
            }
            Mode::Extended => self.formats.clone(),
        };
        self.sent_rows = 0;
        self.state = Sending::Rows(columns.to_vec(), formats);
        Ok(())
    }

    async fn begin_copy_out(
        &mut self,
        columns: &[ColumnDef],
        format: &CopyFormat,
    ) -> SinkResult<()> {
        let types: Vec<PgType> = columns.iter().map(|c| c.pg_type.clone()).collect();
        let (overall, each) = match format {
            CopyFormat::Binary => (1, FORMAT_BINARY),
            _ => (0, FORMAT_TEXT),
        };
        let response = CopyOutResponse::new(overall, types.len() as i16, vec![each; types.len()]);
        backend::put(&mut self.transport.out, &response).map_err(SinkError::Statement)?;
        self.state = match format {
            CopyFormat::Binary => Sending::CopyOut(types, false),
            CopyFormat::Csv(csv) => {
                let forced = columns.iter().map(|c| csv.forces(&c.name)).collect();
                if csv.header {
                    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
                    let mut line = Vec::new();
                    csv.put_header(&mut line, &names);
                    backend::put_copy_data(&mut self.transport.out, &line);
                }
                Sending::CopyOutText(format.clone(), forced)
            }
            CopyFormat::Text(text) => {
                if text.header {
                    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
                    let mut line = Vec::new();
                    text.put_header(&mut line, &names);
                    backend::put_copy_data(&mut self.transport.out, &line);
                }
                Sending::CopyOutText(format.clone(), Vec::new())
            }
        };
        Ok(())
    }

    async fn rows(&mut self, rows: &ResultRows) -> SinkResult<()> {
        for row in rows.iter() {
            match &self.state {
                Sending::Rows(columns, formats) => {
                    if self.max_rows > 0 && self.sent_rows >= self.max_rows {
                        let mut encoded = bytes::BytesMut::new();
                        backend::put_data_row(&mut encoded, columns, formats, row.iter())
                            .map_err(SinkError::Statement)?;
                        let held = self.held.get_or_insert_with(HeldRows::default);
                        held.bytes += encoded.len();
                        if held.bytes > MAX_HELD_BYTES {
                            return Err(SinkError::Statement(SqlError::new(
                                SqlState::PROGRAM_LIMIT_EXCEEDED,
                                format!(
                                    "the rows of a portal suspended by an Execute row limit may take at most {} MiB; fetch more rows per Execute",
                                    MAX_HELD_BYTES >> 20
                                ),
                            )));
                        }
                        held.rows.push_back(encoded.freeze());
                        continue;
                    }
                    let out = &mut self.transport.out;
                    backend::put_data_row(out, columns, formats, row.iter()).map_err(|e| {
                        tracing::error!(error = %e, "cannot encode a result row");
                        SinkError::Statement(e)
                    })?;
                    self.sent_rows += 1;
                }
                Sending::CopyOutText(format, forced) => {
                    let mut line = Vec::new();
                    match format {
                        CopyFormat::Csv(csv) => csv.put_row(&mut line, row.iter(), forced),
                        CopyFormat::Text(text) => text.put_row(&mut line, row.iter()),
                        CopyFormat::Binary => unreachable!("binary COPY is CopyOut"),
                    }
                    backend::put_copy_data(&mut self.transport.out, &line);
                }
                Sending::CopyOut(..) => self.copy_frame(CopyFrame::Row(row)).map_err(|e| {
                    tracing::error!(error = %e, "cannot encode a COPY row");
                    SinkError::Statement(e)
                })?,
                Sending::Nothing => {
                    return Err(SinkError::Statement(SqlError::internal(
                        "rows sent before a result began",
                    )))
                }
            }
            self.flush_if_full().await?;
        }
        Ok(())
    }

    async fn copy_tuples(
        &mut self,
        _columns: &[ColumnDef],
        tuples: &EncodedTuples,
    ) -> SinkResult<()> {
        // One CopyData message per tuple, as PostgreSQL sends them.
        for tuple in tuples.tuples() {
            self.copy_frame(CopyFrame::Encoded(tuple))
                .map_err(SinkError::Statement)?;
            self.flush_if_full().await?;
        }
        Ok(())
    }

    async fn notice(&mut self, notice: &Notice) -> SinkResult<()> {
        backend::put_notice(&mut self.transport.out, notice);
        Ok(())
    }

    async fn complete(&mut self, tag: &str, notices: &[Notice]) -> SinkResult<()> {
        if let Sending::CopyOut(..) = self.state {
            self.copy_frame(CopyFrame::Trailer)
                .map_err(SinkError::Statement)?;
            let _ = backend::put(&mut self.transport.out, &CopyDone::new());
        }
        if let Sending::CopyOutText(..) = self.state {
            let _ = backend::put(&mut self.transport.out, &CopyDone::new());
        }
        self.state = Sending::Nothing;
        for notice in notices {
            backend::put_notice(&mut self.transport.out, notice);
        }
        if let Some(held) = &mut self.held {
            held.tag = tag.to_string();
            backend::put_portal_suspended(&mut self.transport.out);
            return Ok(());
        }
        backend::put_command_complete(&mut self.transport.out, tag).map_err(SinkError::Statement)
    }

    async fn error(&mut self, error: &SqlError) -> SinkResult<()> {
        tracing::info!(code = %error.code, error = %error.message, "statement failed");
        self.state = Sending::Nothing;
        backend::put_error(&mut self.transport.out, error, Severity::Error);
        self.failed = true;
        Ok(())
    }

    async fn copy_in(
        &mut self,
        columns: &[ColumnDef],
        format: &CopyFormat,
    ) -> SinkResult<Result<Vec<Row>, SqlError>> {
        let code = match format {
            CopyFormat::Binary => FORMAT_BINARY,
            _ => FORMAT_TEXT,
        };
        let response =
            CopyInResponse::new(code as i8, columns.len() as i16, vec![code; columns.len()]);
        if let Err(e) = backend::put(&mut self.transport.out, &response) {
            return Ok(Err(e));
        }
        self.transport
            .flush()
            .await
            .map_err(|e| SinkError::Connection(e.to_string()))?;
        let decoder = match format {
            CopyFormat::Binary => InDecoder::Binary(CopyInDecoder::new(columns.to_vec())),
            other => InDecoder::Text {
                data: Vec::new(),
                columns: columns.to_vec(),
                format: other.clone(),
            },
        };
        self.read_copy_data(decoder).await
    }
}
