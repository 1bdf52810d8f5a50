//! Errors of the catalog store, each carrying the key or table it concerns.

use rocklake_codec::keys::KeyError;
use rocklake_codec::relations::alter::AlterError;
use rocklake_codec::values::ValueError;

/// What kind of object an [`StoreError::AlreadyExists`] or
/// [`StoreError::NotFound`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    /// A relation (SQL table).
    Relation,
    /// A schema.
    Schema,
    /// A DuckLake catalog table, addressed by its name.
    CatalogTable,
    /// A DuckLake catalog table with `begin_snapshot` versions.
    VersionedCatalogTable,
    /// A named checkpoint of a catalog.
    Checkpoint,
}

impl std::fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ObjectKind::Relation => "relation",
            ObjectKind::Schema => "schema",
            ObjectKind::CatalogTable => "catalog table",
            ObjectKind::VersionedCatalogTable => "versioned catalog table",
            ObjectKind::Checkpoint => "checkpoint",
        })
    }
}

/// Result type of the catalog store.
pub type StoreResult<T> = Result<T, StoreError>;

/// What can go wrong in the catalog store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An insert would duplicate an existing key or primary key.
    #[error("duplicate key in {table}: ({columns})=({values}) already exists")]
    UniqueViolation {
        /// Schema of the table.
        schema: String,
        /// Table name.
        table: String,
        /// Comma-separated key column names.
        columns: String,
        /// Comma-separated key values.
        values: String,
    },
    /// Another transaction committed a change to a key this one also wrote.
    #[error("transaction conflict: a concurrent transaction changed the same rows ({context})")]
    Conflict {
        /// Which transaction or keys.
        context: String,
    },
    /// Waiting for a key another transaction inserted would wait forever:
    /// that transaction waits, directly or through others, for this one.
    #[error("deadlock detected: two transactions wait for each other (unique keys or row locks)")]
    Deadlock,
    /// A row lock with `NOWAIT` found the row locked by another transaction.
    #[error("could not obtain lock on row in relation \"{table}\"")]
    LockNotAvailable {
        /// The relation's name.
        table: String,
    },
    /// A newer writer opened the catalog; this instance can no longer write.
    #[error("this writer was fenced by a newer writer of the same catalog (epoch {epoch})")]
    Fenced {
        /// This writer's epoch.
        epoch: u64,
    },
    /// Another server holds the writer lease of the root and is alive.
    #[error("{location} has a live writer ({holder}): start this server with --standby to take over when it is gone, with --read-only to serve as a replica, or with --take-over to fence it now")]
    LeaseHeld {
        /// The root.
        location: String,
        /// Who holds the lease.
        holder: String,
    },
    /// This server no longer holds the writer lease (or cannot show that it
    /// still does), so it acknowledges no commit.
    #[error("this server no longer holds the writer lease: {0}")]
    LeaseLost(String),
    /// A transaction deleted a tagged snapshot.
    #[error("snapshot {snapshot} is tagged \"{tag}\" and cannot be expired: CALL rocklake_untag('{tag}') first")]
    SnapshotTagged {
        /// The snapshot.
        snapshot: u64,
        /// Its tag.
        tag: String,
    },
    /// A write was attempted through a read-only handle.
    #[error("the catalog is open read-only")]
    ReadOnly,
    /// A table or schema already exists.
    #[error("{kind} \"{name}\" already exists")]
    AlreadyExists {
        /// What exists.
        kind: ObjectKind,
        /// Its name.
        name: String,
    },
    /// A table or schema does not exist.
    #[error("{kind} \"{name}\" does not exist")]
    NotFound {
        /// What is missing.
        kind: ObjectKind,
        /// Its name.
        name: String,
    },
    /// `DROP SCHEMA` without `CASCADE` of a schema that holds relations.
    #[error("cannot drop schema {schema} because other objects depend on it")]
    DependentObjects {
        /// The schema.
        schema: String,
        /// Its relations, sorted.
        relations: Vec<String>,
    },
    /// The request is valid SQL but RockLake does not support it.
    #[error("{0}")]
    Unsupported(String),
    /// A maintenance request that cannot be carried out as asked.
    #[error("{0}")]
    InvalidRequest(String),
    /// A row could not be encoded or a stored value decoded.
    #[error(transparent)]
    Value(#[from] ValueError),
    /// An ALTER TABLE cannot change the relation as asked.
    #[error(transparent)]
    Alter(#[from] AlterError),
    /// A stored key is malformed.
    #[error("{context}: {source}")]
    Key {
        /// Where the key was found.
        context: String,
        /// What is wrong with it.
        source: KeyError,
    },
    /// The stored catalog has a format this build does not read.
    #[error("catalog format version {found} is not supported (this build reads {supported})")]
    FormatVersion {
        /// Version found in the store.
        found: u64,
        /// Version this build writes.
        supported: u64,
    },
    /// A snapshot older than the retention floor was requested.
    #[error(
        "snapshot {requested} is older than the retention floor: snapshots before {retain_from} were given up (rocklake gc --retain-from)"
    )]
    BelowRetention {
        /// Snapshot asked for.
        requested: u64,
        /// Oldest snapshot kept.
        retain_from: u64,
    },
    /// A name cannot name a database or a schema lake (see
    /// [`crate::root::name_segment`]).
    #[error("{reason}")]
    InvalidName {
        /// What is wrong with it.
        reason: String,
    },
    /// A command writing a root, database or lake from outside a server
    /// was interrupted (see [`crate::root::Work`]).
    #[error("{what} is incomplete: an interrupted `rocklake {command}` left it; run that command again (it starts over)")]
    Unfinished {
        /// What is incomplete.
        what: String,
        /// The command that left it.
        command: String,
    },
    /// The store location could not be understood.
    #[error("invalid catalog location {location:?}: {reason}")]
    Location {
        /// The location given.
        location: String,
        /// Why it is invalid.
        reason: String,
    },
    /// The catalog keys given do not fit the catalog (see
    /// [`crate::encryption`]).
    #[error("catalog {location}: {reason}")]
    CatalogKey {
        /// The catalog's location.
        location: String,
        /// What does not fit.
        reason: String,
    },
    /// The local commit journal could not be read or written (see
    /// [`crate::journal`]).
    #[error("commit journal: {0}")]
    Journal(String),
    /// Storage did not take a write in time, or reported a fault (see
    /// [`crate::faults`]).
    #[error("could not write to the catalog storage: {fault}")]
    StorageFault {
        /// What storage reported (no paths).
        fault: crate::faults::Fault,
        /// What became of the statement's writes.
        detail: String,
    },
    /// The statement was interrupted (canceled, timed out) while it waited
    /// for storage, before it changed anything.
    #[error("{}", .0.message)]
    Interrupted(Box<rocklake_types::SqlError>),
    /// SlateDB or the object store failed.
    #[error("storage error while {context}: {source}")]
    Storage {
        /// What the store was doing.
        context: String,
        /// The underlying error.
        source: slatedb::Error,
    },
}

impl StoreError {
    /// Wraps a SlateDB error with what the store was doing, turning fencing into
    /// [`StoreError::Fenced`] and transaction conflicts into [`StoreError::Conflict`].
    pub fn storage(context: impl Into<String>, source: slatedb::Error, epoch: u64) -> StoreError {
        let context = context.into();
        match source.kind() {
            slatedb::ErrorKind::Closed(slatedb::CloseReason::Fenced) => {
                StoreError::Fenced { epoch }
            }
            slatedb::ErrorKind::Transaction => StoreError::Conflict { context },
            _ => StoreError::Storage { context, source },
        }
    }
}
