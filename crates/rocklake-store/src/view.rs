//! [`CatalogView`]: a transaction's view of the catalog, the one home of every
//! typed read (relations, schemas, rows, counters, system keys) for read
//! transactions, write transactions and replicas alike.
//!
//! A view reads its [`ReadSource`] (a writer's snapshot, a replica's replayed
//! state, or a write transaction with its own writes) and serves whole-prefix
//! and edge reads from the writer's scan cache when the transaction may use
//! it: never for a tag the transaction wrote itself, since it must see its
//! own writes.

use std::sync::Arc;

use bytes::Bytes;
use rocklake_codec::keys::{Counter, SystemKey};
use rocklake_codec::relations::Relation;
use rocklake_codec::tags::Tag;
use rocklake_codec::values::{decode_hot_key, pb};
use slatedb::config::{ReadOptions, ScanOptions};
use slatedb::{
    DbIterator, DbReadOps, DbReader, DbSnapshot, DbTransaction, IterationOrder, KeyValue,
};

use crate::error::StoreResult;
use crate::reader::{rows_prefix, KeyedRow, Reads, SharedKeyedRows};
use crate::scan_cache::{CacheView, Lookup, Read, TagSet, Writes};

/// What a read transaction reads: a writer's consistent snapshot or a
/// replica's replayed state.
pub(crate) enum ReadView {
    /// A snapshot of the writer's database.
    Snapshot(Arc<DbSnapshot>),
    /// A replica's reader.
    Replica(Arc<DbReader>),
}

impl ReadView {
    /// What a view over it reads.
    pub(crate) fn source(&self) -> ReadSource<'_> {
        match self {
            ReadView::Snapshot(snapshot) => ReadSource::Snapshot(snapshot),
            ReadView::Replica(reader) => ReadSource::Replica(reader),
        }
    }
}

/// What a [`CatalogView`] reads from.
#[derive(Clone, Copy)]
pub(crate) enum ReadSource<'a> {
    /// A snapshot of the writer's database.
    Snapshot(&'a DbSnapshot),
    /// A replica's replayed state.
    Replica(&'a DbReader),
    /// A write transaction: its snapshot plus its own writes.
    Transaction(&'a DbTransaction),
}

/// A transaction's view of the catalog (see the module docs).
pub struct CatalogView<'a> {
    source: ReadSource<'a>,
    epoch: u64,
    cache: Option<&'a CacheView>,
    /// Tags the transaction wrote: read from storage, never from the cache.
    written: Option<&'a TagSet>,
}

impl<'a> CatalogView<'a> {
    pub(crate) fn new(
        source: ReadSource<'a>,
        epoch: u64,
        cache: Option<&'a CacheView>,
        written: Option<&'a TagSet>,
    ) -> Self {
        CatalogView {
            source,
            epoch,
            cache,
            written,
        }
    }

    /// Raw reads of the source.
    pub(crate) fn reads(&self) -> Reads<'_, ReadSource<'a>> {
        Reads {
            source: &self.source,
            epoch: self.epoch,
        }
    }

    /// Looks `read` of `prefix` up in the scan cache, unless this
    /// transaction wrote the prefix's tag.
    fn cache_lookup(&self, prefix: &[u8], read: Read) -> Lookup {
        match self.cache {
            Some(view) if self.written.is_none_or(|tags| !tags.contains(prefix[0])) => {
                let lookup = view.lookup(prefix, read);
                rocklake_metrics::metrics().scan_cache_lookup(matches!(lookup, Lookup::Hit(_)));
                lookup
            }
            _ => Lookup::Miss,
        }
    }

    /// The state of `relation`'s rows this view reads (see
    /// [`CacheView::tag_state`]), when the transaction may use the scan
    /// cache and did not write under the rows' tag.
    pub(crate) fn rows_state(&self, relation: &Relation) -> Option<(u64, u64)> {
        let tag = rows_prefix(relation, &[])[0];
        if self.written.is_some_and(|tags| tags.contains(tag)) {
            return None;
        }
        self.cache?.tag_state(tag)
    }

    /// What the commits after commit `since` that this view holds wrote
    /// under `relation`'s rows (see [`CacheView::changes_since`]); `None`
    /// when that is not known, or this transaction wrote the rows' tag.
    pub(crate) fn changes_since(&self, relation: &Relation, since: u64) -> Option<Writes> {
        let prefix = rows_prefix(relation, &[]);
        if self.written.is_some_and(|tags| tags.contains(prefix[0])) {
            return None;
        }
        self.cache?.changes_since(&prefix, since)
    }

    /// Every relation (SQL table) that exists.
    pub async fn relations(&self) -> StoreResult<Vec<Relation>> {
        self.reads().relations().await
    }

    /// The relation `schema.name`, if it exists.
    pub async fn relation(&self, schema: &str, name: &str) -> StoreResult<Option<Relation>> {
        self.reads().relation(schema, name).await
    }

    /// Every schema: `public` and those created with CREATE SCHEMA.
    pub async fn namespaces(&self) -> StoreResult<Vec<String>> {
        self.reads().namespaces().await
    }

    /// Rows of `relation` whose key fields (after the relation's own prefix)
    /// start with `prefix_fields`, in key order.
    pub async fn rows(
        &self,
        relation: &Relation,
        prefix_fields: &[u64],
    ) -> StoreResult<Vec<KeyedRow>> {
        Ok(
            Arc::unwrap_or_clone(self.rows_shared(relation, prefix_fields).await?)
                .into_iter()
                .map(Arc::unwrap_or_clone)
                .collect(),
        )
    }

    /// The bytes of `relation`'s keys and values in this view (read from
    /// storage, not the scan cache).
    pub async fn stored_bytes(&self, relation: &Relation) -> StoreResult<u64> {
        let prefix = crate::reader::rows_prefix(relation, &[]);
        Ok(self
            .reads()
            .scan_prefix(&prefix)
            .await?
            .iter()
            .map(|(key, value)| (key.len() + value.len()) as u64)
            .sum())
    }

    /// [`Self::rows`], shared: served from the writer's scan cache when
    /// this transaction may use it (see [`crate::scan_cache`]).
    pub async fn rows_shared(
        &self,
        relation: &Relation,
        prefix_fields: &[u64],
    ) -> StoreResult<SharedKeyedRows> {
        let prefix = rows_prefix(relation, prefix_fields);
        let read = || async {
            let rows = self.reads().rows_under(relation, &prefix).await?;
            StoreResult::Ok(Arc::new(rows.into_iter().map(Arc::new).collect::<Vec<_>>()))
        };
        match self.cache_lookup(&prefix, Read::All) {
            Lookup::Hit(rows) => Ok(rows),
            Lookup::Fill(fill) => {
                let rows = read().await?;
                fill.store(relation, rows.clone());
                Ok(rows)
            }
            Lookup::Miss => read().await,
        }
    }

    /// The first (`Ascending`) or last (`Descending`) row of `relation` in key
    /// order among those whose key fields start with `prefix_fields`.
    pub async fn edge_row(
        &self,
        relation: &Relation,
        prefix_fields: &[u64],
        order: IterationOrder,
    ) -> StoreResult<Option<KeyedRow>> {
        match self.cached_edge_row(relation, prefix_fields, order).await? {
            Some(row) => Ok(row),
            None => self.reads().edge_row(relation, prefix_fields, order).await,
        }
    }

    /// [`Self::edge_row`] as the scan cache serves it (read from SlateDB
    /// and kept when missing); `None` when this transaction may not use
    /// the cache for it.
    pub(crate) async fn cached_edge_row(
        &self,
        relation: &Relation,
        prefix_fields: &[u64],
        order: IterationOrder,
    ) -> StoreResult<Option<Option<KeyedRow>>> {
        let prefix = rows_prefix(relation, prefix_fields);
        let read = match order {
            IterationOrder::Ascending => Read::First,
            IterationOrder::Descending => Read::Last,
        };
        match self.cache_lookup(&prefix, read) {
            Lookup::Hit(rows) => Ok(Some(rows.first().map(|row| KeyedRow::clone(row)))),
            Lookup::Fill(fill) => {
                let row = self
                    .reads()
                    .edge_row(relation, prefix_fields, order)
                    .await?;
                fill.store(
                    relation,
                    Arc::new(row.iter().cloned().map(Arc::new).collect()),
                );
                Ok(Some(row))
            }
            Lookup::Miss => Ok(None),
        }
    }

    /// Rows of a versioned catalog table visible at `snapshot`, filtered by key
    /// order (see [`crate::reader`]).
    pub async fn visible_rows(
        &self,
        relation: &Relation,
        prefix_fields: &[u64],
        snapshot: u64,
    ) -> StoreResult<Vec<KeyedRow>> {
        self.reads()
            .visible_rows(relation, prefix_fields, snapshot)
            .await
    }

    /// The registry version this transaction sees (see
    /// [`Counter::RegistryVersion`]); 0 before the first DDL.
    pub async fn registry_version(&self) -> StoreResult<u64> {
        if let Some(version) = self.cache.and_then(CacheView::registry_version) {
            return Ok(version);
        }
        let version = self
            .reads()
            .get_u64(&Counter::RegistryVersion.key())
            .await?
            .unwrap_or(0);
        if let Some(view) = self.cache {
            view.keep_registry_version(version);
        }
        Ok(version)
    }

    /// The retention floor (`retain-from` system key): the oldest snapshot
    /// still readable; 0 when nothing was ever given up.
    pub async fn retain_from(&self) -> StoreResult<u64> {
        // A transaction that wrote a system key reads its own writes.
        let cache = self.cache.filter(|_| {
            self.written
                .is_none_or(|tags| !tags.contains(Tag::System.byte()))
        });
        if let Some(floor) = cache.and_then(CacheView::retain_from) {
            return Ok(floor);
        }
        let floor = self
            .reads()
            .get_u64(&SystemKey::RetainFrom.key())
            .await?
            .unwrap_or(0);
        if let Some(view) = cache {
            view.keep_retain_from(floor);
        }
        Ok(floor)
    }

    /// The latest committed snapshot as recorded in the hot key, if any.
    pub async fn hot_key(&self) -> StoreResult<Option<pb::HotKey>> {
        let Some(bytes) = self.reads().get(&SystemKey::HotKey.key()).await? else {
            return Ok(None);
        };
        Ok(Some(decode_hot_key(&bytes)?))
    }
}

#[async_trait::async_trait]
impl DbReadOps for ReadSource<'_> {
    async fn get_with_options<K: AsRef<[u8]> + Send>(
        &self,
        key: K,
        options: &ReadOptions,
    ) -> Result<Option<Bytes>, slatedb::Error> {
        match self {
            ReadSource::Snapshot(s) => s.get_with_options(key, options).await,
            ReadSource::Replica(r) => r.get_with_options(key, options).await,
            ReadSource::Transaction(t) => t.get_with_options(key, options).await,
        }
    }

    async fn get_key_value_with_options<K: AsRef<[u8]> + Send>(
        &self,
        key: K,
        options: &ReadOptions,
    ) -> Result<Option<KeyValue>, slatedb::Error> {
        match self {
            ReadSource::Snapshot(s) => s.get_key_value_with_options(key, options).await,
            ReadSource::Replica(r) => r.get_key_value_with_options(key, options).await,
            ReadSource::Transaction(t) => t.get_key_value_with_options(key, options).await,
        }
    }

    async fn scan_with_options<T>(
        &self,
        range: T,
        options: &ScanOptions,
    ) -> Result<DbIterator, slatedb::Error>
    where
        T: slatedb::ByteRangeBounds + Send,
    {
        match self {
            ReadSource::Snapshot(s) => s.scan_with_options(range, options).await,
            ReadSource::Replica(r) => r.scan_with_options(range, options).await,
            ReadSource::Transaction(t) => t.scan_with_options(range, options).await,
        }
    }
}
