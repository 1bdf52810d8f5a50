//! SQL execution for RockLake: parses the PostgreSQL dialect DuckDB sends and runs
//! it against a [`storage::Storage`].
//!
//! Why a hand-written executor over sqlparser's AST rather than DataFusion:
//! DataFusion cannot execute `UPDATE ... FROM`, has a known wrong-answer bug
//! with `IN (subquery)` in DML, and knows nothing of PostgreSQL's unknown-literal
//! coercion, `ctid`, or catalog OIDs. The SQL DuckLake sends is a small, fixed
//! set of shapes, so a bounded binder + executor that rejects everything else
//! with 0A000 is both smaller and more faithful.
//!
//! Layout: [`session`] (transactions, statement dispatch) → [`bind`],
//! [`bind_from`], [`bind_expr`], [`bind_func`] (names and types → [`plan`]) →
//! [`select`] / [`expr`] (execution) and [`dml`] / [`ddl`] (writes), with
//! [`pg_catalog`] providing virtual catalog tables, [`value`] / [`numeric`] /
//! [`datetime`] PostgreSQL text I/O, and [`memory`] an in-memory
//! [`storage::Storage`] used as the engine's test double.

#![warn(missing_docs)]
// `SqlError` is the crate's fixed error contract (shaped like a PostgreSQL
// ErrorResponse); errors are the cold path, so its size is accepted.
#![allow(clippy::result_large_err)]

pub mod bind;
pub mod bind_expr;
pub mod bind_from;
pub mod bind_func;
pub mod catalog_results;
pub mod copy_text;
pub mod datetime;
pub mod ddl;
pub mod dml;
pub mod error;
pub mod expr;
pub mod maintenance;
pub mod memory;
pub mod numeric;
pub mod output;
pub mod pg_catalog;
pub mod plan;
pub mod result_rows;
pub mod scan_data;
pub mod select;
pub mod session;
pub mod storage;
pub mod temp;
pub mod value;

pub use memory::MemoryStorage;
pub use session::Session;
