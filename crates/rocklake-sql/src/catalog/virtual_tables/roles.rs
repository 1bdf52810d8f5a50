//! Roles: `pg_roles`, `pg_authid`, `pg_user` and `pg_auth_members`, from
//! the server's roles as the transaction sees them, plus PostgreSQL 15's
//! predefined roles with their fixed oids, as clients that filter them
//! expect.

use rocklake_types::datum::PgType::{Bool, Int4, Name, Oid, Text, TimestampTz};
use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};
use rocklake_types::roles::RoleDef;

use super::{col, text};
use crate::catalog::Catalog;

/// PostgreSQL 15's predefined roles: (oid, name).
pub(crate) const PREDEFINED: &[(u32, &str)] = &[
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

/// Every role row: the server's roles, then the predefined roles.
fn all_roles(cat: &Catalog) -> Vec<RoleDef> {
    let mut roles: Vec<RoleDef> = cat.roles.catalog.roles.clone();
    roles.extend(PREDEFINED.iter().map(|(oid, name)| RoleDef {
        inherit: true,
        ..RoleDef::new(name, *oid)
    }));
    roles
}

/// The name of the role with this oid.
pub(crate) fn role_name(cat: &Catalog, oid: u32) -> Option<String> {
    all_roles(cat)
        .into_iter()
        .find(|role| role.oid == oid)
        .map(|role| role.name)
}

/// The oid of the role named `name`.
pub(crate) fn role_oid(cat: &Catalog, name: &str) -> Option<u32> {
    all_roles(cat)
        .into_iter()
        .find(|role| role.name == name)
        .map(|role| role.oid)
}

/// `rolconfig`: the role's defaults for every database, `name=value`.
fn config(role: &RoleDef) -> Datum {
    let items: Vec<Datum> = role
        .settings
        .iter()
        .filter(|s| s.database.is_none())
        .map(|s| text(&format!("{}={}", s.name, s.value)))
        .collect();
    if items.is_empty() {
        Datum::Null
    } else {
        Datum::Array(items.into())
    }
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

pub(super) fn pg_roles_rows(cat: &Catalog) -> Vec<Row> {
    all_roles(cat)
        .iter()
        .map(|role| {
            vec![
                text(&role.name),
                Datum::Bool(role.superuser),
                Datum::Bool(role.inherit),
                Datum::Bool(role.createrole),
                Datum::Bool(role.createdb),
                Datum::Bool(role.login),
                Datum::Bool(role.replication),
                Datum::Int4(role.connection_limit),
                text("********"),
                Datum::Null,
                Datum::Bool(role.bypassrls),
                config(role),
                Datum::Oid(role.oid),
            ]
        })
        .collect()
}

pub(super) fn pg_authid_columns() -> Vec<ColumnDef> {
    vec![
        col("oid", Oid),
        col("rolname", Name),
        col("rolsuper", Bool),
        col("rolinherit", Bool),
        col("rolcreaterole", Bool),
        col("rolcreatedb", Bool),
        col("rolcanlogin", Bool),
        col("rolreplication", Bool),
        col("rolbypassrls", Bool),
        col("rolconnlimit", Int4),
        col("rolpassword", Text),
        col("rolvaliduntil", TimestampTz),
    ]
}

/// `pg_authid` (which only superusers may read: see the binder).
pub(super) fn pg_authid_rows(cat: &Catalog) -> Vec<Row> {
    all_roles(cat)
        .iter()
        .map(|role| {
            vec![
                Datum::Oid(role.oid),
                text(&role.name),
                Datum::Bool(role.superuser),
                Datum::Bool(role.inherit),
                Datum::Bool(role.createrole),
                Datum::Bool(role.createdb),
                Datum::Bool(role.login),
                Datum::Bool(role.replication),
                Datum::Bool(role.bypassrls),
                Datum::Int4(role.connection_limit),
                role.verifier.as_deref().map_or(Datum::Null, text),
                Datum::Null,
            ]
        })
        .collect()
}

pub(super) fn pg_user_columns() -> Vec<ColumnDef> {
    vec![
        col("usename", Name),
        col("usesysid", Oid),
        col("usecreatedb", Bool),
        col("usesuper", Bool),
        col("userepl", Bool),
        col("usebypassrls", Bool),
        col("passwd", Text),
        col("valuntil", TimestampTz),
        col("useconfig", PgType::array_of(Text)),
    ]
}

/// `pg_user`: the roles that may log in.
pub(super) fn pg_user_rows(cat: &Catalog) -> Vec<Row> {
    all_roles(cat)
        .iter()
        .filter(|role| role.login)
        .map(|role| {
            vec![
                text(&role.name),
                Datum::Oid(role.oid),
                Datum::Bool(role.createdb),
                Datum::Bool(role.superuser),
                Datum::Bool(role.replication),
                Datum::Bool(role.bypassrls),
                text("********"),
                Datum::Null,
                config(role),
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

pub(super) fn pg_auth_members_rows(cat: &Catalog) -> Vec<Row> {
    let roles = all_roles(cat);
    let oid_of = |name: &str| roles.iter().find(|r| r.name == name).map(|r| r.oid);
    roles
        .iter()
        .flat_map(|member| {
            member.member_of.iter().filter_map(move |m| {
                Some(vec![
                    Datum::Oid(oid_of(&m.role)?),
                    Datum::Oid(member.oid),
                    Datum::Oid(rocklake_types::roles::BOOTSTRAP_OID),
                    Datum::Bool(m.admin),
                ])
            })
        })
        .collect()
}
