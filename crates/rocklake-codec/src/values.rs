//! Protobuf values of catalog rows, and the mapping between a SQL row of a
//! catalog table and its (key, value) pair.
//!
//! The value messages are defined in `proto/rocklake_catalog.proto` (field
//! number = column position + 1), the single definition of the value layout.
//! Rows are written and read field by field by [`crate::protobuf`]; the tests
//! check those bytes against the descriptor compiled from the `.proto`.

use std::sync::LazyLock;

use prost::Message;
use prost_reflect::{DescriptorPool, MessageDescriptor};

use crate::tables::CatalogTable;
use rocklake_types::datum::Row;

/// Prost types generated from `proto/rocklake_catalog.proto`.
#[allow(missing_docs, clippy::all)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/rocklake.catalog.v1.rs"));
}

/// Protobuf field number of the hidden row sequence in every value message.
pub const ROW_SEQ_FIELD: u32 = 100;

/// Protobuf field number of the count of a relation's stored columns when the
/// row was written; written only once a column was added with a DEFAULT, so
/// that an absent field of an older row reads that default (see
/// [`crate::relations::catalog`]).
pub const COLUMN_COUNT_FIELD: u32 = 101;

static DESCRIPTORS: LazyLock<DescriptorPool> = LazyLock::new(|| {
    DescriptorPool::decode(&include_bytes!(concat!(env!("OUT_DIR"), "/rocklake_catalog.bin"))[..])
        .expect("descriptor set compiled by build.rs is valid")
});

/// The protobuf descriptor of a catalog table's value message.
pub fn message_descriptor(table: &CatalogTable) -> MessageDescriptor {
    DESCRIPTORS
        .get_message_by_name(&format!("rocklake.catalog.v1.{}", table.message))
        .unwrap_or_else(|| panic!("message {} missing from the .proto", table.message))
}

/// Why a row cannot be turned into a key and value, or a value back into a row.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// The row has the wrong number of columns.
    #[error("{table}: row has {actual} columns, expected {expected}")]
    Arity {
        /// Table name.
        table: String,
        /// Columns given.
        actual: usize,
        /// Columns the table has.
        expected: usize,
    },
    /// A cell's value does not fit its column's type.
    #[error("{table}.{column}: expected {expected}, got {actual}")]
    TypeMismatch {
        /// Table name.
        table: String,
        /// Column name.
        column: String,
        /// Expected type.
        expected: String,
        /// What was given.
        actual: String,
    },
    /// A key column is NULL.
    #[error("{table}.{column}: key column must not be NULL")]
    NullKey {
        /// Table name.
        table: String,
        /// Column name.
        column: String,
    },
    /// A key column is negative (keys hold unsigned ids).
    #[error("{table}.{column}: key column must not be negative, got {value}")]
    NegativeKey {
        /// Table name.
        table: String,
        /// Column name.
        column: String,
        /// The value given.
        value: i64,
    },
    /// A NOT NULL column is NULL.
    #[error("{table}.{column}: null value violates not-null constraint")]
    NotNull {
        /// Table name.
        table: String,
        /// Column name.
        column: String,
    },
    /// The stored bytes are not a valid value.
    #[error("{table}: corrupt value: {reason}")]
    Corrupt {
        /// Table name.
        table: String,
        /// What is wrong.
        reason: String,
    },
}

/// A catalog row decoded from its key and value.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedRow {
    /// All columns, in the table's column order.
    pub row: Row,
    /// The hidden row sequence (row identity).
    pub row_seq: u64,
}

/// Encodes the hot-key value.
pub fn encode_hot_key(hot: &pb::HotKey) -> Vec<u8> {
    hot.encode_to_vec()
}

/// Decodes the hot-key value.
pub fn decode_hot_key(bytes: &[u8]) -> Result<pb::HotKey, ValueError> {
    pb::HotKey::decode(bytes).map_err(|e| ValueError::Corrupt {
        table: "system key 'hot-key'".to_string(),
        reason: e.to_string(),
    })
}

/// The value of a schema's registry entry (`0x62 | namespace_id`).
pub fn encode_namespace(name: &str) -> Vec<u8> {
    pb::NamespaceDef {
        name: name.to_string(),
    }
    .encode_to_vec()
}

/// The schema name a registry entry holds; `key` names the entry in errors.
pub fn decode_namespace(key: &[u8], bytes: &[u8]) -> Result<String, ValueError> {
    pb::NamespaceDef::decode(bytes)
        .map(|def| def.name)
        .map_err(|e| ValueError::Corrupt {
            table: format!("namespace {}", crate::keys::hex_key(key)),
            reason: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::encode_key;
    use crate::relations::catalog::CatalogLayout;
    use crate::tables::{CatalogType, CATALOG_TABLES};
    use rocklake_types::datum::Datum;

    fn decode_catalog_row(
        table: &'static CatalogTable,
        key: &[u8],
        value: &[u8],
    ) -> Result<DecodedRow, ValueError> {
        CatalogLayout::of(table).decode(key, value, None)
    }

    fn decode_end_snapshot(
        table: &'static CatalogTable,
        value: &[u8],
    ) -> Result<Option<i64>, ValueError> {
        CatalogLayout::of(table).decode_end_snapshot(value)
    }
    use proptest::prelude::*;
    use prost_reflect::{DynamicMessage, Kind, Value};

    /// The reference encoding: the row through `DynamicMessage` and the
    /// descriptor compiled from the `.proto`.
    fn reflect_encode(table: &CatalogTable, row: &[Datum], row_seq: u64) -> Vec<u8> {
        let mut message = DynamicMessage::new(message_descriptor(table));
        for (index, datum) in row.iter().enumerate() {
            if table.is_key_column(index) || datum.is_null() {
                continue;
            }
            let value = match datum {
                Datum::Int8(v) | Datum::TimestampTz(v) => Value::I64(*v),
                Datum::Text(s) => Value::String(s.to_string()),
                Datum::Bool(b) => Value::Bool(*b),
                Datum::Uuid(u) => Value::Bytes(u.to_vec().into()),
                other => panic!("no catalog column holds {other:?}"),
            };
            message.set_field_by_number(index as u32 + 1, value);
        }
        message.set_field_by_number(ROW_SEQ_FIELD, Value::U64(row_seq));
        message.encode_to_vec()
    }

    /// The reference decoding of the value columns through `DynamicMessage`.
    fn reflect_decode(table: &CatalogTable, value: &[u8]) -> (Vec<Datum>, u64) {
        let message = DynamicMessage::decode(message_descriptor(table), value).unwrap();
        let mut row = vec![Datum::Null; table.columns.len()];
        for (index, column) in table.columns.iter().enumerate() {
            let number = index as u32 + 1;
            if table.is_key_column(index) || !message.has_field_by_number(number) {
                continue;
            }
            let value = message.get_field_by_number(number).unwrap();
            row[index] = match (column.ty, value.as_ref()) {
                (CatalogType::Int8, Value::I64(v)) => Datum::Int8(*v),
                (CatalogType::TimestampTz, Value::I64(v)) => Datum::TimestampTz(*v),
                (CatalogType::Varchar, Value::String(s)) => Datum::Text(s.as_str().into()),
                (CatalogType::Bool, Value::Bool(b)) => Datum::Bool(*b),
                (CatalogType::Uuid, Value::Bytes(b)) => Datum::Uuid(b.as_ref().try_into().unwrap()),
                other => panic!("unexpected {other:?}"),
            };
        }
        let row_seq = match message.get_field_by_number(ROW_SEQ_FIELD).as_deref() {
            Some(Value::U64(seq)) => *seq,
            _ => 0,
        };
        (row, row_seq)
    }

    /// A random row of a random catalog table (key columns non-negative).
    fn any_catalog_row() -> impl Strategy<Value = (&'static CatalogTable, Row, u64)> {
        (0..CATALOG_TABLES.len(), any::<u64>()).prop_flat_map(|(t, row_seq)| {
            let table = &CATALOG_TABLES[t];
            let cells: Vec<BoxedStrategy<Datum>> = table
                .columns
                .iter()
                .enumerate()
                .map(|(index, column)| {
                    if table.is_key_column(index) {
                        return (0..i64::MAX).prop_map(Datum::Int8).boxed();
                    }
                    let value = match column.ty {
                        CatalogType::Int8 => any::<i64>().prop_map(Datum::Int8).boxed(),
                        CatalogType::TimestampTz => {
                            any::<i64>().prop_map(Datum::TimestampTz).boxed()
                        }
                        CatalogType::Varchar => {
                            ".{0,12}".prop_map(|s| Datum::Text(s.into())).boxed()
                        }
                        CatalogType::Bool => any::<bool>().prop_map(Datum::Bool).boxed(),
                        CatalogType::Uuid => any::<[u8; 16]>().prop_map(Datum::Uuid).boxed(),
                    };
                    if column.not_null {
                        value
                    } else {
                        prop_oneof![1 => Just(Datum::Null), 3 => value].boxed()
                    }
                })
                .collect();
            (Just(table), cells, Just(row_seq))
        })
    }

    proptest! {
        #[test]
        fn field_codec_agrees_with_the_proto_descriptor((table, row, row_seq) in any_catalog_row()) {
            let ours = CatalogLayout::of(table).encode_value(&row, row_seq).unwrap();
            let key = CatalogLayout::of(table).encode_key(&row, row_seq).unwrap();
            // Our bytes read back the same through the descriptor ...
            let (reflected, seq) = reflect_decode(table, &ours);
            prop_assert_eq!(seq, row_seq);
            let decoded = decode_catalog_row(table, &key, &ours).unwrap();
            prop_assert_eq!(&decoded.row, &row);
            prop_assert_eq!(decoded.row_seq, row_seq);
            for (index, cell) in reflected.iter().enumerate() {
                if !table.is_key_column(index) {
                    prop_assert_eq!(cell, &row[index]);
                }
            }
            // ... and the descriptor's bytes read back the same through ours.
            let theirs = reflect_encode(table, &row, row_seq);
            let decoded = decode_catalog_row(table, &key, &theirs).unwrap();
            prop_assert_eq!(decoded.row, row);
            prop_assert_eq!(decoded.row_seq, row_seq);
        }

        #[test]
        fn random_value_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64), t in 0..CATALOG_TABLES.len()) {
            let table = &CATALOG_TABLES[t];
            let key = encode_key(table.tag, &vec![1; table.key.len()]);
            let _ = decode_catalog_row(table, &key, &bytes);
            if table.column_index("end_snapshot").is_some() {
                let _ = decode_end_snapshot(table, &bytes);
            }
        }
    }

    #[test]
    fn unwanted_columns_stay_null() {
        let table = CatalogTable::by_name("ducklake_snapshot").unwrap();
        let row = snapshot_row();
        let key = CatalogLayout::of(table).encode_key(&row, 9).unwrap();
        let value = CatalogLayout::of(table).encode_value(&row, 9).unwrap();
        let wanted = [true, false, true, false, false];
        let decoded = CatalogLayout::of(table)
            .decode(&key, &value, Some(&wanted))
            .unwrap();
        assert_eq!(
            decoded.row,
            vec![
                Datum::Int8(13),
                Datum::Null,
                Datum::Int8(4),
                Datum::Null,
                Datum::Null
            ]
        );
        assert_eq!(decoded.row_seq, 9);
    }

    #[test]
    fn every_table_message_matches_its_columns() {
        for table in CATALOG_TABLES {
            let descriptor = message_descriptor(table);
            for (index, column) in table.columns.iter().enumerate() {
                let field = descriptor.get_field(index as u32 + 1);
                if table.is_key_column(index) {
                    assert!(
                        field.is_none(),
                        "{}.{} is in the key",
                        table.name,
                        column.name
                    );
                    continue;
                }
                let field =
                    field.unwrap_or_else(|| panic!("{}.{} has no field", table.name, column.name));
                assert_eq!(field.name(), column.name, "{}", table.name);
                let expected = match column.ty {
                    CatalogType::Int8 | CatalogType::TimestampTz => Kind::Int64,
                    CatalogType::Varchar => Kind::String,
                    CatalogType::Bool => Kind::Bool,
                    CatalogType::Uuid => Kind::Bytes,
                };
                assert_eq!(field.kind(), expected, "{}.{}", table.name, column.name);
                assert!(
                    field.supports_presence(),
                    "{}.{} must be optional",
                    table.name,
                    column.name
                );
            }
            assert_eq!(
                descriptor
                    .get_field(ROW_SEQ_FIELD)
                    .map(|f| f.name().to_string()),
                Some("row_seq".to_string())
            );
        }
    }

    fn snapshot_row() -> Row {
        vec![
            Datum::Int8(13),
            Datum::TimestampTz(123_456),
            Datum::Int8(4),
            Datum::Int8(5),
            Datum::Null,
        ]
    }

    #[test]
    fn catalog_row_round_trips_with_nulls() {
        let table = CatalogTable::by_name("ducklake_snapshot").unwrap();
        let row = snapshot_row();
        let key = CatalogLayout::of(table).encode_key(&row, 77).unwrap();
        let value = CatalogLayout::of(table).encode_value(&row, 77).unwrap();
        let decoded = decode_catalog_row(table, &key, &value).unwrap();
        assert_eq!(decoded.row, row);
        assert_eq!(decoded.row_seq, 77);
        // The same bytes decode through the generated prost type.
        let typed = pb::Snapshot::decode(value.as_slice()).unwrap();
        assert_eq!(typed.schema_version, Some(4));
        assert_eq!(typed.next_file_id, None);
    }

    #[test]
    fn unknown_fields_are_tolerated() {
        let table = CatalogTable::by_name("ducklake_snapshot").unwrap();
        let row = snapshot_row();
        let key = CatalogLayout::of(table).encode_key(&row, 1).unwrap();
        let mut value = CatalogLayout::of(table).encode_value(&row, 1).unwrap();
        // Field 50, varint 9: what a newer RockLake might add.
        value.extend_from_slice(&[0x90, 0x03, 0x09]);
        assert_eq!(decode_catalog_row(table, &key, &value).unwrap().row, row);
    }

    #[test]
    fn key_columns_must_be_present_and_non_negative() {
        let table = CatalogTable::by_name("ducklake_snapshot").unwrap();
        let mut row = snapshot_row();
        row[0] = Datum::Null;
        assert!(matches!(
            CatalogLayout::of(table).encode_key(&row, 0),
            Err(ValueError::NullKey { .. })
        ));
        row[0] = Datum::Int8(-1);
        assert!(matches!(
            CatalogLayout::of(table).encode_key(&row, 0),
            Err(ValueError::NegativeKey { .. })
        ));
    }

    #[test]
    fn not_null_and_types_are_checked() {
        let table = CatalogTable::by_name("ducklake_metadata").unwrap();
        let row = vec![
            Datum::Text("version".into()),
            Datum::Null,
            Datum::Null,
            Datum::Null,
        ];
        assert!(matches!(
            CatalogLayout::of(table).encode_value(&row, 0),
            Err(ValueError::NotNull { .. })
        ));
        let row = vec![
            Datum::Text("k".into()),
            Datum::Int8(1),
            Datum::Null,
            Datum::Null,
        ];
        assert!(matches!(
            CatalogLayout::of(table).encode_value(&row, 0),
            Err(ValueError::TypeMismatch { .. })
        ));
    }

    #[test]
    fn end_snapshot_decodes_alone() {
        let table = CatalogTable::by_name("ducklake_table").unwrap();
        let mut row = vec![Datum::Null; table.columns.len()];
        row[0] = Datum::Int8(5);
        row[2] = Datum::Int8(100);
        let value = CatalogLayout::of(table).encode_value(&row, 3).unwrap();
        assert_eq!(decode_end_snapshot(table, &value).unwrap(), None);
        row[3] = Datum::Int8(200);
        let value = CatalogLayout::of(table).encode_value(&row, 3).unwrap();
        assert_eq!(decode_end_snapshot(table, &value).unwrap(), Some(200));
    }
}
