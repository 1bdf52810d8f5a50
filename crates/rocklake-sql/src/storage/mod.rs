//! The contract between the SQL engine and whatever holds the relations.
//!
//! The engine never sees keys or SlateDB: it asks a [`StorageTxn`] for relation
//! definitions and rows, and hands back inserts, updates and deletes. The catalog
//! store implements this over SlateDB; [`crate::storage::memory::MemoryStorage`] implements it
//! in memory for the engine's own tests.

pub mod memory;
pub mod route;

use std::sync::Arc;

use async_trait::async_trait;
use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};

use rocklake_types::SqlError;

pub use rocklake_types::rows::{RowId, ScannedRow, SharedRows};

/// Result type of storage calls.
pub type StorageResult<T> = Result<T, SqlError>;

/// Definition of a relation (table) as the engine sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationDef {
    /// Schema (namespace) name, e.g. `public`.
    pub schema: String,
    /// Relation name, e.g. `ducklake_snapshot`.
    pub name: String,
    /// Columns in declaration order.
    pub columns: Vec<ColumnDef>,
    /// Columns (by index) that form the relation's primary key, empty if none.
    /// Violations are SQLSTATE 23505; [`RelationDef::key_checks`] says who
    /// finds them.
    pub primary_key: Vec<usize>,
    /// Who refuses a primary key that a row the transaction sees already
    /// holds. (Keys of concurrent transactions are always the storage's to
    /// check.)
    pub key_checks: KeyChecks,
    /// The storage's own id of the relation, set by the storage that lists
    /// it so that it finds the relation again without its name (`None` for
    /// a definition the engine built, as for CREATE TABLE).
    pub storage_id: Option<u64>,
}

/// Who checks a relation's primary key against the rows a transaction sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyChecks {
    /// The engine, before it writes (the storage keeps rows in insertion
    /// order and would not see the duplicate).
    Engine,
    /// The storage, which keys the relation's rows by their primary key.
    Storage,
}

impl RelationDef {
    /// A relation whose primary key the engine checks and that no storage
    /// has listed yet.
    pub fn new(
        schema: impl Into<String>,
        name: impl Into<String>,
        columns: Vec<ColumnDef>,
        primary_key: Vec<usize>,
    ) -> Self {
        RelationDef {
            schema: schema.into(),
            name: name.into(),
            columns,
            primary_key,
            key_checks: KeyChecks::Engine,
            storage_id: None,
        }
    }

    /// Index of the column with this (already case-folded) name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// Name of the primary-key constraint as PostgreSQL derives it.
    pub fn primary_key_name(&self) -> String {
        format!("{}_pkey", self.name)
    }
}

/// One ALTER TABLE action on a relation, as storage applies it. The engine
/// has checked it against the rows (NOT NULL) and evaluated defaults.
#[derive(Debug, Clone, PartialEq)]
pub enum RelationChange {
    /// `ADD COLUMN`; existing rows read `missing` (the evaluated DEFAULT).
    AddColumn {
        /// The new column.
        column: ColumnDef,
        /// What rows written before read (`None`: NULL).
        missing: Option<Datum>,
    },
    /// `DROP COLUMN`.
    DropColumn(String),
    /// `RENAME COLUMN from TO to`.
    RenameColumn {
        /// Current name.
        from: String,
        /// New name.
        to: String,
    },
    /// `RENAME TO`.
    Rename(String),
    /// `ALTER COLUMN ... SET/DROP DEFAULT`, `SET/DROP NOT NULL`.
    AlterColumn {
        /// Column name.
        column: String,
        /// New default (`Some(None)`: DROP DEFAULT), unchanged if `None`.
        default: Option<Option<String>>,
        /// New NOT NULL, unchanged if `None`.
        not_null: Option<bool>,
    },
    /// `ALTER COLUMN ... TYPE`: the engine rewrites every row afterwards.
    SetType {
        /// Column name.
        column: String,
        /// New type.
        pg_type: PgType,
    },
}

/// A bound on one column that a scan may use to narrow what it reads. The
/// engine always re-checks its full predicate on the returned rows, so storage
/// may ignore any bound it cannot use (the filter is *inexact*).
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnBound {
    /// `column = value`.
    Eq(Datum),
    /// `column IN (values)`.
    In(Vec<Datum>),
    /// `lower <= column <= upper` with either side optional and either side
    /// inclusive (`true`) or exclusive (`false`).
    Range {
        /// Lower bound and whether it is inclusive.
        lower: Option<(Datum, bool)>,
        /// Upper bound and whether it is inclusive.
        upper: Option<(Datum, bool)>,
    },
}

/// Conjunction of per-column bounds pushed down to a scan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScanFilter {
    /// `(column index, bound)` pairs, all of which hold for wanted rows.
    pub bounds: Vec<(usize, ColumnBound)>,
    /// Set when the statement only needs the row holding the largest or
    /// smallest value of one column among the rows the bounds admit (e.g.
    /// `SELECT max(snapshot_id) FROM ducklake_snapshot`). Storage that keeps
    /// rows ordered by that column may return just that row; any other storage
    /// ignores it, since the engine computes the aggregate over whatever it gets.
    pub extreme: Option<Extreme>,
}

/// The one row an aggregate-only scan needs (see [`ScanFilter::extreme`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extreme {
    /// Column index of the `max`/`min` argument.
    pub column: usize,
    /// `max` (true) or `min` (false).
    pub largest: bool,
}

/// The strength of a row lock (`SELECT ... FOR UPDATE` and its siblings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockStrength {
    /// `FOR KEY SHARE`.
    KeyShare,
    /// `FOR SHARE`.
    Share,
    /// `FOR NO KEY UPDATE`.
    NoKeyUpdate,
    /// `FOR UPDATE`.
    Update,
}

impl LockStrength {
    /// The clause as PostgreSQL names it in messages (`FOR UPDATE`).
    pub fn clause(self) -> &'static str {
        match self {
            LockStrength::KeyShare => "FOR KEY SHARE",
            LockStrength::Share => "FOR SHARE",
            LockStrength::NoKeyUpdate => "FOR NO KEY UPDATE",
            LockStrength::Update => "FOR UPDATE",
        }
    }
}

/// What a row lock does when another transaction holds the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockWait {
    /// Wait until the holder ends.
    Wait,
    /// Fail at once (`NOWAIT`, SQLSTATE 55P03).
    Nowait,
    /// Leave the row out (`SKIP LOCKED`).
    SkipLocked,
}

/// The rows of one scan, as [`StorageTxn::scan_shared`] returns them.
pub enum ScanRows {
    /// Copies the engine owns.
    Owned(Vec<ScannedRow>),
    /// Rows shared with storage.
    Shared(Arc<dyn SharedRows>),
}

/// A catalog's relations in a stable order, shared: the list and each
/// definition in it are pointers that transactions, sessions and catalog
/// versions share.
pub type RelationList = Arc<Vec<Arc<RelationDef>>>;

/// The committed state of a relation's rows a transaction reads (see
/// [`StorageTxn::read_stamp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReadStamp {
    /// The storage, unique within the process.
    pub storage: u64,
    /// The state of the rows in that storage (e.g. the last commit that
    /// wrote them).
    pub state: u64,
    /// Rows the storage hides from every reader below this (the retention
    /// floor of `ducklake_snapshot`; 0 for none).
    pub floor: u64,
}

/// Where a read of a relation's rows ended (see [`StorageTxn::read_end`]):
/// their stamp and the storage's own map of where the rows lie, to place
/// the rows added later.
#[derive(Clone)]
pub struct ReadEnd {
    /// The state of the rows read.
    pub stamp: ReadStamp,
    /// What the storage that gave it needs to place later rows among these.
    pub positions: Arc<dyn std::any::Any + Send + Sync>,
}

impl std::fmt::Debug for ReadEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadEnd")
            .field("stamp", &self.stamp)
            .finish_non_exhaustive()
    }
}

/// The rows added to a relation since an earlier read (see
/// [`StorageTxn::scan_added`]).
pub struct AddedRows {
    /// The added rows, in the order a scan hands them over (after every
    /// row of the earlier read).
    pub rows: ScanRows,
    /// Where this read ends.
    pub end: ReadEnd,
}

/// One transaction's view of storage: a consistent snapshot for reads plus the
/// transaction's own uncommitted writes. Dropping it without [`StorageTxn::commit`]
/// discards every write.
#[async_trait]
pub trait StorageTxn: Send {
    /// Looks a relation up by schema and name (both already case-folded).
    async fn relation(&mut self, schema: &str, name: &str) -> StorageResult<Option<RelationDef>>;

    /// All relations, in a stable order (shared: storage may hand every
    /// transaction at one catalog version the same list).
    async fn relations(&mut self) -> StorageResult<RelationList>;

    /// A version of the relation and schema lists this transaction sees:
    /// while it stays the same, [`StorageTxn::relations`] and
    /// [`StorageTxn::schemas`] return what they returned before, so a session
    /// may keep them across transactions. `None` when storage cannot tell, or
    /// when this transaction has changed them itself.
    async fn catalog_version(&mut self) -> StorageResult<Option<u64>> {
        Ok(None)
    }

    /// Creates a relation. Returns `Ok(false)` without changing anything when it
    /// exists and `if_not_exists` is set; errors (SQLSTATE 42P07) when it exists
    /// otherwise.
    async fn create_relation(
        &mut self,
        def: RelationDef,
        if_not_exists: bool,
    ) -> StorageResult<bool>;

    /// Drops a relation and all its rows. Returns `Ok(false)` when it does not
    /// exist and `if_exists` is set; errors (SQLSTATE 42P01) when it does not
    /// exist otherwise.
    async fn drop_relation(
        &mut self,
        schema: &str,
        name: &str,
        if_exists: bool,
    ) -> StorageResult<bool>;

    /// Applies one ALTER TABLE action to `schema.name` and returns the
    /// altered definition (errors: 42P01 unknown table, 42703 unknown column,
    /// 42701 duplicate column, 42P07 a rename onto an existing table).
    async fn alter_relation(
        &mut self,
        schema: &str,
        name: &str,
        change: RelationChange,
    ) -> StorageResult<RelationDef> {
        let _ = (schema, name);
        Err(SqlError::unsupported(format!(
            "ALTER TABLE ({change:?}) is not supported by this storage"
        )))
    }

    /// The bytes the database takes in storage (`pg_database_size`), if
    /// storage can tell.
    async fn database_bytes(&mut self) -> StorageResult<Option<u64>> {
        Ok(None)
    }

    /// `(schema, name, bytes)` of each stored relation: the bytes its rows
    /// take (`pg_relation_size`); empty if storage cannot tell.
    async fn relation_bytes(&mut self) -> StorageResult<Vec<(String, String, u64)>> {
        Ok(Vec::new())
    }

    /// Creates a schema (namespace). Same existence rules as `create_relation`
    /// (SQLSTATE 42P06).
    async fn create_schema(&mut self, name: &str, if_not_exists: bool) -> StorageResult<bool>;

    /// Drops a schema (`CASCADE`: with everything in it). Returns
    /// `Ok(false)` when it does not exist and `if_exists` is set; errors with
    /// SQLSTATE 3F000 when it does not exist otherwise, 2BP01 when it holds
    /// relations and `cascade` is not set.
    async fn drop_schema(
        &mut self,
        name: &str,
        if_exists: bool,
        cascade: bool,
    ) -> StorageResult<bool> {
        let _ = (if_exists, cascade);
        Err(SqlError::unsupported(format!(
            "DROP SCHEMA {name} is not supported by this storage"
        )))
    }

    /// Names of all schemas.
    async fn schemas(&mut self) -> StorageResult<Vec<String>>;

    /// Rows of `relation` that may satisfy `filter`, in a stable order.
    async fn scan(
        &mut self,
        relation: &RelationDef,
        filter: &ScanFilter,
    ) -> StorageResult<Vec<ScannedRow>>;

    /// Like [`StorageTxn::scan`], for a read that only looks at the rows: storage
    /// that already holds them decoded may hand them over shared instead of
    /// copying each one.
    async fn scan_shared(
        &mut self,
        relation: &RelationDef,
        filter: &ScanFilter,
    ) -> StorageResult<ScanRows> {
        Ok(ScanRows::Owned(self.scan(relation, filter).await?))
    }

    /// What this transaction reads of `relation`'s rows, as a stamp: two
    /// reads with equal stamps return the same rows. `None` when the
    /// storage cannot tell (the transaction wrote the relation, a commit
    /// was in flight when its snapshot was taken, a read replica, ...).
    async fn read_stamp(&mut self, relation: &RelationDef) -> StorageResult<Option<ReadStamp>> {
        let _ = relation;
        Ok(None)
    }

    /// Where this transaction's last read of all of `relation`'s rows ended,
    /// for [`StorageTxn::scan_added`]. `None` when the transaction has not
    /// read them all, or [`StorageTxn::read_stamp`] is `None`.
    async fn read_end(&mut self, relation: &RelationDef) -> StorageResult<Option<ReadEnd>> {
        let _ = relation;
        Ok(None)
    }

    /// The rows of `relation` this transaction reads that an earlier read
    /// (ended at `since`) did not, when they are all that changed: no commit
    /// since that read changed or removed one of its rows, and a scan hands
    /// the added rows over after all of them, so its rows followed by these
    /// are the rows now, in order. `None` when storage cannot tell (read the
    /// whole relation then).
    async fn scan_added(
        &mut self,
        relation: &RelationDef,
        since: &ReadEnd,
    ) -> StorageResult<Option<AddedRows>> {
        let _ = (relation, since);
        Ok(None)
    }

    /// Inserts rows. A primary-key duplicate of a row committed concurrently
    /// fails with SQLSTATE 23505 (at the latest at commit); so does one of a
    /// row this transaction sees when the relation's
    /// [`RelationDef::key_checks`] is [`KeyChecks::Storage`] (the engine
    /// checks those otherwise).
    async fn insert(&mut self, relation: &RelationDef, rows: Vec<Row>) -> StorageResult<()>;

    /// Replaces the row `id` with `new_row`. `id` comes from a scan of this
    /// transaction (storage may refuse a row it has not read).
    async fn update(
        &mut self,
        relation: &RelationDef,
        id: RowId,
        new_row: Row,
    ) -> StorageResult<()>;

    /// Deletes the row `id` (read in this transaction, as for `update`).
    async fn delete(&mut self, relation: &RelationDef, id: RowId) -> StorageResult<()>;

    /// Locks row `id` of `relation` (read in this transaction, with its
    /// `ctid`) until the transaction ends, as `SELECT ... FOR UPDATE` does.
    /// Returns `Ok(false)` when `wait` is [`LockWait::SkipLocked`] and
    /// another transaction holds the row. A row changed by a transaction
    /// that committed after this one began fails with SQLSTATE 40001.
    /// Storage without concurrent transactions has nothing to lock.
    async fn lock_row(
        &mut self,
        relation: &RelationDef,
        id: RowId,
        strength: LockStrength,
        wait: LockWait,
    ) -> StorageResult<bool> {
        let _ = (relation, id, strength, wait);
        Ok(true)
    }

    /// Makes every write of this transaction durable and visible atomically, or
    /// fails (e.g. SQLSTATE 23505 on a concurrent duplicate key, 40001 on another
    /// conflict) and keeps nothing.
    async fn commit(self: Box<Self>) -> StorageResult<()>;
}

/// Something that opens storage transactions: the catalog store, or the
/// in-memory test storage.
#[async_trait]
pub trait Storage: Send + Sync {
    /// Begins a transaction on a consistent snapshot. `read_only` transactions
    /// reject writes with SQLSTATE 25006.
    async fn begin(&self, read_only: bool) -> StorageResult<Box<dyn StorageTxn>>;

    /// Runs a catalog maintenance command in its own transaction and returns
    /// what it did as `(item, value)` pairs. Storage without retention rejects
    /// every command as unsupported.
    async fn maintain(&self, command: Maintenance) -> StorageResult<Vec<(String, String)>> {
        Err(SqlError::unsupported(format!(
            "{command:?} is not supported by this storage"
        )))
    }
}

/// A catalog maintenance command (see [`crate::maintenance`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Maintenance {
    /// Advance the retention floor: a snapshot id, or an age such as `7d`.
    RetainFrom {
        /// The snapshot id or age.
        spec: String,
        /// The schema lake to maintain (`None`: the database's home lake).
        schema: Option<String>,
    },
    /// Delete every row the retention floor gave up.
    Excise {
        /// The schema lake to maintain (`None`: the database's home lake).
        schema: Option<String>,
    },
    /// Create the named checkpoint in every lake of the database.
    Checkpoint {
        /// The checkpoint's name.
        name: String,
    },
    /// List the named checkpoints of every lake of the database.
    Checkpoints,
    /// Delete the named checkpoint in every lake of the database.
    DropCheckpoint {
        /// The checkpoint's name.
        name: String,
    },
    /// Tag a snapshot so it stays readable whatever the retention floor.
    Tag {
        /// The tag's name.
        name: String,
        /// The snapshot id.
        snapshot: String,
        /// The schema lake (`None`: the home lake).
        schema: Option<String>,
    },
    /// Remove a tag.
    Untag {
        /// The tag's name.
        name: String,
        /// The schema lake (`None`: the home lake).
        schema: Option<String>,
    },
    /// Set a lake's own retention (`'7d'`, `'off'`, `'default'`).
    SetRetention {
        /// The retention.
        spec: String,
        /// The schema lake (`None`: the home lake).
        schema: Option<String>,
    },
    /// List the tags of a lake.
    Tags {
        /// The schema lake (`None`: the home lake).
        schema: Option<String>,
    },
}

impl Maintenance {
    /// The schema lake the command is for (`None`: the home lake).
    pub fn schema(&self) -> Option<&str> {
        match self {
            Maintenance::RetainFrom { schema, .. }
            | Maintenance::Excise { schema }
            | Maintenance::Tag { schema, .. }
            | Maintenance::Untag { schema, .. }
            | Maintenance::SetRetention { schema, .. }
            | Maintenance::Tags { schema } => schema.as_deref(),
            _ => None,
        }
    }

    /// Whether the command is for every lake of the database at once.
    pub fn every_lake(&self) -> bool {
        matches!(
            self,
            Maintenance::Checkpoint { .. }
                | Maintenance::Checkpoints
                | Maintenance::DropCheckpoint { .. }
        )
    }

    /// Whether the command changes the lake (everything but listing tags
    /// and checkpoints), which only the database's owner may do.
    pub fn changes_lake(&self) -> bool {
        !matches!(self, Maintenance::Checkpoints | Maintenance::Tags { .. })
    }
}
