//! Reading the scans a statement needs before it runs.

use rocklake_types::datum::{Datum, Row};
use rocklake_types::SqlError;

use crate::catalog::{Catalog, VirtualTable, Wanted};
use crate::exec::context::{ExecCtx, Limits};
use crate::exec::memory::row_bytes;
use crate::exec::scan_data::ScanData;
use crate::plan::{ScanReq, ScanSource};
use crate::storage::{ColumnBound, ScanFilter, StorageTxn};

/// Reads every scan a plan needs. Scans keyed by scalar subqueries
/// (`col = (SELECT max(..) ..)`) are read last: their subqueries run over the
/// scans read before, and each value becomes an equality bound, so storage can
/// seek instead of reading the table.
///
/// With `share`, a stored relation whose `ctid` the statement does not read by
/// name is read in place (read-only statements); otherwise each stored row
/// is copied with its `ctid` appended as the scan passes it on (writes find
/// their rows by it), so only the rows a statement keeps are held: DuckLake
/// deletes `ducklake_file_column_stats` rows by `data_file_id`, not a key
/// prefix, so each such DELETE reads the whole table.
///
/// Rows copied for the statement before it runs (virtual tables, storage
/// that cannot share) are charged to its memory budget (rows shared with
/// storage are the scan cache's, which has its own bound).
pub async fn prefetch(
    txn: &mut dyn StorageTxn,
    cat: &Catalog,
    scans: &[ScanReq],
    share: bool,
    limits: Limits<'_>,
) -> Result<Vec<ScanData>, SqlError> {
    let mut out: Vec<ScanData> = scans.iter().map(|_| ScanData::default()).collect();
    for (slot, s) in out.iter_mut().zip(scans) {
        if s.keyed_by.is_empty() {
            *slot = fetch(txn, cat, s, &s.filter, share, limits).await?;
        }
    }
    for (index, s) in scans.iter().enumerate() {
        if s.keyed_by.is_empty() {
            continue;
        }
        let mut filter = s.filter.clone();
        {
            let ctx = ExecCtx::new(&out, cat, limits);
            for (column, sub) in &s.keyed_by {
                let rows = ctx.run_subquery(sub, &[])?;
                // Zero or several rows, or NULL: no bound; execution reports
                // what it must (e.g. 21000 for several rows).
                if let [row] = rows.as_slice() {
                    if let Some(value) = row.first().filter(|v| !v.is_null()) {
                        filter
                            .bounds
                            .push((*column, ColumnBound::Eq(value.clone())));
                    }
                }
            }
        }
        out[index] = fetch(txn, cat, s, &filter, share, limits).await?;
    }
    Ok(out)
}
async fn fetch(
    txn: &mut dyn StorageTxn,
    cat: &Catalog,
    scan: &ScanReq,
    filter: &ScanFilter,
    share: bool,
    limits: Limits<'_>,
) -> Result<ScanData, SqlError> {
    limits.check()?;
    let data = match &scan.source {
        ScanSource::Table(def) if share && !scan.reads_ctid => {
            ScanData::from_stored(txn.scan_shared(def, filter).await?)
        }
        ScanSource::Table(def) => {
            ScanData::from_stored_with_ctid(txn.scan_shared(def, filter).await?)
        }
        ScanSource::Virtual(_) if scan.looked_up => ScanData::Owned(Vec::new()),
        ScanSource::Virtual(table) => {
            let wanted = Wanted(scan.columns.as_deref());
            ScanData::Owned(virtual_rows(cat, *table, filter, wanted))
        }
        ScanSource::DatabaseSize => ScanData::Owned(vec![vec![txn
            .database_bytes()
            .await?
            .map_or(Datum::Null, |bytes| Datum::Int8(bytes as i64))]]),
        ScanSource::RelationSizes => ScanData::Owned(
            txn.relation_bytes()
                .await?
                .into_iter()
                .filter_map(|(schema, name, bytes)| {
                    let def = cat.find(&schema, &name)?;
                    Some(vec![
                        Datum::Oid(Catalog::rel_oid(def)),
                        Datum::Int8(bytes as i64),
                    ])
                })
                .collect(),
        ),
    };
    if let ScanData::Owned(rows) = &data {
        // Held until the statement ends.
        limits
            .budget
            .charge(rows.iter().map(|row| row_bytes(row)).sum())?;
    }
    Ok(data)
}

/// A virtual table's rows: only those with the values of a bound on a keyed
/// column when there is one (the bounds are conjuncts of the WHERE clause,
/// which still applies), else all.
fn virtual_rows(
    cat: &Catalog,
    table: VirtualTable,
    filter: &ScanFilter,
    wanted: Wanted<'_>,
) -> Vec<Row> {
    filter
        .bounds
        .iter()
        .filter(|(column, _)| table.is_keyed(*column))
        .find_map(|(column, bound)| match bound {
            ColumnBound::Eq(value) => {
                table.wanted_rows_where(cat, *column, std::slice::from_ref(value), wanted)
            }
            ColumnBound::In(values) => table.wanted_rows_where(cat, *column, values, wanted),
            ColumnBound::Range { .. } => None,
        })
        .unwrap_or_else(|| table.wanted_rows(cat, wanted))
}
