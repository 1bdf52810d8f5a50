//! Virtual, read-only `pg_catalog` and `information_schema` tables derived from
//! the storage's relations and schemas, with stable OIDs.

use std::sync::Arc;

use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};

use crate::storage::RelationDef;

/// OID of the `pg_catalog` namespace.
pub const PG_CATALOG_OID: u32 = 11;
/// OID of the `public` namespace.
pub const PUBLIC_OID: u32 = 2200;
/// OID of the `information_schema` namespace.
pub const INFORMATION_SCHEMA_OID: u32 = 13_000;
/// First OID handed to user objects, as in PostgreSQL.
pub const FIRST_USER_OID: u32 = 16_384;

fn fnv1a(s: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// A deterministic OID in the user range for an object identified by `key`.
pub fn stable_oid(kind: &str, key: &str) -> u32 {
    FIRST_USER_OID + fnv1a(&format!("{kind}:{key}")) % (0x7fff_0000 - FIRST_USER_OID)
}

/// What the engine knows of the catalog during one transaction.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// All relations (shared with the session's cached lists).
    pub relations: Arc<Vec<RelationDef>>,
    /// All schema names.
    pub schemas: Arc<Vec<String>>,
    /// Current database name.
    pub database: String,
    /// Session settings (name, value).
    pub settings: Vec<(String, String)>,
}

impl Catalog {
    /// The relation `schema.name`.
    pub fn find(&self, schema: &str, name: &str) -> Option<&RelationDef> {
        self.relations
            .iter()
            .find(|r| r.schema == schema && r.name == name)
    }

    /// A relation named without a schema: PostgreSQL's search path puts the
    /// session's temporary schema first, then `public`.
    pub fn find_in_path(&self, name: &str) -> Option<&RelationDef> {
        self.find(crate::storage::temp::TEMP_SCHEMA, name)
            .or_else(|| self.find("public", name))
    }

    /// `schema.name`, or `name` on the search path when no schema is given.
    pub fn find_opt(&self, schema: Option<&str>, name: &str) -> Option<&RelationDef> {
        match schema {
            Some(s) => self.find(s, name),
            None => self.find_in_path(name),
        }
    }

    /// OID of a namespace.
    pub fn schema_oid(name: &str) -> u32 {
        match name {
            "pg_catalog" => PG_CATALOG_OID,
            "public" => PUBLIC_OID,
            "information_schema" => INFORMATION_SCHEMA_OID,
            other => stable_oid("namespace", other),
        }
    }

    /// OID of a relation (stable across sessions: derived from its name).
    pub fn rel_oid(def: &RelationDef) -> u32 {
        stable_oid("class", &format!("{}.{}", def.schema, def.name))
    }

    fn rowtype_oid(def: &RelationDef) -> u32 {
        stable_oid("type", &format!("{}.{}", def.schema, def.name))
    }

    fn pkey_oid(def: &RelationDef) -> u32 {
        stable_oid("constraint", &format!("{}.{}", def.schema, def.name))
    }

    /// `to_regclass(text)`: resolves a possibly qualified, possibly quoted name.
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
        if schema.is_none() || schema == Some("pg_catalog") {
            return VirtualTable::lookup(Some("pg_catalog"), name).map(VirtualTable::oid);
        }
        None
    }
}

/// A virtual catalog table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VirtualTable {
    /// `pg_namespace`
    Namespace,
    /// `pg_class`
    Class,
    /// `pg_attribute`
    Attribute,
    /// `pg_type`
    Type,
    /// `pg_constraint`
    Constraint,
    /// `pg_enum`
    Enum,
    /// `pg_indexes`
    Indexes,
    /// `pg_description`
    Description,
    /// `pg_settings`
    Settings,
    /// `pg_database`
    Database,
    /// `information_schema.schemata`
    Schemata,
    /// `information_schema.tables`
    Tables,
    /// `information_schema.columns`
    Columns,
}

const BUILTIN_TYPES: &[PgType] = &[
    PgType::Bool,
    PgType::Bytea,
    PgType::Char,
    PgType::Name,
    PgType::Int8,
    PgType::Int2,
    PgType::Int2Array,
    PgType::Int4,
    PgType::RegClass,
    PgType::Text,
    PgType::Oid,
    PgType::Tid,
    PgType::Float4,
    PgType::Float8,
    PgType::Varchar,
    PgType::Date,
    PgType::Time,
    PgType::Timestamp,
    PgType::TimestampTz,
    PgType::Interval,
    PgType::TimeTz,
    PgType::Numeric(None),
    PgType::Uuid,
];

fn type_len(t: &PgType) -> i16 {
    match t {
        PgType::Bool | PgType::Char => 1,
        PgType::Name => 64,
        PgType::Int2 => 2,
        PgType::Int4 | PgType::Oid | PgType::RegClass | PgType::Float4 | PgType::Date => 4,
        PgType::Int8 | PgType::Float8 | PgType::Time | PgType::Timestamp | PgType::TimestampTz => 8,
        PgType::Tid => 6,
        PgType::TimeTz => 12,
        PgType::Interval | PgType::Uuid => 16,
        _ => -1,
    }
}

fn col(name: &str, t: PgType) -> ColumnDef {
    ColumnDef::new(name, t)
}

fn text(s: &str) -> Datum {
    Datum::text(s.to_string())
}

impl VirtualTable {
    /// Resolves `schema.name` (schema `None` = search path) to a virtual table.
    pub fn lookup(schema: Option<&str>, name: &str) -> Option<VirtualTable> {
        use VirtualTable::*;
        match schema {
            None | Some("pg_catalog") => Some(match name {
                "pg_namespace" => Namespace,
                "pg_class" => Class,
                "pg_attribute" => Attribute,
                "pg_type" => Type,
                "pg_constraint" => Constraint,
                "pg_enum" => Enum,
                "pg_indexes" => Indexes,
                "pg_description" => Description,
                "pg_settings" => Settings,
                "pg_database" => Database,
                _ => return None,
            }),
            Some("information_schema") => Some(match name {
                "schemata" => Schemata,
                "tables" => Tables,
                "columns" => Columns,
                _ => return None,
            }),
            _ => None,
        }
    }

    /// The relation's OID (PostgreSQL's fixed OIDs for catalogs; views get
    /// stable OIDs in the system range).
    pub fn oid(self) -> u32 {
        use VirtualTable as V;
        match self {
            V::Namespace => 2615,
            V::Class => 1259,
            V::Attribute => 1249,
            V::Type => 1247,
            V::Constraint => 2606,
            V::Enum => 3501,
            V::Description => 2609,
            V::Database => 1262,
            V::Indexes => 12_001,
            V::Settings => 12_002,
            V::Schemata => 13_001,
            V::Tables => 13_002,
            V::Columns => 13_003,
        }
    }

    /// Columns of the table, with PostgreSQL's types.
    pub fn columns(self) -> Vec<ColumnDef> {
        use PgType::*;
        use VirtualTable as V;
        match self {
            V::Namespace => vec![col("oid", Oid), col("nspname", Name), col("nspowner", Oid)],
            V::Class => vec![
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
            ],
            V::Attribute => vec![
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
            ],
            V::Type => vec![
                col("oid", Oid),
                col("typname", Name),
                col("typnamespace", Oid),
                col("typowner", Oid),
                col("typlen", Int2),
                col("typtype", Char),
                col("typrelid", Oid),
                col("typelem", Oid),
                col("typarray", Oid),
                col("typbasetype", Oid),
                col("typtypmod", Int4),
                col("typnotnull", Bool),
            ],
            V::Constraint => vec![
                col("oid", Oid),
                col("conname", Name),
                col("connamespace", Oid),
                col("contype", Char),
                col("conrelid", Oid),
                col("conindid", Oid),
                col("conkey", Int2Array),
            ],
            V::Enum => vec![
                col("oid", Oid),
                col("enumtypid", Oid),
                col("enumsortorder", Float4),
                col("enumlabel", Name),
            ],
            V::Indexes => vec![
                col("schemaname", Name),
                col("tablename", Name),
                col("indexname", Name),
                col("tablespace", Name),
                col("indexdef", Text),
            ],
            V::Description => vec![
                col("objoid", Oid),
                col("classoid", Oid),
                col("objsubid", Int4),
                col("description", Text),
            ],
            V::Settings => vec![
                col("name", Text),
                col("setting", Text),
                col("unit", Text),
                col("vartype", Text),
            ],
            V::Database => vec![col("oid", Oid), col("datname", Name)],
            V::Schemata => vec![
                col("catalog_name", Name),
                col("schema_name", Name),
                col("schema_owner", Name),
            ],
            V::Tables => vec![
                col("table_catalog", Name),
                col("table_schema", Name),
                col("table_name", Name),
                col("table_type", Varchar),
            ],
            V::Columns => vec![
                col("table_catalog", Name),
                col("table_schema", Name),
                col("table_name", Name),
                col("column_name", Name),
                col("ordinal_position", Int4),
                col("column_default", Varchar),
                col("is_nullable", Varchar),
                col("data_type", Varchar),
                col("numeric_precision", Int4),
                col("numeric_scale", Int4),
                col("udt_name", Name),
            ],
        }
    }

    /// The table's rows for the given catalog state.
    pub fn rows(self, cat: &Catalog) -> Vec<Row> {
        use VirtualTable as V;
        let mut schemas: Vec<String> = vec!["pg_catalog".into(), "information_schema".into()];
        schemas.extend(
            cat.schemas
                .iter()
                .filter(|s| !schemas.contains(s))
                .cloned()
                .collect::<Vec<_>>(),
        );
        let owner = Datum::Oid(10);
        match self {
            V::Namespace => schemas
                .iter()
                .map(|s| vec![Datum::Oid(Catalog::schema_oid(s)), text(s), owner.clone()])
                .collect(),
            V::Class => cat
                .relations
                .iter()
                .map(|r| {
                    vec![
                        Datum::Oid(Catalog::rel_oid(r)),
                        text(&r.name),
                        Datum::Oid(Catalog::schema_oid(&r.schema)),
                        Datum::Oid(Catalog::rowtype_oid(r)),
                        owner.clone(),
                        Datum::Int4(0),
                        Datum::Float4(-1.0),
                        Datum::Bool(!r.primary_key.is_empty()),
                        text("p"),
                        text("r"),
                        Datum::Int2(r.columns.len() as i16),
                    ]
                })
                .collect(),
            V::Attribute => {
                let mut out = Vec::new();
                for r in cat.relations.iter() {
                    let oid = Datum::Oid(Catalog::rel_oid(r));
                    out.push(vec![
                        oid.clone(),
                        text("ctid"),
                        Datum::Oid(PgType::Tid.oid()),
                        Datum::Int2(6),
                        Datum::Int2(-1),
                        Datum::Int4(0),
                        Datum::Int4(-1),
                        Datum::Bool(true),
                        Datum::Bool(false),
                        Datum::Bool(false),
                    ]);
                    for (i, c) in r.columns.iter().enumerate() {
                        let pk = r.primary_key.contains(&i);
                        out.push(vec![
                            oid.clone(),
                            text(&c.name),
                            Datum::Oid(c.pg_type.oid()),
                            Datum::Int2(type_len(&c.pg_type)),
                            Datum::Int2(i as i16 + 1),
                            Datum::Int4(i32::from(c.pg_type == PgType::Int2Array)),
                            Datum::Int4(c.pg_type.type_modifier()),
                            Datum::Bool(c.not_null || pk),
                            Datum::Bool(false),
                            Datum::Bool(false),
                        ]);
                    }
                }
                out
            }
            V::Type => {
                let mut out: Vec<Row> = BUILTIN_TYPES
                    .iter()
                    .map(|t| {
                        let elem = if *t == PgType::Int2Array {
                            PgType::Int2.oid()
                        } else {
                            0
                        };
                        let array = if *t == PgType::Int2 {
                            PgType::Int2Array.oid()
                        } else {
                            0
                        };
                        vec![
                            Datum::Oid(t.oid()),
                            text(t.type_name()),
                            Datum::Oid(PG_CATALOG_OID),
                            owner.clone(),
                            Datum::Int2(type_len(t)),
                            text("b"),
                            Datum::Oid(0),
                            Datum::Oid(elem),
                            Datum::Oid(array),
                            Datum::Oid(0),
                            Datum::Int4(-1),
                            Datum::Bool(false),
                        ]
                    })
                    .collect();
                for r in cat.relations.iter() {
                    out.push(vec![
                        Datum::Oid(Catalog::rowtype_oid(r)),
                        text(&r.name),
                        Datum::Oid(Catalog::schema_oid(&r.schema)),
                        owner.clone(),
                        Datum::Int2(-1),
                        text("c"),
                        Datum::Oid(Catalog::rel_oid(r)),
                        Datum::Oid(0),
                        Datum::Oid(0),
                        Datum::Oid(0),
                        Datum::Int4(-1),
                        Datum::Bool(false),
                    ]);
                }
                out
            }
            V::Constraint => cat
                .relations
                .iter()
                .filter(|r| !r.primary_key.is_empty())
                .map(|r| {
                    vec![
                        Datum::Oid(Catalog::pkey_oid(r)),
                        text(&r.primary_key_name()),
                        Datum::Oid(Catalog::schema_oid(&r.schema)),
                        text("p"),
                        Datum::Oid(Catalog::rel_oid(r)),
                        Datum::Oid(Catalog::pkey_oid(r).wrapping_add(1)),
                        Datum::Int2Array(r.primary_key.iter().map(|&i| i as i16 + 1).collect()),
                    ]
                })
                .collect(),
            V::Enum | V::Description => Vec::new(),
            V::Indexes => cat
                .relations
                .iter()
                .filter(|r| !r.primary_key.is_empty())
                .map(|r| {
                    let cols: Vec<&str> = r
                        .primary_key
                        .iter()
                        .map(|&i| r.columns[i].name.as_str())
                        .collect();
                    vec![
                        text(&r.schema),
                        text(&r.name),
                        text(&r.primary_key_name()),
                        Datum::Null,
                        text(&format!(
                            "CREATE UNIQUE INDEX {} ON {}.{} USING btree ({})",
                            r.primary_key_name(),
                            r.schema,
                            r.name,
                            cols.join(", ")
                        )),
                    ]
                })
                .collect(),
            V::Settings => cat
                .settings
                .iter()
                .map(|(n, v)| vec![text(n), text(v), Datum::Null, text("string")])
                .collect(),
            V::Database => vec![vec![
                Datum::Oid(stable_oid("database", &cat.database)),
                text(&cat.database),
            ]],
            V::Schemata => schemas
                .iter()
                .map(|s| vec![text(&cat.database), text(s), text("postgres")])
                .collect(),
            V::Tables => cat
                .relations
                .iter()
                .map(|r| {
                    vec![
                        text(&cat.database),
                        text(&r.schema),
                        text(&r.name),
                        text("BASE TABLE"),
                    ]
                })
                .collect(),
            V::Columns => {
                let mut out = Vec::new();
                for r in cat.relations.iter() {
                    for (i, c) in r.columns.iter().enumerate() {
                        let (p, s) = match c.pg_type {
                            PgType::Numeric(Some((p, s))) => {
                                (Datum::Int4(p.into()), Datum::Int4(s.into()))
                            }
                            _ => (Datum::Null, Datum::Null),
                        };
                        let nullable = !(c.not_null || r.primary_key.contains(&i));
                        let data_type = if c.pg_type == PgType::Int2Array {
                            "ARRAY"
                        } else {
                            c.pg_type.display_name()
                        };
                        out.push(vec![
                            text(&cat.database),
                            text(&r.schema),
                            text(&r.name),
                            text(&c.name),
                            Datum::Int4(i as i32 + 1),
                            Datum::Null,
                            text(if nullable { "YES" } else { "NO" }),
                            text(data_type),
                            p,
                            s,
                            text(c.pg_type.type_name()),
                        ]);
                    }
                }
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oids_are_stable_and_fixed_where_postgres_fixes_them() {
        assert_eq!(Catalog::schema_oid("public"), 2200);
        assert_eq!(Catalog::schema_oid("pg_catalog"), 11);
        let a = Catalog::schema_oid("lake_meta");
        assert_eq!(a, Catalog::schema_oid("lake_meta"));
        assert!(a >= FIRST_USER_OID);
    }
}
