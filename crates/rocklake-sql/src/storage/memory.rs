//! [`MemoryStorage`]: an in-memory [`Storage`] with snapshot isolation, used as
//! the SQL engine's test double.
//!
//! Each transaction works on a copy-on-write clone of the committed state taken
//! at `begin` and logs its writes. Commit replays the log onto the latest
//! committed state, re-checking primary keys (23505) and write-write conflicts
//! on rows changed since `begin` (40001). Its relations keep the engine's
//! [`KeyChecks::Engine`](crate::storage::KeyChecks): its own row-by-row
//! check backs the engine's statement-level one up, as the store's
//! concurrent check does.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rocklake_types::datum::Row;

use crate::storage::{
    RelationDef, RelationList, ScanFilter, ScanRows, Storage, StorageResult, StorageTxn,
};
use rocklake_types::rows::{RowId, ScannedRow};
use rocklake_types::value::text::format_text;
use rocklake_types::{SqlError, SqlState};

#[derive(Debug, Clone)]
struct RelState {
    def: RelationDef,
    /// Row id → (row, commit version that last wrote it).
    rows: BTreeMap<u64, (Row, u64)>,
    /// Primary-key text → row id.
    pk: HashMap<String, u64>,
}

impl RelState {
    /// An empty relation.
    fn new(def: RelationDef) -> Self {
        RelState {
            def,
            rows: BTreeMap::new(),
            pk: HashMap::new(),
        }
    }

    fn key_of(&self, row: &Row) -> Option<String> {
        if self.def.primary_key.is_empty() {
            return None;
        }
        Some(format!(
            "{:?}",
            self.def
                .primary_key
                .iter()
                .map(|&i| &row[i])
                .collect::<Vec<_>>()
        ))
    }

    fn duplicate(&self, row: &Row) -> SqlError {
        let cols: Vec<&str> = self
            .def
            .primary_key
            .iter()
            .map(|&i| self.def.columns[i].name.as_str())
            .collect();
        let vals: Vec<String> = self
            .def
            .primary_key
            .iter()
            .map(|&i| format_text(&row[i]).unwrap_or_else(|| "null".into()))
            .collect();
        SqlError::unique_violation(
            &self.def.schema,
            &self.def.name,
            &cols.join(", "),
            &vals.join(", "),
        )
    }

    /// Puts `row` at `id`, enforcing the primary key.
    fn put(&mut self, id: u64, row: Row, version: u64) -> StorageResult<()> {
        if let Some(key) = self.key_of(&row) {
            if let Some(&other) = self.pk.get(&key) {
                if other != id {
                    return Err(self.duplicate(&row));
                }
            }
            if let Some((old, _)) = self.rows.get(&id) {
                if let Some(old_key) = self.key_of(old) {
                    self.pk.remove(&old_key);
                }
            }
            self.pk.insert(key, id);
        }
        self.rows.insert(id, (row, version));
        Ok(())
    }

    fn remove(&mut self, id: u64) {
        if let Some((old, _)) = self.rows.remove(&id) {
            if let Some(k) = self.key_of(&old) {
                self.pk.remove(&k);
            }
        }
    }
}

type RelKey = (String, String);

#[derive(Debug, Clone, Default)]
struct State {
    version: u64,
    /// Bumped by every commit that creates or drops a schema or relation.
    catalog_version: u64,
    schemas: BTreeSet<String>,
    relations: BTreeMap<RelKey, Arc<RelState>>,
}

#[derive(Debug, Default)]
struct Shared {
    state: State,
    next_row_id: u64,
}

/// In-memory storage with snapshot isolation and primary-key enforcement.
#[derive(Debug, Clone)]
pub struct MemoryStorage {
    shared: Arc<Mutex<Shared>>,
}

impl Default for MemoryStorage {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStorage {
    /// Empty storage holding only the `public` schema.
    pub fn new() -> Self {
        let mut shared = Shared::default();
        shared.state.schemas.insert("public".into());
        MemoryStorage {
            shared: Arc::new(Mutex::new(shared)),
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    CreateSchema(String),
    CreateRelation(RelationDef),
    DropRelation(RelKey),
    Put(RelKey, u64, Row, bool),
    Delete(RelKey, u64),
}

impl Op {
    fn changes_catalog(&self) -> bool {
        matches!(
            self,
            Op::CreateSchema(_) | Op::CreateRelation(_) | Op::DropRelation(_)
        )
    }
}

struct MemoryTxn {
    shared: Arc<Mutex<Shared>>,
    read_only: bool,
    begin_version: u64,
    state: State,
    ops: Vec<Op>,
}

fn key(def: &RelationDef) -> RelKey {
    (def.schema.clone(), def.name.clone())
}

impl MemoryTxn {
    fn check_write(&self, what: &str) -> StorageResult<()> {
        if self.read_only {
            return Err(SqlError::read_only(what));
        }
        Ok(())
    }

    fn rel_mut(&mut self, def: &RelationDef) -> StorageResult<&mut RelState> {
        match self.state.relations.get_mut(&key(def)) {
            Some(r) => Ok(Arc::make_mut(r)),
            None => Err(undefined(def)),
        }
    }
}

fn undefined(def: &RelationDef) -> SqlError {
    SqlError::new(
        SqlState::UNDEFINED_TABLE,
        format!("relation \"{}.{}\" does not exist", def.schema, def.name),
    )
}

#[async_trait]
impl Storage for MemoryStorage {
    async fn begin(&self, read_only: bool) -> StorageResult<Box<dyn StorageTxn>> {
        let state = self
            .shared
            .lock()
            .map_err(|_| SqlError::internal("poisoned"))?
            .state
            .clone();
        Ok(Box::new(MemoryTxn {
            shared: self.shared.clone(),
            read_only,
            begin_version: state.version,
            state,
            ops: Vec::new(),
        }))
    }
}

#[async_trait]
impl StorageTxn for MemoryTxn {
    async fn relation(&mut self, schema: &str, name: &str) -> StorageResult<Option<RelationDef>> {
        Ok(self
            .state
            .relations
            .get(&(schema.to_string(), name.to_string()))
            .map(|r| r.def.clone()))
    }

    async fn relations(&mut self) -> StorageResult<RelationList> {
        Ok(Arc::new(
            self.state
                .relations
                .values()
                .map(|r| Arc::new(r.def.clone()))
                .collect(),
        ))
    }

    async fn create_relation(
        &mut self,
        def: RelationDef,
        if_not_exists: bool,
    ) -> StorageResult<bool> {
        self.check_write("CREATE TABLE")?;
        if !self.state.schemas.contains(&def.schema) {
            return Err(SqlError::new(
                SqlState::INVALID_SCHEMA_NAME,
                format!("schema \"{}\" does not exist", def.schema),
            ));
        }
        if self.state.relations.contains_key(&key(&def)) {
            if if_not_exists {
                return Ok(false);
            }
            return Err(SqlError::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{}\" already exists", def.name),
            ));
        }
        self.state
            .relations
            .insert(key(&def), Arc::new(RelState::new(def.clone())));
        self.ops.push(Op::CreateRelation(def));
        Ok(true)
    }

    async fn drop_relation(
        &mut self,
        schema: &str,
        name: &str,
        if_exists: bool,
    ) -> StorageResult<bool> {
        self.check_write("DROP TABLE")?;
        let k = (schema.to_string(), name.to_string());
        if self.state.relations.remove(&k).is_none() {
            if if_exists {
                return Ok(false);
            }
            return Err(SqlError::new(
                SqlState::UNDEFINED_TABLE,
                format!("table \"{name}\" does not exist"),
            ));
        }
        self.ops.push(Op::DropRelation(k));
        Ok(true)
    }

    async fn create_schema(&mut self, name: &str, if_not_exists: bool) -> StorageResult<bool> {
        self.check_write("CREATE SCHEMA")?;
        if self.state.schemas.contains(name) {
            if if_not_exists {
                return Ok(false);
            }
            return Err(SqlError::new(
                SqlState::DUPLICATE_SCHEMA,
                format!("schema \"{name}\" already exists"),
            ));
        }
        self.state.schemas.insert(name.to_string());
        self.ops.push(Op::CreateSchema(name.to_string()));
        Ok(true)
    }

    async fn schemas(&mut self) -> StorageResult<Vec<String>> {
        Ok(self.state.schemas.iter().cloned().collect())
    }

    async fn scan(
        &mut self,
        relation: &RelationDef,
        _filter: &ScanFilter,
    ) -> StorageResult<Vec<ScannedRow>> {
        let rel = self
            .state
            .relations
            .get(&key(relation))
            .ok_or_else(|| undefined(relation))?;
        Ok(rel
            .rows
            .iter()
            .map(|(id, (row, _))| ScannedRow {
                id: RowId(*id),
                row: row.clone(),
            })
            .collect())
    }

    async fn catalog_version(&mut self) -> StorageResult<Option<u64>> {
        if self.ops.iter().any(Op::changes_catalog) {
            return Ok(None);
        }
        Ok(Some(self.state.catalog_version))
    }

    /// Shares a copy, so the engine's tests run its shared-rows path too.
    async fn scan_shared(
        &mut self,
        relation: &RelationDef,
        filter: &ScanFilter,
    ) -> StorageResult<ScanRows> {
        Ok(ScanRows::Shared(Arc::new(
            self.scan(relation, filter).await?,
        )))
    }

    async fn insert(&mut self, relation: &RelationDef, rows: Vec<Row>) -> StorageResult<()> {
        self.check_write("INSERT")?;
        let k = key(relation);
        for row in rows {
            let id = {
                let mut shared = self
                    .shared
                    .lock()
                    .map_err(|_| SqlError::internal("poisoned"))?;
                // PostgreSQL sees concurrently committed keys when checking uniqueness.
                if let Some(committed) = shared.state.relations.get(&k) {
                    if let Some(pk) = committed.key_of(&row) {
                        if let Some(&other) = committed.pk.get(&pk) {
                            let concurrent =
                                committed.rows.get(&other).map(|r| r.1) > Some(self.begin_version);
                            if concurrent {
                                return Err(committed.duplicate(&row));
                            }
                        }
                    }
                }
                shared.next_row_id += 1;
                shared.next_row_id - 1
            };
            self.rel_mut(relation)?.put(id, row.clone(), u64::MAX)?;
            self.ops.push(Op::Put(k.clone(), id, row, true));
        }
        Ok(())
    }

    async fn update(
        &mut self,
        relation: &RelationDef,
        id: RowId,
        new_row: Row,
    ) -> StorageResult<()> {
        self.check_write("UPDATE")?;
        let rel = self.rel_mut(relation)?;
        if !rel.rows.contains_key(&id.0) {
            return Err(SqlError::internal(format!(
                "row {id:?} of {} vanished",
                relation.name
            )));
        }
        rel.put(id.0, new_row.clone(), u64::MAX)?;
        self.ops.push(Op::Put(key(relation), id.0, new_row, false));
        Ok(())
    }

    async fn delete(&mut self, relation: &RelationDef, id: RowId) -> StorageResult<()> {
        self.check_write("DELETE")?;
        self.rel_mut(relation)?.remove(id.0);
        self.ops.push(Op::Delete(key(relation), id.0));
        Ok(())
    }

    async fn commit(self: Box<Self>) -> StorageResult<()> {
        if self.ops.is_empty() {
            return Ok(());
        }
        let mut shared = self
            .shared
            .lock()
            .map_err(|_| SqlError::internal("poisoned"))?;
        let mut next = shared.state.clone();
        next.version += 1;
        if self.ops.iter().any(Op::changes_catalog) {
            next.catalog_version += 1;
        }
        let version = next.version;
        let conflict = || {
            SqlError::new(
                SqlState::SERIALIZATION_FAILURE,
                "could not serialize access due to concurrent update",
            )
        };
        for op in &self.ops {
            match op {
                Op::CreateSchema(s) => {
                    next.schemas.insert(s.clone());
                }
                Op::CreateRelation(def) => {
                    if next.relations.contains_key(&key(def)) {
                        return Err(SqlError::new(
                            SqlState::DUPLICATE_TABLE,
                            format!("relation \"{}\" already exists", def.name),
                        ));
                    }
                    next.relations
                        .insert(key(def), Arc::new(RelState::new(def.clone())));
                }
                Op::DropRelation(k) => {
                    if next.relations.remove(k).is_none() {
                        return Err(conflict());
                    }
                }
                Op::Put(k, id, row, fresh) => {
                    let rel = Arc::make_mut(next.relations.get_mut(k).ok_or_else(conflict)?);
                    if !fresh {
                        match rel.rows.get(id) {
                            Some((_, v)) if *v <= self.begin_version || *v == version => {}
                            _ => return Err(conflict()),
                        }
                    }
                    rel.put(*id, row.clone(), version)?;
                }
                Op::Delete(k, id) => {
                    let rel = Arc::make_mut(next.relations.get_mut(k).ok_or_else(conflict)?);
                    match rel.rows.get(id) {
                        Some((_, v)) if *v <= self.begin_version || *v == version => {
                            rel.remove(*id)
                        }
                        _ => return Err(conflict()),
                    }
                }
            }
        }
        shared.state = next;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocklake_types::datum::{ColumnDef, Datum, PgType};

    fn rel() -> RelationDef {
        RelationDef::new(
            "public",
            "ducklake_snapshot",
            vec![
                ColumnDef::new("snapshot_id", PgType::Int8),
                ColumnDef::new("v", PgType::Text),
            ],
            vec![0],
        )
    }

    fn row(id: i64, v: &str) -> Row {
        vec![Datum::Int8(id), Datum::Text(v.into())]
    }

    async fn setup() -> MemoryStorage {
        let s = MemoryStorage::new();
        let mut t = s.begin(false).await.unwrap();
        t.create_relation(rel(), false).await.unwrap();
        t.insert(&rel(), vec![row(1, "a")]).await.unwrap();
        t.commit().await.unwrap();
        s
    }

    #[tokio::test]
    async fn snapshots_and_stable_row_ids() {
        let s = setup().await;
        let mut reader = s.begin(true).await.unwrap();
        let before = reader.scan(&rel(), &ScanFilter::default()).await.unwrap();
        let mut writer = s.begin(false).await.unwrap();
        writer
            .update(&rel(), before[0].id, row(1, "b"))
            .await
            .unwrap();
        writer.insert(&rel(), vec![row(2, "c")]).await.unwrap();
        writer.commit().await.unwrap();
        let again = reader.scan(&rel(), &ScanFilter::default()).await.unwrap();
        assert_eq!(before, again, "the reader keeps its snapshot");
        let mut fresh = s.begin(true).await.unwrap();
        let now = fresh.scan(&rel(), &ScanFilter::default()).await.unwrap();
        assert_eq!(now.len(), 2);
        assert_eq!(now[0].id, before[0].id, "updates keep the row id");
        assert_eq!(now[0].row, row(1, "b"));
        let e = fresh.insert(&rel(), vec![row(3, "x")]).await.unwrap_err();
        assert_eq!(e.code, "25006");
    }

    #[tokio::test]
    async fn primary_keys_are_enforced() {
        let s = setup().await;
        let mut t = s.begin(false).await.unwrap();
        let e = t.insert(&rel(), vec![row(1, "dup")]).await.unwrap_err();
        assert_eq!(e.code, "23505");
        assert_eq!(
            e.detail.as_deref(),
            Some("Key (snapshot_id)=(1) already exists.")
        );
        // Deleting then re-inserting the key in one transaction is fine.
        let id = t.scan(&rel(), &ScanFilter::default()).await.unwrap()[0].id;
        t.delete(&rel(), id).await.unwrap();
        t.insert(&rel(), vec![row(1, "again")]).await.unwrap();
        t.commit().await.unwrap();
        let mut a = s.begin(false).await.unwrap();
        let mut b = s.begin(false).await.unwrap();
        a.insert(&rel(), vec![row(7, "a")]).await.unwrap();
        b.insert(&rel(), vec![row(7, "b")]).await.unwrap();
        a.commit().await.unwrap();
        let e = b.commit().await.unwrap_err();
        assert_eq!(
            e.message,
            "duplicate key value violates unique constraint \"ducklake_snapshot_pkey\""
        );
    }
}
