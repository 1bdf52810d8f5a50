//! The DuckLake catalog tables: their columns (in the order DuckDB 1.5.5's
//! ducklake extension creates them for spec 1.0; `ducklake_view_column_tag` as
//! DuckLake 1.1 creates it), their key layout and their primary keys.
//!
//! A relation of another spec version keeps its table's tag and key: its key
//! columns are found by *name*, and its other columns by name in the value
//! message (see `proto/rocklake_catalog.proto` and [`crate::relations`]).
//!
//! Each table's key is `tag | field | field | ...`, every field a big-endian u64.
//! A field is either a BIGINT column of the table or the hidden row sequence
//! (`RowSeq`), a store-allocated number that makes rows unique where DuckLake's
//! own columns do not (string-keyed or duplicate-tolerant tables). Versioned
//! tables end their key with `begin_snapshot`.

use crate::tags::Tag;
use rocklake_types::datum::{ColumnDef, PgType};

/// The column types DuckLake uses in its catalog tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogType {
    /// BIGINT.
    Int8,
    /// VARCHAR.
    Varchar,
    /// BOOLEAN.
    Bool,
    /// UUID.
    Uuid,
    /// TIMESTAMP WITH TIME ZONE.
    TimestampTz,
}

impl CatalogType {
    /// The PostgreSQL type of columns of this kind.
    pub fn pg_type(self) -> PgType {
        match self {
            CatalogType::Int8 => PgType::Int8,
            CatalogType::Varchar => PgType::Varchar,
            CatalogType::Bool => PgType::Bool,
            CatalogType::Uuid => PgType::Uuid,
            CatalogType::TimestampTz => PgType::TimestampTz,
        }
    }
}

/// One column of a catalog table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogColumn {
    /// Column name.
    pub name: &'static str,
    /// Column type.
    pub ty: CatalogType,
    /// Declared `NOT NULL`.
    pub not_null: bool,
}

/// One field of a key after the tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyField {
    /// The BIGINT column at this index of the table.
    Column(usize),
    /// The hidden, store-allocated row sequence number.
    RowSeq,
}

/// Everything RockLake knows about one DuckLake catalog table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogTable {
    /// Key tag.
    pub tag: Tag,
    /// SQL name, e.g. `ducklake_snapshot`.
    pub name: &'static str,
    /// Protobuf message holding the non-key columns (in `rocklake.catalog.v1`).
    pub message: &'static str,
    /// Columns in DuckLake's declaration order.
    pub columns: &'static [CatalogColumn],
    /// Key fields after the tag, parent before child, `begin_snapshot` last
    /// for versioned tables.
    pub key: &'static [KeyField],
    /// Column indexes of the SQL `PRIMARY KEY` DuckLake declares, empty if none.
    /// Where it is a prefix of [`CatalogTable::key`] the store enforces it with one
    /// prefix probe; otherwise (data and delete files, keyed by table first so a
    /// table's files are one range) the store enforces uniqueness of the whole key,
    /// which contains the primary key.
    pub primary_key: &'static [usize],
}

impl CatalogTable {
    /// Number of bytes of every key of this table: the tag plus 8 per field.
    pub fn key_len(&self) -> usize {
        1 + 8 * self.key.len()
    }

    /// Whether the table has a `begin_snapshot` last key field (MVCC-versioned).
    pub fn versioned(&self) -> bool {
        matches!(self.key.last(), Some(KeyField::Column(i)) if self.columns[*i].name == "begin_snapshot")
    }

    /// Index of the column named `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// Whether column `index` is stored in the key rather than in the value.
    pub fn is_key_column(&self, index: usize) -> bool {
        self.key.contains(&KeyField::Column(index))
    }

    /// Whether the primary key is a leading prefix of the key fields, so that one
    /// prefix probe proves uniqueness.
    pub fn primary_key_is_key_prefix(&self) -> bool {
        !self.primary_key.is_empty()
            && self
                .primary_key
                .iter()
                .enumerate()
                .all(|(pos, col)| self.key.get(pos) == Some(&KeyField::Column(*col)))
    }

    /// Whether the key holds the hidden row sequence.
    pub fn key_has_row_seq(&self) -> bool {
        self.key.contains(&KeyField::RowSeq)
    }

    /// Readable names of the key fields, e.g. `["table_id", "begin_snapshot"]`.
    pub fn key_field_names(&self) -> Vec<&'static str> {
        self.key
            .iter()
            .map(|f| match f {
                KeyField::Column(i) => self.columns[*i].name,
                KeyField::RowSeq => "row_seq",
            })
            .collect()
    }

    /// The columns as generic column definitions.
    pub fn column_defs(&self) -> Vec<ColumnDef> {
        self.columns
            .iter()
            .map(|c| ColumnDef {
                not_null: c.not_null,
                ..ColumnDef::new(c.name, c.ty.pg_type())
            })
            .collect()
    }

    /// The catalog table with this SQL name.
    pub fn by_name(name: &str) -> Option<&'static CatalogTable> {
        CATALOG_TABLES.iter().find(|t| t.name == name)
    }

    /// The catalog table with this tag.
    pub fn by_tag(tag: Tag) -> Option<&'static CatalogTable> {
        CATALOG_TABLES.iter().find(|t| t.tag == tag)
    }
}

/// Where the `ducklake_snapshot` columns the store reads are, found by name
/// in the table's definition (never by a hard-coded position).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotColumns {
    /// `snapshot_id`.
    pub snapshot_id: usize,
    /// `snapshot_time`.
    pub snapshot_time: usize,
    /// `schema_version`.
    pub schema_version: usize,
    /// `next_catalog_id`.
    pub next_catalog_id: usize,
    /// `next_file_id`.
    pub next_file_id: usize,
}

impl SnapshotColumns {
    /// The positions in `ducklake_snapshot`.
    pub fn get() -> &'static SnapshotColumns {
        static COLUMNS: std::sync::LazyLock<SnapshotColumns> = std::sync::LazyLock::new(|| {
            let table = CatalogTable::by_tag(Tag::Snapshot).expect("ducklake_snapshot is defined");
            let at = |name: &str| {
                table
                    .column_index(name)
                    .unwrap_or_else(|| panic!("ducklake_snapshot has no column {name}"))
            };
            SnapshotColumns {
                snapshot_id: at("snapshot_id"),
                snapshot_time: at("snapshot_time"),
                schema_version: at("schema_version"),
                next_catalog_id: at("next_catalog_id"),
                next_file_id: at("next_file_id"),
            }
        });
        &COLUMNS
    }
}

const fn col(name: &'static str, ty: CatalogType) -> CatalogColumn {
    CatalogColumn {
        name,
        ty,
        not_null: false,
    }
}

const fn col_not_null(name: &'static str, ty: CatalogType) -> CatalogColumn {
    CatalogColumn {
        name,
        ty,
        not_null: true,
    }
}

use CatalogType::{Bool, Int8, TimestampTz, Uuid, Varchar};
use KeyField::{Column as C, RowSeq};

/// Every DuckLake catalog table, in tag order.
pub static CATALOG_TABLES: &[CatalogTable] = &[
    CatalogTable {
        tag: Tag::Metadata,
        name: "ducklake_metadata",
        message: "Metadata",
        columns: &[
            col_not_null("key", Varchar),
            col_not_null("value", Varchar),
            col("scope", Varchar),
            col("scope_id", Int8),
        ],
        key: &[RowSeq],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::Snapshot,
        name: "ducklake_snapshot",
        message: "Snapshot",
        columns: &[
            col("snapshot_id", Int8),
            col("snapshot_time", TimestampTz),
            col("schema_version", Int8),
            col("next_catalog_id", Int8),
            col("next_file_id", Int8),
        ],
        key: &[C(0)],
        primary_key: &[0],
    },
    CatalogTable {
        tag: Tag::SnapshotChanges,
        name: "ducklake_snapshot_changes",
        message: "SnapshotChanges",
        columns: &[
            col("snapshot_id", Int8),
            col("changes_made", Varchar),
            col("author", Varchar),
            col("commit_message", Varchar),
            col("commit_extra_info", Varchar),
        ],
        key: &[C(0)],
        primary_key: &[0],
    },
    CatalogTable {
        tag: Tag::Schema,
        name: "ducklake_schema",
        message: "Schema",
        columns: &[
            col("schema_id", Int8),
            col("schema_uuid", Uuid),
            col("begin_snapshot", Int8),
            col("end_snapshot", Int8),
            col("schema_name", Varchar),
            col("path", Varchar),
            col("path_is_relative", Bool),
        ],
        key: &[C(0), C(2)],
        primary_key: &[0],
    },
    CatalogTable {
        tag: Tag::Table,
        name: "ducklake_table",
        message: "Table",
        columns: &[
            col("table_id", Int8),
            col("table_uuid", Uuid),
            col("begin_snapshot", Int8),
            col("end_snapshot", Int8),
            col("schema_id", Int8),
            col("table_name", Varchar),
            col("path", Varchar),
            col("path_is_relative", Bool),
        ],
        key: &[C(0), C(2)],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::Column,
        name: "ducklake_column",
        message: "Column",
        columns: &[
            col("column_id", Int8),
            col("begin_snapshot", Int8),
            col("end_snapshot", Int8),
            col("table_id", Int8),
            col("column_order", Int8),
            col("column_name", Varchar),
            col("column_type", Varchar),
            col("initial_default", Varchar),
            col("default_value", Varchar),
            col("nulls_allowed", Bool),
            col("parent_column", Int8),
            col("default_value_type", Varchar),
            col("default_value_dialect", Varchar),
        ],
        key: &[C(3), C(0), C(1)],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::View,
        name: "ducklake_view",
        message: "View",
        columns: &[
            col("view_id", Int8),
            col("view_uuid", Uuid),
            col("begin_snapshot", Int8),
            col("end_snapshot", Int8),
            col("schema_id", Int8),
            col("view_name", Varchar),
            col("dialect", Varchar),
            col("sql", Varchar),
            col("column_aliases", Varchar),
        ],
        key: &[C(0), C(2)],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::Macro,
        name: "ducklake_macro",
        message: "Macro",
        columns: &[
            col("schema_id", Int8),
            col("macro_id", Int8),
            col("macro_name", Varchar),
            col("begin_snapshot", Int8),
            col("end_snapshot", Int8),
        ],
        key: &[C(1), C(3)],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::MacroImpl,
        name: "ducklake_macro_impl",
        message: "MacroImpl",
        columns: &[
            col("macro_id", Int8),
            col("impl_id", Int8),
            col("dialect", Varchar),
            col("sql", Varchar),
            col("type", Varchar),
        ],
        key: &[C(0), C(1)],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::MacroParameters,
        name: "ducklake_macro_parameters",
        message: "MacroParameters",
        columns: &[
            col("macro_id", Int8),
            col("impl_id", Int8),
            col("column_id", Int8),
            col("parameter_name", Varchar),
            col("parameter_type", Varchar),
            col("default_value", Varchar),
            col("default_value_type", Varchar),
        ],
        key: &[C(0), C(1), C(2)],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::ObjectTag,
        name: "ducklake_tag",
        message: "ObjectTag",
        columns: &[
            col("object_id", Int8),
            col("begin_snapshot", Int8),
            col("end_snapshot", Int8),
            col("key", Varchar),
            col("value", Varchar),
        ],
        key: &[C(0), RowSeq, C(1)],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::ColumnTag,
        name: "ducklake_column_tag",
        message: "ColumnTag",
        columns: &[
            col("table_id", Int8),
            col("column_id", Int8),
            col("begin_snapshot", Int8),
            col("end_snapshot", Int8),
            col("key", Varchar),
            col("value", Varchar),
        ],
        key: &[C(0), C(1), RowSeq, C(2)],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::SchemaVersions,
        name: "ducklake_schema_versions",
        message: "SchemaVersions",
        columns: &[
            col("begin_snapshot", Int8),
            col("schema_version", Int8),
            col("table_id", Int8),
        ],
        key: &[RowSeq, C(0)],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::ViewColumnTag,
        name: "ducklake_view_column_tag",
        message: "ViewColumnTag",
        columns: &[
            col("view_id", Int8),
            col("column_name", Varchar),
            col("begin_snapshot", Int8),
            col("end_snapshot", Int8),
            col("key", Varchar),
            col("value", Varchar),
        ],
        key: &[C(0), RowSeq, C(2)],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::DataFile,
        name: "ducklake_data_file",
        message: "DataFile",
        columns: &[
            col("data_file_id", Int8),
            col("table_id", Int8),
            col("begin_snapshot", Int8),
            col("end_snapshot", Int8),
            col("file_order", Int8),
            col("path", Varchar),
            col("path_is_relative", Bool),
            col("file_format", Varchar),
            col("record_count", Int8),
            col("file_size_bytes", Int8),
            col("footer_size", Int8),
            col("row_id_start", Int8),
            col("partition_id", Int8),
            col("encryption_key", Varchar),
            col("mapping_id", Int8),
            col("partial_max", Int8),
        ],
        key: &[C(1), C(0)],
        primary_key: &[0],
    },
    CatalogTable {
        tag: Tag::DeleteFile,
        name: "ducklake_delete_file",
        message: "DeleteFile",
        columns: &[
            col("delete_file_id", Int8),
            col("table_id", Int8),
            col("begin_snapshot", Int8),
            col("end_snapshot", Int8),
            col("data_file_id", Int8),
            col("path", Varchar),
            col("path_is_relative", Bool),
            col("format", Varchar),
            col("delete_count", Int8),
            col("file_size_bytes", Int8),
            col("footer_size", Int8),
            col("encryption_key", Varchar),
            col("partial_max", Int8),
        ],
        key: &[C(1), C(0)],
        primary_key: &[0],
    },
    CatalogTable {
        tag: Tag::FileColumnStats,
        name: "ducklake_file_column_stats",
        message: "FileColumnStats",
        columns: &[
            col("data_file_id", Int8),
            col("table_id", Int8),
            col("column_id", Int8),
            col("column_size_bytes", Int8),
            col("value_count", Int8),
            col("null_count", Int8),
            col("min_value", Varchar),
            col("max_value", Varchar),
            col("contains_nan", Bool),
            col("extra_stats", Varchar),
        ],
        key: &[C(1), C(2), C(0), RowSeq],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::FileVariantStats,
        name: "ducklake_file_variant_stats",
        message: "FileVariantStats",
        columns: &[
            col("data_file_id", Int8),
            col("table_id", Int8),
            col("column_id", Int8),
            col("variant_path", Varchar),
            col("shredded_type", Varchar),
            col("column_size_bytes", Int8),
            col("value_count", Int8),
            col("null_count", Int8),
            col("min_value", Varchar),
            col("max_value", Varchar),
            col("contains_nan", Bool),
            col("extra_stats", Varchar),
        ],
        key: &[C(1), C(0), C(2), RowSeq],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::FilePartitionValue,
        name: "ducklake_file_partition_value",
        message: "FilePartitionValue",
        columns: &[
            col("data_file_id", Int8),
            col("table_id", Int8),
            col("partition_key_index", Int8),
            col("partition_value", Varchar),
        ],
        key: &[C(1), C(0), C(2), RowSeq],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::FilesScheduledForDeletion,
        name: "ducklake_files_scheduled_for_deletion",
        message: "FilesScheduledForDeletion",
        columns: &[
            col("data_file_id", Int8),
            col("path", Varchar),
            col("path_is_relative", Bool),
            col("schedule_start", TimestampTz),
        ],
        key: &[C(0), RowSeq],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::TableStats,
        name: "ducklake_table_stats",
        message: "TableStats",
        columns: &[
            col("table_id", Int8),
            col("record_count", Int8),
            col("next_row_id", Int8),
            col("file_size_bytes", Int8),
        ],
        key: &[C(0), RowSeq],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::TableColumnStats,
        name: "ducklake_table_column_stats",
        message: "TableColumnStats",
        columns: &[
            col("table_id", Int8),
            col("column_id", Int8),
            col("contains_null", Bool),
            col("contains_nan", Bool),
            col("min_value", Varchar),
            col("max_value", Varchar),
            col("extra_stats", Varchar),
        ],
        key: &[C(0), C(1), RowSeq],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::PartitionInfo,
        name: "ducklake_partition_info",
        message: "PartitionInfo",
        columns: &[
            col("partition_id", Int8),
            col("table_id", Int8),
            col("begin_snapshot", Int8),
            col("end_snapshot", Int8),
        ],
        key: &[C(1), C(0), C(2)],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::PartitionColumn,
        name: "ducklake_partition_column",
        message: "PartitionColumn",
        columns: &[
            col("partition_id", Int8),
            col("table_id", Int8),
            col("partition_key_index", Int8),
            col("column_id", Int8),
            col("transform", Varchar),
        ],
        key: &[C(1), C(0), C(2), RowSeq],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::SortInfo,
        name: "ducklake_sort_info",
        message: "SortInfo",
        columns: &[
            col("sort_id", Int8),
            col("table_id", Int8),
            col("begin_snapshot", Int8),
            col("end_snapshot", Int8),
        ],
        key: &[C(1), C(0), C(2)],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::SortExpression,
        name: "ducklake_sort_expression",
        message: "SortExpression",
        columns: &[
            col("sort_id", Int8),
            col("table_id", Int8),
            col("sort_key_index", Int8),
            col("expression", Varchar),
            col("dialect", Varchar),
            col("sort_direction", Varchar),
            col("null_order", Varchar),
        ],
        key: &[C(1), C(0), C(2), RowSeq],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::ColumnMapping,
        name: "ducklake_column_mapping",
        message: "ColumnMapping",
        columns: &[
            col("mapping_id", Int8),
            col("table_id", Int8),
            col("type", Varchar),
        ],
        key: &[C(1), C(0), RowSeq],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::NameMapping,
        name: "ducklake_name_mapping",
        message: "NameMapping",
        columns: &[
            col("mapping_id", Int8),
            col("column_id", Int8),
            col("source_name", Varchar),
            col("target_field_id", Int8),
            col("parent_column", Int8),
            col("is_partition", Bool),
        ],
        key: &[C(0), C(1), RowSeq],
        primary_key: &[],
    },
    CatalogTable {
        tag: Tag::InlinedDataTables,
        name: "ducklake_inlined_data_tables",
        message: "InlinedDataTables",
        columns: &[
            col("table_id", Int8),
            col("table_name", Varchar),
            col("schema_version", Int8),
        ],
        key: &[C(0), C(2), RowSeq],
        primary_key: &[],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_column_is_a_bigint_and_primary_keys_lie_in_the_key() {
        for table in CATALOG_TABLES {
            for field in table.key {
                if let KeyField::Column(i) = field {
                    assert_eq!(table.columns[*i].ty, CatalogType::Int8, "{}", table.name);
                }
            }
            for col in table.primary_key {
                assert!(
                    table.is_key_column(*col),
                    "{}: primary key outside the key",
                    table.name
                );
            }
            let names = table.key_field_names();
            let unique: std::collections::HashSet<_> = names.iter().collect();
            assert_eq!(unique.len(), names.len(), "{}", table.name);
        }
    }

    #[test]
    fn versioned_tables_end_with_begin_snapshot() {
        let versioned: Vec<_> = CATALOG_TABLES
            .iter()
            .filter(|t| t.versioned())
            .map(|t| t.name)
            .collect();
        for name in [
            "ducklake_schema",
            "ducklake_table",
            "ducklake_column",
            "ducklake_view",
            "ducklake_macro",
            "ducklake_tag",
            "ducklake_column_tag",
            "ducklake_view_column_tag",
            "ducklake_partition_info",
            "ducklake_sort_info",
        ] {
            assert!(versioned.contains(&name), "{name} should be versioned");
        }
    }

    #[test]
    fn all_twenty_nine_ducklake_tables_are_present_with_distinct_tags() {
        assert_eq!(CATALOG_TABLES.len(), 29);
        let tags: std::collections::HashSet<_> = CATALOG_TABLES.iter().map(|t| t.tag).collect();
        assert_eq!(tags.len(), 29);
        let column = CatalogTable::by_name("ducklake_column").unwrap();
        assert_eq!(column.key_len(), 25, "the seed's column key is 25 bytes");
    }
}
