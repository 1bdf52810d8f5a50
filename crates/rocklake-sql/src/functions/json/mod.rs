//! JSON functions and operators (PostgreSQL's "JSON Functions and
//! Operators" table) for both `json` (the text as written) and `jsonb`
//! ([`rocklake_types::value::jsonb`]): reading parts ([`access`]),
//! testing and changing `jsonb` ([`edit`]), making documents and reading
//! their shape ([`build`]), set-returning functions ([`sets`]), and the
//! conversion of any value to JSON ([`convert`]) that they and the JSON
//! aggregates ([`aggregates`]) share. `jsonpath` is not provided.

mod access;
pub(crate) mod aggregates;
mod build;
pub(crate) mod casts;
pub(crate) mod convert;
mod edit;
pub(crate) mod sets;

use rocklake_types::datum::Datum;
use rocklake_types::value::jsonb::{self, Jsonb};
use rocklake_types::{SqlError, SqlState};

use super::def::Library;

pub(crate) use aggregates::KEY_TEXT;

/// Registers the JSON functions and operators.
pub(super) fn register(lib: &mut Library) {
    access::register(lib);
    edit::register(lib);
    build::register(lib);
    sets::register(lib);
    casts::register(lib);
    aggregates::register(lib);
}

/// The document of a `jsonb` argument.
pub(crate) fn document(d: &Datum) -> Result<Jsonb, SqlError> {
    match d {
        Datum::Jsonb(text) | Datum::Text(text) => jsonb::parse(text),
        _ => Ok(Jsonb::Null),
    }
}

/// The elements of a `text[]` argument (NULL elements as `None`).
pub(crate) fn text_array(d: &Datum) -> Vec<Option<String>> {
    d.elements()
        .unwrap_or_default()
        .iter()
        .map(|item| item.as_str().map(str::to_string))
        .collect()
}

/// The position of element `index` (negative from the end) of `len`.
pub(crate) fn index_in(index: i64, len: usize) -> Option<usize> {
    let at = if index < 0 { index + len as i64 } else { index };
    usize::try_from(at).ok().filter(|&at| at < len)
}

/// PostgreSQL's 22023 error, which most JSON functions raise.
pub(crate) fn invalid_parameter(message: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, message.into())
}
