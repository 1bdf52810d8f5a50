//! Virtual, read-only `pg_catalog` and `information_schema` tables derived from
//! the storage's relations and schemas, with stable OIDs.

mod names;
pub(crate) mod procs;
mod relation_indexes;
mod virtual_tables;

pub use names::RegKind;
pub use relation_indexes::{OidTarget, RelationIndexes};
pub(crate) use virtual_tables::attnums::pg_attnum;
pub(crate) use virtual_tables::roles::{role_name, role_oid};
pub(crate) use virtual_tables::schema_names;

use std::sync::Arc;

use crate::storage::{RelationDef, RelationList};

/// OID of the `pg_catalog` namespace.
pub const PG_CATALOG_OID: u32 = 11;
/// OID of the `public` namespace.
pub const PUBLIC_OID: u32 = 2200;
/// OID of the role that owns everything (`postgres`, PostgreSQL's bootstrap superuser).
pub const OWNER_OID: u32 = 10;
/// OID of the pseudo-role `pg_database_owner`, owner of `public`.
pub const DATABASE_OWNER_OID: u32 = 6171;
/// OID of the `information_schema` namespace.
pub const INFORMATION_SCHEMA_OID: u32 = 13_000;
/// First OID handed to user objects, as in PostgreSQL.
pub const FIRST_USER_OID: u32 = 16_384;

/// FNV-1a over the bytes of `parts` in sequence.
fn fnv1a(parts: &[&str]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in parts.iter().flat_map(|part| part.bytes()) {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// A deterministic OID in the user range for an object identified by `key`.
pub fn stable_oid(kind: &str, key: &str) -> u32 {
    oid_of_parts(&[kind, ":", key])
}

/// [`stable_oid`] of an object of a relation, `kind:schema.name`, without
/// building the string (it runs per relation when catalog rows are built).
fn relation_object_oid(kind: &str, def: &RelationDef) -> u32 {
    oid_of_parts(&[kind, ":", &def.schema, ".", &def.name])
}

fn oid_of_parts(parts: &[&str]) -> u32 {
    FIRST_USER_OID + fnv1a(parts) % (0x7fff_0000 - FIRST_USER_OID)
}

/// What the engine knows of the catalog during one transaction.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// All relations (shared with the session's cached lists).
    pub relations: RelationList,
    /// All schema names.
    pub schemas: Arc<Vec<String>>,
    /// Current database name.
    pub database: String,
    /// Every database of the server (`pg_database`).
    pub databases: Vec<String>,
    /// Session settings (name, value).
    pub settings: rocklake_types::settings::SettingValues,
    /// Settings a statement changed with `set_config()` (name, value), which
    /// the session applies when the statement succeeds.
    pub setting_changes: Arc<std::sync::Mutex<Vec<(String, String)>>>,
    /// Notifications this statement queued with `pg_notify()` (channel,
    /// payload), sent when the transaction commits.
    pub notifications: Arc<std::sync::Mutex<Vec<(String, String)>>>,
    /// The session's mailbox (`pg_listening_channels()`) and the server's
    /// hub of them (`pg_notification_queue_usage()`); `None` outside a
    /// server.
    pub listening: Option<(
        Arc<rocklake_types::notify::Mailbox>,
        Arc<rocklake_types::notify::NotificationHub>,
    )>,
    /// Where inserts keep the rows of a DuckLake commit, while a session of
    /// the database listens for commits (see [`crate::session::notify`]).
    pub inserted_snapshots: Option<Arc<crate::session::notify::InsertedSnapshots>>,

    /// Indexes of `relations`, built on first use and shared by every
    /// catalog with the same relation list (the server's sessions share
    /// them per catalog version: [`crate::CatalogResults::lists`]).
    pub indexes: Arc<RelationIndexes>,
    /// The roles and who the session is.
    pub roles: Arc<crate::roles::RoleView>,
    /// The sessions of the server (`pg_stat_activity`).
    pub activity: Arc<rocklake_types::activity::ActivityBoard>,
    /// The session's own process id.
    pub backend_pid: i32,
}

impl Catalog {
    /// OID of a namespace.
    pub fn schema_oid(name: &str) -> u32 {
        match name {
            "pg_catalog" => PG_CATALOG_OID,
            "public" => PUBLIC_OID,
            "information_schema" => INFORMATION_SCHEMA_OID,
            other => stable_oid("namespace", other),
        }
    }

    /// OID of the database (`pg_database.oid`).
    pub fn database_oid(name: &str) -> u32 {
        stable_oid("database", name)
    }

    /// OID of a relation (stable across sessions: derived from its name).
    pub fn rel_oid(def: &RelationDef) -> u32 {
        relation_object_oid("class", def)
    }

    fn rowtype_oid(def: &RelationDef) -> u32 {
        relation_object_oid("type", def)
    }

    fn pkey_oid(def: &RelationDef) -> u32 {
        relation_object_oid("constraint", def)
    }

    /// OID of the index of a relation's primary key (`pg_index.indexrelid`,
    /// `pg_constraint.conindid`).
    fn pkey_index_oid(def: &RelationDef) -> u32 {
        Self::pkey_oid(def).wrapping_add(1)
    }

    /// `CREATE UNIQUE INDEX ...` of a relation's primary-key index, naming
    /// the table `table` (qualified or not).
    pub fn primary_key_index_def(def: &RelationDef, table: &str) -> String {
        format!(
            "CREATE UNIQUE INDEX {} ON {table} USING btree ({})",
            def.primary_key_name(),
            Self::primary_key_columns(def)
        )
    }

    fn primary_key_columns(def: &RelationDef) -> String {
        def.primary_key
            .iter()
            .map(|&i| def.columns[i].name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `pg_get_indexdef(index oid, column, pretty)`: the index's definition
    /// (column 0) or the definition of its key column `column` (from 1; empty
    /// past the last), `None` for an oid that names no index. As in
    /// PostgreSQL, the table's name is qualified unless `pretty` is asked
    /// and the search path finds it.
    pub fn index_definition(&self, oid: u32, column: i64, pretty: bool) -> Option<String> {
        let (OidTarget::PrimaryKeyIndex(_), def) = self.by_oid(oid)? else {
            return None;
        };
        if column != 0 {
            let key = usize::try_from(column - 1).ok();
            return Some(match key.and_then(|k| def.primary_key.get(k)) {
                Some(&i) => crate::ident::quote_ident(&def.columns[i].name),
                None => String::new(),
            });
        }
        let table = if pretty && self.find_in_path(&def.name) == Some(def) {
            def.name.clone()
        } else {
            format!("{}.{}", def.schema, def.name)
        };
        Some(Self::primary_key_index_def(def, &table))
    }

    /// `pg_get_constraintdef(constraint oid)`: e.g. `PRIMARY KEY (a)`.
    pub fn constraint_definition(&self, oid: u32) -> Option<String> {
        match self.by_oid(oid)? {
            (OidTarget::PrimaryKey(_), r) => {
                Some(format!("PRIMARY KEY ({})", Self::primary_key_columns(r)))
            }
            _ => None,
        }
    }

    /// `pg_table_is_visible(oid)`: whether the relation is found by its bare
    /// name on the search path (`pg_temp`, `public`, `pg_catalog`); `None`
    /// for an oid that names no relation.
    pub fn table_is_visible(&self, oid: u32) -> Option<bool> {
        match self.by_oid(oid) {
            Some((OidTarget::Table(_), def)) => Some(self.find_in_path(&def.name) == Some(def)),
            // A primary key's index: visible when its schema is on the path
            // and no table there has its name.
            Some((OidTarget::PrimaryKeyIndex(_), def)) => {
                let on_path =
                    def.schema == "public" || def.schema == crate::storage::route::TEMP_SCHEMA;
                Some(on_path && self.find_in_path(&def.primary_key_name()).is_none())
            }
            Some((OidTarget::PrimaryKey(_), _)) => None,
            None => VirtualTable::by_oid(oid).map(|table| table.schema() == "pg_catalog"),
        }
    }

    /// `current_setting(name)`: the value the statement set, else the
    /// session's; `None` for a setting that does not exist.
    pub fn setting(&self, name: &str) -> Option<String> {
        // What this statement set comes first.
        let changed = self
            .setting_changes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone());
        if changed.is_some() {
            return changed;
        }
        self.settings
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
    }

    /// `pg_relation_is_publishable(oid)`: whether the relation is a
    /// permanent table (`None` for an oid that names no relation).
    pub fn relation_is_publishable(&self, oid: u32) -> Option<bool> {
        match self.by_oid(oid) {
            Some((OidTarget::Table(_), def)) => {
                Some(def.schema != crate::storage::route::TEMP_SCHEMA)
            }
            Some(_) => None,
            None => VirtualTable::by_oid(oid).map(|_| false),
        }
    }

    /// `to_regclass(text)`: resolves a possibly qualified, possibly quoted
    /// name of a relation or a primary key's index.
    pub fn regclass(&self, text: &str) -> Option<u32> {
        let parts: Vec<String> = text
            .split('.')
            .map(|p| {
                let p = p.trim();
                match p.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
                    Some(q) => q.to_string(),
                    None => p.to_lowercase(),
                }
            })
            .collect();
        let (schema, name) = match parts.as_slice() {
            [name] => (None, name.as_str()),
            [schema, name] => (Some(schema.as_str()), name.as_str()),
            _ => return None,
        };
        if let Some(def) = self.find_opt(schema, name) {
            return Some(Self::rel_oid(def));
        }
        // A primary key's index, in the schema named or on the search path.
        let schemas = match schema {
            Some(s) => vec![s],
            None => vec![crate::storage::route::TEMP_SCHEMA, "public"],
        };
        for s in schemas {
            if let Some(def) = self.named(name).map(|i| &self.relations[i]).find(|r| {
                r.schema == s && !r.primary_key.is_empty() && r.primary_key_name() == name
            }) {
                return Some(Self::pkey_index_oid(def));
            }
        }
        if schema.is_none() || schema == Some("pg_catalog") {
            return VirtualTable::lookup(Some("pg_catalog"), name).map(VirtualTable::oid);
        }
        None
    }
}

pub use virtual_tables::{VirtualTable, Wanted};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relations_oids_are_those_of_its_qualified_name() {
        let def = RelationDef::new("lake", "ducklake_snapshot", Vec::new(), Vec::new());
        assert_eq!(
            Catalog::rel_oid(&def),
            stable_oid("class", "lake.ducklake_snapshot")
        );
        assert_eq!(
            Catalog::rowtype_oid(&def),
            stable_oid("type", "lake.ducklake_snapshot")
        );
        // The value every release gave (OIDs are stable across releases).
        assert_eq!(stable_oid("class", "public.ducklake_snapshot"), 495_629_459);
    }

    #[test]
    fn oids_are_stable_and_fixed_where_postgres_fixes_them() {
        assert_eq!(Catalog::schema_oid("public"), 2200);
        assert_eq!(Catalog::schema_oid("pg_catalog"), 11);
        let a = Catalog::schema_oid("lake_meta");
        assert_eq!(a, Catalog::schema_oid("lake_meta"));
        assert!(a >= FIRST_USER_OID);
    }
}
