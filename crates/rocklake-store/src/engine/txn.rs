//! [`StoreTxn`]: one SQL transaction over the store. Relations are resolved
//! against the registry as of the transaction's snapshot (shared between
//! transactions at the same registry version); scans become key-prefix reads
//! using the columns the filter pins; updates and deletes find their rows by
//! the keys remembered when they were read.

use std::sync::Arc;

use async_trait::async_trait;
use rocklake_codec::relations::{Relation, RowLayout};
use rocklake_codec::tables::SnapshotColumns;
use rocklake_codec::tags::Tag;
use rocklake_sql::storage::{
    AddedRows, ColumnBound, LockStrength, LockWait, ReadEnd, ReadStamp, RelationChange,
    RelationDef, RelationList, RowId, ScanFilter, ScanRows, ScannedRow, SharedRows, StorageResult,
    StorageTxn,
};
use rocklake_types::datum::{Datum, Row};
use rocklake_types::{SqlError, SqlState};
use slatedb::IterationOrder;

use super::added_rows::{added_rows, AppendPoint, WholeRead};
use super::errors::to_sql;
use super::registry::{definition, Registry, RegistryCache, SharedDefinitions};
use super::row_keys::RowKeys;
use crate::error::StoreError;
use crate::location::StoreLocation;
use crate::reader::{KeyedRow, SharedKeyedRows};
use crate::txn::{NewRelation, ReadTxn, RelationMap, RowLockWait, WriteTxn};
use crate::view::CatalogView;

/// The rows of one scan as the store read them (perhaps from the scan
/// cache), handed to the engine without copying.
struct SharedScan(SharedKeyedRows);
impl SharedRows for SharedScan {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn values(&self, index: usize) -> &[Datum] {
        &self.0[index].row
    }

    fn id(&self, index: usize) -> RowId {
        RowId(self.0[index].row_seq)
    }
}
/// Some rows of one scan (those at `visible`, in order), without copying.
struct SharedScanPart {
    rows: SharedKeyedRows,
    visible: Vec<usize>,
}
impl SharedRows for SharedScanPart {
    fn len(&self) -> usize {
        self.visible.len()
    }

    fn values(&self, index: usize) -> &[Datum] {
        &self.rows[self.visible[index]].row
    }

    fn id(&self, index: usize) -> RowId {
        RowId(self.rows[self.visible[index]].row_seq)
    }
}

pub(super) enum Access {
    Read(ReadTxn),
    Write(Box<WriteTxn>),
}
impl Access {
    /// What the transaction reads.
    fn view(&self) -> CatalogView<'_> {
        match self {
            Access::Read(txn) => txn.view(),
            Access::Write(txn) => txn.view(),
        }
    }
}

/// One SQL transaction over the store.
pub(super) struct StoreTxn {
    /// Where the catalog lives (for its stored size).
    location: StoreLocation,
    access: Access,
    registry_cache: Arc<RegistryCache>,
    /// The relations as this transaction sees them (sharing every entry it
    /// did not change with the registry it loaded).
    registry: Option<Registry>,
    /// The registry version `registry` was loaded at.
    registry_version: u64,
    /// The engine's list of `registry` while this transaction has not
    /// changed it, shared with the other transactions at that version.
    definitions: Option<Arc<SharedDefinitions>>,
    /// Whether this transaction created or dropped a relation or schema.
    registry_changed: bool,
    /// Keys of the rows this transaction has read or written, so updates and
    /// deletes can find them.
    row_keys: RowKeys,
    /// The retention floor, read on the first scan of `ducklake_snapshot`.
    retain_from: Option<u64>,
    /// The last read of all of a relation's rows, for [`StorageTxn::read_end`].
    whole_read: Option<WholeRead>,
}
/// Whether a `ducklake_snapshot` row is below the retention floor.
fn snapshot_id_below(row: &[Datum], floor: u64) -> bool {
    row.get(SnapshotColumns::get().snapshot_id)
        .and_then(Datum::as_i64)
        .is_some_and(|id| id >= 0 && (id as u64) < floor)
}
/// Whether a read with retention floor `floor` (0: none) hands `row` out.
fn retained(row: &[Datum], floor: u64) -> bool {
    floor == 0 || !snapshot_id_below(row, floor)
}
fn as_key_field(datum: &Datum) -> Option<u64> {
    datum.as_i64().and_then(|v| u64::try_from(v).ok())
}
/// The longest run of leading key fields the filter pins to one value each:
/// the key prefix a scan can seek to.
fn key_prefix(key_columns: &[usize], filter: &ScanFilter) -> Vec<u64> {
    let mut prefix = Vec::new();
    for &column in key_columns {
        let pinned = filter.bounds.iter().find_map(|(index, bound)| match bound {
            ColumnBound::Eq(value) if *index == column => as_key_field(value),
            _ => None,
        });
        match pinned {
            Some(value) => prefix.push(value),
            None => break,
        }
    }
    prefix
}
/// The rows of a scan, in key order, that a range bound on the key column
/// right after the seek prefix admits: positions `start..end`, found by
/// binary search instead of handing every row to the filter (DuckDB's
/// `snapshot_id > N` over `ducklake_snapshot_changes` at each commit). Only
/// exact integer bounds narrow, and only to a superset of the wanted rows:
/// the statement's WHERE clause still applies.
fn key_range(
    rows: &[Arc<KeyedRow>],
    key_columns: &[usize],
    prefix: &[u64],
    filter: &ScanFilter,
) -> std::ops::Range<usize> {
    let all = 0..rows.len();
    let Some(&column) = key_columns.get(prefix.len()) else {
        return all;
    };
    let field = |row: &Arc<KeyedRow>| row.row.get(column).and_then(Datum::as_i64);
    let (mut start, mut end) = (0, rows.len());
    for (index, bound) in &filter.bounds {
        let ColumnBound::Range { lower, upper } = bound else {
            continue;
        };
        if *index != column {
            continue;
        }
        if let Some((value, inclusive)) = lower {
            if let Some(low) = value.as_i64() {
                let at = rows.partition_point(|row| {
                    field(row).is_some_and(|v| if *inclusive { v < low } else { v <= low })
                });
                start = start.max(at);
            }
        }
        if let Some((value, inclusive)) = upper {
            if let Some(high) = value.as_i64() {
                let at = rows.partition_point(|row| {
                    field(row).is_some_and(|v| if *inclusive { v <= high } else { v < high })
                });
                end = end.min(at);
            }
        }
    }
    start..end.max(start)
}

/// When the filter asks only for the row with the largest (smallest) value of
/// the key field right after `prefix`, and every bound is one the prefix
/// already enforces, that row is the last (first) key under the prefix: the
/// scan order that finds it with one seek.
fn extreme_order(
    key_columns: &[usize],
    prefix: &[u64],
    filter: &ScanFilter,
) -> Option<IterationOrder> {
    let extreme = filter.extreme?;
    let pinned = &key_columns[..prefix.len()];
    let all_enforced = filter
        .bounds
        .iter()
        .all(|(column, bound)| matches!(bound, ColumnBound::Eq(_)) && pinned.contains(column));
    if !all_enforced || key_columns.get(prefix.len()) != Some(&extreme.column) {
        return None;
    }
    Some(if extreme.largest {
        IterationOrder::Descending
    } else {
        IterationOrder::Ascending
    })
}
impl StoreTxn {
    pub(super) fn new(
        access: Access,
        registry_cache: Arc<RegistryCache>,
        location: StoreLocation,
    ) -> StoreTxn {
        StoreTxn {
            location,
            access,
            registry_cache,
            registry: None,
            registry_version: 0,
            definitions: None,
            registry_changed: false,
            row_keys: RowKeys::default(),
            retain_from: None,
            whole_read: None,
        }
    }

    fn writer(&mut self) -> StorageResult<&mut WriteTxn> {
        match &mut self.access {
            Access::Write(txn) => Ok(txn),
            Access::Read(_) => Err(to_sql(StoreError::ReadOnly)),
        }
    }

    /// The write transaction with the relations it sees (loaded before).
    fn writer_and_relations(&mut self) -> StorageResult<(&mut WriteTxn, Option<&RelationMap>)> {
        match &mut self.access {
            Access::Write(txn) => Ok((txn, self.registry.as_ref().map(Registry::by_name))),
            Access::Read(_) => Err(to_sql(StoreError::ReadOnly)),
        }
    }

    async fn registry(&mut self) -> StorageResult<&Registry> {
        if self.registry.is_none() {
            let (version, registry, definitions) = self.load_registry().await?;
            self.registry_version = version;
            self.registry = Some(registry);
            self.definitions = Some(definitions);
        }
        Ok(self.registry.as_ref().expect("loaded above"))
    }

    /// The registry for a change by this transaction (its list no longer
    /// the shared one).
    async fn registry_mut(&mut self) -> StorageResult<&mut Registry> {
        self.registry().await?;
        self.registry_changed = true;
        self.definitions = None;
        Ok(self.registry.as_mut().expect("loaded above"))
    }

    /// The registry at this transaction's snapshot: from the cache when its
    /// version matches, otherwise scanned (and cached if newer).
    async fn load_registry(&self) -> StorageResult<(u64, Registry, Arc<SharedDefinitions>)> {
        let version = self
            .access
            .view()
            .registry_version()
            .await
            .map_err(to_sql)?;
        if let Some((registry, definitions)) = self.registry_cache.at(version) {
            return Ok((version, registry, definitions));
        }
        let list = self.access.view().relations().await.map_err(to_sql)?;
        let registry = Registry::of(list);
        let definitions = self.registry_cache.publish(version, registry.clone());
        Ok((version, registry, definitions))
    }

    /// The stored relation `def` names: by the id this store gave it when
    /// it listed it (checked against its name), else by name.
    async fn resolve(&mut self, def: &RelationDef) -> StorageResult<Arc<Relation>> {
        let registry = self.registry().await?;
        let by_id = def
            .storage_id
            .and_then(|id| registry.by_id(id))
            .filter(|found| found.name == def.name && found.schema == def.schema);
        by_id
            .or_else(|| registry.get(&def.schema, &def.name))
            .cloned()
            .ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("relation \"{}\" does not exist", def.name),
                )
            })
    }

    /// The retention floor for a scan of `ducklake_snapshot`; fails with
    /// [`StoreError::BelowRetention`] when the filter pins only snapshots
    /// below it (time travel to a snapshot that was given up).
    async fn snapshot_floor(&mut self, filter: &ScanFilter) -> StorageResult<u64> {
        let floor = match self.retain_from {
            Some(floor) => floor,
            None => {
                let floor = self.access.view().retain_from().await.map_err(to_sql)?;
                self.retain_from = Some(floor);
                floor
            }
        };
        if floor == 0 {
            return Ok(0);
        }
        for (column, bound) in &filter.bounds {
            if *column != SnapshotColumns::get().snapshot_id {
                continue;
            }
            let pinned: Vec<i64> = match bound {
                ColumnBound::Eq(value) => value.as_i64().into_iter().collect(),
                ColumnBound::In(values) => values.iter().filter_map(Datum::as_i64).collect(),
                ColumnBound::Range { .. } => continue,
            };
            if let Some(&requested) = pinned.iter().max() {
                if requested >= 0 && (requested as u64) < floor {
                    return Err(to_sql(StoreError::BelowRetention {
                        requested: requested as u64,
                        retain_from: floor,
                    }));
                }
            }
        }
        Ok(floor)
    }

    fn remembered(&mut self, relation: &Relation, id: RowId) -> StorageResult<Vec<u8>> {
        self.row_keys
            .get(relation.relation_id, id.0)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| {
                SqlError::internal(format!(
                    "row {} of \"{}\" was not read in this transaction",
                    id.0, relation.name
                ))
            })
    }
}
#[async_trait]
impl StorageTxn for StoreTxn {
    async fn relation(&mut self, schema: &str, name: &str) -> StorageResult<Option<RelationDef>> {
        Ok(self
            .registry()
            .await?
            .get(schema, name)
            .map(|relation| definition(relation)))
    }

    async fn relations(&mut self) -> StorageResult<RelationList> {
        self.registry().await?;
        let registry = self.registry.as_ref().expect("loaded above");
        Ok(match &self.definitions {
            Some(shared) => shared.get_or_init(|| registry.definitions()).clone(),
            None => registry.definitions(),
        })
    }

    async fn catalog_version(&mut self) -> StorageResult<Option<u64>> {
        self.registry().await?;
        Ok((!self.registry_changed).then_some(self.registry_version))
    }

    async fn create_relation(
        &mut self,
        def: RelationDef,
        if_not_exists: bool,
    ) -> StorageResult<bool> {
        self.registry().await?;
        let new = NewRelation {
            schema: &def.schema,
            name: &def.name,
            columns: def.columns,
            primary_key: def.primary_key,
        };
        let (writer, kept) = self.writer_and_relations()?;
        let created = writer
            .create_relation_among(kept, new, if_not_exists)
            .await
            .map_err(to_sql)?;
        match created {
            Some(relation) => {
                self.registry_mut().await?.insert(relation);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    async fn drop_relation(
        &mut self,
        schema: &str,
        name: &str,
        if_exists: bool,
    ) -> StorageResult<bool> {
        self.registry().await?;
        let (writer, kept) = self.writer_and_relations()?;
        let dropped = writer
            .drop_relation_among(kept, schema, name, if_exists)
            .await
            .map_err(to_sql)?;
        if dropped {
            if let Some(relation) = self.registry_mut().await?.remove(schema, name) {
                self.row_keys.forget_relation(relation.relation_id);
            }
        }
        Ok(dropped)
    }

    async fn alter_relation(
        &mut self,
        schema: &str,
        name: &str,
        change: RelationChange,
    ) -> StorageResult<RelationDef> {
        let moves_rows = matches!(change, RelationChange::Rename(_));
        self.registry().await?;
        let (writer, kept) = self.writer_and_relations()?;
        let altered = writer
            .alter_relation_among(kept, schema, name, |relation| {
                Ok(match change {
                    RelationChange::AddColumn { column, missing } => {
                        relation.add_column(column, missing)?
                    }
                    RelationChange::DropColumn(column) => relation.drop_column(&column)?,
                    RelationChange::RenameColumn { from, to } => {
                        relation.rename_column(&from, &to)?
                    }
                    RelationChange::Rename(to) => relation.renamed(&to),
                    RelationChange::AlterColumn {
                        column,
                        default,
                        not_null,
                    } => relation.alter_column(&column, |def| {
                        if let Some(default) = default {
                            def.default = default;
                        }
                        if let Some(not_null) = not_null {
                            def.not_null = not_null;
                        }
                    })?,
                    RelationChange::SetType { column, pg_type } => {
                        relation.retyped(&column, pg_type)?
                    }
                })
            })
            .await
            .map_err(to_sql)?;
        let changed = definition(&altered);
        let relation_id = altered.relation_id;
        let registry = self.registry_mut().await?;
        registry.remove(schema, name);
        registry.insert(altered);
        if moves_rows {
            self.row_keys.forget_relation(relation_id);
        }
        Ok(changed)
    }

    async fn database_bytes(&mut self) -> StorageResult<Option<u64>> {
        self.location.stored_bytes().await.map(Some).map_err(to_sql)
    }

    /// The bytes of each relation's keys and values, read in this
    /// transaction's snapshot.
    async fn relation_bytes(&mut self) -> StorageResult<Vec<(String, String, u64)>> {
        let relations: Vec<Arc<Relation>> =
            self.registry().await?.by_name().values().cloned().collect();
        let mut out = Vec::with_capacity(relations.len());
        for relation in relations {
            let bytes = self
                .access
                .view()
                .stored_bytes(&relation)
                .await
                .map_err(to_sql)?;
            out.push((relation.schema.clone(), relation.name.clone(), bytes));
        }
        Ok(out)
    }

    async fn create_schema(&mut self, name: &str, if_not_exists: bool) -> StorageResult<bool> {
        let created = self
            .writer()?
            .create_namespace(name, if_not_exists)
            .await
            .map_err(to_sql)?;
        self.registry_changed |= created;
        Ok(created)
    }

    async fn drop_schema(
        &mut self,
        name: &str,
        if_exists: bool,
        cascade: bool,
    ) -> StorageResult<bool> {
        if cascade {
            // Its relations go first, through the registry's bookkeeping.
            let relations: Vec<String> = self
                .registry()
                .await?
                .by_name()
                .values()
                .filter(|relation| relation.schema == name)
                .map(|relation| relation.name.clone())
                .collect();
            for relation in relations {
                self.drop_relation(name, &relation, false).await?;
            }
        }
        self.registry().await?;
        let (writer, kept) = self.writer_and_relations()?;
        let dropped = writer
            .drop_namespace(kept, name, if_exists, cascade)
            .await
            .map_err(to_sql)?;
        self.registry_changed |= dropped;
        Ok(dropped)
    }

    async fn schemas(&mut self) -> StorageResult<Vec<String>> {
        self.access.view().namespaces().await.map_err(to_sql)
    }

    async fn scan(
        &mut self,
        relation: &RelationDef,
        filter: &ScanFilter,
    ) -> StorageResult<Vec<ScannedRow>> {
        Ok(match self.scan_shared(relation, filter).await? {
            ScanRows::Owned(rows) => rows,
            ScanRows::Shared(rows) => rows.to_stored(),
        })
    }

    async fn scan_shared(
        &mut self,
        relation: &RelationDef,
        filter: &ScanFilter,
    ) -> StorageResult<ScanRows> {
        let relation = self.resolve(relation).await?;
        let floor = match relation.layout() {
            RowLayout::Catalog(table) if table.table.tag == Tag::Snapshot => {
                self.snapshot_floor(filter).await?
            }
            _ => 0,
        };
        let key_columns = relation.layout().seek_columns();
        let prefix = key_prefix(&key_columns, filter);
        let order = extreme_order(&key_columns, &prefix, filter)
            .filter(|order| floor == 0 || matches!(order, IterationOrder::Descending));
        if let Some(order) = order {
            let row = self
                .access
                .view()
                .edge_row(&relation, &prefix, order)
                .await
                .map_err(to_sql)?;
            let Some(stored) = row.filter(|s| retained(&s.row, floor)) else {
                return Ok(ScanRows::Owned(Vec::new()));
            };
            self.row_keys
                .remember(relation.relation_id, stored.row_seq, stored.key);
            return Ok(ScanRows::Owned(vec![ScannedRow {
                id: RowId(stored.row_seq),
                row: stored.row,
            }]));
        }
        let rows = self
            .access
            .view()
            .rows_shared(&relation, &prefix)
            .await
            .map_err(to_sql)?;
        self.row_keys
            .remember_scan(relation.relation_id, Arc::clone(&rows));
        if prefix.is_empty() && filter.bounds.is_empty() {
            self.whole_read = Some(WholeRead {
                relation_id: relation.relation_id,
                rows: Arc::clone(&rows),
                floor,
            });
        }
        let range = key_range(&rows, &key_columns, &prefix, filter);
        if floor == 0 && range.len() == rows.len() {
            return Ok(ScanRows::Shared(Arc::new(SharedScan(rows))));
        }
        // Rows outside the key range, and snapshots below the retention
        // floor (hidden), are left out: the others are handed out by
        // position, still without copying.
        let visible = range.filter(|&i| retained(&rows[i].row, floor)).collect();
        Ok(ScanRows::Shared(Arc::new(SharedScanPart { rows, visible })))
    }

    async fn read_stamp(&mut self, def: &RelationDef) -> StorageResult<Option<ReadStamp>> {
        let relation = self.resolve(def).await?;
        let Some((storage, state)) = self.access.view().rows_state(&relation) else {
            return Ok(None);
        };
        let floor = match relation.layout() {
            RowLayout::Catalog(table) if table.table.tag == Tag::Snapshot => {
                self.snapshot_floor(&ScanFilter::default()).await?
            }
            _ => 0,
        };
        Ok(Some(ReadStamp {
            storage,
            state,
            floor,
        }))
    }

    async fn read_end(&mut self, def: &RelationDef) -> StorageResult<Option<ReadEnd>> {
        let Some(stamp) = self.read_stamp(def).await? else {
            return Ok(None);
        };
        let relation = self.resolve(def).await?;
        let end = self
            .whole_read
            .as_ref()
            .filter(|read| read.relation_id == relation.relation_id && read.floor == stamp.floor)
            .map(|read| read.end(|row| retained(&row.row, read.floor)));
        Ok(end.map(|point| ReadEnd {
            stamp,
            positions: Arc::new(point),
        }))
    }

    async fn scan_added(
        &mut self,
        def: &RelationDef,
        since: &ReadEnd,
    ) -> StorageResult<Option<AddedRows>> {
        let Some(stamp) = self.read_stamp(def).await? else {
            return Ok(None);
        };
        // A later state of the same rows, hiding the same snapshots (an
        // older snapshot does not hold every row of the earlier read).
        let (was, floor) = (since.stamp, stamp.floor);
        if stamp.storage != was.storage || floor != was.floor || stamp.state <= was.state {
            return Ok(None);
        }
        let Some(&point) = since.positions.downcast_ref::<AppendPoint>() else {
            return Ok(None);
        };
        let relation = self.resolve(def).await?;
        let Some(changes) = self.access.view().changes_since(&relation, was.state) else {
            return Ok(None);
        };
        let visible = |row: &KeyedRow| retained(&row.row, floor);
        let added =
            added_rows(&relation, point, &changes, visible).map_err(|e| to_sql(e.into()))?;
        let Some((rows, point)) = added else {
            return Ok(None);
        };
        let rows = Arc::new(rows);
        self.row_keys
            .remember_scan(relation.relation_id, Arc::clone(&rows));
        Ok(Some(AddedRows {
            rows: ScanRows::Shared(Arc::new(SharedScan(rows))),
            end: ReadEnd {
                stamp,
                positions: Arc::new(point),
            },
        }))
    }

    async fn insert(&mut self, relation: &RelationDef, rows: Vec<Row>) -> StorageResult<()> {
        let relation = self.resolve(relation).await?;
        let rows = self.schedulable_rows(&relation, rows).await?;
        let writer = self.writer()?;
        let mut stored = Vec::with_capacity(rows.len());
        for row in rows {
            stored.push(writer.insert(&relation, row).await.map_err(to_sql)?);
        }
        for row in stored {
            self.row_keys
                .remember(relation.relation_id, row.row_seq, row.key);
        }
        Ok(())
    }

    async fn update(
        &mut self,
        relation: &RelationDef,
        id: RowId,
        new_row: Row,
    ) -> StorageResult<()> {
        let relation = self.resolve(relation).await?;
        let old_key = self.remembered(&relation, id)?;
        let new = self
            .writer()?
            .update(&relation, &old_key, id.0, new_row)
            .await
            .map_err(to_sql)?;
        self.row_keys.remember(relation.relation_id, id.0, new.key);
        Ok(())
    }

    async fn delete(&mut self, relation: &RelationDef, id: RowId) -> StorageResult<()> {
        let relation = self.resolve(relation).await?;
        let old_key = self.remembered(&relation, id)?;
        let writer = self.writer()?;
        crate::snapshot_tags::check_not_tagged(&writer.view(), &old_key)
            .await
            .map_err(to_sql)?;
        writer.delete(&old_key).map_err(to_sql)?;
        self.row_keys.forget(relation.relation_id, id.0);
        Ok(())
    }

    async fn lock_row(
        &mut self,
        relation: &RelationDef,
        id: RowId,
        _strength: LockStrength,
        wait: LockWait,
    ) -> StorageResult<bool> {
        let relation = self.resolve(relation).await?;
        let key = self.remembered(&relation, id)?;
        let wait = match wait {
            LockWait::Wait => RowLockWait::Wait,
            LockWait::Nowait => RowLockWait::Nowait,
            LockWait::SkipLocked => RowLockWait::Skip,
        };
        self.writer()?
            .lock_row(&relation, &key, wait)
            .await
            .map_err(to_sql)
    }

    async fn commit(self: Box<Self>) -> StorageResult<()> {
        let this = *self;
        let Access::Write(txn) = this.access else {
            return Ok(());
        };
        let version = txn.commit_changing_registry().await.map_err(to_sql)?;
        // This transaction's relations, as it changed them, are the
        // registry at the version it committed (a concurrent registry change
        // would have made it conflict).
        if let (Some(version), true, Some(relations)) =
            (version, this.registry_changed, this.registry)
        {
            this.registry_cache.publish(version, relations);
        }
        Ok(())
    }
}

impl StoreTxn {
    /// `rows` as this lake may insert them: deletions of data files shared
    /// with a clone or a parent are left out or refused (see
    /// [`crate::sharing`]).
    async fn schedulable_rows(
        &self,
        relation: &Relation,
        rows: Vec<Row>,
    ) -> StorageResult<Vec<Row>> {
        if relation.name != crate::sharing::SCHEDULED_FOR_DELETION {
            return Ok(rows);
        }
        let Some(file_id_column) = relation
            .columns
            .iter()
            .position(|c| c.name == "data_file_id")
        else {
            return Ok(rows);
        };
        let records = crate::sharing::records(&self.location)
            .await
            .map_err(to_sql)?;
        crate::sharing::schedulable(&records, rows, file_id_column).map_err(|e| *e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(ids: &[i64]) -> Vec<Arc<KeyedRow>> {
        ids.iter()
            .map(|&id| {
                Arc::new(KeyedRow {
                    key: (id as u64).to_be_bytes().to_vec(),
                    row_seq: id as u64,
                    row: vec![Datum::Int8(id), Datum::text("x")],
                })
            })
            .collect()
    }

    fn range(lower: Option<(Datum, bool)>, upper: Option<(Datum, bool)>) -> ScanFilter {
        ScanFilter {
            bounds: vec![(0, ColumnBound::Range { lower, upper })],
            extreme: None,
        }
    }

    #[test]
    fn a_range_on_the_next_key_column_narrows_by_binary_search() {
        let rows = rows(&[1, 2, 4, 7, 9]);
        let key = [0];
        let gt = |v: i64| range(Some((Datum::Int8(v), false)), None);
        assert_eq!(key_range(&rows, &key, &[], &gt(2)), 2..5);
        assert_eq!(key_range(&rows, &key, &[], &gt(9)), 5..5);
        let ge_lt = range(Some((Datum::Int4(2), true)), Some((Datum::Int8(7), false)));
        assert_eq!(key_range(&rows, &key, &[], &ge_lt), 1..3);
        let le = range(None, Some((Datum::Int8(7), true)));
        assert_eq!(key_range(&rows, &key, &[], &le), 0..4);
        // Bounds that are not exact integers do not narrow (the WHERE
        // clause still applies to every row).
        let float = range(Some((Datum::Float8(2.5), false)), None);
        assert_eq!(key_range(&rows, &key, &[], &float), 0..5);
        // Only the column right after the seek prefix narrows.
        assert_eq!(key_range(&rows, &key, &[3], &gt(2)), 0..5);
        let empty = range(Some((Datum::Int8(8), false)), Some((Datum::Int8(3), false)));
        assert_eq!(key_range(&rows, &key, &[], &empty).len(), 0);
    }
}
