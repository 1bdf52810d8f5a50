//! The PostgreSQL face of RockLake's values, shared by every layer: the SQL
//! engine, the catalog store and the wire server depend on this crate, and it
//! depends on none of them.
//!
//! - [`datum`]: values ([`Datum`]) and their types ([`PgType`]);
//! - [`value`]: PostgreSQL value I/O, one implementation of each format —
//!   text in and out ([`value::text`]), date/time ([`value::datetime`]),
//!   `numeric` ([`value::numeric`]) and the binary form ([`value::binary`]),
//!   used alike by casts, result rows and COPY;
//! - [`copy`]: the text and binary COPY stream codecs;
//! - [`sqlstate`] and [`error`]: every SQLSTATE ([`SqlState`]) and the error
//!   shaped like an ErrorResponse ([`SqlError`]);
//! - [`rows`] and [`output`]: rows passed from storage to the engine, and
//!   where a session sends what its statements produce ([`ResultSink`]);
//! - [`ident`]: PostgreSQL's limits on names (63 bytes, never empty);
//! - [`interrupt`]: how a running statement learns it must stop;
//! - [`params`]: bind parameters of the extended query protocol;
//! - [`roles`]: roles, their memberships and the owners of databases;
//! - [`settings`]: the server's identity and the settings it reports
//!   (ParameterStatus, `SHOW`, `pg_settings`, `current_setting()`).

#![warn(missing_docs)]
// `SqlError` carries every field of a PostgreSQL ErrorResponse; errors are
// the cold path, so its size is accepted.
#![allow(clippy::result_large_err)]

pub mod activity;
pub mod copy;
pub mod datum;
pub mod error;
pub mod ident;
pub mod interrupt;
pub mod notify;
pub mod output;
pub mod params;
pub mod roles;
pub mod rows;
pub mod settings;
pub mod sqlstate;
pub mod value;

pub use datum::{ColumnDef, Datum, PgType, Row};
pub use error::SqlError;
pub use interrupt::{Interrupt, StopReason};
pub use output::{
    BatchResult, CollectSink, Notice, QueryOutput, ResultSink, SinkError, SinkResult, TxStatus,
};
pub use params::{BindParam, Deallocate, Described};
pub use sqlstate::SqlState;
