//! A query end to end: bind, look for a shared result, read its scans, then
//! pick the result in place or run the executor.

pub mod shared_results;

use rocklake_types::rows::ResultRows;
use rocklake_types::{ColumnDef, Datum, PgType, Row, SqlError};
use sqlparser::ast::Query;

use crate::bind::Binder;
use crate::exec::cast::{already_typed, assign};
use crate::exec::fetch::prefetch;
use crate::exec::pick::pick;
use crate::exec::select::{run_query, ExecCtx};
use crate::exec::StmtEnv;
use crate::plan::OutCol;
use crate::storage::StorageTxn;
use shared_results::{derives_from_catalog, CatalogResults, ResultKey};

/// The columns a client is told of, from a plan's output columns (an
/// unknown-typed column is `text`, as in PostgreSQL).
pub(crate) fn out_columns(cols: &[OutCol]) -> Vec<ColumnDef> {
    cols.iter()
        .map(|c| ColumnDef::new(c.name.clone(), c.ty.clone().unwrap_or(PgType::Text)))
        .collect()
}

/// Gives every value its column's type, in place; values that already have
/// it (almost all) are left alone.
fn conform(columns: &[ColumnDef], mut rows: Vec<Row>) -> Result<Vec<Row>, SqlError> {
    for row in &mut rows {
        for (value, column) in row.iter_mut().zip(columns) {
            if !already_typed(value, &column.pg_type) {
                let taken = std::mem::replace(value, Datum::Null);
                *value = assign(taken, &column.pg_type)?;
            }
        }
    }
    Ok(rows)
}

/// Binds and runs a query, returning its columns and rows. With `shared`
/// (the catalog version of the transaction's catalog and the server's
/// shared results), a query over the virtual catalog tables is answered
/// from, or kept in, the results shared by the server's sessions.
pub(crate) async fn run(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    q: &Query,
    shared: Option<(u64, &CatalogResults)>,
) -> Result<(Vec<ColumnDef>, ResultRows), SqlError> {
    let mut b = Binder::new(env.cat, env.now, env.pid);
    let plan = b.bind_query(q)?;
    let kept = shared
        .filter(|_| derives_from_catalog(&b.scans, b.reads_time))
        .map(|(version, results)| {
            let key = ResultKey {
                version,
                database: env.cat.database.clone(),
                statement: q.to_string(),
            };
            (key, results)
        });
    if let Some((key, results)) = &kept {
        if let Some(result) = results.get(key) {
            return Ok(result);
        }
    }
    let data = prefetch(txn, env.cat, &b.scans, true).await?;
    let columns = out_columns(&plan.columns);
    let ctx = ExecCtx::new(&data, env.cat);
    let rows = match pick(&plan, &b.scans, &ctx, &[])? {
        Some(picked) => ResultRows::Picked(picked),
        None => ResultRows::Owned(conform(&columns, run_query(&plan, &ctx, &[])?)?),
    };
    if let Some((key, results)) = kept {
        results.put(key, &columns, &rows);
    }
    Ok((columns, rows))
}
