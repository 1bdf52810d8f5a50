//! Where a relation's rows live ([`Placement`], recorded in the registry when
//! the relation is created) and the resolved layout the store reads and
//! writes by ([`RowLayout`]).

use std::sync::Arc;

use super::catalog::{CatalogLayout, LayoutColumn};
use super::StoredColumn;
use crate::tables::{CatalogTable, KeyField};
use crate::tags::Tag;
use rocklake_types::datum::PgType;

/// The system columns of an inlined-data table, first three columns, by the
/// names of DuckLake up to 1.0 and of 1.1.
const INLINED_SYSTEM_COLUMNS: [[&str; 2]; 3] = [
    ["row_id", "_ducklake_row_id"],
    ["begin_snapshot", "_ducklake_begin_snapshot"],
    ["end_snapshot", "_ducklake_end_snapshot"],
];

/// `tag | prefix... | key...` of every row of a relation; key columns index
/// the stored columns (dropped ones included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// First byte of every row key.
    pub tag: Tag,
    /// Fields after the tag shared by every row.
    pub prefix: Vec<u64>,
    /// The row's own key fields.
    pub key: Vec<KeyField>,
}

fn parse_ids(rest: &str) -> Option<Vec<u64>> {
    rest.split('_')
        .map(|part| part.parse::<u64>().ok())
        .collect()
}

fn is_bigint(column: &StoredColumn) -> bool {
    !column.dropped && column.def.pg_type == PgType::Int8
}

/// The stored index of the live BIGINT column `name`.
fn bigint_named(stored: &[StoredColumn], name: &str) -> Option<usize> {
    stored
        .iter()
        .position(|c| is_bigint(c) && c.def.name == name)
}

impl Placement {
    /// Where the rows of a new relation go: a catalog table's tag and key
    /// when its key columns exist by name (whatever its other columns: any
    /// spec version), the inlined tags when the system columns are where
    /// DuckLake puts them, else generic rows.
    pub fn derive(relation_id: u64, name: &str, stored: &[StoredColumn]) -> Placement {
        if let Some(table) = CatalogTable::by_name(name) {
            let key: Option<Vec<KeyField>> = table
                .key
                .iter()
                .map(|field| match field {
                    KeyField::Column(i) => {
                        bigint_named(stored, table.columns[*i].name).map(KeyField::Column)
                    }
                    KeyField::RowSeq => Some(KeyField::RowSeq),
                })
                .collect();
            if let Some(key) = key {
                return Placement {
                    tag: table.tag,
                    prefix: vec![],
                    key,
                };
            }
        }
        if let Some([table_id, schema_version]) = name
            .strip_prefix("ducklake_inlined_data_")
            .and_then(parse_ids)
            .as_deref()
        {
            let system = INLINED_SYSTEM_COLUMNS.iter().enumerate().all(|(i, names)| {
                stored
                    .get(i)
                    .is_some_and(|c| is_bigint(c) && names.contains(&c.def.name.as_str()))
            });
            if system {
                return Placement {
                    tag: Tag::InlinedData,
                    prefix: vec![*table_id, *schema_version],
                    key: vec![KeyField::Column(0), KeyField::Column(1)],
                };
            }
        }
        Self::inlined_delete(name, stored).unwrap_or_else(|| Self::generic(relation_id))
    }

    /// Where rows went before placements were recorded (registry entries
    /// written before format 2): catalog tags only for the exact DuckLake 1.0
    /// column list, inlined-data system columns by name.
    pub fn legacy(relation_id: u64, name: &str, stored: &[StoredColumn]) -> Placement {
        if let Some(table) = CatalogTable::by_name(name) {
            let exact = table.columns.len() == stored.len()
                && table
                    .columns
                    .iter()
                    .zip(stored)
                    .all(|(t, c)| t.name == c.def.name && t.ty.pg_type() == c.def.pg_type);
            if exact {
                return Placement {
                    tag: table.tag,
                    prefix: vec![],
                    key: table.key.to_vec(),
                };
            }
        }
        if let Some([table_id, schema_version]) = name
            .strip_prefix("ducklake_inlined_data_")
            .and_then(parse_ids)
            .as_deref()
        {
            if let (Some(row_id), Some(begin)) = (
                bigint_named(stored, "row_id"),
                bigint_named(stored, "begin_snapshot"),
            ) {
                return Placement {
                    tag: Tag::InlinedData,
                    prefix: vec![*table_id, *schema_version],
                    key: vec![KeyField::Column(row_id), KeyField::Column(begin)],
                };
            }
        }
        Self::inlined_delete(name, stored).unwrap_or_else(|| Self::generic(relation_id))
    }

    fn inlined_delete(name: &str, stored: &[StoredColumn]) -> Option<Placement> {
        let [table_id] = name
            .strip_prefix("ducklake_inlined_delete_")
            .and_then(parse_ids)?[..]
        else {
            return None;
        };
        let key = ["file_id", "row_id", "begin_snapshot"]
            .iter()
            .map(|n| bigint_named(stored, n).map(KeyField::Column))
            .collect::<Option<Vec<_>>>()?;
        Some(Placement {
            tag: Tag::InlinedDelete,
            prefix: vec![table_id],
            key,
        })
    }

    fn generic(relation_id: u64) -> Placement {
        Placement {
            tag: Tag::GenericRow,
            prefix: vec![relation_id],
            key: vec![KeyField::RowSeq],
        }
    }

    /// The catalog table whose rows these are, if any.
    pub fn catalog_table(&self) -> Option<&'static CatalogTable> {
        CatalogTable::by_tag(self.tag)
    }

    /// Whether stored column `index` is in the key.
    pub fn is_key_column(&self, index: usize) -> bool {
        self.key.contains(&KeyField::Column(index))
    }
}

/// How a relation's rows map to keys, with columns by their live index.
#[derive(Debug, Clone, PartialEq)]
pub enum RowLayout {
    /// A DuckLake catalog table of any spec version.
    Catalog(Arc<CatalogLayout>),
    /// An inlined-data table; `row_id` and `begin_snapshot` are column indexes.
    InlinedData {
        /// DuckLake table id.
        table_id: u64,
        /// DuckLake schema version.
        schema_version: u64,
        /// Index of the row-id column.
        row_id: usize,
        /// Index of the begin-snapshot column.
        begin_snapshot: usize,
    },
    /// An inlined-delete table.
    InlinedDelete {
        /// DuckLake table id.
        table_id: u64,
        /// Index of the `file_id` column.
        file_id: usize,
        /// Index of the `row_id` column.
        row_id: usize,
        /// Index of the `begin_snapshot` column.
        begin_snapshot: usize,
    },
    /// Any other table.
    Generic {
        /// Registry id of the relation.
        relation_id: u64,
    },
}

impl RowLayout {
    /// The layout of rows placed by `placement`, for the stored columns
    /// `stored` of which `live` (stored indexes) are the live ones.
    pub(super) fn build(placement: &Placement, stored: &[StoredColumn], live: &[usize]) -> Self {
        let live_index = |s: usize| {
            live.iter()
                .position(|l| *l == s)
                .expect("key columns are never dropped")
        };
        let key: Vec<KeyField> = placement
            .key
            .iter()
            .map(|f| match f {
                KeyField::Column(s) => KeyField::Column(live_index(*s)),
                KeyField::RowSeq => KeyField::RowSeq,
            })
            .collect();
        let column = |position: usize| match key[position] {
            KeyField::Column(index) => index,
            KeyField::RowSeq => unreachable!("inlined keys hold columns only"),
        };
        if let Some(table) = placement.catalog_table() {
            let columns: Vec<LayoutColumn> = live
                .iter()
                .map(|&s| LayoutColumn {
                    def: &stored[s].def,
                    field: stored[s].field,
                    missing: stored[s].missing.clone(),
                    stored: s,
                })
                .collect();
            return RowLayout::Catalog(Arc::new(CatalogLayout::new(
                table,
                key,
                &columns,
                stored.len(),
            )));
        }
        match placement.tag {
            Tag::InlinedData => RowLayout::InlinedData {
                table_id: placement.prefix[0],
                schema_version: placement.prefix[1],
                row_id: column(0),
                begin_snapshot: column(1),
            },
            Tag::InlinedDelete => RowLayout::InlinedDelete {
                table_id: placement.prefix[0],
                file_id: column(0),
                row_id: column(1),
                begin_snapshot: column(2),
            },
            _ => RowLayout::Generic {
                relation_id: placement.prefix.first().copied().unwrap_or(0),
            },
        }
    }

    /// The catalog layout, if these are a catalog table's rows.
    pub fn catalog(&self) -> Option<&CatalogLayout> {
        match self {
            RowLayout::Catalog(layout) => Some(layout),
            _ => None,
        }
    }

    /// The catalog table, if these are a catalog table's rows.
    pub fn catalog_table(&self) -> Option<&'static CatalogTable> {
        self.catalog().map(|layout| layout.table)
    }

    /// The key fields after the relation's own prefix, in key order: the one
    /// definition of which columns a row's key holds.
    pub fn key_fields(&self) -> Vec<KeyField> {
        match *self {
            RowLayout::Catalog(ref layout) => layout.key().to_vec(),
            RowLayout::InlinedData {
                row_id,
                begin_snapshot,
                ..
            } => vec![KeyField::Column(row_id), KeyField::Column(begin_snapshot)],
            RowLayout::InlinedDelete {
                file_id,
                row_id,
                begin_snapshot,
                ..
            } => vec![
                KeyField::Column(file_id),
                KeyField::Column(row_id),
                KeyField::Column(begin_snapshot),
            ],
            RowLayout::Generic { .. } => vec![KeyField::RowSeq],
        }
    }

    /// Every column stored in the key, in key order.
    pub fn key_columns(&self) -> Vec<usize> {
        self.key_fields()
            .into_iter()
            .filter_map(|field| match field {
                KeyField::Column(index) => Some(index),
                KeyField::RowSeq => None,
            })
            .collect()
    }

    /// The leading key columns, up to the first field that is not a column:
    /// those a scan can pin to seek to a key prefix.
    pub fn seek_columns(&self) -> Vec<usize> {
        self.key_fields()
            .into_iter()
            .map_while(|field| match field {
                KeyField::Column(index) => Some(index),
                KeyField::RowSeq => None,
            })
            .collect()
    }
}
