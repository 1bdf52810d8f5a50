//! The databases of a server: `CREATE DATABASE`, `DROP DATABASE` and the
//! list `pg_database` shows. The server implements [`Databases`] (one
//! catalog per database under its root); a session without one knows only
//! its own database.

use async_trait::async_trait;
use rocklake_types::output::{Notice, QueryOutput};
use rocklake_types::{SqlError, SqlState};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

/// The databases one server holds.
#[async_trait]
pub trait Databases: Send + Sync {
    /// Names of the databases, sorted.
    fn names(&self) -> Vec<String>;

    /// A number that changes whenever a database is created or dropped.
    fn generation(&self) -> u64;

    /// Creates database `name`; SQLSTATE 42P04 when it exists.
    async fn create(&self, name: &str) -> Result<(), SqlError>;

    /// Drops database `name`: `Ok(false)` when it does not exist and
    /// `if_exists` is set (3D000 otherwise); 55006 while sessions are
    /// connected to it, unless `force`, which ends them first.
    async fn drop(&self, name: &str, if_exists: bool, force: bool) -> Result<bool, SqlError>;
}

/// `DROP DATABASE [IF EXISTS] name [[WITH] (FORCE)]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropDatabase {
    /// The database.
    pub name: String,
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// `WITH (FORCE)`: end the sessions connected to it.
    pub force: bool,
}

/// Whether `haystack` contains `needle` (lower-case ASCII), ignoring case.
fn contains_ignoring_ascii_case(haystack: &str, needle: &[u8]) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|window| window.eq_ignore_ascii_case(needle))
}

/// Recognizes a query string that is one `DROP DATABASE` statement.
///
/// The SQL parser RockLake uses does not know PostgreSQL 13's `WITH (FORCE)`
/// option, so this statement is read from the parser's tokens here: keywords
/// case-insensitive, the name an identifier (folded to lower case unless
/// quoted), an optional `;` at the end. Any other string is `Ok(None)` and
/// goes to the parser (which reports syntax errors as usual).
pub fn parse_drop_database(sql: &str) -> Result<Option<DropDatabase>, SqlError> {
    // Every statement passes here: only one that spells the keyword is
    // tokenized (tokenizing all of them cost about 5% of a commit's CPU).
    if !contains_ignoring_ascii_case(sql, b"database") {
        return Ok(None);
    }
    let Ok(tokens) = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize() else {
        return Ok(None);
    };
    let mut tokens = tokens.into_iter().filter(|token| {
        !matches!(
            token,
            Token::Whitespace(Whitespace::Space | Whitespace::Tab | Whitespace::Newline)
                | Token::Whitespace(Whitespace::SingleLineComment { .. })
                | Token::Whitespace(Whitespace::MultiLineComment(_))
        )
    });
    let keyword = |token: &Option<Token>, word: &str| matches!(token, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word));
    if !keyword(&tokens.next(), "drop") || !keyword(&tokens.next(), "database") {
        return Ok(None);
    }
    let syntax = |near: &str| {
        SqlError::new(
            SqlState::SYNTAX_ERROR,
            format!("syntax error at or near \"{near}\""),
        )
    };
    let mut next = tokens.next();
    let mut if_exists = false;
    if keyword(&next, "if") {
        if !keyword(&tokens.next(), "exists") {
            return Err(syntax("IF"));
        }
        if_exists = true;
        next = tokens.next();
    }
    let name = match next {
        Some(Token::Word(word)) if word.quote_style.is_some() => word.value,
        Some(Token::Word(word)) => word.value.to_lowercase(),
        Some(other) => return Err(syntax(&other.to_string())),
        None => return Err(syntax("end of input")),
    };
    let mut next = tokens.next();
    let mut force = false;
    if keyword(&next, "with") {
        next = tokens.next();
    }
    if next == Some(Token::LParen) {
        loop {
            match tokens.next() {
                Some(Token::Word(word)) if word.value.eq_ignore_ascii_case("force") => force = true,
                Some(Token::Word(word)) => return Err(syntax(&word.value)),
                Some(other) => return Err(syntax(&other.to_string())),
                None => return Err(syntax("end of input")),
            }
            match tokens.next() {
                Some(Token::Comma) => continue,
                Some(Token::RParen) => break,
                Some(other) => return Err(syntax(&other.to_string())),
                None => return Err(syntax("end of input")),
            }
        }
        next = tokens.next();
    }
    if next == Some(Token::SemiColon) {
        next = tokens.next();
    }
    match next {
        Some(Token::EOF) | None => Ok(Some(DropDatabase {
            name,
            if_exists,
            force,
        })),
        // Another statement follows: PostgreSQL refuses DROP DATABASE in a
        // multi-statement string (an implicit transaction block).
        Some(_) => Err(SqlError::new(
            SqlState::ACTIVE_SQL_TRANSACTION,
            "DROP DATABASE cannot run inside a transaction block",
        )),
    }
}

/// Runs `CREATE DATABASE name` on `databases`.
pub async fn create(databases: &dyn Databases, name: &str) -> Result<QueryOutput, SqlError> {
    databases.create(name).await?;
    Ok(QueryOutput::command("CREATE DATABASE"))
}

/// Runs a `DROP DATABASE` from a session connected to `current`.
pub async fn drop(
    databases: &dyn Databases,
    drop: &DropDatabase,
    current: &str,
) -> Result<QueryOutput, SqlError> {
    if drop.name == current {
        return Err(SqlError::new(
            SqlState::OBJECT_IN_USE,
            "cannot drop the currently open database",
        ));
    }
    let dropped = databases
        .drop(&drop.name, drop.if_exists, drop.force)
        .await?;
    let notices = if dropped {
        Vec::new()
    } else {
        vec![Notice {
            code: SqlState::SUCCESSFUL_COMPLETION,
            message: format!("database \"{}\" does not exist, skipping", drop.name),
        }]
    };
    Ok(QueryOutput::Command {
        tag: "DROP DATABASE".into(),
        notices,
    })
}

/// The error for a statement that must run outside a transaction block.
pub fn outside_block(what: &str) -> SqlError {
    SqlError::new(
        SqlState::ACTIVE_SQL_TRANSACTION,
        format!("{what} cannot run inside a transaction block"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drop_of(name: &str, if_exists: bool, force: bool) -> Option<DropDatabase> {
        Some(DropDatabase {
            name: name.into(),
            if_exists,
            force,
        })
    }

    #[test]
    fn drop_database_in_every_form() {
        assert_eq!(
            parse_drop_database("DROP DATABASE sales").unwrap(),
            drop_of("sales", false, false)
        );
        assert_eq!(
            parse_drop_database("drop database if exists \"Sales\";").unwrap(),
            drop_of("Sales", true, false)
        );
        assert_eq!(
            parse_drop_database("DROP DATABASE Sales WITH (FORCE)").unwrap(),
            drop_of("sales", false, true)
        );
        assert_eq!(
            parse_drop_database("DROP DATABASE x (force) ; -- bye").unwrap(),
            drop_of("x", false, true)
        );
        assert_eq!(parse_drop_database("DROP TABLE x").unwrap(), None);
        assert_eq!(parse_drop_database("SELECT 1").unwrap(), None);
        assert_eq!(
            parse_drop_database("SELECT current_database()").unwrap(),
            None
        );
        assert!(parse_drop_database("/* x */ DrOp DaTaBaSe s")
            .unwrap()
            .is_some());
        let error = parse_drop_database("DROP DATABASE x WITH (QUICK)").unwrap_err();
        assert_eq!(error.code, SqlState::SYNTAX_ERROR);
        let error = parse_drop_database("DROP DATABASE x; SELECT 1").unwrap_err();
        assert_eq!(error.code, SqlState::ACTIVE_SQL_TRANSACTION);
        let error = parse_drop_database("DROP DATABASE").unwrap_err();
        assert_eq!(error.code, SqlState::SYNTAX_ERROR);
    }
}
