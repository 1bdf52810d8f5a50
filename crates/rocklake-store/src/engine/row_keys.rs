//! Where each row a transaction touched is stored, so UPDATE and DELETE by
//! row id (`ctid`) find its key.
//!
//! Scans hand their rows over shared (often straight from the scan cache), so
//! the keys of scanned rows are looked up in those shared rows when an update
//! or delete first needs one, instead of being copied into a map for every
//! row read; most scanned rows are never written.

use std::collections::HashMap;

use crate::reader::SharedKeyedRows;

/// Keys by (relation id, row sequence).
#[derive(Default)]
pub(crate) struct RowKeys {
    /// Keys of rows this transaction inserted or updated, or read one by one;
    /// they take precedence over scanned keys.
    written: HashMap<(u64, u64), Vec<u8>>,
    /// Whole scans, in the order they were read.
    scanned: Vec<(u64, SharedKeyedRows)>,
    /// Keys of `scanned[..indexed]`, a later scan's key replacing an earlier.
    index: HashMap<(u64, u64), Vec<u8>>,
    indexed: usize,
}

impl RowKeys {
    /// Records the key of one row.
    pub(crate) fn remember(&mut self, relation_id: u64, row_seq: u64, key: Vec<u8>) {
        self.written.insert((relation_id, row_seq), key);
    }

    /// Records the rows of a scan of `relation_id`.
    pub(crate) fn remember_scan(&mut self, relation_id: u64, rows: SharedKeyedRows) {
        self.scanned.push((relation_id, rows));
    }

    /// Forgets a deleted row.
    pub(crate) fn forget(&mut self, relation_id: u64, row_seq: u64) {
        self.written.remove(&(relation_id, row_seq));
        self.index.remove(&(relation_id, row_seq));
    }

    /// Forgets every row of a dropped relation.
    pub(crate) fn forget_relation(&mut self, relation_id: u64) {
        self.written.retain(|(id, _), _| *id != relation_id);
        self.index.retain(|(id, _), _| *id != relation_id);
        self.scanned.retain(|(id, _)| *id != relation_id);
        self.indexed = self.indexed.min(self.scanned.len());
    }

    /// The key of row `row_seq` of `relation_id`, if this transaction read or
    /// wrote it.
    pub(crate) fn get(&mut self, relation_id: u64, row_seq: u64) -> Option<&[u8]> {
        let id = (relation_id, row_seq);
        if self.written.contains_key(&id) {
            return self.written.get(&id).map(Vec::as_slice);
        }
        for (relation, rows) in &self.scanned[self.indexed..] {
            for row in rows.iter() {
                self.index.insert((*relation, row.row_seq), row.key.clone());
            }
        }
        self.indexed = self.scanned.len();
        self.index.get(&id).map(Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::reader::KeyedRow;

    fn scan(rows: &[(u64, u8)]) -> SharedKeyedRows {
        Arc::new(
            rows.iter()
                .map(|(seq, key)| {
                    Arc::new(KeyedRow {
                        key: vec![*key],
                        row_seq: *seq,
                        row: Vec::new(),
                    })
                })
                .collect(),
        )
    }

    #[test]
    fn written_keys_win_and_later_scans_replace_earlier() {
        let mut keys = RowKeys::default();
        keys.remember_scan(1, scan(&[(10, 1), (11, 2)]));
        assert_eq!(keys.get(1, 10), Some(&[1u8][..]));
        keys.remember(1, 10, vec![9]);
        assert_eq!(keys.get(1, 10), Some(&[9u8][..]), "an update moved the row");
        keys.remember_scan(1, scan(&[(11, 3)]));
        assert_eq!(keys.get(1, 11), Some(&[3u8][..]), "the later scan's key");
        assert_eq!(keys.get(2, 11), None, "other relation");
        keys.forget(1, 11);
        assert_eq!(keys.get(1, 11), None);
        keys.forget_relation(1);
        assert_eq!(keys.get(1, 10), None);
    }
}
