//! The indexes: `pg_index` and `pg_indexes` (one unique btree index per
//! primary key, as PostgreSQL creates it) and the operator classes they use
//! (`pg_opclass`).

use rocklake_types::datum::PgType::{Bool, Int2, Name, Oid, Text};
use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};

use super::{col, text, OWNER};
use crate::catalog::{Catalog, PG_CATALOG_OID};
use crate::storage::RelationDef;

/// `pg_am.oid` of `btree`, the access method of every primary-key index.
pub(super) const BTREE_AM_OID: u32 = 403;

/// PostgreSQL 15's default btree operator classes: (oid, name, input type,
/// family).
const BTREE_OPCLASSES: &[(u32, &str, PgType, u32)] = &[
    (10003, "bool_ops", PgType::Bool, 424),
    (10006, "bytea_ops", PgType::Bytea, 428),
    (10007, "char_ops", PgType::Char, 429),
    (10028, "name_ops", PgType::Name, 1994),
    (3124, "int8_ops", PgType::Int8, 1976),
    (1979, "int2_ops", PgType::Int2, 1976),
    (1978, "int4_ops", PgType::Int4, 1976),
    (3126, "text_ops", PgType::Text, 1994),
    (1981, "oid_ops", PgType::Oid, 1989),
    (10050, "tid_ops", PgType::Tid, 2789),
    (10012, "float4_ops", PgType::Float4, 1970),
    (3123, "float8_ops", PgType::Float8, 1970),
    (3122, "date_ops", PgType::Date, 434),
    (10038, "time_ops", PgType::Time, 1996),
    (3128, "timestamp_ops", PgType::Timestamp, 434),
    (3127, "timestamptz_ops", PgType::TimestampTz, 434),
    (10022, "interval_ops", PgType::Interval, 1982),
    (10041, "timetz_ops", PgType::TimeTz, 2000),
    (3125, "numeric_ops", PgType::Numeric(None), 1988),
    (10065, "uuid_ops", PgType::Uuid, 2968),
];

/// The default btree operator class of a key column's type (`varchar`
/// uses `text_ops`, as in PostgreSQL); 0 for a type without one.
fn default_opclass(t: &PgType) -> u32 {
    let t = match t {
        PgType::Varchar => &PgType::Text,
        PgType::Numeric(_) => &PgType::Numeric(None),
        other => other,
    };
    BTREE_OPCLASSES
        .iter()
        .find(|(_, _, input, _)| input == t)
        .map_or(0, |(oid, ..)| *oid)
}

fn vector(items: Vec<Datum>) -> Datum {
    Datum::Vector(items.into())
}

/// The types of a relation's primary-key columns, in key order.
fn key_types(r: &RelationDef) -> impl Iterator<Item = &PgType> {
    r.primary_key.iter().map(|&i| &r.columns[i].pg_type)
}

pub(super) fn pg_opclass_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("opcmethod", Oid),
        col("opcname", Name),
        col("opcnamespace", Oid),
        col("opcowner", Oid),
        col("opcfamily", Oid),
        col("opcintype", Oid),
        col("opcdefault", Bool),
        col("opckeytype", Oid),
    ]
}

pub(super) fn pg_opclass_rows(_: &Catalog) -> Vec<Row> {
    BTREE_OPCLASSES
        .iter()
        .map(|(oid, name, input, family)| {
            vec![
                Datum::Oid(*oid),
                Datum::Oid(BTREE_AM_OID),
                text(name),
                Datum::Oid(PG_CATALOG_OID),
                OWNER,
                Datum::Oid(*family),
                Datum::Oid(input.oid()),
                Datum::Bool(true),
                Datum::Oid(0),
            ]
        })
        .collect()
}

pub(super) fn pg_indexes_columns() -> Vec<ColumnDef> {
    vec![
        col("schemaname", Name),
        col("tablename", Name),
        col("indexname", Name),
        col("tablespace", Name),
        col("indexdef", Text),
    ]
}

pub(super) fn pg_indexes_rows(cat: &Catalog) -> Vec<Row> {
    cat.relations
        .iter()
        .filter(|r| !r.primary_key.is_empty())
        .map(|r| {
            vec![
                text(&r.schema),
                text(&r.name),
                text(&r.primary_key_name()),
                Datum::Null,
                text(&Catalog::primary_key_index_def(
                    r,
                    &format!("{}.{}", r.schema, r.name),
                )),
            ]
        })
        .collect()
}

/// The index of each primary key.
pub(super) fn pg_index_columns() -> Vec<ColumnDef> {
    vec![
        col("indexrelid", Oid),
        col("indrelid", Oid),
        col("indnatts", Int2),
        col("indnkeyatts", Int2),
        col("indisunique", Bool),
        col("indisprimary", Bool),
        col("indisexclusion", Bool),
        col("indimmediate", Bool),
        col("indisclustered", Bool),
        col("indisvalid", Bool),
        col("indisready", Bool),
        col("indislive", Bool),
        col("indisreplident", Bool),
        col("indkey", PgType::Int2Vector),
        col("indnullsnotdistinct", Bool),
        col("indcollation", PgType::OidVector),
        col("indclass", PgType::OidVector),
        col("indoption", PgType::Int2Vector),
        // pg_node_tree in PostgreSQL: no expression or partial indexes here.
        col("indexprs", Text),
        col("indpred", Text),
    ]
}

pub(super) fn pg_index_rows(cat: &Catalog) -> Vec<Row> {
    cat.relations
        .iter()
        .filter(|r| !r.primary_key.is_empty())
        .map(|r| {
            let keys = r.primary_key.len() as i16;
            vec![
                Datum::Oid(Catalog::pkey_index_oid(r)),
                Datum::Oid(Catalog::rel_oid(r)),
                Datum::Int2(keys),
                Datum::Int2(keys),
                Datum::Bool(true),
                Datum::Bool(true),
                Datum::Bool(false),
                Datum::Bool(true),
                Datum::Bool(false),
                Datum::Bool(true),
                Datum::Bool(true),
                Datum::Bool(true),
                Datum::Bool(false),
                key_columns(r, vector),
                Datum::Bool(false),
                vector(
                    key_types(r)
                        .map(|t| Datum::Oid(super::type_collation(t)))
                        .collect(),
                ),
                vector(
                    key_types(r)
                        .map(|t| Datum::Oid(default_opclass(t)))
                        .collect(),
                ),
                vector(key_types(r).map(|_| Datum::Int2(0)).collect()),
                Datum::Null,
                Datum::Null,
            ]
        })
        .collect()
}

/// The primary key's column numbers (`conkey`, `indkey`), as `wrap` holds them.
pub(super) fn key_columns(r: &RelationDef, wrap: impl Fn(Vec<Datum>) -> Datum) -> Datum {
    wrap(
        r.primary_key
            .iter()
            .map(|&i| Datum::Int2(i as i16 + 1))
            .collect(),
    )
}
