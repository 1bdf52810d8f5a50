//! A query end to end: bind, look for a shared result, read its scans, then
//! pick the result in place or run the executor.

pub mod encoded_results;
pub(crate) mod locking;
pub mod shared_results;
mod whole_copy;

use rocklake_types::copy::CopyFormat;
use rocklake_types::rows::ResultRows;
use rocklake_types::{ColumnDef, Datum, PgType, ResultSink, Row, SinkError, SqlError};
use sqlparser::ast::Query;

use crate::bind::Binder;
use crate::exec::cast::{already_typed, assign};
use crate::exec::fetch::prefetch;
use crate::exec::pick::{pick, whole_table_read};
use crate::exec::select::{query_stream, run_query};
use crate::exec::stream::Stream;
use crate::exec::{ExecCtx, Limits, StmtEnv};
use crate::plan::OutCol;
use crate::storage::StorageTxn;
use shared_results::{derives_from_catalog, CatalogResults, ResultKey};

/// The columns a client is told of, from a plan's output columns (an
/// unknown-typed column is `text`, as in PostgreSQL).
pub(crate) fn out_columns(cols: &[OutCol]) -> Vec<ColumnDef> {
    cols.iter()
        .map(|c| ColumnDef {
            table_column: c.origin,
            ..ColumnDef::new(c.name.clone(), c.ty.clone().unwrap_or(PgType::Text))
        })
        .collect()
}

/// Gives every value of `row` its column's type, in place; values that
/// already have it (almost all) are left alone.
fn conform(columns: &[ColumnDef], row: &mut Row) -> Result<(), SqlError> {
    for (value, column) in row.iter_mut().zip(columns) {
        if !already_typed(value, &column.pg_type) {
            let taken = std::mem::replace(value, Datum::Null);
            *value = assign(taken, &column.pg_type)?;
        }
    }
    Ok(())
}

/// How a statement ended badly.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The statement failed with this error; the session goes on.
    Statement(SqlError),
    /// The client connection is gone: the session ends.
    Connection(String),
}

impl From<SqlError> for Failure {
    fn from(error: SqlError) -> Self {
        Failure::Statement(error)
    }
}

impl From<SinkError> for Failure {
    fn from(error: SinkError) -> Self {
        match error {
            SinkError::Statement(error) => Failure::Statement(error),
            SinkError::Connection(reason) => Failure::Connection(reason),
        }
    }
}

/// Rows sent to the client in one batch at most.
const BATCH_ROWS: usize = 1024;

/// Where a query's rows go: a result set or a COPY TO STDOUT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Destination<'f> {
    /// RowDescription, DataRows, `SELECT n`.
    Rows,
    /// CopyOutResponse, CopyData in this format, `COPY n`.
    CopyOut(&'f CopyFormat),
}

/// Sends a whole result.
async fn send_all(
    sink: &mut dyn ResultSink,
    to: Destination<'_>,
    columns: &[ColumnDef],
    rows: &ResultRows,
) -> Result<(), Failure> {
    begin(sink, to, columns).await?;
    sink.rows(rows).await?;
    finish(sink, to, rows.len()).await
}

async fn begin(
    sink: &mut dyn ResultSink,
    to: Destination<'_>,
    columns: &[ColumnDef],
) -> Result<(), Failure> {
    match to {
        Destination::Rows => sink.begin_rows(columns).await?,
        Destination::CopyOut(format) => sink.begin_copy_out(columns, format).await?,
    }
    Ok(())
}

async fn finish(
    sink: &mut dyn ResultSink,
    to: Destination<'_>,
    count: usize,
) -> Result<(), Failure> {
    let tag = match to {
        Destination::Rows => format!("SELECT {count}"),
        Destination::CopyOut(_) => format!("COPY {count}"),
    };
    sink.complete(&tag, &[]).await?;
    Ok(())
}

/// Sends the rows of `stream` as they are produced, in batches; the
/// statement's interrupt can stop it between batches, also while it waits
/// for a slow client.
async fn send_stream(
    mut stream: Stream<'_>,
    sink: &mut dyn ResultSink,
    to: Destination<'_>,
    columns: &[ColumnDef],
    limits: Limits<'_>,
) -> Result<(), Failure> {
    begin(sink, to, columns).await?;
    let mut count = 0;
    loop {
        let mut batch = Vec::new();
        while batch.len() < BATCH_ROWS {
            let Some(row) = stream.next()? else { break };
            let mut row = row.into_owned();
            conform(columns, &mut row)?;
            batch.push(row);
        }
        if batch.is_empty() {
            break;
        }
        count += batch.len();
        let rows = ResultRows::Owned(batch);
        match limits.interrupt {
            Some(interrupt) => tokio::select! {
                sent = sink.rows(&rows) => sent?,
                stopped = interrupt.stopped() => return Err(stopped.into()),
            },
            None => sink.rows(&rows).await?,
        }
    }
    finish(sink, to, count).await
}

/// Binds and runs a query, sending its rows to `sink` as they are produced.
/// With `shared` (the catalog version of the transaction's catalog and the
/// server's shared results), a query over the virtual catalog tables is
/// answered from, or kept in, the results shared by the server's sessions.
pub(crate) async fn run(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    q: &Query,
    shared: Option<(u64, &CatalogResults)>,
    sink: &mut dyn ResultSink,
    to: Destination<'_>,
) -> Result<(), Failure> {
    let mut b = Binder::new(env.cat, env.now, env.pid);
    b.lock_allowed = true;
    let plan = b.bind_query(q)?;
    if let Some(locks) = &b.locking {
        return locking::run_locking(txn, env, &plan, &b.scans, locks, sink, to).await;
    }
    let columns = out_columns(&plan.columns);
    let kept = shared
        // Results are shared between sessions computed in UTC (a session's
        // time zone may change what a statement computes).
        .filter(|_| derives_from_catalog(&b.scans, b.reads_time))
        .filter(|_| rocklake_types::value::zone::with_session_zone(|zone| zone.is_utc()))
        .map(|(version, results)| {
            let key = ResultKey {
                version,
                database: env.cat.database.clone(),
                statement: q.to_string(),
            };
            (key, results)
        });
    if let Some((key, results)) = &kept {
        if let Some((columns, rows)) = results.get(key) {
            return send_all(sink, to, &columns, &rows).await;
        }
    }
    if let (Destination::CopyOut(CopyFormat::Binary), Some(read)) =
        (to, whole_table_read(&plan, &b.scans))
    {
        let copy = whole_copy::WholeCopy {
            plan: &plan,
            scans: &b.scans,
            read,
            columns: &columns,
            statement: q.to_string(),
        };
        if whole_copy::send(txn, env, copy, sink).await? {
            return Ok(());
        }
    }
    let data = prefetch(txn, env.cat, &b.scans, true, env.limits).await?;
    let ctx = ExecCtx::new(&data, env.cat, env.limits);
    if let Some(picked) = pick(&plan, &b.scans, &ctx, &[])? {
        return send_all(sink, to, &columns, &ResultRows::Picked(picked)).await;
    }
    if let Some((key, results)) = kept {
        let mut rows = run_query(&plan, &ctx, &[])?;
        for row in &mut rows {
            conform(&columns, row)?;
        }
        let rows = ResultRows::Owned(rows);
        results.put(key, &columns, &rows);
        return send_all(sink, to, &columns, &rows).await;
    }
    let stream = query_stream(&plan, &ctx, Vec::new())?;
    send_stream(stream, sink, to, &columns, env.limits).await
}
