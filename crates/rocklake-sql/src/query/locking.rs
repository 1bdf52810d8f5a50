//! Running a query with row locks (`SELECT ... FOR UPDATE`, see
//! [`crate::bind::LockPlan`]).
//!
//! PostgreSQL locks rows in a `LockRows` node between the sort and the
//! limit: every row pulled through it is locked, OFFSET-skipped ones too,
//! and the rows a LIMIT cuts are not; with SKIP LOCKED a row held by another
//! transaction is left out before OFFSET and LIMIT count it. Here the query
//! runs to its sorted rows (as many as OFFSET + LIMIT need, all of them with
//! SKIP LOCKED), then each row's stored rows are locked through
//! [`StorageTxn::lock_row`] in order, OFFSET and LIMIT applied over the rows
//! kept, and the result is sent whole.

use rocklake_types::datum::{Datum, Row};
use rocklake_types::rows::{ResultRows, RowId};
use rocklake_types::{ResultSink, SqlError};

use super::{conform, out_columns, send_all, Destination, Failure};
use crate::bind::LockPlan;
use crate::exec::fetch::prefetch;
use crate::exec::memory::{row_bytes, HeldRows};
use crate::exec::select::{row_count, set_stream};
use crate::exec::sort::Sort;
use crate::exec::{ExecCtx, StmtEnv};
use crate::plan::{QueryPlan, ScanReq};
use crate::storage::StorageTxn;

/// Runs `plan` (bound with `scans`), locking the rows `locking` asks for
/// and sending the rows it returns.
pub(crate) async fn run_locking(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    plan: &QueryPlan,
    scans: &[ScanReq],
    locking: &LockPlan,
    sink: &mut dyn ResultSink,
    to: Destination<'_>,
) -> Result<(), Failure> {
    if env.read_only && locking.any_table {
        let command = format!("SELECT {}", locking.strength.clause());
        return Err(SqlError::read_only(&command).into());
    }
    let columns = out_columns(&plan.columns);
    let (candidates, offset, limit) = {
        let data = prefetch(txn, env.cat, scans, false, env.limits).await?;
        let ctx = ExecCtx::new(&data, env.cat, env.limits);
        candidates(plan, &ctx, locking.skips_locked())?
    };
    let mut rows = Vec::new();
    let mut skipped = 0;
    for mut row in candidates {
        if limit.is_some_and(|limit| rows.len() >= limit) {
            break;
        }
        if !lock_rows_of(txn, env, locking, &row).await? {
            continue;
        }
        if skipped < offset {
            skipped += 1;
            continue;
        }
        row.truncate(plan.columns.len());
        conform(&columns, &mut row)?;
        rows.push(row);
    }
    send_all(sink, to, &columns, &ResultRows::Owned(rows)).await
}

/// The query's rows before OFFSET and LIMIT (only as many as they need
/// unless rows may be skipped), with their hidden columns; and the OFFSET
/// and LIMIT.
fn candidates(
    plan: &QueryPlan,
    ctx: &ExecCtx<'_>,
    skips: bool,
) -> Result<(Vec<Row>, usize, Option<usize>), SqlError> {
    let offset = row_count(&plan.offset, ctx, &[])?.unwrap_or(0);
    let limit = row_count(&plan.limit, ctx, &[])?;
    let wanted = match (skips, limit) {
        (false, Some(limit)) => Some(offset.saturating_add(limit)),
        _ => None,
    };
    let mut stream = set_stream(&plan.body, ctx, Vec::new())?;
    if !plan.order.is_empty() {
        stream = Box::new(Sort::new(stream, &plan.order, ctx));
    }
    let mut rows = HeldRows::new(ctx.budget());
    let mut count = 0;
    while wanted.is_none_or(|wanted| count < wanted) {
        let Some(row) = stream.next()? else { break };
        let row = row.into_owned();
        let bytes = row_bytes(&row);
        rows.push(row, bytes)?;
        count += 1;
    }
    let (rows, _held) = rows.into_parts();
    Ok((rows, offset, limit))
}

/// Locks the stored rows of one result row; `false` when one of them is
/// held by another transaction and its table skips such rows.
async fn lock_rows_of(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    locking: &LockPlan,
    row: &[Datum],
) -> Result<bool, Failure> {
    for target in &locking.targets {
        let id = match row.get(target.column) {
            Some(Datum::Tid { block, offset }) => RowId::from_tid(*block, *offset)
                .ok_or_else(|| SqlError::internal("invalid ctid"))?,
            // The null side of an outer join holds no row.
            _ => continue,
        };
        let lock = txn.lock_row(&target.relation, id, target.strength, target.wait);
        let locked = match env.limits.interrupt {
            Some(interrupt) => tokio::select! {
                locked = lock => locked?,
                stopped = interrupt.stopped() => return Err(stopped.into()),
            },
            None => lock.await?,
        };
        if !locked {
            return Ok(false);
        }
    }
    Ok(true)
}
