//! The last statement of a simple-query string completes after its
//! implicit transaction commits, as in PostgreSQL: a commit that fails
//! (storage full, a conflict) sends its error instead of the statement's
//! CommandComplete, so a client never reads `INSERT 0 1` for rows that were
//! not committed.

use async_trait::async_trait;
use rocklake_types::copy::encoded::EncodedTuples;
use rocklake_types::copy::CopyFormat;
use rocklake_types::datum::{ColumnDef, Row};
use rocklake_types::output::{Notice, ResultSink, SinkResult};
use rocklake_types::rows::ResultRows;
use rocklake_types::SqlError;

/// A sink that passes everything through but keeps the completion back
/// until [`HeldCompletion::release`].
pub(super) struct HeldCompletion<'s> {
    inner: &'s mut dyn ResultSink,
    held: Option<(String, Vec<Notice>)>,
}

impl<'s> HeldCompletion<'s> {
    pub(super) fn new(inner: &'s mut dyn ResultSink) -> Self {
        HeldCompletion { inner, held: None }
    }

    /// Sends the completion kept back: after a successful commit.
    pub(super) async fn release(self) -> SinkResult<()> {
        match self.held {
            Some((tag, notices)) => self.inner.complete(&tag, &notices).await,
            None => Ok(()),
        }
    }

    /// Sends `error` in place of the completion kept back.
    pub(super) async fn fail(self, error: &SqlError) -> SinkResult<()> {
        self.inner.error(error).await
    }
}

#[async_trait]
impl ResultSink for HeldCompletion<'_> {
    async fn begin_rows(&mut self, columns: &[ColumnDef]) -> SinkResult<()> {
        self.inner.begin_rows(columns).await
    }

    async fn begin_copy_out(
        &mut self,
        columns: &[ColumnDef],
        format: &CopyFormat,
    ) -> SinkResult<()> {
        self.inner.begin_copy_out(columns, format).await
    }

    async fn rows(&mut self, rows: &ResultRows) -> SinkResult<()> {
        self.inner.rows(rows).await
    }

    async fn copy_tuples(
        &mut self,
        columns: &[ColumnDef],
        tuples: &EncodedTuples,
    ) -> SinkResult<()> {
        self.inner.copy_tuples(columns, tuples).await
    }

    async fn complete(&mut self, tag: &str, notices: &[Notice]) -> SinkResult<()> {
        self.held = Some((tag.to_string(), notices.to_vec()));
        Ok(())
    }

    async fn error(&mut self, error: &SqlError) -> SinkResult<()> {
        self.inner.error(error).await
    }

    async fn notice(&mut self, notice: &Notice) -> SinkResult<()> {
        self.inner.notice(notice).await
    }

    async fn copy_in(
        &mut self,
        columns: &[ColumnDef],
        format: &CopyFormat,
    ) -> SinkResult<Result<Vec<Row>, SqlError>> {
        self.inner.copy_in(columns, format).await
    }
}
