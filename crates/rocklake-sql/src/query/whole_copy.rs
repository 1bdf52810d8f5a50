//! A binary COPY of a whole table (DuckDB 2.0's metadata reads): answered
//! from the tuples kept encoded for the same rows, from kept tuples followed
//! by those of the rows added since, or read, encoded and kept (see
//! [`super::encoded_results`]).

use std::sync::Arc;

use rocklake_metrics::EncodedCopy;
use rocklake_types::copy::encoded::{EncodedTuples, TupleEncoder};
use rocklake_types::copy::CopyFormat;
use rocklake_types::rows::ResultRows;
use rocklake_types::{ColumnDef, ResultSink, SqlError};

use super::encoded_results::{EncodedKey, EncodedResults, KeptResult};
use super::{send_all, Destination, Failure, BATCH_ROWS};
use crate::exec::fetch::prefetch;
use crate::exec::pick::{pick, WholeTableRead};
use crate::exec::scan_data::ScanData;
use crate::exec::{ExecCtx, Limits, StmtEnv};
use crate::plan::{QueryPlan, ScanReq};
use crate::storage::{ReadEnd, StorageTxn};

/// A query whose result is the rows of one table, sent as binary COPY.
pub(crate) struct WholeCopy<'a> {
    /// The bound query.
    pub plan: &'a QueryPlan,
    /// Its scans.
    pub scans: &'a [ScanReq],
    /// The table and the scan that reads it.
    pub read: WholeTableRead<'a>,
    /// The result's columns.
    pub columns: &'a [ColumnDef],
    /// The statement's text (the key of what is kept).
    pub statement: String,
}

/// Sends the result of `copy`. `Ok(false)` when storage cannot stamp what
/// the transaction reads of the table (before reading anything), or when
/// the rows read cannot be picked in place (which a whole-table read always
/// can): the caller runs the query as any other.
pub(crate) async fn send(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    copy: WholeCopy<'_>,
    sink: &mut dyn ResultSink,
) -> Result<bool, Failure> {
    let table = copy.read.table;
    let Some(stamp) = txn.read_stamp(table).await? else {
        return Ok(false);
    };
    let key = EncodedKey::new(copy.statement.clone(), table);
    let results = EncodedResults::shared();
    let metrics = rocklake_metrics::metrics();
    let earlier = match results.get(&key, stamp, copy.columns) {
        Some(KeptResult::Same(tuples)) => {
            metrics.encoded_copy(EncodedCopy::Hit);
            send_tuples(sink, copy.columns, &tuples, env.limits).await?;
            return Ok(true);
        }
        Some(KeptResult::Other { end, tuples }) => Some((end, tuples)),
        None => None,
    };
    if let Some((end, kept)) = earlier {
        if let Some((end, tuples)) = extended(txn, env, &copy, &end, &kept).await? {
            metrics.encoded_copy(EncodedCopy::Extended);
            results.put(key, end, copy.columns, tuples.clone());
            send_tuples(sink, copy.columns, &tuples, env.limits).await?;
            return Ok(true);
        }
    }
    metrics.encoded_copy(EncodedCopy::Miss);
    let data = prefetch(txn, env.cat, copy.scans, true, env.limits).await?;
    let ctx = ExecCtx::new(&data, env.cat, env.limits);
    let Some(picked) = pick(copy.plan, copy.scans, &ctx, &[])? else {
        return Ok(false);
    };
    let rows = ResultRows::Picked(picked);
    // Kept when storage tells where the read ended and the tuples fit.
    let kept = match txn.read_end(table).await? {
        Some(end) => encode_tuples(copy.columns, &rows, results.entry_limit(), env.limits)?
            .map(|tuples| (end, Arc::new(tuples))),
        None => None,
    };
    match kept {
        Some((end, tuples)) => {
            results.put(key, end, copy.columns, tuples.clone());
            send_tuples(sink, copy.columns, &tuples, env.limits).await?;
        }
        None => {
            let binary = Destination::CopyOut(&CopyFormat::Binary);
            send_all(sink, binary, copy.columns, &rows).await?;
        }
    }
    Ok(true)
}

/// `kept`, the tuples of a read that ended at `end`, followed by those of
/// the rows added since, with where this read ends; `None` when storage
/// cannot tell that added rows are all that changed, or the whole would be
/// too large to keep.
async fn extended(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    copy: &WholeCopy<'_>,
    end: &ReadEnd,
    kept: &EncodedTuples,
) -> Result<Option<(ReadEnd, Arc<EncodedTuples>)>, Failure> {
    let Some(added) = txn.scan_added(copy.read.table, end).await? else {
        return Ok(None);
    };
    let mut data: Vec<ScanData> = copy.scans.iter().map(|_| ScanData::default()).collect();
    data[copy.read.scan] = ScanData::from_stored(added.rows);
    let ctx = ExecCtx::new(&data, env.cat, env.limits);
    let Some(picked) = pick(copy.plan, copy.scans, &ctx, &[])? else {
        return Ok(None);
    };
    let room = EncodedResults::shared()
        .entry_limit()
        .saturating_sub(kept.size_bytes());
    let rows = ResultRows::Picked(picked);
    let Some(more) = encode_tuples(copy.columns, &rows, room, env.limits)? else {
        return Ok(None);
    };
    Ok(Some((added.end, Arc::new(kept.appended(more)))))
}

/// Sends a whole binary COPY of rows already encoded as its tuples.
async fn send_tuples(
    sink: &mut dyn ResultSink,
    columns: &[ColumnDef],
    tuples: &EncodedTuples,
    limits: Limits<'_>,
) -> Result<(), Failure> {
    sink.begin_copy_out(columns, &CopyFormat::Binary).await?;
    match limits.interrupt {
        Some(interrupt) => tokio::select! {
            sent = sink.copy_tuples(columns, tuples) => sent?,
            stopped = interrupt.stopped() => return Err(stopped.into()),
        },
        None => sink.copy_tuples(columns, tuples).await?,
    }
    sink.complete(&format!("COPY {}", tuples.len()), &[])
        .await?;
    Ok(())
}

/// `rows` encoded as binary COPY tuples of `columns`, or `None` when they
/// take more than `limit` bytes.
fn encode_tuples(
    columns: &[ColumnDef],
    rows: &ResultRows,
    limit: usize,
    limits: Limits<'_>,
) -> Result<Option<EncodedTuples>, SqlError> {
    let types = columns.iter().map(|c| c.pg_type.clone()).collect();
    let mut encoder = TupleEncoder::new(types, limit);
    for (index, row) in rows.iter().enumerate() {
        if index % BATCH_ROWS == 0 {
            limits.check()?;
        }
        if !encoder.push(row.iter())? {
            return Ok(None);
        }
    }
    Ok(Some(encoder.finish()))
}
