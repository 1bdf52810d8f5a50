//! SQL execution for RockLake: parses the PostgreSQL dialect its clients send
//! and runs it against a [`Storage`].
//!
//! Why a hand-written executor over sqlparser's AST rather than DataFusion:
//! DataFusion cannot execute `UPDATE ... FROM`, has a known wrong-answer bug
//! with `IN (subquery)` in DML, and knows nothing of PostgreSQL's unknown-literal
//! coercion, `ctid`, or catalog OIDs. A bounded binder + executor that rejects
//! what it does not implement with 0A000 is both smaller and more faithful.
//!
//! The pipeline, one folder per stage:
//! - [`Session`] (`session.rs`): transaction blocks and statement dispatch,
//!   with `settings.rs` (SET/RESET/SHOW), `copy.rs`, `maintenance.rs` and
//!   `databases.rs` (CREATE/DROP DATABASE);
//! - `bind/`: names and types → typed plans (`plan.rs`); `catalog/` is what
//!   names resolve against, including the virtual `pg_catalog` tables;
//! - `query/`: a query end to end (bind → shared results → fetch → run);
//! - `exec/`: execution of plans and expressions;
//! - `dml.rs` / `ddl.rs`: writes;
//! - [`storage`]: the port storage implements, with [`MemoryStorage`] (the
//!   engine's test double), the session's temporary tables and schema lakes
//!   (`storage/lakes.rs`).

#![warn(missing_docs)]
// `SqlError` is the crate's fixed error contract (shaped like a PostgreSQL
// ErrorResponse); errors are the cold path, so its size is accepted.
#![allow(clippy::result_large_err)]

mod alter;
mod bind;
mod catalog;
mod copy;
pub mod databases;
mod ddl;
pub mod depth;
mod dml;
mod exec;
mod ident;
mod maintenance;
mod params;
mod parse_cache;
mod plan;
mod prepare;
mod query;
pub mod roles;
mod savepoints;
mod session;
mod settings;
pub mod storage;
mod transaction;
mod writes;

pub use databases::Databases;
pub use query::shared_results::CatalogResults;
pub use roles::{MemoryRoles, Roles};
pub use session::Session;
pub use settings::{format_milliseconds, parse_duration};
pub use storage::lakes::{LakeStorage, SchemaLakes};
pub use storage::memory::MemoryStorage;
pub use storage::{Maintenance, Storage, StorageTxn};
