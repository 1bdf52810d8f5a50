//! Relations (SQL tables) and where their rows live in the key space.
//!
//! Every table created over SQL is recorded in the relation registry
//! (`0x61 | relation_id`) with every column it ever had (dropped ones marked,
//! as PostgreSQL's pg_attribute keeps them) and its [`Placement`], fixed at
//! CREATE TABLE. Its rows are stored by one of four layouts:
//! - a DuckLake catalog table of any spec version: the table's own tag and key,
//!   columns found by name (see [`catalog`] and [`crate::tables`]);
//! - `ducklake_inlined_data_<T>_<V>`: `0x80 | T | V | row_id | begin_snapshot`,
//!   the system columns found by position (any spec's names);
//! - `ducklake_inlined_delete_<T>`: `0x81 | T | file_id | row_id | begin_snapshot`;
//! - anything else: `0x90 | relation_id | row_seq`.
//!
//! Rows of the last three are [`pb::DynamicRow`] values: one cell per stored
//! non-key column, in stored order (a dropped column's cell is NULL; a row
//! written before a column was added has fewer cells and reads the column's
//! missing value). ALTER TABLE changes the registry entry only (see
//! [`alter`]), never the rows, except where PostgreSQL rewrites them too.

pub mod alter;
pub mod catalog;
pub mod cells;
mod layout;

use prost::Message;

pub use layout::{Placement, RowLayout};

use crate::keys::{encode_key, field_at};
use crate::tables::KeyField;
use crate::tags::Tag;
use crate::values::{self, pb, ValueError};
use catalog::{proto_field, FIRST_EXTRA_FIELD};
use cells::{cell_to_datum, datum_to_cell};
use rocklake_types::datum::{ColumnDef, Datum, PgType};
use rocklake_types::value::text::{format_text, parse_text};

/// One column as the registry keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredColumn {
    /// Name, type, NOT NULL and DEFAULT.
    pub def: ColumnDef,
    /// Dropped by ALTER TABLE: hidden from SQL, its stored data skipped.
    pub dropped: bool,
    /// Catalog tables: the value-message field holding the column.
    pub field: u32,
    /// The value of rows written before the column was added.
    pub missing: Option<Datum>,
}

impl StoredColumn {
    fn new(def: ColumnDef) -> Self {
        StoredColumn {
            def,
            dropped: false,
            field: 0,
            missing: None,
        }
    }
}

/// A relation as recorded in the registry, with the key layout of its rows
/// (resolved once, when the relation is built).
#[derive(Debug, Clone, PartialEq)]
pub struct Relation {
    /// Registry id (`0x61 | relation_id`).
    pub relation_id: u64,
    /// Schema name.
    pub schema: String,
    /// Table name.
    pub name: String,
    /// The live columns, in declaration order: what SQL sees.
    pub columns: Vec<ColumnDef>,
    /// Indexes (into `columns`) of the declared primary key.
    pub primary_key: Vec<usize>,
    stored: Vec<StoredColumn>,
    /// Stored index of each live column.
    live: Vec<usize>,
    /// Stored indexes of the declared primary key.
    stored_primary_key: Vec<usize>,
    placement: Placement,
    /// Whether the registry entry records the placement (format 2).
    placement_recorded: bool,
    layout: RowLayout,
}

impl Relation {
    /// A new relation; where its rows live is derived from its name and columns.
    pub fn new(
        relation_id: u64,
        schema: String,
        name: String,
        columns: Vec<ColumnDef>,
        primary_key: Vec<usize>,
    ) -> Relation {
        let stored: Vec<StoredColumn> = columns.into_iter().map(StoredColumn::new).collect();
        let placement = Placement::derive(relation_id, &name, &stored);
        Relation::assemble(
            relation_id,
            schema,
            name,
            stored,
            primary_key,
            placement,
            true,
        )
    }

    /// Builds a relation from its stored parts, giving catalog columns
    /// without a field one (by name from the `.proto`, or a new extra field).
    fn assemble(
        relation_id: u64,
        schema: String,
        name: String,
        mut stored: Vec<StoredColumn>,
        stored_primary_key: Vec<usize>,
        placement: Placement,
        placement_recorded: bool,
    ) -> Relation {
        if let Some(table) = placement.catalog_table() {
            for index in 0..stored.len() {
                if stored[index].field != 0 || placement.is_key_column(index) {
                    continue;
                }
                let taken = |field: u32| stored.iter().any(|c| c.field == field);
                let column = &stored[index].def;
                stored[index].field = match proto_field(table, &column.name, &column.pg_type) {
                    Some(field) if !taken(field) => field,
                    _ => next_extra_field(&stored),
                };
            }
        }
        let live: Vec<usize> = (0..stored.len()).filter(|i| !stored[*i].dropped).collect();
        let columns = live.iter().map(|&i| stored[i].def.clone()).collect();
        let primary_key = stored_primary_key
            .iter()
            .filter_map(|s| live.iter().position(|l| l == s))
            .collect();
        let layout = RowLayout::build(&placement, &stored, &live);
        Relation {
            relation_id,
            schema,
            name,
            columns,
            primary_key,
            stored,
            live,
            stored_primary_key,
            placement,
            placement_recorded,
            layout,
        }
    }

    /// Index of the live column named `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The column playing the DuckLake role `role` (`row_id`,
    /// `begin_snapshot`, `end_snapshot`, or any column name): in an
    /// inlined-data table the system columns are its first three whatever
    /// their names (`_ducklake_row_id`... since DuckLake 1.1, where a user
    /// column may be called `row_id`); elsewhere the column of that name.
    pub fn role_column(&self, role: &str) -> Option<usize> {
        if self.placement.tag == Tag::InlinedData {
            let system = ["row_id", "begin_snapshot", "end_snapshot"];
            if let Some(position) = system.iter().position(|s| *s == role) {
                return self.live.iter().position(|s| *s == position);
            }
        }
        self.column_index(role)
    }

    /// The key layout of this relation's rows.
    pub fn layout(&self) -> &RowLayout {
        &self.layout
    }

    /// Where this relation's rows live.
    pub fn placement(&self) -> &Placement {
        &self.placement
    }

    /// Every column the registry keeps, dropped ones included.
    pub fn stored_columns(&self) -> &[StoredColumn] {
        &self.stored
    }

    /// Whether the registry entry was written before placements were recorded
    /// (the store's upgrade rewrites it, moving the rows if the placement a
    /// new relation of this name and columns would get differs).
    pub fn is_legacy(&self) -> bool {
        !self.placement_recorded
    }

    /// This relation as it is placed when created now (the target of the
    /// upgrade of a legacy entry).
    pub fn with_current_placement(&self) -> Relation {
        let placement = Placement::derive(self.relation_id, &self.name, &self.stored);
        let mut stored = self.stored.clone();
        if placement != self.placement {
            for column in &mut stored {
                column.field = 0;
            }
        }
        Relation::assemble(
            self.relation_id,
            self.schema.clone(),
            self.name.clone(),
            stored,
            self.stored_primary_key.clone(),
            placement,
            true,
        )
    }

    /// Whether rows of both relations would share keys (the same catalog
    /// table, or the same inlined table).
    pub fn shares_rows_with(&self, other: &Relation) -> bool {
        self.placement.tag == other.placement.tag && self.placement.prefix == other.placement.prefix
    }

    /// Registry key of this relation.
    pub fn registry_key(&self) -> Vec<u8> {
        encode_key(Tag::Relation, &[self.relation_id])
    }

    /// Encodes the registry value.
    pub fn encode(&self) -> Vec<u8> {
        let key = self
            .placement
            .key
            .iter()
            .map(|field| match field {
                KeyField::RowSeq => 0,
                KeyField::Column(i) => *i as u32 + 1,
            })
            .collect();
        pb::RelationDef {
            schema_name: self.schema.clone(),
            name: self.name.clone(),
            columns: self
                .stored
                .iter()
                .map(|c| pb::ColumnDef {
                    name: c.def.name.clone(),
                    type_name: type_text(&c.def.pg_type),
                    not_null: c.def.not_null,
                    default_text: c.def.default.clone(),
                    dropped: c.dropped,
                    field: c.field,
                    missing_text: c.missing.as_ref().and_then(format_text),
                })
                .collect(),
            primary_key: self.stored_primary_key.iter().map(|i| *i as u32).collect(),
            layout: Some(pb::RowLayoutDef {
                tag: u32::from(self.placement.tag.byte()),
                prefix: self.placement.prefix.clone(),
                key,
            }),
        }
        .encode_to_vec()
    }

    /// Decodes a registry entry.
    pub fn decode(relation_id: u64, bytes: &[u8]) -> Result<Relation, ValueError> {
        let corrupt = |reason: String| ValueError::Corrupt {
            table: format!("relation {relation_id}"),
            reason,
        };
        let def = pb::RelationDef::decode(bytes).map_err(|e| corrupt(e.to_string()))?;
        let stored = def
            .columns
            .into_iter()
            .map(|c| {
                let pg_type = PgType::from_sql_name(&c.type_name)
                    .ok_or_else(|| corrupt(format!("unknown type {:?}", c.type_name)))?;
                let missing = match &c.missing_text {
                    Some(text) => Some(parse_text(text, &pg_type).map_err(|e| {
                        corrupt(format!("missing value of {}: {}", c.name, e.message))
                    })?),
                    None => None,
                };
                Ok(StoredColumn {
                    def: ColumnDef {
                        name: c.name,
                        pg_type,
                        not_null: c.not_null,
                        default: c.default_text,
                        table_column: None,
                    },
                    dropped: c.dropped,
                    field: c.field,
                    missing,
                })
            })
            .collect::<Result<Vec<_>, ValueError>>()?;
        let placement = match &def.layout {
            Some(layout) => decode_placement(layout, stored.len()).map_err(corrupt)?,
            None => Placement::legacy(relation_id, &def.name, &stored),
        };
        Ok(Relation::assemble(
            relation_id,
            def.schema_name,
            def.name,
            stored,
            def.primary_key.into_iter().map(|i| i as usize).collect(),
            placement,
            def.layout.is_some(),
        ))
    }

    /// Key tag and the prefix fields shared by every row of this relation.
    pub fn row_prefix(&self) -> (Tag, Vec<u64>) {
        (self.placement.tag, self.placement.prefix.clone())
    }

    /// The key of `row`, with `row_seq` as its hidden identity.
    pub fn row_key(&self, row: &[Datum], row_seq: u64) -> Result<Vec<u8>, ValueError> {
        self.check_arity(row)?;
        if let RowLayout::Catalog(layout) = &self.layout {
            return layout.encode_key(row, row_seq);
        }
        let (tag, mut fields) = self.row_prefix();
        for field in self.layout.key_fields() {
            fields.push(match field {
                KeyField::Column(index) => self.key_value(row, index)?,
                KeyField::RowSeq => row_seq,
            });
        }
        Ok(encode_key(tag, &fields))
    }

    fn key_value(&self, row: &[Datum], index: usize) -> Result<u64, ValueError> {
        let column = &self.columns[index].name;
        match &row[index] {
            Datum::Null => Err(ValueError::NullKey {
                table: self.name.clone(),
                column: column.clone(),
            }),
            Datum::Int8(v) => u64::try_from(*v).map_err(|_| ValueError::NegativeKey {
                table: self.name.clone(),
                column: column.clone(),
                value: *v,
            }),
            other => Err(ValueError::TypeMismatch {
                table: self.name.clone(),
                column: column.clone(),
                expected: "bigint".to_string(),
                actual: format!("{other:?}"),
            }),
        }
    }

    fn check_arity(&self, row: &[Datum]) -> Result<(), ValueError> {
        if row.len() != self.columns.len() {
            return Err(ValueError::Arity {
                table: self.name.clone(),
                actual: row.len(),
                expected: self.columns.len(),
            });
        }
        Ok(())
    }

    /// The value of `row`.
    pub fn row_value(&self, row: &[Datum], row_seq: u64) -> Result<Vec<u8>, ValueError> {
        self.check_arity(row)?;
        if let RowLayout::Catalog(layout) = &self.layout {
            return layout.encode_value(row, row_seq);
        }
        let mut cells = Vec::with_capacity(self.stored.len());
        let mut live = row.iter().zip(&self.columns);
        for (index, column) in self.stored.iter().enumerate() {
            if column.dropped {
                cells.push(datum_to_cell(&Datum::Null));
                continue;
            }
            let (datum, def) = live.next().expect("arity checked");
            if self.placement.is_key_column(index) {
                continue;
            }
            if datum.is_null() && def.not_null {
                return Err(ValueError::NotNull {
                    table: self.name.clone(),
                    column: def.name.clone(),
                });
            }
            cells.push(datum_to_cell(datum));
        }
        Ok(pb::DynamicRow { cells, row_seq }.encode_to_vec())
    }

    /// Rebuilds a row and its row sequence from key and value bytes.
    pub fn decode_row(&self, key: &[u8], value: &[u8]) -> Result<values::DecodedRow, ValueError> {
        self.decode_row_with(key, value, None)
    }

    /// [`Relation::decode_row`] where catalog-table columns whose `wanted`
    /// entry is false are left NULL undecoded (other layouts decode every
    /// column).
    pub fn decode_row_with(
        &self,
        key: &[u8],
        value: &[u8],
        wanted: Option<&[bool]>,
    ) -> Result<values::DecodedRow, ValueError> {
        if let RowLayout::Catalog(layout) = &self.layout {
            return layout.decode(key, value, wanted);
        }
        let corrupt = |reason: String| ValueError::Corrupt {
            table: self.name.clone(),
            reason,
        };
        let stored_row = pb::DynamicRow::decode(value).map_err(|e| corrupt(e.to_string()))?;
        let mut row = Vec::with_capacity(self.columns.len());
        let mut cells = stored_row.cells.into_iter();
        let mut key_position = 0;
        let prefix = self.placement.prefix.len();
        for (index, column) in self.stored.iter().enumerate() {
            if self.placement.is_key_column(index) {
                let position = self
                    .placement
                    .key
                    .iter()
                    .position(|f| *f == KeyField::Column(index))
                    .expect("a key column");
                let raw = field_at(key, prefix + position)
                    .ok_or_else(|| corrupt("key too short".to_string()))?;
                row.push(Datum::Int8(raw as i64));
                key_position += 1;
                continue;
            }
            let cell = cells.next();
            if column.dropped {
                continue;
            }
            row.push(match cell {
                Some(cell) => cell_to_datum(cell, &column.def.pg_type).map_err(corrupt)?,
                None => column.missing.clone().unwrap_or(Datum::Null),
            });
        }
        debug_assert_eq!(key_position, self.layout.key_columns().len());
        Ok(values::DecodedRow {
            row,
            row_seq: stored_row.row_seq,
        })
    }
}

/// The first extra field (from [`FIRST_EXTRA_FIELD`] up) no stored column
/// uses, for a catalog column the `.proto` does not name or must not reuse.
fn next_extra_field(stored: &[StoredColumn]) -> u32 {
    stored
        .iter()
        .map(|c| c.field + 1)
        .chain([FIRST_EXTRA_FIELD])
        .max()
        .expect("not empty")
}

/// The placement a registry entry records.
fn decode_placement(layout: &pb::RowLayoutDef, columns: usize) -> Result<Placement, String> {
    let tag = u8::try_from(layout.tag)
        .ok()
        .and_then(Tag::from_byte)
        .ok_or_else(|| format!("unknown row tag {}", layout.tag))?;
    let key = layout
        .key
        .iter()
        .map(|&field| match field {
            0 => Ok(KeyField::RowSeq),
            n if (n as usize) <= columns => Ok(KeyField::Column(n as usize - 1)),
            n => Err(format!("key field {n} beyond the {columns} columns")),
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Placement {
        tag,
        prefix: layout.prefix.clone(),
        key,
    })
}

/// The text RockLake stores for a column type (parsed back by
/// [`PgType::from_sql_name`]).
pub fn type_text(pg_type: &PgType) -> String {
    match pg_type {
        PgType::Numeric(Some((p, s))) => format!("numeric({p},{s})"),
        other => other.type_name().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::CatalogTable;
    use proptest::prelude::*;

    fn inlined_relation() -> Relation {
        Relation::new(
            9,
            "public".into(),
            "ducklake_inlined_data_3_2".into(),
            vec![
                ColumnDef::new("row_id", PgType::Int8),
                ColumnDef::new("begin_snapshot", PgType::Int8),
                ColumnDef::new("end_snapshot", PgType::Int8),
                ColumnDef::new("a", PgType::Int4),
                ColumnDef::new("b", PgType::Bytea),
                ColumnDef::new("c", PgType::Numeric(Some((18, 3)))),
                ColumnDef::new("d", PgType::Interval),
                ColumnDef::new("e", PgType::TimeTz),
            ],
            vec![],
        )
    }

    #[test]
    fn layouts_follow_names() {
        let relation = inlined_relation();
        assert!(matches!(
            relation.layout(),
            RowLayout::InlinedData {
                table_id: 3,
                schema_version: 2,
                row_id: 0,
                begin_snapshot: 1
            }
        ));
        let other = Relation::new(
            9,
            "public".into(),
            "ducklake_inlined_data_x".into(),
            relation.columns.clone(),
            vec![],
        );
        assert_eq!(other.layout(), &RowLayout::Generic { relation_id: 9 });
        let catalog = Relation::new(
            1,
            "public".into(),
            "ducklake_snapshot".into(),
            CatalogTable::by_name("ducklake_snapshot")
                .unwrap()
                .column_defs(),
            vec![0],
        );
        assert!(matches!(catalog.layout(), RowLayout::Catalog(t) if t.table.tag == Tag::Snapshot));
    }

    #[test]
    fn registry_entry_round_trips() {
        let relation = inlined_relation();
        let decoded = Relation::decode(9, &relation.encode()).unwrap();
        assert_eq!(decoded, relation);
    }

    #[test]
    fn inlined_key_is_table_version_row_begin() {
        let relation = inlined_relation();
        let row = vec![
            Datum::Int8(40),
            Datum::Int8(7),
            Datum::Null,
            Datum::Int4(-5),
            Datum::Bytea(b"hi".to_vec()),
            Datum::Numeric("-12.340".into()),
            Datum::Interval {
                months: 1,
                days: -2,
                micros: 3,
            },
            Datum::TimeTz {
                micros: 5,
                offset_west_secs: -7200,
            },
        ];
        let key = relation.row_key(&row, 99).unwrap();
        assert_eq!(key, encode_key(Tag::InlinedData, &[3, 2, 40, 7]));
        let value = relation.row_value(&row, 99).unwrap();
        let decoded = relation.decode_row(&key, &value).unwrap();
        assert_eq!(decoded.row, row);
        assert_eq!(decoded.row_seq, 99);
    }

    fn any_cell() -> impl Strategy<Value = (PgType, Datum)> {
        prop_oneof![
            Just((PgType::Int4, Datum::Null)),
            any::<bool>().prop_map(|b| (PgType::Bool, Datum::Bool(b))),
            any::<i16>().prop_map(|v| (PgType::Int2, Datum::Int2(v))),
            any::<i32>().prop_map(|v| (PgType::Int4, Datum::Int4(v))),
            any::<i64>().prop_map(|v| (PgType::Int8, Datum::Int8(v))),
            any::<i64>().prop_map(|v| (PgType::TimestampTz, Datum::TimestampTz(v))),
            any::<i32>().prop_map(|v| (PgType::Date, Datum::Date(v))),
            any::<f64>()
                .prop_filter("NaN != NaN", |v| !v.is_nan())
                .prop_map(|v| (PgType::Float8, Datum::Float8(v))),
            ".*".prop_map(|s| (PgType::Varchar, Datum::Text(s.into()))),
            proptest::collection::vec(any::<u8>(), 0..40)
                .prop_map(|b| (PgType::Bytea, Datum::Bytea(b))),
            any::<[u8; 16]>().prop_map(|u| (PgType::Uuid, Datum::Uuid(u))),
        ]
    }

    proptest! {
        #[test]
        fn dynamic_rows_round_trip(cells in proptest::collection::vec(any_cell(), 0..8), row_id in 0u64..u64::MAX / 2, seq in any::<u64>()) {
            let mut columns = vec![ColumnDef::new("file_id", PgType::Int8), ColumnDef::new("row_id", PgType::Int8), ColumnDef::new("begin_snapshot", PgType::Int8)];
            let mut row = vec![Datum::Int8(1), Datum::Int8(row_id as i64), Datum::Int8(5)];
            for (i, (ty, datum)) in cells.into_iter().enumerate() {
                columns.push(ColumnDef::new(format!("c{i}"), ty));
                row.push(datum);
            }
            let relation = Relation::new(2, "public".into(), "ducklake_inlined_delete_8".into(), columns, vec![]);
            let key = relation.row_key(&row, seq).unwrap();
            prop_assert_eq!(key.len(), 1 + 8 * 4);
            let value = relation.row_value(&row, seq).unwrap();
            let decoded = relation.decode_row(&key, &value).unwrap();
            prop_assert_eq!(decoded.row, row);
            prop_assert_eq!(decoded.row_seq, seq);
        }
    }
}
