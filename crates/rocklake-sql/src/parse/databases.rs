//! The database statements, read from the tokens of a query string:
//! `CREATE DATABASE name [WITH] [OWNER [=] role] ...`, `DROP DATABASE [IF
//! EXISTS] name [[WITH] (FORCE)]` and `ALTER DATABASE name OWNER TO role`.
//!
//! Hand-written because sqlparser knows neither PostgreSQL 13's `WITH
//! (FORCE)`, nor `CREATE DATABASE`'s options, nor `ALTER DATABASE`: keywords
//! are case-insensitive, names are identifiers (folded unless quoted, cut
//! to 63 bytes by the lexer rules), an optional `;` may end the string.
//! Any other string is `Ok(None)` and goes to the parser.

use rocklake_types::output::Notice;
use rocklake_types::{SqlError, SqlState};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

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

/// A role a database statement names: a name, or the session's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoleName {
    /// A role by name.
    Named(String),
    /// `CURRENT_USER` / `CURRENT_ROLE`.
    CurrentUser,
    /// `SESSION_USER`.
    SessionUser,
}

/// A database statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseStatement {
    /// `CREATE DATABASE name [OWNER role]`.
    Create {
        /// The database.
        name: String,
        /// `OWNER`, if given (else the creating role).
        owner: Option<RoleName>,
    },
    /// `DROP DATABASE ...`.
    Drop(DropDatabase),
    /// `ALTER DATABASE name OWNER TO role`.
    AlterOwner {
        /// The database.
        name: String,
        /// The new owner.
        owner: RoleName,
    },
}

/// A database statement with the lexer's notices (names cut to 63 bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedDatabaseStatement {
    /// The statement.
    pub statement: DatabaseStatement,
    /// The lexer's notices.
    pub notices: Vec<Notice>,
}

/// Whether `haystack` contains `needle` (lower-case ASCII), ignoring case.
fn contains_ignoring_ascii_case(haystack: &str, needle: &[u8]) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|window| window.eq_ignore_ascii_case(needle))
}

fn syntax(near: &str) -> SqlError {
    SqlError::new(
        SqlState::SYNTAX_ERROR,
        format!("syntax error at or near \"{near}\""),
    )
}

/// The solid tokens of a statement, with a cursor.
struct Tokens {
    tokens: Vec<Token>,
    at: usize,
}

impl Tokens {
    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn keyword(token: Option<&Token>, word: &str) -> bool {
        matches!(token, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
    }

    /// Takes the next token when it is keyword `word`.
    fn take(&mut self, word: &str) -> bool {
        if Self::keyword(self.peek(), word) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, word: &str) -> Result<(), SqlError> {
        match self.next() {
            Some(token) if Self::keyword(Some(&token), word) => Ok(()),
            Some(other) => Err(syntax(&other.to_string())),
            None => Err(syntax("end of input")),
        }
    }

    /// An identifier: folded (ASCII) unless quoted.
    fn name(&mut self) -> Result<String, SqlError> {
        match self.next() {
            Some(Token::Word(word)) if word.quote_style.is_some() => Ok(word.value),
            Some(Token::Word(word)) => Ok(word.value.to_ascii_lowercase()),
            Some(other) => Err(syntax(&other.to_string())),
            None => Err(syntax("end of input")),
        }
    }

    /// A role specification.
    fn role(&mut self) -> Result<RoleName, SqlError> {
        match self.peek() {
            Some(Token::Word(w)) if w.quote_style.is_none() => {
                match w.value.to_ascii_lowercase().as_str() {
                    "current_user" | "current_role" => {
                        self.at += 1;
                        return Ok(RoleName::CurrentUser);
                    }
                    "session_user" => {
                        self.at += 1;
                        return Ok(RoleName::SessionUser);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        Ok(RoleName::Named(self.name()?))
    }

    /// The end of the statement: an optional `;` and nothing after it.
    fn end(&mut self, what: &str) -> Result<(), SqlError> {
        if self.peek() == Some(&Token::SemiColon) {
            self.at += 1;
        }
        match self.next() {
            Some(Token::EOF) | None => Ok(()),
            // Another statement follows: PostgreSQL refuses these in a
            // multi-statement string (an implicit transaction block).
            Some(_) if what != "ALTER DATABASE" => Err(SqlError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                format!("{what} cannot run inside a transaction block"),
            )),
            Some(_) => Err(SqlError::unsupported(
                "ALTER DATABASE in a string of several statements",
            )),
        }
    }
}

/// Recognizes a query string that is one database statement (see the
/// module docs).
pub fn parse_database_statement(sql: &str) -> Result<Option<ParsedDatabaseStatement>, SqlError> {
    // Every statement passes here: only one that spells the keyword is
    // tokenized (tokenizing all of them cost about 5% of a commit's CPU).
    if !contains_ignoring_ascii_case(sql, b"database") {
        return Ok(None);
    }
    let Ok(mut tokens) = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize() else {
        return Ok(None);
    };
    let notices = crate::ident::apply_lexer_rules(tokens.iter_mut())?;
    let tokens: Vec<Token> = tokens
        .into_iter()
        .filter(|token| {
            !matches!(
                token,
                Token::Whitespace(Whitespace::Space | Whitespace::Tab | Whitespace::Newline)
                    | Token::Whitespace(Whitespace::SingleLineComment { .. })
                    | Token::Whitespace(Whitespace::MultiLineComment(_))
            )
        })
        .collect();
    let mut tokens = Tokens { tokens, at: 0 };
    let verb = if Tokens::keyword(tokens.peek(), "create") {
        "create"
    } else if Tokens::keyword(tokens.peek(), "drop") {
        "drop"
    } else if Tokens::keyword(tokens.peek(), "alter") {
        "alter"
    } else {
        return Ok(None);
    };
    tokens.at += 1;
    if !tokens.take("database") {
        return Ok(None);
    }
    let statement = match verb {
        "create" => create(&mut tokens)?,
        "drop" => DatabaseStatement::Drop(drop(&mut tokens)?),
        _ => alter(&mut tokens)?,
    };
    Ok(Some(ParsedDatabaseStatement { statement, notices }))
}

/// `name [WITH] [option [=] value] ...` of `CREATE DATABASE`.
fn create(tokens: &mut Tokens) -> Result<DatabaseStatement, SqlError> {
    if Tokens::keyword(tokens.peek(), "if") {
        return Err(syntax("NOT"));
    }
    let name = tokens.name()?;
    tokens.take("with");
    let mut owner = None;
    while let Some(Token::Word(word)) = tokens.peek().cloned() {
        if word.quote_style.is_some() {
            return Err(syntax(&word.value));
        }
        tokens.at += 1;
        let option = word.value.to_ascii_lowercase();
        if option == "connection" {
            tokens.expect("limit")?;
        }
        if tokens.peek() == Some(&Token::Eq) {
            tokens.at += 1;
        }
        match option.as_str() {
            "owner" => {
                owner = if tokens.take("default") {
                    None
                } else {
                    Some(tokens.role()?)
                }
            }
            // Every database starts empty, as from template0.
            "template" => {
                let template = tokens.name()?;
                if !["template0", "template1", "default"].contains(&template.as_str()) {
                    return Err(SqlError::new(
                        SqlState::INVALID_CATALOG_NAME,
                        format!("template database \"{template}\" does not exist"),
                    ));
                }
            }
            "encoding" => {
                let encoding = match tokens.next() {
                    Some(Token::SingleQuotedString(s)) => s,
                    Some(Token::Word(w)) => w.value,
                    Some(other) => return Err(syntax(&other.to_string())),
                    None => return Err(syntax("end of input")),
                };
                let normalized = encoding.to_ascii_lowercase().replace(['-', '_'], "");
                if normalized != "utf8" && normalized != "default" {
                    return Err(SqlError::unsupported(format!(
                        "encoding \"{encoding}\": RockLake's databases are UTF8"
                    )));
                }
            }
            "strategy" | "locale" | "lc_collate" | "lc_ctype" | "icu_locale"
            | "locale_provider" | "collation_version" | "tablespace" | "allow_connections"
            | "connection" | "is_template" | "oid" => {
                return Err(SqlError::unsupported(format!(
                    "CREATE DATABASE option {}",
                    word.value.to_ascii_uppercase()
                )))
            }
            _ => {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("option \"{option}\" not recognized"),
                ))
            }
        }
    }
    tokens.end("CREATE DATABASE")?;
    Ok(DatabaseStatement::Create { name, owner })
}

/// `[IF EXISTS] name [[WITH] (FORCE)]` of `DROP DATABASE`.
fn drop(tokens: &mut Tokens) -> Result<DropDatabase, SqlError> {
    let mut if_exists = false;
    if tokens.take("if") {
        if !tokens.take("exists") {
            return Err(syntax("IF"));
        }
        if_exists = true;
    }
    let name = tokens.name()?;
    let mut force = false;
    tokens.take("with");
    if tokens.peek() == Some(&Token::LParen) {
        tokens.at += 1;
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
    }
    tokens.end("DROP DATABASE")?;
    Ok(DropDatabase {
        name,
        if_exists,
        force,
    })
}

/// `name OWNER TO role` of `ALTER DATABASE` (its other forms are refused).
fn alter(tokens: &mut Tokens) -> Result<DatabaseStatement, SqlError> {
    let name = tokens.name()?;
    if tokens.take("owner") {
        tokens.expect("to")?;
        let owner = tokens.role()?;
        tokens.end("ALTER DATABASE")?;
        return Ok(DatabaseStatement::AlterOwner { name, owner });
    }
    let what = tokens
        .next()
        .map(|t| t.to_string().to_ascii_uppercase())
        .unwrap_or_default();
    Err(SqlError::unsupported(format!(
        "ALTER DATABASE ... {what}: only OWNER TO is supported (a database's name names its folder)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(sql: &str) -> Result<Option<DatabaseStatement>, SqlError> {
        parse_database_statement(sql).map(|p| p.map(|p| p.statement))
    }

    fn drop_of(name: &str, if_exists: bool, force: bool) -> Option<DatabaseStatement> {
        Some(DatabaseStatement::Drop(DropDatabase {
            name: name.into(),
            if_exists,
            force,
        }))
    }

    #[test]
    fn drop_database_in_every_form() {
        assert_eq!(
            parse("DROP DATABASE sales").unwrap(),
            drop_of("sales", false, false)
        );
        assert_eq!(
            parse("drop database if exists \"Sales\";").unwrap(),
            drop_of("Sales", true, false)
        );
        assert_eq!(
            parse("DROP DATABASE Sales WITH (FORCE)").unwrap(),
            drop_of("sales", false, true)
        );
        assert_eq!(
            parse("DROP DATABASE x (force) ; -- bye").unwrap(),
            drop_of("x", false, true)
        );
        assert_eq!(parse("DROP TABLE x").unwrap(), None);
        assert_eq!(parse("SELECT 1").unwrap(), None);
        assert_eq!(parse("SELECT current_database()").unwrap(), None);
        assert!(parse("/* x */ DrOp DaTaBaSe s").unwrap().is_some());
        let error = parse("DROP DATABASE x WITH (QUICK)").unwrap_err();
        assert_eq!(error.code, SqlState::SYNTAX_ERROR);
        let error = parse("DROP DATABASE x; SELECT 1").unwrap_err();
        assert_eq!(error.code, SqlState::ACTIVE_SQL_TRANSACTION);
        let error = parse("DROP DATABASE").unwrap_err();
        assert_eq!(error.code, SqlState::SYNTAX_ERROR);
    }

    #[test]
    fn database_statements_follow_the_lexer_rules_for_names() {
        let error = parse("DROP DATABASE \"\"").unwrap_err();
        assert_eq!(error.code, SqlState::SYNTAX_ERROR);
        let error = parse("CREATE DATABASE \"\"").unwrap_err();
        assert_eq!(error.code, SqlState::SYNTAX_ERROR);
        let long = "N".repeat(100);
        let parsed = parse_database_statement(&format!("DROP DATABASE {long}"))
            .unwrap()
            .unwrap();
        assert_eq!(
            parsed.statement,
            drop_of(&"n".repeat(63), false, false).unwrap()
        );
        assert_eq!(parsed.notices.len(), 1);
        assert_eq!(parsed.notices[0].code, SqlState::NAME_TOO_LONG);
    }

    #[test]
    fn create_and_alter_database_take_owners() {
        assert_eq!(
            parse("CREATE DATABASE sales").unwrap(),
            Some(DatabaseStatement::Create {
                name: "sales".into(),
                owner: None
            })
        );
        assert_eq!(
            parse("create database sales with owner = \"Bob\" template template0 encoding 'UTF8'")
                .unwrap(),
            Some(DatabaseStatement::Create {
                name: "sales".into(),
                owner: Some(RoleName::Named("Bob".into()))
            })
        );
        assert_eq!(
            parse("ALTER DATABASE sales OWNER TO current_user").unwrap(),
            Some(DatabaseStatement::AlterOwner {
                name: "sales".into(),
                owner: RoleName::CurrentUser
            })
        );
        let error = parse("CREATE DATABASE s LOCALE 'de_DE'").unwrap_err();
        assert_eq!(error.code, SqlState::FEATURE_NOT_SUPPORTED);
        let error = parse("CREATE DATABASE s COLOUR blue").unwrap_err();
        assert_eq!(error.code, SqlState::SYNTAX_ERROR);
        let error = parse("ALTER DATABASE s RENAME TO t").unwrap_err();
        assert_eq!(error.code, SqlState::FEATURE_NOT_SUPPORTED);
        let error = parse("CREATE DATABASE s; SELECT 1").unwrap_err();
        assert_eq!(error.code, SqlState::ACTIVE_SQL_TRANSACTION);
    }
}
