//! Statement shapes: a query string with its number and string literals
//! taken out, so that the statements DuckDB repeats with other literals
//! (`... WHERE "table_id" = 17`, the snapshot it inserts, the statistics it
//! updates) are parsed once per shape instead of once per string.
//!
//! [`shape_of`] reads a query string as PostgreSQL's lexer would as far as
//! literals go: plain `'...'` strings (with `''` for a quote) and unsigned
//! decimal numbers (`42`, `3.25`) become slots of the shape; quoted names,
//! `$n` parameters and `--` comments stay in it word for word. Whatever it
//! does not read with certainty gives no shape (the string is then parsed
//! as it is): prefixed strings (`E'...'`, `B'...'`, `U&'...'`), dollar
//! quotes, block comments, a backslash in a string, and numbers written any
//! other way (`1e5`, `.5`, `0x1F`, `1_000`).
//!
//! A [`Template`] is the statements of one string of a shape, with the
//! place of each literal in them. It is kept only after two checks: each
//! literal of the string is exactly one value of the statements (found by
//! its position in the text), and another string of the same shape with
//! every literal changed parses to exactly what the template gives for it.
//! A literal the parser keeps anywhere but in a value (a type's length, a
//! copy in another field), or a statement that parses differently with
//! other literals, fails a check and the shape is parsed string by string.

use std::collections::HashMap;
use std::ops::ControlFlow;

use sqlparser::ast::{Statement, Value, ValueWithSpan, Visit, VisitMut, Visitor, VisitorMut};
use sqlparser::tokenizer::{Location, Span};

use super::Parsed;

/// Stands for a number literal in a shape's key.
const NUMBER_SLOT: &str = "\u{1}n";
/// Stands for a string literal in a shape's key.
const STRING_SLOT: &str = "\u{1}s";

/// What kind of literal a slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LiteralKind {
    /// An unsigned decimal number: digits, then `.` and digits at most.
    Number,
    /// A plain single-quoted string.
    String,
}

/// A literal of a query string, where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Literal<'a> {
    kind: LiteralKind,
    /// The number's digits, or the string's text between its quotes (`''`
    /// still doubled).
    raw: &'a str,
    /// Where the literal's first character is, as sqlparser counts.
    start: Location,
    /// Where the character after it is.
    end: Location,
    /// Its byte range in the query string, quotes included.
    bytes: std::ops::Range<usize>,
}

impl Literal<'_> {
    /// The value sqlparser gives the literal.
    fn value(&self) -> Value {
        match self.kind {
            LiteralKind::Number => Value::Number(self.raw.to_string(), false),
            LiteralKind::String => Value::SingleQuotedString(self.raw.replace("''", "'")),
        }
    }

    /// Another literal of the same kind, different from this one.
    fn changed(&self) -> String {
        match (self.kind, self.raw) {
            (LiteralKind::Number, "7") => "8".to_string(),
            (LiteralKind::Number, _) => "7".to_string(),
            (LiteralKind::String, "x") => "'y'".to_string(),
            (LiteralKind::String, _) => "'x'".to_string(),
        }
    }
}

/// A query string taken apart into its shape and its literals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape<'a> {
    /// The string with a marker for each literal: equal for two strings
    /// that differ only in their literals (of the same kinds).
    pub(crate) key: String,
    /// The literals, in the order of the text.
    literals: Vec<Literal<'a>>,
}

impl Shape<'_> {
    /// True when the string has no literal (the shape is the string).
    pub(crate) fn is_plain(&self) -> bool {
        self.literals.is_empty()
    }

    /// The string with every literal changed (see [`Literal::changed`]).
    fn changed_text(&self, sql: &str) -> String {
        let mut text = String::with_capacity(sql.len() + 8);
        let mut at = 0;
        for literal in &self.literals {
            text.push_str(&sql[at..literal.bytes.start]);
            text.push_str(&literal.changed());
            at = literal.bytes.end;
        }
        text.push_str(&sql[at..]);
        text
    }
}

/// Where the scan of a query string is, counted as sqlparser's tokenizer
/// counts (lines and characters from 1).
struct Cursor<'a> {
    sql: &'a str,
    at: usize,
    line: u64,
    column: u64,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<char> {
        self.sql[self.at..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        self.sql[self.at..].chars().nth(1)
    }

    fn location(&self) -> Location {
        Location::new(self.line, self.column)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }
}

/// A character that continues an identifier or a keyword (PostgreSQL's
/// lexer takes every non-ASCII character for a letter).
fn continues_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$' || !c.is_ascii()
}

/// The shape of `sql`, or `None` where it has something the scan does not
/// read with certainty (see the module documentation).
pub(crate) fn shape_of(sql: &str) -> Option<Shape<'_>> {
    if sql.contains('\u{1}') {
        return None;
    }
    let mut cursor = Cursor {
        sql,
        at: 0,
        line: 1,
        column: 1,
    };
    let mut key = String::with_capacity(sql.len());
    let mut literals = Vec::new();
    // The character before the cursor, outside quotes and comments.
    let mut previous: Option<char> = None;
    while let Some(c) = cursor.peek() {
        let start = cursor.at;
        let start_location = cursor.location();
        match c {
            '\'' => {
                if previous.is_some_and(|p| continues_word(p) || p == '&') {
                    return None; // E'...', B'...', X'...', N'...', U&'...'
                }
                cursor.bump();
                let content_start = cursor.at;
                loop {
                    match cursor.bump()? {
                        '\\' => return None,
                        '\'' if cursor.peek() == Some('\'') => {
                            cursor.bump();
                        }
                        '\'' => break,
                        _ => {}
                    }
                }
                literals.push(Literal {
                    kind: LiteralKind::String,
                    raw: &sql[content_start..cursor.at - 1],
                    start: start_location,
                    end: cursor.location(),
                    bytes: start..cursor.at,
                });
                key.push_str(STRING_SLOT);
            }
            '0'..='9' if !previous.is_some_and(|p| continues_word(p) || p == '.') => {
                while cursor.peek().is_some_and(|c| c.is_ascii_digit()) {
                    cursor.bump();
                }
                if cursor.peek() == Some('.') {
                    cursor.bump();
                    if !cursor.peek().is_some_and(|c| c.is_ascii_digit()) {
                        return None; // `1.`, `1..2`
                    }
                    while cursor.peek().is_some_and(|c| c.is_ascii_digit()) {
                        cursor.bump();
                    }
                }
                if cursor.peek().is_some_and(|c| continues_word(c) || c == '.') {
                    return None; // `1e5`, `0x1F`, `1_000`, `1.2.3`
                }
                literals.push(Literal {
                    kind: LiteralKind::Number,
                    raw: &sql[start..cursor.at],
                    start: start_location,
                    end: cursor.location(),
                    bytes: start..cursor.at,
                });
                key.push_str(NUMBER_SLOT);
            }
            '"' => {
                cursor.bump();
                loop {
                    match cursor.bump()? {
                        '"' if cursor.peek() == Some('"') => {
                            cursor.bump();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                key.push_str(&sql[start..cursor.at]);
            }
            '-' if cursor.peek_second() == Some('-') => {
                while cursor.peek().is_some_and(|c| c != '\n') {
                    cursor.bump();
                }
                key.push_str(&sql[start..cursor.at]);
            }
            '/' if cursor.peek_second() == Some('*') => return None,
            '$' if !previous.is_some_and(continues_word) => {
                cursor.bump();
                if !cursor.peek().is_some_and(|c| c.is_ascii_digit()) {
                    return None; // a dollar quote
                }
                while cursor.peek().is_some_and(|c| c.is_ascii_digit()) {
                    cursor.bump();
                }
                key.push_str(&sql[start..cursor.at]);
            }
            '.' if cursor.peek_second().is_some_and(|c| c.is_ascii_digit())
                && !previous.is_some_and(continues_word) =>
            {
                return None; // `.5`
            }
            _ => {
                cursor.bump();
                key.push(c);
            }
        }
        previous = sql[..cursor.at].chars().next_back();
    }
    Some(Shape { key, literals })
}

/// The statements of a string of a shape and where its literals went.
#[derive(Debug)]
pub(crate) struct Template {
    parsed: std::sync::Arc<Parsed>,
    /// For each value of the statements, in the order a visit meets them:
    /// the literal of the string it holds, or `None` for a value that is
    /// part of the shape (`NULL`, `TRUE`, a value the parser made up).
    slots: Vec<Option<usize>>,
}

/// Collects the values of statements with their positions.
struct ValueCollector {
    values: Vec<ValueWithSpan>,
}

impl Visitor for ValueCollector {
    type Break = ();

    fn pre_visit_value(&mut self, value: &ValueWithSpan) -> ControlFlow<()> {
        self.values.push(value.clone());
        ControlFlow::Continue(())
    }
}

/// The values of `statements` with their positions, in the order a visit
/// meets them.
fn values_of(statements: &[Statement]) -> Vec<ValueWithSpan> {
    let mut collector = ValueCollector { values: Vec::new() };
    for statement in statements {
        let _ = statement.visit(&mut collector);
    }
    collector.values
}

/// Puts literals into the values of statements, slot by slot.
struct LiteralFiller<'s, 'l> {
    slots: std::slice::Iter<'s, Option<usize>>,
    literals: &'s [Literal<'l>],
}

impl VisitorMut for LiteralFiller<'_, '_> {
    type Break = ();

    fn pre_visit_value(&mut self, value: &mut ValueWithSpan) -> ControlFlow<()> {
        if let Some(Some(index)) = self.slots.next() {
            let literal = &self.literals[*index];
            value.value = literal.value();
            value.span = Span::new(literal.start, literal.end);
        }
        ControlFlow::Continue(())
    }
}

impl Template {
    /// The template of `shape` (of `sql`, whose statements are `parsed`),
    /// when both checks of the module documentation pass; `parse` parses
    /// the string of the second check.
    pub(crate) fn build(
        sql: &str,
        shape: &Shape<'_>,
        parsed: &std::sync::Arc<Parsed>,
        parse: impl FnOnce(&str) -> Option<Parsed>,
    ) -> Option<Template> {
        let slots = slots_of(&parsed.statements, &shape.literals)?;
        let template = Template {
            parsed: std::sync::Arc::clone(parsed),
            slots,
        };
        let changed_text = shape.changed_text(sql);
        let changed = shape_of(&changed_text)?;
        let reparsed = parse(&changed_text)?;
        let same = template.fill(&changed) == reparsed
            && slots_of(&reparsed.statements, &changed.literals).as_ref() == Some(&template.slots);
        same.then_some(template)
    }

    /// The statements of another string of the template's shape.
    pub(crate) fn fill(&self, shape: &Shape<'_>) -> Parsed {
        let mut parsed = Parsed::clone(&self.parsed);
        let mut filler = LiteralFiller {
            slots: self.slots.iter(),
            literals: &shape.literals,
        };
        for statement in &mut parsed.statements {
            let _ = statement.visit(&mut filler);
        }
        parsed
    }
}

/// Where the number and string values of `parsed` stand (their equality
/// leaves that out).
#[cfg(test)]
pub(crate) fn literal_spans(parsed: &Parsed) -> Vec<Span> {
    values_of(&parsed.statements)
        .into_iter()
        .filter(|value| {
            matches!(
                value.value,
                Value::Number(..) | Value::SingleQuotedString(_)
            )
        })
        .map(|value| value.span)
        .collect()
}

/// Which literal each value of `statements` holds; `None` unless every
/// literal is exactly one value, of its kind and its text.
fn slots_of(statements: &[Statement], literals: &[Literal<'_>]) -> Option<Vec<Option<usize>>> {
    let by_start: HashMap<Location, usize> = literals
        .iter()
        .enumerate()
        .map(|(index, literal)| (literal.start, index))
        .collect();
    let mut used = vec![false; literals.len()];
    let values = values_of(statements);
    let mut slots = Vec::with_capacity(values.len());
    for value in values {
        match by_start.get(&value.span.start) {
            Some(&index) => {
                if used[index] || value.value != literals[index].value() {
                    return None;
                }
                used[index] = true;
                slots.push(Some(index));
            }
            None => slots.push(None),
        }
    }
    used.iter().all(|&u| u).then_some(slots)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(sql: &str) -> Option<String> {
        shape_of(sql).map(|shape| shape.key)
    }

    fn raws(sql: &str) -> Vec<&str> {
        shape_of(sql)
            .unwrap()
            .literals
            .iter()
            .map(|literal| literal.raw)
            .collect()
    }

    #[test]
    fn strings_differing_in_literals_share_a_shape() {
        assert_eq!(
            key(r#"SELECT "a1" FROM t2 WHERE id = 17 AND name = 'it''s'"#),
            key(r#"SELECT "a1" FROM t2 WHERE id = 3.5 AND name = ''"#)
        );
        assert_eq!(
            raws("SELECT x FROM t WHERE a = 17 AND b = 'it''s' AND c = 3.25"),
            ["17", "it''s", "3.25"]
        );
        assert_ne!(key("SELECT 1"), key("SELECT '1'"), "kinds differ");
        assert_ne!(key("SELECT 1"), key("SELECT 1 "));
        assert_eq!(raws("SELECT é1, x FROM t"), Vec::<&str>::new(), "a name");
    }

    #[test]
    fn names_parameters_and_comments_stay_in_the_shape() {
        assert_eq!(
            raws(r#"SELECT "x'1", t1.c2, $1 FROM "it's" -- '5'"#),
            Vec::<&str>::new()
        );
        assert_ne!(key("SELECT $1"), key("SELECT $2"));
        assert_ne!(
            key(r#"SELECT "a""b" FROM t"#),
            key(r#"SELECT "a""c" FROM t"#)
        );
        assert!(shape_of("SELECT 1").is_some_and(|s| !s.is_plain()));
        assert!(shape_of("SELECT a FROM t").is_some_and(|s| s.is_plain()));
    }

    #[test]
    fn what_the_scan_does_not_read_gives_no_shape() {
        for sql in [
            "SELECT E'a\\n'",
            "SELECT B'101'",
            "SELECT U&'d\\0061t'",
            "SELECT 'a\\b'",
            "SELECT $$x$$",
            "SELECT $tag$x$tag$",
            "SELECT /* 1 */ 2",
            "SELECT 1e5",
            "SELECT .5",
            "SELECT 1.",
            "SELECT 0x1F",
            "SELECT 1_000",
            "SELECT 'unterminated",
            "SELECT \u{1}",
            "SELECT €'x'",
        ] {
            assert_eq!(key(sql), None, "{sql}");
        }
    }

    #[test]
    fn locations_count_characters_and_lines_as_sqlparser_does() {
        let shape = shape_of("SELECT 'é',\n  42").unwrap();
        assert_eq!(shape.literals[0].start, Location::new(1, 8));
        assert_eq!(shape.literals[0].end, Location::new(1, 11));
        assert_eq!(shape.literals[1].start, Location::new(2, 3));
    }
}
