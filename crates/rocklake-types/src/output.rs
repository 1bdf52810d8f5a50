//! What executing a statement produces, for the wire layer to send.

use crate::datum::ColumnDef;

use crate::error::SqlError;
use crate::rows::ResultRows;
use crate::sqlstate::SqlState;

/// A non-error message to send before a statement's result (`NoticeResponse`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// SQLSTATE of the notice, e.g. `42P07` for "relation already exists, skipping".
    pub code: SqlState,
    /// Notice text.
    pub message: String,
}

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
    /// `COPY t FROM STDIN (FORMAT binary)`: the server must answer CopyInResponse,
    /// decode the incoming binary rows with these column types, and hand them to
    /// the session's `copy_in_finish`.
    CopyIn {
        /// Types of the incoming columns, in stream order.
        columns: Vec<ColumnDef>,
        /// `None` for binary COPY; the text format's options otherwise (decode
        /// the stream with [`crate::copy::text::decode`]).
        text: Option<crate::copy::text::TextCopyFormat>,
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
