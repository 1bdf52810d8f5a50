//! The `json` type's text: any valid JSON document, kept as it was written
//! (PostgreSQL's `json`, not `jsonb`). Checked on input with serde_json;
//! invalid input is PostgreSQL's `22P02 invalid input syntax for type json`
//! with the parser's reason as its detail.

use serde_json::value::RawValue;

use crate::error::SqlError;
use crate::sqlstate::SqlState;

/// Fails unless `s` is one JSON document (surrounding whitespace allowed).
pub fn check(s: &str) -> Result<(), SqlError> {
    serde_json::from_str::<&RawValue>(s)
        .map(|_| ())
        .map_err(|e| invalid(&e.to_string()))
}

/// PostgreSQL's error for text that is not JSON, with `reason` as detail.
pub fn invalid(reason: &str) -> SqlError {
    SqlError::new(
        SqlState::INVALID_TEXT_REPRESENTATION,
        "invalid input syntax for type json",
    )
    .with_detail(reason.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_pass_and_anything_else_is_22p02() {
        for good in [
            "{}",
            " [1, {\"a\": null}] ",
            "\"s\"",
            "1.5e3",
            "true",
            "null",
        ] {
            assert!(check(good).is_ok(), "{good}");
        }
        for bad in ["", "{bad", "[1,", "tru", "{\"a\":1} x", "'s'", "{\"a\" 1}"] {
            let e = check(bad).unwrap_err();
            assert_eq!(e.code, SqlState::INVALID_TEXT_REPRESENTATION, "{bad}");
            assert_eq!(e.message, "invalid input syntax for type json");
        }
    }
}
