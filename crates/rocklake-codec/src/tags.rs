//! Key tags: the first byte of every key, naming what kind of row it holds.
//!
//! Tags are allocated in groups with room to grow (see `docs/key-layout.md`):
//!
//! | range       | group                                         |
//! |-------------|-----------------------------------------------|
//! | `0x01-0x1F` | catalog entries (metadata, snapshots, schemas, tables, columns, views, macros, tags) |
//! | `0x20-0x3F` | files and their statistics                    |
//! | `0x40-0x4F` | table statistics                              |
//! | `0x50-0x5F` | physical layout (partitioning, sorting, column mappings) |
//! | `0x60-0x6F` | registries (inlined-data tables, SQL tables, SQL schemas) |
//! | `0x80-0x9F` | rows of dynamic tables (inlined data and deletes, other tables) |
//! | `0xFE`      | counters                                      |
//! | `0xFF`      | system keys with readable string suffixes     |

use std::fmt;

/// The first byte of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Tag {
    /// `ducklake_metadata`.
    Metadata = 0x01,
    /// `ducklake_snapshot`.
    Snapshot = 0x02,
    /// `ducklake_snapshot_changes`.
    SnapshotChanges = 0x03,
    /// `ducklake_schema`.
    Schema = 0x04,
    /// `ducklake_table`.
    Table = 0x05,
    /// `ducklake_column`.
    Column = 0x06,
    /// `ducklake_view`.
    View = 0x07,
    /// `ducklake_macro`.
    Macro = 0x08,
    /// `ducklake_macro_impl`.
    MacroImpl = 0x09,
    /// `ducklake_macro_parameters`.
    MacroParameters = 0x0A,
    /// `ducklake_tag`.
    ObjectTag = 0x0B,
    /// `ducklake_column_tag`.
    ColumnTag = 0x0C,
    /// `ducklake_schema_versions`.
    SchemaVersions = 0x0D,
    /// `ducklake_view_column_tag` (DuckLake 1.1).
    ViewColumnTag = 0x0E,
    /// `ducklake_data_file`.
    DataFile = 0x20,
    /// `ducklake_delete_file`.
    DeleteFile = 0x21,
    /// `ducklake_file_column_stats`.
    FileColumnStats = 0x22,
    /// `ducklake_file_variant_stats`.
    FileVariantStats = 0x23,
    /// `ducklake_file_partition_value`.
    FilePartitionValue = 0x24,
    /// `ducklake_files_scheduled_for_deletion`.
    FilesScheduledForDeletion = 0x25,
    /// `ducklake_table_stats`.
    TableStats = 0x40,
    /// `ducklake_table_column_stats`.
    TableColumnStats = 0x41,
    /// `ducklake_partition_info`.
    PartitionInfo = 0x50,
    /// `ducklake_partition_column`.
    PartitionColumn = 0x51,
    /// `ducklake_sort_info`.
    SortInfo = 0x52,
    /// `ducklake_sort_expression`.
    SortExpression = 0x53,
    /// `ducklake_column_mapping`.
    ColumnMapping = 0x54,
    /// `ducklake_name_mapping`.
    NameMapping = 0x55,
    /// `ducklake_inlined_data_tables`.
    InlinedDataTables = 0x60,
    /// The relation registry: one key per SQL table that exists.
    Relation = 0x61,
    /// The namespace registry: one key per SQL schema created.
    Namespace = 0x62,
    /// Rows of `ducklake_inlined_data_<table>_<version>` tables.
    InlinedData = 0x80,
    /// Rows of `ducklake_inlined_delete_<table>` tables.
    InlinedDelete = 0x81,
    /// Rows of any other table created over SQL.
    GenericRow = 0x90,
    /// Counters.
    Counter = 0xFE,
    /// System keys.
    System = 0xFF,
}

impl Tag {
    /// Every tag, in byte order.
    pub const ALL: [Tag; 36] = [
        Tag::Metadata,
        Tag::Snapshot,
        Tag::SnapshotChanges,
        Tag::Schema,
        Tag::Table,
        Tag::Column,
        Tag::View,
        Tag::Macro,
        Tag::MacroImpl,
        Tag::MacroParameters,
        Tag::ObjectTag,
        Tag::ColumnTag,
        Tag::SchemaVersions,
        Tag::ViewColumnTag,
        Tag::DataFile,
        Tag::DeleteFile,
        Tag::FileColumnStats,
        Tag::FileVariantStats,
        Tag::FilePartitionValue,
        Tag::FilesScheduledForDeletion,
        Tag::TableStats,
        Tag::TableColumnStats,
        Tag::PartitionInfo,
        Tag::PartitionColumn,
        Tag::SortInfo,
        Tag::SortExpression,
        Tag::ColumnMapping,
        Tag::NameMapping,
        Tag::InlinedDataTables,
        Tag::Relation,
        Tag::Namespace,
        Tag::InlinedData,
        Tag::InlinedDelete,
        Tag::GenericRow,
        Tag::Counter,
        Tag::System,
    ];

    /// The tag's byte.
    pub fn byte(self) -> u8 {
        self as u8
    }

    /// The tag for a byte, if one is allocated.
    pub fn from_byte(byte: u8) -> Option<Tag> {
        Tag::ALL.iter().copied().find(|t| t.byte() == byte)
    }

    /// A short readable name, used in key dumps and error messages.
    pub fn name(self) -> &'static str {
        match self {
            Tag::Metadata => "metadata",
            Tag::Snapshot => "snapshot",
            Tag::SnapshotChanges => "snapshot_changes",
            Tag::Schema => "schema",
            Tag::Table => "table",
            Tag::Column => "column",
            Tag::View => "view",
            Tag::Macro => "macro",
            Tag::MacroImpl => "macro_impl",
            Tag::MacroParameters => "macro_parameters",
            Tag::ObjectTag => "tag",
            Tag::ColumnTag => "column_tag",
            Tag::SchemaVersions => "schema_versions",
            Tag::ViewColumnTag => "view_column_tag",
            Tag::DataFile => "data_file",
            Tag::DeleteFile => "delete_file",
            Tag::FileColumnStats => "file_column_stats",
            Tag::FileVariantStats => "file_variant_stats",
            Tag::FilePartitionValue => "file_partition_value",
            Tag::FilesScheduledForDeletion => "files_scheduled_for_deletion",
            Tag::TableStats => "table_stats",
            Tag::TableColumnStats => "table_column_stats",
            Tag::PartitionInfo => "partition_info",
            Tag::PartitionColumn => "partition_column",
            Tag::SortInfo => "sort_info",
            Tag::SortExpression => "sort_expression",
            Tag::ColumnMapping => "column_mapping",
            Tag::NameMapping => "name_mapping",
            Tag::InlinedDataTables => "inlined_data_tables",
            Tag::Relation => "relation",
            Tag::Namespace => "namespace",
            Tag::InlinedData => "inlined_data",
            Tag::InlinedDelete => "inlined_delete",
            Tag::GenericRow => "generic_row",
            Tag::Counter => "counter",
            Tag::System => "system",
        }
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(0x{:02X})", self.name(), self.byte())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_unique_and_sorted() {
        for pair in Tag::ALL.windows(2) {
            assert!(
                pair[0].byte() < pair[1].byte(),
                "{} !< {}",
                pair[0],
                pair[1]
            );
        }
        for tag in Tag::ALL {
            assert_eq!(Tag::from_byte(tag.byte()), Some(tag));
        }
        assert_eq!(Tag::from_byte(0x00), None);
    }
}
