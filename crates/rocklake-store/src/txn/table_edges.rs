//! What a write transaction knows about the ends of the catalog tables it
//! inserts into, so that the uniqueness probe of each inserted row needs no
//! SlateDB read while the keys grow (DuckLake's ids do).
//!
//! Once a transaction wrote a table, the scan cache no longer answers its
//! reads of it (they must see its own writes), and every later insert's
//! probe was two SlateDB prefix scans: an `INSERT ... SELECT` of 100,000
//! statistics rows took 20 s against PostgreSQL's 0.1 s. What the snapshot
//! held does not change while the transaction runs, so the snapshot's last
//! key, noted when the cache told it before the first write, still answers
//! for the snapshot; the greatest key the transaction wrote answers for its
//! own writes.

use std::collections::HashMap;

/// Per table prefix, the snapshot's last key; per tag, the greatest key
/// written.
#[derive(Default)]
pub(crate) struct TableEdges {
    snapshot_last: HashMap<Vec<u8>, Option<Vec<u8>>>,
    written_max: HashMap<u8, Vec<u8>>,
}

impl TableEdges {
    /// Notes the last key under `table` in the transaction's snapshot
    /// (`None`: the table was empty).
    pub(crate) fn note_snapshot_last(&mut self, table: &[u8], last: Option<&[u8]>) {
        self.snapshot_last
            .entry(table.to_vec())
            .or_insert_with(|| last.map(<[u8]>::to_vec));
    }

    /// Notes a key the transaction wrote (put or deleted).
    pub(crate) fn note_write(&mut self, key: &[u8]) {
        let Some(&tag) = key.first() else {
            return;
        };
        match self.written_max.get_mut(&tag) {
            Some(max) if max.as_slice() >= key => {}
            Some(max) => {
                max.clear();
                max.extend_from_slice(key);
            }
            None => {
                self.written_max.insert(tag, key.to_vec());
            }
        }
    }

    /// Whether every key under `probe` (a prefix under `table`) sorts after
    /// both the snapshot's last key of `table` and every key this
    /// transaction wrote: then none of them is under `probe`. `false` when
    /// the snapshot's last key was not noted.
    pub(crate) fn beyond_snapshot_and_writes(&self, table: &[u8], probe: &[u8]) -> bool {
        let Some(last) = self.snapshot_last.get(table) else {
            return false;
        };
        let beyond_writes = table
            .first()
            .and_then(|tag| self.written_max.get(tag))
            .is_none_or(|max| probe > max.as_slice());
        beyond_writes && last.as_deref().is_none_or(|last| probe > last)
    }

    /// Whether every key under `probe` sorts after the snapshot's last key of
    /// `table`, when it was noted.
    pub(crate) fn beyond_snapshot(&self, table: &[u8], probe: &[u8]) -> bool {
        self.snapshot_last
            .get(table)
            .is_some_and(|last| last.as_deref().is_none_or(|last| probe > last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_until_the_snapshot_end_is_noted() {
        let mut edges = TableEdges::default();
        edges.note_write(&[7, 1]);
        assert!(!edges.beyond_snapshot_and_writes(&[7], &[7, 9]));
        edges.note_snapshot_last(&[7], Some(&[7, 0, 5]));
        assert!(edges.beyond_snapshot_and_writes(&[7], &[7, 9]));
        assert!(edges.beyond_snapshot(&[7], &[7, 9]));
    }

    #[test]
    fn a_probe_below_a_written_or_snapshot_key_is_not_beyond() {
        let mut edges = TableEdges::default();
        edges.note_snapshot_last(&[7], Some(&[7, 5]));
        edges.note_write(&[7, 8, 1]);
        edges.note_write(&[7, 6]);
        // A key under the probe was written (the probe is its prefix).
        assert!(!edges.beyond_snapshot_and_writes(&[7], &[7, 8]));
        assert!(!edges.beyond_snapshot_and_writes(&[7], &[7, 4]));
        assert!(edges.beyond_snapshot_and_writes(&[7], &[7, 9]));
        // Only the first note of the snapshot's end counts.
        edges.note_snapshot_last(&[7], Some(&[7, 200]));
        assert!(edges.beyond_snapshot(&[7], &[7, 9]));
    }

    #[test]
    fn an_empty_table_in_the_snapshot_leaves_only_the_writes() {
        let mut edges = TableEdges::default();
        edges.note_snapshot_last(&[3], None);
        assert!(edges.beyond_snapshot_and_writes(&[3], &[3, 0]));
        edges.note_write(&[3, 1]);
        assert!(!edges.beyond_snapshot_and_writes(&[3], &[3, 0]));
        assert!(edges.beyond_snapshot_and_writes(&[3], &[3, 2]));
        // Other tags do not matter.
        edges.note_write(&[4, 200]);
        assert!(edges.beyond_snapshot_and_writes(&[3], &[3, 2]));
    }
}
