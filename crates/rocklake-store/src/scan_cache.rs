//! Decoded rows of whole-prefix scans, shared by the writer's transactions.
//!
//! DuckDB re-reads the same catalog rows in every transaction (all data files
//! of a table, their column statistics, every snapshot), and most of them did
//! not change since the last read. Only this process writes the catalog (a
//! second writer fences it), so it knows exactly when a scan's result goes
//! stale, and can hand out the rows it decoded before instead of merging and
//! decoding the same keys again.
//!
//! Commits are numbered in order. Each cached read (every row under a key
//! prefix, or its first or last row) remembers the commit whose state it
//! holds. A commit that succeeds updates, before it counts as ended, every
//! cached read under whose prefix it wrote (write-through): small ones get
//! the written rows decoded into them (tables such as `ducklake_table_stats`
//! are rewritten by nearly every commit), a first or last row moves to a
//! written row beyond it, and the others are dropped. Reads it did not write
//! under stay as they are. A commit that failed, or wrote too many keys to
//! keep, drops every cached read of the tags (first key bytes, one per
//! catalog table) it wrote. A cached read is therefore valid for every
//! snapshot from its commit on.
//!
//! A transaction may use the cache only if no commit was in flight while its
//! snapshot was taken (a seqlock: the count of ended commits read before the
//! snapshot equals the count of started commits read after it). Its snapshot
//! then holds every commit up to that count and nothing later: it uses cached
//! reads whose commit is within the count, and reads and keeps the others
//! unless a later commit already wrote the tag. Rows read are kept only if no
//! commit wrote their tag since the read began (the commit may have written
//! under the prefix while there was nothing to update). Transactions that
//! cannot prove their state, and reads of a tag a transaction wrote itself,
//! read from SlateDB as before. Replicas, which follow a writer they cannot
//! see commit, never use the cache.
//!
//! The cache also keeps the keys the latest commits wrote (bounded by bytes),
//! so that a reader that kept something derived from a read (the SQL engine's
//! encoded COPY results) can ask what changed since ([`CacheView::changes_since`])
//! instead of reading every row again.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rocklake_codec::relations::Relation;
use rocklake_codec::values::ValueError;

use crate::known_values::{KnownValue, ValueChange, ValueWrite};
use crate::reader::{KeyedRow, SharedKeyedRows};
use crate::recent_commits::RecentCommits;

/// Scans with more rows than this are not kept (memory bound per entry).
const MAX_ROWS_PER_ENTRY: usize = 250_000;
/// Total rows kept over all entries; the least recently used entries go first.
const MAX_CACHED_ROWS: usize = 1_000_000;
/// Prefixes remembered, with or without rows. DuckDB's `SHOW ALL TABLES`
/// reads each table's statistics by its id (two prefixes per table): with
/// 4,096 here, on a catalog of 5,000 tables it evicted every other entry,
/// the whole-table scans a `CREATE TABLE` reads included (the rows stay
/// bounded by `MAX_CACHED_ROWS`).
const MAX_ENTRIES: usize = 32_768;
/// Cached scans with at most this many rows are updated by a commit that
/// writes under them (the update copies the row pointers, see
/// [`SharedKeyedRows`]); larger ones are dropped.
/// Copying is a fraction of reading them again from SlateDB: a DuckDB
/// `CREATE TABLE` on a catalog of 5,000 tables writes `ducklake_table`,
/// `ducklake_column` and `ducklake_inlined_data_tables` (5,000 to 20,000
/// rows each), which DuckDB reads whole right after; with 1,024 here they
/// were dropped and scanned again, 140 ms of server CPU per `CREATE TABLE`
/// against 40 ms (docs/benchmarks.md).
const MAX_ROWS_WRITTEN_THROUGH: usize = 65_536;
/// A transaction that writes more keys than this makes the cached scans of
/// its tags stale instead of updating them.
pub(crate) const MAX_WRITES_WRITTEN_THROUGH: usize = 4096;

/// Which read of a prefix an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Read {
    /// Every row under the prefix.
    All,
    /// The first row in key order (zero or one row).
    First,
    /// The last row in key order (zero or one row).
    Last,
}

/// A cached read: the key prefix (its first byte is the tag) and the read.
type ReadKey = (Vec<u8>, Read);

/// The keys one transaction wrote, in key order, with their last value
/// (`None`: deleted).
pub(crate) type Writes = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

/// The shared cache of one writer.
pub(crate) struct ScanCache {
    /// Tells this cache (so its store) apart from every other one of the
    /// process, for [`CacheView::tag_state`].
    id: u64,
    /// Commits that started (took their number).
    started: AtomicU64,
    /// Commits that ended: their writes are visible, their tags recorded.
    ended: AtomicU64,
    /// Per tag byte, the number of the last commit that wrote under it.
    tag_commit: Vec<AtomicU64>,
    entries: Mutex<Entries>,
    /// The registry version as commits left it.
    registry: KnownValue,
    /// The retention floor as commits left it.
    retain_from: KnownValue,
    /// The writes of the latest commits.
    recent: Mutex<RecentCommits>,
}

#[derive(Default)]
struct Entries {
    by_prefix: HashMap<ReadKey, Entry>,
    rows: usize,
    clock: u64,
}

impl Entries {
    fn put(&mut self, key: ReadKey, commit: u64, rows: SharedKeyedRows, relation: Relation) {
        self.clock += 1;
        let entry = Entry {
            commit,
            rows,
            relation,
            last_used: self.clock,
        };
        self.rows += entry_rows(&entry);
        if let Some(old) = self.by_prefix.insert(key, entry) {
            self.rows -= entry_rows(&old);
        }
        self.evict();
    }

    fn remove(&mut self, key: &ReadKey) {
        if let Some(old) = self.by_prefix.remove(key) {
            self.rows -= entry_rows(&old);
        }
    }

    /// Over a limit, evicts the least recently used entries: down to the row
    /// limit, and an eighth of the entries below the entry limit, so one
    /// sort serves many later reads.
    fn evict(&mut self) {
        if self.rows <= MAX_CACHED_ROWS && self.by_prefix.len() <= MAX_ENTRIES {
            return;
        }
        let mut by_age: Vec<(u64, ReadKey)> = self
            .by_prefix
            .iter()
            .map(|(key, entry)| (entry.last_used, key.clone()))
            .collect();
        by_age.sort_unstable_by_key(|(last_used, _)| *last_used);
        let keep_entries = MAX_ENTRIES - MAX_ENTRIES / 8;
        for (_, key) in by_age {
            if self.rows <= MAX_CACHED_ROWS && self.by_prefix.len() <= keep_entries {
                break;
            }
            self.remove(&key);
        }
    }

    /// Applies the writes of commit `number` to the entries under whose
    /// prefix it wrote (prefixes are the tag plus whole 8-byte key fields, so
    /// they are found from the written keys alone; the other entries stay as
    /// they are and stay valid).
    fn write_through(&mut self, number: u64, writes: &Writes) {
        let mut affected: Vec<ReadKey> = Vec::new();
        for key in writes.keys() {
            for len in (1..=key.len()).step_by(8) {
                for read in [Read::All, Read::First, Read::Last] {
                    let candidate = (key[..len].to_vec(), read);
                    if self.by_prefix.contains_key(&candidate) && !affected.contains(&candidate) {
                        affected.push(candidate);
                    }
                }
            }
        }
        for key in affected {
            let Some(entry) = self.by_prefix.get_mut(&key) else {
                continue;
            };
            let (prefix, read) = (&key.0, key.1);
            let under = writes
                .range::<[u8], _>((Bound::Included(prefix.as_slice()), Bound::Unbounded))
                .take_while(|(written, _)| written.starts_with(prefix));
            let (rows, relation) = (&entry.rows, &entry.relation);
            let updated = match read {
                Read::All if rows.len() <= MAX_ROWS_WRITTEN_THROUGH => {
                    apply_writes(rows, relation, under).ok()
                }
                Read::All => None,
                Read::First | Read::Last => apply_edge(
                    rows.first().map(|row| &**row),
                    relation,
                    under.collect(),
                    read == Read::Last,
                )
                .ok()
                .flatten()
                .map(|row| row.into_iter().map(Arc::new).collect()),
            };
            match updated {
                Some(rows) => {
                    let grown = rows.len() as isize - entry_rows(entry) as isize;
                    entry.rows = Arc::new(rows);
                    entry.commit = number;
                    self.rows = self.rows.saturating_add_signed(grown);
                }
                None => self.remove(&key),
            }
        }
    }

    /// Drops every entry of the tags in `tags`.
    fn drop_tags(&mut self, tags: &TagSet) {
        let stale: Vec<ReadKey> = self
            .by_prefix
            .keys()
            .filter(|(prefix, _)| tags.contains(prefix[0]))
            .cloned()
            .collect();
        for key in stale {
            self.remove(&key);
        }
    }
}

struct Entry {
    /// The commit whose state of the prefix the rows are: the tag's last
    /// writing commit when it was read, or the commit that updated it. Valid
    /// for every snapshot from that commit on, since a later commit writing
    /// under the prefix updates or drops the entry before it ends.
    commit: u64,
    /// What the read returned (shared with the transactions that read it).
    rows: SharedKeyedRows,
    /// The relation the rows were decoded as, to decode written rows into them.
    relation: Relation,
    last_used: u64,
}

fn entry_rows(entry: &Entry) -> usize {
    entry.rows.len()
}

impl ScanCache {
    /// An empty cache.
    pub(crate) fn new() -> ScanCache {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        ScanCache {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            started: AtomicU64::new(0),
            ended: AtomicU64::new(0),
            tag_commit: (0..256).map(|_| AtomicU64::new(0)).collect(),
            entries: Mutex::new(Entries::default()),
            registry: KnownValue::default(),
            retain_from: KnownValue::default(),
            recent: Mutex::default(),
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
    /// `writes` are the commit's writes when it kept them all, for
    /// write-through (see the module documentation); `registry_version` the
    /// registry version it sets, if it changes the registry; `retain_from`
    /// what it writes to the retention floor.
    pub(crate) fn commit_started(
        self: &Arc<Self>,
        tags: TagSet,
        writes: Option<Writes>,
        registry_version: Option<u64>,
        retain_from: ValueWrite,
    ) -> CommitMark {
        let number = self.started.fetch_add(1, Ordering::SeqCst) + 1;
        CommitMark {
            cache: self.clone(),
            number,
            tags,
            rewritten: TagSet::default(),
            writes,
            registry: registry_version.map_or(ValueWrite::None, ValueWrite::Value),
            retain_from,
            succeeded: false,
        }
    }

    /// Ends commit `number`: under the entries lock, applies its writes
    /// (`None` when it failed or wrote too much to keep: its tags' entries are
    /// dropped) and records it under its tags; then counts it as ended.
    fn end_commit(
        &self,
        number: u64,
        (tags, rewritten): (&TagSet, &TagSet),
        writes: Option<Writes>,
        registry: ValueChange,
        retain_from: ValueChange,
    ) {
        self.registry.committed(number, registry);
        self.retain_from.committed(number, retain_from);
        let mut entries = self.entries();
        match &writes {
            Some(writes) => entries.write_through(number, writes),
            None => entries.drop_tags(tags),
        }
        for tag in tags.tags() {
            self.tag_commit[usize::from(tag)].store(number, Ordering::SeqCst);
        }
        drop(entries);
        let bytes = writes.as_ref().map_or(0, |writes| {
            writes
                .iter()
                .map(|(key, value)| key.len() + value.as_ref().map_or(0, Vec::len))
                .sum()
        });
        self.recent().push(
            number,
            (tags.clone(), rewritten.clone()),
            writes.map(Arc::new),
            bytes,
        );
        self.ended.store(number, Ordering::SeqCst);
    }

    /// The latest commits, locked. After a panic while they were locked
    /// they are forgotten (every commit so far counts as unknown).
    fn recent(&self) -> std::sync::MutexGuard<'_, RecentCommits> {
        self.recent.lock().unwrap_or_else(|poisoned| {
            let mut recent = poisoned.into_inner();
            *recent = RecentCommits::forgetting_up_to(self.started.load(Ordering::SeqCst));
            self.recent.clear_poison();
            recent
        })
    }

    /// The kept entries, locked. A panic while they were locked may have left
    /// them half-updated: they are then dropped (every read goes to SlateDB
    /// again), never served.
    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(|poisoned| {
            let mut entries = poisoned.into_inner();
            *entries = Entries::default();
            self.entries.clear_poison();
            entries
        })
    }

    /// The rows kept for `key` in a state a snapshot holding the commits up
    /// to `seen` (and no later one) may use, if any.
    fn lookup(&self, key: &ReadKey, seen: u64) -> Option<SharedKeyedRows> {
        let mut entries = self.entries();
        entries.clock += 1;
        let now = entries.clock;
        let entry = entries
            .by_prefix
            .get_mut(key)
            .filter(|entry| entry.commit <= seen)?;
        entry.last_used = now;
        Some(entry.rows.clone())
    }

    fn store(&self, key: ReadKey, commit: u64, relation: &Relation, rows: SharedKeyedRows) {
        if rows.len() > MAX_ROWS_PER_ENTRY {
            return;
        }
        let mut entries = self.entries();
        // A commit that wrote the tag since the read may have written under
        // the prefix, and found no entry to update: the rows may be stale.
        let tag = usize::from(key.0[0]);
        if self.tag_commit[tag].load(Ordering::SeqCst) != commit {
            return;
        }
        entries.put(key, commit, rows, relation.clone());
    }

    #[cfg(test)]
    fn cached_rows(&self) -> usize {
        self.entries().rows
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

/// `rows` (in key order) with `writes` (keys under the rows' prefix, in key
/// order) applied: written keys replace or join the rows, deleted keys leave.
fn apply_writes<'w>(
    rows: &[Arc<KeyedRow>],
    relation: &Relation,
    writes: impl Iterator<Item = (&'w Vec<u8>, &'w Option<Vec<u8>>)>,
) -> Result<Vec<Arc<KeyedRow>>, ValueError> {
    // Pointers are copied, not rows (see [`SharedKeyedRows`]).
    let mut out = rows.to_vec();
    for (key, value) in writes {
        let at = out.binary_search_by(|row| row.key.as_slice().cmp(key));
        match (at, value) {
            (found, Some(value)) => {
                let decoded = relation.decode_row(key, value)?;
                let row = Arc::new(KeyedRow {
                    key: key.clone(),
                    row_seq: decoded.row_seq,
                    row: decoded.row,
                });
                match found {
                    Ok(i) => out[i] = row,
                    Err(i) => out.insert(i, row),
                }
            }
            (Ok(i), None) => {
                out.remove(i);
            }
            (Err(_), None) => {}
        }
    }
    Ok(out)
}

/// The first (`last` false) or last row under a prefix after `writes` (the
/// keys under the prefix, in key order), given the one before (`current`).
/// `Ok(None)` when the writes leave it unknown (the commit deleted it and
/// wrote nothing beyond it).
fn apply_edge(
    current: Option<&KeyedRow>,
    relation: &Relation,
    writes: Vec<(&Vec<u8>, &Option<Vec<u8>>)>,
    last: bool,
) -> Result<Option<Option<KeyedRow>>, ValueError> {
    let decode = |key: &Vec<u8>, value: &[u8]| -> Result<KeyedRow, ValueError> {
        let decoded = relation.decode_row(key, value)?;
        Ok(KeyedRow {
            key: key.clone(),
            row_seq: decoded.row_seq,
            row: decoded.row,
        })
    };
    let mut puts = writes
        .iter()
        .filter_map(|(key, value)| value.as_ref().map(|value| (*key, value)));
    let extreme = if last { puts.next_back() } else { puts.next() };
    if let Some((key, value)) = extreme {
        let beyond = current.is_none_or(|row| {
            if last {
                key.as_slice() > row.key.as_slice()
            } else {
                key.as_slice() < row.key.as_slice()
            }
        });
        if beyond {
            return Ok(Some(Some(decode(key, value)?)));
        }
    }
    let Some(row) = current else {
        return Ok(Some(None));
    };
    Ok(match writes.iter().find(|(key, _)| **key == row.key) {
        None => Some(Some(row.clone())),
        Some((key, Some(value))) => Some(Some(decode(key, value)?)),
        Some((_, None)) => None,
    })
}

/// A commit in flight; dropping it (after the commit, or when the commit
/// failed or was abandoned) records its tags and ends it.
pub(crate) struct CommitMark {
    cache: Arc<ScanCache>,
    number: u64,
    tags: TagSet,
    /// Tags of keys the commit deleted and wrote again.
    rewritten: TagSet,
    writes: Option<Writes>,
    registry: ValueWrite,
    retain_from: ValueWrite,
    succeeded: bool,
}

impl CommitMark {
    /// Records that the commit's writes are visible, so dropping the mark
    /// carries the cached scans forward instead of making them stale.
    pub(crate) fn succeeded(&mut self) {
        self.succeeded = true;
    }

    /// Records the tags of keys the commit deleted and then wrote again
    /// (its writes show only the last write of each key).
    pub(crate) fn rewrote(&mut self, tags: TagSet) {
        self.rewritten = tags;
    }
}

impl Drop for CommitMark {
    fn drop(&mut self) {
        let writes = self.writes.take().filter(|_| self.succeeded);
        self.cache.end_commit(
            self.number,
            (&self.tags, &self.rewritten),
            writes,
            self.registry.outcome(self.succeeded),
            self.retain_from.outcome(self.succeeded),
        );
    }
}

/// A transaction's access to the cache (see the module documentation).
#[derive(Clone)]
pub(crate) struct CacheView {
    cache: Arc<ScanCache>,
    /// Commits the transaction's snapshot holds: exactly those numbered up to this.
    seen: u64,
}

/// A cache miss whose rows are kept once read: keeping them costs no copy,
/// since the reader gets them shared too.
pub(crate) struct Fill {
    cache: Arc<ScanCache>,
    key: ReadKey,
    commit: u64,
}

impl Fill {
    /// Keeps `rows`, what the read that missed returned, decoded as
    /// `relation`.
    pub(crate) fn store(self, relation: &Relation, rows: SharedKeyedRows) {
        self.cache.store(self.key, self.commit, relation, rows);
    }
}

/// Outcome of a cache lookup.
pub(crate) enum Lookup {
    /// The rows of the prefix as this transaction's snapshot holds them.
    Hit(SharedKeyedRows),
    /// Not kept for this state: read and keep the rows.
    Fill(Fill),
    /// The tag changed after this transaction's snapshot: read only.
    Miss,
}

impl CacheView {
    /// The registry version this transaction's snapshot holds, if known
    /// (see [`crate::known_values`]).
    pub(crate) fn registry_version(&self) -> Option<u64> {
        self.cache.registry.at(self.seen)
    }

    /// Keeps the registry version this transaction read from its snapshot.
    pub(crate) fn keep_registry_version(&self, version: u64) {
        self.cache.registry.keep(self.seen, version);
    }

    /// The retention floor this transaction's snapshot holds, if known.
    pub(crate) fn retain_from(&self) -> Option<u64> {
        self.cache.retain_from.at(self.seen)
    }

    /// Keeps the retention floor this transaction read from its snapshot.
    pub(crate) fn keep_retain_from(&self, floor: u64) {
        self.cache.retain_from.keep(self.seen, floor);
    }

    /// Whether no commit that ended wrote under `tag` since this
    /// transaction's snapshot.
    pub(crate) fn tag_unchanged(&self, tag: u8) -> bool {
        self.cache.tag_commit[usize::from(tag)].load(Ordering::SeqCst) <= self.seen
    }

    /// The state of `tag` this transaction reads, when it is a commit's:
    /// this cache's id and the last commit that wrote under the tag, unless
    /// a commit wrote it after the transaction's snapshot. Equal states
    /// mean equal rows under the tag (for a transaction that did not write
    /// it itself).
    pub(crate) fn tag_state(&self, tag: u8) -> Option<(u64, u64)> {
        let commit = self.cache.tag_commit[usize::from(tag)].load(Ordering::SeqCst);
        (commit <= self.seen).then_some((self.cache.id, commit))
    }

    /// What the commits after commit `since` that this transaction's
    /// snapshot holds wrote under `prefix`: the last write of each key
    /// (`None`: deleted), in key order. `None` when the cache cannot tell:
    /// those commits are no longer all kept, or one of them that wrote under
    /// the prefix's tag failed or wrote too much to keep.
    pub(crate) fn changes_since(&self, prefix: &[u8], since: u64) -> Option<Writes> {
        self.cache.recent().changes_under(prefix, since, self.seen)
    }

    /// Looks up `read` of `prefix` (its first byte is the tag).
    pub(crate) fn lookup(&self, prefix: &[u8], read: Read) -> Lookup {
        let Some(&tag) = prefix.first() else {
            return Lookup::Miss;
        };
        let commit = self.cache.tag_commit[usize::from(tag)].load(Ordering::SeqCst);
        if commit > self.seen {
            return Lookup::Miss;
        }
        let key = (prefix.to_vec(), read);
        match self.cache.lookup(&key, self.seen) {
            Some(rows) => Lookup::Hit(rows),
            None => Lookup::Fill(Fill {
                cache: self.cache.clone(),
                key,
                commit,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::rows_prefix;
    use rocklake_types::datum::Datum;

    fn rows(n: usize) -> SharedKeyedRows {
        Arc::new(
            (0..n)
                .map(|i| {
                    Arc::new(KeyedRow {
                        key: vec![1, i as u8],
                        row_seq: i as u64,
                        row: Vec::new(),
                    })
                })
                .collect(),
        )
    }

    /// Reads `prefix`, keeping `n` rows.
    fn fill(view: &CacheView, tag: u8, n: usize) {
        let Lookup::Fill(fill) = view.lookup(&[tag], Read::All) else {
            panic!("the first read of tag {tag} must fill");
        };
        fill.store(&stats_relation(), rows(n));
    }

    fn tags(keys: &[&[u8]]) -> TagSet {
        let mut set = TagSet::default();
        for key in keys {
            set.add_key(key);
        }
        set
    }

    /// Commits `keys` (all put) as one successful transaction.
    fn commit(cache: &Arc<ScanCache>, keys: &[&[u8]]) {
        let writes: Writes = keys.iter().map(|k| (k.to_vec(), Some(vec![0]))).collect();
        let mut mark = cache.commit_started(tags(keys), Some(writes), None, ValueWrite::None);
        mark.succeeded();
    }

    #[test]
    fn changes_are_known_while_the_commits_are_kept() {
        let cache = Arc::new(ScanCache::new());
        commit(&cache, &[&[1, 5]]);
        let since = cache.ended.load(Ordering::SeqCst);
        commit(&cache, &[&[1, 9], &[1, 3]]);
        commit(&cache, &[&[1, 0, 1], &[2, 1], &[1, 9]]);
        let view = cache.view(cache.before_snapshot()).expect("quiet");
        let keys = |changes: Option<Writes>| changes.map(|c| c.into_keys().collect::<Vec<_>>());
        assert_eq!(
            keys(view.changes_since(&[1], since)),
            Some(vec![vec![1, 0, 1], vec![1, 3], vec![1, 9]])
        );
        assert_eq!(
            keys(view.changes_since(&[1, 9], since)),
            Some(vec![vec![1, 9]])
        );
        assert_eq!(keys(view.changes_since(&[3], since)), Some(vec![]));
        // Commits the snapshot holds, after `since` only.
        assert_eq!(keys(view.changes_since(&[1], since + 2)), Some(vec![]));
        let older = CacheView {
            cache: cache.clone(),
            seen: since + 1,
        };
        assert_eq!(
            keys(older.changes_since(&[1], since)),
            Some(vec![vec![1, 3], vec![1, 9]])
        );

        // A failed commit of the tag: unknown from then on.
        drop(cache.commit_started(tags(&[&[1, 7]]), None, None, ValueWrite::None));
        let after = cache.view(cache.before_snapshot()).expect("quiet");
        assert_eq!(keys(after.changes_since(&[1], since)), None);
        assert_eq!(
            keys(after.changes_since(&[2], since)),
            Some(vec![vec![2, 1]])
        );

        // Commits dropped from the log: unknown.
        for i in 0..crate::recent_commits::MAX_RECENT_COMMITS {
            commit(&cache, &[&[3, (i % 256) as u8]]);
        }
        let later = cache.view(cache.before_snapshot()).expect("quiet");
        assert_eq!(keys(later.changes_since(&[2], since)), None);
        let recent = cache.ended.load(Ordering::SeqCst) - 1;
        assert_eq!(keys(later.changes_since(&[1], recent)), Some(vec![]));
    }

    #[test]
    fn a_key_deleted_and_written_again_is_no_new_row() {
        let cache = Arc::new(ScanCache::new());
        let since = cache.ended.load(Ordering::SeqCst);
        let deleted: Writes = [(vec![1, 5], None)].into();
        let mut mark = cache.commit_started(
            tags(&[&[1, 5]]),
            Some(deleted.clone()),
            None,
            ValueWrite::None,
        );
        mark.succeeded();
        drop(mark);
        commit(&cache, &[&[1, 5]]);
        let view = cache.view(cache.before_snapshot()).expect("quiet");
        assert_eq!(
            view.changes_since(&[1], since),
            Some(deleted),
            "two commits"
        );

        // In one commit, the writes show only the last write of the key.
        let put: Writes = [(vec![2, 1], Some(vec![0]))].into();
        let mut mark = cache.commit_started(tags(&[&[2, 1]]), Some(put), None, ValueWrite::None);
        mark.rewrote(tags(&[&[2, 1]]));
        mark.succeeded();
        drop(mark);
        let view = cache.view(cache.before_snapshot()).expect("quiet");
        assert_eq!(view.changes_since(&[2], since), None, "one commit");
        assert!(view.changes_since(&[1], since).is_some());
    }

    #[test]
    fn hit_until_a_commit_writes_the_tag() {
        let cache = Arc::new(ScanCache::new());
        let view = cache
            .view(cache.before_snapshot())
            .expect("no commit in flight");
        fill(&view, 1, 3);
        assert!(matches!(view.lookup(&[1], Read::All), Lookup::Hit(r) if r.len() == 3));

        // A commit writing tag 2 leaves tag 1 valid for a later snapshot.
        drop(cache.commit_started(tags(&[&[2, 0]]), None, None, ValueWrite::None));
        let later = cache.view(cache.before_snapshot()).expect("quiet");
        assert!(matches!(later.lookup(&[1], Read::All), Lookup::Hit(_)));
        assert!(matches!(later.lookup(&[2], Read::All), Lookup::Fill(_)));

        // A commit writing tag 1: the old snapshot may not see it, the new
        // snapshot must not get the old rows.
        drop(cache.commit_started(tags(&[&[1, 7]]), None, None, ValueWrite::None));
        assert!(matches!(later.lookup(&[1], Read::All), Lookup::Miss));
        let newest = cache.view(cache.before_snapshot()).expect("quiet");
        assert!(
            matches!(newest.lookup(&[1], Read::All), Lookup::Fill(_)),
            "read again and kept"
        );
    }

    #[test]
    fn no_view_while_a_commit_is_in_flight() {
        let cache = Arc::new(ScanCache::new());
        let ended = cache.before_snapshot();
        let mark = cache.commit_started(tags(&[&[1]]), None, None, ValueWrite::None);
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
                matches!(view.lookup(&[1], Read::All), Lookup::Hit(_)),
                "tag 1 kept in use"
            );
        }
        assert!(cache.cached_rows() <= MAX_CACHED_ROWS);
        assert!(matches!(view.lookup(&[1], Read::All), Lookup::Hit(_)));
        assert!(
            matches!(view.lookup(&[2], Read::All), Lookup::Fill(_)),
            "evicted"
        );
    }

    fn stats_relation() -> Relation {
        let table = rocklake_codec::tables::CATALOG_TABLES
            .iter()
            .find(|t| t.name == "ducklake_table_stats")
            .expect("catalog table");
        crate::reader::catalog_relation(table)
    }

    /// A `ducklake_table_stats` row, its key and value.
    fn stats_row(relation: &Relation, table_id: i64, count: i64, seq: u64) -> (KeyedRow, Vec<u8>) {
        let row = vec![
            Datum::Int8(table_id),
            Datum::Int8(count),
            Datum::Int8(count),
            Datum::Int8(count * 10),
        ];
        let key = relation.row_key(&row, seq).unwrap();
        let value = relation.row_value(&row, seq).unwrap();
        let stored = relation.decode_row(&key, &value).unwrap();
        let stored = KeyedRow {
            key,
            row_seq: stored.row_seq,
            row: stored.row,
        };
        (stored, value)
    }

    /// Fills `prefix` with `rows`.
    fn fill_rows(cache: &Arc<ScanCache>, prefix: &[u8], relation: &Relation, rows: Vec<KeyedRow>) {
        let view = cache.view(cache.before_snapshot()).expect("quiet");
        let Lookup::Fill(fill) = view.lookup(prefix, Read::All) else {
            panic!("a read must fill");
        };
        fill.store(relation, Arc::new(rows.into_iter().map(Arc::new).collect()));
    }

    fn hit(cache: &Arc<ScanCache>, prefix: &[u8]) -> Option<Vec<KeyedRow>> {
        let view = cache.view(cache.before_snapshot()).expect("quiet");
        match view.lookup(prefix, Read::All) {
            Lookup::Hit(rows) => Some(rows.iter().map(|row| KeyedRow::clone(row)).collect()),
            _ => None,
        }
    }

    #[test]
    fn a_successful_commit_carries_cached_scans_forward() {
        let relation = stats_relation();
        let cache = Arc::new(ScanCache::new());
        let (one, _) = stats_row(&relation, 1, 10, 1);
        let (two, _) = stats_row(&relation, 2, 20, 2);
        let (seven, _) = stats_row(&relation, 7, 70, 3);
        let table_prefix = rows_prefix(&relation, &[]);
        let seven_prefix = rows_prefix(&relation, &[7]);
        fill_rows(
            &cache,
            &table_prefix,
            &relation,
            vec![one.clone(), two.clone(), seven.clone()],
        );
        fill_rows(&cache, &seven_prefix, &relation, vec![seven.clone()]);

        // Update table 1, delete table 2, add table 3.
        let (one_later, one_value) = stats_row(&relation, 1, 11, 1);
        let (three, three_value) = stats_row(&relation, 3, 30, 4);
        let mut writes = Writes::new();
        writes.insert(one_later.key.clone(), Some(one_value));
        writes.insert(two.key.clone(), None);
        writes.insert(three.key.clone(), Some(three_value));
        let mut written = TagSet::default();
        for key in writes.keys() {
            written.add_key(key);
        }
        let mut mark = cache.commit_started(
            written.clone(),
            Some(writes.clone()),
            None,
            ValueWrite::None,
        );
        mark.succeeded();
        drop(mark);
        assert_eq!(
            hit(&cache, &table_prefix),
            Some(vec![one_later, three, seven.clone()]),
            "the whole-table scan holds the commit's rows, in key order"
        );
        assert_eq!(
            hit(&cache, &seven_prefix),
            Some(vec![seven]),
            "nothing written under table 7: still valid"
        );

        // A commit that failed makes them stale instead.
        drop(cache.commit_started(written, Some(writes), None, ValueWrite::None));
        assert_eq!(hit(&cache, &table_prefix), None);
        assert_eq!(hit(&cache, &seven_prefix), None);
    }

    #[test]
    fn a_commit_shares_the_rows_it_did_not_write() {
        // A long history (ducklake_snapshot, ducklake_snapshot_changes) or a
        // large inlined table is rewritten by commit after commit: the rows
        // a commit did not touch are the same rows, not copies of them.
        let relation = stats_relation();
        let cache = Arc::new(ScanCache::new());
        let prefix = rows_prefix(&relation, &[]);
        let rows: Vec<KeyedRow> = (1..=1000)
            .map(|i| stats_row(&relation, i, i, i as u64).0)
            .collect();
        fill_rows(&cache, &prefix, &relation, rows);
        let before = match cache
            .view(cache.before_snapshot())
            .expect("quiet")
            .lookup(&prefix, Read::All)
        {
            Lookup::Hit(rows) => rows,
            _ => panic!("filled"),
        };
        let (new, value) = stats_row(&relation, 5000, 1, 5000);
        let mut writes = Writes::new();
        let mut written = TagSet::default();
        written.add_key(&new.key);
        writes.insert(new.key, Some(value));
        let mut mark = cache.commit_started(written, Some(writes), None, ValueWrite::None);
        mark.succeeded();
        drop(mark);
        let Lookup::Hit(after) = cache
            .view(cache.before_snapshot())
            .expect("quiet")
            .lookup(&prefix, Read::All)
        else {
            panic!("carried forward");
        };
        assert_eq!(after.len(), 1001);
        assert!(before
            .iter()
            .zip(after.iter())
            .all(|(a, b)| Arc::ptr_eq(a, b)));
    }

    #[test]
    fn large_cached_scans_written_under_are_dropped() {
        let relation = stats_relation();
        let cache = Arc::new(ScanCache::new());
        let rows: Vec<KeyedRow> = (0..=MAX_ROWS_WRITTEN_THROUGH as i64)
            .map(|i| stats_row(&relation, i, i, i as u64).0)
            .collect();
        let prefix = rows_prefix(&relation, &[]);
        fill_rows(&cache, &prefix, &relation, rows);
        let (changed, value) = stats_row(&relation, 5, 50, 5);
        let mut writes = Writes::new();
        let mut written = TagSet::default();
        written.add_key(&changed.key);
        writes.insert(changed.key, Some(value));
        let mut mark = cache.commit_started(written, Some(writes), None, ValueWrite::None);
        mark.succeeded();
        drop(mark);
        assert_eq!(hit(&cache, &prefix), None);
        assert_eq!(cache.cached_rows(), 0);
    }

    #[test]
    fn rows_read_before_a_commit_wrote_their_tag_are_not_kept() {
        let relation = stats_relation();
        let cache = Arc::new(ScanCache::new());
        let prefix = rows_prefix(&relation, &[]);
        let view = cache.view(cache.before_snapshot()).expect("quiet");
        let Lookup::Fill(fill) = view.lookup(&prefix, Read::All) else {
            panic!("a read must fill");
        };
        // A commit writes under the prefix while the read is in progress;
        // there is no entry yet for it to update.
        let (row, value) = stats_row(&relation, 1, 10, 1);
        let mut writes = Writes::new();
        let mut written = TagSet::default();
        written.add_key(&row.key);
        writes.insert(row.key.clone(), Some(value));
        let mut mark = cache.commit_started(written, Some(writes), None, ValueWrite::None);
        mark.succeeded();
        drop(mark);
        fill.store(&relation, Arc::new(Vec::new()));
        assert_eq!(
            hit(&cache, &prefix),
            None,
            "the read's rows predate the commit"
        );
    }

    #[test]
    fn tag_set_holds_every_byte() {
        let set = tags(&[&[0], &[63], &[64], &[255, 1]]);
        assert_eq!(set.tags().collect::<Vec<_>>(), vec![0, 63, 64, 255]);
    }
}
