//! The `json` type's text: any valid JSON document, kept as it was written
//! (PostgreSQL's `json`, not `jsonb`). Checked on input with serde_json;
//! invalid input is PostgreSQL's `22P02 invalid input syntax for type json`
//! with the parser's reason as its detail.

use serde_json::value::RawValue;

use crate::error::SqlError;
use crate::sqlstate::SqlState;

/// How deep arrays and objects may nest in a document. Parsing and every
/// function over a document recurse once per level, so a deeper one would
/// overflow the session's stack and end the server; PostgreSQL, with its
/// default 2 MB `max_stack_depth`, refuses one a few thousand levels deep.
pub const MAX_DEPTH: usize = 10_000;

/// Fails with PostgreSQL's `54001` when arrays and objects in the JSON text
/// `s` nest deeper than [`MAX_DEPTH`] (one pass, brackets in strings not
/// counted).
pub fn check_depth(s: &str) -> Result<(), SqlError> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for b in s.bytes() {
        match (in_string, b) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') => in_string = false,
            (true, _) => {}
            (false, b'"') => in_string = true,
            (false, b'[' | b'{') => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(SqlError::new(
                        SqlState::STATEMENT_TOO_COMPLEX,
                        "stack depth limit exceeded",
                    )
                    .with_detail(format!(
                        "JSON arrays and objects nest more than {MAX_DEPTH} levels."
                    )));
                }
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            (false, _) => {}
        }
    }
    Ok(())
}

/// Fails unless `s` is one JSON document (surrounding whitespace allowed).
pub fn check(s: &str) -> Result<(), SqlError> {
    check_depth(s)?;
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
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(
            check(&deep).unwrap_err().code,
            SqlState::STATEMENT_TOO_COMPLEX
        );
        let deep_enough = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(check(&deep_enough).is_ok());
        // Brackets inside strings do not count.
        assert!(check(&format!("\"{}\"", "[".repeat(MAX_DEPTH + 1))).is_ok());
        for bad in ["", "{bad", "[1,", "tru", "{\"a\":1} x", "'s'", "{\"a\" 1}"] {
            let e = check(bad).unwrap_err();
            assert_eq!(e.code, SqlState::INVALID_TEXT_REPRESENTATION, "{bad}");
            assert_eq!(e.message, "invalid input syntax for type json");
        }
    }
}
