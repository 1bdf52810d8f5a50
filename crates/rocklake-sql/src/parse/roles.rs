//! PostgreSQL's role statements sqlparser reads otherwise: `CREATE USER`
//! (which sqlparser takes for Snowflake's) is `CREATE ROLE ... LOGIN`, and
//! the optional `WITH` after the role's name in `CREATE ROLE`/`USER`/
//! `GROUP` is dropped. Applied to the tokens of a query string before the
//! parser sees them.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace, Word};

fn is_space(token: &Token) -> bool {
    matches!(token, Token::Whitespace(_))
}

fn is_keyword(token: &Token, keyword: Keyword) -> bool {
    matches!(token, Token::Word(w) if w.quote_style.is_none() && w.keyword == keyword)
}

fn word(keyword: Keyword, value: &str) -> Token {
    Token::Word(Word {
        value: value.to_string(),
        quote_style: None,
        keyword,
    })
}

/// Rewrites the role statements of `tokens` (see the module docs).
pub(crate) fn normalize(tokens: &mut Vec<TokenWithSpan>) {
    let mut at = 0;
    let mut statement_start = true;
    while at < tokens.len() {
        let token = &tokens[at].token;
        if is_space(token) {
            at += 1;
            continue;
        }
        if *token == Token::SemiColon {
            statement_start = true;
            at += 1;
            continue;
        }
        if statement_start && is_keyword(token, Keyword::CREATE) {
            rewrite_create(tokens, at);
        }
        statement_start = false;
        at += 1;
    }
}

/// The index of the next token after `at` that is not whitespace.
fn next_solid(tokens: &[TokenWithSpan], at: usize) -> Option<usize> {
    (at + 1..tokens.len()).find(|&i| !is_space(&tokens[i].token))
}

fn rewrite_create(tokens: &mut Vec<TokenWithSpan>, create: usize) {
    let Some(kind) = next_solid(tokens, create) else {
        return;
    };
    let user = is_keyword(&tokens[kind].token, Keyword::USER);
    let role = user
        || is_keyword(&tokens[kind].token, Keyword::ROLE)
        || is_keyword(&tokens[kind].token, Keyword::GROUP);
    if !role {
        return;
    }
    let Some(name) = next_solid(tokens, kind) else {
        return;
    };
    if let Some(with) = next_solid(tokens, name) {
        if is_keyword(&tokens[with].token, Keyword::WITH) {
            tokens[with].token = Token::Whitespace(Whitespace::Space);
        }
    }
    if user {
        tokens[kind].token = word(Keyword::ROLE, "ROLE");
        let end = (name..tokens.len())
            .find(|&i| tokens[i].token == Token::SemiColon)
            .unwrap_or(tokens.len());
        let says_login = tokens[name..end].iter().any(|t| {
            is_keyword(&t.token, Keyword::LOGIN) || is_keyword(&t.token, Keyword::NOLOGIN)
        });
        if !says_login {
            let span = tokens[name].span;
            tokens.insert(
                name + 1,
                TokenWithSpan::new(word(Keyword::LOGIN, "LOGIN"), span),
            );
            tokens.insert(
                name + 1,
                TokenWithSpan::new(Token::Whitespace(Whitespace::Space), span),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::ast::Statement;

    fn parsed(sql: &str) -> Statement {
        crate::parse::parse(sql).unwrap().remove(0)
    }

    #[test]
    fn create_user_is_create_role_with_login() {
        let Statement::CreateRole(user) = parsed("CREATE USER bob WITH PASSWORD 'x' CREATEDB")
        else {
            panic!("not CREATE ROLE")
        };
        assert_eq!(user.login, Some(true));
        assert_eq!(user.create_db, Some(true));
        assert!(user.password.is_some());
        let Statement::CreateRole(nologin) = parsed("create user eve nologin") else {
            panic!("not CREATE ROLE")
        };
        assert_eq!(nologin.login, Some(false));
        let Statement::CreateRole(role) = parsed("CREATE ROLE r WITH SUPERUSER; SELECT 1") else {
            panic!("not CREATE ROLE")
        };
        assert_eq!((role.login, role.superuser), (None, Some(true)));
        // A table named user is left alone.
        assert!(matches!(
            parsed("CREATE TABLE \"user\" (a int)"),
            Statement::CreateTable(_)
        ));
    }
}
