//! The DuckLake catalog on SlateDB: opening a catalog (local directory or S3),
//! snapshot-isolated read and write transactions over its typed tables,
//! counters, writer fencing and the system keys.

pub mod error;
pub mod location;
pub mod reader;
mod registry_version;
pub mod replica;
pub mod retention;
mod row_keys;
mod scan_cache;
pub mod store;
pub mod txn;
mod unique;

pub use error::{StoreError, StoreResult};
pub use location::StoreLocation;
pub use reader::{catalog_relation, StoredRow};
pub use replica::{CatalogReplica, ReplicaOptions};
pub use retention::{ExciseReport, RetainOutcome, RetainSpec};
pub use store::{CatalogStore, StoreOptions, FORMAT_VERSION};
pub use txn::{ReadTxn, WriteTxn};
pub mod sql_storage;
pub use sql_storage::StoreStorage;
