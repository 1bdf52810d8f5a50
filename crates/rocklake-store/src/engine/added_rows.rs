//! The rows added to a relation since a transaction read all of it, for
//! the SQL engine's encoded whole-table COPYs (see
//! [`rocklake_sql::StorageTxn::scan_added`]).
//!
//! A scan hands rows over in `ctid` order, the order of their row
//! sequences. Inserting allocates a row sequence above every one before it
//! and never writes over an existing key (a duplicate key is refused);
//! updating keeps a row's sequence. So when every write since the earlier
//! read under the relation's rows is a put of a row whose sequence is above
//! the greatest that read held, those rows are new and follow all the others:
//! the earlier rows, then these, are the rows now. A delete, or a put of an
//! earlier sequence (an update, a row moved to another key), is not an
//! addition; nor is anything the writer's scan cache no longer knows (a
//! commit that forgot its writes: DDL that re-keys rows, a failed or very
//! large commit).

use std::sync::Arc;

use rocklake_codec::relations::Relation;
use rocklake_codec::values::ValueError;

use crate::reader::{KeyedRow, SharedKeyedRows};
use crate::scan_cache::Writes;

/// Where a transaction's read of all of a relation's rows ended: the
/// relation and the greatest row sequence among the rows it handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AppendPoint {
    pub(crate) relation_id: u64,
    pub(crate) last_row_seq: u64,
}

/// A transaction's last read of all of a relation's rows.
pub(crate) struct WholeRead {
    pub(crate) relation_id: u64,
    /// The rows read, those it hid included.
    pub(crate) rows: SharedKeyedRows,
    /// The retention floor the read hid rows below.
    pub(crate) floor: u64,
}

impl WholeRead {
    /// Where the read ended, of the rows `visible` says it handed out.
    pub(crate) fn end(&self, visible: impl Fn(&KeyedRow) -> bool) -> AppendPoint {
        let last_row_seq = self
            .rows
            .iter()
            .filter(|row| visible(row))
            .map(|row| row.row_seq)
            .max()
            .unwrap_or(0);
        AppendPoint {
            relation_id: self.relation_id,
            last_row_seq,
        }
    }
}

/// Rows added after a read, in row-sequence order, and where a read of
/// them all ends.
pub(crate) type Added = (Vec<Arc<KeyedRow>>, AppendPoint);

/// The rows `changes` (the writes under `relation`'s rows since a read
/// that ended at `point`) added after it, in row-sequence order, and where
/// a read now ends; `None` when the changes are not all additions (see the
/// module docs). Added rows `visible` leaves out are left out.
pub(crate) fn added_rows(
    relation: &Relation,
    point: AppendPoint,
    changes: &Writes,
    visible: impl Fn(&KeyedRow) -> bool,
) -> Result<Option<Added>, ValueError> {
    if point.relation_id != relation.relation_id {
        return Ok(None);
    }
    let mut added = Vec::with_capacity(changes.len());
    for (key, value) in changes {
        let Some(value) = value else {
            return Ok(None);
        };
        let decoded = relation.decode_row(key, value)?;
        if decoded.row_seq <= point.last_row_seq {
            return Ok(None);
        }
        let row = KeyedRow {
            key: key.clone(),
            row_seq: decoded.row_seq,
            row: decoded.row,
        };
        if visible(&row) {
            added.push(Arc::new(row));
        }
    }
    added.sort_unstable_by_key(|row| row.row_seq);
    let last_row_seq = added.last().map_or(point.last_row_seq, |row| row.row_seq);
    Ok(Some((
        added,
        AppendPoint {
            relation_id: point.relation_id,
            last_row_seq,
        },
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocklake_types::datum::{ColumnDef, Datum, PgType};

    fn relation() -> Relation {
        Relation::new(
            7,
            "public".to_string(),
            "t".to_string(),
            vec![ColumnDef::new("id", PgType::Int8)],
            Vec::new(),
        )
    }

    /// A put of row `row_seq` holding `id`.
    fn put(relation: &Relation, row_seq: u64, id: i64) -> (Vec<u8>, Option<Vec<u8>>) {
        let row = vec![Datum::Int8(id)];
        let key = relation.row_key(&row, row_seq).unwrap();
        (key, Some(relation.row_value(&row, row_seq).unwrap()))
    }

    fn point(last_row_seq: u64) -> AppendPoint {
        AppendPoint {
            relation_id: 7,
            last_row_seq,
        }
    }

    fn seqs(added: Option<Added>) -> Option<(Vec<u64>, u64)> {
        added.map(|(rows, end)| (rows.iter().map(|r| r.row_seq).collect(), end.last_row_seq))
    }

    #[test]
    fn only_puts_of_later_rows_are_additions() {
        let relation = relation();
        let all = |_: &KeyedRow| true;
        let writes: Writes = [put(&relation, 12, 1), put(&relation, 11, 2)].into();
        assert_eq!(
            seqs(added_rows(&relation, point(10), &writes, all).unwrap()),
            Some((vec![11, 12], 12))
        );
        assert_eq!(
            seqs(added_rows(&relation, point(10), &Writes::new(), all).unwrap()),
            Some((vec![], 10)),
            "nothing changed"
        );
        let updated: Writes = [put(&relation, 12, 1), put(&relation, 4, 2)].into();
        assert_eq!(
            seqs(added_rows(&relation, point(10), &updated, all).unwrap()),
            None
        );
        let mut deleted: Writes = [put(&relation, 12, 1)].into();
        deleted.insert(put(&relation, 3, 0).0, None);
        assert_eq!(
            seqs(added_rows(&relation, point(10), &deleted, all).unwrap()),
            None
        );
        let other = AppendPoint {
            relation_id: 8,
            last_row_seq: 10,
        };
        assert_eq!(
            seqs(added_rows(&relation, other, &writes, all).unwrap()),
            None
        );
        let hidden = |row: &KeyedRow| row.row_seq != 11;
        assert_eq!(
            seqs(added_rows(&relation, point(10), &writes, hidden).unwrap()),
            Some((vec![12], 12))
        );
    }
}
