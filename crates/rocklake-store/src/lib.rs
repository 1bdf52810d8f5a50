//! The DuckLake catalog on SlateDB: opening a catalog (local directory or S3),
//! snapshot-isolated read and write transactions over its typed tables,
//! counters, writer fencing and the system keys; and, in [`engine`], the
//! catalog as the SQL engine's storage.

pub mod auto_retention;
pub mod backup_copy;
pub mod checkpoints;
pub mod encryption;
pub mod engine;
pub mod error;
pub mod faults;
pub mod format;
mod group_flush;
mod inner;
pub mod journal;
mod key_locks;
mod known_values;
pub mod lease;
pub mod location;
mod opening;
pub mod reader;
mod recent_commits;
pub mod replica;
pub mod retention;
pub mod roles;
pub mod root;
mod scan_cache;
pub mod served;
pub mod sharing;
pub mod snapshot_tags;
pub mod store;
pub mod txn;
mod unique;
pub mod upgrade;
pub mod view;

pub use encryption::CatalogKeys;
pub use engine::SqlCatalog;
pub use error::{StoreError, StoreResult};
pub use format::FORMAT_VERSION;
pub use location::StoreLocation;
pub use reader::{catalog_relation, KeyedRow};
pub use replica::{CatalogReplica, LatestReplica, ReplicaOptions};
pub use retention::{ExciseReport, RetainOutcome, RetainSpec};
pub use roles::{DeclaredRoles, ServedRoles, VerifierMaker};
pub use root::{LakeRoot, Work};
pub use served::{DropRefused, Role, ServedDatabase, ServedRoot, SessionGuard};
pub use store::{CatalogStore, StoreOptions};
pub use txn::{ReadTxn, WriteTxn};
pub use view::CatalogView;
