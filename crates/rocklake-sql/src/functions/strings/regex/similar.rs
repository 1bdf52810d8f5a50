//! SQL's `SIMILAR TO` patterns, rewritten as PostgreSQL rewrites them
//! (`similar_to_escape`): `%` is `.*`, `_` is `.`, parentheses do not
//! capture, the whole string must match, and the escape character (`\`
//! unless given) quotes the next one; `ESCAPE "` pairs mark what
//! `substring(string similar pattern escape e)` returns.

use rocklake_types::datum::Datum;
use rocklake_types::{SqlError, SqlState};

use super::super::super::def::types::*;
use super::super::super::def::Library;
use super::super::str_arg;
use super::first_group_or_match;
use crate::plan::{CallEnv, CallInfo};

/// Registers `similar_to_escape` and the three-argument `substring`.
pub(super) fn register(lib: &mut Library) {
    lib.function("similar_to_escape", [TEXT, TEXT], TEXT, |a, _, _| {
        Ok(Datum::text(to_posix(str_arg(&a[0]), a[1].as_str())?))
    })
    .not_strict();
    lib.function("similar_to_escape", [TEXT], TEXT, |a, _, _| {
        Ok(Datum::text(to_posix(str_arg(&a[0]), Some("\\"))?))
    });
    lib.function("substring", [TEXT, TEXT, TEXT], TEXT, substring_similar);
}

/// The POSIX pattern of SQL pattern `pattern` with escape `escape`
/// (`None`: the default `\`; empty: no escape character).
pub(crate) fn to_posix(pattern: &str, escape: Option<&str>) -> Result<String, SqlError> {
    let escape = match escape {
        None => Some('\\'),
        Some(e) => {
            let mut chars = e.chars();
            match (chars.next(), chars.next()) {
                (None, _) => None,
                (Some(c), None) => Some(c),
                _ => {
                    return Err(SqlError::new(
                        SqlState::INVALID_ESCAPE_SEQUENCE,
                        "invalid escape string",
                    )
                    .with_hint("Escape string must be empty or one character."))
                }
            }
        }
    };
    let mut out = String::from("^(?:");
    let mut after_escape = false;
    let mut in_class = false;
    let mut separators = 0;
    for c in pattern.chars() {
        if after_escape {
            if c == '"' && !in_class {
                out.push_str(match separators {
                    0 => "){1,1}?(",
                    1 => "){1,1}(?:",
                    _ => {
                        return Err(SqlError::new(
                            SqlState::INVALID_USE_OF_ESCAPE_CHARACTER,
                            "SQL regular expression may not contain more than two escape-double-quote separators",
                        ))
                    }
                });
                separators += 1;
            } else {
                out.push('\\');
                out.push(c);
            }
            after_escape = false;
        } else if Some(c) == escape {
            after_escape = true;
        } else if in_class {
            if c == '\\' {
                out.push('\\');
            }
            out.push(c);
            if c == ']' {
                in_class = false;
            }
        } else {
            match c {
                '[' => {
                    out.push(c);
                    in_class = true;
                }
                '%' => out.push_str(".*"),
                '_' => out.push('.'),
                '(' => out.push_str("(?:"),
                '\\' | '.' | '^' | '$' => {
                    out.push('\\');
                    out.push(c);
                }
                c => out.push(c),
            }
        }
    }
    out.push_str(")$");
    Ok(out)
}

/// `substring(string similar pattern escape e)`: the part between the
/// escape-double-quote separators, or the whole string if it matches.
fn substring_similar(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let posix = to_posix(str_arg(&a[1]), a[2].as_str())?;
    first_group_or_match(str_arg(&a[0]), &posix)
}
