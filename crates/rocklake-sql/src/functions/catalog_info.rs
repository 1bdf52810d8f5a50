//! System catalog information functions (PostgreSQL's "System Catalog
//! Information Functions" and "Schema Visibility Inquiry Functions"):
//! `to_regclass`, `to_regtype`, `format_type`, `pg_get_userbyid`,
//! `pg_table_is_visible`, `pg_type_is_visible` and the other
//! `pg_*_is_visible`. They read the statement's
//! catalog snapshot.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::SqlError;

use super::def::types::*;
use super::def::Library;
use crate::catalog::{RegKind, VirtualTable};
use crate::plan::{CallEnv, CallInfo};

/// Registers the catalog information functions.
pub(super) fn register(lib: &mut Library) {
    lib.function("to_regclass", [TEXT], PgType::RegClass, to_regclass)
        .stable();
    lib.function("to_regtype", [TEXT], PgType::RegType, to_regtype)
        .stable();
    lib.function("format_type", [PgType::Oid, INT4], TEXT, format_type)
        .stable()
        .not_strict();
    lib.function("pg_get_userbyid", [PgType::Oid], PgType::Name, user_by_id)
        .stable();
    lib.function("pg_table_is_visible", [PgType::Oid], BOOL, table_is_visible)
        .stable();
    lib.function("pg_type_is_visible", [PgType::Oid], BOOL, type_is_visible)
        .stable();
    for (name, check) in VISIBILITY_FUNCTIONS {
        lib.function(name, [PgType::Oid], BOOL, check).stable();
    }
}

/// A `pg_*_is_visible` function.
type VisibilityCheck = fn(&[Datum], &CallInfo, &CallEnv) -> Result<Datum, SqlError>;

/// The other `pg_*_is_visible` functions, each over the virtual catalog
/// holding its objects. Every object this server has lives in
/// `pg_catalog`, which is always on the search path, so an object is
/// visible exactly when it exists; an oid naming nothing answers NULL, as
/// in PostgreSQL. Catalogs the server has no rows in (operators,
/// conversions, text search) answer NULL for every oid.
const VISIBILITY_FUNCTIONS: [(&str, VisibilityCheck); 11] = [
    ("pg_collation_is_visible", object_is_visible::<COLLATION>),
    ("pg_function_is_visible", object_is_visible::<PROC>),
    ("pg_opclass_is_visible", object_is_visible::<OPCLASS>),
    (
        "pg_statistics_obj_is_visible",
        object_is_visible::<STATISTIC_EXT>,
    ),
    ("pg_conversion_is_visible", object_is_visible::<NONE>),
    ("pg_operator_is_visible", object_is_visible::<NONE>),
    ("pg_opfamily_is_visible", object_is_visible::<NONE>),
    ("pg_ts_config_is_visible", object_is_visible::<NONE>),
    ("pg_ts_dict_is_visible", object_is_visible::<NONE>),
    ("pg_ts_parser_is_visible", object_is_visible::<NONE>),
    ("pg_ts_template_is_visible", object_is_visible::<NONE>),
];

const NONE: u8 = 0;
const COLLATION: u8 = 1;
const PROC: u8 = 2;
const OPCLASS: u8 = 3;
const STATISTIC_EXT: u8 = 4;

/// `pg_<kind>_is_visible(oid)` over the virtual catalog `TABLE` names.
fn object_is_visible<const TABLE: u8>(
    a: &[Datum],
    _: &CallInfo,
    env: &CallEnv,
) -> Result<Datum, SqlError> {
    let table = match TABLE {
        COLLATION => VirtualTable::Collation,
        PROC => VirtualTable::Proc,
        OPCLASS => VirtualTable::Opclass,
        STATISTIC_EXT => VirtualTable::StatisticExt,
        _ => return Ok(Datum::Null),
    };
    let Some(wanted) = oid(&a[0]) else {
        return Ok(Datum::Null);
    };
    let exists = table
        .rows(env.catalog)
        .iter()
        .any(|row| row.first().and_then(oid) == Some(wanted));
    Ok(if exists {
        Datum::Bool(true)
    } else {
        Datum::Null
    })
}

fn oid(d: &Datum) -> Option<u32> {
    d.as_i64().and_then(|v| u32::try_from(v).ok())
}

fn to_regclass(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    let name = a[0].as_str().unwrap_or_default();
    Ok(match env.catalog.regclass(name) {
        Some(oid) => env.catalog.reg_from_oid(RegKind::Class, oid),
        None => Datum::Null,
    })
}

fn to_regtype(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    Ok(match a[0].as_str().and_then(PgType::from_sql_name) {
        Some(t) => env.catalog.reg_from_oid(RegKind::Type, t.oid()),
        None => Datum::Null,
    })
}

/// `format_type(type, typmod)`: the type's SQL name with its modifier
/// (`numeric(10,2)`, `character varying(20)`); a NULL typmod is none, an
/// unknown type `???`.
fn format_type(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let Some(oid) = oid(&a[0]) else {
        return Ok(Datum::Null);
    };
    let modifier = a[1].as_i64().filter(|m| *m >= 4).map(|m| m - 4);
    Ok(Datum::text(match (PgType::from_oid(oid), modifier) {
        (Some(PgType::Numeric(_)), Some(m)) => format!("numeric({},{})", m >> 16, m & 0xffff),
        (Some(PgType::Varchar), Some(n)) => format!("character varying({n})"),
        (Some(t), _) => t.display_name().to_string(),
        (None, _) => "???".to_string(),
    }))
}

fn user_by_id(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    let oid = a[0].as_i64().unwrap_or(0);
    Ok(
        match u32::try_from(oid)
            .ok()
            .and_then(|oid| crate::catalog::role_name(env.catalog, oid))
        {
            Some(name) => Datum::text(name),
            None => Datum::text(format!("unknown (OID={oid})")),
        },
    )
}

fn table_is_visible(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    Ok(oid(&a[0])
        .and_then(|oid| env.catalog.table_is_visible(oid))
        .map_or(Datum::Null, Datum::Bool))
}

fn type_is_visible(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(match oid(&a[0]).and_then(PgType::from_oid) {
        Some(_) => Datum::Bool(true),
        None => Datum::Null,
    })
}
