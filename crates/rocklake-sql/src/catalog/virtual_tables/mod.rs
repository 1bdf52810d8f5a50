//! The virtual `pg_catalog` and `information_schema` tables, derived from
//! the storage's relations and schemas with stable OIDs. Each table is one
//! [`TableDef`]: its name, OID, columns and row generator, the last two side
//! by side in [`pg_catalog`] or [`information_schema`].

mod absent;
mod activity;
pub(crate) mod attnums;
mod indexes;
mod information_schema;
mod keyed;
mod pg_catalog;
pub(crate) mod roles;
mod wanted;

pub use wanted::Wanted;

use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};

use crate::catalog::Catalog;

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
    /// `pg_am`
    Am,
    /// `pg_attrdef`
    Attrdef,
    /// `pg_collation`
    Collation,
    /// `pg_index`
    Index,
    /// `pg_opclass`
    Opclass,
    /// `pg_sequence`
    Sequence,
    /// `pg_roles`
    Roles,
    /// `pg_auth_members`
    AuthMembers,
    /// `pg_policy`
    Policy,
    /// `pg_statistic_ext`
    StatisticExt,
    /// `pg_publication`
    Publication,
    /// `pg_publication_namespace`
    PublicationNamespace,
    /// `pg_publication_rel`
    PublicationRel,
    /// `pg_inherits`
    Inherits,
    /// `pg_proc`
    Proc,
    /// `pg_tablespace`
    Tablespace,
    /// `pg_range`
    Range,
    /// `pg_stat_activity`
    StatActivity,
    /// `pg_stat_database`
    StatDatabase,
    /// `pg_locks`
    Locks,
    /// `information_schema.schemata`
    Schemata,
    /// `information_schema.tables`
    Tables,
    /// `information_schema.columns`
    Columns,
    /// `pg_authid` (superusers only)
    Authid,
    /// `pg_user`
    User,
}

/// Everything the engine knows of one virtual table.
pub struct TableDef {
    /// The table.
    pub table: VirtualTable,
    /// Its schema: `pg_catalog` or `information_schema`.
    pub schema: &'static str,
    /// Its name.
    pub name: &'static str,
    /// Its OID (PostgreSQL's fixed OIDs for catalogs; views get stable OIDs
    /// in the system range).
    pub oid: u32,
    /// Its columns, with PostgreSQL's names and types.
    pub columns: fn() -> Vec<ColumnDef>,
    /// Its rows for a catalog state.
    pub rows: fn(&Catalog) -> Vec<Row>,
}

/// Every virtual table, in the order of [`VirtualTable`]'s variants.
static TABLES: &[TableDef] = &[
    TableDef {
        table: VirtualTable::Namespace,
        schema: "pg_catalog",
        name: "pg_namespace",
        oid: 2615,
        columns: pg_catalog::pg_namespace_columns,
        rows: pg_catalog::pg_namespace_rows,
    },
    TableDef {
        table: VirtualTable::Class,
        schema: "pg_catalog",
        name: "pg_class",
        oid: 1259,
        columns: pg_catalog::pg_class_columns,
        rows: |cat| pg_catalog::pg_class_rows(cat, Wanted::ALL),
    },
    TableDef {
        table: VirtualTable::Attribute,
        schema: "pg_catalog",
        name: "pg_attribute",
        oid: 1249,
        columns: pg_catalog::pg_attribute_columns,
        rows: |cat| pg_catalog::pg_attribute_rows(cat, Wanted::ALL),
    },
    TableDef {
        table: VirtualTable::Type,
        schema: "pg_catalog",
        name: "pg_type",
        oid: 1247,
        columns: pg_catalog::pg_type_columns,
        rows: |cat| pg_catalog::pg_type_rows(cat, Wanted::ALL),
    },
    TableDef {
        table: VirtualTable::Constraint,
        schema: "pg_catalog",
        name: "pg_constraint",
        oid: 2606,
        columns: pg_catalog::pg_constraint_columns,
        rows: pg_catalog::pg_constraint_rows,
    },
    TableDef {
        table: VirtualTable::Enum,
        schema: "pg_catalog",
        name: "pg_enum",
        oid: 3501,
        columns: pg_catalog::pg_enum_columns,
        rows: pg_catalog::pg_enum_rows,
    },
    TableDef {
        table: VirtualTable::Indexes,
        schema: "pg_catalog",
        name: "pg_indexes",
        oid: 12_043,
        columns: indexes::pg_indexes_columns,
        rows: indexes::pg_indexes_rows,
    },
    TableDef {
        table: VirtualTable::Description,
        schema: "pg_catalog",
        name: "pg_description",
        oid: 2609,
        columns: pg_catalog::pg_description_columns,
        rows: pg_catalog::pg_description_rows,
    },
    TableDef {
        table: VirtualTable::Settings,
        schema: "pg_catalog",
        name: "pg_settings",
        oid: 12_104,
        columns: pg_catalog::pg_settings_columns,
        rows: pg_catalog::pg_settings_rows,
    },
    TableDef {
        table: VirtualTable::Database,
        schema: "pg_catalog",
        name: "pg_database",
        oid: 1262,
        columns: pg_catalog::pg_database_columns,
        rows: pg_catalog::pg_database_rows,
    },
    TableDef {
        table: VirtualTable::Am,
        schema: "pg_catalog",
        name: "pg_am",
        oid: 2601,
        columns: pg_catalog::pg_am_columns,
        rows: pg_catalog::pg_am_rows,
    },
    TableDef {
        table: VirtualTable::Attrdef,
        schema: "pg_catalog",
        name: "pg_attrdef",
        oid: 2604,
        columns: pg_catalog::pg_attrdef_columns,
        rows: pg_catalog::pg_attrdef_rows,
    },
    TableDef {
        table: VirtualTable::Collation,
        schema: "pg_catalog",
        name: "pg_collation",
        oid: 3456,
        columns: pg_catalog::pg_collation_columns,
        rows: pg_catalog::pg_collation_rows,
    },
    TableDef {
        table: VirtualTable::Index,
        schema: "pg_catalog",
        name: "pg_index",
        oid: 2610,
        columns: indexes::pg_index_columns,
        rows: indexes::pg_index_rows,
    },
    TableDef {
        table: VirtualTable::Opclass,
        schema: "pg_catalog",
        name: "pg_opclass",
        oid: 2616,
        columns: indexes::pg_opclass_columns,
        rows: indexes::pg_opclass_rows,
    },
    TableDef {
        table: VirtualTable::Sequence,
        schema: "pg_catalog",
        name: "pg_sequence",
        oid: 2224,
        columns: pg_catalog::pg_sequence_columns,
        rows: pg_catalog::pg_sequence_rows,
    },
    TableDef {
        table: VirtualTable::Roles,
        schema: "pg_catalog",
        name: "pg_roles",
        oid: 12_000,
        columns: roles::pg_roles_columns,
        rows: roles::pg_roles_rows,
    },
    TableDef {
        table: VirtualTable::AuthMembers,
        schema: "pg_catalog",
        name: "pg_auth_members",
        oid: 1261,
        columns: roles::pg_auth_members_columns,
        rows: roles::pg_auth_members_rows,
    },
    TableDef {
        table: VirtualTable::Policy,
        schema: "pg_catalog",
        name: "pg_policy",
        oid: 3256,
        columns: absent::pg_policy_columns,
        rows: absent::no_rows,
    },
    TableDef {
        table: VirtualTable::StatisticExt,
        schema: "pg_catalog",
        name: "pg_statistic_ext",
        oid: 3381,
        columns: absent::pg_statistic_ext_columns,
        rows: absent::no_rows,
    },
    TableDef {
        table: VirtualTable::Publication,
        schema: "pg_catalog",
        name: "pg_publication",
        oid: 6104,
        columns: absent::pg_publication_columns,
        rows: absent::no_rows,
    },
    TableDef {
        table: VirtualTable::PublicationNamespace,
        schema: "pg_catalog",
        name: "pg_publication_namespace",
        oid: 6237,
        columns: absent::pg_publication_namespace_columns,
        rows: absent::no_rows,
    },
    TableDef {
        table: VirtualTable::PublicationRel,
        schema: "pg_catalog",
        name: "pg_publication_rel",
        oid: 6106,
        columns: absent::pg_publication_rel_columns,
        rows: absent::no_rows,
    },
    TableDef {
        table: VirtualTable::Inherits,
        schema: "pg_catalog",
        name: "pg_inherits",
        oid: 2611,
        columns: absent::pg_inherits_columns,
        rows: absent::no_rows,
    },
    TableDef {
        table: VirtualTable::Proc,
        schema: "pg_catalog",
        name: "pg_proc",
        oid: 1255,
        columns: absent::pg_proc_columns,
        rows: absent::no_rows,
    },
    TableDef {
        table: VirtualTable::Tablespace,
        schema: "pg_catalog",
        name: "pg_tablespace",
        oid: 1213,
        columns: pg_catalog::pg_tablespace_columns,
        rows: pg_catalog::pg_tablespace_rows,
    },
    TableDef {
        table: VirtualTable::Range,
        schema: "pg_catalog",
        name: "pg_range",
        oid: 3541,
        columns: absent::pg_range_columns,
        rows: absent::no_rows,
    },
    TableDef {
        table: VirtualTable::StatActivity,
        schema: "pg_catalog",
        name: "pg_stat_activity",
        oid: 12_222,
        columns: activity::pg_stat_activity_columns,
        rows: activity::pg_stat_activity_rows,
    },
    TableDef {
        table: VirtualTable::StatDatabase,
        schema: "pg_catalog",
        name: "pg_stat_database",
        oid: 12_266,
        columns: activity::pg_stat_database_columns,
        rows: activity::pg_stat_database_rows,
    },
    TableDef {
        table: VirtualTable::Locks,
        schema: "pg_catalog",
        name: "pg_locks",
        oid: 12_073,
        columns: activity::pg_locks_columns,
        rows: activity::pg_locks_rows,
    },
    TableDef {
        table: VirtualTable::Schemata,
        schema: "information_schema",
        name: "schemata",
        oid: 13_382,
        columns: information_schema::schemata_columns,
        rows: information_schema::schemata_rows,
    },
    TableDef {
        table: VirtualTable::Tables,
        schema: "information_schema",
        name: "tables",
        oid: 13_425,
        columns: information_schema::tables_columns,
        rows: information_schema::tables_rows,
    },
    TableDef {
        table: VirtualTable::Columns,
        schema: "information_schema",
        name: "columns",
        oid: 13_295,
        columns: information_schema::columns_columns,
        rows: information_schema::columns_rows,
    },
    TableDef {
        table: VirtualTable::Authid,
        schema: "pg_catalog",
        name: "pg_authid",
        oid: 1260,
        columns: roles::pg_authid_columns,
        rows: roles::pg_authid_rows,
    },
    TableDef {
        table: VirtualTable::User,
        schema: "pg_catalog",
        name: "pg_user",
        oid: 12_010,
        columns: roles::pg_user_columns,
        rows: roles::pg_user_rows,
    },
];

const BUILTIN_TYPES: &[PgType] = &PgType::ALL;

fn type_len(t: &PgType) -> i16 {
    match t {
        PgType::Bool | PgType::Char => 1,
        PgType::Name => 64,
        PgType::Int2 => 2,
        PgType::Int4
        | PgType::Oid
        | PgType::RegProc
        | PgType::RegClass
        | PgType::RegType
        | PgType::RegNamespace
        | PgType::Float4
        | PgType::Xid
        | PgType::Date => 4,
        PgType::Int8 | PgType::Float8 | PgType::Time | PgType::Timestamp | PgType::TimestampTz => 8,
        PgType::Tid => 6,
        PgType::TimeTz | PgType::AclItem => 12,
        PgType::Interval | PgType::Uuid => 16,
        _ => -1,
    }
}

/// `pg_type.typstorage` (and `pg_attribute.attstorage`): `p`lain for
/// fixed-length values, `m`ain for numeric, e`x`tended for other
/// variable-length ones.
fn type_storage(t: &PgType) -> &'static str {
    match t {
        PgType::Numeric(_) => "m",
        PgType::Name | PgType::AclItem | PgType::Int2Vector | PgType::OidVector => "p",
        t if type_len(t) > 0 => "p",
        _ => "x",
    }
}

/// `pg_collation.oid` of `default`, the collation of string types.
const DEFAULT_COLLATION_OID: u32 = 100;
/// `pg_collation.oid` of `C`, the collation of `name`.
const C_COLLATION_OID: u32 = 950;

/// `pg_type.typcollation`: the collation of values of type `t` (0 for
/// types without one).
fn type_collation(t: &PgType) -> u32 {
    match t {
        PgType::Text | PgType::Varchar => DEFAULT_COLLATION_OID,
        PgType::Name => C_COLLATION_OID,
        _ => 0,
    }
}

/// A constant default as PostgreSQL shows it (`pg_get_expr` of
/// `pg_attrdef.adbin`, `information_schema.columns.column_default`):
/// numbers and booleans bare, other values as a quoted literal cast to the
/// column's type, e.g. `'literal'::character varying`.
fn default_expression(text_value: &str, pg_type: &PgType) -> String {
    match (pg_type, text_value) {
        (PgType::Bool, "t") => return "true".to_string(),
        (PgType::Bool, "f") => return "false".to_string(),
        _ => {}
    }
    let bare = matches!(
        pg_type,
        PgType::Int2 | PgType::Int4 | PgType::Int8 | PgType::Numeric(_)
    ) && !text_value.starts_with('-');
    if bare {
        return text_value.to_string();
    }
    format!(
        "'{}'::{}",
        text_value.replace('\'', "''"),
        pg_type.display_name()
    )
}

fn col(name: &str, t: PgType) -> ColumnDef {
    ColumnDef::new(name, t)
}

fn text(s: &str) -> Datum {
    Datum::text(s.to_string())
}

/// Owner of every object: the bootstrap superuser.
const OWNER: Datum = Datum::Oid(crate::catalog::OWNER_OID);

/// Every schema: the system ones, then the storage's.
/// Every schema `pg_namespace` lists: the system ones, then the catalog's.
pub(crate) fn schema_names(cat: &Catalog) -> Vec<String> {
    let mut schemas: Vec<String> = vec!["pg_catalog".into(), "information_schema".into()];
    schemas.extend(
        cat.schemas
            .iter()
            .filter(|s| !schemas.contains(s))
            .cloned()
            .collect::<Vec<_>>(),
    );
    schemas
}

impl VirtualTable {
    /// Whether its rows change without the catalog changing (settings,
    /// sessions), so that results over it may not be kept.
    pub fn is_live(self) -> bool {
        matches!(
            self,
            VirtualTable::Settings
                | VirtualTable::StatActivity
                | VirtualTable::StatDatabase
                | VirtualTable::Locks
        )
    }

    /// The table's definition.
    pub fn def(self) -> &'static TableDef {
        let def = &TABLES[self as usize];
        debug_assert_eq!(def.table, self);
        def
    }

    /// Resolves `schema.name` (schema `None` = search path, where only
    /// `pg_catalog`'s tables are found) to a virtual table.
    pub fn lookup(schema: Option<&str>, name: &str) -> Option<VirtualTable> {
        let schema = schema.unwrap_or("pg_catalog");
        TABLES
            .iter()
            .find(|def| def.schema == schema && def.name == name)
            .map(|def| def.table)
    }

    /// The relation's OID.
    pub fn oid(self) -> u32 {
        self.def().oid
    }

    /// The virtual table with this OID.
    pub fn by_oid(oid: u32) -> Option<VirtualTable> {
        TABLES
            .iter()
            .find(|def| def.oid == oid)
            .map(|def| def.table)
    }

    /// The schema it lives in.
    pub fn schema(self) -> &'static str {
        self.def().schema
    }

    /// Columns of the table, with PostgreSQL's types.
    pub fn columns(self) -> &'static [ColumnDef] {
        static BUILT: std::sync::OnceLock<Vec<Vec<ColumnDef>>> = std::sync::OnceLock::new();
        &BUILT.get_or_init(|| TABLES.iter().map(|def| (def.columns)()).collect())[self as usize]
    }

    /// The table's rows for the given catalog state.
    pub fn rows(self, cat: &Catalog) -> Vec<Row> {
        (self.def().rows)(cat)
    }

    /// [`VirtualTable::rows`] with only the `wanted` columns.
    pub fn wanted_rows(self, cat: &Catalog, wanted: Wanted<'_>) -> Vec<Row> {
        match self {
            VirtualTable::Class => pg_catalog::pg_class_rows(cat, wanted),
            VirtualTable::Attribute => pg_catalog::pg_attribute_rows(cat, wanted),
            VirtualTable::Type => pg_catalog::pg_type_rows(cat, wanted),
            _ => {
                let mut rows = self.rows(cat);
                wanted.narrow(&mut rows);
                rows
            }
        }
    }
}
