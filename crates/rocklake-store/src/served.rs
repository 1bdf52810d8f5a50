//! The catalogs one `rocklake serve` holds open: every database under its
//! root (see [`crate::root`]), each with its schema lakes, as the writer or
//! as a read replica, plus the sessions connected to each database.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rocklake_sql::storage::{Storage, StorageResult};
use rocklake_sql::{Database, SchemaLakes};
use rocklake_types::{Interrupt, SqlError, StopReason};

use crate::engine::to_sql;
use crate::engine::SqlCatalog;
use crate::error::StoreResult;
use crate::location::StoreLocation;
use crate::replica::{CatalogReplica, ReplicaOptions};
use crate::root::{LakeRoot, Work};
use crate::store::{CatalogStore, StoreOptions};

/// How a server opens its catalogs.
#[derive(Debug, Clone)]
pub enum Role {
    /// As their writer (fencing any previous one).
    Writer(StoreOptions),
    /// As a read replica following another server's writes.
    Replica(ReplicaOptions),
}

impl Role {
    /// The catalog keys of this role's catalogs.
    fn keys(&self) -> Option<&Arc<crate::encryption::CatalogKeys>> {
        match self {
            Role::Writer(options) => options.keys.as_ref(),
            Role::Replica(options) => options.keys.as_ref(),
        }
    }
}

/// One open catalog: a database's home catalog or a schema lake.
#[derive(Clone)]
enum OpenCatalog {
    Writer(CatalogStore),
    Replica(CatalogReplica),
}

impl OpenCatalog {
    async fn open(location: &StoreLocation, role: &Role) -> StoreResult<OpenCatalog> {
        Ok(match role {
            Role::Writer(options) => {
                OpenCatalog::Writer(CatalogStore::open(location, options.clone()).await?)
            }
            Role::Replica(options) => {
                OpenCatalog::Replica(CatalogReplica::open(location, options.clone()).await?)
            }
        })
    }

    fn storage(&self) -> Arc<dyn Storage> {
        match self {
            OpenCatalog::Writer(store) => Arc::new(SqlCatalog::new(store.clone())),
            OpenCatalog::Replica(replica) => Arc::new(SqlCatalog::replica(replica.clone())),
        }
    }

    async fn check_ready(&self) -> Result<(), String> {
        match self {
            OpenCatalog::Writer(store) => store.check_ready().await,
            OpenCatalog::Replica(replica) => replica.check_ready().await,
        }
    }

    async fn close(&self) -> StoreResult<()> {
        match self {
            OpenCatalog::Writer(store) => store.close().await,
            OpenCatalog::Replica(replica) => replica.close().await,
        }
    }
}

/// A catalog with the storage the engine uses over it.
struct Opened {
    catalog: OpenCatalog,
    storage: Arc<dyn Storage>,
}

impl Opened {
    async fn open(location: &StoreLocation, role: &Role) -> StoreResult<Opened> {
        let catalog = OpenCatalog::open(location, role).await?;
        let storage = catalog.storage();
        Ok(Opened { catalog, storage })
    }
}

/// The schema lakes of one database (see [`rocklake_sql::SchemaLakes`]).
struct DatabaseLakes {
    root: LakeRoot,
    database: String,
    role: Role,
    open: Mutex<BTreeMap<String, Opened>>,
    /// Serializes creating and removing lakes.
    changing: tokio::sync::Mutex<()>,
}

impl DatabaseLakes {
    fn open_lakes(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Opened>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens the lakes under the root not open yet (all of them at start,
    /// new ones on a replica).
    async fn open_new(&self) -> StoreResult<()> {
        let _changing = self.changing.lock().await;
        for schema in self.root.lake_schemas(&self.database).await? {
            if self.open_lakes().contains_key(&schema) {
                continue;
            }
            let work = Work::Lake(&self.database, &schema);
            if let Some(command) = self.root.unfinished_work(work).await? {
                tracing::warn!(database = %self.database, schema, command, "an interrupted command left this lake incomplete: not served; run the command again");
                continue;
            }
            let location = self.root.lake_location(&self.database, &schema)?;
            let opened = Opened::open(&location, &self.role).await?;
            self.open_lakes().insert(schema, opened);
        }
        Ok(())
    }

    async fn close_all(&self) -> StoreResult<()> {
        let lakes: Vec<Opened> = std::mem::take(&mut *self.open_lakes())
            .into_values()
            .collect();
        for lake in lakes {
            lake.catalog.close().await?;
        }
        Ok(())
    }
}

#[async_trait]
impl SchemaLakes for DatabaseLakes {
    fn lakes(&self) -> Vec<(String, Arc<dyn Storage>)> {
        self.open_lakes()
            .iter()
            .map(|(schema, opened)| (schema.clone(), opened.storage.clone()))
            .collect()
    }

    async fn create_lake(&self, schema: &str) -> StorageResult<Arc<dyn Storage>> {
        if matches!(self.role, Role::Replica(_)) {
            return Err(SqlError::read_only("CREATE SCHEMA"));
        }
        let _changing = self.changing.lock().await;
        if let Some(opened) = self.open_lakes().get(schema) {
            return Ok(opened.storage.clone());
        }
        self.root
            .remove_lake(&self.database, schema)
            .await
            .map_err(to_sql)?;
        let location = self
            .root
            .lake_location(&self.database, schema)
            .map_err(to_sql)?;
        let opened = Opened::open(&location, &self.role).await.map_err(to_sql)?;
        let storage = opened.storage.clone();
        self.open_lakes().insert(schema.to_string(), opened);
        tracing::info!(database = %self.database, schema, "schema lake created");
        Ok(storage)
    }

    async fn remove_lake(&self, schema: &str) -> StorageResult<()> {
        let _changing = self.changing.lock().await;
        let removed = self.open_lakes().remove(schema);
        if let Some(opened) = removed {
            opened.catalog.close().await.map_err(to_sql)?;
        }
        self.root
            .remove_lake(&self.database, schema)
            .await
            .map_err(to_sql)?;
        tracing::info!(database = %self.database, schema, "schema lake removed");
        Ok(())
    }
}

/// One database of the server: its home catalog, its schema lakes, and the
/// sessions connected to it.
pub struct ServedDatabase {
    name: String,
    home: OpenCatalog,
    lakes: Arc<DatabaseLakes>,
    storage: Arc<Database>,
    catalog_results: Arc<rocklake_sql::CatalogResults>,
    sessions: Mutex<HashMap<i32, ConnectedSession>>,
}

/// A session connected to a database.
struct ConnectedSession {
    interrupt: Arc<Interrupt>,
    user: String,
}

impl ServedDatabase {
    async fn open(root: &LakeRoot, name: &str, role: &Role) -> StoreResult<ServedDatabase> {
        let home = OpenCatalog::open(&root.database_location(name)?, role).await?;
        let lakes = Arc::new(DatabaseLakes {
            root: root.clone(),
            database: name.to_string(),
            role: role.clone(),
            open: Mutex::default(),
            changing: tokio::sync::Mutex::new(()),
        });
        lakes.open_new().await?;
        let storage = Arc::new(Database::with_lakes(home.storage(), lakes.clone()));
        Ok(ServedDatabase {
            name: name.to_string(),
            home,
            lakes,
            storage,
            catalog_results: Arc::default(),
            sessions: Mutex::default(),
        })
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The storage sessions of this database use (home catalog and lakes).
    pub fn storage(&self) -> Arc<Database> {
        self.storage.clone()
    }

    /// Results of catalog queries shared by this database's sessions.
    pub fn catalog_results(&self) -> Arc<rocklake_sql::CatalogResults> {
        self.catalog_results.clone()
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<i32, ConnectedSession>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a session of `user` connected to this database until the
    /// returned guard is dropped.
    pub fn connect(
        self: &Arc<Self>,
        pid: i32,
        interrupt: Arc<Interrupt>,
        user: &str,
    ) -> SessionGuard {
        self.sessions().insert(
            pid,
            ConnectedSession {
                interrupt,
                user: user.to_string(),
            },
        );
        SessionGuard {
            database: self.clone(),
            pid,
        }
    }

    /// How many sessions are connected.
    pub fn session_count(&self) -> usize {
        self.sessions().len()
    }

    /// Ends every session connected (FATAL 57P01); how many.
    fn end_sessions(&self) -> usize {
        let sessions = self.sessions();
        for session in sessions.values() {
            session.interrupt.stop(StopReason::Shutdown);
        }
        sessions.len()
    }

    /// The users of the sessions connected.
    pub fn session_users(&self) -> Vec<String> {
        self.sessions().values().map(|s| s.user.clone()).collect()
    }
}

/// A session's entry in its database's session list.
pub struct SessionGuard {
    database: Arc<ServedDatabase>,
    pid: i32,
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        self.database.sessions().remove(&self.pid);
    }
}

/// Why a database could not be dropped.
#[derive(Debug)]
pub enum DropRefused {
    /// No database of that name.
    Missing,
    /// Sessions are connected (and were not to be ended, or did not end).
    InUse(usize),
    /// Storage failed.
    Store(crate::error::StoreError),
}

/// Every database under one root, open (see the module docs).
pub struct ServedRoot {
    root: LakeRoot,
    role: Role,
    databases: Mutex<BTreeMap<String, Arc<ServedDatabase>>>,
    /// Databases that failed to open, with the reason: the others are
    /// served regardless.
    broken: Mutex<BTreeMap<String, String>>,
    generation: AtomicU64,
    /// Serializes creating, dropping and discovering databases.
    changing: tokio::sync::Mutex<()>,
}

impl ServedRoot {
    /// Opens every database under `root`. A writer first makes a
    /// single-catalog location of an earlier release database
    /// `default_database`, and creates `default_database` when it is given
    /// and missing.
    pub async fn open(
        root: LakeRoot,
        role: Role,
        default_database: Option<&str>,
    ) -> StoreResult<ServedRoot> {
        if root.has_single_catalog().await? {
            let Role::Writer(_) = role else {
                return Err(crate::error::StoreError::Location {
                    location: root.location().to_string(),
                    reason: "it holds a single catalog of an earlier release: start the writer \
                             once (rocklake serve without --read-only) to upgrade it"
                        .to_string(),
                });
            };
            let name = default_database.unwrap_or(DEFAULT_DATABASE);
            let moved = root.upgrade_single_catalog(name).await?;
            tracing::warn!(
                location = %root.location(),
                database = name,
                objects = moved,
                "the single catalog of an earlier release is now database {name}"
            );
        }
        // Keys that do not fit any catalog stop the server before it opens
        // (and so fences or writes) any of them.
        for database in root.databases().await? {
            let mut locations = vec![root.database_location(&database)?];
            for schema in root.lake_schemas(&database).await? {
                locations.push(root.lake_location(&database, &schema)?);
            }
            for location in locations {
                crate::encryption::prepare(
                    &location,
                    role.keys(),
                    crate::encryption::Opening::Reader,
                )
                .await?;
            }
        }
        let served = ServedRoot {
            root,
            role,
            databases: Mutex::default(),
            broken: Mutex::default(),
            generation: AtomicU64::new(1),
            changing: tokio::sync::Mutex::new(()),
        };
        served.refresh().await?;
        if matches!(served.role, Role::Replica(_))
            && served.names().is_empty()
            && served.broken().is_empty()
        {
            return Err(crate::replica::no_catalog(served.root.location()));
        }
        if let (Some(name), Role::Writer(_)) = (default_database, &served.role) {
            served.create_database(name).await?;
        }
        Ok(served)
    }

    /// The root served.
    pub fn root(&self) -> &LakeRoot {
        &self.root
    }

    fn open_databases(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<ServedDatabase>>> {
        self.databases.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The open database `name`.
    pub fn database(&self, name: &str) -> Option<Arc<ServedDatabase>> {
        self.open_databases().get(name).cloned()
    }

    /// Why each database that could not be opened was not (its sessions
    /// are refused with the reason; the other databases are unaffected).
    pub fn broken(&self) -> BTreeMap<String, String> {
        self.broken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Names of the databases, sorted.
    pub fn names(&self) -> Vec<String> {
        self.open_databases().keys().cloned().collect()
    }

    /// Changes whenever a database is created, dropped or discovered.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Opens databases and schema lakes that appeared under the root and
    /// forgets databases that are gone (what a replica does to follow its
    /// writer; a writer does it once at start).
    pub async fn refresh(&self) -> StoreResult<()> {
        let _changing = self.changing.lock().await;
        let present = self.root.databases().await?;
        let gone: Vec<Arc<ServedDatabase>> = {
            let mut open = self.open_databases();
            let gone_names: Vec<String> = open
                .keys()
                .filter(|name| !present.contains(name))
                .cloned()
                .collect();
            gone_names
                .iter()
                .filter_map(|name| open.remove(name))
                .collect()
        };
        for database in &gone {
            self.generation.fetch_add(1, Ordering::AcqRel);
            close_database(database).await;
        }
        let mut broken = BTreeMap::new();
        for name in present {
            let opened = self.database(&name);
            let outcome = match opened {
                Some(database) => database.lakes.open_new().await,
                None => match self.open_database(&name).await {
                    Ok(database) => {
                        self.open_databases()
                            .insert(name.clone(), Arc::new(database));
                        self.generation.fetch_add(1, Ordering::AcqRel);
                        Ok(())
                    }
                    Err(error) => Err(error),
                },
            };
            if let Err(error) = outcome {
                if matches!(error, crate::error::StoreError::CatalogKey { .. }) {
                    // Keys that do not fit are the operator's mistake: stop
                    // at once, before anything is written.
                    return Err(error);
                }
                // One database's storage failing never stops the others.
                tracing::error!(database = %name, %error, "cannot open the database; serving the others");
                broken.insert(name, error.to_string());
            }
        }
        *self.broken.lock().unwrap_or_else(|e| e.into_inner()) = broken;
        Ok(())
    }

    /// Opens database `name`, unless a command writing it was interrupted.
    async fn open_database(&self, name: &str) -> StoreResult<ServedDatabase> {
        if let Some(command) = self.root.unfinished_work(Work::Database(name)).await? {
            return Err(crate::error::StoreError::Unfinished {
                what: format!("database {name:?}"),
                command,
            });
        }
        ServedDatabase::open(&self.root, name, &self.role).await
    }

    /// Creates database `name`; `Ok(false)` when it exists.
    pub async fn create_database(&self, name: &str) -> StoreResult<bool> {
        let _changing = self.changing.lock().await;
        if self.database(name).is_some() || self.root.has_database(name).await? {
            return Ok(false);
        }
        // Leftovers of an earlier database of that name, if any.
        self.root.remove_database(name).await?;
        let database = ServedDatabase::open(&self.root, name, &self.role).await?;
        self.open_databases()
            .insert(name.to_string(), Arc::new(database));
        self.generation.fetch_add(1, Ordering::AcqRel);
        tracing::info!(database = name, "database created");
        Ok(true)
    }

    /// Drops database `name` with everything in it. The drop waits up to
    /// five seconds for the sessions connected to it to end (as
    /// PostgreSQL's does: a client that just disconnected may not be gone
    /// yet) and is refused if some remain, unless `force`: then they are
    /// ended first (FATAL 57P01).
    pub async fn drop_database(&self, name: &str, force: bool) -> Result<(), DropRefused> {
        let _changing = self.changing.lock().await;
        let database = self.database(name).ok_or(DropRefused::Missing)?;
        if force {
            database.end_sessions();
        }
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while database.session_count() > 0 {
            if tokio::time::Instant::now() >= deadline {
                return Err(DropRefused::InUse(database.session_count()));
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        self.open_databases().remove(name);
        self.generation.fetch_add(1, Ordering::AcqRel);
        close_database(&database).await;
        self.root
            .remove_database(name)
            .await
            .map_err(DropRefused::Store)?;
        tracing::info!(database = name, "database dropped");
        Ok(())
    }

    /// Every catalog this root writes, labelled `database` or
    /// `database/schema` (none on a replica).
    pub fn writer_catalogs(&self) -> Vec<(String, CatalogStore)> {
        let mut catalogs = Vec::new();
        for database in self.open_databases().values() {
            if let OpenCatalog::Writer(store) = &database.home {
                catalogs.push((database.name.clone(), store.clone()));
            }
            for (schema, opened) in database.lakes.open_lakes().iter() {
                if let OpenCatalog::Writer(store) = &opened.catalog {
                    catalogs.push((format!("{}/{schema}", database.name), store.clone()));
                }
            }
        }
        catalogs
    }

    /// Ends every session connected to a database of this root (FATAL
    /// 57P01), as a server does when its role changes; how many.
    pub fn end_sessions(&self) -> usize {
        self.open_databases()
            .values()
            .map(|database| database.end_sessions())
            .sum()
    }

    /// How many sessions of `user` are connected, to any database (for a
    /// role's `CONNECTION LIMIT`).
    pub fn sessions_of(&self, user: &str) -> usize {
        self.open_databases()
            .values()
            .map(|database| {
                database
                    .sessions()
                    .values()
                    .filter(|s| s.user == user)
                    .count()
            })
            .sum()
    }

    /// Whether every database can serve: none failed to open, and each of
    /// its catalogs is neither closed nor fenced and answers a read (what
    /// `/readyz` reports). The error names each catalog that cannot.
    pub async fn check_ready(&self) -> Result<(), String> {
        let mut problems: Vec<String> = self
            .broken()
            .into_iter()
            .map(|(name, error)| format!("database {name:?} did not open: {error}"))
            .collect();
        let databases: Vec<Arc<ServedDatabase>> = self.open_databases().values().cloned().collect();
        for database in databases {
            let lakes: Vec<OpenCatalog> = database
                .lakes
                .open_lakes()
                .values()
                .map(|opened| opened.catalog.clone())
                .collect();
            for catalog in std::iter::once(&database.home).chain(&lakes) {
                if let Err(problem) = catalog.check_ready().await {
                    problems.push(problem);
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }

    /// Makes every catalog durable and closes it, waiting at most
    /// `timeout` for each (a catalog whose storage does not answer is left
    /// as it is: its acknowledged commits are durable already). Returns
    /// what could not be closed, one line per catalog.
    pub async fn close_within(&self, timeout: std::time::Duration) -> Vec<String> {
        let databases: Vec<Arc<ServedDatabase>> = std::mem::take(&mut *self.open_databases())
            .into_values()
            .collect();
        let mut problems = Vec::new();
        for database in databases {
            let lakes: Vec<(String, Opened)> = std::mem::take(&mut *database.lakes.open_lakes())
                .into_iter()
                .collect();
            let catalogs = lakes
                .iter()
                .map(|(schema, opened)| (format!("{}/{schema}", database.name), &opened.catalog))
                .chain(std::iter::once((database.name.clone(), &database.home)));
            for (label, catalog) in catalogs {
                match tokio::time::timeout(timeout, catalog.close()).await {
                    Ok(Ok(())) => {}
                    Ok(Err(error)) => problems.push(format!("catalog {label}: {error}")),
                    Err(_) => problems.push(format!(
                        "catalog {label}: storage did not finish the last flush within {}; \
                         writes not yet flushed are in its WAL or commit journal",
                        crate::faults::format_timeout(timeout)
                    )),
                }
            }
        }
        problems
    }

    /// Makes every catalog durable and closes it.
    pub async fn close(&self) -> StoreResult<()> {
        let databases: Vec<Arc<ServedDatabase>> = std::mem::take(&mut *self.open_databases())
            .into_values()
            .collect();
        for database in databases {
            database.lakes.close_all().await?;
            database.home.close().await?;
        }
        Ok(())
    }
}

/// Checks `keys` against every catalog under `root` without writing
/// anything (what a writer does before it claims the root's lease, so a
/// missing or wrong key changes nothing; see [`crate::encryption`]).
pub async fn check_keys(
    root: &LakeRoot,
    keys: Option<&Arc<crate::encryption::CatalogKeys>>,
) -> StoreResult<()> {
    let opening = crate::encryption::Opening::Reader;
    for database in root.databases().await? {
        crate::encryption::prepare(&root.database_location(&database)?, keys, opening).await?;
        for schema in root.lake_schemas(&database).await? {
            let location = root.lake_location(&database, &schema)?;
            crate::encryption::prepare(&location, keys, opening).await?;
        }
    }
    Ok(())
}

/// The database an earlier release's single catalog becomes when no
/// default database is named.
pub const DEFAULT_DATABASE: &str = "lake";

async fn close_database(database: &ServedDatabase) {
    if let Err(error) = database.lakes.close_all().await {
        tracing::warn!(database = %database.name, %error, "closing its schema lakes failed");
    }
    if let Err(error) = database.home.close().await {
        tracing::warn!(database = %database.name, %error, "closing the catalog failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::txn::WriteTxn;
    use rocklake_codec::keys::Counter;

    fn writer() -> Role {
        Role::Writer(StoreOptions::default())
    }

    async fn create_schema(store: &CatalogStore, name: &str) {
        let mut txn: WriteTxn = store.write().unwrap();
        assert!(txn.create_namespace(name, false).await.unwrap());
        txn.commit().await.unwrap();
    }

    #[tokio::test]
    async fn databases_are_created_listed_reopened_and_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let location = StoreLocation::Local(dir.path().to_path_buf());
        let served = ServedRoot::open(
            LakeRoot::open(location.clone()).unwrap(),
            writer(),
            Some("lake"),
        )
        .await
        .unwrap();
        assert_eq!(served.names(), ["lake"]);
        assert!(served.create_database("Sales").await.unwrap());
        assert!(!served.create_database("Sales").await.unwrap());
        assert_eq!(served.names(), ["Sales", "lake"]);
        served.close().await.unwrap();

        let served = ServedRoot::open(LakeRoot::open(location.clone()).unwrap(), writer(), None)
            .await
            .unwrap();
        assert_eq!(served.names(), ["Sales", "lake"]);
        let sales = served.database("Sales").unwrap();
        let guard = sales.connect(7, Arc::default(), "postgres");
        assert!(matches!(
            served.drop_database("Sales", false).await,
            Err(DropRefused::InUse(1))
        ));
        drop(guard);
        drop(sales);
        served.drop_database("Sales", false).await.unwrap();
        assert!(matches!(
            served.drop_database("Sales", false).await,
            Err(DropRefused::Missing)
        ));
        assert_eq!(served.names(), ["lake"]);
        assert_eq!(served.root().databases().await.unwrap(), ["lake"]);
        served.close().await.unwrap();
    }

    /// A location an earlier release wrote (one catalog at its top) becomes
    /// the default database, with its contents.
    #[tokio::test]
    async fn a_single_catalog_location_becomes_the_default_database() {
        let dir = tempfile::tempdir().unwrap();
        let location = StoreLocation::Local(dir.path().to_path_buf());
        let old = CatalogStore::open(&location, StoreOptions::default())
            .await
            .unwrap();
        for n in 0..5 {
            create_schema(&old, &format!("s{n}")).await;
        }
        let written = old.counter(Counter::NextNamespaceId).await.unwrap();
        assert!(written.is_some());
        old.close().await.unwrap();

        let root = LakeRoot::open(location.clone()).unwrap();
        assert!(root.has_single_catalog().await.unwrap());
        let served = ServedRoot::open(root.clone(), writer(), Some("analytics"))
            .await
            .unwrap();
        assert!(!root.has_single_catalog().await.unwrap());
        assert_eq!(served.names(), ["analytics"]);
        served.close().await.unwrap();
        let moved = CatalogStore::open(
            &root.database_location("analytics").unwrap(),
            StoreOptions::default(),
        )
        .await
        .unwrap();
        assert_eq!(
            moved.counter(Counter::NextNamespaceId).await.unwrap(),
            written
        );
        moved.close().await.unwrap();
        assert!(!dir.path().join("catalog").exists());
    }
}
