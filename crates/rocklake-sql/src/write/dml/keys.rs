//! Primary keys the engine enforces itself: those of relations whose
//! [`RelationDef::key_checks`] is [`KeyChecks::Engine`]. The catalog store
//! keys DuckLake's catalog tables by their primary key and refuses a
//! duplicate there itself (a concurrent commit's too, see
//! [`StorageTxn::insert`]); other tables (those psql, JDBC or ORM users
//! create) it keeps in insertion order, so INSERT, COPY and UPDATE check
//! their keys here, against the rows the transaction sees, and fail with
//! PostgreSQL's 23505 as its unique index would. Keys of transactions in
//! flight or committed after this one's snapshot are the store's to check
//! (it makes a second inserter of one key wait for the first and fail, as
//! PostgreSQL does; see docs/key-layout.md).

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use rocklake_types::datum::{Datum, Row};
use rocklake_types::rows::RowId;
use rocklake_types::value::text::format_text;
use rocklake_types::SqlError;

use crate::exec::compare::compare;
use crate::storage::{ColumnBound, KeyChecks, RelationDef, ScanFilter, StorageTxn};
use rocklake_types::value::equality::row_key;

/// Whether the engine checks the primary key of `def` (the storage does not).
pub(crate) fn engine_checks(def: &RelationDef) -> bool {
    !def.primary_key.is_empty() && def.key_checks == KeyChecks::Engine
}

/// The primary-key values of `row`.
pub(crate) fn key_of(def: &RelationDef, row: &[Datum]) -> Row {
    def.primary_key.iter().map(|&i| row[i].clone()).collect()
}

/// The row of `def` holding primary key `key`, if any.
pub(crate) async fn row_with_key(
    txn: &mut dyn StorageTxn,
    def: &RelationDef,
    key: &[Datum],
) -> Result<Option<(RowId, Row)>, SqlError> {
    let filter = ScanFilter {
        bounds: def
            .primary_key
            .iter()
            .zip(key)
            .map(|(&i, value)| (i, ColumnBound::Eq(value.clone())))
            .collect(),
        extreme: None,
    };
    let found = txn.scan(def, &filter).await?;
    Ok(found
        .into_iter()
        .find(|scanned| {
            def.primary_key
                .iter()
                .zip(key)
                .all(|(&i, value)| compare(&scanned.row[i], value) == Ordering::Equal)
        })
        .map(|scanned| (scanned.id, scanned.row)))
}

/// PostgreSQL's 23505 for `row`'s key in `def`.
fn violation(def: &RelationDef, row: &[Datum]) -> SqlError {
    let columns: Vec<&str> = def
        .primary_key
        .iter()
        .map(|&i| def.columns[i].name.as_str())
        .collect();
    let values: Vec<String> = def
        .primary_key
        .iter()
        .map(|&i| format_text(&row[i]).unwrap_or_else(|| "null".into()))
        .collect();
    SqlError::unique_violation(
        &def.schema,
        &def.name,
        &columns.join(", "),
        &values.join(", "),
    )
}

/// Checks that rows about to be inserted into `def` take no key another of
/// them or a row the transaction sees holds (23505 for the first that does).
pub(crate) async fn check_inserts(
    txn: &mut dyn StorageTxn,
    def: &RelationDef,
    rows: &[Row],
) -> Result<(), SqlError> {
    if !engine_checks(def) {
        return Ok(());
    }
    let mut taken = HashSet::with_capacity(rows.len());
    for row in rows {
        let key = key_of(def, row);
        // A NULL key fails NOT NULL before it gets here.
        if !taken.insert(row_key(&key)) || row_with_key(txn, def, &key).await?.is_some() {
            return Err(violation(def, row));
        }
    }
    Ok(())
}

/// Checks that `updates` (row id, its new values) of `def` leave its key
/// unique: no two updated rows share one, and no row outside them holds
/// one. (PostgreSQL checks row by row, so an update that shifts keys onto
/// each other, `SET id = id + 1`, may fail there depending on the rows'
/// physical order; here it is checked once the statement's rows are known.)
pub(crate) async fn check_updates(
    txn: &mut dyn StorageTxn,
    def: &RelationDef,
    old: &HashMap<RowId, Row>,
    updates: &[(RowId, Row)],
) -> Result<(), SqlError> {
    if !engine_checks(def) {
        return Ok(());
    }
    let mut taken = HashSet::with_capacity(updates.len());
    for (id, row) in updates {
        let key = key_of(def, row);
        if !taken.insert(row_key(&key)) {
            return Err(violation(def, row));
        }
        let unchanged = old
            .get(id)
            .is_some_and(|before| row_key(&key_of(def, before)) == row_key(&key));
        if unchanged {
            continue;
        }
        if let Some((holder, _)) = row_with_key(txn, def, &key).await? {
            if !old.contains_key(&holder) {
                return Err(violation(def, row));
            }
        }
    }
    Ok(())
}
