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
    /// Rows of a stored relation shared with storage, read in place. They
    /// have no `ctid` column: a join that needs owned rows appends it.
    Shared(Arc<dyn SharedRows>),
    /// Rows of a stored relation shared with storage for a statement that
    /// reads their `ctid` (a write finding its rows, `ctid` in a query; see
    /// [`crate::exec::fetch::prefetch`]): each row is copied with its
    /// `ctid` appended as the scan passes it on, so a scan of a large table
    /// holds only the rows the statement keeps.
    SharedWithCtid(Arc<dyn SharedRows>),
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

/// Shared rows read in another order, without copying them.
struct Reordered {
    rows: Arc<dyn SharedRows>,
    order: Vec<u32>,
}

impl SharedRows for Reordered {
    fn len(&self) -> usize {
        self.order.len()
    }

    fn values(&self, index: usize) -> &[Datum] {
        self.rows.values(self.order[index] as usize)
    }

    fn id(&self, index: usize) -> RowId {
        self.rows.id(self.order[index] as usize)
    }
}

/// The positions of `rows` in `ctid` order, or `None` when they are in it
/// already (one pass; tables whose key grows with insertion always are).
fn ctid_order(rows: &dyn SharedRows) -> Option<Vec<u32>> {
    let sorted = (1..rows.len()).all(|index| rows.id(index - 1) <= rows.id(index));
    if sorted {
        return None;
    }
    let mut order: Vec<u32> = (0..rows.len() as u32).collect();
    order.sort_unstable_by_key(|&index| rows.id(index as usize));
    Some(order)
}

impl ScanData {
    /// Rows of a stored relation, in `ctid` order (see
    /// [`ScanData::owned_stored`]): shared rows stay shared, owned copies
    /// get their `ctid` appended.
    pub fn from_stored(rows: ScanRows) -> Self {
        match rows {
            ScanRows::Shared(shared) => match ctid_order(shared.as_ref()) {
                None => ScanData::Shared(shared),
                Some(order) => ScanData::Shared(Arc::new(Reordered {
                    rows: shared,
                    order,
                })),
            },
            ScanRows::Owned(rows) => ScanData::owned_stored(rows),
        }
    }

    /// [`ScanData::from_stored`] for a statement that reads the rows'
    /// `ctid`: shared rows stay shared and get it as they are read.
    pub fn from_stored_with_ctid(rows: ScanRows) -> Self {
        match ScanData::from_stored(rows) {
            ScanData::Shared(shared) => ScanData::SharedWithCtid(shared),
            other => other,
        }
    }

    /// Owned rows of a stored relation, each with its `ctid` appended, in
    /// `ctid` order: the order the rows were inserted in (an update keeps a
    /// row's `ctid`). Storage returns them in key order; a query without
    /// ORDER BY then lists a table as PostgreSQL's sequential scan lists an
    /// append-mostly heap, which tools and tests written against PostgreSQL
    /// rely on (see docs/conformance.md).
    pub fn owned_stored(mut rows: Vec<ScannedRow>) -> Self {
        if !rows.windows(2).all(|pair| pair[0].id <= pair[1].id) {
            rows.sort_unstable_by_key(|stored| stored.id);
        }
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
            ScanData::Shared(shared) | ScanData::SharedWithCtid(shared) => shared.len(),
        }
    }

    /// The values of row `index`, read in place (no `ctid` for shared rows:
    /// [`ScanData::row`] gives them theirs).
    pub fn values(&self, index: usize) -> &[Datum] {
        match self {
            ScanData::Owned(rows) => &rows[index],
            ScanData::Shared(shared) | ScanData::SharedWithCtid(shared) => shared.values(index),
        }
    }

    /// Row `index` as a scan passes it on: in place, or copied with its
    /// `ctid` appended when `full` asks for the executor's full layout or
    /// the statement reads it.
    pub fn row(&self, index: usize, full: bool) -> std::borrow::Cow<'_, [Datum]> {
        match self {
            ScanData::Shared(shared) | ScanData::SharedWithCtid(shared)
                if full || matches!(self, ScanData::SharedWithCtid(_)) =>
            {
                std::borrow::Cow::Owned(with_ctid(shared.values(index).to_vec(), shared.id(index)))
            }
            data => std::borrow::Cow::Borrowed(data.values(index)),
        }
    }

    /// Owned copies of the rows in the executor's full layout (stored rows
    /// with their `ctid` last).
    #[cfg(test)]
    pub fn to_rows(&self) -> Vec<Row> {
        match self {
            ScanData::Owned(rows) => rows.clone(),
            ScanData::Shared(shared) | ScanData::SharedWithCtid(shared) => shared
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
    fn stored_rows_come_in_ctid_order() {
        let rows = vec![stored(7, 70), stored(2, 20), stored(5, 50)];
        let shared = ScanData::from_stored(ScanRows::Shared(Arc::new(rows.clone())));
        let owned = ScanData::from_stored(ScanRows::Owned(rows));
        for data in [&shared, &owned] {
            let values: Vec<Datum> = (0..3).map(|i| data.values(i)[0].clone()).collect();
            assert_eq!(values, [Datum::Int8(20), Datum::Int8(50), Datum::Int8(70)]);
        }
        assert_eq!(shared.to_rows(), owned.to_rows());
    }

    #[test]
    fn rows_read_with_their_ctid_get_it_as_they_pass() {
        let rows = vec![stored(9, 90), stored(3, 30)];
        let data = ScanData::from_stored_with_ctid(ScanRows::Shared(Arc::new(rows.clone())));
        assert!(matches!(data, ScanData::SharedWithCtid(_)), "not copied");
        let owned = ScanData::from_stored_with_ctid(ScanRows::Owned(rows));
        for full in [false, true] {
            let passed: Vec<Row> = (0..2).map(|i| data.row(i, full).into_owned()).collect();
            let expected: Vec<Row> = (0..2).map(|i| owned.row(i, full).into_owned()).collect();
            assert_eq!(passed, expected);
            assert_eq!(
                passed[0],
                with_ctid(vec![Datum::Int8(30)], RowId(3)),
                "ctid order, ctid last"
            );
        }
        let in_place = ScanData::from_stored(ScanRows::Shared(Arc::new(vec![stored(1, 10)])));
        assert!(matches!(
            in_place.row(0, false),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(in_place.row(0, true).len(), 2);
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
