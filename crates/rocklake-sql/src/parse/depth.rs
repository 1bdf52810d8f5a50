//! Statement depth: how deeply a statement may nest, so that no statement
//! can overflow the stack of the thread that runs it (which would abort the
//! whole server), whatever it is.
//!
//! Three guards, from the outside in:
//! - before parsing, the statement's tokens may nest at most [`MAX_NESTING`]
//!   levels of parentheses, brackets, `CASE` and `NOT` (sqlparser then
//!   stays far from its own recursion limit, and grows its stack on the heap
//!   while it recurses);
//! - after parsing, [`prepare`] walks every expression. Chains of `AND` and
//!   of `OR` (which parse as trees as deep as the chain is long) are rebuilt
//!   balanced, without recursion, so thousands of terms cost a few levels,
//!   as PostgreSQL's flat `AND`/`OR` lists do; any other expression deeper
//!   than [`MAX_EXPRESSION_DEPTH`] is refused with PostgreSQL's `54001 stack
//!   depth limit exceeded`;
//! - the binder and the executor call [`check_stack`] as they recurse, and
//!   fail the same way before the thread's stack is nearly used up.
//!
//! Sessions run on threads with [`SESSION_STACK_BYTES`] of stack; a refused
//! statement is taken apart without recursion before it is dropped.

use std::ops::ControlFlow;

use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{BinaryOperator, Expr, Statement, Value, VisitMut, VisitorMut};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// Stack of the threads that run sessions: room for [`MAX_EXPRESSION_DEPTH`]
/// levels of the deepest recursion over a statement (binding and evaluating
/// a left-deep chain of `+` takes a few KiB per level in release builds),
/// with a wide margin. Unoptimized builds use about ten times the stack per
/// level, so they get more, to answer the same statements. Only the pages a
/// session touches take memory.
pub const SESSION_STACK_BYTES: usize = if cfg!(debug_assertions) {
    512 * 1024 * 1024
} else {
    64 * 1024 * 1024
};

/// Levels of nesting a statement may have: parentheses (of expressions,
/// calls, subqueries), brackets, `CASE` and runs of `NOT`, counted on its
/// tokens before it is parsed. PostgreSQL accepts 3,000 nested parentheses
/// or calls and refuses 10,000 (`42601 memory exhausted`, its parser's stack).
pub const MAX_NESTING: usize = 3_000;

/// The parser's own recursion limit: a subquery level costs it two, a
/// `NOT ... =` link of a chain three, and the token count above refuses
/// deeper statements first. It must not be what stops a statement: at its
/// limit sqlparser backtracks through a nested `CASE` for minutes, and
/// reports runs of `NOT` as syntax errors.
pub(super) const PARSER_RECURSION_LIMIT: usize = 4 * MAX_NESTING;

/// Levels an expression tree may have (after `AND`/`OR` chains are
/// balanced). PostgreSQL, with its default 2 MB `max_stack_depth`, refuses
/// a chain of about 4,500 `+`.
pub const MAX_EXPRESSION_DEPTH: usize = 10_000;

/// Stack left below which [`check_stack`] refuses to go deeper.
const STACK_RED_ZONE: usize = 1024 * 1024;

/// PostgreSQL's error for a statement that nests too deeply.
pub fn too_deep() -> SqlError {
    SqlError::new(SqlState::STATEMENT_TOO_COMPLEX, "stack depth limit exceeded").with_detail(
        format!(
            "The statement nests more than {MAX_EXPRESSION_DEPTH} levels of expressions or more than {MAX_NESTING} levels of parentheses, subqueries, CASE or NOT."
        ),
    )
}

/// Refuses a statement whose tokens nest deeper than [`MAX_NESTING`].
///
/// Brackets and `CASE ... END` nest. So does a prefix `NOT`: it binds
/// looser than comparisons, so in `NOT a = NOT b = NOT c ...` each `NOT`'s
/// operand holds the rest of the chain and the parser recurses once per
/// `NOT`. A `NOT` stays open until its bracket level closes or the level
/// reaches `AND`, `OR`, a comma or a `CASE` keyword (where its operand
/// ends); `IS NOT` is not counted. Deeper statements would make the parser
/// hit its recursion limit deep inside a nesting, where its backtracking
/// retries every level (exponential time), so they are refused first.
pub(super) fn check_nesting(tokens: &[TokenWithSpan]) -> Result<(), SqlError> {
    // Open prefix NOTs of each open bracket or CASE level, innermost last.
    let mut levels: Vec<usize> = vec![0];
    let mut open_nots = 0usize;
    let mut after_is = false;
    for token in tokens {
        let mut is = false;
        match &token.token {
            Token::Whitespace(_) => continue,
            Token::LParen | Token::LBracket => levels.push(0),
            Token::RParen | Token::RBracket => close_level(&mut levels, &mut open_nots),
            Token::Comma => end_operands(&mut levels, &mut open_nots),
            Token::SemiColon => {
                levels = vec![0];
                open_nots = 0;
            }
            Token::Word(word) if word.quote_style.is_none() => match word.keyword {
                Keyword::CASE => levels.push(0),
                Keyword::END => close_level(&mut levels, &mut open_nots),
                Keyword::AND | Keyword::OR | Keyword::WHEN | Keyword::THEN | Keyword::ELSE => {
                    end_operands(&mut levels, &mut open_nots)
                }
                Keyword::IS => is = true,
                Keyword::NOT if !after_is => {
                    *levels.last_mut().expect("the outermost level stays") += 1;
                    open_nots += 1;
                }
                _ => {}
            },
            _ => {}
        }
        after_is = is;
        if levels.len() - 1 + open_nots > MAX_NESTING {
            return Err(too_deep());
        }
    }
    Ok(())
}

/// Closes the innermost bracket or CASE level and the NOTs open in it.
fn close_level(levels: &mut Vec<usize>, open_nots: &mut usize) {
    if levels.len() > 1 {
        *open_nots -= levels.pop().unwrap_or(0);
    } else {
        end_operands(levels, open_nots);
    }
}

/// Ends the operands of the NOTs open in the innermost level.
fn end_operands(levels: &mut [usize], open_nots: &mut usize) {
    let level = levels.last_mut().expect("the outermost level stays");
    *open_nots -= *level;
    *level = 0;
}

/// Fails with `54001` when the current thread's stack is nearly used up.
pub fn check_stack() -> Result<(), SqlError> {
    match stacker::remaining_stack() {
        Some(left) if left < STACK_RED_ZONE => Err(too_deep()),
        _ => Ok(()),
    }
}

/// Balances `AND`/`OR` chains and checks the depth of every expression of
/// `statements`. On error the statements are emptied (taken apart without
/// recursion), so nothing deep is left to drop.
pub fn prepare(statements: &mut Vec<Statement>) -> Result<(), SqlError> {
    let mut visitor = Preparer { depth: 0 };
    for statement in statements.iter_mut() {
        if statement.visit(&mut visitor).is_break() {
            for statement in statements.drain(..) {
                dismantle_statement(statement);
            }
            return Err(too_deep());
        }
    }
    Ok(())
}

/// The walk of [`prepare`]: tracks how deep it is in expressions.
struct Preparer {
    depth: usize,
}

impl VisitorMut for Preparer {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        if let Expr::BinaryOp {
            op: op @ (BinaryOperator::And | BinaryOperator::Or),
            ..
        } = expr
        {
            let op = op.clone();
            balance(expr, &op);
        }
        self.depth += 1;
        if self.depth > MAX_EXPRESSION_DEPTH {
            dismantle(std::mem::replace(expr, placeholder()));
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _expr: &mut Expr) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
}

fn placeholder() -> Expr {
    Expr::value(Value::Null)
}

/// Rebuilds the chain of `op` rooted at `expr` (through parentheses that
/// hold the same operator) as a balanced tree of the same operands in the
/// same order: for `AND` and `OR` the meaning is the same, and the depth
/// is logarithmic.
fn balance(expr: &mut Expr, op: &BinaryOperator) {
    let mut operands = Vec::new();
    let mut pending = vec![std::mem::replace(expr, placeholder())];
    while let Some(e) = pending.pop() {
        match e {
            Expr::BinaryOp { left, op: o, right } if &o == op => {
                pending.push(*right);
                pending.push(*left);
            }
            Expr::Nested(inner) if matches!(inner.as_ref(), Expr::BinaryOp { op: o, .. } if o == op) => {
                pending.push(*inner)
            }
            other => operands.push(other),
        }
    }
    *expr = build_balanced(operands, op);
}

/// A balanced tree of `op` over `operands` (at least one), without recursion.
fn build_balanced(operands: Vec<Expr>, op: &BinaryOperator) -> Expr {
    let mut level = operands;
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        let mut items = level.into_iter();
        while let Some(left) = items.next() {
            next.push(match items.next() {
                Some(right) => Expr::BinaryOp {
                    left: Box::new(left),
                    op: op.clone(),
                    right: Box::new(right),
                },
                None => left,
            });
        }
        level = next;
    }
    level.pop().unwrap_or_else(placeholder)
}

/// The first child of the expression forms that chain (an operator's left
/// operand, the operand of a cast or a test), if `expr` is one.
fn first_child(expr: &Expr) -> Option<&Expr> {
    match expr {
        Expr::BinaryOp { left, .. } => Some(left),
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::Cast { expr, .. }
        | Expr::Collate { expr, .. }
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::IsTrue(expr)
        | Expr::IsNotTrue(expr)
        | Expr::IsFalse(expr)
        | Expr::IsNotFalse(expr)
        | Expr::IsUnknown(expr)
        | Expr::IsNotUnknown(expr)
        | Expr::IsDistinctFrom(expr, _)
        | Expr::IsNotDistinctFrom(expr, _)
        | Expr::Like { expr, .. }
        | Expr::ILike { expr, .. }
        | Expr::SimilarTo { expr, .. }
        | Expr::Between { expr, .. }
        | Expr::In { expr, .. } => Some(expr),
        Expr::AtTimeZone { timestamp, .. } => Some(timestamp),
        _ => None,
    }
}

/// How long the chain of first children below `expr` is (the depth the
/// parser builds for `a + b + c ...`), counted without recursion.
fn spine_length(expr: &Expr) -> usize {
    let mut length = 0;
    let mut at = expr;
    while let Some(child) = first_child(at) {
        length += 1;
        if length > MAX_EXPRESSION_DEPTH {
            break;
        }
        at = child;
    }
    length
}

/// Drops `expr` without recursing into the chains it may hold: each node's
/// boxed children are moved out before the node itself is dropped.
fn dismantle(expr: Expr) {
    let mut pending = vec![expr];
    while let Some(mut e) = pending.pop() {
        let mut take =
            |b: &mut Box<Expr>| pending.push(std::mem::replace(b.as_mut(), placeholder()));
        match &mut e {
            Expr::BinaryOp { left, right, .. }
            | Expr::IsDistinctFrom(left, right)
            | Expr::IsNotDistinctFrom(left, right) => {
                take(left);
                take(right);
            }
            Expr::Like { expr, pattern, .. }
            | Expr::ILike { expr, pattern, .. }
            | Expr::SimilarTo { expr, pattern, .. } => {
                take(expr);
                take(pattern);
            }
            Expr::Between {
                expr, low, high, ..
            } => {
                take(expr);
                take(low);
                take(high);
            }
            Expr::In { expr, target, .. } => {
                take(expr);
                if let sqlparser::ast::InTarget::List(list) = target {
                    pending.append(list);
                }
            }
            Expr::UnaryOp { expr, .. }
            | Expr::Nested(expr)
            | Expr::Cast { expr, .. }
            | Expr::Collate { expr, .. }
            | Expr::IsNull(expr)
            | Expr::IsNotNull(expr)
            | Expr::IsTrue(expr)
            | Expr::IsNotTrue(expr)
            | Expr::IsFalse(expr)
            | Expr::IsNotFalse(expr)
            | Expr::IsUnknown(expr)
            | Expr::IsNotUnknown(expr) => take(expr),
            Expr::AtTimeZone {
                timestamp,
                time_zone,
            } => {
                take(timestamp);
                take(time_zone);
            }
            _ => {}
        }
        drop(e);
    }
}

/// Drops a statement whose expressions may be too deep to drop by recursion:
/// its expressions are taken apart first.
fn dismantle_statement(mut statement: Statement) {
    struct Taker;
    impl VisitorMut for Taker {
        type Break = ();
        fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
            if spine_length(expr) > 64 {
                dismantle(std::mem::replace(expr, placeholder()));
            }
            ControlFlow::Continue(())
        }
    }
    let _ = statement.visit(&mut Taker);
    drop(statement);
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    fn parse(sql: &str) -> Vec<Statement> {
        Parser::new(&PostgreSqlDialect {})
            .with_recursion_limit(PARSER_RECURSION_LIMIT)
            .try_with_sql(sql)
            .unwrap()
            .parse_statements()
            .unwrap()
    }

    fn depth(expr: &Expr) -> usize {
        struct Depth(usize, usize);
        impl sqlparser::ast::Visitor for Depth {
            type Break = ();
            fn pre_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
                self.0 += 1;
                self.1 = self.1.max(self.0);
                ControlFlow::Continue(())
            }
            fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
                self.0 -= 1;
                ControlFlow::Continue(())
            }
        }
        let mut d = Depth(0, 0);
        let _ = sqlparser::ast::Visit::visit(expr, &mut d);
        d.1
    }

    fn selection(statement: &Statement) -> &Expr {
        let Statement::Query(q) = statement else {
            panic!("not a query")
        };
        let sqlparser::ast::SetExpr::Select(s) = q.body.as_ref() else {
            panic!("not a select")
        };
        s.selection.as_ref().unwrap()
    }

    #[test]
    fn long_or_chains_are_balanced_in_order() {
        let terms: Vec<String> = (0..20_000).map(|i| format!("x = {i}")).collect();
        let sql = format!("SELECT 1 FROM t WHERE {}", terms.join(" OR "));
        let mut statements = parse(&sql);
        prepare(&mut statements).unwrap();
        let where_clause = selection(&statements[0]);
        assert!(depth(where_clause) < 40, "{}", depth(where_clause));
        // Same operands, same order.
        let printed = where_clause.to_string();
        assert_eq!(printed.matches(" OR ").count(), 19_999);
        assert!(printed.find("x = 0").unwrap() < printed.find("x = 19999").unwrap());
        let small = parse("SELECT 1 WHERE a AND (b AND c) AND d");
        let mut small = small;
        prepare(&mut small).unwrap();
        // Balanced, the parentheses go (AND is associative), the order stays.
        assert_eq!(selection(&small[0]).to_string(), "a AND b AND c AND d");
    }

    #[test]
    fn other_deep_chains_are_refused_and_dropped_safely() {
        let sql = format!("SELECT {}", vec!["1"; 200_000].join(" + "));
        let mut statements = parse(&sql);
        let error = prepare(&mut statements).unwrap_err();
        assert_eq!(error.code, SqlState::STATEMENT_TOO_COMPLEX);
        assert_eq!(error.message, "stack depth limit exceeded");
        assert!(statements.is_empty());
        let ok = format!("SELECT {}", vec!["1"; 4_000].join(" + "));
        let mut statements = parse(&ok);
        prepare(&mut statements).unwrap();
    }

    /// Statements nested `n` levels in each of the ways the token check counts.
    fn nested(n: usize) -> Vec<(&'static str, String)> {
        vec![
            (
                "parentheses",
                format!("SELECT {}1{}", "(".repeat(n), ")".repeat(n)),
            ),
            (
                "calls",
                format!("SELECT {}1{}", "abs(".repeat(n), ")".repeat(n)),
            ),
            (
                "CASE",
                format!(
                    "SELECT {}1{}",
                    "CASE WHEN true THEN ".repeat(n),
                    " END".repeat(n)
                ),
            ),
            ("NOT", format!("SELECT {}true", "NOT ".repeat(n))),
            // Found by fuzzing: each NOT's operand holds the rest of the
            // chain; refused past the limit in linear time, where the
            // parser's backtracking took exponential time.
            (
                "NOT chain",
                format!("SELECT {}true", "NOT true = ".repeat(n)),
            ),
            (
                "NOT calls",
                format!("SELECT {}abs(1)", "NOT abs(1) = ".repeat(n - 1)),
            ),
            (
                "arrays",
                format!("SELECT {}1{}", "ARRAY[".repeat(n), "]".repeat(n)),
            ),
        ]
    }

    #[test]
    fn nesting_postgres_accepts_parses() {
        for (what, sql) in nested(MAX_NESTING) {
            let parsed = crate::parse::parse(&sql);
            assert!(parsed.is_ok(), "{what}: {:?}", parsed.err());
        }
        let subqueries = format!("SELECT {}1{}", "(SELECT ".repeat(1000), ")".repeat(1000));
        crate::parse::parse(&subqueries).unwrap();
    }

    #[test]
    fn deeper_nesting_is_refused_with_54001_before_parsing() {
        for n in [MAX_NESTING + 1, 100_000] {
            for (what, sql) in nested(n) {
                let started = std::time::Instant::now();
                let error = crate::parse::parse(&sql).unwrap_err();
                assert_eq!(
                    error.code,
                    SqlState::STATEMENT_TOO_COMPLEX,
                    "{what} {n}: {error:?}"
                );
                // Generous: only detects the parser's backtracking (minutes).
                assert!(
                    started.elapsed().as_secs() < 30,
                    "{what} {n} took {:?}",
                    started.elapsed()
                );
            }
        }
    }

    #[test]
    fn quoted_words_and_strings_do_not_count() {
        let in_string = format!("SELECT '{}' AS \"case\"", "(".repeat(10_000));
        crate::parse::parse(&in_string).unwrap();
        let quoted_not = format!("SELECT {}1", "\"not\" + ".repeat(5_000));
        crate::parse::parse(&quoted_not).unwrap();
        // NOTs whose operands end (AND, OR, commas, IS NOT) do not add up.
        for separator in [" AND ", " OR ", ", "] {
            let flat = vec!["NOT a IS NOT NULL"; 5_000].join(separator);
            crate::parse::parse(&format!("SELECT {flat}")).unwrap();
        }
    }
}
