//! Matching with PostgreSQL's rules over Rust's engines.
//!
//! A match starts where PostgreSQL's does (the leftmost position where any
//! match begins, which every engine agrees on). Its end follows
//! PostgreSQL's rule rather than Perl's: the whole RE matches the longest
//! text it can there, or the shortest when its first quantifier is
//! non-greedy (PostgreSQL's "greediness" of an RE, which for an RE with a
//! top-level `|` is always greedy). Perl's rule would pick the first
//! alternative (`a|ab` matches `a` of `ab` in Perl, `ab` in PostgreSQL).
//! Subexpressions are then matched within that span, earlier ones
//! preferring as Perl does (PostgreSQL gives each subexpression its own
//! greediness; the two agree unless a subexpression could take text in
//! more than one way).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use regex_automata::nfa::thompson::pikevm::{self, PikeVM};
use regex_automata::nfa::thompson::Config as NfaConfig;
use regex_automata::{Anchored, Input, MatchKind};
use regex_syntax::ast::{self, Ast};

use super::translate::{invalid_pattern, to_rust, Flags};
use rocklake_types::SqlError;

/// Most bytes a compiled pattern may take (a pattern is user input).
const SIZE_LIMIT: usize = 1 << 20;

/// A compiled PostgreSQL regular expression.
pub(crate) struct Pattern {
    /// Finds where a match starts (and Perl's extent, often the same).
    first: regex::Regex,
    /// The same pattern required to end where the match ends, for its
    /// subexpressions (needed when it has both choices and groups).
    ending: Option<regex::Regex>,
    /// Every match at an anchored start, for the longest or shortest end,
    /// with its search cache (needed when the pattern has choices).
    all: Option<(PikeVM, RefCell<pikevm::Cache>)>,
    /// Whether the whole RE prefers the longest match.
    greedy: bool,
    /// The number of parenthesized subexpressions.
    pub groups: usize,
}

/// One match: byte offsets of the whole match and of each subexpression.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The whole match.
    pub start: usize,
    /// Its end.
    pub end: usize,
    /// Each subexpression's span, if it took part.
    pub groups: Vec<Option<(usize, usize)>>,
}

fn build_error(e: impl std::fmt::Display) -> SqlError {
    let text = e.to_string();
    let message = if text.contains("unclosed group") || text.contains("unopened group") {
        "parentheses () not balanced"
    } else if text.contains("unclosed character class") {
        "brackets [] not balanced"
    } else if text.contains("repetition operator missing expression") {
        "quantifier operand invalid"
    } else if text.contains("exceeds size limit") {
        "regular expression is too complex"
    } else {
        "invalid regular expression"
    };
    invalid_pattern(message)
}

impl Pattern {
    fn compile(pattern: &str, flags: Flags) -> Result<Pattern, SqlError> {
        let rust = to_rust(pattern, flags)?;
        let first = regex::RegexBuilder::new(&rust)
            .size_limit(SIZE_LIMIT)
            .build()
            .map_err(build_error)?;
        let parsed = ast::parse::Parser::new()
            .parse(&rust)
            .map_err(build_error)?;
        let has_choices = has_choices(&parsed);
        let groups = first.captures_len() - 1;
        let ending = if has_choices && groups > 0 {
            let ending = regex::RegexBuilder::new(&format!("(?:{rust})\\z"))
                .size_limit(SIZE_LIMIT)
                .build()
                .map_err(build_error)?;
            Some(ending)
        } else {
            None
        };
        let all = if has_choices {
            let vm = PikeVM::builder()
                .configure(PikeVM::config().match_kind(MatchKind::All))
                .thompson(NfaConfig::new().nfa_size_limit(Some(SIZE_LIMIT)))
                .build(&rust)
                .map_err(build_error)?;
            let cache = RefCell::new(vm.create_cache());
            Some((vm, cache))
        } else {
            None
        };
        Ok(Pattern {
            greedy: preference(&parsed) != Some(false),
            groups,
            first,
            ending,
            all,
        })
    }

    /// Whether `hay` matches anywhere.
    pub fn is_match(&self, hay: &str) -> bool {
        self.first.is_match(hay)
    }

    /// The first match starting at byte `from` or later.
    pub fn find_at(&self, hay: &str, from: usize) -> Option<Found> {
        let perl = self.first.find_at(hay, from)?;
        let start = perl.start();
        // Without quantifiers or alternatives every engine's extent is the
        // same.
        let end = self.end_at(hay, start).unwrap_or(perl.end());
        let mut groups = Vec::new();
        if self.groups > 0 {
            let captures = match &self.ending {
                Some(ending) if end != perl.end() => ending.captures_at(&hay[..end], start),
                _ => self.first.captures_at(hay, start),
            };
            if let Some(captures) = captures {
                groups = (1..=self.groups)
                    .map(|i| captures.get(i).map(|m| (m.start(), m.end())))
                    .collect();
            }
        }
        if groups.len() < self.groups {
            groups.resize(self.groups, None);
        }
        Some(Found { start, end, groups })
    }

    /// The end of the longest (or, for a non-greedy RE, shortest) match
    /// starting exactly at `start`; `None` for a pattern without
    /// quantifiers or alternatives, whose every match has one extent.
    fn end_at(&self, hay: &str, start: usize) -> Option<usize> {
        let (vm, cache) = self.all.as_ref()?;
        let input = Input::new(hay)
            .range(start..)
            .anchored(Anchored::Yes)
            .earliest(!self.greedy);
        vm.find(&mut cache.borrow_mut(), input).map(|m| m.end())
    }

    /// Every match from byte `from`, without overlaps; after an empty match
    /// the next search starts one character later (PostgreSQL's rule).
    pub fn find_all(&self, hay: &str, from: usize) -> Vec<Found> {
        let mut found = Vec::new();
        let mut at = from;
        while at <= hay.len() {
            let Some(m) = self.find_at(hay, at) else {
                break;
            };
            at = if m.end == m.start {
                m.end + hay[m.end..].chars().next().map_or(1, char::len_utf8)
            } else {
                m.end
            };
            found.push(m);
        }
        found
    }
}

/// The greediness PostgreSQL gives an RE: that of its first quantified
/// atom with one, greedy for alternatives, none for fixed text.
fn preference(ast: &Ast) -> Option<bool> {
    match ast {
        Ast::Alternation(_) => Some(true),
        Ast::Concat(concat) => concat.asts.iter().find_map(preference),
        Ast::Group(group) => preference(&group.ast),
        Ast::Repetition(rep) => match &rep.op.kind {
            ast::RepetitionKind::Range(ast::RepetitionRange::Exactly(_)) => preference(&rep.ast),
            _ => Some(rep.greedy),
        },
        _ => None,
    }
}

/// Whether the RE can match different lengths at one start.
fn has_choices(ast: &Ast) -> bool {
    match ast {
        Ast::Alternation(_) | Ast::Repetition(_) => true,
        Ast::Concat(concat) => concat.asts.iter().any(has_choices),
        Ast::Group(group) => has_choices(&group.ast),
        _ => false,
    }
}

thread_local! {
    /// Patterns compiled by this session's thread, by text and flags.
    static COMPILED: RefCell<HashMap<(String, Flags), Rc<Pattern>>> = RefCell::new(HashMap::new());
}

/// `pattern` with `flags`, compiled (kept for the next call).
pub(crate) fn compiled(pattern: &str, flags: Flags) -> Result<Rc<Pattern>, SqlError> {
    let key = (pattern.to_string(), flags);
    if let Some(found) = COMPILED.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(found);
    }
    let compiled = Rc::new(Pattern::compile(pattern, flags)?);
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 64 {
            c.clear();
        }
        c.insert(key, compiled.clone());
    });
    Ok(compiled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(pattern: &str, hay: &str) -> Option<(usize, usize)> {
        compiled(pattern, Flags::default())
            .unwrap()
            .find_at(hay, 0)
            .map(|m| (m.start, m.end))
    }

    #[test]
    fn the_whole_match_follows_postgres_greediness() {
        // Alternatives: the longest, not the first.
        assert_eq!(first("a|ab", "abc"), Some((0, 2)));
        assert_eq!(first("x*(xy)?", "xy"), Some((0, 2)));
        // A non-greedy RE: the shortest.
        assert_eq!(first("a.*?b", "aXbXb"), Some((0, 3)));
        assert_eq!(first("b", "abc"), Some((1, 2)));
    }

    #[test]
    fn subexpressions_lie_within_the_match() {
        let p = compiled("(a|ab)(c|bcd)", Flags::default()).unwrap();
        let m = p.find_at("abcd", 0).unwrap();
        assert_eq!((m.start, m.end), (0, 4));
        assert_eq!(m.groups, vec![Some((0, 1)), Some((1, 4))]);
    }

    #[test]
    fn empty_matches_advance_one_character() {
        let p = compiled("x*", Flags::default()).unwrap();
        let spans: Vec<_> = p
            .find_all("aéx", 0)
            .iter()
            .map(|m| (m.start, m.end))
            .collect();
        assert_eq!(spans, vec![(0, 0), (1, 1), (3, 4), (4, 4)]);
    }
}
