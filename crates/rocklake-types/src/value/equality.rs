//! Equality keys: bytes that are equal exactly when PostgreSQL's equality
//! holds two values of one type equal. The one home of "these values are
//! the same key", for hashing (DISTINCT, GROUP BY, UNION, hash joins,
//! `IN` lists) and for primary-key claims in storage.

use crate::datum::Datum;

/// A hashable key for values that compare equal: integers of any width
/// alike, and otherwise the value's [`equality_key`] (so `1.0` and `1.00`,
/// `-0` and `0`, `1 mon` and `30 days` are one key, as in PostgreSQL).
pub fn hash_key(d: &Datum) -> String {
    let mut key = String::new();
    push_hash_key(d, &mut key);
    key
}

/// Appends [`hash_key`] of `d` to `key` (written in place: hash joins,
/// grouping and `IN` lists make one per value).
pub fn push_hash_key(d: &Datum, key: &mut String) {
    match d {
        Datum::Text(s) => {
            key.reserve(1 + s.len());
            key.push('t');
            key.push_str(s);
        }
        Datum::Record(fields) => {
            key.push_str("r(");
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    key.push('\u{1}');
                }
                push_hash_key(field, key);
            }
            key.push(')');
        }
        other => match other.as_i64() {
            Some(v) => {
                key.push('i');
                key.push_str(itoa::Buffer::new().format(v));
            }
            None => {
                use std::fmt::Write;
                key.push('k');
                for byte in equality_key(other) {
                    let _ = write!(key, "{byte:02x}");
                }
            }
        },
    }
}

/// [`hash_key`] of a whole row.
pub fn row_key(r: &[Datum]) -> String {
    let mut key = String::new();
    for (i, value) in r.iter().enumerate() {
        if i > 0 {
            key.push('\u{1}');
        }
        push_hash_key(value, &mut key);
    }
    key
}

/// [`push_equality_key`] of one value.
pub fn equality_key(datum: &Datum) -> Vec<u8> {
    let mut out = Vec::new();
    push_equality_key(datum, &mut out);
    out
}

/// Appends a self-delimiting encoding of `datum` that is equal for equal
/// values of one type: numerics without trailing fraction zeros (`1.0` =
/// `1.00`), `-0` as `0` and every NaN as one for floats, intervals by their
/// span (`1 mon` = `30 days`), integers of any width as `i64`.
pub fn push_equality_key(datum: &Datum, out: &mut Vec<u8>) {
    let bytes = |out: &mut Vec<u8>, tag: u8, data: &[u8]| {
        out.push(tag);
        out.extend_from_slice(&(data.len() as u64).to_be_bytes());
        out.extend_from_slice(data);
    };
    match datum {
        Datum::Null => out.push(0),
        Datum::Bool(v) => out.extend_from_slice(&[1, u8::from(*v)]),
        Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_) | Datum::Oid(_) | Datum::Reg { .. } => {
            out.push(2);
            out.extend_from_slice(&datum.as_i64().unwrap_or(0).to_be_bytes());
        }
        Datum::Float4(v) => encode_float(f64::from(*v), out),
        Datum::Float8(v) => encode_float(*v, out),
        Datum::Text(s) => bytes(out, 4, s.as_bytes()),
        Datum::Bytea(b) => bytes(out, 5, b),
        Datum::Uuid(u) => bytes(out, 6, u),
        Datum::TimestampTz(v) | Datum::Timestamp(v) | Datum::Time(v) => {
            out.push(7);
            out.extend_from_slice(&v.to_be_bytes());
        }
        Datum::Date(v) => {
            out.push(8);
            out.extend_from_slice(&v.to_be_bytes());
        }
        Datum::TimeTz {
            micros,
            offset_west_secs,
        } => {
            out.push(9);
            out.extend_from_slice(&micros.to_be_bytes());
            out.extend_from_slice(&offset_west_secs.to_be_bytes());
        }
        Datum::Interval {
            months,
            days,
            micros,
        } => {
            let span = (i128::from(*months) * 30 + i128::from(*days)) * 86_400_000_000
                + i128::from(*micros);
            out.push(10);
            out.extend_from_slice(&span.to_be_bytes());
        }
        Datum::Numeric(text) => bytes(
            out,
            11,
            super::numeric::without_trailing_zeros(text).as_bytes(),
        ),
        Datum::Tid { block, offset } => {
            out.push(12);
            out.extend_from_slice(&block.to_be_bytes());
            out.extend_from_slice(&offset.to_be_bytes());
        }
        Datum::Jsonb(text) => {
            // Numbers by value (`1.0` = `1`), the rest as stored.
            let mut key = String::new();
            match super::jsonb::parse(text) {
                Ok(value) => value.write_equality_text(&mut key),
                Err(_) => key.push_str(text),
            }
            bytes(out, 14, key.as_bytes());
        }
        Datum::Array(items) | Datum::Vector(items) | Datum::Record(items) => {
            out.push(13);
            out.extend_from_slice(&(items.len() as u64).to_be_bytes());
            for item in items.iter() {
                push_equality_key(item, out);
            }
        }
    }
}

/// A float as PostgreSQL's equality sees it: `-0 = 0`, `NaN = NaN`.
fn encode_float(v: f64, out: &mut Vec<u8>) {
    let v = if v.is_nan() {
        f64::NAN
    } else if v == 0.0 {
        0.0
    } else {
        v
    };
    out.push(3);
    out.extend_from_slice(&v.to_bits().to_be_bytes());
}

/// A numeric's canonical text (no leading zeros, sign only when not zero)
/// without the trailing zeros of its fraction, which only give its scale.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_keys_read_as_documented() {
        for one in [
            Datum::Int2(1),
            Datum::Int4(1),
            Datum::Int8(1),
            Datum::Oid(1),
        ] {
            assert_eq!(hash_key(&one), "i1");
        }
        assert_eq!(hash_key(&Datum::Int8(i64::MIN)), format!("i{}", i64::MIN));
        assert_eq!(hash_key(&Datum::Text("abc".into())), "tabc");
        let record = Datum::Record(vec![Datum::Int4(-7), Datum::Text("x".into())].into());
        assert_eq!(hash_key(&record), "r(i-7\u{1}tx)");
        assert_eq!(hash_key(&Datum::Bool(true)), "k0101");
        assert_eq!(
            row_key(&[Datum::Int4(2), Datum::Text("y".into()), Datum::Null]),
            "i2\u{1}ty\u{1}k00"
        );
    }

    fn encoded(datum: Datum) -> Vec<u8> {
        let mut out = Vec::new();
        push_equality_key(&datum, &mut out);
        out
    }

    #[test]
    fn equal_values_encode_the_same() {
        assert_eq!(
            encoded(Datum::Numeric("1.0".into())),
            encoded(Datum::Numeric("1.00".into()))
        );
        assert_eq!(
            encoded(Datum::Numeric("10".into())),
            encoded(Datum::Numeric("10.000".into()))
        );
        assert_ne!(
            encoded(Datum::Numeric("10".into())),
            encoded(Datum::Numeric("1".into()))
        );
        assert_eq!(encoded(Datum::Float8(-0.0)), encoded(Datum::Float8(0.0)));
        assert_eq!(
            encoded(Datum::Float8(f64::NAN)),
            encoded(Datum::Float8(-f64::NAN))
        );
        assert_eq!(
            encoded(Datum::Interval {
                months: 1,
                days: 0,
                micros: 0
            }),
            encoded(Datum::Interval {
                months: 0,
                days: 30,
                micros: 0
            })
        );
        assert_eq!(encoded(Datum::Int4(7)), encoded(Datum::Int8(7)));
    }

    #[test]
    fn encodings_are_self_delimiting() {
        let mut ab_c = Vec::new();
        push_equality_key(&Datum::text("ab"), &mut ab_c);
        push_equality_key(&Datum::text("c"), &mut ab_c);
        let mut a_bc = Vec::new();
        push_equality_key(&Datum::text("a"), &mut a_bc);
        push_equality_key(&Datum::text("bc"), &mut a_bc);
        assert_ne!(ab_c, a_bc);
    }
}
