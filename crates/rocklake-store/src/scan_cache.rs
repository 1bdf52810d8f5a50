//! Decoded rows of whole-prefix scans, shared by the writer's transactions.
//!
//! DuckDB re-reads the same catalog rows in every transaction (all data files
//! of a table, their column statistics, every snapshot), and most of them did
//! not change since the last read. Only this process writes the catalog (a
//! second writer fences it), so it knows exactly when a scan's result goes
//! stale, and can hand out the rows it decoded before instead of merging and
//! decoding the same keys again.
//!
//! Staleness is tracked per tag (the first key byte, one per catalog table).
//! Commits are numbered in order. A commit records its number under every tag
//! it wrote before it counts as ended; a cached scan remembers the number its
//! tag had when it was read, and is valid for a transaction whose snapshot
//! holds exactly that state of the tag.
//!
//! A transaction may use the cache only if no commit was in flight while its
//! snapshot was taken (a seqlock: the count of ended commits read before the
//! snapshot equals the count of started commits read after it). Its snapshot
//! then holds every commit up to that count and nothing later, so a tag whose
//! last writing commit is within that count is in the state of that commit.
//! Transactions that cannot prove this, and reads of a tag a transaction wrote
//! itself, scan as before. Replicas, which follow a writer they cannot see
//! commit, never use the cache.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::reader::StoredRow;

/// Scans with more rows than this are not kept (memory bound per entry).
const MAX_ROWS_PER_ENTRY: usize = 250_000;
/// Total rows kept over all entries; the least recently used entries go first.
const MAX_CACHED_ROWS: usize = 1_000_000;
/// Prefixes remembered, with or without rows.
const MAX_ENTRIES: usize = 4096;

/// The shared cache of one writer.
pub(crate) struct ScanCache {
    /// Commits that started (took their number).
    started: AtomicU64,
    /// Commits that ended: their writes are visible, their tags recorded.
    ended: AtomicU64,
    /// Per tag byte, the number of the last commit that wrote under it.
    tag_commit: Vec<AtomicU64>,
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    by_prefix: HashMap<Vec<u8>, Entry>,
    rows: usize,
    clock: u64,
}

impl Entries {
    fn put(&mut self, prefix: &[u8], commit: u64, rows: Option<Arc<Vec<StoredRow>>>) {
        self.clock += 1;
        let entry = Entry {
            commit,
            rows,
            last_used: self.clock,
        };
        self.rows += entry_rows(&entry);
        if let Some(old) = self.by_prefix.insert(prefix.to_vec(), entry) {
            self.rows -= entry_rows(&old);
        }
        while self.rows > MAX_CACHED_ROWS || self.by_prefix.len() > MAX_ENTRIES {
            let Some(oldest) = self
                .by_prefix
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(old) = self.by_prefix.remove(&oldest) {
                self.rows -= entry_rows(&old);
            }
        }
    }
}

struct Entry {
    /// The tag's last writing commit when the prefix was read.
    commit: u64,
    /// `None` after the first read of this state: rows are kept from the
    /// second read on, so tables written by nearly every commit (snapshots,
    /// statistics) do not pay for copies nobody reads.
    rows: Option<Arc<Vec<StoredRow>>>,
    last_used: u64,
}

fn entry_rows(entry: &Entry) -> usize {
    entry.rows.as_ref().map_or(0, |rows| rows.len())
}

impl ScanCache {
    /// An empty cache.
    pub(crate) fn new() -> ScanCache {
        ScanCache {
            started: AtomicU64::new(0),
            ended: AtomicU64::new(0),
            tag_commit: (0..256).map(|_| AtomicU64::new(0)).collect(),
            entries: Mutex::new(Entries::default()),
        }
    }

    /// Read before a transaction takes its snapshot; passed to
    /// [`ScanCache::view`] after.
    pub(crate) fn before_snapshot(&self) -> u64 {
        self.ended.load(Ordering::SeqCst)
    }

    /// What a transaction whose snapshot was taken after `before_snapshot`
    /// returned `ended` may use; `None` when a commit was in flight meanwhile.
    pub(crate) fn view(self: &Arc<Self>, ended: u64) -> Option<CacheView> {
        (self.started.load(Ordering::SeqCst) == ended).then(|| CacheView {
            cache: self.clone(),
            seen: ended,
        })
    }

    /// Numbers a commit. Call under the commit lock, before the commit can
    /// become visible; the returned mark ends it when dropped.
    pub(crate) fn commit_started(self: &Arc<Self>, tags: TagSet) -> CommitMark {
        let number = self.started.fetch_add(1, Ordering::SeqCst) + 1;
        CommitMark {
            cache: self.clone(),
            number,
            tags,
        }
    }

    /// The rows kept for `prefix` in the state of `commit`; otherwise records
    /// the read and tells whether the caller should keep its rows.
    fn lookup(&self, prefix: &[u8], commit: u64) -> Result<Arc<Vec<StoredRow>>, bool> {
        let mut entries = self.entries.lock().expect("scan cache");
        entries.clock += 1;
        let now = entries.clock;
        if let Some(entry) = entries.by_prefix.get_mut(prefix) {
            if entry.commit == commit {
                entry.last_used = now;
                return match &entry.rows {
                    Some(rows) => Ok(rows.clone()),
                    None => Err(true),
                };
            }
        }
        entries.put(prefix, commit, None);
        Err(false)
    }

    fn store(&self, prefix: &[u8], commit: u64, rows: Arc<Vec<StoredRow>>) {
        if rows.len() > MAX_ROWS_PER_ENTRY {
            return;
        }
        let mut entries = self.entries.lock().expect("scan cache");
        entries.put(prefix, commit, Some(rows));
    }

    #[cfg(test)]
    fn cached_rows(&self) -> usize {
        self.entries.lock().expect("scan cache").rows
    }
}

/// The tags a write transaction wrote under.
#[derive(Clone, Default)]
pub(crate) struct TagSet([u64; 4]);

impl TagSet {
    /// Adds the tag of `key`.
    pub(crate) fn add_key(&mut self, key: &[u8]) {
        if let Some(&tag) = key.first() {
            self.0[usize::from(tag / 64)] |= 1 << (tag % 64);
        }
    }

    /// Whether the tag byte `tag` is in the set.
    pub(crate) fn contains(&self, tag: u8) -> bool {
        self.0[usize::from(tag / 64)] & (1 << (tag % 64)) != 0
    }

    fn tags(&self) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(|t| self.contains(*t))
    }
}

/// A commit in flight; dropping it (after the commit, or when the commit
/// failed or was abandoned) records its tags and ends it.
pub(crate) struct CommitMark {
    cache: Arc<ScanCache>,
    number: u64,
    tags: TagSet,
}

impl Drop for CommitMark {
    fn drop(&mut self) {
        for tag in self.tags.tags() {
            self.cache.tag_commit[usize::from(tag)].store(self.number, Ordering::SeqCst);
        }
        self.cache.ended.store(self.number, Ordering::SeqCst);
    }
}

/// A transaction's access to the cache (see the module documentation).
#[derive(Clone)]
pub(crate) struct CacheView {
    cache: Arc<ScanCache>,
    /// Commits the transaction's snapshot holds: exactly those numbered up to this.
    seen: u64,
}

/// A cache miss whose rows should be kept once scanned (the second read of
/// the same state).
pub(crate) struct Fill {
    cache: Arc<ScanCache>,
    commit: u64,
}

impl Fill {
    /// Keeps `rows`, the full scan of the prefix that missed.
    pub(crate) fn store(self, prefix: &[u8], rows: Arc<Vec<StoredRow>>) {
        self.cache.store(prefix, self.commit, rows);
    }
}

/// Outcome of a cache lookup.
pub(crate) enum Lookup {
    /// The rows of the prefix as this transaction's snapshot holds them.
    Hit(Arc<Vec<StoredRow>>),
    /// Read before in this state but not kept: scan and keep the rows.
    Fill(Fill),
    /// Not cached (first read of this state, or the tag changed after this
    /// transaction's snapshot): scan only.
    Miss,
}

impl CacheView {
    /// Looks up the full scan of `prefix` (its first byte is the tag).
    pub(crate) fn lookup(&self, prefix: &[u8]) -> Lookup {
        let Some(&tag) = prefix.first() else {
            return Lookup::Miss;
        };
        let commit = self.cache.tag_commit[usize::from(tag)].load(Ordering::SeqCst);
        if commit > self.seen {
            return Lookup::Miss;
        }
        match self.cache.lookup(prefix, commit) {
            Ok(rows) => Lookup::Hit(rows),
            Err(true) => Lookup::Fill(Fill {
                cache: self.cache.clone(),
                commit,
            }),
            Err(false) => Lookup::Miss,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: usize) -> Arc<Vec<StoredRow>> {
        Arc::new(
            (0..n)
                .map(|i| StoredRow {
                    key: vec![1, i as u8],
                    row_seq: i as u64,
                    row: Vec::new(),
                })
                .collect(),
        )
    }

    /// Reads `prefix` twice, keeping `n` rows the second time.
    fn fill(view: &CacheView, tag: u8, n: usize) {
        assert!(matches!(view.lookup(&[tag]), Lookup::Miss), "first read");
        let Lookup::Fill(fill) = view.lookup(&[tag]) else {
            panic!("second read of tag {tag} must fill");
        };
        fill.store(&[tag], rows(n));
    }

    fn tags(keys: &[&[u8]]) -> TagSet {
        let mut set = TagSet::default();
        for key in keys {
            set.add_key(key);
        }
        set
    }

    #[test]
    fn hit_until_a_commit_writes_the_tag() {
        let cache = Arc::new(ScanCache::new());
        let view = cache
            .view(cache.before_snapshot())
            .expect("no commit in flight");
        fill(&view, 1, 3);
        assert!(matches!(view.lookup(&[1]), Lookup::Hit(r) if r.len() == 3));

        // A commit writing tag 2 leaves tag 1 valid for a later snapshot.
        drop(cache.commit_started(tags(&[&[2, 0]])));
        let later = cache.view(cache.before_snapshot()).expect("quiet");
        assert!(matches!(later.lookup(&[1]), Lookup::Hit(_)));
        assert!(matches!(later.lookup(&[2]), Lookup::Miss));

        // A commit writing tag 1: the old snapshot may not see it, the new
        // snapshot must not get the old rows.
        drop(cache.commit_started(tags(&[&[1, 7]])));
        assert!(matches!(later.lookup(&[1]), Lookup::Miss));
        let newest = cache.view(cache.before_snapshot()).expect("quiet");
        assert!(matches!(newest.lookup(&[1]), Lookup::Miss));
        assert!(
            matches!(newest.lookup(&[1]), Lookup::Fill(_)),
            "second read keeps"
        );
    }

    #[test]
    fn no_view_while_a_commit_is_in_flight() {
        let cache = Arc::new(ScanCache::new());
        let ended = cache.before_snapshot();
        let mark = cache.commit_started(tags(&[&[1]]));
        assert!(cache.view(ended).is_none());
        drop(mark);
        assert!(
            cache.view(ended).is_none(),
            "the snapshot may hold half of it"
        );
        assert!(cache.view(cache.before_snapshot()).is_some());
    }

    #[test]
    fn least_recently_used_entries_are_evicted() {
        let cache = Arc::new(ScanCache::new());
        let view = cache.view(cache.before_snapshot()).unwrap();
        for tag in 1..=5u8 {
            fill(&view, tag, MAX_ROWS_PER_ENTRY);
            assert!(
                matches!(view.lookup(&[1]), Lookup::Hit(_)),
                "tag 1 kept in use"
            );
        }
        assert!(cache.cached_rows() <= MAX_CACHED_ROWS);
        assert!(matches!(view.lookup(&[1]), Lookup::Hit(_)));
        assert!(matches!(view.lookup(&[2]), Lookup::Miss));
    }

    #[test]
    fn tag_set_holds_every_byte() {
        let set = tags(&[&[0], &[63], &[64], &[255, 1]]);
        assert_eq!(set.tags().collect::<Vec<_>>(), vec![0, 63, 64, 255]);
    }
}
