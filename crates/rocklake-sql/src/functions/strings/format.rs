//! `format(formatstr, args...)`: PostgreSQL's `%[position$][-][width]type`
//! specifiers with types `s` (text), `I` (an identifier, quoted when
//! needed) and `L` (a literal, quoted; `NULL` unquoted), `%%` for `%`,
//! widths from `*` or `*n$` arguments.

use rocklake_types::datum::Datum;
use rocklake_types::{SqlError, SqlState};

use super::super::def::types::*;
use super::super::def::Library;
use super::{check_length, output};
use crate::plan::{CallEnv, CallInfo, Param};

/// Registers `format`.
pub(super) fn register(lib: &mut Library) {
    lib.function("format", [TEXT], TEXT, format)
        .variadic(Param::Any)
        .not_strict();
    lib.function("format", [TEXT], TEXT, format).not_strict();
}

fn invalid(message: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, message)
}

fn unterminated() -> SqlError {
    invalid("unterminated format() type specifier").with_hint("For a single \"%\" use \"%%\".")
}

/// Reads a decimal number at `chars[*i..]`, if one is there.
fn number(chars: &[char], i: &mut usize) -> Result<Option<i64>, SqlError> {
    let start = *i;
    let mut value: i64 = 0;
    while let Some(d) = chars.get(*i).and_then(|c| c.to_digit(10)) {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(d as i64))
            .filter(|v| *v <= i32::MAX as i64)
            .ok_or_else(|| invalid("number is out of range"))?;
        *i += 1;
    }
    Ok((*i > start).then_some(value))
}

/// A `position$` after a number just read at `chars[*i..]`.
fn argument_position(chars: &[char], i: &mut usize, n: i64) -> Result<usize, SqlError> {
    if chars.get(*i) != Some(&'$') {
        return Err(unterminated());
    }
    *i += 1;
    if n == 0 {
        return Err(invalid(
            "format specifies argument 0, but arguments are numbered from 1",
        ));
    }
    Ok(n as usize)
}

fn format(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    let Some(template) = a[0].as_str() else {
        return Ok(Datum::Null);
    };
    let args = &a[1..];
    let chars: Vec<char> = template.chars().collect();
    let mut out = String::new();
    let mut next_arg = 0usize;
    let mut i = 0;
    let take = |position: usize| -> Result<&Datum, SqlError> {
        args.get(position)
            .ok_or_else(|| invalid("too few arguments for format()"))
    };
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.get(i) == Some(&'%') {
            out.push('%');
            i += 1;
            continue;
        }
        if i >= chars.len() {
            return Err(unterminated());
        }
        // An explicit argument position, flags, a width.
        let mut position = None;
        let mut left_align = false;
        let mut width: Option<i64> = None;
        let mark = i;
        if let Some(n) = number(&chars, &mut i)? {
            if chars.get(i) == Some(&'$') {
                position = Some(argument_position(&chars, &mut i, n)?);
            } else {
                i = mark;
            }
        }
        while chars.get(i) == Some(&'-') {
            left_align = true;
            i += 1;
        }
        if chars.get(i) == Some(&'*') {
            i += 1;
            let width_arg = match number(&chars, &mut i)? {
                Some(n) => argument_position(&chars, &mut i, n)? - 1,
                None => {
                    next_arg += 1;
                    next_arg - 1
                }
            };
            next_arg = width_arg + 1;
            let w = take(width_arg)?;
            width = Some(match w {
                Datum::Null => 0,
                other => other
                    .as_i64()
                    .ok_or_else(|| invalid("width argument must be an integer"))?,
            });
        } else if let Some(n) = number(&chars, &mut i)? {
            width = Some(n);
        }
        let Some(&kind) = chars.get(i) else {
            return Err(unterminated());
        };
        i += 1;
        if !matches!(kind, 's' | 'I' | 'L') {
            return Err(
                invalid(format!("unrecognized format() type specifier \"{kind}\""))
                    .with_hint("For a single \"%\" use \"%%\"."),
            );
        }
        let index = match position {
            Some(p) => p - 1,
            None => next_arg,
        };
        next_arg = index + 1;
        let value = take(index)?;
        let text = match (kind, output(value)) {
            ('s', text) => text.unwrap_or_default(),
            ('I', Some(text)) => crate::ident::quote_ident(&text),
            ('I', None) => {
                return Err(SqlError::new(
                    SqlState::NULL_VALUE_NOT_ALLOWED,
                    "null values cannot be formatted as an SQL identifier",
                ))
            }
            (_, Some(text)) => crate::ident::quote_literal(&text),
            (_, None) => "NULL".to_string(),
        };
        let width = width.unwrap_or(0);
        let (width, left_align) = if width < 0 {
            (width.unsigned_abs() as usize, true)
        } else {
            (width as usize, left_align)
        };
        let length = text.chars().count();
        check_length((out.len() + text.len() + width) as u64, env)?;
        let padding = " ".repeat(width.saturating_sub(length));
        if left_align {
            out.push_str(&text);
            out.push_str(&padding);
        } else {
            out.push_str(&padding);
            out.push_str(&text);
        }
    }
    Ok(Datum::text(out))
}
