//! Identifiers as PostgreSQL reads and writes them, in one place: the
//! lexer's rules (an empty quoted identifier is a syntax error, a longer one
//! than 63 bytes is cut with NOTICE 42622), case folding, the parts of a
//! dotted name, what a database qualifier may be, and quoting
//! (`quote_ident`, `quote_literal`). A leaf: it imports nothing of the
//! engine.

mod quoting;

pub use quoting::{quote_ident, quote_literal};

use rocklake_types::ident::{truncate_name, truncation_notice, MAX_NAME_BYTES};
use rocklake_types::output::Notice;
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};
use sqlparser::tokenizer::Token;

/// Folds an identifier like PostgreSQL: an unquoted one to lower case,
/// ASCII letters only (PostgreSQL leaves other characters of a multi-byte
/// encoding such as UTF-8 as they are).
pub fn fold(id: &Ident) -> String {
    if id.quote_style.is_some() {
        id.value.clone()
    } else {
        id.value.to_ascii_lowercase()
    }
}

/// The folded parts of an object name.
pub fn name_parts(name: &ObjectName) -> Result<Vec<String>, SqlError> {
    name.0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(id) => Ok(fold(id)),
            other => Err(SqlError::unsupported(format!(
                "unsupported name part {other}"
            ))),
        })
        .collect()
}

/// Applies PostgreSQL's lexer rules for identifiers to the tokens of a
/// query string: an empty quoted identifier is `42601 zero-length
/// delimited identifier`; an identifier over 63 bytes is cut to 63 (on a
/// character boundary) and the notice PostgreSQL sends for it is returned.
/// Keywords are never that long, so every long word is an identifier.
pub fn apply_lexer_rules<'t>(
    tokens: impl IntoIterator<Item = &'t mut Token>,
) -> Result<Vec<Notice>, SqlError> {
    let mut notices = Vec::new();
    for token in tokens {
        let Token::Word(word) = token else {
            continue;
        };
        if word.quote_style.is_some() && word.value.is_empty() {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "zero-length delimited identifier at or near \"\"\"\"",
            ));
        }
        if word.value.len() > MAX_NAME_BYTES {
            let shown = if word.quote_style.is_some() {
                word.value.clone()
            } else {
                word.value.to_ascii_lowercase()
            };
            notices.push(truncation_notice(&shown));
            word.value = truncate_name(&word.value).to_string();
        }
    }
    Ok(notices)
}

/// The schema (if given) and name of a relation named by `parts`, in a
/// session connected to `database`: `name`, `schema.name`, or
/// `database.schema.name` where `database` must be the current one
/// (PostgreSQL: `0A000 cross-database references are not implemented`).
pub fn relation_name<'p>(
    parts: &'p [String],
    database: &str,
) -> Result<(Option<&'p str>, &'p str), SqlError> {
    match parts {
        [name] => Ok((None, name)),
        [schema, name] => Ok((Some(schema), name)),
        [catalog, schema, name] if catalog == database => Ok((Some(schema), name)),
        [_, _, _] => Err(cross_database(&format!("\"{}\"", parts.join(".")))),
        _ => Err(too_many_dots(parts)),
    }
}

/// PostgreSQL's error for a name qualified by another database (`shown`
/// as PostgreSQL shows it: a relation's name in quotes, a column's not).
pub fn cross_database(shown: &str) -> SqlError {
    SqlError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!("cross-database references are not implemented: {shown}"),
    )
}

/// PostgreSQL's error for a name of more parts than it can have.
pub fn too_many_dots(parts: &[String]) -> SqlError {
    SqlError::new(
        SqlState::SYNTAX_ERROR,
        format!(
            "improper qualified name (too many dotted names): {}",
            parts.join(".")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::tokenizer::{TokenWithSpan, Tokenizer};

    fn lex(sql: &str) -> (Result<Vec<Notice>, SqlError>, Vec<TokenWithSpan>) {
        let mut tokens = Tokenizer::new(&PostgreSqlDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        (
            apply_lexer_rules(tokens.iter_mut().map(|t| &mut t.token)),
            tokens,
        )
    }

    #[test]
    fn an_empty_quoted_identifier_is_a_syntax_error() {
        let (result, _) = lex("CREATE DATABASE \"\"");
        let error = result.unwrap_err();
        assert_eq!(error.code, SqlState::SYNTAX_ERROR);
        assert_eq!(
            error.message,
            "zero-length delimited identifier at or near \"\"\"\""
        );
        // An empty string literal is not an identifier.
        assert!(lex("SELECT ''").0.unwrap().is_empty());
    }

    #[test]
    fn long_identifiers_are_cut_with_a_notice() {
        let long = "A".repeat(70);
        let (notices, tokens) = lex(&format!("SELECT 1 AS {long}, 2 AS \"{long}\""));
        let notices = notices.unwrap();
        assert_eq!(notices.len(), 2);
        assert_eq!(notices[0].code, SqlState::NAME_TOO_LONG);
        let folded = "a".repeat(70);
        assert_eq!(
            notices[0].message,
            format!(
                "identifier \"{folded}\" will be truncated to \"{}\"",
                &folded[..63]
            )
        );
        assert!(notices[1]
            .message
            .starts_with(&format!("identifier \"{long}\"")));
        let words: Vec<&str> = tokens
            .iter()
            .filter_map(|t| match &t.token {
                Token::Word(w) if w.value.len() > 10 => Some(w.value.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(words, [&long[..63], &long[..63]]);
    }

    #[test]
    fn unquoted_names_fold_ascii_letters_only() {
        assert_eq!(fold(&Ident::new("ÉtÉ_Lake")), "ÉtÉ_lake");
        assert_eq!(fold(&Ident::with_quote('"', "Lake")), "Lake");
    }

    #[test]
    fn a_database_qualifier_must_name_the_current_database() {
        let parts = |s: &str| s.split('.').map(str::to_string).collect::<Vec<_>>();
        let here = parts("lake.public.t");
        assert_eq!(relation_name(&here, "lake").unwrap(), (Some("public"), "t"));
        let there = parts("b.public.secret");
        let error = relation_name(&there, "lake").unwrap_err();
        assert_eq!(error.code, SqlState::FEATURE_NOT_SUPPORTED);
        assert_eq!(
            error.message,
            "cross-database references are not implemented: \"b.public.secret\""
        );
        let error = relation_name(&parts("a.b.c.d"), "a").unwrap_err();
        assert_eq!(error.code, SqlState::SYNTAX_ERROR);
    }
}
