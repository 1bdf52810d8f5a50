//! One database as the engine sees it ([`Database`]: a home storage and its
//! schema lakes), and the one transaction over it ([`RoutedTxn`]) that sends
//! each call where its schema lives, so the layers above see one storage.
//!
//! Routing is by schema:
//! - `pg_temp`: the transaction's temporary tables (`CREATE TEMPORARY TABLE
//!   ... ON COMMIT DROP`, which postgres_scanner sends for an UPDATE it
//!   cannot express as one statement), in an in-memory storage private to
//!   the transaction and dropped with it, on COMMIT and ROLLBACK alike;
//! - a schema lake: DuckLake's `METADATA_SCHEMA` puts a lake's catalog
//!   tables in a schema of their own, and RockLake keeps each such lake in
//!   its own storage (its own SlateDB database, in the seed's key layout).
//!   A schema `CREATE SCHEMA` makes is placed when its first table is
//!   created: a DuckLake catalog table (`ducklake_...`) makes it a lake of
//!   its own (DuckLake creates the schema and its tables in one
//!   transaction); any other table, or none by commit, puts it in the home
//!   storage with `public`, as PostgreSQL keeps ordinary schemas. A rolled
//!   back `CREATE SCHEMA` leaves no schema. `DROP SCHEMA s CASCADE` removes
//!   the lake (its storage is deleted once the drop commits);
//! - everything else: the home storage.
//!
//! A transaction reads from any number of lakes, each on its own snapshot
//! taken at its first use, and writes to one storage (temporary tables
//! aside): writing to a second fails with SQLSTATE 0A000 before anything is
//! written there. Every write asked of it is counted ([`WriteCount`]), so
//! the session knows whether a statement changed anything.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use rocklake_types::datum::Row;
use rocklake_types::rows::{RowId, ScannedRow};
use rocklake_types::{SqlError, SqlState};

use crate::storage::memory::MemoryStorage;
use crate::storage::{
    AddedRows, LockStrength, LockWait, Maintenance, ReadEnd, ReadStamp, RelationChange,
    RelationDef, RelationList, ScanFilter, ScanRows, Storage, StorageResult, StorageTxn,
};

/// The schema temporary relations live in; unqualified names look here first.
pub const TEMP_SCHEMA: &str = "pg_temp";

/// The schema every database has in its home storage.
const HOME_SCHEMA: &str = "public";

/// Names of DuckLake's tables (catalog and inlined data): the first one
/// created in a new schema makes it a lake.
const DUCKLAKE_PREFIX: &str = "ducklake_";

/// The schema lakes of one database, as the served root keeps them.
#[async_trait]
pub trait SchemaLakes: Send + Sync {
    /// The lakes whose storage exists, by schema name.
    fn lakes(&self) -> Vec<(String, Arc<dyn Storage>)>;

    /// Creates the (empty) storage of the lake of `schema`, or returns it
    /// when it exists.
    async fn create_lake(&self, schema: &str) -> StorageResult<Arc<dyn Storage>>;

    /// Deletes the storage of the lake of `schema` (its drop committed).
    async fn remove_lake(&self, schema: &str) -> StorageResult<()>;
}

/// How many writes a transaction was asked for (also those that failed: a
/// failed write may have changed part of what it was given).
#[derive(Debug, Clone, Default)]
pub(crate) struct WriteCount(Arc<AtomicU64>);

impl WriteCount {
    /// The writes so far.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn note(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// A database: its home storage and, on a server, its schema lakes.
pub struct Database {
    home: Arc<dyn Storage>,
    lakes: Option<Arc<dyn SchemaLakes>>,
}

impl Database {
    /// A database of one storage, without schema lakes.
    pub fn single(home: Arc<dyn Storage>) -> Self {
        Database { home, lakes: None }
    }

    /// The database whose schema lakes `lakes` keeps, over `home`.
    pub fn with_lakes(home: Arc<dyn Storage>, lakes: Arc<dyn SchemaLakes>) -> Self {
        Database {
            home,
            lakes: Some(lakes),
        }
    }

    fn lake_list(&self) -> Vec<(String, Arc<dyn Storage>)> {
        self.lakes
            .as_ref()
            .map(|lakes| lakes.lakes())
            .unwrap_or_default()
    }

    /// Begins a transaction over the database whose writes go up `writes`.
    pub(crate) async fn begin_counted(
        &self,
        read_only: bool,
        writes: WriteCount,
    ) -> StorageResult<RoutedTxn> {
        let home = self.home.begin(read_only).await?;
        let lakes = self
            .lake_list()
            .into_iter()
            .map(|(schema, storage)| (schema, LakeSlot::new(storage)))
            .collect();
        Ok(RoutedTxn {
            home,
            home_schemas: None,
            temp: None,
            lakes,
            registry: self.lakes.clone(),
            read_only,
            writer: None,
            dropped: Vec::new(),
            pending: Vec::new(),
            writes,
        })
    }

    /// The storage of `schema`'s lake, or the home storage.
    fn storage_of(&self, schema: Option<&str>) -> StorageResult<Arc<dyn Storage>> {
        let Some(schema) = schema else {
            return Ok(self.home.clone());
        };
        self.lake_list()
            .into_iter()
            .find(|(name, _)| name == schema)
            .map(|(_, storage)| storage)
            .ok_or_else(|| {
                SqlError::new(
                    SqlState::INVALID_SCHEMA_NAME,
                    format!("schema \"{schema}\" holds no lake"),
                )
            })
    }
}

#[async_trait]
impl Storage for Database {
    async fn begin(&self, read_only: bool) -> StorageResult<Box<dyn StorageTxn>> {
        Ok(Box::new(
            self.begin_counted(read_only, WriteCount::default()).await?,
        ))
    }

    /// Maintenance of the home lake, or of the lake of the schema named.
    /// A command for every lake runs on the home lake (shown as `public`)
    /// and then each schema lake, each row's item prefixed with its schema.
    async fn maintain(&self, command: Maintenance) -> StorageResult<Vec<(String, String)>> {
        if !command.every_lake() {
            let storage = self.storage_of(command.schema())?;
            return storage.maintain(command).await;
        }
        if self.lakes.is_none() {
            return self.home.maintain(command).await;
        }
        let mut lakes = vec![(HOME_SCHEMA.to_string(), self.home.clone())];
        lakes.extend(self.lake_list());
        let mut rows = Vec::new();
        for (schema, storage) in lakes {
            for (item, value) in storage.maintain(command.clone()).await? {
                rows.push((format!("{schema}: {item}"), value));
            }
        }
        Ok(rows)
    }
}

/// One schema lake within a transaction: begun at its first use.
struct LakeSlot {
    storage: Arc<dyn Storage>,
    txn: Option<Box<dyn StorageTxn>>,
    dropped: bool,
}

impl LakeSlot {
    fn new(storage: Arc<dyn Storage>) -> Self {
        LakeSlot {
            storage,
            txn: None,
            dropped: false,
        }
    }
}

/// Which storage a call goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Temp,
    Home,
    Lake(String),
}

impl Target {
    fn describe(&self) -> String {
        match self {
            Target::Temp => "the temporary tables".to_string(),
            Target::Home => "the database's home catalog".to_string(),
            Target::Lake(schema) => format!("the lake in schema \"{schema}\""),
        }
    }
}

/// A transaction over a database's home storage, its schema lakes and its
/// temporary tables (see the module docs).
pub(crate) struct RoutedTxn {
    home: Box<dyn StorageTxn>,
    /// The home storage's schemas, once asked for.
    home_schemas: Option<Vec<String>>,
    /// The temporary tables, once the first is created.
    temp: Option<Box<dyn StorageTxn>>,
    lakes: BTreeMap<String, LakeSlot>,
    registry: Option<Arc<dyn SchemaLakes>>,
    read_only: bool,
    /// The storage this transaction has written to (temporary tables aside).
    writer: Option<Target>,
    /// Lakes dropped by this transaction: removed once it commits.
    dropped: Vec<String>,
    /// Schemas created by this transaction and not placed yet.
    pending: Vec<String>,
    writes: WriteCount,
}

impl RoutedTxn {
    async fn home_has(&mut self, schema: &str) -> StorageResult<bool> {
        if self.home_schemas.is_none() {
            self.home_schemas = Some(self.home.schemas().await?);
        }
        Ok(self
            .home_schemas
            .as_ref()
            .is_some_and(|schemas| schemas.iter().any(|s| s == schema)))
    }

    /// Where `schema` lives: the temporary tables, its lake unless the home
    /// storage holds it (`public`, and schemas catalogs of earlier releases
    /// created there), or the home storage.
    async fn target(&mut self, schema: &str) -> StorageResult<Target> {
        if schema == TEMP_SCHEMA {
            return Ok(Target::Temp);
        }
        let is_lake = self.lakes.get(schema).is_some_and(|slot| !slot.dropped);
        if is_lake && schema != HOME_SCHEMA && !self.home_has(schema).await? {
            Ok(Target::Lake(schema.to_string()))
        } else {
            Ok(Target::Home)
        }
    }

    /// The transaction of `target`, begun if needed.
    async fn txn(&mut self, target: &Target) -> StorageResult<&mut Box<dyn StorageTxn>> {
        match target {
            Target::Home => Ok(&mut self.home),
            Target::Temp => {
                if self.temp.is_none() {
                    let mut txn = MemoryStorage::new().begin(false).await?;
                    txn.create_schema(TEMP_SCHEMA, true).await?;
                    self.temp = Some(txn);
                }
                Ok(self.temp.as_mut().expect("just created"))
            }
            Target::Lake(schema) => {
                let read_only = self.read_only;
                let slot = self
                    .lakes
                    .get_mut(schema)
                    .ok_or_else(|| SqlError::internal(format!("no lake {schema}")))?;
                if slot.txn.is_none() {
                    slot.txn = Some(slot.storage.begin(read_only).await?);
                }
                Ok(slot.txn.as_mut().expect("just begun"))
            }
        }
    }

    /// The transaction of the storage `schema` lives in, for a read.
    async fn route(&mut self, schema: &str) -> StorageResult<&mut Box<dyn StorageTxn>> {
        let target = self.target(schema).await?;
        self.txn(&target).await
    }

    /// The transaction of `schema`'s storage, for a write (counted): fails
    /// when the transaction already wrote to another storage.
    async fn route_write(&mut self, schema: &str) -> StorageResult<&mut Box<dyn StorageTxn>> {
        self.writes.note();
        let target = self.target(schema).await?;
        self.note_write(&target)?;
        self.txn(&target).await
    }

    fn note_write(&mut self, target: &Target) -> StorageResult<()> {
        match &self.writer {
            _ if *target == Target::Temp => Ok(()),
            None => {
                self.writer = Some(target.clone());
                Ok(())
            }
            Some(writer) if writer == target => Ok(()),
            Some(writer) => Err(SqlError::unsupported(format!(
                "a transaction writes to one lake only: this one wrote to {} and now writes to {} \
                 (each DuckLake metadata schema is a catalog of its own)",
                writer.describe(),
                target.describe()
            ))),
        }
    }

    /// Makes `name` a lake: its storage (created if needed) gets the schema.
    async fn create_lake_schema(&mut self, name: &str) -> StorageResult<()> {
        let target = Target::Lake(name.to_string());
        self.note_write(&target)?;
        let registry = self.registry.clone().ok_or_else(|| {
            SqlError::internal("a schema lake in a database without schema lakes")
        })?;
        match self.lakes.get_mut(name) {
            Some(slot) if !slot.dropped => {}
            _ => {
                let storage = registry.create_lake(name).await?;
                self.lakes.insert(name.to_string(), LakeSlot::new(storage));
            }
        }
        self.txn(&target).await?.create_schema(name, true).await?;
        Ok(())
    }

    /// The live lakes' names, in order.
    fn live_lakes(&self) -> Vec<String> {
        self.lakes
            .iter()
            .filter(|(_, slot)| !slot.dropped)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Whether the lake of `schema` holds its schema (a lake whose
    /// `CREATE SCHEMA` rolled back does not).
    async fn lake_has_schema(&mut self, schema: &str) -> StorageResult<bool> {
        if schema == HOME_SCHEMA || self.home_has(schema).await? {
            return Ok(false);
        }
        let target = Target::Lake(schema.to_string());
        let schemas = self.txn(&target).await?.schemas().await?;
        Ok(schemas.iter().any(|s| s == schema))
    }
}

#[async_trait]
impl StorageTxn for RoutedTxn {
    async fn relation(&mut self, schema: &str, name: &str) -> StorageResult<Option<RelationDef>> {
        if schema == TEMP_SCHEMA && self.temp.is_none() {
            return Ok(None);
        }
        self.route(schema).await?.relation(schema, name).await
    }

    async fn relations(&mut self) -> StorageResult<RelationList> {
        let home = self.home.relations().await?;
        if self.live_lakes().is_empty() && self.temp.is_none() {
            return Ok(home);
        }
        let mut all = Vec::clone(&home);
        for schema in self.live_lakes() {
            if !self.lake_has_schema(&schema).await? {
                continue;
            }
            let target = Target::Lake(schema.clone());
            let relations = self.txn(&target).await?.relations().await?;
            all.extend(relations.iter().filter(|r| r.schema == schema).cloned());
        }
        if let Some(temp) = self.temp.as_mut() {
            all.extend(temp.relations().await?.iter().cloned());
        }
        Ok(Arc::new(all))
    }

    /// The home storage's version while the database has no schema lake
    /// and the transaction no temporary table. With lakes, `None`: versions
    /// must grow with every change, and the lakes' snapshots are taken at
    /// different moments, so no single number grows with their combination
    /// (sessions then reload the lists); temporary tables are this
    /// transaction's own.
    async fn catalog_version(&mut self) -> StorageResult<Option<u64>> {
        if self.live_lakes().is_empty() && self.temp.is_none() {
            self.home.catalog_version().await
        } else {
            Ok(None)
        }
    }

    async fn create_relation(
        &mut self,
        def: RelationDef,
        if_not_exists: bool,
    ) -> StorageResult<bool> {
        let schema = def.schema.clone();
        if let Some(index) = self.pending.iter().position(|p| *p == schema) {
            self.pending.remove(index);
            if def.name.starts_with(DUCKLAKE_PREFIX) && self.registry.is_some() {
                self.create_lake_schema(&schema).await?;
            } else {
                self.note_write(&Target::Home)?;
                self.home.create_schema(&schema, false).await?;
                self.home_schemas = None;
            }
        }
        self.route_write(&schema)
            .await?
            .create_relation(def, if_not_exists)
            .await
    }

    async fn drop_relation(
        &mut self,
        schema: &str,
        name: &str,
        if_exists: bool,
    ) -> StorageResult<bool> {
        self.route_write(schema)
            .await?
            .drop_relation(schema, name, if_exists)
            .await
    }

    async fn alter_relation(
        &mut self,
        schema: &str,
        name: &str,
        change: RelationChange,
    ) -> StorageResult<RelationDef> {
        self.route_write(schema)
            .await?
            .alter_relation(schema, name, change)
            .await
    }

    /// The home storage and every lake: the whole database.
    async fn database_bytes(&mut self) -> StorageResult<Option<u64>> {
        let mut total = self.home.database_bytes().await?;
        for schema in self.live_lakes() {
            let target = Target::Lake(schema);
            if let Some(bytes) = self.txn(&target).await?.database_bytes().await? {
                total = Some(total.unwrap_or(0) + bytes);
            }
        }
        Ok(total)
    }

    async fn relation_bytes(&mut self) -> StorageResult<Vec<(String, String, u64)>> {
        let mut all = self.home.relation_bytes().await?;
        for schema in self.live_lakes() {
            let target = Target::Lake(schema.clone());
            let sizes = self.txn(&target).await?.relation_bytes().await?;
            all.extend(sizes.into_iter().filter(|(s, _, _)| *s == schema));
        }
        Ok(all)
    }

    /// `public` and schemas the home storage holds stay there; a new schema
    /// is placed by its first table (see the module docs).
    async fn create_schema(&mut self, name: &str, if_not_exists: bool) -> StorageResult<bool> {
        self.writes.note();
        if name == HOME_SCHEMA || self.home_has(name).await? || self.registry.is_none() {
            self.note_write(&Target::Home)?;
            let created = self.home.create_schema(name, if_not_exists).await?;
            self.home_schemas = None;
            return Ok(created);
        }
        let is_lake = self.lakes.get(name).is_some_and(|slot| !slot.dropped);
        if self.pending.iter().any(|p| p == name) || is_lake && self.lake_has_schema(name).await? {
            if if_not_exists {
                return Ok(false);
            }
            return Err(SqlError::new(
                SqlState::DUPLICATE_SCHEMA,
                format!("schema \"{name}\" already exists"),
            ));
        }
        if self.read_only {
            return Err(SqlError::read_only("CREATE SCHEMA"));
        }
        self.pending.push(name.to_string());
        Ok(true)
    }

    async fn drop_schema(
        &mut self,
        name: &str,
        if_exists: bool,
        cascade: bool,
    ) -> StorageResult<bool> {
        self.writes.note();
        if let Some(index) = self.pending.iter().position(|p| p == name) {
            self.pending.remove(index);
            return Ok(true);
        }
        let target = self.target(name).await?;
        if target == Target::Home || !self.lake_has_schema(name).await? {
            if target == Target::Home && self.home_has(name).await? {
                self.note_write(&Target::Home)?;
                let dropped = self.home.drop_schema(name, if_exists, cascade).await?;
                self.home_schemas = None;
                return Ok(dropped);
            }
            if if_exists {
                return Ok(false);
            }
            return Err(SqlError::new(
                SqlState::INVALID_SCHEMA_NAME,
                format!("schema \"{name}\" does not exist"),
            ));
        }
        self.note_write(&target)?;
        let relations = self.txn(&target).await?.relations().await?;
        let dependents: Vec<String> = relations
            .iter()
            .filter(|r| r.schema == name)
            .map(|r| format!("table {}.{} depends on schema {name}", r.schema, r.name))
            .collect();
        if !cascade && !dependents.is_empty() {
            return Err(SqlError::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop schema {name} because other objects depend on it"),
            )
            .with_detail(dependents.join("\n"))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        if self.read_only {
            return Err(SqlError::read_only("DROP SCHEMA"));
        }
        if let Some(slot) = self.lakes.get_mut(name) {
            slot.dropped = true;
            slot.txn = None;
        }
        self.dropped.push(name.to_string());
        Ok(true)
    }

    async fn schemas(&mut self) -> StorageResult<Vec<String>> {
        let mut all = self.home.schemas().await?;
        for schema in self.live_lakes() {
            if self.lake_has_schema(&schema).await? {
                all.push(schema);
            }
        }
        all.extend(self.pending.iter().cloned());
        Ok(all)
    }

    async fn scan(
        &mut self,
        relation: &RelationDef,
        filter: &ScanFilter,
    ) -> StorageResult<Vec<ScannedRow>> {
        self.route(&relation.schema)
            .await?
            .scan(relation, filter)
            .await
    }

    async fn scan_shared(
        &mut self,
        relation: &RelationDef,
        filter: &ScanFilter,
    ) -> StorageResult<ScanRows> {
        self.route(&relation.schema)
            .await?
            .scan_shared(relation, filter)
            .await
    }

    async fn read_stamp(&mut self, relation: &RelationDef) -> StorageResult<Option<ReadStamp>> {
        self.route(&relation.schema)
            .await?
            .read_stamp(relation)
            .await
    }

    async fn read_end(&mut self, relation: &RelationDef) -> StorageResult<Option<ReadEnd>> {
        self.route(&relation.schema).await?.read_end(relation).await
    }

    async fn scan_added(
        &mut self,
        relation: &RelationDef,
        since: &ReadEnd,
    ) -> StorageResult<Option<AddedRows>> {
        self.route(&relation.schema)
            .await?
            .scan_added(relation, since)
            .await
    }

    async fn insert(&mut self, relation: &RelationDef, rows: Vec<Row>) -> StorageResult<()> {
        self.route_write(&relation.schema)
            .await?
            .insert(relation, rows)
            .await
    }

    async fn update(
        &mut self,
        relation: &RelationDef,
        id: RowId,
        new_row: Row,
    ) -> StorageResult<()> {
        self.route_write(&relation.schema)
            .await?
            .update(relation, id, new_row)
            .await
    }

    async fn delete(&mut self, relation: &RelationDef, id: RowId) -> StorageResult<()> {
        self.route_write(&relation.schema)
            .await?
            .delete(relation, id)
            .await
    }

    async fn lock_row(
        &mut self,
        relation: &RelationDef,
        id: RowId,
        strength: LockStrength,
        wait: LockWait,
    ) -> StorageResult<bool> {
        // Temporary tables are the session's own: nothing to lock.
        if relation.schema == TEMP_SCHEMA {
            return Ok(true);
        }
        // A lock is checked when its storage commits: a write's routing
        // (not counted: it changes no row).
        let target = self.target(&relation.schema).await?;
        self.note_write(&target)?;
        self.txn(&target)
            .await?
            .lock_row(relation, id, strength, wait)
            .await
    }

    /// Commits the one storage written to (reads need no commit; the
    /// temporary tables are dropped), then removes the lakes this
    /// transaction dropped.
    async fn commit(mut self: Box<Self>) -> StorageResult<()> {
        for schema in std::mem::take(&mut self.pending) {
            self.note_write(&Target::Home)?;
            self.home.create_schema(&schema, true).await?;
        }
        let RoutedTxn {
            home,
            mut lakes,
            registry,
            writer,
            dropped,
            ..
        } = *self;
        match writer {
            None | Some(Target::Temp) => {}
            Some(Target::Home) => home.commit().await?,
            Some(Target::Lake(schema)) => {
                let slot = lakes.remove(&schema);
                if let Some(txn) = slot.and_then(|slot| slot.txn) {
                    txn.commit().await?;
                }
            }
        }
        if let Some(registry) = registry {
            for schema in dropped {
                registry.remove_lake(&schema).await?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::memory::MemoryStorage;
    use rocklake_types::datum::{ColumnDef, Datum, PgType};
    use std::sync::Mutex;

    /// Lakes in memory.
    #[derive(Default)]
    struct MemoryLakes {
        lakes: Mutex<BTreeMap<String, Arc<dyn Storage>>>,
    }

    #[async_trait]
    impl SchemaLakes for MemoryLakes {
        fn lakes(&self) -> Vec<(String, Arc<dyn Storage>)> {
            let lakes = self.lakes.lock().unwrap();
            lakes.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
        }
        async fn create_lake(&self, schema: &str) -> StorageResult<Arc<dyn Storage>> {
            let mut lakes = self.lakes.lock().unwrap();
            let storage = lakes
                .entry(schema.to_string())
                .or_insert_with(|| Arc::new(MemoryStorage::new()));
            Ok(storage.clone())
        }
        async fn remove_lake(&self, schema: &str) -> StorageResult<()> {
            self.lakes.lock().unwrap().remove(schema);
            Ok(())
        }
    }

    fn table(schema: &str, name: &str) -> RelationDef {
        RelationDef::new(
            schema,
            name,
            vec![ColumnDef::new("id", PgType::Int8)],
            vec![0],
        )
    }

    async fn database() -> (Database, Arc<MemoryLakes>) {
        let home = Arc::new(MemoryStorage::new());
        let mut txn = home.begin(false).await.unwrap();
        txn.create_schema("public", true).await.unwrap();
        txn.commit().await.unwrap();
        let lakes = Arc::new(MemoryLakes::default());
        (Database::with_lakes(home, lakes.clone()), lakes)
    }

    #[tokio::test]
    async fn each_schema_lake_keeps_its_own_tables() {
        let (db, lakes) = database().await;
        for schema in ["team_a", "team_b"] {
            let mut txn = db.begin(false).await.unwrap();
            txn.create_schema(schema, true).await.unwrap();
            let def = table(schema, "ducklake_snapshot");
            txn.create_relation(def.clone(), false).await.unwrap();
            txn.insert(&def, vec![vec![Datum::Int8(1)]]).await.unwrap();
            txn.commit().await.unwrap();
        }
        assert_eq!(lakes.lakes().len(), 2);
        let mut txn = db.begin(true).await.unwrap();
        let mut schemas = txn.schemas().await.unwrap();
        schemas.sort();
        assert_eq!(schemas, ["public", "team_a", "team_b"]);
        let names: Vec<String> = txn
            .relations()
            .await
            .unwrap()
            .iter()
            .map(|r| format!("{}.{}", r.schema, r.name))
            .collect();
        assert_eq!(
            names,
            ["team_a.ducklake_snapshot", "team_b.ducklake_snapshot"]
        );
        // Each lake's storage holds only its own schema.
        let (_, a) = &lakes.lakes()[0];
        let mut a = a.begin(true).await.unwrap();
        assert_eq!(a.relations().await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_transaction_writes_to_one_lake() {
        let (db, _) = database().await;
        let mut txn = db.begin(false).await.unwrap();
        txn.create_schema("team_a", false).await.unwrap();
        txn.create_relation(table("team_a", "ducklake_metadata"), false)
            .await
            .unwrap();
        txn.create_schema("team_b", false).await.unwrap();
        let error = txn
            .create_relation(table("team_b", "ducklake_metadata"), false)
            .await
            .unwrap_err();
        assert_eq!(error.code, SqlState::FEATURE_NOT_SUPPORTED);
        let error = txn
            .create_relation(table("public", "t"), false)
            .await
            .unwrap_err();
        assert_eq!(error.code, SqlState::FEATURE_NOT_SUPPORTED);
    }

    /// Schemas that get ordinary tables stay with `public` (psql users mix
    /// them in one transaction, as PostgreSQL allows).
    #[tokio::test]
    async fn ordinary_schemas_stay_home() {
        let (db, lakes) = database().await;
        let mut txn = db.begin(false).await.unwrap();
        txn.create_schema("s1", false).await.unwrap();
        txn.create_relation(table("public", "t1"), false)
            .await
            .unwrap();
        txn.create_relation(table("s1", "t2"), false).await.unwrap();
        txn.create_schema("empty", false).await.unwrap();
        txn.commit().await.unwrap();
        assert!(lakes.lakes().is_empty());
        let mut txn = db.begin(true).await.unwrap();
        let mut schemas = txn.schemas().await.unwrap();
        schemas.sort();
        assert_eq!(schemas, ["empty", "public", "s1"]);
        assert_eq!(txn.relations().await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn a_rolled_back_create_schema_leaves_no_schema() {
        let (db, lakes) = database().await;
        let mut txn = db.begin(false).await.unwrap();
        txn.create_schema("team_a", false).await.unwrap();
        txn.create_relation(table("team_a", "ducklake_metadata"), false)
            .await
            .unwrap();
        drop(txn);
        let mut txn = db.begin(true).await.unwrap();
        assert_eq!(txn.schemas().await.unwrap(), ["public"]);
        drop(txn);
        // The empty storage left behind is reused by the next lake there.
        let mut txn = db.begin(false).await.unwrap();
        assert!(txn.create_schema("team_a", false).await.unwrap());
        txn.create_relation(table("team_a", "ducklake_metadata"), false)
            .await
            .unwrap();
        txn.commit().await.unwrap();
        assert_eq!(lakes.lakes().len(), 1);
        let mut txn = db.begin(true).await.unwrap();
        assert_eq!(txn.schemas().await.unwrap(), ["public", "team_a"]);
    }

    #[tokio::test]
    async fn drop_schema_cascade_removes_the_lake() {
        let (db, lakes) = database().await;
        let mut txn = db.begin(false).await.unwrap();
        txn.create_schema("team_a", false).await.unwrap();
        txn.create_relation(table("team_a", "ducklake_metadata"), false)
            .await
            .unwrap();
        txn.commit().await.unwrap();
        assert_eq!(lakes.lakes().len(), 1);
        let mut txn = db.begin(false).await.unwrap();
        let error = txn.drop_schema("team_a", false, false).await.unwrap_err();
        assert_eq!(error.code, SqlState::DEPENDENT_OBJECTS_STILL_EXIST);
        assert_eq!(
            error.detail.as_deref(),
            Some("table team_a.ducklake_metadata depends on schema team_a")
        );
        drop(txn);
        let mut txn = db.begin(false).await.unwrap();
        assert!(txn.drop_schema("team_a", false, true).await.unwrap());
        assert_eq!(txn.schemas().await.unwrap(), ["public"]);
        txn.commit().await.unwrap();
        assert!(lakes.lakes().is_empty());
        let mut txn = db.begin(false).await.unwrap();
        assert!(!txn.drop_schema("team_a", true, true).await.unwrap());
        let error = txn.drop_schema("team_a", false, true).await.unwrap_err();
        assert_eq!(error.code, SqlState::INVALID_SCHEMA_NAME);
    }
}
