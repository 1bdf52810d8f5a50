//! What executing statements produces: a session sends it, statement by
//! statement and rows as they are produced, to a [`ResultSink`] (the wire
//! server's connection, or a [`CollectSink`] that keeps it as
//! [`QueryOutput`]s).

use std::collections::VecDeque;

use async_trait::async_trait;

use crate::copy::CopyFormat;
use crate::datum::{ColumnDef, Row};
use crate::error::SqlError;
use crate::rows::ResultRows;
use crate::sqlstate::SqlState;

pub use crate::error::Notice;

/// The result of one successfully executed statement.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryOutput {
    /// A result set, sent as RowDescription + text-format DataRows + `SELECT n`.
    Rows {
        /// Result columns.
        columns: Vec<ColumnDef>,
        /// Result rows.
        rows: ResultRows,
    },
    /// Rows completed with the statement's own tag: what an INSERT, UPDATE
    /// or DELETE returns (`RETURNING`, `INSERT 0 3`), or `SHOW`'s value.
    Returning {
        /// Result columns.
        columns: Vec<ColumnDef>,
        /// Result rows.
        rows: ResultRows,
        /// CommandComplete tag.
        tag: String,
    },
    /// A command without rows; `tag` is the CommandComplete text (`INSERT 0 3`,
    /// `BEGIN`, `CREATE TABLE`, ...).
    Command {
        /// CommandComplete tag.
        tag: String,
        /// Notices to send before CommandComplete.
        notices: Vec<Notice>,
    },
    /// `COPY (...) TO STDOUT (FORMAT binary)`: rows to send as binary COPY data,
    /// followed by `COPY n`.
    CopyOut {
        /// Columns of the copied rows (their types drive the binary encoding).
        columns: Vec<ColumnDef>,
        /// The rows.
        rows: ResultRows,
    },
}

impl QueryOutput {
    /// A command without rows or notices, completing with `tag`.
    pub fn command(tag: &str) -> QueryOutput {
        QueryOutput::Command {
            tag: tag.to_string(),
            notices: Vec::new(),
        }
    }
}

/// Transaction state reported in ReadyForQuery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxStatus {
    /// `I`: not in a transaction block.
    Idle,
    /// `T`: in a transaction block.
    InBlock,
    /// `E`: in a failed transaction block.
    Failed,
}

/// Results of a simple-query string: one entry per statement executed, stopping
/// at (and including) the first error.
pub type BatchResult = Vec<Result<QueryOutput, SqlError>>;

/// Why a [`ResultSink`] could not take what it was given.
#[derive(Debug, Clone, PartialEq)]
pub enum SinkError {
    /// The client connection closed or failed: the session ends.
    Connection(String),
    /// This result cannot be sent (a value has no binary form, a message
    /// would be too large): the statement fails with this error.
    Statement(SqlError),
}

/// Result of [`ResultSink`] calls.
pub type SinkResult<T> = Result<T, SinkError>;

/// Where a session sends what its statements produce, as they produce it.
/// For each statement, in order: optionally [`ResultSink::begin_rows`] or
/// [`ResultSink::begin_copy_out`] then any number of [`ResultSink::rows`]
/// calls, then [`ResultSink::complete`] (or [`ResultSink::error`], which may
/// come after rows were sent, as in PostgreSQL).
#[async_trait]
pub trait ResultSink: Send {
    /// A result set with these columns begins (RowDescription).
    async fn begin_rows(&mut self, columns: &[ColumnDef]) -> SinkResult<()>;

    /// A `COPY ... TO STDOUT` of rows with these columns begins, in
    /// `format`.
    async fn begin_copy_out(
        &mut self,
        columns: &[ColumnDef],
        format: &crate::copy::CopyFormat,
    ) -> SinkResult<()>;

    /// The next rows of the current result set or COPY.
    async fn rows(&mut self, rows: &ResultRows) -> SinkResult<()>;

    /// The next rows of a binary COPY, already encoded as its tuples (rows
    /// of `columns`). A sink that writes them out sends the bytes as they
    /// are; by default they are decoded and passed to [`ResultSink::rows`].
    async fn copy_tuples(
        &mut self,
        columns: &[ColumnDef],
        tuples: &crate::copy::encoded::EncodedTuples,
    ) -> SinkResult<()> {
        let rows = tuples.decode(columns).map_err(SinkError::Statement)?;
        self.rows(&ResultRows::Owned(rows)).await
    }

    /// The statement succeeded: its notices, then CommandComplete with `tag`
    /// (`SELECT n`, `COPY n`, `INSERT 0 n`, ...).
    async fn complete(&mut self, tag: &str, notices: &[Notice]) -> SinkResult<()>;

    /// The statement failed with `error`.
    async fn error(&mut self, error: &SqlError) -> SinkResult<()>;

    /// A notice that belongs to no statement's completion (NoticeResponse
    /// right away), e.g. the lexer's for an identifier it cut.
    async fn notice(&mut self, notice: &Notice) -> SinkResult<()>;

    /// `COPY ... FROM STDIN`: asks the client for its data and returns it
    /// decoded as rows of `columns` (text format with `text`'s options,
    /// binary when `None`); bad data or the client's CopyFail is the
    /// statement's error.
    async fn copy_in(
        &mut self,
        columns: &[ColumnDef],
        format: &CopyFormat,
    ) -> SinkResult<Result<Vec<Row>, SqlError>>;
}

/// What a [`CollectSink`] is in the middle of.
enum Collecting {
    Nothing,
    Rows(Vec<ColumnDef>, Vec<ResultRows>),
    CopyOut(Vec<ColumnDef>, Vec<ResultRows>),
}

/// What a COPY FROM STDIN gets from a [`CollectSink`]: made from the
/// columns and format asked for (the client's data, decoded, or its error).
pub type CopySource =
    Box<dyn FnMut(&[ColumnDef], &CopyFormat) -> Result<Vec<Row>, SqlError> + Send>;

/// A [`ResultSink`] that keeps everything as [`QueryOutput`]s, for callers
/// that want a statement's whole result (tests, tools). COPY FROM STDIN is
/// fed from data queued with [`CollectSink::with_copy_data`], then from a
/// [`CollectSink::with_copy_source`].
pub struct CollectSink {
    /// One entry per statement, the last one an error if one failed.
    pub results: BatchResult,
    /// The columns and format of each COPY FROM STDIN asked for.
    pub copy_requests: Vec<(Vec<ColumnDef>, CopyFormat)>,
    /// Notices sent outside a statement's completion, in order.
    pub notices: Vec<Notice>,
    copy_data: VecDeque<Result<Vec<Row>, SqlError>>,
    copy_source: Option<CopySource>,
    current: Collecting,
}

impl Default for CollectSink {
    fn default() -> Self {
        CollectSink {
            results: Vec::new(),
            copy_requests: Vec::new(),
            notices: Vec::new(),
            copy_data: VecDeque::new(),
            copy_source: None,
            current: Collecting::Nothing,
        }
    }
}

impl CollectSink {
    /// An empty sink.
    pub fn new() -> Self {
        CollectSink::default()
    }

    /// Queues the data the next COPY FROM STDIN receives (or the error it
    /// fails with, as if the client's data were bad).
    pub fn with_copy_data(mut self, data: Result<Vec<Row>, SqlError>) -> Self {
        self.copy_data.push_back(data);
        self
    }

    /// Makes the data of every COPY FROM STDIN (after the queued data) with
    /// `source`.
    pub fn with_copy_source(mut self, source: CopySource) -> Self {
        self.copy_source = Some(source);
        self
    }

    /// The collected results.
    pub fn into_results(self) -> BatchResult {
        self.results
    }
}

/// The rows of several batches as one [`ResultRows`]: a single batch as it
/// is (rows picked in place stay picked), several copied into one.
fn joined(mut batches: Vec<ResultRows>) -> ResultRows {
    if batches.len() == 1 {
        return batches.pop().expect("one batch");
    }
    ResultRows::Owned(
        batches
            .into_iter()
            .flat_map(ResultRows::into_rows)
            .collect(),
    )
}

#[async_trait]
impl ResultSink for CollectSink {
    async fn begin_rows(&mut self, columns: &[ColumnDef]) -> SinkResult<()> {
        self.current = Collecting::Rows(columns.to_vec(), Vec::new());
        Ok(())
    }

    async fn begin_copy_out(
        &mut self,
        columns: &[ColumnDef],
        _format: &crate::copy::CopyFormat,
    ) -> SinkResult<()> {
        self.current = Collecting::CopyOut(columns.to_vec(), Vec::new());
        Ok(())
    }

    async fn rows(&mut self, rows: &ResultRows) -> SinkResult<()> {
        match &mut self.current {
            Collecting::Rows(_, batches) | Collecting::CopyOut(_, batches) => {
                batches.push(rows.clone());
                Ok(())
            }
            Collecting::Nothing => Err(SinkError::Statement(SqlError::internal(
                "rows sent before a result began",
            ))),
        }
    }

    async fn complete(&mut self, tag: &str, notices: &[Notice]) -> SinkResult<()> {
        let output = match std::mem::replace(&mut self.current, Collecting::Nothing) {
            Collecting::Rows(columns, batches) if !tag.starts_with("SELECT ") => {
                QueryOutput::Returning {
                    columns,
                    rows: joined(batches),
                    tag: tag.to_string(),
                }
            }
            Collecting::Rows(columns, batches) => QueryOutput::Rows {
                columns,
                rows: joined(batches),
            },
            Collecting::CopyOut(columns, batches) => QueryOutput::CopyOut {
                columns,
                rows: joined(batches),
            },
            Collecting::Nothing => QueryOutput::Command {
                tag: tag.to_string(),
                notices: notices.to_vec(),
            },
        };
        self.results.push(Ok(output));
        Ok(())
    }

    async fn error(&mut self, error: &SqlError) -> SinkResult<()> {
        self.current = Collecting::Nothing;
        self.results.push(Err(error.clone()));
        Ok(())
    }

    async fn notice(&mut self, notice: &Notice) -> SinkResult<()> {
        self.notices.push(notice.clone());
        Ok(())
    }

    async fn copy_in(
        &mut self,
        columns: &[ColumnDef],
        format: &CopyFormat,
    ) -> SinkResult<Result<Vec<Row>, SqlError>> {
        self.copy_requests.push((columns.to_vec(), format.clone()));
        if let Some(data) = self.copy_data.pop_front() {
            return Ok(data);
        }
        Ok(match &mut self.copy_source {
            Some(source) => source(columns, format),
            None => Err(SqlError::new(
                SqlState::QUERY_CANCELED,
                "COPY from stdin failed: no data was queued for this COPY",
            )),
        })
    }
}

/// Sends finished results to `sink`, as a session whose statements produced
/// them would (for sessions that compute whole results first).
pub async fn send_results(results: BatchResult, sink: &mut dyn ResultSink) -> SinkResult<()> {
    for result in results {
        match result {
            Ok(QueryOutput::Rows { columns, rows }) => {
                sink.begin_rows(&columns).await?;
                sink.rows(&rows).await?;
                sink.complete(&format!("SELECT {}", rows.len()), &[])
                    .await?;
            }
            Ok(QueryOutput::Returning { columns, rows, tag }) => {
                sink.begin_rows(&columns).await?;
                sink.rows(&rows).await?;
                sink.complete(&tag, &[]).await?;
            }
            Ok(QueryOutput::CopyOut { columns, rows }) => {
                sink.begin_copy_out(&columns, &crate::copy::CopyFormat::Binary)
                    .await?;
                sink.rows(&rows).await?;
                sink.complete(&format!("COPY {}", rows.len()), &[]).await?;
            }
            Ok(QueryOutput::Command { tag, notices }) => sink.complete(&tag, &notices).await?,
            Err(error) => {
                sink.error(&error).await?;
                break;
            }
        }
    }
    Ok(())
}
