//! The virtual `pg_catalog` tables: each table's columns (PostgreSQL's
//! names and types) beside the rows it derives from the catalog.

use super::wanted::{wanted_row, Wanted};
use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};

use super::indexes::{key_columns, BTREE_AM_OID};
use super::{
    col, default_expression, schema_names, text, type_collation, type_len, type_storage,
    BUILTIN_TYPES, OWNER,
};
use crate::catalog::names::RegKind;
use crate::catalog::{procs, Catalog, PG_CATALOG_OID};
use crate::storage::RelationDef;
use rocklake_types::datum::PgType::{Bool, Char, Float4, Int2, Int4, Name, Oid, RegProc, Text};

pub(super) fn pg_namespace_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("nspname", Name),
        col("nspowner", Oid),
        col("nspacl", PgType::array_of(PgType::AclItem)),
    ]
}

/// The privileges PostgreSQL 15 grants on its own schemas (others have the
/// owner's default privileges: NULL).
fn schema_acl(schema: &str) -> Datum {
    let owner = match schema {
        "pg_catalog" | "information_schema" => "postgres",
        "public" => "pg_database_owner",
        _ => return Datum::Null,
    };
    Datum::array(vec![
        text(&format!("{owner}=UC/{owner}")),
        text(&format!("=U/{owner}")),
    ])
}

pub(super) fn pg_namespace_rows(cat: &Catalog) -> Vec<Row> {
    schema_names(cat)
        .iter()
        .map(|s| {
            // PostgreSQL 15 gives `public` to the pseudo-role
            // pg_database_owner; other schemas belong to their creator.
            let owner = match s.as_str() {
                "public" => Datum::Oid(crate::catalog::DATABASE_OWNER_OID),
                _ => OWNER,
            };
            vec![
                Datum::Oid(Catalog::schema_oid(s)),
                text(s),
                owner,
                schema_acl(s),
            ]
        })
        .collect()
}

/// `pg_am.oid` of `heap`, every table's access method.
const HEAP_AM_OID: u32 = 2;

pub(super) fn pg_class_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("relname", Name),
        col("relnamespace", Oid),
        col("reltype", Oid),
        col("relowner", Oid),
        col("relpages", Int4),
        col("reltuples", Float4),
        col("relhasindex", Bool),
        col("relpersistence", Char),
        col("relkind", Char),
        col("relnatts", Int2),
        col("relam", Oid),
        col("relchecks", Int2),
        col("relhasrules", Bool),
        col("relhastriggers", Bool),
        col("relrowsecurity", Bool),
        col("relforcerowsecurity", Bool),
        col("relispartition", Bool),
        col("reltablespace", Oid),
        col("reloftype", Oid),
        col("relreplident", Char),
        col("reltoastrelid", Oid),
        // pg_node_tree in PostgreSQL; never set here.
        col("relpartbound", Text),
        col("reloptions", PgType::array_of(Text)),
        col("relacl", PgType::array_of(PgType::AclItem)),
    ]
}

/// Tables (`relkind` `r`), and the index (`i`) of each primary key.
pub(super) fn pg_class_rows(cat: &Catalog, wanted: Wanted<'_>) -> Vec<Row> {
    let mut rows = Vec::new();
    for r in cat.relations.iter() {
        class_rows_of(r, wanted, &mut rows);
    }
    rows
}

/// The `pg_class` rows of one stored relation: the table, then its primary
/// key's index.
pub(super) fn class_rows_of(r: &RelationDef, wanted: Wanted<'_>, rows: &mut Vec<Row>) {
    let has_key = !r.primary_key.is_empty();
    rows.push(class_row(
        wanted,
        ClassRow {
            oid: Catalog::rel_oid(r),
            name: &r.name,
            schema: &r.schema,
            rowtype: Catalog::rowtype_oid(r),
            has_index: has_key,
            kind: "r",
            attributes: r.columns.len(),
            access_method: HEAP_AM_OID,
        },
    ));
    if has_key {
        rows.push(class_row(
            wanted,
            ClassRow {
                oid: Catalog::pkey_index_oid(r),
                name: &r.primary_key_name(),
                schema: &r.schema,
                rowtype: 0,
                has_index: false,
                kind: "i",
                attributes: r.primary_key.len(),
                access_method: BTREE_AM_OID,
            },
        ));
    }
}

/// What differs between `pg_class` rows here.
struct ClassRow<'a> {
    oid: u32,
    name: &'a str,
    schema: &'a str,
    rowtype: u32,
    has_index: bool,
    kind: &'static str,
    attributes: usize,
    access_method: u32,
}

/// A `pg_class` row: no checks, rules, triggers, row security, partitions,
/// tablespace, type or TOAST table.
fn class_row(wanted: Wanted<'_>, row: ClassRow<'_>) -> Row {
    wanted_row![wanted;
        Datum::Oid(row.oid),
        text(row.name),
        Datum::Oid(Catalog::schema_oid(row.schema)),
        Datum::Oid(row.rowtype),
        OWNER,
        Datum::Int4(0),
        Datum::Float4(-1.0),
        Datum::Bool(row.has_index),
        text("p"),
        text(row.kind),
        Datum::Int2(row.attributes as i16),
        Datum::Oid(row.access_method),
        Datum::Int2(0),
        Datum::Bool(false),
        Datum::Bool(false),
        Datum::Bool(false),
        Datum::Bool(false),
        Datum::Bool(false),
        Datum::Oid(0),
        Datum::Oid(0),
        text("d"),
        Datum::Oid(0),
        Datum::Null,
        Datum::Null,
        Datum::Null,
    ]
}

pub(super) fn pg_attribute_columns() -> Vec<ColumnDef> {
    vec![
        col("attrelid", Oid),
        col("attname", Name),
        col("atttypid", Oid),
        col("attlen", Int2),
        col("attnum", Int2),
        col("attndims", Int4),
        col("atttypmod", Int4),
        col("attnotnull", Bool),
        col("atthasdef", Bool),
        col("attisdropped", Bool),
        col("attcollation", Oid),
        col("attidentity", Char),
        col("attgenerated", Char),
        col("attstorage", Char),
        col("attcompression", Char),
        col("attstattarget", Int4),
        col("attacl", PgType::array_of(PgType::AclItem)),
    ]
}

/// What differs between `pg_attribute` rows here.
struct AttributeRow<'a> {
    relation: u32,
    name: &'a str,
    pg_type: &'a PgType,
    number: i16,
    not_null: bool,
    has_default: bool,
    stats_target: i32,
}

/// A `pg_attribute` row: never dropped, no identity, not generated, no ACL.
fn attribute_row(wanted: Wanted<'_>, a: AttributeRow<'_>) -> Row {
    wanted_row![wanted;
        Datum::Oid(a.relation),
        text(a.name),
        Datum::Oid(a.pg_type.oid()),
        Datum::Int2(type_len(a.pg_type)),
        Datum::Int2(a.number),
        Datum::Int4(i32::from(matches!(a.pg_type, PgType::Array(_)))),
        Datum::Int4(a.pg_type.type_modifier()),
        Datum::Bool(a.not_null),
        Datum::Bool(a.has_default),
        Datum::Bool(false),
        Datum::Oid(type_collation(a.pg_type)),
        text(""),
        text(""),
        text(type_storage(a.pg_type)),
        text(""),
        Datum::Int4(a.stats_target),
        Datum::Null,
    ]
}

/// Each table's columns (and its `ctid`), and each primary-key index's.
pub(super) fn pg_attribute_rows(cat: &Catalog, wanted: Wanted<'_>) -> Vec<Row> {
    let mut out = Vec::new();
    for r in cat.relations.iter() {
        attribute_rows_of(r, wanted, &mut out);
    }
    out
}

/// The `pg_attribute` rows of one stored relation: its `ctid`, its columns,
/// then its primary key's index columns.
pub(super) fn attribute_rows_of(r: &RelationDef, wanted: Wanted<'_>, out: &mut Vec<Row>) {
    let relation = Catalog::rel_oid(r);
    out.push(attribute_row(
        wanted,
        AttributeRow {
            relation,
            name: "ctid",
            pg_type: &PgType::Tid,
            number: -1,
            not_null: true,
            has_default: false,
            stats_target: 0,
        },
    ));
    for (i, c) in r.columns.iter().enumerate() {
        out.push(attribute_row(
            wanted,
            AttributeRow {
                relation,
                name: &c.name,
                pg_type: &c.pg_type,
                number: i as i16 + 1,
                not_null: c.not_null || r.primary_key.contains(&i),
                has_default: c.default.is_some(),
                stats_target: -1,
            },
        ));
    }
    for (k, &i) in r.primary_key.iter().enumerate() {
        let c = &r.columns[i];
        out.push(attribute_row(
            wanted,
            AttributeRow {
                relation: Catalog::pkey_index_oid(r),
                name: &c.name,
                pg_type: &c.pg_type,
                number: k as i16 + 1,
                not_null: false,
                has_default: false,
                stats_target: -1,
            },
        ));
    }
}

pub(super) fn pg_type_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("typname", Name),
        col("typnamespace", Oid),
        col("typowner", Oid),
        col("typlen", Int2),
        col("typtype", Char),
        col("typrelid", Oid),
        col("typelem", Oid),
        col("typarray", Oid),
        col("typinput", RegProc),
        col("typoutput", RegProc),
        col("typreceive", RegProc),
        col("typsend", RegProc),
        col("typbasetype", Oid),
        col("typtypmod", Int4),
        col("typnotnull", Bool),
        col("typdelim", Char),
        col("typcollation", Oid),
        col("typdefault", Text),
    ]
}

pub(super) fn pg_type_rows(cat: &Catalog, wanted: Wanted<'_>) -> Vec<Row> {
    let mut out = builtin_type_rows(cat, wanted, |_| true);
    for r in cat.relations.iter() {
        out.push(row_type_row(cat, wanted, r));
    }
    out
}

/// The `pg_type` rows of the built-in types (and their array types) whose
/// oid `wanted` accepts.
pub(super) fn builtin_type_rows(
    cat: &Catalog,
    columns: Wanted<'_>,
    wanted: impl Fn(u32) -> bool,
) -> Vec<Row> {
    let arrays = BUILTIN_TYPES
        .iter()
        .filter(|t| t.array_oid() != 0)
        .map(|t| PgType::array_of(t.clone()));
    BUILTIN_TYPES
        .iter()
        .cloned()
        .chain(arrays)
        .filter(|t| wanted(t.oid()))
        .map(|t| {
            type_row(
                cat,
                columns,
                TypeRow {
                    oid: t.oid(),
                    name: t.type_name(),
                    namespace: PG_CATALOG_OID,
                    len: type_len(&t),
                    kind: "b",
                    relation: 0,
                    element: t.element_type().map_or(0, |e| e.oid()),
                    array: t.array_oid(),
                    io: procs::io_functions(&t),
                    collation: type_collation(&t),
                },
            )
        })
        .collect()
}

/// The `pg_type` row of a stored relation's row type.
pub(super) fn row_type_row(cat: &Catalog, wanted: Wanted<'_>, r: &RelationDef) -> Row {
    type_row(
        cat,
        wanted,
        TypeRow {
            oid: Catalog::rowtype_oid(r),
            name: &r.name,
            namespace: Catalog::schema_oid(&r.schema),
            len: -1,
            kind: "c",
            relation: Catalog::rel_oid(r),
            element: 0,
            array: 0,
            io: procs::RECORD_IO,
            collation: 0,
        },
    )
}

/// What differs between `pg_type` rows here.
struct TypeRow<'a> {
    oid: u32,
    name: &'a str,
    namespace: u32,
    len: i16,
    kind: &'static str,
    relation: u32,
    element: u32,
    array: u32,
    io: [procs::Proc; 4],
    collation: u32,
}

fn type_row(cat: &Catalog, wanted: Wanted<'_>, t: TypeRow<'_>) -> Row {
    let io = |i: usize| cat.reg_from_oid(RegKind::Proc, t.io[i].0);
    wanted_row![wanted;
        Datum::Oid(t.oid),
        text(t.name),
        Datum::Oid(t.namespace),
        OWNER,
        Datum::Int2(t.len),
        text(t.kind),
        Datum::Oid(t.relation),
        Datum::Oid(t.element),
        Datum::Oid(t.array),
        io(0),
        io(1),
        io(2),
        io(3),
        Datum::Oid(0),
        Datum::Int4(-1),
        Datum::Bool(false),
        text(","),
        Datum::Oid(t.collation),
        Datum::Null,
    ]
}

pub(super) fn pg_constraint_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("conname", Name),
        col("connamespace", Oid),
        col("contype", Char),
        col("conrelid", Oid),
        col("conindid", Oid),
        col("conkey", PgType::array_of(Int2)),
        col("condeferrable", Bool),
        col("condeferred", Bool),
        col("convalidated", Bool),
        col("contypid", Oid),
        col("conparentid", Oid),
        col("confrelid", Oid),
        col("confkey", PgType::array_of(Int2)),
        col("conislocal", Bool),
        col("coninhcount", Int2),
        col("connoinherit", Bool),
        col("confupdtype", Char),
        col("confdeltype", Char),
        col("confmatchtype", Char),
    ]
}

pub(super) fn pg_constraint_rows(cat: &Catalog) -> Vec<Row> {
    cat.relations
        .iter()
        .filter_map(|r| constraint_row_of(r))
        .collect()
}

/// The `pg_constraint` row of a stored relation's primary key, if it has one.
pub(super) fn constraint_row_of(r: &RelationDef) -> Option<Row> {
    if r.primary_key.is_empty() {
        return None;
    }
    Some(vec![
        Datum::Oid(Catalog::pkey_oid(r)),
        text(&r.primary_key_name()),
        Datum::Oid(Catalog::schema_oid(&r.schema)),
        text("p"),
        Datum::Oid(Catalog::rel_oid(r)),
        Datum::Oid(Catalog::pkey_index_oid(r)),
        key_columns(r, Datum::array),
        Datum::Bool(false),
        Datum::Bool(false),
        Datum::Bool(true),
        Datum::Oid(0),
        Datum::Oid(0),
        Datum::Oid(0),
        Datum::Null,
        Datum::Bool(true),
        Datum::Int2(0),
        Datum::Bool(true),
        // Foreign-key actions and match type: blank for a primary key.
        text(" "),
        text(" "),
        text(" "),
    ])
}

pub(super) fn pg_enum_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("enumtypid", Oid),
        col("enumsortorder", Float4),
        col("enumlabel", Name),
    ]
}

pub(super) fn pg_enum_rows(_: &Catalog) -> Vec<Row> {
    Vec::new()
}

pub(super) fn pg_description_columns() -> Vec<ColumnDef> {
    vec![
        col("objoid", Oid),
        col("classoid", Oid),
        col("objsubid", Int4),
        col("description", Text),
    ]
}

/// PostgreSQL 15's comment on `public`; RockLake keeps no comments of its
/// own on catalog objects (DuckLake keeps its tables' comments in its tables).
pub(super) fn pg_description_rows(_: &Catalog) -> Vec<Row> {
    vec![vec![
        Datum::Oid(crate::catalog::PUBLIC_OID),
        Datum::Oid(super::VirtualTable::Namespace.oid()),
        Datum::Int4(0),
        text("standard public schema"),
    ]]
}

pub(super) fn pg_settings_columns() -> Vec<ColumnDef> {
    vec![
        col("name", Text),
        col("setting", Text),
        col("unit", Text),
        col("vartype", Text),
    ]
}

pub(super) fn pg_settings_rows(cat: &Catalog) -> Vec<Row> {
    cat.settings
        .iter()
        .map(|(n, v)| {
            let (vartype, unit) = rocklake_types::settings::find(n)
                .map_or(("string", None), |s| s.kind.vartype_and_unit());
            vec![
                text(n),
                text(v),
                unit.map_or(Datum::Null, text),
                text(vartype),
            ]
        })
        .collect()
}

pub(super) fn pg_database_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("datname", Name),
        col("datdba", Oid),
        col("encoding", Int4),
        col("datlocprovider", Char),
        col("datistemplate", Bool),
        col("datallowconn", Bool),
        col("datcollate", Text),
        col("datctype", Text),
        col("daticulocale", Text),
        // aclitem[] in PostgreSQL; NULL (default privileges) here.
        col("datacl", PgType::array_of(PgType::AclItem)),
        col("dattablespace", Oid),
    ]
}

/// `pg_tablespace.oid` of `pg_default`, where every database lives.
const DEFAULT_TABLESPACE_OID: u32 = 1663;

pub(super) fn pg_tablespace_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("spcname", Name),
        col("spcowner", Oid),
        col("spcacl", PgType::array_of(PgType::AclItem)),
        col("spcoptions", PgType::array_of(Text)),
    ]
}

pub(super) fn pg_tablespace_rows(_: &Catalog) -> Vec<Row> {
    [(DEFAULT_TABLESPACE_OID, "pg_default"), (1664, "pg_global")]
        .into_iter()
        .map(|(oid, name)| vec![Datum::Oid(oid), text(name), OWNER, Datum::Null, Datum::Null])
        .collect()
}

pub(super) fn pg_database_rows(cat: &Catalog) -> Vec<Row> {
    cat.databases
        .iter()
        .map(|name| {
            let owner = cat.roles.catalog.owner_of(name);
            let owner = crate::catalog::role_oid(cat, owner).unwrap_or(crate::catalog::OWNER_OID);
            vec![
                Datum::Oid(Catalog::database_oid(name)),
                text(name),
                Datum::Oid(owner),
                Datum::Int4(rocklake_types::settings::UTF8_ENCODING),
                text("c"),
                Datum::Bool(false),
                Datum::Bool(true),
                text("C.UTF-8"),
                text("C.UTF-8"),
                Datum::Null,
                Datum::Null,
                Datum::Oid(DEFAULT_TABLESPACE_OID),
            ]
        })
        .collect()
}

/// The access methods PostgreSQL 15 has (`amtype` `t`: table, `i`: index).
pub(super) fn pg_am_columns() -> Vec<ColumnDef> {
    vec![col("oid", Oid), col("amname", Name), col("amtype", Char)]
}

pub(super) fn pg_am_rows(_: &Catalog) -> Vec<Row> {
    [
        (2, "heap", "t"),
        (403, "btree", "i"),
        (405, "hash", "i"),
        (783, "gist", "i"),
        (2742, "gin", "i"),
        (4000, "spgist", "i"),
        (3580, "brin", "i"),
    ]
    .into_iter()
    .map(|(oid, name, kind)| vec![Datum::Oid(oid), text(name), text(kind)])
    .collect()
}

/// Column defaults: `adbin` holds the expression as `pg_get_expr` shows
/// it (RockLake keeps constants only).
pub(super) fn pg_attrdef_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("adrelid", Oid),
        col("adnum", Int2),
        // pg_node_tree in PostgreSQL.
        col("adbin", Text),
    ]
}

pub(super) fn pg_attrdef_rows(cat: &Catalog) -> Vec<Row> {
    let mut out = Vec::new();
    for r in cat.relations.iter() {
        for (i, c) in r.columns.iter().enumerate() {
            let Some(default) = &c.default else { continue };
            out.push(vec![
                Datum::Oid(crate::catalog::stable_oid(
                    "attrdef",
                    &format!("{}.{}.{}", r.schema, r.name, c.name),
                )),
                Datum::Oid(Catalog::rel_oid(r)),
                Datum::Int2(i as i16 + 1),
                text(&default_expression(default, &c.pg_type)),
            ]);
        }
    }
    out
}

/// The collations every PostgreSQL 15 database has.
pub(super) fn pg_collation_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("collname", Name),
        col("collnamespace", Oid),
        col("collprovider", Char),
    ]
}

pub(super) fn pg_collation_rows(_: &Catalog) -> Vec<Row> {
    [(100, "default", "d"), (950, "C", "c"), (951, "POSIX", "c")]
        .into_iter()
        .map(|(oid, name, provider)| {
            vec![
                Datum::Oid(oid),
                text(name),
                Datum::Oid(PG_CATALOG_OID),
                text(provider),
            ]
        })
        .collect()
}

/// Sequences: none (DuckLake's catalog tables have no serial columns).
pub(super) fn pg_sequence_columns() -> Vec<ColumnDef> {
    vec![
        col("seqrelid", Oid),
        col("seqtypid", Oid),
        col("seqstart", PgType::Int8),
        col("seqincrement", PgType::Int8),
        col("seqmax", PgType::Int8),
        col("seqmin", PgType::Int8),
        col("seqcache", PgType::Int8),
        col("seqcycle", Bool),
    ]
}

pub(super) fn pg_sequence_rows(_: &Catalog) -> Vec<Row> {
    Vec::new()
}
