//! Type resolution between the branches of set operations, CASE,
//! COALESCE, VALUES and the like, as PostgreSQL's `select_common_type`.

use rocklake_types::datum::PgType;
use rocklake_types::{SqlError, SqlState};

use super::Ty;

fn int_rank(t: &PgType) -> Option<u8> {
    match t {
        PgType::Int2 => Some(1),
        PgType::Int4 => Some(2),
        PgType::Int8 => Some(3),
        PgType::Oid
        | PgType::RegProc
        | PgType::RegClass
        | PgType::RegType
        | PgType::RegNamespace => Some(4),
        _ => None,
    }
}

/// The common type of two branches (UNION, CASE, COALESCE, VALUES), as
/// PostgreSQL resolves it; `None` only when both are unknown.
pub fn common_type(a: &Ty, b: &Ty, what: &str) -> Result<Ty, SqlError> {
    let (x, y) = match (a, b) {
        (None, t) | (t, None) => return Ok(t.clone()),
        (Some(x), Some(y)) => (x, y),
    };
    if x == y || matches!((x, y), (PgType::Record(_), PgType::Record(_))) && comparable(x, y) {
        return Ok(Some(x.clone()));
    }
    if let (Some(rx), Some(ry)) = (int_rank(x), int_rank(y)) {
        return Ok(Some(if rx >= ry { x.clone() } else { y.clone() }));
    }
    if x.is_numeric() && y.is_numeric() {
        if matches!(x, PgType::Float8 | PgType::Float4)
            || matches!(y, PgType::Float8 | PgType::Float4)
        {
            return Ok(Some(PgType::Float8));
        }
        return Ok(Some(PgType::Numeric(None)));
    }
    if x.is_string() && y.is_string() {
        return Ok(Some(string_common_type(x, y)));
    }
    match (x, y) {
        (
            PgType::Timestamp | PgType::TimestampTz | PgType::Date,
            PgType::Timestamp | PgType::TimestampTz | PgType::Date,
        ) => Ok(Some(PgType::TimestampTz)),
        (
            PgType::Oid
            | PgType::RegProc
            | PgType::RegClass
            | PgType::RegType
            | PgType::RegNamespace,
            PgType::Oid
            | PgType::RegProc
            | PgType::RegClass
            | PgType::RegType
            | PgType::RegNamespace,
        ) => Ok(Some(PgType::Oid)),
        _ => Err(SqlError::new(
            SqlState::DATATYPE_MISMATCH,
            format!(
                "{what} types {} and {} cannot be matched",
                x.display_name(),
                y.display_name()
            ),
        )),
    }
}

/// The common type of two different string types as PostgreSQL's
/// `select_common_type` picks it: `text`, the preferred type, when the
/// first is `text`; else `name` when the second is (the others convert to
/// `name` implicitly, `name` to them only on assignment); else the first
/// (`varchar` and `text` convert to each other implicitly). `"char"` with
/// any of them is `text`.
fn string_common_type(x: &PgType, y: &PgType) -> PgType {
    match (x, y) {
        (PgType::Text, _) | (PgType::Char, _) | (_, PgType::Char) => PgType::Text,
        (_, PgType::Name) => PgType::Name,
        _ => x.clone(),
    }
}

/// Whether values of the two types may be compared with `=`, `<`, ...
pub fn comparable(a: &PgType, b: &PgType) -> bool {
    if let (PgType::Record(x), PgType::Record(y)) = (a, b) {
        return x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| comparable(&p.1, &q.1));
    }
    // `json` has no comparison operators (`jsonb` has).
    a == b && *a != PgType::Json
        || (a.is_numeric() || a.is_reg()) && (b.is_numeric() || b.is_reg())
        || a.is_string() && b.is_string()
        || matches!(
            (a, b),
            (
                PgType::Timestamp | PgType::TimestampTz | PgType::Date,
                PgType::Timestamp | PgType::TimestampTz | PgType::Date
            )
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_types_resolve_like_postgres() {
        let t = |x: PgType| Some(x);
        assert_eq!(common_type(&None, &None, "x").unwrap(), None);
        assert_eq!(
            common_type(&None, &t(PgType::Bool), "x").unwrap(),
            t(PgType::Bool)
        );
        assert_eq!(
            common_type(&t(PgType::Int4), &t(PgType::Int8), "x").unwrap(),
            t(PgType::Int8)
        );
        assert_eq!(
            common_type(&t(PgType::Int8), &t(PgType::Numeric(None)), "x").unwrap(),
            t(PgType::Numeric(None))
        );
        assert_eq!(
            common_type(&t(PgType::Int4), &t(PgType::Float4), "x").unwrap(),
            t(PgType::Float8)
        );
        assert_eq!(
            common_type(&t(PgType::Name), &t(PgType::Varchar), "x").unwrap(),
            t(PgType::Name)
        );
        assert_eq!(
            common_type(&t(PgType::Varchar), &t(PgType::Text), "x").unwrap(),
            t(PgType::Varchar)
        );
        assert_eq!(
            common_type(&t(PgType::Text), &t(PgType::Varchar), "x").unwrap(),
            t(PgType::Text)
        );
        assert_eq!(
            common_type(&t(PgType::Varchar), &t(PgType::Name), "x").unwrap(),
            t(PgType::Name)
        );
        let e = common_type(&t(PgType::Bool), &t(PgType::Int4), "UNION").unwrap_err();
        assert_eq!(e.code, "42804");
        assert!(comparable(&PgType::Int2, &PgType::Numeric(None)));
        assert!(!comparable(&PgType::Varchar, &PgType::Int8));
    }
}
