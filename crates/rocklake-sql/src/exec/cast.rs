//! Casts between types: explicit and implicit `CAST`, and the assignment
//! casts that conform a value to a column's type.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::numeric;
use rocklake_types::value::text::{format_text, parse_text};
use rocklake_types::{SqlError, SqlState};

use crate::exec::compare::to_f64;
use rocklake_types::value::zone::with_session_zone as session;

/// Text form used by casts to text and by `||` (booleans become `true`/`false`).
pub fn text_of(d: &Datum) -> Option<String> {
    match d {
        Datum::Bool(b) => Some(if *b { "true" } else { "false" }.to_string()),
        other => format_text(other),
    }
}
pub(crate) fn range_err(t: &PgType) -> SqlError {
    SqlError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("{} out of range", t.display_name()),
    )
}
pub(crate) fn int_to(v: i64, to: &PgType) -> Result<Datum, SqlError> {
    Ok(match to {
        PgType::Int2 => Datum::Int2(i16::try_from(v).map_err(|_| range_err(to))?),
        PgType::Int4 => Datum::Int4(i32::try_from(v).map_err(|_| range_err(to))?),
        PgType::Int8 => Datum::Int8(v),
        PgType::Oid
        | PgType::RegProc
        | PgType::RegClass
        | PgType::RegType
        | PgType::RegNamespace => Datum::Oid(u32::try_from(v).map_err(|_| range_err(to))?),
        PgType::Float4 => Datum::Float4(v as f32),
        PgType::Float8 => Datum::Float8(v as f64),
        PgType::Numeric(tm) => Datum::Numeric(numeric::apply_typmod(&v.to_string(), *tm)?),
        PgType::Bool => Datum::Bool(v != 0),
        _ => return parse_text(&v.to_string(), to),
    })
}
/// Casts a datum to `to`, as `CAST(d AS to)` would.
pub fn cast_datum(d: Datum, to: &PgType) -> Result<Datum, SqlError> {
    use Datum as D;
    match (&d, to) {
        (D::Null, _) => Ok(D::Null),
        (D::Record(_), PgType::Record(_)) => Ok(d),
        (_, PgType::Name) => Ok(match &d {
            D::Text(s) if s.len() <= rocklake_types::ident::MAX_NAME_BYTES => d.clone(),
            _ => {
                let text = text_of(&d).unwrap_or_default();
                D::text(rocklake_types::ident::truncate_name(&text).to_string())
            }
        }),
        (_, PgType::Text | PgType::Varchar) => Ok(match &d {
            D::Text(_) => d.clone(),
            _ => D::text(text_of(&d).unwrap_or_default()),
        }),
        (_, PgType::Char) => Ok(D::text(
            text_of(&d)
                .unwrap_or_default()
                .chars()
                .take(1)
                .collect::<String>(),
        )),
        (
            D::Array(items) | D::Vector(items),
            PgType::Array(_) | PgType::Int2Vector | PgType::OidVector,
        ) => {
            let element = to.element_type().unwrap_or(PgType::Text);
            let items = items
                .iter()
                .map(|item| cast_datum(item.clone(), &element))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(match to {
                PgType::Array(_) => D::array(items),
                _ => D::Vector(items.into()),
            })
        }
        (D::Text(s), _) => parse_text(s, to),
        (D::Jsonb(s), PgType::Json) => Ok(D::Text(s.clone())),
        (D::Jsonb(_), PgType::Jsonb) => Ok(d),
        // Already named: casts between the object-identifier types keep
        // the name (the binder names values cast from other types).
        (D::Reg { .. }, t) if t.is_reg() => Ok(d),
        (D::Int2(_) | D::Int4(_) | D::Int8(_) | D::Oid(_) | D::Reg { .. }, _) => {
            int_to(d.as_i64().unwrap_or(0), to)
        }
        (D::Float4(_) | D::Float8(_), _) => {
            let v = to_f64(&d).unwrap_or(0.0);
            match to {
                PgType::Float4 => Ok(D::Float4(v as f32)),
                PgType::Float8 => Ok(D::Float8(v)),
                PgType::Numeric(tm) => {
                    let n = numeric::from_f64(v).ok_or_else(|| {
                        SqlError::unsupported("cannot convert infinity to numeric")
                    })?;
                    Ok(D::Numeric(numeric::apply_typmod(&n, *tm)?))
                }
                PgType::Int2 | PgType::Int4 | PgType::Int8 => {
                    let r = v.round_ties_even();
                    if !r.is_finite() || r < i64::MIN as f64 || r >= i64::MAX as f64 {
                        return Err(range_err(to));
                    }
                    int_to(r as i64, to)
                }
                _ => parse_text(&format_text(&d).unwrap_or_default(), to),
            }
        }
        (D::Numeric(s), _) => match to {
            PgType::Numeric(tm) => Ok(D::Numeric(numeric::apply_typmod(s, *tm)?)),
            // Through the float's input, which checks its range.
            PgType::Float4 | PgType::Float8 => parse_text(s, to),
            PgType::Int2 | PgType::Int4 | PgType::Int8 => {
                int_to(numeric::to_i64_rounded(s).ok_or_else(|| range_err(to))?, to)
            }
            _ => parse_text(s, to),
        },
        // A timestamptz is an instant, shown and split in the session's
        // zone; a timestamp (and a date) is local time there.
        (D::TimestampTz(v), PgType::TimestampTz) => Ok(D::TimestampTz(*v)),
        (D::Timestamp(v), PgType::TimestampTz) => Ok(D::TimestampTz(session(|z| z.instant(*v)))),
        (D::TimestampTz(v), PgType::Timestamp) => Ok(D::Timestamp(session(|z| z.local(*v)))),
        (D::Timestamp(v), PgType::Timestamp) => Ok(D::Timestamp(*v)),
        (D::TimestampTz(v) | D::Timestamp(v), PgType::Date) => {
            let local = match d {
                D::TimestampTz(_) => session(|z| z.local(*v)),
                _ => *v,
            };
            Ok(D::Date(match local {
                i64::MAX => i32::MAX,
                i64::MIN => i32::MIN,
                v => v.div_euclid(DAY) as i32,
            }))
        }
        (D::Date(v), PgType::Timestamp | PgType::TimestampTz) => {
            let micros = match *v {
                i32::MAX => i64::MAX,
                i32::MIN => i64::MIN,
                v => i64::from(v) * DAY,
            };
            Ok(if *to == PgType::Timestamp {
                D::Timestamp(micros)
            } else {
                D::TimestampTz(session(|z| z.instant(micros)))
            })
        }
        (D::Timestamp(v), PgType::Time) if !infinite(*v) => Ok(D::Time(v.rem_euclid(DAY))),
        (D::TimestampTz(v), PgType::Time) if !infinite(*v) => {
            Ok(D::Time(session(|z| z.local(*v)).rem_euclid(DAY)))
        }
        (D::TimestampTz(v), PgType::TimeTz) if !infinite(*v) => Ok(session(|z| D::TimeTz {
            micros: z.local(*v).rem_euclid(DAY),
            offset_west_secs: -z.offset_at(*v),
        })),
        // The zone's offset of today.
        (D::Time(v), PgType::TimeTz) => Ok(D::TimeTz {
            micros: *v,
            offset_west_secs: -session(|z| {
                z.offset_at(rocklake_types::datum::timestamptz_micros(
                    std::time::SystemTime::now(),
                ))
            }),
        }),
        (D::Time(v), PgType::Interval) => Ok(D::Interval {
            months: 0,
            days: 0,
            micros: *v,
        }),
        (D::TimeTz { micros, .. }, PgType::Time) => Ok(D::Time(*micros)),
        (D::Interval { micros, .. }, PgType::Time) => Ok(D::Time(micros.rem_euclid(DAY))),
        (D::Bool(b), PgType::Int4) => Ok(D::Int4(i32::from(*b))),
        _ => {
            let same = matches!(
                (&d, to),
                (D::Bool(_), PgType::Bool)
                    | (D::Bytea(_), PgType::Bytea)
                    | (D::Uuid(_), PgType::Uuid)
                    | (D::Date(_), PgType::Date)
                    | (D::Time(_), PgType::Time)
                    | (D::TimeTz { .. }, PgType::TimeTz)
                    | (D::Interval { .. }, PgType::Interval)
                    | (D::Tid { .. }, PgType::Tid)
            );
            if same {
                return Ok(d);
            }
            Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!(
                    "cannot cast value {} to type {}",
                    text_of(&d).unwrap_or_default(),
                    to.display_name()
                ),
            ))
        }
    }
}
/// Conforms a value to a column type (assignment cast).
pub fn assign(d: Datum, t: &PgType) -> Result<Datum, SqlError> {
    if already_typed(&d, t) {
        Ok(d)
    } else {
        cast_datum(d, t)
    }
}
/// Whether `d` is already a value of type `t` as the engine holds it, so
/// assigning it changes nothing.
pub fn already_typed(d: &Datum, t: &PgType) -> bool {
    if let (Datum::Text(s), PgType::Name) = (d, t) {
        return s.len() <= rocklake_types::ident::MAX_NAME_BYTES;
    }
    matches!(
        (d, t),
        (Datum::Null, _)
            | (Datum::Text(_), PgType::Text | PgType::Varchar)
            | (Datum::Int8(_), PgType::Int8)
            | (Datum::Int4(_), PgType::Int4)
            | (Datum::Int2(_), PgType::Int2)
            | (Datum::Bool(_), PgType::Bool)
            | (Datum::Float8(_), PgType::Float8)
            | (Datum::TimestampTz(_), PgType::TimestampTz)
            | (Datum::Timestamp(_), PgType::Timestamp)
            | (Datum::Date(_), PgType::Date)
            | (Datum::Uuid(_), PgType::Uuid)
            | (Datum::Tid { .. }, PgType::Tid)
            | (Datum::Record(_), PgType::Record(_))
            | (
                Datum::Reg { .. },
                PgType::RegProc | PgType::RegClass | PgType::RegType | PgType::RegNamespace
            )
    )
}

/// Microseconds in a day.
const DAY: i64 = 86_400_000_000;

/// Whether a timestamp is `infinity` or `-infinity`.
fn infinite(micros: i64) -> bool {
    micros == i64::MAX || micros == i64::MIN
}
