//! Catalogs of PostgreSQL features a DuckLake catalog has no use for (row
//! security policies, publications, extended statistics, inheritance, role
//! memberships, user-defined functions): PostgreSQL's columns and no rows, so
//! that clients that look (psql's `\d`, reflection code) find nothing rather
//! than an error.

use rocklake_types::datum::PgType::{Bool, Char, Int4, Name, Oid, Text};
use rocklake_types::datum::{ColumnDef, PgType, Row};

use super::col;
use crate::catalog::Catalog;

/// The rows of every table here.
pub(super) fn no_rows(_: &Catalog) -> Vec<Row> {
    Vec::new()
}

/// Functions: none are listed (the engine's functions are built in and not
/// catalogued), so psql's `\df` finds no user functions, as on a fresh
/// PostgreSQL database.
pub(super) fn pg_proc_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("proname", Name),
        col("pronamespace", Oid),
        col("proowner", Oid),
        col("prolang", Oid),
        col("prokind", Char),
        col("prosecdef", Bool),
        col("proretset", Bool),
        col("provolatile", Char),
        col("pronargs", rocklake_types::datum::PgType::Int2),
        col("prorettype", Oid),
        col("proargtypes", PgType::OidVector),
        col("proallargtypes", PgType::array_of(Oid)),
        col("proargmodes", PgType::array_of(Char)),
        col("proargnames", PgType::array_of(Text)),
        col("prosrc", Text),
        col("proacl", PgType::array_of(PgType::AclItem)),
    ]
}

pub(super) fn pg_policy_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("polname", Name),
        col("polrelid", Oid),
        col("polcmd", Char),
        col("polpermissive", Bool),
        col("polroles", PgType::array_of(Oid)),
        // pg_node_tree in PostgreSQL.
        col("polqual", Text),
        col("polwithcheck", Text),
    ]
}

pub(super) fn pg_statistic_ext_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("stxrelid", Oid),
        col("stxname", Name),
        col("stxnamespace", Oid),
        col("stxowner", Oid),
        col("stxstattarget", Int4),
        col("stxkeys", PgType::Int2Vector),
        col("stxkind", PgType::array_of(Char)),
        col("stxexprs", Text),
    ]
}

pub(super) fn pg_publication_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("pubname", Name),
        col("pubowner", Oid),
        col("puballtables", Bool),
        col("pubinsert", Bool),
        col("pubupdate", Bool),
        col("pubdelete", Bool),
        col("pubtruncate", Bool),
        col("pubviaroot", Bool),
    ]
}

pub(super) fn pg_publication_namespace_columns() -> Vec<ColumnDef> {
    vec![col("oid", Oid), col("pnpubid", Oid), col("pnnspid", Oid)]
}

pub(super) fn pg_publication_rel_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("prpubid", Oid),
        col("prrelid", Oid),
        col("prqual", Text),
        col("prattrs", PgType::Int2Vector),
    ]
}

/// Range types: none.
pub(super) fn pg_range_columns() -> Vec<ColumnDef> {
    vec![
        col("rngtypid", Oid),
        col("rngsubtype", Oid),
        col("rngmultitypid", Oid),
        col("rngcollation", Oid),
        col("rngsubopc", Oid),
    ]
}

pub(super) fn pg_inherits_columns() -> Vec<ColumnDef> {
    vec![
        col("inhrelid", Oid),
        col("inhparent", Oid),
        col("inhseqno", Int4),
        col("inhdetachpending", Bool),
    ]
}
