//! Bind parameters of the extended query protocol, as the wire server hands
//! them to a session, and what a session says about a prepared statement.

use crate::datum::ColumnDef;

/// OID of PostgreSQL's `unknown` pseudo-type: a parameter Parse declares
/// `unknown` is one whose type is not given.
pub const UNKNOWN_OID: u32 = 705;

/// One parameter value of a Bind message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindParam {
    /// The parameter's type: as Parse declared it, else as the statement's
    /// description inferred it; 0 when neither knows (the value is then an
    /// untyped literal, resolved by its context as PostgreSQL resolves
    /// `'...'`).
    pub type_oid: u32,
    /// Whether the value is in binary format (else text).
    pub binary: bool,
    /// The value's bytes; `None` for NULL.
    pub value: Option<Vec<u8>>,
}

/// A prepared statement `DEALLOCATE` drops: prepared statements live in the
/// connection (the wire server), so the session hands these over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deallocate {
    /// `DEALLOCATE ALL`.
    All,
    /// `DEALLOCATE name`.
    Named(String),
}

/// What Parse + Describe learn of a statement.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Described {
    /// The type OID of each parameter `$1..$n`: declared by Parse, else
    /// inferred from where the parameter is used (0: unknown, sent as `text`).
    pub params: Vec<u32>,
    /// Result columns (empty for statements without a result set).
    pub columns: Vec<ColumnDef>,
    /// Notices parsing the statement gave (sent before ParseComplete).
    pub notices: Vec<crate::output::Notice>,
}
