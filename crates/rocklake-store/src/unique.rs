//! Uniqueness of inserted keys: what a write transaction remembers of the
//! keys it inserted under a uniqueness rule, how a violation is reported,
//! and the test that answers a probe from a table's last row.

use rocklake_codec::relations::Relation;
use rocklake_types::datum::Datum;
use rocklake_types::value::text::format_text;

use crate::error::{StoreError, StoreResult};
use crate::inner::StoreInner;
use crate::reader::KeyedRow;

/// A key this transaction inserted under a uniqueness rule, remembered so a
/// commit conflict can be reported as the unique violation it is.
pub(crate) struct InsertedKey {
    pub(crate) probe: Vec<u8>,
    pub(crate) violation: UniqueKey,
}

/// A unique key as reported in a violation.
#[derive(Clone)]
pub(crate) struct UniqueKey {
    pub(crate) schema: String,
    pub(crate) table: String,
    pub(crate) columns: String,
    pub(crate) values: String,
}

impl UniqueKey {
    pub(crate) fn error(&self) -> StoreError {
        StoreError::UniqueViolation {
            schema: self.schema.clone(),
            table: self.table.clone(),
            columns: self.columns.clone(),
            values: self.values.clone(),
        }
    }
}

/// The violation of the first of `inserted` whose key another transaction has
/// committed since, if any.
pub(crate) async fn committed_violation(
    inner: &StoreInner,
    inserted: &[InsertedKey],
) -> StoreResult<Option<StoreError>> {
    for key in inserted {
        if inner.reads().scan_prefix_first(&key.probe).await? {
            return Ok(Some(key.violation.error()));
        }
    }
    Ok(None)
}

/// Whether every key that starts with `probe` sorts after `last` (the last
/// row of a table, `None` when it is empty), so none of them is in the table.
pub(crate) fn sorts_after(probe: &[u8], last: Option<&KeyedRow>) -> bool {
    last.is_none_or(|row| probe > row.key.as_slice())
}

/// The column names and values of a key, as a violation reports them
/// (values in PostgreSQL's text form: `Key (id)=(abc) already exists.`).
pub(crate) fn key_description(
    relation: &Relation,
    columns: &[usize],
    row: &[Datum],
) -> (String, String) {
    let names: Vec<&str> = columns
        .iter()
        .map(|i| relation.columns[*i].name.as_str())
        .collect();
    let values: Vec<String> = columns
        .iter()
        .map(|i| format_text(&row[*i]).unwrap_or_else(|| "null".to_string()))
        .collect();
    (names.join(", "), values.join(", "))
}
