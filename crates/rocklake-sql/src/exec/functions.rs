//! Scalar functions evaluated per row, and `LIKE`.

use std::cmp::Ordering;

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::{SqlError, SqlState};

use crate::exec::cast::text_of;
use crate::exec::compare::compare;
use crate::exec::operators::negate;
use crate::exec::ExecCtx;
use crate::plan::Func;

pub(crate) fn call(f: Func, vals: Vec<Datum>, ctx: &ExecCtx) -> Result<Datum, SqlError> {
    let text = |i: usize| vals.get(i).and_then(text_of);
    let int = |i: usize| vals.get(i).and_then(|d| d.as_i64());
    if !matches!(
        f,
        Func::Coalesce | Func::Greatest | Func::Least | Func::Concat
    ) && vals.iter().any(|v| v.is_null())
    {
        return Ok(Datum::Null);
    }
    Ok(match f {
        Func::Coalesce => vals
            .into_iter()
            .find(|v| !v.is_null())
            .unwrap_or(Datum::Null),
        Func::Nullif => {
            if compare(&vals[0], &vals[1]) == Ordering::Equal {
                Datum::Null
            } else {
                vals[0].clone()
            }
        }
        Func::Greatest | Func::Least => {
            let want = if f == Func::Greatest {
                Ordering::Greater
            } else {
                Ordering::Less
            };
            let mut best: Option<Datum> = None;
            for v in vals.into_iter().filter(|v| !v.is_null()) {
                if best.as_ref().is_none_or(|b| compare(&v, b) == want) {
                    best = Some(v);
                }
            }
            best.unwrap_or(Datum::Null)
        }
        Func::Lower => Datum::text(text(0).unwrap_or_default().to_lowercase()),
        Func::Upper => Datum::text(text(0).unwrap_or_default().to_uppercase()),
        Func::Length => Datum::Int4(text(0).unwrap_or_default().chars().count() as i32),
        Func::Substr => {
            let s: Vec<char> = text(0).unwrap_or_default().chars().collect();
            let start = int(1).unwrap_or(1);
            let end = match int(2) {
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
            let to = (end.max(1) - 1).min(s.len() as i64) as usize;
            Datum::text(if from < to {
                s[from..to].iter().collect::<String>()
            } else {
                String::new()
            })
        }
        Func::Replace => {
            let (s, from, to) = (
                text(0).unwrap_or_default(),
                text(1).unwrap_or_default(),
                text(2).unwrap_or_default(),
            );
            Datum::text(if from.is_empty() {
                s
            } else {
                s.replace(&from, &to)
            })
        }
        Func::Concat => Datum::text(vals.iter().filter_map(text_of).collect::<String>()),
        Func::Abs => match &vals[0] {
            Datum::Numeric(s) => Datum::Numeric(s.trim_start_matches('-').to_string()),
            Datum::Float4(v) => Datum::Float4(v.abs()),
            Datum::Float8(v) => Datum::Float8(v.abs()),
            d if d.as_i64().is_some_and(|v| v < 0) => negate(d.clone())?,
            d => d.clone(),
        },
        Func::ToRegclass => match ctx.catalog.regclass(&text(0).unwrap_or_default()) {
            Some(oid) => Datum::Oid(oid),
            None => Datum::Null,
        },
        Func::TableIsVisible => match vals[0].as_i64().and_then(|v| u32::try_from(v).ok()) {
            Some(oid) => ctx
                .catalog
                .table_is_visible(oid)
                .map_or(Datum::Null, Datum::Bool),
            None => Datum::Null,
        },
        Func::ToRegtype => match text(0).as_deref().and_then(PgType::from_sql_name) {
            Some(t) => Datum::Oid(t.oid()),
            None => Datum::Null,
        },
        Func::RegtypeName => match &vals[0] {
            Datum::Oid(oid) => Datum::text(
                PgType::from_oid(*oid)
                    .map_or_else(|| oid.to_string(), |t| t.display_name().to_string()),
            ),
            _ => Datum::Null,
        },
    })
}
/// SQL LIKE with `%`, `_` and backslash escapes.
pub fn like(s: &str, p: &str) -> bool {
    let s: Vec<char> = s.chars().collect();
    let p: Vec<char> = p.chars().collect();
    fn go(s: &[char], p: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('%') => (0..=s.len()).any(|i| go(&s[i..], &p[1..])),
            Some('_') => !s.is_empty() && go(&s[1..], &p[1..]),
            Some('\\') if p.len() > 1 => s.first() == Some(&p[1]) && go(&s[1..], &p[2..]),
            Some(c) => s.first() == Some(c) && go(&s[1..], &p[1..]),
        }
    }
    go(&s, &p)
}
