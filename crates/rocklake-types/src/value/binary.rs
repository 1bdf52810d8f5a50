//! PostgreSQL's binary representation of single values (what each type's
//! `*send` / `*recv` function produces and accepts), as used by binary COPY and
//! by binary-format DataRows.

use bytes::{BufMut, BytesMut};

use super::numeric::binary as numeric;
use crate::datum::{Datum, PgType};
use crate::error::SqlError;
use crate::sqlstate::SqlState;

fn mismatch(ty: &PgType, datum: &Datum) -> SqlError {
    SqlError::internal(format!(
        "cannot send {datum:?} as a value of type {}",
        ty.type_name()
    ))
}

fn int_in_range<T: TryFrom<i64>>(ty: &PgType, datum: &Datum) -> Result<T, SqlError> {
    let value = datum.as_i64().ok_or_else(|| mismatch(ty, datum))?;
    T::try_from(value).map_err(|_| {
        SqlError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("{value} is out of range for type {}", ty.type_name()),
        )
    })
}

/// Appends the binary representation of a non-NULL `datum` as a value of
/// column type `ty` (no length prefix). Integer datums are accepted for any
/// integer-like column when the value fits; other mismatches are internal
/// errors.
pub fn put_value(buf: &mut BytesMut, ty: &PgType, datum: &Datum) -> Result<(), SqlError> {
    match (ty, datum) {
        (_, Datum::Null) => {
            return Err(SqlError::internal(format!(
                "NULL has no binary value (column type {})",
                ty.type_name()
            )))
        }
        (PgType::Bool, Datum::Bool(v)) => buf.put_u8(u8::from(*v)),
        (PgType::Int2, _) => buf.put_i16(int_in_range(ty, datum)?),
        (PgType::Int4, _) => buf.put_i32(int_in_range(ty, datum)?),
        (PgType::Int8, _) => buf.put_i64(int_in_range(ty, datum)?),
        (
            PgType::Oid
            | PgType::RegProc
            | PgType::Xid
            | PgType::RegClass
            | PgType::RegType
            | PgType::RegNamespace,
            _,
        ) => buf.put_u32(int_in_range(ty, datum)?),
        (PgType::Float4, Datum::Float4(v)) => buf.put_f32(*v),
        (PgType::Float4, Datum::Float8(v)) => buf.put_f32(*v as f32),
        (PgType::Float8, Datum::Float8(v)) => buf.put_f64(*v),
        (PgType::Float8, Datum::Float4(v)) => buf.put_f64(f64::from(*v)),
        (PgType::Text | PgType::Varchar | PgType::Name, Datum::Text(s)) => {
            buf.put_slice(s.as_bytes())
        }
        // "char" is one byte; the empty string is the zero byte.
        (PgType::Char, Datum::Text(s)) => buf.put_u8(s.as_bytes().first().copied().unwrap_or(0)),
        (PgType::Bytea, Datum::Bytea(b)) => buf.put_slice(b),
        (PgType::Uuid, Datum::Uuid(u)) => buf.put_slice(u),
        (PgType::Inet, Datum::Text(s)) => buf.put_slice(
            &super::inet::to_binary(s).ok_or_else(|| bad(format!("invalid inet value {s}")))?,
        ),
        (PgType::TimestampTz, Datum::TimestampTz(v)) => buf.put_i64(*v),
        (PgType::Timestamp, Datum::Timestamp(v)) => buf.put_i64(*v),
        (PgType::Date, Datum::Date(v)) => buf.put_i32(*v),
        (PgType::Time, Datum::Time(v)) => buf.put_i64(*v),
        (
            PgType::TimeTz,
            Datum::TimeTz {
                micros,
                offset_west_secs,
            },
        ) => {
            buf.put_i64(*micros);
            buf.put_i32(*offset_west_secs);
        }
        (
            PgType::Interval,
            Datum::Interval {
                months,
                days,
                micros,
            },
        ) => {
            buf.put_i64(*micros);
            buf.put_i32(*days);
            buf.put_i32(*months);
        }
        (PgType::Numeric(_), Datum::Numeric(text)) => numeric::parse_numeric(text)
            .map_err(|e| SqlError::new(SqlState::INVALID_TEXT_REPRESENTATION, e))?
            .put(buf),
        (PgType::Numeric(_), Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_)) => {
            let text = datum.as_i64().unwrap_or_default().to_string();
            numeric::parse_numeric(&text)
                .map_err(SqlError::internal)?
                .put(buf)
        }
        (PgType::Tid, Datum::Tid { block, offset }) => {
            buf.put_u32(*block);
            buf.put_u16(*offset);
        }
        // void_send: nothing.
        (PgType::Void, _) => {}
        (PgType::Json | PgType::AclItem | PgType::Unknown, Datum::Text(s)) => {
            buf.put_slice(s.as_bytes())
        }
        // jsonb_send: format version 1, then the text.
        (PgType::Jsonb, Datum::Jsonb(s)) => {
            buf.put_u8(1);
            buf.put_slice(s.as_bytes());
        }
        (PgType::Array(_) | PgType::Int2Vector | PgType::OidVector, Datum::Array(items))
        | (PgType::Array(_) | PgType::Int2Vector | PgType::OidVector, Datum::Vector(items)) => {
            put_array(buf, ty, items)?
        }
        // record_send: the field count, then each field's type oid and
        // length-prefixed value (-1 for NULL).
        (PgType::Record(types), Datum::Record(values)) if types.len() == values.len() => {
            buf.put_i32(i32::try_from(values.len()).map_err(|_| mismatch(ty, datum))?);
            for ((_, field_type), value) in types.iter().zip(values.iter()) {
                buf.put_u32(field_type.oid());
                if value.is_null() {
                    buf.put_i32(-1);
                    continue;
                }
                let mut field = BytesMut::new();
                put_value(&mut field, field_type, value)?;
                buf.put_i32(i32::try_from(field.len()).map_err(|_| mismatch(ty, datum))?);
                buf.put_slice(&field);
            }
        }
        _ => return Err(mismatch(ty, datum)),
    }
    Ok(())
}

fn bad(message: String) -> SqlError {
    SqlError::new(SqlState::INVALID_BINARY_REPRESENTATION, message)
}

fn fixed<const N: usize>(ty: &PgType, bytes: &[u8]) -> Result<[u8; N], SqlError> {
    bytes.try_into().map_err(|_| {
        bad(format!(
            "incorrect binary data format: {} value must be {N} bytes, got {}",
            ty.type_name(),
            bytes.len()
        ))
    })
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Reads the binary representation `bytes` of a non-NULL value of type `ty`.
/// Errors are SQLSTATE 22P03 (or 22021 for text that is not UTF-8); the caller
/// adds where the value came from.
pub fn read_value(ty: &PgType, bytes: &[u8]) -> Result<Datum, SqlError> {
    Ok(match ty {
        PgType::Record(_) => return Err(super::text::record_input_error()),
        PgType::Bool => Datum::Bool(fixed::<1>(ty, bytes)?[0] != 0),
        PgType::Int2 => Datum::Int2(i16::from_be_bytes(fixed(ty, bytes)?)),
        PgType::Int4 => Datum::Int4(i32::from_be_bytes(fixed(ty, bytes)?)),
        PgType::Int8 => Datum::Int8(i64::from_be_bytes(fixed(ty, bytes)?)),
        PgType::Oid
        | PgType::RegProc
        | PgType::Xid
        | PgType::RegClass
        | PgType::RegType
        | PgType::RegNamespace => Datum::Oid(u32::from_be_bytes(fixed(ty, bytes)?)),
        PgType::Float4 => Datum::Float4(f32::from_be_bytes(fixed(ty, bytes)?)),
        PgType::Float8 => Datum::Float8(f64::from_be_bytes(fixed(ty, bytes)?)),
        PgType::Text | PgType::Varchar | PgType::Name => {
            Datum::text(std::str::from_utf8(bytes).map_err(|e| {
                SqlError::new(
                    SqlState::CHARACTER_NOT_IN_REPERTOIRE,
                    format!(
                        "invalid byte sequence for encoding \"UTF8\" at byte {}",
                        e.valid_up_to()
                    ),
                )
            })?)
        }
        PgType::Char => {
            let byte = fixed::<1>(ty, bytes)?[0];
            match byte {
                0 => Datum::text(""),
                1..=0x7F => Datum::text(char::from(byte).to_string()),
                _ => return Err(bad(format!("\"char\" byte {byte:#04x} is not ASCII"))),
            }
        }
        PgType::Bytea => Datum::Bytea(bytes.to_vec()),
        PgType::Uuid => Datum::Uuid(fixed(ty, bytes)?),
        PgType::Inet => Datum::text(
            super::inet::from_binary(bytes).ok_or_else(|| bad("invalid inet value".into()))?,
        ),
        PgType::TimestampTz => Datum::TimestampTz(i64::from_be_bytes(fixed(ty, bytes)?)),
        PgType::Timestamp => Datum::Timestamp(i64::from_be_bytes(fixed(ty, bytes)?)),
        PgType::Date => Datum::Date(i32::from_be_bytes(fixed(ty, bytes)?)),
        PgType::Time => Datum::Time(i64::from_be_bytes(fixed(ty, bytes)?)),
        PgType::TimeTz => {
            let b = fixed::<12>(ty, bytes)?;
            Datum::TimeTz {
                micros: i64::from_be_bytes(b[..8].try_into().unwrap_or_default()),
                offset_west_secs: be_i32(&b, 8),
            }
        }
        PgType::Interval => {
            let b = fixed::<16>(ty, bytes)?;
            Datum::Interval {
                micros: i64::from_be_bytes(b[..8].try_into().unwrap_or_default()),
                days: be_i32(&b, 8),
                months: be_i32(&b, 12),
            }
        }
        PgType::Numeric(_) => Datum::Numeric(numeric::numeric_from_binary(bytes).map_err(bad)?),
        PgType::Tid => {
            let b = fixed::<6>(ty, bytes)?;
            Datum::Tid {
                block: u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                offset: u16::from_be_bytes([b[4], b[5]]),
            }
        }
        PgType::Json => {
            let value = read_value(&PgType::Text, bytes)?;
            super::json::check(value.as_str().unwrap_or_default())?;
            value
        }
        PgType::AclItem | PgType::Unknown => read_value(&PgType::Text, bytes)?,
        PgType::Void => Datum::text(""),
        // jsonb_recv: format version 1, then the text.
        PgType::Jsonb => match bytes.split_first() {
            Some((1, text)) => {
                let text = read_value(&PgType::Text, text)?;
                Datum::jsonb(&super::jsonb::parse(text.as_str().unwrap_or_default())?)
            }
            _ => {
                return Err(SqlError::new(
                    SqlState::INVALID_BINARY_REPRESENTATION,
                    "unsupported jsonb version number",
                ))
            }
        },
        PgType::Array(_) | PgType::Int2Vector | PgType::OidVector => read_array(ty, bytes)?,
    })
}

/// `array_send`: dimensions (0 for an empty array, else 1), a has-NULLs flag,
/// the element type's OID, the length and lower bound (0 for vectors), then
/// each element length-prefixed (-1 for NULL).
fn put_array(buf: &mut BytesMut, ty: &PgType, items: &[Datum]) -> Result<(), SqlError> {
    let element = ty.element_type().unwrap_or(PgType::Text);
    let lower_bound = i32::from(!matches!(ty, PgType::Int2Vector | PgType::OidVector));
    let has_nulls = items.iter().any(Datum::is_null);
    buf.put_i32(i32::from(!items.is_empty()));
    buf.put_i32(i32::from(has_nulls));
    buf.put_u32(element.oid());
    if items.is_empty() {
        return Ok(());
    }
    buf.put_i32(items.len() as i32);
    buf.put_i32(lower_bound);
    for item in items {
        if item.is_null() {
            buf.put_i32(-1);
            continue;
        }
        let length_at = buf.len();
        buf.put_i32(0);
        put_value(buf, &element, item)?;
        let length = (buf.len() - length_at - 4) as i32;
        buf[length_at..length_at + 4].copy_from_slice(&length.to_be_bytes());
    }
    Ok(())
}

/// `array_recv` for one-dimensional arrays of `ty`'s element type.
fn read_array(ty: &PgType, bytes: &[u8]) -> Result<Datum, SqlError> {
    let element = ty.element_type().unwrap_or(PgType::Text);
    let name = ty.type_name();
    if bytes.len() < 12 {
        return Err(bad(format!(
            "{name} value needs a 12-byte header, got {} bytes",
            bytes.len()
        )));
    }
    let ndim = be_i32(bytes, 0);
    let element_oid = be_i32(bytes, 8) as u32;
    if element_oid != element.oid() {
        return Err(bad(format!(
            "wrong element type {element_oid} in {name} value (expected {})",
            element.oid()
        )));
    }
    let wrap = |items: Vec<Datum>| match ty {
        PgType::Int2Vector | PgType::OidVector => Datum::Vector(items.into()),
        _ => Datum::array(items),
    };
    match ndim {
        0 if bytes.len() == 12 => return Ok(wrap(Vec::new())),
        0 => return Err(bad(format!("trailing bytes after empty {name} value"))),
        1 => {}
        n => {
            return Err(SqlError::unsupported(format!(
                "{name} values with {n} dimensions are not supported"
            )))
        }
    }
    if bytes.len() < 20 {
        return Err(bad(format!("{name} value is missing its dimension")));
    }
    let count = be_i32(bytes, 12);
    if count < 0 {
        return Err(bad(format!("{name} value has {count} elements")));
    }
    let mut at = 20;
    let mut items = Vec::with_capacity((count as usize).min(bytes.len() / 4));
    for i in 0..count {
        if bytes.len() < at + 4 {
            return Err(bad(format!("{name} value ends inside element {}", i + 1)));
        }
        let length = be_i32(bytes, at);
        at += 4;
        if length == -1 {
            items.push(Datum::Null);
            continue;
        }
        let end = usize::try_from(length)
            .ok()
            .and_then(|l| at.checked_add(l))
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| bad(format!("{name} element {} has length {length}", i + 1)))?;
        items.push(read_value(&element, &bytes[at..end])?);
        at = end;
    }
    if at != bytes.len() {
        return Err(bad(format!("trailing bytes after {name} value")));
    }
    Ok(wrap(items))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send(ty: PgType, d: Datum) -> Vec<u8> {
        let mut buf = BytesMut::new();
        put_value(&mut buf, &ty, &d).unwrap();
        buf.to_vec()
    }

    #[test]
    fn known_encodings() {
        assert_eq!(send(PgType::Bool, Datum::Bool(true)), [1]);
        assert_eq!(send(PgType::Int2, Datum::Int2(-2)), [0xFF, 0xFE]);
        assert_eq!(send(PgType::Int8, Datum::Int8(1)), [0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(send(PgType::Float4, Datum::Float4(1.0)), [0x3F, 0x80, 0, 0]);
        assert_eq!(
            send(
                PgType::Tid,
                Datum::Tid {
                    block: 1,
                    offset: 2
                }
            ),
            [0, 0, 0, 1, 0, 2]
        );
        // interval: micros, days, months
        assert_eq!(
            send(
                PgType::Interval,
                Datum::Interval {
                    months: 14,
                    days: 3,
                    micros: 5
                }
            ),
            [0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 14]
        );
        assert_eq!(
            send(
                PgType::TimeTz,
                Datum::TimeTz {
                    micros: 1,
                    offset_west_secs: -7200
                }
            ),
            [0, 0, 0, 0, 0, 0, 0, 1, 0xFF, 0xFF, 0xE3, 0xE0]
        );
        assert_eq!(
            send(
                PgType::array_of(PgType::Int2),
                Datum::array(vec![Datum::Int2(1), Datum::Int2(2)])
            ),
            [
                0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 21, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 0,
                0, 0, 2, 0, 2
            ]
        );
        assert_eq!(
            send(PgType::array_of(PgType::Int2), Datum::array(vec![])),
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 21]
        );
    }

    #[test]
    fn integer_widening_is_range_checked() {
        assert_eq!(send(PgType::Int8, Datum::Int4(7)), [0, 0, 0, 0, 0, 0, 0, 7]);
        let mut buf = BytesMut::new();
        let err = put_value(&mut buf, &PgType::Int2, &Datum::Int8(70_000)).unwrap_err();
        assert_eq!(err.code, "22003");
        let err = put_value(&mut buf, &PgType::Int8, &Datum::Text("x".into())).unwrap_err();
        assert_eq!(err.code, "XX000");
    }

    #[test]
    fn wrong_lengths_are_rejected() {
        let err = read_value(&PgType::Int8, &[0, 0, 0, 1]).unwrap_err();
        assert_eq!(err.code, SqlState::INVALID_BINARY_REPRESENTATION);
        assert!(
            err.message.contains("int8 value must be 8 bytes, got 4"),
            "{err}"
        );
        assert!(read_value(&PgType::Uuid, &[0; 15]).is_err());
        assert!(read_value(&PgType::Tid, &[0; 4]).is_err());
        let err = read_value(&PgType::Varchar, &[0xFF, 0xFE]).unwrap_err();
        assert_eq!(err.code, SqlState::CHARACTER_NOT_IN_REPERTOIRE);
        assert!(read_value(&PgType::array_of(PgType::Int2), &[0; 11]).is_err());
        let ints = PgType::array_of(PgType::Int4);
        let value = Datum::array(vec![Datum::Int4(7), Datum::Null]);
        assert_eq!(
            read_value(&ints, &send(ints.clone(), value.clone())).unwrap(),
            value
        );
        let mut truncated = send(ints.clone(), value);
        truncated.pop();
        assert!(read_value(&ints, &truncated).is_err());
    }

    #[test]
    fn bool_accepts_any_nonzero_byte() {
        assert_eq!(read_value(&PgType::Bool, &[2]).unwrap(), Datum::Bool(true));
        assert_eq!(read_value(&PgType::Bool, &[0]).unwrap(), Datum::Bool(false));
    }
}
