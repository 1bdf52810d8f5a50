//! Access privilege inquiry functions: `has_table_privilege`,
//! `has_column_privilege`, `has_schema_privilege`,
//! `has_database_privilege`, for the current user or a role given by name
//! or oid, with PostgreSQL's errors for objects, roles and privilege names
//! that do not exist.
//!
//! What they answer is what RockLake enforces: it has no per-object
//! privileges, so every role may use every table, schema and database it
//! can connect to; the virtual `pg_catalog` and `information_schema`
//! tables are read-only for everyone (as PostgreSQL's catalogs are, even
//! for superusers), and creating objects in a system schema is a
//! superuser's privilege, as in PostgreSQL.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::{SqlError, SqlState};

use super::def::types::*;
use super::def::Library;
use crate::catalog::{schema_names, Catalog, VirtualTable};
use crate::plan::{CallEnv, CallInfo, ScalarFn};

const OID: PgType = PgType::Oid;
const NAME: PgType = PgType::Name;

/// What kind of object a function asks about.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Object {
    Table,
    Column,
    Schema,
    Database,
}

impl Object {
    fn privileges(self) -> &'static [&'static str] {
        match self {
            Object::Table => &[
                "SELECT",
                "INSERT",
                "UPDATE",
                "DELETE",
                "TRUNCATE",
                "REFERENCES",
                "TRIGGER",
            ],
            Object::Column => &["SELECT", "INSERT", "UPDATE", "REFERENCES"],
            Object::Schema => &["CREATE", "USAGE"],
            Object::Database => &["CREATE", "CONNECT", "TEMPORARY", "TEMP"],
        }
    }
}

/// Registers the privilege inquiry functions.
pub(super) fn register(lib: &mut Library) {
    let table: ScalarFn = |a, i, e| answer(a, i, e, Object::Table);
    let schema: ScalarFn = |a, i, e| answer(a, i, e, Object::Schema);
    let database: ScalarFn = |a, i, e| answer(a, i, e, Object::Database);
    for (name, eval) in [
        ("has_table_privilege", table),
        ("has_schema_privilege", schema),
        ("has_database_privilege", database),
    ] {
        for object in [TEXT, OID] {
            lib.function(name, [object.clone(), TEXT], BOOL, eval)
                .stable();
            for user in [NAME, OID] {
                lib.function(name, [user, object.clone(), TEXT], BOOL, eval)
                    .stable();
            }
        }
    }
    let column: ScalarFn = |a, i, e| answer(a, i, e, Object::Column);
    for table in [TEXT, OID] {
        for col in [TEXT, INT2] {
            lib.function(
                "has_column_privilege",
                [table.clone(), col.clone(), TEXT],
                BOOL,
                column,
            )
            .stable();
            for user in [NAME, OID] {
                lib.function(
                    "has_column_privilege",
                    [user, table.clone(), col.clone(), TEXT],
                    BOOL,
                    column,
                )
                .stable();
            }
        }
    }
}

fn unrecognized(item: &str) -> SqlError {
    SqlError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("unrecognized privilege type: \"{item}\""),
    )
}

/// The privilege names of a privilege argument (`'SELECT, INSERT WITH
/// GRANT OPTION'`), upper-cased, each checked against `object`'s.
fn privileges(text: &str, object: Object) -> Result<Vec<String>, SqlError> {
    text.split(',')
        .map(|item| {
            let trimmed = item.trim();
            let upper = trimmed.to_ascii_uppercase();
            let name = upper
                .strip_suffix("WITH GRANT OPTION")
                .map_or(upper.as_str(), str::trim_end)
                .to_string();
            if object.privileges().contains(&name.as_str()) {
                Ok(name)
            } else {
                Err(unrecognized(trimmed))
            }
        })
        .collect()
}

/// Whether the role named `user` is a superuser.
/// (An oid that names no role is asked about as the empty name: never.)
fn superuser(catalog: &Catalog, user: &str) -> bool {
    !user.is_empty()
        && (!catalog.roles.enforced
            || catalog
                .roles
                .catalog
                .role(user)
                .is_some_and(|r| r.superuser))
}

/// The role a call asks about: the current user, or the argument.
fn role(a: &[Datum], info: &CallInfo, catalog: &Catalog, given: bool) -> Result<String, SqlError> {
    if !given {
        return Ok(catalog.roles.identity.current().to_string());
    }
    let name = match (&info.arg_types[0], &a[0]) {
        // An oid naming no role is asked about as a role without
        // privileges of its own, as PostgreSQL does.
        (PgType::Oid, d) => {
            let oid = d.as_i64().unwrap_or(0) as u32;
            return Ok(crate::catalog::role_name(catalog, oid).unwrap_or_default());
        }
        (_, d) => d.as_str().unwrap_or_default().to_string(),
    };
    let exists = catalog.roles.catalog.role(&name).is_some()
        || crate::catalog::role_oid(catalog, &name).is_some();
    if !exists {
        return Err(crate::roles::no_such_role(&name));
    }
    Ok(name)
}

/// A table named or numbered: `Some(is a system catalog, its columns)`;
/// `None` for an oid that names nothing (a name that names nothing is an
/// error).
fn table(
    arg: &Datum,
    ty: &PgType,
    catalog: &Catalog,
) -> Result<Option<(bool, Vec<String>)>, SqlError> {
    let oid = match ty {
        PgType::Oid => arg.as_i64().unwrap_or(0) as u32,
        _ => {
            let text = arg.as_str().unwrap_or_default();
            catalog.regclass(text).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("relation \"{text}\" does not exist"),
                )
            })?
        }
    };
    if let Some(table) = VirtualTable::by_oid(oid) {
        let columns = table.columns().iter().map(|c| c.name.clone()).collect();
        return Ok(Some((true, columns)));
    }
    Ok(catalog
        .by_oid(oid)
        .map(|(_, def)| (false, def.columns.iter().map(|c| c.name.clone()).collect())))
}

fn answer(a: &[Datum], info: &CallInfo, env: &CallEnv, object: Object) -> Result<Datum, SqlError> {
    let catalog = env.catalog;
    let arity = if object == Object::Column { 3 } else { 2 };
    let given = a.len() > arity;
    let at = usize::from(given);
    let user = role(a, info, catalog, given)?;
    let wanted = privileges(a.last().and_then(Datum::as_str).unwrap_or_default(), object)?;
    let is_superuser = superuser(catalog, &user);
    let ty = &info.arg_types[at];
    let allowed = match object {
        Object::Table | Object::Column => {
            let Some((system, columns)) = table(&a[at], ty, catalog)? else {
                return Ok(Datum::Null);
            };
            if object == Object::Column {
                let column = &a[at + 1];
                match &info.arg_types[at + 1] {
                    PgType::Int2 => {
                        let attnum = column.as_i64().unwrap_or(0);
                        if attnum < 1 || attnum as usize > columns.len() {
                            return Ok(Datum::Null);
                        }
                    }
                    _ => {
                        let name = column.as_str().unwrap_or_default();
                        if !columns.iter().any(|c| c == name) {
                            let table_name = a[at].as_str().map_or_else(
                                || a[at].as_i64().unwrap_or(0).to_string(),
                                str::to_string,
                            );
                            return Err(SqlError::new(
                                SqlState::UNDEFINED_COLUMN,
                                format!(
                                    "column \"{name}\" of relation \"{table_name}\" does not exist"
                                ),
                            ));
                        }
                    }
                }
            }
            // The catalogs are read-only for everyone.
            wanted.iter().any(|p| {
                !system || !matches!(p.as_str(), "INSERT" | "UPDATE" | "DELETE" | "TRUNCATE")
            })
        }
        Object::Schema => {
            let name = match ty {
                PgType::Oid => {
                    let oid = a[at].as_i64().unwrap_or(0) as u32;
                    let found = schema_names(catalog)
                        .into_iter()
                        .find(|s| Catalog::schema_oid(s) == oid);
                    match found {
                        Some(name) => name,
                        None => return Ok(Datum::Null),
                    }
                }
                _ => {
                    let name = a[at].as_str().unwrap_or_default().to_string();
                    if !schema_names(catalog).contains(&name) {
                        return Err(SqlError::new(
                            SqlState::INVALID_SCHEMA_NAME,
                            format!("schema \"{name}\" does not exist"),
                        ));
                    }
                    name
                }
            };
            let system = name == "pg_catalog" || name == "information_schema";
            wanted
                .iter()
                .any(|p| p != "CREATE" || !system || is_superuser)
        }
        Object::Database => {
            let exists = match ty {
                PgType::Oid => {
                    let oid = a[at].as_i64().unwrap_or(0) as u32;
                    if !databases(catalog)
                        .iter()
                        .any(|d| Catalog::database_oid(d) == oid)
                    {
                        return Ok(Datum::Null);
                    }
                    true
                }
                _ => {
                    let name = a[at].as_str().unwrap_or_default();
                    databases(catalog).iter().any(|d| d == name)
                }
            };
            if !exists {
                return Err(SqlError::new(
                    SqlState::INVALID_CATALOG_NAME,
                    format!(
                        "database \"{}\" does not exist",
                        a[at].as_str().unwrap_or_default()
                    ),
                ));
            }
            true
        }
    };
    Ok(Datum::Bool(allowed))
}

/// Every database of the server (at least the current one).
fn databases(catalog: &Catalog) -> Vec<String> {
    let mut names = catalog.databases.clone();
    if !names.contains(&catalog.database) {
        names.push(catalog.database.clone());
    }
    names
}
