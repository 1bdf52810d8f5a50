//! Catalog rows to and from their protobuf value bytes, field by field.
//!
//! The value messages are defined in `proto/rocklake_catalog.proto` (field
//! numbers by column name, row sequence = field 100). This module reads
//! and writes that wire format directly between the bytes and a row's
//! [`Datum`] cells. It is hand-written because the general alternatives cost
//! too much on the read path: decoding through `prost-reflect`'s
//! `DynamicMessage` built a map of boxed field values for every row and was a
//! third of the CPU of a 10,000-file scan, and prost's own field codec is a
//! hidden module meant for generated code. Only five scalar kinds occur
//! (int64, string, bool, bytes, and int64 timestamps), so the code is small;
//! the tests check it against `DynamicMessage` on random rows in both
//! directions, so the `.proto` file stays the definition of record.

use crate::tables::CatalogType;
use rocklake_types::datum::Datum;

/// Protobuf wire type of a varint field.
const VARINT: u8 = 0;
/// Protobuf wire type of a 64-bit field.
const FIXED64: u8 = 1;
/// Protobuf wire type of a length-delimited field.
const LEN: u8 = 2;
/// Protobuf wire type of a 32-bit field.
const FIXED32: u8 = 5;

/// Appends `value` as a protobuf varint.
pub fn put_varint(buf: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        buf.push((value as u8) | 0x80);
        value >>= 7;
    }
    buf.push(value as u8);
}

/// Appends a field key (field number and wire type).
fn put_key(buf: &mut Vec<u8>, field: u32, wire_type: u8) {
    put_varint(buf, (u64::from(field) << 3) | u64::from(wire_type));
}

/// Appends one non-NULL cell as field `field` of its column type; `None` when
/// the datum does not fit the type.
pub fn put_cell(buf: &mut Vec<u8>, field: u32, ty: CatalogType, datum: &Datum) -> Option<()> {
    match (ty, datum) {
        (CatalogType::Int8, d) => {
            let value = d.as_i64()?;
            put_key(buf, field, VARINT);
            put_varint(buf, value as u64);
        }
        (CatalogType::TimestampTz, Datum::TimestampTz(t)) => {
            put_key(buf, field, VARINT);
            put_varint(buf, *t as u64);
        }
        (CatalogType::Bool, Datum::Bool(b)) => {
            put_key(buf, field, VARINT);
            put_varint(buf, u64::from(*b));
        }
        (CatalogType::Varchar, Datum::Text(s)) => {
            put_key(buf, field, LEN);
            put_varint(buf, s.len() as u64);
            buf.extend_from_slice(s.as_bytes());
        }
        (CatalogType::Uuid, Datum::Uuid(u)) => {
            put_key(buf, field, LEN);
            put_varint(buf, u.len() as u64);
            buf.extend_from_slice(u);
        }
        _ => return None,
    }
    Some(())
}

/// Appends a length-delimited field.
pub fn put_bytes(buf: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_key(buf, field, LEN);
    put_varint(buf, bytes.len() as u64);
    buf.extend_from_slice(bytes);
}

/// Appends the row sequence (field 100; proto3 omits the zero default).
pub fn put_row_seq(buf: &mut Vec<u8>, field: u32, row_seq: u64) {
    if row_seq != 0 {
        put_key(buf, field, VARINT);
        put_varint(buf, row_seq);
    }
}

/// A cursor over protobuf value bytes.
pub struct FieldReader<'a> {
    bytes: &'a [u8],
}

/// One field as read: its number and payload.
pub enum Field<'a> {
    /// A varint field.
    Varint(u32, u64),
    /// A length-delimited field.
    Bytes(u32, &'a [u8]),
    /// A fixed-width field (wire types 1 and 5), which no catalog column uses.
    Fixed(u32),
}

impl<'a> FieldReader<'a> {
    /// Reads the fields of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        FieldReader { bytes }
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for (i, byte) in self.bytes.iter().enumerate().take(10) {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                self.bytes = &self.bytes[i + 1..];
                return Ok(value);
            }
        }
        Err("truncated or overlong varint".to_string())
    }

    fn take(&mut self, len: u64) -> Result<&'a [u8], String> {
        let len = usize::try_from(len).map_err(|_| "length overflows".to_string())?;
        if len > self.bytes.len() {
            return Err(format!(
                "field of {len} bytes but only {} remain",
                self.bytes.len()
            ));
        }
        let (head, tail) = self.bytes.split_at(len);
        self.bytes = tail;
        Ok(head)
    }

    /// The next field, `None` at the end; an error for malformed bytes.
    pub fn next_field(&mut self) -> Result<Option<Field<'a>>, String> {
        if self.bytes.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let field = u32::try_from(key >> 3).map_err(|_| format!("field number {}", key >> 3))?;
        if field == 0 {
            return Err("field number 0".to_string());
        }
        Ok(Some(match (key & 7) as u8 {
            VARINT => Field::Varint(field, self.varint()?),
            LEN => {
                let len = self.varint()?;
                Field::Bytes(field, self.take(len)?)
            }
            FIXED64 => {
                self.take(8)?;
                Field::Fixed(field)
            }
            FIXED32 => {
                self.take(4)?;
                Field::Fixed(field)
            }
            other => return Err(format!("unsupported wire type {other} of field {field}")),
        }))
    }
}

/// The cell a field holds for the column `name` of type `ty`, or why it cannot.
pub fn field_to_datum(name: &str, ty: CatalogType, field: &Field<'_>) -> Result<Datum, String> {
    let wrong = || format!("field {name} has the wrong wire type");
    Ok(match (ty, field) {
        (CatalogType::Int8, Field::Varint(_, v)) => Datum::Int8(*v as i64),
        (CatalogType::TimestampTz, Field::Varint(_, v)) => Datum::TimestampTz(*v as i64),
        (CatalogType::Bool, Field::Varint(_, v)) => Datum::Bool(*v != 0),
        (CatalogType::Varchar, Field::Bytes(_, b)) => Datum::Text(
            std::str::from_utf8(b)
                .map_err(|_| format!("field {name} is not valid UTF-8"))?
                .into(),
        ),
        (CatalogType::Uuid, Field::Bytes(_, b)) => Datum::Uuid(
            (*b).try_into()
                .map_err(|_| format!("field {name} holds {} bytes, not 16", b.len()))?,
        ),
        _ => return Err(wrong()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_the_edges() {
        for value in [
            0,
            1,
            127,
            128,
            300,
            u32::MAX as u64,
            u64::MAX,
            i64::MIN as u64,
        ] {
            let mut buf = Vec::new();
            put_varint(&mut buf, value);
            let mut reader = FieldReader::new(&buf);
            assert_eq!(reader.varint().unwrap(), value);
            assert!(reader.bytes.is_empty());
        }
    }

    #[test]
    fn malformed_bytes_are_errors_not_panics() {
        for bytes in [
            &[0x08][..],         // key without its varint
            &[0x12, 0x05, b'a'], // length beyond the end
            &[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ], // 11-byte varint
            &[0x03],             // wire type 3 (group)
            &[0x00, 0x01],       // field 0
        ] {
            let mut reader = FieldReader::new(bytes);
            let mut failed = false;
            for _ in 0..4 {
                match reader.next_field() {
                    Ok(Some(_)) => continue,
                    Ok(None) => break,
                    Err(_) => {
                        failed = true;
                        break;
                    }
                }
            }
            assert!(failed, "{bytes:?} should fail");
        }
    }
}
