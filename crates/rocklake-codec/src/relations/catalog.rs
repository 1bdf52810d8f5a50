//! The row layout of a DuckLake catalog table of any spec version: the
//! table's tag and key, with every column found by *name*.
//!
//! A relation named like a catalog table keeps that table's tag and key
//! fields (its key columns looked up by name, so `ducklake_column` of spec 0.3
//! and of 1.0 share one key layout) and stores each other column in the field
//! of the value message that `proto/rocklake_catalog.proto` gives its name. A
//! column the `.proto` does not know (a future spec, a user's `ALTER TABLE`),
//! or knows with another type, lives in a field numbered from
//! [`FIRST_EXTRA_FIELD`] up as an encoded [`pb::Cell`]; the relation registry
//! records the field of every column, so values written under an older column
//! list stay readable.

use prost::Message;
use prost_reflect::Kind;

use super::cells::{cell_to_datum, datum_to_cell};
use crate::keys::{encode_key, field_at};
use crate::protobuf::{self, Field};
use crate::tables::{CatalogTable, CatalogType, KeyField};
use crate::values::{
    message_descriptor, pb, DecodedRow, ValueError, COLUMN_COUNT_FIELD, ROW_SEQ_FIELD,
};
use rocklake_types::datum::{ColumnDef, Datum, PgType};

/// Fields from this number up hold columns the `.proto` does not name.
pub const FIRST_EXTRA_FIELD: u32 = 200;

/// Where one column of a catalog relation is stored.
#[derive(Debug, Clone, PartialEq)]
pub enum Slot {
    /// In the key, at this key-field position.
    Key(usize),
    /// In the value message's field of this number, with the `.proto`'s type.
    Native(u32, CatalogType),
    /// In the value message's field of this number, as an encoded `Cell`.
    Cell(u32),
}

/// A column's slot, name and constraints.
#[derive(Debug, Clone, PartialEq)]
struct SlotColumn {
    slot: Slot,
    def: ColumnDef,
    /// The value of rows written before the column existed.
    missing: Option<Datum>,
    /// Position among the relation's stored columns (dropped ones included).
    stored: usize,
}

/// The resolved layout of one catalog relation (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogLayout {
    /// The catalog table whose tag and key the rows use.
    pub table: &'static CatalogTable,
    /// Key fields after the tag; `KeyField::Column` indexes the relation's
    /// (live) columns.
    key: Vec<KeyField>,
    /// One entry per live column.
    columns: Vec<SlotColumn>,
    /// Live column index by field number (`None`: not a live column).
    by_field: Vec<Option<usize>>,
    /// Field number of `end_snapshot`, for MVCC filtering.
    end_snapshot_field: Option<u32>,
    /// Stored columns (dropped ones included), written with each value once a
    /// column has a missing value (see [`COLUMN_COUNT_FIELD`]).
    stored_count: Option<u64>,
}

/// The `.proto` type that stores a column of `pg_type` natively, if any.
fn native_type(pg_type: &PgType) -> Option<CatalogType> {
    Some(match pg_type {
        PgType::Int8 => CatalogType::Int8,
        PgType::Varchar | PgType::Text => CatalogType::Varchar,
        PgType::Bool => CatalogType::Bool,
        PgType::Uuid => CatalogType::Uuid,
        PgType::TimestampTz => CatalogType::TimestampTz,
        _ => return None,
    })
}

/// The field the `.proto` gives column `name` of `table`, if it stores a
/// column of `pg_type` natively.
pub fn proto_field(table: &CatalogTable, name: &str, pg_type: &PgType) -> Option<u32> {
    let ty = native_type(pg_type)?;
    let field = message_descriptor(table).get_field_by_name(name)?;
    let kind_fits = matches!(
        (ty, field.kind()),
        (CatalogType::Int8 | CatalogType::TimestampTz, Kind::Int64)
            | (CatalogType::Varchar, Kind::String)
            | (CatalogType::Bool, Kind::Bool)
            | (CatalogType::Uuid, Kind::Bytes)
    );
    (kind_fits && field.number() != ROW_SEQ_FIELD).then(|| field.number())
}

/// One column as [`CatalogLayout::new`] takes it.
pub struct LayoutColumn<'a> {
    /// Definition.
    pub def: &'a ColumnDef,
    /// Field number (unused for key columns).
    pub field: u32,
    /// Value of rows written before the column existed.
    pub missing: Option<Datum>,
    /// Position among the relation's stored columns (dropped ones included).
    pub stored: usize,
}

impl CatalogLayout {
    /// The layout of a relation of `table` whose live columns are `columns`
    /// and whose key fields are `key` (indexes into `columns`).
    /// `stored_count` is the number of stored columns, dropped ones included.
    pub fn new(
        table: &'static CatalogTable,
        key: Vec<KeyField>,
        columns: &[LayoutColumn],
        stored_count: usize,
    ) -> Self {
        let mut slots = Vec::with_capacity(columns.len());
        let mut by_field: Vec<Option<usize>> = Vec::new();
        let mut end_snapshot_field = None;
        for (index, column) in columns.iter().enumerate() {
            let slot = match key.iter().position(|f| *f == KeyField::Column(index)) {
                Some(position) => Slot::Key(position),
                None => {
                    let field = column.field;
                    let at = field as usize;
                    if by_field.len() <= at {
                        by_field.resize(at + 1, None);
                    }
                    by_field[at] = Some(index);
                    if column.def.name == "end_snapshot" {
                        end_snapshot_field = Some(field);
                    }
                    match native_type(&column.def.pg_type) {
                        Some(ty) if field < FIRST_EXTRA_FIELD => Slot::Native(field, ty),
                        _ => Slot::Cell(field),
                    }
                }
            };
            slots.push(SlotColumn {
                slot,
                def: column.def.clone(),
                missing: column.missing.clone(),
                stored: column.stored,
            });
        }
        let has_missing = slots.iter().any(|c| c.missing.is_some());
        CatalogLayout {
            table,
            key,
            columns: slots,
            by_field,
            end_snapshot_field,
            stored_count: has_missing.then_some(stored_count as u64),
        }
    }

    /// The layout of `table` with the columns DuckLake 1.0 declares.
    pub fn of(table: &'static CatalogTable) -> Self {
        let defs = table.column_defs();
        let columns: Vec<LayoutColumn> = defs
            .iter()
            .enumerate()
            .map(|(stored, def)| LayoutColumn {
                def,
                field: proto_field(table, &def.name, &def.pg_type).unwrap_or(0),
                missing: None,
                stored,
            })
            .collect();
        CatalogLayout::new(table, table.key.to_vec(), &columns, defs.len())
    }

    /// Key fields after the tag (columns by live index).
    pub fn key(&self) -> &[KeyField] {
        &self.key
    }

    /// Number of bytes of every key: the tag plus 8 per field.
    pub fn key_len(&self) -> usize {
        1 + 8 * self.key.len()
    }

    /// Where live column `index` is stored.
    pub fn slot(&self, index: usize) -> Option<&Slot> {
        self.columns.get(index).map(|c| &c.slot)
    }

    /// Whether the last key field is `begin_snapshot` (MVCC-versioned).
    pub fn versioned(&self) -> bool {
        matches!(self.key.last(), Some(KeyField::Column(i)) if self.columns[*i].def.name == "begin_snapshot")
    }

    /// Whether `primary_key` (live indexes) is a leading prefix of the key
    /// fields, so that one prefix probe proves uniqueness.
    pub fn key_prefix_is(&self, primary_key: &[usize]) -> bool {
        !primary_key.is_empty()
            && primary_key
                .iter()
                .enumerate()
                .all(|(pos, col)| self.key.get(pos) == Some(&KeyField::Column(*col)))
    }

    fn error_table(&self) -> String {
        self.table.name.to_string()
    }

    fn check_arity(&self, row: &[Datum]) -> Result<(), ValueError> {
        if row.len() != self.columns.len() {
            return Err(ValueError::Arity {
                table: self.error_table(),
                actual: row.len(),
                expected: self.columns.len(),
            });
        }
        Ok(())
    }

    fn key_field_value(&self, row: &[Datum], index: usize) -> Result<u64, ValueError> {
        let column = &self.columns[index].def.name;
        match &row[index] {
            Datum::Null => Err(ValueError::NullKey {
                table: self.error_table(),
                column: column.clone(),
            }),
            datum => {
                let value = datum.as_i64().ok_or_else(|| ValueError::TypeMismatch {
                    table: self.error_table(),
                    column: column.clone(),
                    expected: "bigint".to_string(),
                    actual: format!("{datum:?}"),
                })?;
                u64::try_from(value).map_err(|_| ValueError::NegativeKey {
                    table: self.error_table(),
                    column: column.clone(),
                    value,
                })
            }
        }
    }

    /// The key fields of `row`, `row_seq` filling the hidden field.
    pub fn key_fields(&self, row: &[Datum], row_seq: u64) -> Result<Vec<u64>, ValueError> {
        self.check_arity(row)?;
        self.key
            .iter()
            .map(|field| match field {
                KeyField::Column(i) => self.key_field_value(row, *i),
                KeyField::RowSeq => Ok(row_seq),
            })
            .collect()
    }

    /// The full key of `row`.
    pub fn encode_key(&self, row: &[Datum], row_seq: u64) -> Result<Vec<u8>, ValueError> {
        Ok(encode_key(self.table.tag, &self.key_fields(row, row_seq)?))
    }

    /// The value message of `row`: its non-key columns and its row sequence.
    pub fn encode_value(&self, row: &[Datum], row_seq: u64) -> Result<Vec<u8>, ValueError> {
        self.check_arity(row)?;
        let mut buf = Vec::with_capacity(16 * row.len());
        for (column, datum) in self.columns.iter().zip(row) {
            if datum.is_null() {
                if column.def.not_null && !matches!(column.slot, Slot::Key(_)) {
                    return Err(ValueError::NotNull {
                        table: self.error_table(),
                        column: column.def.name.clone(),
                    });
                }
                continue;
            }
            let mismatch = || ValueError::TypeMismatch {
                table: self.error_table(),
                column: column.def.name.clone(),
                expected: column.def.pg_type.type_name().to_string(),
                actual: format!("{datum:?}"),
            };
            match column.slot {
                Slot::Key(_) => {}
                Slot::Native(field, ty) => {
                    protobuf::put_cell(&mut buf, field, ty, datum).ok_or_else(mismatch)?;
                }
                Slot::Cell(field) => {
                    protobuf::put_bytes(&mut buf, field, &datum_to_cell(datum).encode_to_vec());
                }
            }
        }
        protobuf::put_row_seq(&mut buf, ROW_SEQ_FIELD, row_seq);
        if let Some(count) = self.stored_count {
            protobuf::put_row_seq(&mut buf, COLUMN_COUNT_FIELD, count);
        }
        Ok(buf)
    }

    /// Rebuilds a row from its key and value; live columns whose `wanted`
    /// entry is false are left NULL without being decoded.
    pub fn decode(
        &self,
        key: &[u8],
        value: &[u8],
        wanted: Option<&[bool]>,
    ) -> Result<DecodedRow, ValueError> {
        let corrupt = |reason: String| ValueError::Corrupt {
            table: self.error_table(),
            reason,
        };
        if key.len() != self.key_len() {
            return Err(corrupt(format!(
                "key of {} bytes, expected {}",
                key.len(),
                self.key_len()
            )));
        }
        let mut row = vec![Datum::Null; self.columns.len()];
        // Which columns the value holds, needed only while a column reads a
        // missing value in older rows (rare: after ADD COLUMN ... DEFAULT).
        let mut seen = match self.stored_count {
            Some(_) => vec![false; self.columns.len()],
            None => Vec::new(),
        };
        for (position, field) in self.key.iter().enumerate() {
            if let KeyField::Column(index) = field {
                let raw = field_at(key, position).expect("key length checked");
                row[*index] = Datum::Int8(raw as i64);
                if let Some(seen) = seen.get_mut(*index) {
                    *seen = true;
                }
            }
        }
        let mut row_seq = 0;
        let mut written_columns = 0;
        let mut fields = protobuf::FieldReader::new(value);
        while let Some(field) = fields.next_field().map_err(corrupt)? {
            let number = match field {
                Field::Varint(n, seq) if n == ROW_SEQ_FIELD => {
                    row_seq = seq;
                    continue;
                }
                Field::Varint(n, count) if n == COLUMN_COUNT_FIELD => {
                    written_columns = count;
                    continue;
                }
                Field::Varint(n, _) | Field::Bytes(n, _) | Field::Fixed(n) => n,
            };
            let Some(Some(index)) = self.by_field.get(number as usize).copied() else {
                continue; // a dropped column, or one this relation does not have
            };
            if let Some(seen) = seen.get_mut(index) {
                *seen = true;
            }
            if wanted.is_some_and(|w| !w.get(index).copied().unwrap_or(true)) {
                continue;
            }
            let column = &self.columns[index];
            row[index] = match (&column.slot, &field) {
                (Slot::Native(_, ty), _) => {
                    protobuf::field_to_datum(&column.def.name, *ty, &field).map_err(corrupt)?
                }
                (Slot::Cell(_), Field::Bytes(_, bytes)) => {
                    let cell = pb::Cell::decode(*bytes).map_err(|e| corrupt(e.to_string()))?;
                    cell_to_datum(cell, &column.def.pg_type).map_err(corrupt)?
                }
                _ => {
                    return Err(corrupt(format!(
                        "field {} has the wrong wire type",
                        column.def.name
                    )))
                }
            };
        }
        // An absent field is NULL, unless the row was written before its
        // column was added with a DEFAULT: then it reads that value. A row
        // without the column count was written before any such column existed.
        for ((slot, column), seen) in row.iter_mut().zip(&self.columns).zip(seen) {
            if !seen && column.stored as u64 >= written_columns {
                if let Some(missing) = &column.missing {
                    *slot = missing.clone();
                }
            }
        }
        Ok(DecodedRow { row, row_seq })
    }

    /// Decodes only `end_snapshot` of a versioned table's value, for MVCC
    /// filtering without building the whole row.
    pub fn decode_end_snapshot(&self, value: &[u8]) -> Result<Option<i64>, ValueError> {
        let corrupt = |reason: String| ValueError::Corrupt {
            table: self.error_table(),
            reason,
        };
        let wanted = self
            .end_snapshot_field
            .ok_or_else(|| corrupt("table has no end_snapshot".to_string()))?;
        let mut end = None;
        let mut fields = protobuf::FieldReader::new(value);
        while let Some(field) = fields.next_field().map_err(corrupt)? {
            match field {
                Field::Varint(n, v) if n == wanted => end = Some(v as i64),
                Field::Bytes(n, _) | Field::Fixed(n) if n == wanted => {
                    return Err(corrupt("end_snapshot has the wrong wire type".to_string()))
                }
                _ => {}
            }
        }
        Ok(end)
    }
}
