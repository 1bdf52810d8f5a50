//! Ordering between datums of compatible types, as PostgreSQL's btree
//! operators order them.

use std::cmp::Ordering;

use rocklake_types::value::numeric;
use rocklake_types::value::text::format_text;
use rocklake_types::Datum;

use crate::plan::CmpOp;

/// Orders two arrays as PostgreSQL's `array_cmp` does: element by element
/// (NULL elements above all others), then the shorter first.
fn compare_elements(x: &[Datum], y: &[Datum]) -> Ordering {
    x.iter()
        .zip(y)
        .map(|(a, b)| compare(a, b))
        .find(|o| o.is_ne())
        .unwrap_or_else(|| x.len().cmp(&y.len()))
}

/// Orders two non-NULL datums (PostgreSQL btree order: NaN sorts above every
/// number). Datums of unrelated kinds compare by their text forms.
pub fn compare(a: &Datum, b: &Datum) -> Ordering {
    use Datum::*;
    match (a, b) {
        (Null, Null) => Ordering::Equal,
        (Null, _) => Ordering::Greater,
        (_, Null) => Ordering::Less,
        (Bool(x), Bool(y)) => x.cmp(y),
        (Text(x), Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Jsonb(x), Jsonb(y)) => {
            use rocklake_types::value::jsonb::{compare_documents, parse};
            match (parse(x), parse(y)) {
                (Ok(x), Ok(y)) => compare_documents(&x, &y),
                _ => x.as_bytes().cmp(y.as_bytes()),
            }
        }
        (Bytea(x), Bytea(y)) => x.cmp(y),
        (Uuid(x), Uuid(y)) => x.cmp(y),
        (TimestampTz(x) | Timestamp(x), TimestampTz(y) | Timestamp(y)) => x.cmp(y),
        (Date(x), Date(y)) => x.cmp(y),
        (Time(x), Time(y)) => x.cmp(y),
        (
            TimeTz {
                micros: x,
                offset_west_secs: ox,
            },
            TimeTz {
                micros: y,
                offset_west_secs: oy,
            },
        ) => (x + i64::from(*ox) * 1_000_000).cmp(&(y + i64::from(*oy) * 1_000_000)),
        (Interval { .. }, Interval { .. }) => interval_key(a).cmp(&interval_key(b)),
        (
            Tid {
                block: b1,
                offset: o1,
            },
            Tid {
                block: b2,
                offset: o2,
            },
        ) => (b1, o1).cmp(&(b2, o2)),
        (Array(x) | Vector(x), Array(y) | Vector(y)) => compare_elements(x, y),
        // Field by field, NULL fields equal to each other and after the
        // others (PostgreSQL's record_cmp / record_eq).
        (Record(x), Record(y)) => compare_elements(x, y),
        _ => {
            if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
                return x.cmp(&y);
            }
            if matches!(a, Float4(_) | Float8(_)) || matches!(b, Float4(_) | Float8(_)) {
                if let (Some(x), Some(y)) = (to_f64(a), to_f64(b)) {
                    return x.total_cmp(&y).then(Ordering::Equal);
                }
            }
            if let (Some(x), Some(y)) = (numeric_text(a), numeric_text(b)) {
                return numeric::compare(&x, &y);
            }
            format_text(a).cmp(&format_text(b))
        }
    }
}

fn interval_key(d: &Datum) -> i128 {
    match d {
        Datum::Interval {
            months,
            days,
            micros,
        } => {
            i128::from(*months) * 30 * 86_400_000_000
                + i128::from(*days) * 86_400_000_000
                + i128::from(*micros)
        }
        _ => 0,
    }
}

/// The datum as a float, for numeric kinds.
pub fn to_f64(d: &Datum) -> Option<f64> {
    match d {
        Datum::Float4(v) => Some(f64::from(*v)),
        Datum::Float8(v) => Some(*v),
        Datum::Numeric(s) => {
            s.parse::<f64>()
                .ok()
                .or(if s == "NaN" { Some(f64::NAN) } else { None })
        }
        other => other.as_i64().map(|v| v as f64),
    }
}

/// The datum as numeric text, for integer and numeric kinds.
pub fn numeric_text(d: &Datum) -> Option<String> {
    match d {
        Datum::Numeric(s) => Some(s.clone()),
        other => other.as_i64().map(|v| v.to_string()),
    }
}

/// Whether `ord` satisfies the comparison operator.
pub fn cmp_holds(op: CmpOp, ord: Ordering) -> bool {
    match op {
        CmpOp::Eq => ord == Ordering::Equal,
        CmpOp::Ne => ord != Ordering::Equal,
        CmpOp::Lt => ord == Ordering::Less,
        CmpOp::Le => ord != Ordering::Greater,
        CmpOp::Gt => ord == Ordering::Greater,
        CmpOp::Ge => ord != Ordering::Less,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_across_numeric_widths() {
        assert_eq!(compare(&Datum::Int4(3), &Datum::Int8(3)), Ordering::Equal);
        assert_eq!(
            compare(&Datum::Int2(2), &Datum::Numeric("2.5".into())),
            Ordering::Less
        );
        assert_eq!(
            compare(&Datum::Float8(2.5), &Datum::Int8(2)),
            Ordering::Greater
        );
        assert_eq!(
            compare(&Datum::Text("B".into()), &Datum::Text("a".into())),
            Ordering::Less
        );
    }
}
