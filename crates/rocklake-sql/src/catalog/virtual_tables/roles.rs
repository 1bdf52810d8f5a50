//! Roles: `pg_roles` and `pg_auth_members`. Every object belongs to the
//! bootstrap superuser `postgres`; PostgreSQL 15's predefined roles are
//! listed with their fixed oids, as clients that filter them expect.

use rocklake_types::datum::PgType::{Bool, Int4, Name, Oid, Text, TimestampTz};
use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};

use super::{col, text};
use crate::catalog::Catalog;

/// Every role: (oid, name). The first is the superuser that owns everything.
pub(crate) const ROLES: &[(u32, &str)] = &[
    (crate::catalog::OWNER_OID, "postgres"),
    (crate::catalog::DATABASE_OWNER_OID, "pg_database_owner"),
    (6181, "pg_read_all_data"),
    (6182, "pg_write_all_data"),
    (3373, "pg_monitor"),
    (3374, "pg_read_all_settings"),
    (3375, "pg_read_all_stats"),
    (3377, "pg_stat_scan_tables"),
    (4569, "pg_read_server_files"),
    (4570, "pg_write_server_files"),
    (4571, "pg_execute_server_program"),
    (4200, "pg_signal_backend"),
    (4544, "pg_checkpoint"),
];

/// The name of the role with this oid.
pub(crate) fn role_name(oid: u32) -> Option<&'static str> {
    ROLES.iter().find(|(o, _)| *o == oid).map(|(_, name)| *name)
}

pub(super) fn pg_roles_columns() -> Vec<ColumnDef> {
    vec![
        col("rolname", Name),
        col("rolsuper", Bool),
        col("rolinherit", Bool),
        col("rolcreaterole", Bool),
        col("rolcreatedb", Bool),
        col("rolcanlogin", Bool),
        col("rolreplication", Bool),
        col("rolconnlimit", Int4),
        col("rolpassword", Text),
        col("rolvaliduntil", TimestampTz),
        col("rolbypassrls", Bool),
        col("rolconfig", PgType::array_of(Text)),
        col("oid", Oid),
    ]
}

pub(super) fn pg_roles_rows(_: &Catalog) -> Vec<Row> {
    ROLES
        .iter()
        .enumerate()
        .map(|(i, (oid, name))| {
            let superuser = Datum::Bool(i == 0);
            vec![
                text(name),
                superuser.clone(),
                Datum::Bool(true),
                superuser.clone(),
                superuser.clone(),
                superuser.clone(),
                superuser.clone(),
                Datum::Int4(-1),
                text("********"),
                Datum::Null,
                superuser,
                Datum::Null,
                Datum::Oid(*oid),
            ]
        })
        .collect()
}

pub(super) fn pg_auth_members_columns() -> Vec<ColumnDef> {
    vec![
        col("roleid", Oid),
        col("member", Oid),
        col("grantor", Oid),
        col("admin_option", Bool),
    ]
}
