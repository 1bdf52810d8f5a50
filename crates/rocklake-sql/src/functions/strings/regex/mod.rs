//! Regular expression functions and operators: `~ ~* !~ !~*`,
//! `regexp_like`, `regexp_match`, `regexp_matches`, `regexp_replace`,
//! `regexp_count`, `regexp_instr`, `regexp_substr`,
//! `regexp_split_to_array`/`_table`, `substring(text from pattern)` and
//! SQL's `SIMILAR TO` (through `similar_to_escape`, as in PostgreSQL).
//! Patterns are PostgreSQL's ([`translate`]) matched by its rules
//! ([`engine`]).

mod engine;
mod similar;
mod translate;

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::{SqlError, SqlState};

use super::super::def::types::*;
use super::super::def::Library;
use super::{int_arg, str_arg};
use crate::plan::{CallEnv, CallInfo, ScalarFn};
use engine::{compiled, Found};
pub(crate) use translate::Flags;

/// The hidden names of the arrays behind the set-returning
/// `regexp_matches` (an array of `text[]`) and `regexp_split_to_table`.
pub(crate) const MATCHES_ARRAY: &str = "regexp_matches (as array)";
/// See [`MATCHES_ARRAY`].
pub(crate) const SPLIT_ARRAY: &str = "regexp_split_to_table (as array)";

fn text_array() -> PgType {
    PgType::array_of(TEXT)
}

/// Registers the regular expression functions.
pub(super) fn register(lib: &mut Library) {
    let operators: [(&str, ScalarFn); 4] = [
        ("~", |a, _, _| matches(a, "", false)),
        ("~*", |a, _, _| matches(a, "i", false)),
        ("!~", |a, _, _| matches(a, "", true)),
        ("!~*", |a, _, _| matches(a, "i", true)),
    ];
    for (symbol, eval) in operators {
        lib.infix(symbol, TEXT, TEXT, BOOL, eval);
    }
    lib.function("regexp_like", [TEXT, TEXT, TEXT], BOOL, |a, _, _| {
        let flags = no_global(a.get(2), "regexp_like()")?;
        Ok(Datum::Bool(
            compiled(str_arg(&a[1]), flags)?.is_match(str_arg(&a[0])),
        ))
    })
    .optional(1);
    lib.function(
        "regexp_match",
        [TEXT, TEXT, TEXT],
        text_array(),
        regexp_match,
    )
    .optional(1);
    lib.function(
        MATCHES_ARRAY,
        [TEXT, TEXT, TEXT],
        PgType::array_of(text_array()),
        regexp_matches,
    )
    .optional(1);
    lib.function(
        "regexp_replace",
        [TEXT, TEXT, TEXT, TEXT],
        TEXT,
        replace_flags,
    )
    .optional(1);
    lib.function(
        "regexp_replace",
        [TEXT, TEXT, TEXT, INT4, INT4, TEXT],
        TEXT,
        replace_nth,
    )
    .optional(2);
    lib.function("regexp_count", [TEXT, TEXT, INT4, TEXT], INT4, regexp_count)
        .optional(2);
    lib.function(
        "regexp_instr",
        [TEXT, TEXT, INT4, INT4, INT4, TEXT, INT4],
        INT4,
        regexp_instr,
    )
    .optional(5);
    lib.function(
        "regexp_substr",
        [TEXT, TEXT, INT4, INT4, TEXT, INT4],
        TEXT,
        regexp_substr,
    )
    .optional(4);
    for name in ["regexp_split_to_array", SPLIT_ARRAY] {
        lib.function(name, [TEXT, TEXT, TEXT], text_array(), split)
            .optional(1);
    }
    lib.function("substring", [TEXT, TEXT], TEXT, substring_regex);
    similar::register(lib);
}

/// A flags argument that may not say `g`.
fn no_global(flags: Option<&Datum>, function: &str) -> Result<Flags, SqlError> {
    let flags = Flags::parse(flags.map(str_arg).unwrap_or_default())?;
    if flags.global {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("{function} does not support the \"global\" option"),
        )
        .with_hint(if function == "regexp_match()" {
            "Use the regexp_matches function instead."
        } else {
            ""
        }));
    }
    Ok(flags)
}

fn matches(a: &[Datum], flags: &str, negated: bool) -> Result<Datum, SqlError> {
    let pattern = compiled(str_arg(&a[1]), Flags::parse(flags)?)?;
    Ok(Datum::Bool(pattern.is_match(str_arg(&a[0])) != negated))
}

/// The text of a match's subexpressions (or the whole match when it has
/// none), as `regexp_match` returns them.
fn match_array(hay: &str, found: &Found) -> Datum {
    if found.groups.is_empty() {
        return Datum::array(vec![Datum::text(&hay[found.start..found.end])]);
    }
    Datum::array(
        found
            .groups
            .iter()
            .map(|g| g.map_or(Datum::Null, |(s, e)| Datum::text(&hay[s..e])))
            .collect::<Vec<_>>(),
    )
}

fn regexp_match(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let flags = no_global(a.get(2), "regexp_match()")?;
    let hay = str_arg(&a[0]);
    let pattern = compiled(str_arg(&a[1]), flags)?;
    Ok(pattern
        .find_at(hay, 0)
        .map_or(Datum::Null, |m| match_array(hay, &m)))
}

fn regexp_matches(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    let flags = Flags::parse(a.get(2).map(str_arg).unwrap_or_default())?;
    let hay = str_arg(&a[0]);
    let pattern = compiled(str_arg(&a[1]), flags)?;
    let found = if flags.global {
        pattern.find_all(hay, 0)
    } else {
        pattern.find_at(hay, 0).into_iter().collect()
    };
    env.memory.check(found.len() * 64)?;
    Ok(Datum::array(
        found
            .iter()
            .map(|m| match_array(hay, m))
            .collect::<Vec<_>>(),
    ))
}

/// The byte offset of character `position` (from 1) of `s`, or `None`
/// past its end.
fn byte_of_char(s: &str, position: i64) -> Option<usize> {
    if position <= 1 {
        return Some(0);
    }
    let wanted = (position - 1) as usize;
    s.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(s.len()))
        .nth(wanted)
}

/// The character position (from 1) of byte offset `byte`.
fn char_of_byte(s: &str, byte: usize) -> i32 {
    s[..byte].chars().count() as i32 + 1
}

fn positive(value: i64, name: &str, least: i64) -> Result<i64, SqlError> {
    if value < least {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid value for parameter \"{name}\": {value}"),
        ));
    }
    Ok(value)
}

/// `replacement` for one match: `\1`…`\9` its subexpressions, `\&` the
/// whole match, `\\` a backslash.
fn substitute(out: &mut String, hay: &str, found: &Found, replacement: &str) {
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some(d @ '1'..='9') => {
                chars.next();
                let group = d as usize - '0' as usize;
                if let Some(Some((s, e))) = found.groups.get(group - 1) {
                    out.push_str(&hay[*s..*e]);
                }
            }
            Some('&') => {
                chars.next();
                out.push_str(&hay[found.start..found.end]);
            }
            Some('\\') => {
                chars.next();
                out.push('\\');
            }
            _ => out.push('\\'),
        }
    }
}

/// Replaces the matches from character `start`: the `nth` one, or every
/// one when `nth` is 0.
fn replace(
    a: &[Datum],
    env: &CallEnv,
    flags: Flags,
    start: i64,
    nth: i64,
) -> Result<Datum, SqlError> {
    let (hay, replacement) = (str_arg(&a[0]), str_arg(&a[2]));
    let pattern = compiled(str_arg(&a[1]), flags)?;
    let Some(from) = byte_of_char(hay, start) else {
        return Ok(Datum::text(hay));
    };
    let found = if nth == 1 && !flags.global {
        pattern.find_at(hay, from).into_iter().collect()
    } else {
        pattern.find_all(hay, from)
    };
    let chosen: Vec<&Found> = match nth {
        0 => found.iter().collect(),
        n => found.iter().skip(n as usize - 1).take(1).collect(),
    };
    let mut out = String::with_capacity(hay.len());
    let mut copied = 0;
    for m in chosen {
        out.push_str(&hay[copied..m.start]);
        substitute(&mut out, hay, m, replacement);
        copied = m.end;
        env.memory.check(out.len())?;
    }
    out.push_str(&hay[copied..]);
    Ok(Datum::text(out))
}

/// `regexp_replace(source, pattern, replacement [, flags])`.
fn replace_flags(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    let flags = Flags::parse(a.get(3).map(str_arg).unwrap_or_default())?;
    let nth = if flags.global { 0 } else { 1 };
    replace(a, env, flags, 1, nth)
}

/// `regexp_replace(source, pattern, replacement, start [, N [, flags]])`.
fn replace_nth(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    let start = positive(int_arg(&a[3]), "start", 1)?;
    let flags = Flags::parse(a.get(5).map(str_arg).unwrap_or_default())?;
    let nth = match a.get(4) {
        Some(n) => positive(int_arg(n), "n", 0)?,
        None if flags.global => 0,
        None => 1,
    };
    replace(a, env, flags, start, nth)
}

/// The matches of `a[1]` in `a[0]` from character `start` (none when it is
/// past the end).
fn matches_from(a: &[Datum], start: i64, flags: Flags) -> Result<Vec<Found>, SqlError> {
    let hay = str_arg(&a[0]);
    let pattern = compiled(str_arg(&a[1]), flags)?;
    Ok(match byte_of_char(hay, start) {
        Some(from) => pattern.find_all(hay, from),
        None => Vec::new(),
    })
}

fn regexp_count(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let start = positive(a.get(2).map_or(1, int_arg), "start", 1)?;
    let flags = no_global(a.get(3), "regexp_count()")?;
    Ok(Datum::Int4(matches_from(a, start, flags)?.len() as i32))
}

/// The span of subexpression `subexpr` (0: the whole match) of the `nth`
/// match from `start`.
fn nth_span(
    a: &[Datum],
    start: i64,
    nth: i64,
    flags: Flags,
    subexpr: i64,
) -> Result<Option<(usize, usize)>, SqlError> {
    let found = matches_from(a, start, flags)?;
    let Some(m) = found.get(nth as usize - 1) else {
        return Ok(None);
    };
    Ok(match subexpr {
        0 => Some((m.start, m.end)),
        n => m.groups.get(n as usize - 1).copied().flatten(),
    })
}

fn regexp_instr(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let start = positive(a.get(2).map_or(1, int_arg), "start", 1)?;
    let nth = positive(a.get(3).map_or(1, int_arg), "n", 1)?;
    let end_option = a.get(4).map_or(0, int_arg);
    if end_option != 0 && end_option != 1 {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid value for parameter \"endoption\": {end_option}"),
        ));
    }
    let flags = no_global(a.get(5), "regexp_instr()")?;
    let subexpr = positive(a.get(6).map_or(0, int_arg), "subexpr", 0)?;
    let hay = str_arg(&a[0]);
    Ok(Datum::Int4(
        match nth_span(a, start, nth, flags, subexpr)? {
            Some((s, e)) => char_of_byte(hay, if end_option == 1 { e } else { s }),
            None => 0,
        },
    ))
}

fn regexp_substr(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let start = positive(a.get(2).map_or(1, int_arg), "start", 1)?;
    let nth = positive(a.get(3).map_or(1, int_arg), "n", 1)?;
    let flags = no_global(a.get(4), "regexp_substr()")?;
    let subexpr = positive(a.get(5).map_or(0, int_arg), "subexpr", 0)?;
    let hay = str_arg(&a[0]);
    Ok(match nth_span(a, start, nth, flags, subexpr)? {
        Some((s, e)) => Datum::text(&hay[s..e]),
        None => Datum::Null,
    })
}

/// `regexp_split_to_array(string, pattern [, flags])`: the text between
/// matches; empty matches at the start or end, or right after a match,
/// do not split.
fn split(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    let flags = no_global(a.get(2), "regexp_split_to_array()")?;
    let hay = str_arg(&a[0]);
    let pattern = compiled(str_arg(&a[1]), flags)?;
    let mut parts = Vec::new();
    let mut copied = 0;
    for m in pattern.find_all(hay, 0) {
        let degenerate =
            m.start == m.end && (m.start == 0 || m.start == hay.len() || m.start == copied);
        if degenerate {
            continue;
        }
        parts.push(Datum::text(&hay[copied..m.start]));
        copied = m.end;
    }
    parts.push(Datum::text(&hay[copied..]));
    env.memory.check(parts.len() * 32)?;
    Ok(Datum::array(parts))
}

/// `substring(string from pattern)`: the first subexpression's text when
/// the pattern has one, else the whole match.
fn substring_regex(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    first_group_or_match(str_arg(&a[0]), str_arg(&a[1]))
}

/// The text of the first subexpression of `pattern`'s first match in
/// `hay` when it has one, else of the whole match (NULL: no match).
fn first_group_or_match(hay: &str, pattern: &str) -> Result<Datum, SqlError> {
    let pattern = compiled(pattern, Flags::default())?;
    Ok(match pattern.find_at(hay, 0) {
        None => Datum::Null,
        Some(m) if m.groups.is_empty() => Datum::text(&hay[m.start..m.end]),
        Some(m) => m.groups[0].map_or(Datum::Null, |(s, e)| Datum::text(&hay[s..e])),
    })
}
