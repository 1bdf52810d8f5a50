//! SQL execution for RockLake: parses the PostgreSQL dialect its clients send
//! and runs it against a [`Storage`].
//!
//! Why a hand-written executor over sqlparser's AST rather than DataFusion:
//! DataFusion cannot execute `UPDATE ... FROM`, has a known wrong-answer bug
//! with `IN (subquery)` in DML, and knows nothing of PostgreSQL's unknown-literal
//! coercion, `ctid`, or catalog OIDs. A bounded binder + executor that rejects
//! what it does not implement with 0A000 is both smaller and more faithful.
//!
//! A statement's path, one module per stage:
//! 1. [`parse`]: SQL text → sqlparser statements (nesting limits, the
//!    PostgreSQL spellings sqlparser lacks, a cache of parsed texts);
//!    [`ident`] holds the identifier rules (folding, truncation, quoting);
//! 2. [`Session`] (`session/`): transaction blocks, savepoints, settings,
//!    prepared statements and statement dispatch; `databases/` and
//!    [`roles`] are the server-wide statements it hands on;
//! 3. `bind/`: names and types → typed plans (`plan/`), resolved against
//!    `catalog/` (the DuckLake tables plus the virtual `pg_catalog` ones)
//!    and, for function calls and operators, the built-in library
//!    (`functions/`: one registry, PostgreSQL's resolution rules);
//! 4. `query/`: a query end to end (bind → shared results → fetch → run),
//!    executed by `exec/` (operators, expressions, functions, memory limits);
//! 5. `write/`: INSERT/UPDATE/DELETE (`write/dml/`), CREATE/DROP and ALTER;
//!    `copy.rs` (COPY in and out) and `maintenance.rs` (VACUUM, CHECKPOINT);
//! 6. [`storage`]: the port storage implements, with [`MemoryStorage`] (the
//!    engine's test double) and [`Database`] (`storage/route.rs`), which
//!    routes a transaction to the home catalog, a schema lake or the
//!    session's temporary tables.

#![warn(missing_docs)]
// `SqlError` is the crate's fixed error contract (shaped like a PostgreSQL
// ErrorResponse); errors are the cold path, so its size is accepted.
#![allow(clippy::result_large_err)]

mod bind;
mod catalog;
mod copy;
pub mod databases;
mod exec;
mod functions;
mod ident;
mod maintenance;
pub mod parse;
mod plan;
mod query;
pub mod roles;
mod session;
pub mod storage;
mod write;

pub use databases::Databases;
pub use query::encoded_results::EncodedResults;
pub use query::shared_results::CatalogResults;
pub use roles::{MemoryRoles, Roles};
pub use session::Session;
pub use storage::memory::MemoryStorage;
pub use storage::route::{Database, SchemaLakes};
pub use storage::{AddedRows, Maintenance, ReadEnd, ReadStamp, Storage, StorageTxn};
