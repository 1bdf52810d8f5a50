//! PostgreSQL's facts about types that function and operator resolution
//! reads: each type's category and whether it is the preferred type of its
//! category (`pg_type.typcategory`, `typispreferred`), and which types
//! convert to which implicitly (`pg_cast` entries with `castcontext = 'i'`,
//! plus binary-coercible pairs). Values are those of PostgreSQL 15.

use rocklake_types::datum::PgType;

/// A type category (`pg_type.typcategory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// `A`: arrays.
    Array,
    /// `B`: `boolean`.
    Boolean,
    /// `C`: composite (row) types.
    Composite,
    /// `D`: date and time types.
    DateTime,
    /// `N`: numbers and object identifiers.
    Numeric,
    /// `S`: strings.
    String,
    /// `T`: `interval`.
    Timespan,
    /// `U`: user-defined and other base types (`bytea`, `uuid`, `json`, ...).
    User,
    /// `Z`: internal types (`"char"`, vectors).
    Internal,
}

/// The category of `t`.
pub fn category(t: &PgType) -> Category {
    match t {
        PgType::Bool => Category::Boolean,
        PgType::Date | PgType::Time | PgType::TimeTz | PgType::Timestamp | PgType::TimestampTz => {
            Category::DateTime
        }
        PgType::Int2
        | PgType::Int4
        | PgType::Int8
        | PgType::Float4
        | PgType::Float8
        | PgType::Numeric(_)
        | PgType::Oid
        | PgType::RegProc
        | PgType::RegClass
        | PgType::RegType
        | PgType::RegNamespace => Category::Numeric,
        PgType::Text | PgType::Varchar | PgType::Name => Category::String,
        PgType::Interval => Category::Timespan,
        PgType::Array(_) => Category::Array,
        PgType::Record(_) => Category::Composite,
        PgType::Char | PgType::Int2Vector | PgType::OidVector => Category::Internal,
        _ => Category::User,
    }
}

/// Whether `t` is the preferred type of its category (`text`, `float8`,
/// `oid`, `timestamptz`, `interval`, `boolean`).
pub fn is_preferred(t: &PgType) -> bool {
    matches!(
        t,
        PgType::Text
            | PgType::Float8
            | PgType::Oid
            | PgType::TimestampTz
            | PgType::Interval
            | PgType::Bool
    )
}

/// The integer types by width, for the casts between them.
fn int_rank(t: &PgType) -> Option<u8> {
    match t {
        PgType::Int2 => Some(2),
        PgType::Int4 => Some(4),
        PgType::Int8 => Some(8),
        _ => None,
    }
}

/// Whether a value of `from` converts to `to` implicitly, as PostgreSQL's
/// `can_coerce_type` decides for a function argument or an operand: the
/// same type, a binary-coercible pair, or an implicit cast.
pub fn coerces_implicitly(from: &PgType, to: &PgType) -> bool {
    if same_type(from, to) {
        return true;
    }
    use PgType as T;
    match (from, to) {
        // Widening integers, and every number to the wider kinds.
        (f, t) if int_rank(f).zip(int_rank(t)).is_some_and(|(a, b)| a < b) => true,
        (T::Int2 | T::Int4 | T::Int8, T::Float4 | T::Float8 | T::Numeric(_)) => true,
        (T::Numeric(_), T::Float4 | T::Float8) => true,
        (T::Float4, T::Float8) => true,
        // Integers and object identifiers.
        (T::Int2 | T::Int4 | T::Int8, T::Oid) => true,
        (T::Int2 | T::Int4 | T::Int8 | T::Oid, t) if t.is_reg() => true,
        (f, T::Oid) if f.is_reg() => true,
        // Strings.
        (T::Text | T::Varchar | T::Name | T::Char, T::Text) => true,
        (T::Text | T::Varchar, T::Varchar | T::Name) => true,
        (T::Text | T::Varchar, T::RegClass) => true,
        // Date and time.
        (T::Date, T::Timestamp | T::TimestampTz) => true,
        (T::Timestamp, T::TimestampTz) => true,
        (T::Time, T::Interval | T::TimeTz) => true,
        // Arrays of types that coerce.
        (T::Array(a), T::Array(b)) => coerces_implicitly(a, b),
        (T::Int2Vector, T::Array(e)) => **e == T::Int2,
        (T::OidVector, T::Array(e)) => **e == T::Oid,
        _ => false,
    }
}

/// Whether the two are the same type (`numeric` of any typmod is one).
pub fn same_type(a: &PgType, b: &PgType) -> bool {
    match (a, b) {
        (PgType::Numeric(_), PgType::Numeric(_)) => true,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implicit_casts_follow_pg_cast() {
        use PgType as T;
        for (from, to, implicit) in [
            (T::Int4, T::Int8, true),
            (T::Int8, T::Int4, false),
            (T::Int4, T::Numeric(None), true),
            (T::Numeric(None), T::Int4, false),
            (T::Numeric(None), T::Float8, true),
            (T::Float8, T::Numeric(None), false),
            (T::Date, T::TimestampTz, true),
            (T::TimestampTz, T::Date, false),
            (T::Timestamp, T::TimestampTz, true),
            (T::TimestampTz, T::Timestamp, false),
            (T::Time, T::Interval, true),
            (T::Interval, T::Time, false),
            (T::Varchar, T::Text, true),
            (T::Name, T::Text, true),
            (T::Text, T::Name, true),
            (T::Name, T::Varchar, false),
            (T::Int4, T::Text, false),
            (T::Bool, T::Text, false),
            (T::Int4, T::RegClass, true),
        ] {
            assert_eq!(
                coerces_implicitly(&from, &to),
                implicit,
                "{from:?} -> {to:?}"
            );
        }
        assert_eq!(category(&T::Interval), Category::Timespan);
        assert!(is_preferred(&T::TimestampTz));
        assert!(!is_preferred(&T::Int4));
    }
}
