//! Binary COPYs of whole tables, kept encoded.
//!
//! DuckDB's DuckLake with filter pushdown off (DuckDB 2.0's metadata
//! connection) reads catalog tables whole, again and again, with the same
//! statement: `COPY (SELECT "a", "b" FROM "public"."t") TO STDOUT (FORMAT
//! binary)`. Such a statement's result is the table's rows, nothing else: no
//! filter, expression, order or session setting enters it, and binary COPY
//! output does not depend on `DateStyle`, `TimeZone` or float settings. So
//! when storage can stamp the state of the rows a transaction reads
//! ([`StorageTxn::read_stamp`](crate::storage::StorageTxn::read_stamp): equal
//! stamps, equal rows), the tuples encoded the first time answer every later
//! run of the statement with the same stamp, sent as they are.
//!
//! The kept tuples are bounded by bytes over the whole process (the least
//! recently used go first; [`EncodedResults::set_capacity`], `rocklake
//! serve --copy-cache-size`); a result larger than half of it is sent but
//! not kept. A statement keeps one result: a new stamp replaces the old one.
//!
//! A kept result also remembers where its read ended
//! ([`ReadEnd`]): when the rows changed only after the last one it holds (a
//! commit added statistics rows for a new data file, DuckLake's usual
//! change), storage hands over just the added rows
//! ([`StorageTxn::scan_added`](crate::storage::StorageTxn::scan_added)) and
//! the result becomes the kept tuples followed by theirs, without reading or
//! encoding the others again.

use std::sync::{Arc, Mutex, OnceLock};

use lru::LruCache;
use rocklake_types::copy::encoded::EncodedTuples;
use rocklake_types::datum::ColumnDef;

use crate::storage::{ReadEnd, ReadStamp, RelationDef};

/// The default capacity: 256 MiB.
pub const DEFAULT_CAPACITY: usize = 256 << 20;

/// Where a kept result belongs: the statement and the table it reads.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EncodedKey {
    statement: String,
    schema: String,
    table: String,
}

impl EncodedKey {
    /// The key of `statement` reading `table`.
    pub fn new(statement: String, table: &RelationDef) -> Self {
        EncodedKey {
            statement,
            schema: table.schema.clone(),
            table: table.name.clone(),
        }
    }
}

struct Kept {
    end: ReadEnd,
    columns: Vec<ColumnDef>,
    tuples: Arc<EncodedTuples>,
}

/// What is kept for a statement, against a transaction's read of its table.
#[derive(Debug)]
pub enum KeptResult {
    /// The result of the same rows: send it.
    Same(Arc<EncodedTuples>),
    /// The result of another state of the rows of the same storage, whose
    /// read ended at `end`.
    Other {
        /// Where the kept result's read ended.
        end: ReadEnd,
        /// Its tuples.
        tuples: Arc<EncodedTuples>,
    },
}

/// The kept results, least recently used first out, and their bytes.
struct Entries {
    by_key: LruCache<EncodedKey, Kept>,
    bytes: usize,
}

impl Default for Entries {
    fn default() -> Self {
        Entries {
            by_key: LruCache::unbounded(),
            bytes: 0,
        }
    }
}

impl Entries {
    fn remove(&mut self, key: &EncodedKey) {
        if let Some(old) = self.by_key.pop(key) {
            self.bytes -= old.tuples.size_bytes();
        }
    }

    /// Drops the least recently used results until the rest fit in
    /// `capacity` bytes.
    fn evict_to(&mut self, capacity: usize) {
        while self.bytes > capacity {
            let Some((_, old)) = self.by_key.pop_lru() else {
                break;
            };
            self.bytes -= old.tuples.size_bytes();
        }
    }
}

/// The binary COPY results kept encoded (see the module docs).
pub struct EncodedResults {
    entries: Mutex<Entries>,
    capacity: std::sync::atomic::AtomicUsize,
}

impl Default for EncodedResults {
    fn default() -> Self {
        EncodedResults::with_capacity(DEFAULT_CAPACITY)
    }
}

impl EncodedResults {
    /// Results holding at most `capacity` bytes of tuples (0: none kept).
    pub fn with_capacity(capacity: usize) -> Self {
        EncodedResults {
            entries: Mutex::default(),
            capacity: capacity.into(),
        }
    }

    /// The process's results, shared by the sessions of every database
    /// (stamps tell storages apart).
    pub fn shared() -> &'static EncodedResults {
        static SHARED: OnceLock<EncodedResults> = OnceLock::new();
        SHARED.get_or_init(EncodedResults::default)
    }

    /// Sets how many bytes of tuples may be kept, dropping what no longer fits.
    pub fn set_capacity(&self, capacity: usize) {
        self.capacity
            .store(capacity, std::sync::atomic::Ordering::Relaxed);
        self.entries().evict_to(capacity);
    }

    fn capacity(&self) -> usize {
        self.capacity.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The largest result kept: half the capacity.
    pub fn entry_limit(&self) -> usize {
        self.capacity() / 2
    }

    /// The entries, locked; dropped after a panic while they were locked.
    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(|poisoned| {
            let mut entries = poisoned.into_inner();
            *entries = Entries::default();
            self.entries.clear_poison();
            entries
        })
    }

    /// What is kept for `key` with these result columns, for a read at
    /// `stamp` (nothing when it is of another storage).
    pub fn get(
        &self,
        key: &EncodedKey,
        stamp: ReadStamp,
        columns: &[ColumnDef],
    ) -> Option<KeptResult> {
        let mut entries = self.entries();
        let kept = entries
            .by_key
            .peek(key)
            .filter(|kept| kept.end.stamp.storage == stamp.storage && kept.columns == columns)?;
        let result = if kept.end.stamp == stamp {
            KeptResult::Same(kept.tuples.clone())
        } else {
            KeptResult::Other {
                end: kept.end.clone(),
                tuples: kept.tuples.clone(),
            }
        };
        entries.by_key.promote(key);
        Some(result)
    }

    /// Keeps `tuples`, the result of `key` read up to `end`, in place of
    /// any earlier one of the statement; the least recently used results
    /// go when they no longer fit.
    pub fn put(
        &self,
        key: EncodedKey,
        end: ReadEnd,
        columns: &[ColumnDef],
        tuples: Arc<EncodedTuples>,
    ) {
        let size = tuples.size_bytes();
        let mut entries = self.entries();
        entries.remove(&key);
        if size > self.entry_limit() {
            return;
        }
        entries.bytes += size;
        entries.by_key.put(
            key,
            Kept {
                end,
                columns: columns.to_vec(),
                tuples,
            },
        );
        entries.evict_to(self.capacity());
    }

    /// Bytes of tuples kept now.
    pub fn kept_bytes(&self) -> usize {
        self.entries().bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocklake_types::copy::encoded::TupleEncoder;
    use rocklake_types::datum::{Datum, PgType};

    fn tuples(rows: usize) -> Arc<EncodedTuples> {
        let mut encoder = TupleEncoder::new(vec![PgType::Int8], usize::MAX);
        for i in 0..rows {
            encoder.push(&[Datum::Int8(i as i64)]).unwrap();
        }
        Arc::new(encoder.finish())
    }

    fn key(statement: &str) -> EncodedKey {
        EncodedKey {
            statement: statement.to_string(),
            schema: "public".to_string(),
            table: "t".to_string(),
        }
    }

    fn stamp(state: u64) -> ReadStamp {
        ReadStamp {
            storage: 1,
            state,
            floor: 0,
        }
    }

    fn end(state: u64) -> ReadEnd {
        ReadEnd {
            stamp: stamp(state),
            positions: Arc::new(state),
        }
    }

    /// The number of tuples kept for the same rows.
    fn same(
        results: &EncodedResults,
        key: &EncodedKey,
        stamp: ReadStamp,
        columns: &[ColumnDef],
    ) -> Option<usize> {
        match results.get(key, stamp, columns)? {
            KeptResult::Same(tuples) => Some(tuples.len()),
            KeptResult::Other { .. } => None,
        }
    }

    fn columns() -> Vec<ColumnDef> {
        vec![ColumnDef::new("id", PgType::Int8)]
    }

    #[test]
    fn a_result_serves_its_stamp_and_columns_only() {
        let results = EncodedResults::with_capacity(1 << 20);
        results.put(key("a"), end(3), &columns(), tuples(10));
        assert_eq!(same(&results, &key("a"), stamp(3), &columns()), Some(10));
        match results.get(&key("a"), stamp(4), &columns()) {
            Some(KeptResult::Other { end: kept, tuples }) => {
                assert_eq!(kept.stamp, stamp(3), "rows changed");
                assert_eq!(kept.positions.downcast_ref::<u64>(), Some(&3));
                assert_eq!(tuples.len(), 10);
            }
            other => panic!("{other:?}"),
        }
        let floor = ReadStamp {
            floor: 2,
            ..stamp(3)
        };
        assert!(
            same(&results, &key("a"), floor, &columns()).is_none(),
            "floor moved"
        );
        let other = ReadStamp {
            storage: 2,
            ..stamp(3)
        };
        assert!(
            same(&results, &key("a"), other, &columns()).is_none(),
            "another storage"
        );
        let text = vec![ColumnDef::new("id", PgType::Text)];
        assert!(
            same(&results, &key("a"), stamp(3), &text).is_none(),
            "other column types"
        );
        assert!(same(&results, &key("b"), stamp(3), &columns()).is_none());
        let mut elsewhere = key("a");
        elsewhere.schema = "s".to_string();
        assert!(
            same(&results, &elsewhere, stamp(3), &columns()).is_none(),
            "same text, another table"
        );
    }

    #[test]
    fn a_new_stamp_replaces_the_old_result() {
        let results = EncodedResults::with_capacity(1 << 20);
        results.put(key("a"), end(3), &columns(), tuples(10));
        let one = results.kept_bytes();
        results.put(key("a"), end(4), &columns(), tuples(10));
        assert_eq!(results.kept_bytes(), one);
        assert!(same(&results, &key("a"), stamp(3), &columns()).is_none());
        assert!(same(&results, &key("a"), stamp(4), &columns()).is_some());
    }

    #[test]
    fn the_least_recently_used_go_when_over_capacity() {
        let size = tuples(100).size_bytes();
        let results = EncodedResults::with_capacity(size * 2 + size / 2);
        results.put(key("a"), end(1), &columns(), tuples(100));
        results.put(key("b"), end(1), &columns(), tuples(100));
        same(&results, &key("a"), stamp(1), &columns()).unwrap();
        results.put(key("c"), end(1), &columns(), tuples(100));
        assert!(
            same(&results, &key("b"), stamp(1), &columns()).is_none(),
            "least recently used"
        );
        assert!(same(&results, &key("a"), stamp(1), &columns()).is_some());
        assert!(same(&results, &key("c"), stamp(1), &columns()).is_some());
        assert!(results.kept_bytes() <= size * 2 + size / 2);
    }

    #[test]
    fn a_result_over_half_the_capacity_is_not_kept() {
        let size = tuples(100).size_bytes();
        let results = EncodedResults::with_capacity(size * 2 - 1);
        results.put(key("a"), end(1), &columns(), tuples(100));
        assert!(same(&results, &key("a"), stamp(1), &columns()).is_none());
        assert_eq!(results.kept_bytes(), 0);
        let off = EncodedResults::with_capacity(0);
        off.put(key("a"), end(1), &columns(), tuples(1));
        assert_eq!(off.kept_bytes(), 0);
        results.put(key("b"), end(1), &columns(), tuples(10));
        results.set_capacity(0);
        assert_eq!(
            results.kept_bytes(),
            0,
            "a smaller capacity drops what no longer fits"
        );
    }
}
