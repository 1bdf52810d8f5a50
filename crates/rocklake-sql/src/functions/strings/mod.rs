//! String functions (PostgreSQL's "String Functions and Operators" table):
//! lengths, case, padding, searching, splitting, `concat`, `format`
//! ([`mod@format`]), regular expressions ([`regex`]) and the binary string
//! functions ([`bytes`]). Text is compared and cased as in PostgreSQL's
//! `C` locale (what `lc_ctype` says): only ASCII letters have a case.

mod bytes;
mod format;
pub(crate) mod regex;

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::text::format_text;
use rocklake_types::{SqlError, SqlState};

use super::def::types::*;
use super::def::Library;
use crate::plan::{CallEnv, CallInfo, Param, ScalarFn};

/// The hidden name of `string_to_array` behind the set-returning
/// `string_to_table` (a name no query can spell unquoted).
pub(crate) const STRING_TO_TABLE_ARRAY: &str = "string_to_table (as array)";

/// Registers the string functions.
pub(super) fn register(lib: &mut Library) {
    for name in ["length", "char_length", "character_length"] {
        lib.function(name, [TEXT], INT4, |a, _, _| {
            Ok(Datum::Int4(str_arg(&a[0]).chars().count() as i32))
        });
    }
    lib.function("octet_length", [TEXT], INT4, |a, _, _| {
        Ok(Datum::Int4(str_arg(&a[0]).len() as i32))
    });
    lib.function("bit_length", [TEXT], INT4, |a, _, _| {
        Ok(Datum::Int4(str_arg(&a[0]).len() as i32 * 8))
    });
    lib.function("lower", [TEXT], TEXT, |a, _, _| {
        Ok(Datum::text(str_arg(&a[0]).to_ascii_lowercase()))
    });
    lib.function("upper", [TEXT], TEXT, |a, _, _| {
        Ok(Datum::text(str_arg(&a[0]).to_ascii_uppercase()))
    });
    lib.function("initcap", [TEXT], TEXT, initcap);
    lib.function("concat", [Param::Any; 0], TEXT, concat)
        .variadic(Param::Any)
        .not_strict();
    lib.function("concat_ws", [TEXT], TEXT, concat_ws)
        .variadic(Param::Any)
        .not_strict();
    lib.function("left", [TEXT, INT4], TEXT, left);
    lib.function("right", [TEXT, INT4], TEXT, right);
    lib.function("lpad", [TEXT, INT4, TEXT], TEXT, lpad)
        .defaults(vec![Datum::text(" ")]);
    lib.function("rpad", [TEXT, INT4, TEXT], TEXT, rpad)
        .defaults(vec![Datum::text(" ")]);
    lib.function("repeat", [TEXT, INT4], TEXT, repeat);
    lib.function("reverse", [TEXT], TEXT, |a, _, _| {
        Ok(Datum::text(
            str_arg(&a[0]).chars().rev().collect::<String>(),
        ))
    });
    lib.function("translate", [TEXT, TEXT, TEXT], TEXT, translate);
    lib.function("strpos", [TEXT, TEXT], INT4, strpos);
    for name in ["substr", "substring"] {
        lib.function(name, [TEXT, INT4, INT4], TEXT, substring)
            .optional(1);
    }
    lib.function("overlay", [TEXT, TEXT, INT4, INT4], TEXT, overlay)
        .optional(1);
    lib.function("split_part", [TEXT, TEXT, INT4], TEXT, split_part);
    lib.function(
        "string_to_array",
        [TEXT, TEXT, TEXT],
        PgType::array_of(TEXT),
        string_to_array,
    )
    .optional(1)
    .not_strict();
    lib.function(
        STRING_TO_TABLE_ARRAY,
        [TEXT, TEXT, TEXT],
        PgType::array_of(TEXT),
        string_to_array,
    )
    .optional(1)
    .not_strict();
    let trims: [(&str, ScalarFn); 3] = [("btrim", btrim), ("ltrim", ltrim), ("rtrim", rtrim)];
    for (name, eval) in trims {
        lib.function(name, [TEXT, TEXT], TEXT, eval)
            .defaults(vec![Datum::text(" ")]);
    }
    lib.function("replace", [TEXT, TEXT, TEXT], TEXT, replace);
    lib.function("starts_with", [TEXT, TEXT], BOOL, starts_with);
    lib.infix("^@", TEXT, TEXT, BOOL, starts_with);
    lib.function("chr", [INT4], TEXT, chr);
    lib.function("ascii", [TEXT], INT4, |a, _, _| {
        Ok(Datum::Int4(
            str_arg(&a[0]).chars().next().map_or(0, |c| c as i32),
        ))
    });
    lib.function("to_hex", [INT4], TEXT, |a, _, _| {
        Ok(Datum::text(format!(
            "{:x}",
            a[0].as_i64().unwrap_or(0) as i32
        )))
    });
    lib.function("to_hex", [INT8], TEXT, |a, _, _| {
        Ok(Datum::text(format!("{:x}", a[0].as_i64().unwrap_or(0))))
    });
    lib.function("quote_ident", [TEXT], TEXT, |a, _, _| {
        Ok(Datum::text(crate::ident::quote_ident(str_arg(&a[0]))))
    });
    lib.function("quote_literal", [TEXT], TEXT, |a, _, _| {
        Ok(Datum::text(crate::ident::quote_literal(str_arg(&a[0]))))
    });
    lib.function("quote_literal", [Param::AnyElement], TEXT, quote_any);
    lib.function("quote_nullable", [TEXT], TEXT, |a, _, _| {
        Ok(Datum::text(match a[0].as_str() {
            Some(s) => crate::ident::quote_literal(s),
            None => "NULL".to_string(),
        }))
    })
    .not_strict();
    lib.function("quote_nullable", [Param::AnyElement], TEXT, |a, i, e| {
        if a[0].is_null() {
            return Ok(Datum::text("NULL"));
        }
        quote_any(a, i, e)
    })
    .not_strict();
    format::register(lib);
    regex::register(lib);
    bytes::register(lib);
}

/// A text argument (strict functions never see NULL).
pub(super) fn str_arg(d: &Datum) -> &str {
    d.as_str().unwrap_or_default()
}

/// An `int4` argument.
pub(super) fn int_arg(d: &Datum) -> i64 {
    d.as_i64().unwrap_or(0)
}

/// PostgreSQL's text output of any value (`NULL` for NULL).
pub(super) fn output(d: &Datum) -> Option<String> {
    format_text(d)
}

/// Fails with PostgreSQL's error when a result of `bytes` would exceed
/// what a value may hold (1 GB), else checks the statement's memory.
pub(super) fn check_length(bytes: u64, env: &CallEnv) -> Result<(), SqlError> {
    if bytes >= 1 << 30 {
        return Err(SqlError::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            "requested length too large",
        ));
    }
    env.memory.check(bytes as usize)
}

fn initcap(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let mut out = String::new();
    let mut after_alnum = false;
    for c in str_arg(&a[0]).chars() {
        out.push(if after_alnum {
            c.to_ascii_lowercase()
        } else {
            c.to_ascii_uppercase()
        });
        after_alnum = c.is_ascii_alphanumeric();
    }
    Ok(Datum::text(out))
}

fn concat(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::text(a.iter().filter_map(output).collect::<String>()))
}

fn concat_ws(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let Some(separator) = a[0].as_str() else {
        return Ok(Datum::Null);
    };
    let parts: Vec<String> = a[1..].iter().filter_map(output).collect();
    Ok(Datum::text(parts.join(separator)))
}

/// The first `n` characters (all but the last `-n` when negative).
fn left(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let s = str_arg(&a[0]);
    let chars = s.chars().count() as i64;
    let n = int_arg(&a[1]);
    let take = if n >= 0 { n } else { (chars + n).max(0) };
    Ok(Datum::text(
        s.chars().take(take as usize).collect::<String>(),
    ))
}

/// The last `n` characters (all but the first `-n` when negative).
fn right(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let s = str_arg(&a[0]);
    let chars = s.chars().count() as i64;
    let n = int_arg(&a[1]);
    let skip = if n >= 0 {
        (chars - n).max(0)
    } else {
        (-n).min(chars)
    };
    Ok(Datum::text(
        s.chars().skip(skip as usize).collect::<String>(),
    ))
}

fn pad(a: &[Datum], env: &CallEnv, at_left: bool) -> Result<Datum, SqlError> {
    let s = str_arg(&a[0]);
    let length = int_arg(&a[1]).max(0) as usize;
    let fill: Vec<char> = str_arg(&a[2]).chars().collect();
    check_length(length as u64 * 4, env)?;
    let chars: Vec<char> = s.chars().collect();
    if chars.len() >= length || fill.is_empty() {
        return Ok(Datum::text(
            chars[..chars.len().min(length)].iter().collect::<String>(),
        ));
    }
    let padding: String = fill.iter().cycle().take(length - chars.len()).collect();
    Ok(Datum::text(if at_left {
        padding + s
    } else {
        s.to_string() + &padding
    }))
}

fn lpad(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    pad(a, env, true)
}

fn rpad(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    pad(a, env, false)
}

fn repeat(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    let s = str_arg(&a[0]);
    let n = int_arg(&a[1]).max(0) as u64;
    check_length(n.saturating_mul(s.len() as u64), env)?;
    Ok(Datum::text(s.repeat(n as usize)))
}

fn translate(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let from: Vec<char> = str_arg(&a[1]).chars().collect();
    let to: Vec<char> = str_arg(&a[2]).chars().collect();
    let out = str_arg(&a[0])
        .chars()
        .filter_map(|c| match from.iter().position(|f| *f == c) {
            Some(i) => to.get(i).copied(),
            None => Some(c),
        })
        .collect::<String>();
    Ok(Datum::text(out))
}

/// The character position of `needle` in `haystack` from 1 (0: absent).
pub(super) fn char_position(haystack: &str, needle: &str) -> i32 {
    match haystack.find(needle) {
        Some(byte) => haystack[..byte].chars().count() as i32 + 1,
        None => 0,
    }
}

fn strpos(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Int4(char_position(str_arg(&a[0]), str_arg(&a[1]))))
}

/// The characters from `start` (from 1), `count` of them if given, as
/// PostgreSQL's `substring(text from start for count)`.
pub(super) fn substring_chars(s: &str, start: i64, count: Option<i64>) -> Result<String, SqlError> {
    let end = match count {
        Some(n) if n < 0 => {
            return Err(SqlError::new(
                SqlState::SUBSTRING_ERROR,
                "negative substring length not allowed",
            ))
        }
        Some(n) => start.saturating_add(n),
        None => i64::MAX,
    };
    let from = (start.max(1) - 1) as usize;
    let to = end.max(1) - 1;
    if (to as u64) <= from as u64 {
        return Ok(String::new());
    }
    Ok(s.chars().skip(from).take((to as usize) - from).collect())
}

fn substring(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let count = a.get(2).map(int_arg);
    substring_chars(str_arg(&a[0]), int_arg(&a[1]), count).map(Datum::text)
}

/// `overlay(string placing replacement from start [for count])`.
fn overlay(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (s, replacement) = (str_arg(&a[0]), str_arg(&a[1]));
    let start = int_arg(&a[2]);
    let count = a.get(3).map_or(replacement.chars().count() as i64, int_arg);
    let head = substring_chars(s, 1, Some(start - 1))?;
    let tail = substring_chars(s, start.saturating_add(count), None)?;
    Ok(Datum::text(head + replacement + &tail))
}

fn split_part(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let (s, delimiter, n) = (str_arg(&a[0]), str_arg(&a[1]), int_arg(&a[2]));
    if n == 0 {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "field position must not be zero",
        ));
    }
    let fields: Vec<&str> = if s.is_empty() {
        Vec::new()
    } else if delimiter.is_empty() {
        vec![s]
    } else {
        s.split(delimiter).collect()
    };
    let index = if n > 0 {
        n - 1
    } else {
        fields.len() as i64 + n
    };
    Ok(Datum::text(
        usize::try_from(index)
            .ok()
            .and_then(|i| fields.get(i))
            .copied()
            .unwrap_or_default(),
    ))
}

/// `string_to_array(string, delimiter [, null_string])`: a NULL delimiter
/// splits into characters, an empty one keeps the string whole.
fn string_to_array(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let Some(s) = a[0].as_str() else {
        return Ok(Datum::Null);
    };
    let null_string = a.get(2).and_then(Datum::as_str);
    let fields: Vec<String> = if s.is_empty() {
        Vec::new()
    } else {
        match a[1].as_str() {
            None => s.chars().map(String::from).collect(),
            Some("") => vec![s.to_string()],
            Some(delimiter) => s.split(delimiter).map(str::to_string).collect(),
        }
    };
    Ok(Datum::array(
        fields
            .into_iter()
            .map(|f| match null_string {
                Some(null) if f == null => Datum::Null,
                _ => Datum::text(f),
            })
            .collect::<Vec<_>>(),
    ))
}

fn trim(a: &[Datum], leading: bool, trailing: bool) -> Datum {
    let set: Vec<char> = str_arg(&a[1]).chars().collect();
    let mut s = str_arg(&a[0]);
    if leading {
        s = s.trim_start_matches(|c| set.contains(&c));
    }
    if trailing {
        s = s.trim_end_matches(|c| set.contains(&c));
    }
    Datum::text(s)
}

fn btrim(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(trim(a, true, true))
}

fn ltrim(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(trim(a, true, false))
}

fn rtrim(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(trim(a, false, true))
}

fn replace(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    let (s, from, to) = (str_arg(&a[0]), str_arg(&a[1]), str_arg(&a[2]));
    if from.is_empty() {
        return Ok(Datum::text(s));
    }
    let count = s.matches(from).count() as u64;
    check_length(
        (s.len() as u64).saturating_add(count.saturating_mul(to.len() as u64)),
        env,
    )?;
    Ok(Datum::text(s.replace(from, to)))
}

fn starts_with(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::Bool(str_arg(&a[0]).starts_with(str_arg(&a[1]))))
}

/// `chr(code)`: the character of that code point.
fn chr(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let limit = |message: String| SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, message);
    let Ok(code) = u32::try_from(int_arg(&a[0])) else {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "character number must be positive",
        ));
    };
    if code == 0 {
        return Err(limit("null character not permitted".into()));
    }
    if code > 0x10FFFF {
        return Err(limit(format!(
            "requested character too large for encoding: {code}"
        )));
    }
    match char::from_u32(code) {
        Some(c) => Ok(Datum::text(c.to_string())),
        None => Err(limit(format!(
            "requested character not valid for encoding: {code}"
        ))),
    }
}

/// `quote_literal(anyelement)`: the value's text, quoted.
fn quote_any(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    Ok(Datum::text(crate::ident::quote_literal(
        &output(&a[0]).unwrap_or_default(),
    )))
}
