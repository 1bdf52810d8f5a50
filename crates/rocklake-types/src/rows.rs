//! Rows as they travel between storage, the engine and the wire: stored rows
//! with their identity ([`RowId`], [`ScannedRow`], [`SharedRows`]) and a
//! statement's result ([`ResultRows`]), either owned or picked in place from
//! a scan shared with storage.
//!
//! Most catalog reads DuckDB sends are plain column lists of one table,
//! possibly filtered (`COPY (SELECT a, b FROM t WHERE ...) TO STDOUT`). Their
//! result is described by the shared scan, the indexes of the rows the filter
//! kept and the indexes of the projected columns, and the wire layer encodes
//! the values straight from the shared rows: no value is copied, allocated or
//! freed for the result (see the engine's `pick`).

use std::fmt;
use std::sync::Arc;

use crate::datum::{Datum, Row};

/// A stable identifier of one stored row within its relation. It is what the
/// engine exposes as PostgreSQL's `ctid` (see [`RowId::to_tid`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowId(pub u64);

impl RowId {
    /// The `(block, offset)` pair shown as `ctid`: 65,535 rows per block, offsets
    /// starting at 1 as in PostgreSQL.
    pub fn to_tid(self) -> (u32, u16) {
        let block = (self.0 / 65_535) as u32;
        let offset = (self.0 % 65_535) as u16 + 1;
        (block, offset)
    }

    /// Inverse of [`RowId::to_tid`]; `None` for offset 0 (which names no row).
    pub fn from_tid(block: u32, offset: u16) -> Option<RowId> {
        if offset == 0 {
            return None;
        }
        Some(RowId(u64::from(block) * 65_535 + u64::from(offset - 1)))
    }
}

/// A row as read from storage, with its stable identifier.
#[derive(Debug, Clone, PartialEq)]
pub struct ScannedRow {
    /// Stable row identifier (`ctid`).
    pub id: RowId,
    /// The row's values, one per column of the relation.
    pub row: Row,
}

/// Rows that storage keeps decoded and hands out shared (the catalog store's
/// scan cache, or a scan it just read): the engine reads them in place and
/// never changes them.
pub trait SharedRows: Send + Sync {
    /// Number of rows.
    fn len(&self) -> usize;

    /// Whether there are no rows.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values of row `index`, one per column of the relation.
    fn values(&self, index: usize) -> &[Datum];

    /// The stable identifier of row `index`.
    fn id(&self, index: usize) -> RowId;

    /// Owned copies of the rows, each with room for the `ctid` the executor
    /// appends.
    fn to_stored(&self) -> Vec<ScannedRow> {
        (0..self.len())
            .map(|index| {
                let values = self.values(index);
                let mut row = Vec::with_capacity(values.len() + 1);
                row.extend_from_slice(values);
                ScannedRow {
                    id: self.id(index),
                    row,
                }
            })
            .collect()
    }
}

impl SharedRows for Vec<ScannedRow> {
    fn len(&self) -> usize {
        self.len()
    }

    fn values(&self, index: usize) -> &[Datum] {
        &self[index].row
    }

    fn id(&self, index: usize) -> RowId {
        self[index].id
    }
}

/// A statement's result rows.
#[derive(Clone)]
pub enum ResultRows {
    /// Rows built by the executor.
    Owned(Vec<Row>),
    /// Rows read in place from a shared scan.
    Picked(PickedRows),
}

/// Some columns of some rows of a shared scan, in the scan's row order.
#[derive(Clone)]
pub struct PickedRows {
    source: Arc<dyn SharedRows>,
    /// Indexes of the rows in the result, ascending; `None` for every row.
    rows: Option<Vec<usize>>,
    /// Indexes of the result's columns in the source rows.
    columns: Vec<usize>,
}

impl PickedRows {
    /// `columns` of the `rows` of `source` (every row when `rows` is `None`).
    /// Panics if an index is out of range: callers take them from `source`.
    pub fn new(source: Arc<dyn SharedRows>, rows: Option<Vec<usize>>, columns: Vec<usize>) -> Self {
        if let Some(rows) = &rows {
            assert!(
                rows.iter().all(|&row| row < source.len()),
                "row index out of range"
            );
        }
        PickedRows {
            source,
            rows,
            columns,
        }
    }

    /// The same rows reduced to `columns`, given as indexes into this
    /// result's columns (an outer plain projection over a derived table).
    pub fn project(self, columns: &[usize]) -> Option<Self> {
        let mapped = columns
            .iter()
            .map(|&c| self.columns.get(c).copied())
            .collect::<Option<Vec<usize>>>()?;
        Some(PickedRows {
            columns: mapped,
            ..self
        })
    }

    fn len(&self) -> usize {
        match &self.rows {
            Some(rows) => rows.len(),
            None => self.source.len(),
        }
    }

    fn row(&self, index: usize) -> RowRef<'_> {
        let source_index = match &self.rows {
            Some(rows) => rows[index],
            None => index,
        };
        RowRef {
            values: self.source.values(source_index),
            columns: Some(&self.columns),
        }
    }
}

/// One result row, read where it is.
#[derive(Clone, Copy)]
pub struct RowRef<'a> {
    values: &'a [Datum],
    /// Which of `values` make the row, in order; `None` for all of them.
    columns: Option<&'a [usize]>,
}

impl<'a> RowRef<'a> {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self.columns {
            Some(columns) => columns.len(),
            None => self.values.len(),
        }
    }

    /// Whether the row has no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of column `index`, if there is one.
    pub fn get(&self, index: usize) -> Option<&'a Datum> {
        match self.columns {
            Some(columns) => columns.get(index).and_then(|&c| self.values.get(c)),
            None => self.values.get(index),
        }
    }

    /// The values in column order.
    pub fn iter(&self) -> RowValues<'a> {
        RowValues {
            row: *self,
            next: 0,
        }
    }

    /// An owned copy of the row.
    pub fn to_row(&self) -> Row {
        self.iter().cloned().collect()
    }
}

/// The values of a [`RowRef`], in column order.
pub struct RowValues<'a> {
    row: RowRef<'a>,
    next: usize,
}

impl<'a> Iterator for RowValues<'a> {
    type Item = &'a Datum;

    fn next(&mut self) -> Option<&'a Datum> {
        let value = self.row.get(self.next)?;
        self.next += 1;
        Some(value)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.row.len().saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for RowValues<'_> {}

impl ResultRows {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            ResultRows::Owned(rows) => rows.len(),
            ResultRows::Picked(picked) => picked.len(),
        }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `index`; panics if out of range, like slice indexing.
    pub fn row(&self, index: usize) -> RowRef<'_> {
        match self {
            ResultRows::Owned(rows) => RowRef {
                values: &rows[index],
                columns: None,
            },
            ResultRows::Picked(picked) => picked.row(index),
        }
    }

    /// Every row, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = RowRef<'_>> + '_ {
        (0..self.len()).map(move |index| self.row(index))
    }

    /// Owned rows (copies the values of picked rows).
    pub fn into_rows(self) -> Vec<Row> {
        match self {
            ResultRows::Owned(rows) => rows,
            ResultRows::Picked(picked) => {
                (0..picked.len()).map(|i| picked.row(i).to_row()).collect()
            }
        }
    }
}

impl From<Vec<Row>> for ResultRows {
    fn from(rows: Vec<Row>) -> Self {
        ResultRows::Owned(rows)
    }
}

impl PartialEq for ResultRows {
    /// Rows compare by their values, however they are held.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|(a, b)| a.iter().eq(b.iter()))
    }
}

impl fmt::Debug for ResultRows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|row| row.iter().collect::<Vec<_>>()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> Arc<dyn SharedRows> {
        Arc::new(
            (0..4)
                .map(|i| ScannedRow {
                    id: RowId(i),
                    row: vec![
                        Datum::Int8(i as i64),
                        Datum::Text(format!("v{i}").into()),
                        Datum::Null,
                    ],
                })
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn picked_rows_read_the_chosen_rows_and_columns_in_place() {
        let picked = ResultRows::Picked(PickedRows::new(source(), Some(vec![1, 3]), vec![1, 0]));
        let expected = vec![
            vec![Datum::Text("v1".into()), Datum::Int8(1)],
            vec![Datum::Text("v3".into()), Datum::Int8(3)],
        ];
        assert_eq!(picked.len(), 2);
        assert_eq!(picked.row(1).get(1), Some(&Datum::Int8(3)));
        assert_eq!(picked.row(1).get(2), None);
        assert_eq!(picked.row(0).iter().len(), 2);
        assert_eq!(picked, ResultRows::Owned(expected.clone()));
        assert_eq!(picked.clone().into_rows(), expected);
    }

    #[test]
    fn every_row_when_no_row_list_and_projection_composes() {
        let all = PickedRows::new(source(), None, vec![2, 0, 1]);
        let outer = all.project(&[2, 1]).expect("columns in range");
        let rows = ResultRows::Picked(outer).into_rows();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[2], vec![Datum::Text("v2".into()), Datum::Int8(2)]);
        assert!(PickedRows::new(source(), None, vec![0])
            .project(&[1])
            .is_none());
    }

    #[test]
    fn owned_and_picked_rows_differ_when_values_do() {
        let picked = ResultRows::Picked(PickedRows::new(source(), Some(vec![0]), vec![0]));
        assert_ne!(picked, ResultRows::Owned(vec![vec![Datum::Int8(1)]]));
        assert_ne!(picked, ResultRows::Owned(vec![]));
        assert_eq!(format!("{picked:?}"), "[[Int8(0)]]");
    }
}
