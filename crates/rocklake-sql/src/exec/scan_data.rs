//! [`ScanData`]: the rows of one prefetched scan as the executor reads them,
//! either owned by the statement or shared with storage and read in place.

use std::sync::Arc;

use rocklake_types::datum::{Datum, Row};

use rocklake_types::rows::{RowId, ScannedRow, SharedRows};

use crate::storage::ScanRows;

/// The rows of one scan of a statement.
pub enum ScanData {
    /// Rows the statement owns. Rows of stored relations carry their `ctid`
    /// as a trailing column; rows of virtual tables do not have one.
    Owned(Vec<Row>),
    /// Rows of a stored relation shared with storage. They have no `ctid`
    /// column: the binder asks for owned rows when a statement reads `ctid`
    /// from them in place ([`crate::plan::ScanReq::reads_ctid`]), and
    /// [`ScanData::to_rows`] appends it when a join needs owned rows.
    Shared(Arc<dyn SharedRows>),
}

impl Default for ScanData {
    fn default() -> Self {
        ScanData::Owned(Vec::new())
    }
}

/// A stored row with its `ctid` appended, as the executor lays it out.
pub fn with_ctid(mut row: Row, id: RowId) -> Row {
    let (block, offset) = id.to_tid();
    row.push(Datum::Tid { block, offset });
    row
}

impl ScanData {
    /// Rows of a stored relation: shared rows stay shared, owned copies get
    /// their `ctid` appended.
    pub fn from_stored(rows: ScanRows) -> Self {
        match rows {
            ScanRows::Shared(shared) => ScanData::Shared(shared),
            ScanRows::Owned(rows) => ScanData::owned_stored(rows),
        }
    }

    /// Owned rows of a stored relation, each with its `ctid` appended.
    pub fn owned_stored(rows: Vec<ScannedRow>) -> Self {
        ScanData::Owned(
            rows.into_iter()
                .map(|stored| with_ctid(stored.row, stored.id))
                .collect(),
        )
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            ScanData::Owned(rows) => rows.len(),
            ScanData::Shared(shared) => shared.len(),
        }
    }

    /// The values of row `index`, read in place (no `ctid` for shared rows).
    pub fn values(&self, index: usize) -> &[Datum] {
        match self {
            ScanData::Owned(rows) => &rows[index],
            ScanData::Shared(shared) => shared.values(index),
        }
    }

    /// Owned copies of the rows in the executor's full layout (stored rows
    /// with their `ctid` last).
    #[cfg(test)]
    pub fn to_rows(&self) -> Vec<Row> {
        match self {
            ScanData::Owned(rows) => rows.clone(),
            ScanData::Shared(shared) => shared
                .to_stored()
                .into_iter()
                .map(|stored| with_ctid(stored.row, stored.id))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(id: u64, v: i64) -> ScannedRow {
        ScannedRow {
            id: RowId(id),
            row: vec![Datum::Int8(v)],
        }
    }

    #[test]
    fn shared_rows_are_read_in_place_and_copied_with_their_ctid() {
        let rows = vec![stored(0, 10), stored(65_535, 20)];
        let data = ScanData::from_stored(ScanRows::Shared(Arc::new(rows.clone())));
        assert_eq!(data.len(), 2);
        assert_eq!(data.values(1), &[Datum::Int8(20)][..], "no ctid in place");
        let owned = ScanData::from_stored(ScanRows::Owned(rows));
        assert_eq!(data.to_rows(), owned.to_rows());
        assert_eq!(
            owned.values(1),
            &[
                Datum::Int8(20),
                Datum::Tid {
                    block: 1,
                    offset: 1
                }
            ][..]
        );
    }
}
