//! Read and write transactions over the catalog.
//!
//! A [`ReadTxn`] reads one consistent SlateDB snapshot. A [`WriteTxn`] is a
//! SlateDB snapshot-isolated transaction: it reads its snapshot plus its own
//! writes, and its commit is one atomic batch that also carries the counters and
//! the hot key. Two transactions writing the same key conflict at commit; an
//! insert of a key that already exists fails at once. The primary keys of
//! generic relations, whose rows are keyed by row sequence, are checked
//! against concurrent transactions in [`generic_keys`].

mod commit;
mod generic_keys;
mod namespaces;
mod relation_map;
mod row_locks;
mod table_edges;

pub use relation_map::RelationMap;
pub use row_locks::RowLockWait;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rocklake_codec::keys::encode_key;
use rocklake_codec::relations::{Relation, RowLayout};
use rocklake_codec::tables::{KeyField, SnapshotColumns};
use rocklake_codec::tags::Tag;
use rocklake_codec::values::encode_namespace;
use rocklake_types::datum::{ColumnDef, Datum, Row};
use slatedb::{DbTransaction, IsolationLevel};

use crate::error::{ObjectKind, StoreError, StoreResult};
use crate::inner::StoreInner;
use crate::key_locks::{Claim, Claims};
use crate::reader::{rows_prefix, KeyedRow};
use crate::scan_cache::{CacheView, Lookup, Read, TagSet, Writes, MAX_WRITES_WRITTEN_THROUGH};
use crate::unique::{committed_violation, key_description, sorts_after, InsertedKey, UniqueKey};
use crate::view::{CatalogView, ReadSource, ReadView};
use generic_keys::TouchedRows;

/// A read-only transaction: on one consistent snapshot of the catalog when
/// opened from its writer, on the replayed state when opened from a replica
/// (see [`crate::replica`]).
pub struct ReadTxn {
    view: ReadView,
    epoch: u64,
    cache: Option<CacheView>,
}

impl ReadTxn {
    pub(crate) fn begin(inner: Arc<StoreInner>) -> StoreResult<ReadTxn> {
        let ended = inner.scan_cache.before_snapshot();
        let snapshot = inner
            .db
            .snapshot()
            .map_err(|e| StoreError::storage("taking a snapshot", e, inner.epoch))?;
        Ok(ReadTxn {
            view: ReadView::Snapshot(snapshot),
            epoch: inner.epoch,
            cache: inner.scan_cache.view(ended),
        })
    }

    /// A transaction over a replica's view; it never uses a scan cache.
    pub(crate) fn over(view: ReadView, epoch: u64) -> ReadTxn {
        ReadTxn {
            view,
            epoch,
            cache: None,
        }
    }

    /// What this transaction reads: its snapshot (or the replica's state)
    /// through the scan cache.
    pub fn view(&self) -> CatalogView<'_> {
        CatalogView::new(self.view.source(), self.epoch, self.cache.as_ref(), None)
    }
}

/// The snapshot row a transaction inserted into `ducklake_snapshot`.
#[derive(Clone, Copy)]
struct SnapshotInsert {
    snapshot_id: i64,
    schema_version: i64,
    next_catalog_id: i64,
    next_file_id: i64,
    time: i64,
}

/// A write transaction. Dropping it without [`WriteTxn::commit`] discards it.
pub struct WriteTxn {
    inner: Arc<StoreInner>,
    txn: DbTransaction,
    wrote: bool,
    unique_keys: Vec<InsertedKey>,
    snapshot_insert: Option<SnapshotInsert>,
    /// Whether this transaction created or dropped a relation or schema.
    registry_changed: bool,
    cache: Option<CacheView>,
    /// Tags of the keys this transaction wrote (it must not read them from the
    /// scan cache; its commit is recorded under them).
    written_tags: TagSet,
    /// What this transaction wrote, for the commit journal and the scan
    /// cache's write-through; `None` once there are too many writes to keep.
    writes: Option<Writes>,
    /// Bytes of keys and values written (counted while `writes` is kept).
    written_bytes: usize,
    /// Tags of the keys this transaction deleted and then wrote again:
    /// `writes` keeps only the last write of a key, which then looks like
    /// a new row (see [`crate::recent_commits`]).
    rewritten_tags: TagSet,
    /// The unique keys this transaction inserted, claimed until it ends
    /// (dropped with it: after a commit, once its outcome is known).
    claims: Claims,
    /// The generic rows this transaction deleted or updated.
    touched_rows: TouchedRows,
    /// The ends of the catalog tables it inserts into (uniqueness probes).
    edges: table_edges::TableEdges,
}

impl WriteTxn {
    pub(crate) fn begin(inner: Arc<StoreInner>) -> StoreResult<WriteTxn> {
        let ended = inner.scan_cache.before_snapshot();
        let txn = inner
            .db
            .begin(IsolationLevel::Snapshot)
            .map_err(|e| StoreError::storage("beginning a transaction", e, inner.epoch))?;
        let cache = inner.scan_cache.view(ended);
        let claims = inner.key_locks.begin();
        Ok(WriteTxn {
            claims,
            inner,
            txn,
            wrote: false,
            unique_keys: Vec::new(),
            snapshot_insert: None,
            registry_changed: false,
            cache,
            written_tags: TagSet::default(),
            writes: Some(Writes::new()),
            written_bytes: 0,
            rewritten_tags: TagSet::default(),
            touched_rows: TouchedRows::default(),
            edges: table_edges::TableEdges::default(),
        })
    }

    /// What this transaction reads: its snapshot plus its own writes,
    /// through the scan cache for the tags it did not write.
    pub fn view(&self) -> CatalogView<'_> {
        CatalogView::new(
            ReadSource::Transaction(&self.txn),
            self.inner.epoch,
            self.cache.as_ref(),
            Some(&self.written_tags),
        )
    }

    fn storage_error(&self, context: &str, error: slatedb::Error) -> StoreError {
        StoreError::storage(context, error, self.inner.epoch)
    }

    /// Remembers a write for the scan cache's write-through.
    fn note_write(&mut self, key: &[u8], value: Option<&[u8]>) {
        self.wrote = true;
        self.written_tags.add_key(key);
        self.edges.note_write(key);
        if let Some(writes) = &mut self.writes {
            self.written_bytes += key.len() + value.map_or(0, <[u8]>::len);
            // Kept for the journal up to its limit, else for the scan cache.
            let keep = match &self.inner.journal {
                Some(journal) => self.written_bytes <= journal.max_payload_bytes(),
                None => writes.len() < MAX_WRITES_WRITTEN_THROUGH,
            };
            if keep {
                if value.is_some() && writes.get(key).is_some_and(Option::is_none) {
                    self.rewritten_tags.add_key(key);
                }
                writes.insert(key.to_vec(), value.map(<[u8]>::to_vec));
            } else {
                self.writes = None;
            }
        }
    }

    pub(crate) fn put(&mut self, key: &[u8], value: &[u8]) -> StoreResult<()> {
        self.note_write(key, Some(value));
        self.txn.put(key, value).map_err(|e| {
            StoreError::storage(
                format!("writing key {}", rocklake_codec::keys::hex_key(key)),
                e,
                self.inner.epoch,
            )
        })
    }

    pub(crate) fn remove(&mut self, key: &[u8]) -> StoreResult<()> {
        self.note_write(key, None);
        self.touched_rows.note(key);
        self.txn.delete(key).map_err(|e| {
            StoreError::storage(
                format!("deleting key {}", rocklake_codec::keys::hex_key(key)),
                e,
                self.inner.epoch,
            )
        })
    }

    /// Creates a schema. Returns `false` when it exists and `if_not_exists` is set.
    pub async fn create_namespace(&mut self, name: &str, if_not_exists: bool) -> StoreResult<bool> {
        if self.view().namespaces().await?.iter().any(|n| n == name) {
            if if_not_exists {
                return Ok(false);
            }
            return Err(StoreError::AlreadyExists {
                kind: ObjectKind::Schema,
                name: name.to_string(),
            });
        }
        let id = self.inner.next_namespace_id.fetch_add(1, Ordering::SeqCst);
        self.put(&encode_key(Tag::Namespace, &[id]), &encode_namespace(name))?;
        self.registry_changed = true;
        Ok(true)
    }

    /// Creates a relation. Returns `None` when it exists and `if_not_exists` is
    /// set. A DuckLake catalog table may exist in one schema only, because its
    /// rows live under the table's own tag.
    pub async fn create_relation(
        &mut self,
        schema: &str,
        name: &str,
        columns: Vec<ColumnDef>,
        primary_key: Vec<usize>,
        if_not_exists: bool,
    ) -> StoreResult<Option<Relation>> {
        let new = NewRelation {
            schema,
            name,
            columns,
            primary_key,
        };
        self.create_relation_among(None, new, if_not_exists).await
    }

    /// [`WriteTxn::create_relation`], checked against `kept` (the relations
    /// this transaction sees, kept by the caller) instead of the registry
    /// read again.
    pub async fn create_relation_among(
        &mut self,
        kept: Option<&RelationMap>,
        new: NewRelation<'_>,
        if_not_exists: bool,
    ) -> StoreResult<Option<Relation>> {
        let NewRelation {
            schema,
            name,
            columns,
            primary_key,
        } = new;
        if !self.view().namespaces().await?.iter().any(|n| n == schema) {
            return Err(StoreError::NotFound {
                kind: ObjectKind::Schema,
                name: schema.to_string(),
            });
        }
        let existing = self.existing(kept).await?;
        if existing.get(schema, name).is_some() {
            if if_not_exists {
                return Ok(None);
            }
            return Err(StoreError::AlreadyExists {
                kind: ObjectKind::Relation,
                name: name.to_string(),
            });
        }
        let relation = Relation::new(
            self.inner.next_relation_id.fetch_add(1, Ordering::SeqCst),
            schema.to_string(),
            name.to_string(),
            columns,
            primary_key,
        );
        if let Some(clash) = existing.sharing_rows_with(&relation, None) {
            return Err(StoreError::Unsupported(format!(
                "table \"{name}\" already exists in schema \"{}\"; RockLake stores one DuckLake catalog per server",
                clash.schema
            )));
        }
        self.put(&relation.registry_key(), &relation.encode())?;
        self.registry_changed = true;
        Ok(Some(relation))
    }

    /// Creates the DuckLake catalog table `name` in `public` with the columns
    /// DuckLake declares (as DuckDB's CREATE TABLE would); `None` if it exists.
    pub async fn create_catalog_table(&mut self, name: &str) -> StoreResult<Option<Relation>> {
        let table = rocklake_codec::tables::CatalogTable::by_name(name).ok_or_else(|| {
            StoreError::NotFound {
                kind: ObjectKind::CatalogTable,
                name: name.to_string(),
            }
        })?;
        self.create_relation(
            "public",
            name,
            table.column_defs(),
            table.primary_key.to_vec(),
            true,
        )
        .await
    }

    /// ALTER TABLE: replaces the registry entry of `schema.name` by what
    /// `change` makes of it. Rows stay where they are unless the change
    /// places them elsewhere (a rename to or from a DuckLake table name):
    /// then every row moves to its new key, keeping its row sequence. Cached
    /// reads of the relation's rows (decoded with the old columns) are dropped
    /// at commit.
    pub async fn alter_relation(
        &mut self,
        schema: &str,
        name: &str,
        change: impl FnOnce(&Relation) -> StoreResult<Relation>,
    ) -> StoreResult<Relation> {
        self.alter_relation_among(None, schema, name, change).await
    }

    /// [`WriteTxn::alter_relation`], checked against `kept` (see
    /// [`WriteTxn::create_relation_among`]).
    pub async fn alter_relation_among(
        &mut self,
        kept: Option<&RelationMap>,
        schema: &str,
        name: &str,
        change: impl FnOnce(&Relation) -> StoreResult<Relation>,
    ) -> StoreResult<Relation> {
        let existing = self.existing(kept).await?;
        let Some(old) = existing.get(schema, name).cloned() else {
            return Err(StoreError::NotFound {
                kind: ObjectKind::Relation,
                name: name.to_string(),
            });
        };
        let new = change(&old)?;
        if new.name != old.name {
            if existing.get(schema, &new.name).is_some() {
                return Err(StoreError::AlreadyExists {
                    kind: ObjectKind::Relation,
                    name: new.name.clone(),
                });
            }
            if let Some(clash) = existing.sharing_rows_with(&new, Some(old.relation_id)) {
                return Err(StoreError::Unsupported(format!(
                    "table \"{}\" already exists in schema \"{}\"; RockLake stores one DuckLake catalog per server",
                    new.name, clash.schema
                )));
            }
        }
        if !new.shares_rows_with(&old) {
            self.move_rows(&old, &new).await?;
        }
        self.replace_registry_entry(&new)?;
        self.forget_cached_rows(&old);
        Ok(new)
    }

    /// Re-keys every row of `old` as a row of `new` (the same relation
    /// placed elsewhere), keeping row sequences.
    pub(crate) async fn move_rows(&mut self, old: &Relation, new: &Relation) -> StoreResult<usize> {
        let rows = self
            .view()
            .reads()
            .rows_under(old, &rows_prefix(old, &[]))
            .await?;
        for row in &rows {
            self.remove(&row.key)?;
        }
        for row in &rows {
            let key = new.row_key(&row.row, row.row_seq)?;
            let value = new.row_value(&row.row, row.row_seq)?;
            self.put(&key, &value)?;
        }
        self.forget_cached_rows(old);
        self.forget_cached_rows(new);
        Ok(rows.len())
    }

    /// Writes `relation`'s registry entry over the one of the same id.
    pub(crate) fn replace_registry_entry(&mut self, relation: &Relation) -> StoreResult<()> {
        self.put(&relation.registry_key(), &relation.encode())?;
        self.registry_changed = true;
        self.forget_cached_rows(relation);
        Ok(())
    }

    /// Makes the scan cache drop its reads of `relation`'s rows when this
    /// transaction commits (they were decoded with columns it changed), and
    /// keeps this transaction from reading them from the cache.
    fn forget_cached_rows(&mut self, relation: &Relation) {
        self.written_tags.add_key(&rows_prefix(relation, &[]));
        self.writes = None;
    }

    /// Drops the relation `schema.name`: its registry entry and every row.
    /// Returns `false` when it does not exist and `if_exists` is set.
    pub async fn drop_relation(
        &mut self,
        schema: &str,
        name: &str,
        if_exists: bool,
    ) -> StoreResult<bool> {
        self.drop_relation_among(None, schema, name, if_exists)
            .await
    }

    /// [`WriteTxn::drop_relation`], finding the relation in `kept` (see
    /// [`WriteTxn::create_relation_among`]).
    pub async fn drop_relation_among(
        &mut self,
        kept: Option<&RelationMap>,
        schema: &str,
        name: &str,
        if_exists: bool,
    ) -> StoreResult<bool> {
        let found = self.existing(kept).await?.get(schema, name).cloned();
        let Some(relation) = found else {
            if if_exists {
                return Ok(false);
            }
            return Err(StoreError::NotFound {
                kind: ObjectKind::Relation,
                name: name.to_string(),
            });
        };
        let prefix = rows_prefix(&relation, &[]);
        let keys: Vec<_> = self
            .view()
            .reads()
            .scan_prefix(&prefix)
            .await?
            .into_iter()
            .map(|(key, _)| key)
            .collect();
        for key in keys {
            self.remove(&key)?;
        }
        self.remove(&relation.registry_key())?;
        self.registry_changed = true;
        Ok(true)
    }

    /// Inserts a row, allocating its row sequence. Fails with
    /// [`StoreError::UniqueViolation`] when its key (or declared primary key)
    /// exists in this transaction's view or among committed rows. In a
    /// generic relation only committed rows this transaction does not see
    /// are checked (the SQL layer checks the others), after waiting for a
    /// transaction in flight that wrote the same primary key.
    pub async fn insert(&mut self, relation: &Relation, row: Row) -> StoreResult<KeyedRow> {
        let row_seq = self.inner.allocate_row_seqs(1);
        let key = relation.row_key(&row, row_seq)?;
        self.check_unique(relation, &key, &row).await?;
        let value = relation.row_value(&row, row_seq)?;
        self.put(&key, &value)?;
        if relation.placement().tag == Tag::Snapshot {
            self.note_snapshot(&row);
        }
        Ok(KeyedRow { key, row_seq, row })
    }

    async fn check_unique(
        &mut self,
        relation: &Relation,
        key: &[u8],
        row: &[Datum],
    ) -> StoreResult<()> {
        let layout = relation.layout();
        let (probe, columns): (Vec<u8>, Vec<usize>) = match layout {
            RowLayout::Generic { .. } => return self.check_generic_key(relation, row, None).await,
            RowLayout::Catalog(table) if table.key_prefix_is(&relation.primary_key) => {
                let fields =
                    &rocklake_codec::keys::decode_key(key).map_err(|source| StoreError::Key {
                        context: format!("inserting into {}", relation.name),
                        source,
                    })?;
                let rocklake_codec::keys::DecodedKey::Fields { fields, .. } = fields else {
                    unreachable!("catalog keys have fields")
                };
                let prefix = encode_key(table.table.tag, &fields[..relation.primary_key.len()]);
                (prefix, relation.primary_key.clone())
            }
            // A key holding the row sequence this insert just allocated
            // (never handed out before, and counted durably with the rows
            // that use it) is new by construction: nothing to probe. DuckLake's
            // statistics and file-list tables are keyed so; probing each of
            // their rows cost two SlateDB seeks (docs/benchmarks.md).
            _ if layout.key_fields().contains(&KeyField::RowSeq) => return Ok(()),
            // The whole key is unique: it holds the primary key, if any.
            _ => (key.to_vec(), layout.key_columns()),
        };
        let (columns, values) = key_description(relation, &columns, row);
        let violation = UniqueKey {
            schema: relation.schema.clone(),
            table: relation.name.clone(),
            columns,
            values,
        };
        let absent = self.beyond_last_row(relation, &probe).await?
            || !self.view().reads().scan_prefix_first(&probe).await?;
        if absent && self.absent_once_claimed(relation, &probe).await? {
            self.unique_keys.push(InsertedKey { probe, violation });
            return Ok(());
        }
        // When a concurrent commit took a key this transaction inserted earlier
        // (typically the ducklake_snapshot id), report that one: it is the
        // violation PostgreSQL would have raised first.
        Err(self
            .earlier_violation()
            .await?
            .unwrap_or_else(|| violation.error()))
    }

    /// Whether no committed row is under `probe` (which this transaction's
    /// snapshot does not hold either), once this transaction holds the claim
    /// on it: a transaction in flight that inserted the same key is waited
    /// for first, as PostgreSQL waits on a unique index, so the duplicate of
    /// two concurrent inserts fails at the second statement, not at commit.
    async fn absent_once_claimed(
        &mut self,
        relation: &Relation,
        probe: &[u8],
    ) -> StoreResult<bool> {
        loop {
            match self.claims.claim(probe) {
                Claim::Claimed => break,
                Claim::HeldBy(holder) => self.claims.wait_for(&holder).await?,
            }
        }
        // Also check what committed after this transaction began, as
        // PostgreSQL does for primary keys; a committed row this transaction
        // deleted itself does not count (DELETE, then INSERT of the same key).
        if self.beyond_latest_last_row(relation, probe)
            || !self.inner.reads().scan_prefix_first(probe).await?
        {
            return Ok(true);
        }
        let committed = self.inner.reads().scan_prefix(probe).await?;
        Ok(committed.iter().all(|(key, _)| self.deleted_here(key)))
    }

    /// Whether this transaction deleted `key` (and has not written it
    /// again); `false` when its writes were too many to keep.
    fn deleted_here(&self, key: &[u8]) -> bool {
        self.writes
            .as_ref()
            .is_some_and(|writes| writes.get(key).is_some_and(Option::is_none))
    }

    /// Whether every key under `probe` sorts after the last row of
    /// `relation` in this transaction's snapshot, as the scan cache knows it
    /// (read and kept on a miss): then no row of the snapshot is under
    /// `probe`. DuckLake's ids grow, so nearly every insert's key lies beyond
    /// the last row, and this answers its uniqueness probe without a SlateDB
    /// seek once the last row is cached. Once this transaction wrote the
    /// table (the cache then no longer answers it), the last row the cache
    /// told before and the transaction's own greatest key answer instead.
    /// `false` when neither can tell (a later commit wrote the table first).
    async fn beyond_last_row(&mut self, relation: &Relation, probe: &[u8]) -> StoreResult<bool> {
        let table = rows_prefix(relation, &[]);
        if !probe.starts_with(&table) {
            return Ok(false);
        }
        if self.written_tags.contains(table[0]) {
            // The cache no longer answers; what it told before does.
            return Ok(self.edges.beyond_snapshot_and_writes(&table, probe));
        }
        let cached = self
            .view()
            .cached_edge_row(relation, &[], slatedb::IterationOrder::Descending)
            .await?;
        if let Some(last) = &cached {
            self.edges
                .note_snapshot_last(&table, last.as_ref().map(|row| row.key.as_slice()));
        }
        Ok(cached.is_some_and(|last| sorts_after(probe, last.as_ref())))
    }

    /// [`Self::beyond_last_row`] in the latest committed state, from a
    /// cached last row only (a read now could see a commit that has not
    /// ended yet, so nothing is read and kept here).
    fn beyond_latest_last_row(&self, relation: &Relation, probe: &[u8]) -> bool {
        let table = rows_prefix(relation, &[]);
        // No commit wrote the table since this transaction's snapshot: the
        // latest state of the table is the snapshot's. (A commit in flight
        // that inserts the same key holds its claim, which this transaction
        // waited for before asking.)
        if probe.starts_with(&table)
            && self.edges.beyond_snapshot(&table, probe)
            && self
                .cache
                .as_ref()
                .is_some_and(|view| view.tag_unchanged(table[0]))
        {
            return true;
        }
        let cache = &self.inner.scan_cache;
        let Some(latest) = cache.view(cache.before_snapshot()) else {
            return false;
        };
        match latest.lookup(&table, Read::Last) {
            Lookup::Hit(rows) if probe.starts_with(&table) => {
                sorts_after(probe, rows.first().map(|row| &**row))
            }
            _ => false,
        }
    }

    /// The first earlier insert of this transaction whose key has since been
    /// committed by another transaction.
    async fn earlier_violation(&self) -> StoreResult<Option<StoreError>> {
        committed_violation(&self.inner, &self.unique_keys).await
    }

    fn note_snapshot(&mut self, row: &[Datum]) {
        let columns = SnapshotColumns::get();
        let get = |i: usize| row.get(i).and_then(Datum::as_i64).unwrap_or(0);
        let time = match row.get(columns.snapshot_time) {
            Some(Datum::TimestampTz(t)) => *t,
            _ => 0,
        };
        let candidate = SnapshotInsert {
            snapshot_id: get(columns.snapshot_id),
            schema_version: get(columns.schema_version),
            next_catalog_id: get(columns.next_catalog_id),
            next_file_id: get(columns.next_file_id),
            time,
        };
        if self
            .snapshot_insert
            .is_none_or(|s| s.snapshot_id < candidate.snapshot_id)
        {
            self.snapshot_insert = Some(candidate);
        }
    }

    /// Replaces the row stored under `old_key` (as read in this transaction) by
    /// `new_row`, keeping its row sequence `row_seq`. A change of key columns
    /// moves the row to its new key; a change of a generic relation's
    /// primary key is checked as [`WriteTxn::insert`] checks it.
    pub async fn update(
        &mut self,
        relation: &Relation,
        old_key: &[u8],
        row_seq: u64,
        new_row: Row,
    ) -> StoreResult<KeyedRow> {
        let key = relation.row_key(&new_row, row_seq)?;
        if key != old_key {
            self.check_unique(relation, &key, &new_row).await?;
            self.remove(old_key)?;
        } else {
            self.check_generic_update(relation, &key, &new_row).await?;
            self.touched_rows.note(&key);
        }
        let value = relation.row_value(&new_row, row_seq)?;
        self.put(&key, &value)?;
        if relation.placement().tag == Tag::Snapshot {
            self.note_snapshot(&new_row);
        }
        Ok(KeyedRow {
            key,
            row_seq,
            row: new_row,
        })
    }

    /// The relations a DDL change is checked against: `kept` when the caller
    /// keeps them, else the registry as this transaction reads it.
    async fn existing<'a>(&self, kept: Option<&'a RelationMap>) -> StoreResult<Existing<'a>> {
        Ok(match kept {
            Some(map) => Existing::Kept(map),
            None => Existing::Read(self.view().relations().await?),
        })
    }

    /// Deletes the row stored under `key` (as read in this transaction).
    pub fn delete(&mut self, key: &[u8]) -> StoreResult<()> {
        self.remove(key)
    }
}

/// A relation to create: where, what it is called, its columns and primary
/// key (column positions).
pub struct NewRelation<'a> {
    /// Its schema.
    pub schema: &'a str,
    /// Its name.
    pub name: &'a str,
    /// Its columns.
    pub columns: Vec<ColumnDef>,
    /// Its primary key's columns, by position; empty for none.
    pub primary_key: Vec<usize>,
}

/// The relations a write transaction sees, for checking a DDL change.
enum Existing<'a> {
    /// Kept by the caller, up to date with this transaction's changes.
    Kept(&'a RelationMap),
    /// Read from the registry.
    Read(Vec<Relation>),
}

impl Existing<'_> {
    /// The names of the relations in `schema`.
    fn names_in(&self, schema: &str) -> Vec<String> {
        match self {
            Existing::Kept(map) => map
                .values()
                .filter(|r| r.schema == schema)
                .map(|r| r.name.clone())
                .collect(),
            Existing::Read(list) => list
                .iter()
                .filter(|r| r.schema == schema)
                .map(|r| r.name.clone())
                .collect(),
        }
    }

    /// The relation `schema.name`.
    fn get(&self, schema: &str, name: &str) -> Option<&Relation> {
        match self {
            Existing::Kept(map) => map.get(schema, name).map(|relation| relation.as_ref()),
            Existing::Read(list) => list.iter().find(|r| r.schema == schema && r.name == name),
        }
    }

    /// A relation other than the one with id `except` whose rows would be
    /// `relation`'s.
    fn sharing_rows_with(&self, relation: &Relation, except: Option<u64>) -> Option<&Relation> {
        match self {
            Existing::Kept(map) => map.sharing_rows_with(relation, except),
            Existing::Read(list) => list
                .iter()
                .find(|r| Some(r.relation_id) != except && r.shares_rows_with(relation)),
        }
    }
}
