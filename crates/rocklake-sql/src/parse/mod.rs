//! Parsing: a query string to sqlparser statements, as PostgreSQL's parser
//! would take it. The first stage of the statement path (see
//! docs/architecture.md):
//!
//! 1. tokens, with PostgreSQL's lexer rules for identifiers
//!    ([`crate::ident::apply_lexer_rules`]: empty quoted names are 42601,
//!    long ones are cut to 63 bytes with a notice);
//! 2. the role statements sqlparser reads otherwise, rewritten on the
//!    tokens ([`roles`]);
//! 3. the depth guards ([`depth`]) around sqlparser's parser;
//! 4. the statement cache of short query strings, by text and by shape
//!    (the text with its literals taken out: [`shape`]) ([`cache`]).
//!
//! The database statements (`CREATE`/`DROP`/`ALTER DATABASE`), which
//! sqlparser cannot read, are recognized from their tokens before all this
//! ([`databases`]).

mod cache;
pub mod databases;
mod depth;
mod roles;
mod shape;

pub use depth::{
    check_stack, prepare, too_deep, MAX_EXPRESSION_DEPTH, MAX_NESTING, SESSION_STACK_BYTES,
};

use rocklake_types::output::Notice;
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::Statement;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Tokenizer;

use depth::{check_nesting, PARSER_RECURSION_LIMIT};

/// A parsed query string: its statements, and the notices PostgreSQL's
/// lexer sends for it (identifiers cut to 63 bytes).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The statements, in order.
    pub statements: Vec<Statement>,
    /// Notices to send before the first statement's results.
    pub notices: Vec<Notice>,
}

impl Parsed {
    /// The statements to change: a copy of what the statement cache keeps,
    /// or, for a string it does not keep (a long one, whose statements may
    /// nest too deeply to copy), the statements themselves.
    pub fn into_owned(shared: std::sync::Arc<Parsed>) -> Parsed {
        std::sync::Arc::try_unwrap(shared).unwrap_or_else(|shared| Parsed::clone(&shared))
    }
}

/// Parses a query string into statements, with the depth guards: the
/// token nesting check, the parser's recursion limit, then [`prepare`].
/// Short query strings seen before come from the statement cache.
pub fn parse(sql: &str) -> Result<Vec<Statement>, SqlError> {
    parse_with_notices(sql).map(|parsed| parsed.statements)
}

/// [`parse`], with the notices of the lexer.
pub fn parse_with_notices(sql: &str) -> Result<Parsed, SqlError> {
    parse_shared(sql).map(Parsed::into_owned)
}

/// [`parse_with_notices`], sharing what the statement cache keeps instead
/// of copying it (for callers that only read the statements).
pub fn parse_shared(sql: &str) -> Result<std::sync::Arc<Parsed>, SqlError> {
    cache::get_or_parse(sql, parse_uncached)
}

/// [`parse_with_notices`] without the statement cache. Identifiers follow
/// PostgreSQL's lexer ([`crate::ident::apply_lexer_rules`]) before the
/// parser sees them.
pub(crate) fn parse_uncached(sql: &str) -> Result<Parsed, SqlError> {
    let dialect = PostgreSqlDialect {};
    let syntax_error = |e: ParserError| SqlError::new(SqlState::SYNTAX_ERROR, e.to_string());
    let mut tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .map_err(|e| syntax_error(e.into()))?;
    let notices = crate::ident::apply_lexer_rules(tokens.iter_mut().map(|t| &mut t.token))?;
    roles::normalize(&mut tokens);
    check_nesting(&tokens)?;
    let parsed = Parser::new(&dialect)
        .with_recursion_limit(PARSER_RECURSION_LIMIT)
        .with_tokens_with_locations(tokens)
        .parse_statements();
    let mut statements = match parsed {
        Ok(statements) => statements,
        Err(ParserError::RecursionLimitExceeded) => return Err(too_deep()),
        Err(e) => return Err(syntax_error(e)),
    };
    prepare(&mut statements)?;
    Ok(Parsed {
        statements,
        notices,
    })
}
