//! Scalar functions evaluated per row, and `LIKE`.

use std::cmp::Ordering;

use rocklake_types::datum::Datum;
use rocklake_types::value::text::format_text;
use rocklake_types::{SqlError, SqlState};

use crate::catalog::Catalog;
use crate::exec::cast::text_of;
use crate::exec::compare::compare;
use crate::exec::context::ExecCtx;
use crate::plan::Func;

pub(crate) fn call(f: Func, vals: Vec<Datum>, ctx: &ExecCtx) -> Result<Datum, SqlError> {
    let text = |i: usize| vals.get(i).and_then(text_of);
    if !matches!(
        f,
        Func::Coalesce
            | Func::Row
            | Func::Greatest
            | Func::Least
            | Func::ArrayToString
            | Func::ArrayCat
            | Func::CurrentSetting
            | Func::ArrayAppend
            | Func::ArrayPrepend
    ) && vals.iter().any(|v| v.is_null())
    {
        return Ok(Datum::Null);
    }
    Ok(match f {
        Func::Row => Datum::Record(vals.into()),
        Func::RecordField(i) => match vals.into_iter().next() {
            Some(Datum::Record(fields)) => fields.get(i).cloned().unwrap_or(Datum::Null),
            _ => Datum::Null,
        },
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
        Func::ArrayCat | Func::ArrayAppend | Func::ArrayPrepend => {
            crate::exec::arrays::concatenate(f, vals)
        }
        Func::ToReg(kind) => match &vals[0] {
            Datum::Text(name) => ctx.catalog.reg_from_name(kind, name)?,
            other => match other.as_i64().and_then(|oid| u32::try_from(oid).ok()) {
                Some(oid) => ctx.catalog.reg_from_oid(kind, oid),
                None => return Err(SqlError::internal(format!("no oid in {other:?}"))),
            },
        },
        Func::DatabaseSize(scan) => {
            let database = &ctx.catalog.database;
            let named = match &vals[0] {
                Datum::Null => return Ok(Datum::Null),
                Datum::Oid(oid) => *oid == Catalog::database_oid(database),
                other => text_of(other).as_deref() == Some(database.as_str()),
            };
            if !named {
                let shown = text_of(&vals[0]).unwrap_or_default();
                return Err(SqlError::new(
                    SqlState::INVALID_CATALOG_NAME,
                    match &vals[0] {
                        Datum::Oid(oid) => format!("database with OID {oid} does not exist"),
                        _ => format!("database \"{shown}\" does not exist"),
                    },
                ));
            }
            ctx.scan_rows(scan)?
                .first()
                .and_then(|row| row.first().cloned())
                .unwrap_or(Datum::Null)
        }
        Func::RelationSize(scan) => match vals[0].as_i64().and_then(|v| u32::try_from(v).ok()) {
            Some(oid) => ctx
                .scan_rows(scan)?
                .iter()
                .find(|row| row.first() == Some(&Datum::Oid(oid)))
                .and_then(|row| row.get(1).cloned())
                .unwrap_or(Datum::Null),
            _ => Datum::Null,
        },
        Func::ArrayToString => match (&vals[0], text(1)) {
            (Datum::Array(items) | Datum::Vector(items), Some(delimiter)) => {
                let null_text = vals.get(2).and_then(format_text);
                Datum::text(
                    items
                        .iter()
                        .filter_map(|item| format_text(item).or_else(|| null_text.clone()))
                        .collect::<Vec<_>>()
                        .join(&delimiter),
                )
            }
            (Datum::Null, _) | (_, None) => Datum::Null,
            (other, _) => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function array_to_string({other:?}, text) does not exist"),
                ))
            }
        },
        Func::SizePretty => match vals[0].as_i64() {
            Some(bytes) => Datum::text(size_pretty(bytes)),
            None => Datum::Null,
        },
        Func::CurrentSetting => {
            let Some(name) = text(0) else {
                return Ok(Datum::Null);
            };
            match ctx.catalog.setting(&name) {
                Some(value) => Datum::text(value),
                None if matches!(vals.get(1), Some(Datum::Bool(true))) => Datum::Null,
                None => {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("unrecognized configuration parameter \"{name}\""),
                    ))
                }
            }
        }
        Func::SetConfig => {
            let (name, value) = (text(0).unwrap_or_default(), text(1).unwrap_or_default());
            // Custom settings (`prefix.name`) may be invented, as in PostgreSQL.
            if ctx.catalog.setting(&name).is_none() && !name.contains('.') {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("unrecognized configuration parameter \"{name}\""),
                ));
            }
            ctx.catalog
                .setting_changes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((name, value.clone()));
            Datum::text(value)
        }
        Func::Description => {
            let objoid = vals[0].as_i64().and_then(|v| u32::try_from(v).ok());
            let (class, subid) = match &vals[1] {
                Datum::Text(class) => (class.to_string(), 0),
                other => ("pg_class".to_string(), other.as_i64().unwrap_or(0) as i32),
            };
            objoid
                .and_then(|oid| ctx.catalog.description(oid, &class, subid))
                .map_or(Datum::Null, Datum::text)
        }
        Func::RelationIsPublishable => match vals[0].as_i64().and_then(|v| u32::try_from(v).ok()) {
            Some(oid) => ctx
                .catalog
                .relation_is_publishable(oid)
                .map_or(Datum::Null, Datum::Bool),
            None => Datum::Null,
        },
        Func::IndexDef | Func::ConstraintDef => {
            match vals[0].as_i64().and_then(|v| u32::try_from(v).ok()) {
                Some(oid) if f == Func::IndexDef => {
                    let column = vals.get(1).and_then(Datum::as_i64).unwrap_or(0);
                    let pretty = matches!(vals.get(2), Some(Datum::Bool(true)));
                    ctx.catalog
                        .index_definition(oid, column, pretty)
                        .map_or(Datum::Null, Datum::text)
                }
                Some(oid) => ctx
                    .catalog
                    .constraint_definition(oid)
                    .map_or(Datum::Null, Datum::text),
                None => Datum::Null,
            }
        }
    })
}

/// `pg_size_pretty`: PostgreSQL's units (bytes below 10 kB; then kB, MB,
/// GB, TB, PB, each used below 20 of the next, rounded half away from zero).
pub(crate) fn size_pretty(bytes: i64) -> String {
    // (unit, limit, half-rounded, bits)
    const UNITS: [(&str, i64, bool, u32); 6] = [
        ("bytes", 10 * 1024, false, 0),
        ("kB", 20 * 1024 - 1, true, 10),
        ("MB", 20 * 1024 - 1, true, 20),
        ("GB", 20 * 1024 - 1, true, 30),
        ("TB", 20 * 1024 - 1, true, 40),
        ("PB", 20 * 1024 - 1, true, 50),
    ];
    let half_rounded = |x: i64| (x + if x < 0 { -1 } else { 1 }) / 2;
    let mut size = bytes;
    for (i, (name, limit, round, bits)) in UNITS.iter().enumerate() {
        let next = UNITS.get(i + 1);
        if next.is_none() || size.unsigned_abs() < *limit as u64 {
            if *round {
                size = half_rounded(size);
            }
            return format!("{size} {name}");
        }
        let (_, _, next_round, next_bits) = next.expect("checked");
        let shift = next_bits - bits - u32::from(*next_round) + u32::from(*round);
        size /= 1i64 << shift;
    }
    unreachable!("the last unit always matches")
}

/// SQL LIKE with `%`, `_` and backslash escapes.
pub fn like(s: &str, p: &str, escape: Option<char>) -> bool {
    enum Token {
        AnyRun,
        AnyOne,
        Literal(char),
    }
    let mut tokens = Vec::new();
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        tokens.push(match c {
            c if Some(c) == escape => Token::Literal(chars.next().unwrap_or(c)),
            '%' => Token::AnyRun,
            '_' => Token::AnyOne,
            c => Token::Literal(c),
        });
    }
    let s: Vec<char> = s.chars().collect();
    // Greedy matching that backtracks only to the last `%`: O(len(s) * len(p))
    // at worst, whatever the pattern.
    let (mut si, mut ti) = (0, 0);
    let mut resume: Option<(usize, usize)> = None;
    while si < s.len() {
        match tokens.get(ti) {
            Some(Token::AnyRun) => {
                ti += 1;
                resume = Some((ti, si));
                continue;
            }
            Some(Token::AnyOne) => {
                si += 1;
                ti += 1;
                continue;
            }
            Some(Token::Literal(c)) if *c == s[si] => {
                si += 1;
                ti += 1;
                continue;
            }
            _ => {}
        }
        match resume {
            Some((after_run, from)) => {
                ti = after_run;
                si = from + 1;
                resume = Some((after_run, from + 1));
            }
            None => return false,
        }
    }
    tokens[ti..].iter().all(|t| matches!(t, Token::AnyRun))
}

#[cfg(test)]
mod like_tests {
    use super::like;

    #[test]
    fn like_patterns_match_as_postgresql_matches_them() {
        let backslash = Some('\\');
        for (s, p, escape, expected) in [
            ("abc", "a%", backslash, true),
            ("abc", "%c", backslash, true),
            ("abc", "_b_", backslash, true),
            ("abc", "a_", backslash, false),
            ("", "%", backslash, true),
            ("a%c", "a\\%c", backslash, true),
            ("abc", "a\\%c", backslash, false),
            ("pg_toast", "pg/_%", Some('/'), true),
            ("pgxtoast", "pg/_%", Some('/'), false),
            ("a\\b", "a\\b", None, true),
            ("mississippi", "%iss%ppi", backslash, true),
            ("mississippi", "%iss%ppx", backslash, false),
        ] {
            assert_eq!(like(s, p, escape), expected, "{s:?} LIKE {p:?}");
        }
    }

    #[test]
    fn pathological_patterns_finish_quickly() {
        let s = "a".repeat(5_000);
        let p = format!("{}b", "%a".repeat(2_000));
        assert!(!like(&s, &p, Some('\\')));
    }
}

#[cfg(test)]
mod size_tests {
    use super::size_pretty;

    /// Values checked against PostgreSQL 15's `pg_size_pretty`.
    #[test]
    fn sizes_print_as_postgresql_prints_them() {
        for (bytes, text) in [
            (10, "10 bytes"),
            (10_239, "10239 bytes"),
            (10_240, "10 kB"),
            (1_000_000, "977 kB"),
            (10_485_247, "10239 kB"),
            (10_485_248, "10 MB"),
            (1_000_000_000_000_000, "909 TB"),
            (-1_000_000, "-977 kB"),
            (i64::MAX, "8192 PB"),
        ] {
            assert_eq!(size_pretty(bytes), text, "{bytes}");
        }
    }
}
