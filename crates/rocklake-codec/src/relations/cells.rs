//! Cells: the typed values of dynamic rows (inlined data, inlined deletes,
//! other tables) and of catalog-table columns the `.proto` does not name.

use crate::values::pb;
use rocklake_types::datum::{Datum, PgType};

/// A datum as a dynamic-row cell.
pub fn datum_to_cell(datum: &Datum) -> pb::Cell {
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
        Datum::Oid(v) | Datum::Reg { oid: v, .. } => V::IntValue(i64::from(*v)),
        Datum::Float4(v) => V::Float4Value(*v),
        Datum::Float8(v) => V::Float8Value(*v),
        Datum::Text(s) | Datum::Jsonb(s) => V::TextValue(s.to_string()),
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
        // No column has a row type (the engine refuses one), so a record
        // is never stored; were it, its fields would read back as an array.
        Datum::Array(items) | Datum::Vector(items) | Datum::Record(items) => {
            V::ArrayValue(pb::CellArray {
                elements: items.iter().map(datum_to_cell).collect(),
            })
        }
    };
    pb::Cell { value: Some(value) }
}

/// A dynamic-row cell as a datum of `pg_type`, or why it does not fit.
pub fn cell_to_datum(cell: pb::Cell, pg_type: &PgType) -> Result<Datum, String> {
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
        (
            PgType::Oid
            | PgType::RegProc
            | PgType::RegClass
            | PgType::RegType
            | PgType::RegNamespace,
            V::IntValue(v),
        ) => Datum::Oid(u32::try_from(v).map_err(|e| e.to_string())?),
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
        (PgType::Array(element), V::Int2ArrayValue(a)) if **element == PgType::Int2 => {
            Datum::array(
                a.values
                    .into_iter()
                    .map(|v| i16::try_from(v).map(Datum::Int2).map_err(|e| e.to_string()))
                    .collect::<Result<Vec<_>, _>>()?,
            )
        }
        (PgType::Array(_) | PgType::Int2Vector | PgType::OidVector, V::ArrayValue(a)) => {
            let element = pg_type.element_type().unwrap_or(PgType::Text);
            let items = a
                .elements
                .into_iter()
                .map(|cell| cell_to_datum(cell, &element))
                .collect::<Result<Vec<_>, _>>()?;
            if matches!(pg_type, PgType::Array(_)) {
                Datum::array(items)
            } else {
                Datum::Vector(items.into())
            }
        }
        (PgType::Json | PgType::AclItem, V::TextValue(s)) => Datum::Text(s.into()),
        (PgType::Jsonb, V::TextValue(s)) => Datum::Jsonb(s.into()),
        (_, other) => return Err(mismatch(&other)),
    })
}
