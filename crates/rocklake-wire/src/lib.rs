//! PostgreSQL wire protocol for RockLake: the server DuckDB's postgres_scanner
//! and every other PostgreSQL client talks to.
//!
//! Entry point: [`server::serve`] with a [`session::SessionFactory`] that opens
//! one [`session::SqlSession`] per connection (the `rocklake` binary's
//! engine adapter plugs RockLake's SQL engine in; this crate knows no engine).
//!
//! Modules, from the socket inwards:
//! - [`server`]: accept loop, session cap, per-connection task;
//! - [`socket`] / [`session_thread`]: the client socket, moved from the
//!   runtime's reactor to the session's own thread once the session starts,
//!   and the executor that thread runs the session with;
//! - [`startup`]: SSL/TLS negotiation, StartupMessage, authentication,
//!   ParameterStatus; [`access`]: which users may use which databases;
//! - [`tls`]: certificates and the plain-or-TLS client stream;
//! - [`scram`]: SCRAM-SHA-256 verifiers and message exchange;
//! - [`transport`]: buffered message I/O over any async stream;
//! - [`frontend`] / [`backend`]: decoding client messages, encoding server ones;
//! - [`connection`]: simple and extended query protocol, COPY in and out,
//!   with `client_sink` encoding results into the output buffer as they come;
//! - [`session`]: the SQL-side contract.
//!
//! Value formats (text and binary values, the COPY codecs) live in
//! `rocklake-types`, shared with the engine.

// `SqlError` (from the shared rocklake-sql contract) is 144 bytes; it is only
// built on cold error paths, so boxing it everywhere would buy nothing.
#![allow(clippy::result_large_err)]
#![warn(missing_docs)]

pub mod access;
pub mod backend;
mod client_sink;
pub mod connection;
pub mod frontend;
pub mod scram;
pub mod server;
pub mod session;
pub mod session_thread;
pub mod socket;
pub mod startup;
pub mod tls;
pub mod transport;

pub use access::AccessRules;
pub use scram::{ScramUsers, ScramVerifier, VerifierLookup};
pub use server::{serve, serve_until, ServerConfig};
pub use session::{SessionFactory, SessionStart, SqlSession};
pub use startup::AuthMethod;
pub use tls::TlsConfig;
