//! The `rocklake` composition root: plugs the SQL engine into the wire
//! server ([`engine`]). The command line itself is the `rocklake` binary.

#![warn(missing_docs)]
#![allow(clippy::result_large_err)]

pub mod engine;
