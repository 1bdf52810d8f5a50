//! Execution: running bound plans over the rows of their scans.
//!
//! [`fetch`] reads the scans a statement needs, [`select`] runs queries with
//! [`join`], [`aggregate`] and [`pick`], and expressions are evaluated by
//! [`eval`] with [`cast`], [`operators`], [`functions`] and the ordering of
//! [`compare`].

pub(crate) mod aggregate;
pub(crate) mod cast;
pub(crate) mod compare;
pub(crate) mod eval;
pub(crate) mod fetch;
pub(crate) mod functions;
pub(crate) mod join;
pub(crate) mod operators;
pub(crate) mod pick;
pub(crate) mod scan_data;
pub(crate) mod select;

use crate::catalog::Catalog;

/// Statement context: the transaction's catalog snapshot, NOW() and pid.
pub struct StmtEnv<'a> {
    /// Catalog snapshot.
    pub cat: &'a Catalog,
    /// Transaction timestamp.
    pub now: i64,
    /// Backend pid.
    pub pid: i32,
}
