//! PostgreSQL's limit on names, shared by every layer that takes one: the
//! SQL lexer (identifiers), the wire server (the database and user of a
//! StartupMessage) and the command line (`--database`, `--schema`).
//!
//! PostgreSQL stores names in `NAMEDATALEN` (64) bytes with a terminating
//! zero, so a name holds at most 63 bytes; a longer identifier is cut to
//! 63 bytes on a character boundary (its lexer says so with NOTICE 42622),
//! and the cut name is the object's name. A name is never empty: an empty
//! quoted identifier is a syntax error.

use crate::error::SqlError;
use crate::sqlstate::SqlState;

/// The most bytes a name may hold (PostgreSQL's `NAMEDATALEN - 1`).
pub const MAX_NAME_BYTES: usize = 63;

/// `name` cut to at most [`MAX_NAME_BYTES`] bytes, on a character
/// boundary (PostgreSQL's `pg_mbcliplen`).
pub fn truncate_name(name: &str) -> &str {
    if name.len() <= MAX_NAME_BYTES {
        return name;
    }
    let mut end = MAX_NAME_BYTES;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// PostgreSQL's notice for an identifier its lexer cuts (SQLSTATE 42622).
pub fn truncation_notice(name: &str) -> crate::error::Notice {
    crate::error::Notice {
        code: SqlState::NAME_TOO_LONG,
        message: format!(
            "identifier \"{name}\" will be truncated to \"{}\"",
            truncate_name(name)
        ),
    }
}

/// Checks a name given outside SQL (a command-line option): not empty, at
/// most [`MAX_NAME_BYTES`] bytes, no NUL byte. `what` names the option in
/// the error.
pub fn check_name(name: &str, what: &str) -> Result<(), SqlError> {
    let problem = if name.is_empty() {
        "is empty"
    } else if name.len() > MAX_NAME_BYTES {
        "is longer than 63 bytes"
    } else if name.contains('\0') {
        "holds a NUL byte"
    } else {
        return Ok(());
    };
    Err(SqlError::new(
        SqlState::INVALID_NAME,
        format!("{what} {name:?} {problem}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_to_63_bytes_on_a_character_boundary() {
        assert_eq!(truncate_name("lake"), "lake");
        let long = "a".repeat(100);
        assert_eq!(truncate_name(&long), &long[..63]);
        // 31 two-byte characters are 62 bytes; the 32nd would end at 64.
        let wide = "é".repeat(40);
        assert_eq!(truncate_name(&wide).len(), 62);
        assert_eq!(truncate_name(&wide), "é".repeat(31));
        let exact = "b".repeat(63);
        assert_eq!(truncate_name(&exact), exact);
    }

    #[test]
    fn names_given_outside_sql_are_checked() {
        assert!(check_name("lake", "--database").is_ok());
        for bad in ["", "a\0b", &"x".repeat(64)] {
            let error = check_name(bad, "--database").unwrap_err();
            assert_eq!(error.code, SqlState::INVALID_NAME);
        }
    }
}
