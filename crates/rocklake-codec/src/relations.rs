//! Relations (SQL tables) and where their rows live in the key space.
//!
//! Every table created over SQL is recorded in the relation registry
//! (`0x61 | relation_id`). Its rows are stored by one of four layouts, chosen from
//! its name and columns:
//! - a DuckLake catalog table: the table's own tag and key (see [`crate::tables`]);
//! - `ducklake_inlined_data_<T>_<V>`: `0x80 | T | V | row_id | begin_snapshot`;
//! - `ducklake_inlined_delete_<T>`: `0x81 | T | file_id | row_id | begin_snapshot`;
//! - anything else: `0x90 | relation_id | row_seq`.
//!
//! Rows of the last three are [`pb::DynamicRow`] values: one cell per non-key
//! column, typed by the relation's column definitions.

use prost::Message;

use crate::keys::{encode_key, field_at};
use crate::tables::{CatalogTable, KeyField};
use crate::tags::Tag;
use crate::values::{self, pb, ValueError};
use rocklake_types::datum::{ColumnDef, Datum, PgType};

/// A relation as recorded in the registry, with the key layout of its rows
/// (derived once, when the relation is built).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relation {
    /// Registry id (`0x61 | relation_id`).
    pub relation_id: u64,
    /// Schema name.
    pub schema: String,
    /// Table name.
    pub name: String,
    /// Columns in declaration order.
    pub columns: Vec<ColumnDef>,
    /// Column indexes of the declared primary key.
    pub primary_key: Vec<usize>,
    layout: RowLayout,
}

/// How a relation's rows map to keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowLayout {
    /// A DuckLake catalog table.
    Catalog(&'static CatalogTable),
    /// An inlined-data table; `row_id` and `begin_snapshot` are the column indexes.
    InlinedData {
        /// DuckLake table id.
        table_id: u64,
        /// DuckLake schema version.
        schema_version: u64,
        /// Index of the `row_id` column.
        row_id: usize,
        /// Index of the `begin_snapshot` column.
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

fn bigint_column(columns: &[ColumnDef], name: &str) -> Option<usize> {
    columns
        .iter()
        .position(|c| c.name == name && c.pg_type == PgType::Int8)
}

fn parse_ids(rest: &str) -> Option<Vec<u64>> {
    rest.split('_')
        .map(|part| part.parse::<u64>().ok())
        .collect()
}

impl RowLayout {
    /// The layout of the rows of a relation with this id, name and columns.
    fn derive(relation_id: u64, name: &str, columns: &[ColumnDef]) -> RowLayout {
        if let Some(table) = CatalogTable::by_name(name) {
            if table.columns.len() == columns.len()
                && table
                    .columns
                    .iter()
                    .zip(columns)
                    .all(|(t, c)| t.name == c.name && t.ty.pg_type() == c.pg_type)
            {
                return RowLayout::Catalog(table);
            }
        }
        if let Some(ids) = name
            .strip_prefix("ducklake_inlined_data_")
            .and_then(parse_ids)
        {
            if let ([table_id, schema_version], Some(row_id), Some(begin_snapshot)) = (
                ids.as_slice(),
                bigint_column(columns, "row_id"),
                bigint_column(columns, "begin_snapshot"),
            ) {
                return RowLayout::InlinedData {
                    table_id: *table_id,
                    schema_version: *schema_version,
                    row_id,
                    begin_snapshot,
                };
            }
        }
        if let Some(ids) = name
            .strip_prefix("ducklake_inlined_delete_")
            .and_then(parse_ids)
        {
            if let ([table_id], Some(file_id), Some(row_id), Some(begin_snapshot)) = (
                ids.as_slice(),
                bigint_column(columns, "file_id"),
                bigint_column(columns, "row_id"),
                bigint_column(columns, "begin_snapshot"),
            ) {
                return RowLayout::InlinedDelete {
                    table_id: *table_id,
                    file_id,
                    row_id,
                    begin_snapshot,
                };
            }
        }
        RowLayout::Generic { relation_id }
    }

    /// The key fields after the relation's own prefix (see
    /// [`Relation::row_prefix`]), in key order: the one definition of which
    /// columns a row's key holds.
    pub fn key_fields(&self) -> Vec<KeyField> {
        match *self {
            RowLayout::Catalog(table) => table.key.to_vec(),
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

impl Relation {
    /// A relation; its row layout is derived from its name and columns.
    pub fn new(
        relation_id: u64,
        schema: String,
        name: String,
        columns: Vec<ColumnDef>,
        primary_key: Vec<usize>,
    ) -> Relation {
        let layout = RowLayout::derive(relation_id, &name, &columns);
        Relation {
            relation_id,
            schema,
            name,
            columns,
            primary_key,
            layout,
        }
    }

    /// Index of the column named `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The key layout of this relation's rows.
    pub fn layout(&self) -> RowLayout {
        self.layout
    }

    /// Registry key of this relation.
    pub fn registry_key(&self) -> Vec<u8> {
        encode_key(Tag::Relation, &[self.relation_id])
    }

    /// Encodes the registry value.
    pub fn encode(&self) -> Vec<u8> {
        pb::RelationDef {
            schema_name: self.schema.clone(),
            name: self.name.clone(),
            columns: self
                .columns
                .iter()
                .map(|c| pb::ColumnDef {
                    name: c.name.clone(),
                    type_name: type_text(&c.pg_type),
                    not_null: c.not_null,
                })
                .collect(),
            primary_key: self.primary_key.iter().map(|i| *i as u32).collect(),
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
        let columns = def
            .columns
            .into_iter()
            .map(|c| {
                let pg_type = PgType::from_sql_name(&c.type_name)
                    .ok_or_else(|| corrupt(format!("unknown type {:?}", c.type_name)))?;
                Ok(ColumnDef {
                    name: c.name,
                    pg_type,
                    not_null: c.not_null,
                })
            })
            .collect::<Result<Vec<_>, ValueError>>()?;
        Ok(Relation::new(
            relation_id,
            def.schema_name,
            def.name,
            columns,
            def.primary_key.into_iter().map(|i| i as usize).collect(),
        ))
    }

    /// Key tag and the prefix fields shared by every row of this relation.
    pub fn row_prefix(&self) -> (Tag, Vec<u64>) {
        match self.layout() {
            RowLayout::Catalog(table) => (table.tag, vec![]),
            RowLayout::InlinedData {
                table_id,
                schema_version,
                ..
            } => (Tag::InlinedData, vec![table_id, schema_version]),
            RowLayout::InlinedDelete { table_id, .. } => (Tag::InlinedDelete, vec![table_id]),
            RowLayout::Generic { relation_id } => (Tag::GenericRow, vec![relation_id]),
        }
    }

    /// The key of `row`, with `row_seq` as its hidden identity.
    pub fn row_key(&self, row: &[Datum], row_seq: u64) -> Result<Vec<u8>, ValueError> {
        self.check_arity(row)?;
        if let RowLayout::Catalog(table) = self.layout() {
            return values::catalog_key(table, row, row_seq);
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
        if let RowLayout::Catalog(table) = self.layout() {
            return values::encode_catalog_value(table, row, row_seq);
        }
        let key_columns = self.layout.key_columns();
        let mut cells = Vec::with_capacity(row.len());
        for (index, datum) in row.iter().enumerate() {
            if key_columns.contains(&index) {
                continue;
            }
            let column = &self.columns[index];
            if datum.is_null() && column.not_null {
                return Err(ValueError::NotNull {
                    table: self.name.clone(),
                    column: column.name.clone(),
                });
            }
            cells.push(datum_to_cell(datum));
        }
        Ok(pb::DynamicRow { cells, row_seq }.encode_to_vec())
    }

    /// Rebuilds a row and its row sequence from key and value bytes.
    pub fn decode_row(&self, key: &[u8], value: &[u8]) -> Result<values::DecodedRow, ValueError> {
        self.decode_row_with(self.layout(), key, value, None)
    }

    /// [`Relation::decode_row`] with the layout already resolved (scans resolve
    /// it once, not per row). Catalog-table columns whose `wanted` entry is
    /// false are left NULL undecoded; other layouts decode every column.
    pub fn decode_row_with(
        &self,
        layout: RowLayout,
        key: &[u8],
        value: &[u8],
        wanted: Option<&[bool]>,
    ) -> Result<values::DecodedRow, ValueError> {
        if let RowLayout::Catalog(table) = layout {
            return values::decode_catalog_columns(table, key, value, wanted);
        }
        let corrupt = |reason: String| ValueError::Corrupt {
            table: self.name.clone(),
            reason,
        };
        let (_, prefix) = self.row_prefix();
        let key_columns = layout.key_columns();
        let stored = pb::DynamicRow::decode(value).map_err(|e| corrupt(e.to_string()))?;
        let mut row = vec![Datum::Null; self.columns.len()];
        for (position, index) in key_columns.iter().enumerate() {
            let raw = field_at(key, prefix.len() + position)
                .ok_or_else(|| corrupt("key too short".to_string()))?;
            row[*index] = Datum::Int8(raw as i64);
        }
        let mut cells = stored.cells.into_iter();
        for (index, slot) in row.iter_mut().enumerate() {
            if key_columns.contains(&index) {
                continue;
            }
            let cell = cells.next().ok_or_else(|| {
                corrupt(format!(
                    "missing cell for column {}",
                    self.columns[index].name
                ))
            })?;
            *slot = cell_to_datum(cell, &self.columns[index].pg_type).map_err(corrupt)?;
        }
        Ok(values::DecodedRow {
            row,
            row_seq: stored.row_seq,
        })
    }
}

/// The text RockLake stores for a column type (parsed back by
/// [`PgType::from_sql_name`]).
fn type_text(pg_type: &PgType) -> String {
    match pg_type {
        PgType::Numeric(Some((p, s))) => format!("numeric({p},{s})"),
        other => other.type_name().to_string(),
    }
}

fn datum_to_cell(datum: &Datum) -> pb::Cell {
    use pb::cell::Value as V;
    let value = match datum {
        Datum::Null => V::IsNull(true),
        Datum::Bool(b) => V::BoolValue(*b),
        Datum::Int2(v) => V::IntValue(i64::from(*v)),
        Datum::Int4(v) => V::IntValue(i64::from(*v)),
        Datum::Int8(v) | Datum::TimestampTz(v) | Datum::Timestamp(v) | Datum::Time(v) => {
            V::IntValue(*v)
        }
        Datum::Date(v) => V::IntValue(i64::from(*v)),
        Datum::Oid(v) => V::IntValue(i64::from(*v)),
        Datum::Float4(v) => V::Float4Value(*v),
        Datum::Float8(v) => V::Float8Value(*v),
        Datum::Text(s) => V::TextValue(s.to_string()),
        Datum::Bytea(b) => V::BytesValue(b.clone()),
        Datum::Uuid(u) => V::BytesValue(u.to_vec()),
        Datum::Numeric(n) => V::NumericValue(n.clone()),
        Datum::Interval {
            months,
            days,
            micros,
        } => V::IntervalValue(pb::Interval {
            months: *months,
            days: *days,
            micros: *micros,
        }),
        Datum::TimeTz {
            micros,
            offset_west_secs,
        } => V::TimetzValue(pb::TimeTz {
            micros: *micros,
            offset_west_secs: *offset_west_secs,
        }),
        Datum::Tid { block, offset } => V::TidValue(pb::Tid {
            block: *block,
            offset: u32::from(*offset),
        }),
        Datum::Int2Array(values) => V::Int2ArrayValue(pb::Int2Array {
            values: values.iter().map(|v| i32::from(*v)).collect(),
        }),
    };
    pb::Cell { value: Some(value) }
}

fn cell_to_datum(cell: pb::Cell, pg_type: &PgType) -> Result<Datum, String> {
    use pb::cell::Value as V;
    let Some(value) = cell.value else {
        return Ok(Datum::Null);
    };
    let mismatch = |v: &V| format!("cell {v:?} does not fit type {pg_type}");
    Ok(match (pg_type, value) {
        (_, V::IsNull(_)) => Datum::Null,
        (PgType::Bool, V::BoolValue(b)) => Datum::Bool(b),
        (PgType::Int2, V::IntValue(v)) => Datum::Int2(i16::try_from(v).map_err(|e| e.to_string())?),
        (PgType::Int4, V::IntValue(v)) => Datum::Int4(i32::try_from(v).map_err(|e| e.to_string())?),
        (PgType::Int8, V::IntValue(v)) => Datum::Int8(v),
        (PgType::Oid | PgType::RegClass, V::IntValue(v)) => {
            Datum::Oid(u32::try_from(v).map_err(|e| e.to_string())?)
        }
        (PgType::Date, V::IntValue(v)) => Datum::Date(i32::try_from(v).map_err(|e| e.to_string())?),
        (PgType::Time, V::IntValue(v)) => Datum::Time(v),
        (PgType::Timestamp, V::IntValue(v)) => Datum::Timestamp(v),
        (PgType::TimestampTz, V::IntValue(v)) => Datum::TimestampTz(v),
        (PgType::Float4, V::Float4Value(v)) => Datum::Float4(v),
        (PgType::Float8, V::Float8Value(v)) => Datum::Float8(v),
        (PgType::Text | PgType::Varchar | PgType::Name | PgType::Char, V::TextValue(s)) => {
            Datum::Text(s.into())
        }
        (PgType::Bytea, V::BytesValue(b)) => Datum::Bytea(b),
        (PgType::Uuid, V::BytesValue(b)) => {
            let bytes: [u8; 16] = b
                .as_slice()
                .try_into()
                .map_err(|_| "uuid cell is not 16 bytes".to_string())?;
            Datum::Uuid(bytes)
        }
        (PgType::Numeric(_), V::NumericValue(n)) => Datum::Numeric(n),
        (PgType::Interval, V::IntervalValue(i)) => Datum::Interval {
            months: i.months,
            days: i.days,
            micros: i.micros,
        },
        (PgType::TimeTz, V::TimetzValue(t)) => Datum::TimeTz {
            micros: t.micros,
            offset_west_secs: t.offset_west_secs,
        },
        (PgType::Tid, V::TidValue(t)) => Datum::Tid {
            block: t.block,
            offset: u16::try_from(t.offset).map_err(|e| e.to_string())?,
        },
        (PgType::Int2Array, V::Int2ArrayValue(a)) => Datum::Int2Array(
            a.values
                .into_iter()
                .map(|v| i16::try_from(v).map_err(|e| e.to_string()))
                .collect::<Result<_, _>>()?,
        ),
        (_, other) => return Err(mismatch(&other)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
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
        assert_eq!(other.layout(), RowLayout::Generic { relation_id: 9 });
        let catalog = Relation::new(
            1,
            "public".into(),
            "ducklake_snapshot".into(),
            CatalogTable::by_name("ducklake_snapshot")
                .unwrap()
                .column_defs(),
            vec![0],
        );
        assert!(matches!(catalog.layout(), RowLayout::Catalog(t) if t.tag == Tag::Snapshot));
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
