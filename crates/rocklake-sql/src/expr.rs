//! Evaluation of bound expressions with PostgreSQL's three-valued logic, and
//! runtime casts between types.

use std::borrow::Cow;
use std::cmp::Ordering;

use rocklake_codec::datum::{Datum, PgType};

use crate::error::{codes, SqlError};
use crate::numeric;
use crate::plan::{BExpr, CmpOp, Func, SubPlan};
use crate::select::{run_subquery, ExecCtx};
use crate::value::{compare, datum_to_text, numeric_text, parse_text, to_f64, type_display};

/// Text form used by casts to text and by `||` (booleans become `true`/`false`).
pub fn text_of(d: &Datum) -> Option<String> {
    match d {
        Datum::Bool(b) => Some(if *b { "true" } else { "false" }.to_string()),
        other => datum_to_text(other),
    }
}

fn range_err(t: &PgType) -> SqlError {
    SqlError::new(
        codes::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("{} out of range", type_display(t)),
    )
}

fn int_to(v: i64, to: &PgType) -> Result<Datum, SqlError> {
    Ok(match to {
        PgType::Int2 => Datum::Int2(i16::try_from(v).map_err(|_| range_err(to))?),
        PgType::Int4 => Datum::Int4(i32::try_from(v).map_err(|_| range_err(to))?),
        PgType::Int8 => Datum::Int8(v),
        PgType::Oid | PgType::RegClass => Datum::Oid(u32::try_from(v).map_err(|_| range_err(to))?),
        PgType::Float4 => Datum::Float4(v as f32),
        PgType::Float8 => Datum::Float8(v as f64),
        PgType::Numeric(tm) => Datum::Numeric(numeric::apply_typmod(&v.to_string(), *tm)?),
        PgType::Bool => Datum::Bool(v != 0),
        _ => return parse_text(&v.to_string(), to),
    })
}

/// Casts a datum to `to`, as `CAST(d AS to)` would.
pub fn cast_datum(d: Datum, to: &PgType) -> Result<Datum, SqlError> {
    use Datum as D;
    match (&d, to) {
        (D::Null, _) => Ok(D::Null),
        (_, PgType::Text | PgType::Varchar | PgType::Name) => Ok(match &d {
            D::Text(_) => d.clone(),
            _ => D::text(text_of(&d).unwrap_or_default()),
        }),
        (_, PgType::Char) => Ok(D::text(
            text_of(&d)
                .unwrap_or_default()
                .chars()
                .take(1)
                .collect::<String>(),
        )),
        (D::Text(s), _) => parse_text(s, to),
        (D::Int2(_) | D::Int4(_) | D::Int8(_) | D::Oid(_), _) => {
            int_to(d.as_i64().unwrap_or(0), to)
        }
        (D::Float4(_) | D::Float8(_), _) => {
            let v = to_f64(&d).unwrap_or(0.0);
            match to {
                PgType::Float4 => Ok(D::Float4(v as f32)),
                PgType::Float8 => Ok(D::Float8(v)),
                PgType::Numeric(tm) => {
                    let n = numeric::from_f64(v).ok_or_else(|| {
                        SqlError::unsupported("cannot convert infinity to numeric")
                    })?;
                    Ok(D::Numeric(numeric::apply_typmod(&n, *tm)?))
                }
                PgType::Int2 | PgType::Int4 | PgType::Int8 => {
                    let r = v.round_ties_even();
                    if !r.is_finite() || r < i64::MIN as f64 || r >= i64::MAX as f64 {
                        return Err(range_err(to));
                    }
                    int_to(r as i64, to)
                }
                _ => parse_text(&datum_to_text(&d).unwrap_or_default(), to),
            }
        }
        (D::Numeric(s), _) => match to {
            PgType::Numeric(tm) => Ok(D::Numeric(numeric::apply_typmod(s, *tm)?)),
            PgType::Float4 => Ok(D::Float4(to_f64(&d).unwrap_or(f64::NAN) as f32)),
            PgType::Float8 => Ok(D::Float8(to_f64(&d).unwrap_or(f64::NAN))),
            PgType::Int2 | PgType::Int4 | PgType::Int8 => {
                int_to(numeric::to_i64_rounded(s).ok_or_else(|| range_err(to))?, to)
            }
            _ => parse_text(s, to),
        },
        (D::TimestampTz(v) | D::Timestamp(v), PgType::TimestampTz) => Ok(D::TimestampTz(*v)),
        (D::TimestampTz(v) | D::Timestamp(v), PgType::Timestamp) => Ok(D::Timestamp(*v)),
        (D::TimestampTz(v) | D::Timestamp(v), PgType::Date) => {
            Ok(D::Date(v.div_euclid(86_400_000_000) as i32))
        }
        (D::Date(v), PgType::Timestamp) => Ok(D::Timestamp(i64::from(*v) * 86_400_000_000)),
        (D::Date(v), PgType::TimestampTz) => Ok(D::TimestampTz(i64::from(*v) * 86_400_000_000)),
        (D::Bool(b), PgType::Int4) => Ok(D::Int4(i32::from(*b))),
        _ => {
            let same = matches!(
                (&d, to),
                (D::Bool(_), PgType::Bool)
                    | (D::Bytea(_), PgType::Bytea)
                    | (D::Uuid(_), PgType::Uuid)
                    | (D::Date(_), PgType::Date)
                    | (D::Time(_), PgType::Time)
                    | (D::TimeTz { .. }, PgType::TimeTz)
                    | (D::Interval { .. }, PgType::Interval)
                    | (D::Tid { .. }, PgType::Tid)
                    | (D::Int2Array(_), PgType::Int2Array)
            );
            if same {
                return Ok(d);
            }
            Err(SqlError::new(
                codes::FEATURE_NOT_SUPPORTED,
                format!(
                    "cannot cast value {} to type {}",
                    text_of(&d).unwrap_or_default(),
                    type_display(to)
                ),
            ))
        }
    }
}

fn truth(d: &Datum) -> Option<bool> {
    match d {
        Datum::Bool(b) => Some(*b),
        _ => None,
    }
}

fn bool_datum(b: Option<bool>) -> Datum {
    b.map(Datum::Bool).unwrap_or(Datum::Null)
}

/// Evaluates `e` like [`eval`], borrowing instead of copying when it is a
/// column or a constant (comparisons and null tests only look at the value).
fn eval_ref<'a>(
    e: &'a BExpr,
    ctx: &ExecCtx,
    env: &[&'a [Datum]],
) -> Result<Cow<'a, Datum>, SqlError> {
    Ok(match e {
        BExpr::Const(d) => Cow::Borrowed(d),
        BExpr::Col { up, idx } => Cow::Borrowed(
            env.get(env.len().wrapping_sub(1 + up))
                .ok_or_else(|| SqlError::internal("bad column level"))?
                .get(*idx)
                .ok_or_else(|| SqlError::internal("bad column index"))?,
        ),
        other => Cow::Owned(eval(other, ctx, env)?),
    })
}

/// Evaluates a condition with three-valued logic: `Some(true)`,
/// `Some(false)`, or `None` for NULL. Connectives, comparisons and null tests
/// are evaluated here directly, reading their operands in place, which is
/// what a filter over many rows spends its time on.
pub fn eval_pred(e: &BExpr, ctx: &ExecCtx, env: &[&[Datum]]) -> Result<Option<bool>, SqlError> {
    Ok(match e {
        BExpr::And(l, r) => {
            let a = eval_pred(l, ctx, env)?;
            if a == Some(false) {
                return Ok(Some(false));
            }
            match (a, eval_pred(r, ctx, env)?) {
                (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            }
        }
        BExpr::Or(l, r) => {
            let a = eval_pred(l, ctx, env)?;
            if a == Some(true) {
                return Ok(Some(true));
            }
            match (a, eval_pred(r, ctx, env)?) {
                (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            }
        }
        BExpr::Not(inner) => eval_pred(inner, ctx, env)?.map(|b| !b),
        BExpr::Cmp(op, l, r) => {
            let (a, b) = (eval_ref(l, ctx, env)?, eval_ref(r, ctx, env)?);
            if a.is_null() || b.is_null() {
                None
            } else {
                Some(cmp_holds(*op, compare(&a, &b)))
            }
        }
        BExpr::IsNull(inner, neg) => Some(eval_ref(inner, ctx, env)?.is_null() != *neg),
        other => truth(&eval(other, ctx, env)?),
    })
}

/// Evaluates `e` with `env` = enclosing rows, the current row last.
pub fn eval(e: &BExpr, ctx: &ExecCtx, env: &[&[Datum]]) -> Result<Datum, SqlError> {
    Ok(match e {
        BExpr::Const(_) | BExpr::Col { .. } => eval_ref(e, ctx, env)?.into_owned(),
        BExpr::Cast(inner, to) => cast_datum(eval(inner, ctx, env)?, to)?,
        BExpr::Neg(inner) => negate(eval(inner, ctx, env)?)?,
        BExpr::Arith(op, l, r) => arith(*op, &eval(l, ctx, env)?, &eval(r, ctx, env)?)?,
        BExpr::Concat(l, r) => match (text_of(&eval(l, ctx, env)?), text_of(&eval(r, ctx, env)?)) {
            (Some(a), Some(b)) => Datum::text(a + &b),
            _ => Datum::Null,
        },
        BExpr::Not(_) | BExpr::Cmp(..) | BExpr::And(..) | BExpr::Or(..) | BExpr::IsNull(..) => {
            bool_datum(eval_pred(e, ctx, env)?)
        }
        BExpr::IsDistinct(l, r, not_distinct) => {
            let (a, b) = (eval_ref(l, ctx, env)?, eval_ref(r, ctx, env)?);
            let same = match (a.is_null(), b.is_null()) {
                (true, true) => true,
                (false, false) => compare(&a, &b) == Ordering::Equal,
                _ => false,
            };
            Datum::Bool(same == *not_distinct)
        }
        BExpr::IsBool(inner, target, neg) => {
            Datum::Bool((truth(&eval(inner, ctx, env)?) == Some(*target)) != *neg)
        }
        BExpr::InList(x, list, neg) => {
            let v = eval_ref(x, ctx, env)?;
            let mut items = Vec::with_capacity(list.len());
            for item in list {
                items.push(eval(item, ctx, env)?);
            }
            in_values(&v, items.iter(), *neg)
        }
        BExpr::InSub(x, sub, neg) => {
            let v = eval(x, ctx, env)?;
            let rows = run_subquery(sub, ctx, env)?;
            in_values(&v, rows.iter().map(|r| &r[0]), *neg)
        }
        BExpr::Exists(sub, neg) => Datum::Bool(run_subquery(sub, ctx, env)?.is_empty() == *neg),
        BExpr::Scalar(sub) => scalar(sub, ctx, env)?,
        BExpr::Like(x, pat, neg, ci) => match (eval(x, ctx, env)?, eval(pat, ctx, env)?) {
            (Datum::Null, _) | (_, Datum::Null) => Datum::Null,
            (a, b) => {
                let (mut s, mut p) = (
                    text_of(&a).unwrap_or_default(),
                    text_of(&b).unwrap_or_default(),
                );
                if *ci {
                    s = s.to_lowercase();
                    p = p.to_lowercase();
                }
                Datum::Bool(like(&s, &p) != *neg)
            }
        },
        BExpr::Case {
            operand,
            whens,
            otherwise,
        } => {
            let base = match operand {
                Some(o) => Some(eval(o, ctx, env)?),
                None => None,
            };
            for (cond, result) in whens {
                let c = eval(cond, ctx, env)?;
                let hit = match &base {
                    Some(b) => !b.is_null() && !c.is_null() && compare(b, &c) == Ordering::Equal,
                    None => truth(&c) == Some(true),
                };
                if hit {
                    return eval(result, ctx, env);
                }
            }
            match otherwise {
                Some(o) => eval(o, ctx, env)?,
                None => Datum::Null,
            }
        }
        BExpr::Func(f, args) => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(eval(a, ctx, env)?);
            }
            call(*f, vals, ctx)?
        }
    })
}

fn scalar(sub: &SubPlan, ctx: &ExecCtx, env: &[&[Datum]]) -> Result<Datum, SqlError> {
    let rows = run_subquery(sub, ctx, env)?;
    match rows.len() {
        0 => Ok(Datum::Null),
        1 => Ok(rows[0][0].clone()),
        _ => Err(SqlError::new(
            codes::CARDINALITY_VIOLATION,
            "more than one row returned by a subquery used as an expression",
        )),
    }
}

fn in_values<'a>(v: &Datum, items: impl Iterator<Item = &'a Datum>, neg: bool) -> Datum {
    if v.is_null() {
        return Datum::Null;
    }
    let mut saw_null = false;
    for item in items {
        if item.is_null() {
            saw_null = true;
        } else if compare(v, item) == Ordering::Equal {
            return Datum::Bool(!neg);
        }
    }
    if saw_null {
        Datum::Null
    } else {
        Datum::Bool(neg)
    }
}

/// Whether `ord` satisfies the comparison operator.
pub fn cmp_holds(op: CmpOp, ord: Ordering) -> bool {
    match op {
        CmpOp::Eq => ord == Ordering::Equal,
        CmpOp::Ne => ord != Ordering::Equal,
        CmpOp::Lt => ord == Ordering::Less,
        CmpOp::Le => ord != Ordering::Greater,
        CmpOp::Gt => ord == Ordering::Greater,
        CmpOp::Ge => ord != Ordering::Less,
    }
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

fn negate(d: Datum) -> Result<Datum, SqlError> {
    Ok(match d {
        Datum::Int2(v) => Datum::Int2(v.checked_neg().ok_or_else(|| range_err(&PgType::Int2))?),
        Datum::Int4(v) => Datum::Int4(v.checked_neg().ok_or_else(|| range_err(&PgType::Int4))?),
        Datum::Int8(v) => Datum::Int8(v.checked_neg().ok_or_else(|| range_err(&PgType::Int8))?),
        Datum::Float4(v) => Datum::Float4(-v),
        Datum::Float8(v) => Datum::Float8(-v),
        Datum::Numeric(s) => Datum::Numeric(numeric::arith("0", &s, '-')?),
        Datum::Interval {
            months,
            days,
            micros,
        } => Datum::Interval {
            months: -months,
            days: -days,
            micros: -micros,
        },
        Datum::Null => Datum::Null,
        other => {
            return Err(SqlError::new(
                codes::UNDEFINED_FUNCTION,
                format!("operator does not exist: - {other:?}"),
            ))
        }
    })
}

fn int_width(d: &Datum) -> Option<u8> {
    match d {
        Datum::Int2(_) => Some(2),
        Datum::Int4(_) => Some(4),
        Datum::Int8(_) => Some(8),
        _ => None,
    }
}

/// Binary arithmetic with PostgreSQL's overflow and division-by-zero errors.
pub fn arith(op: char, a: &Datum, b: &Datum) -> Result<Datum, SqlError> {
    if a.is_null() || b.is_null() {
        return Ok(Datum::Null);
    }
    let div0 = || SqlError::new(codes::DIVISION_BY_ZERO, "division by zero");
    if let (Some(wa), Some(wb)) = (int_width(a), int_width(b)) {
        let (x, y) = (a.as_i64().unwrap_or(0), b.as_i64().unwrap_or(0));
        let ty = match wa.max(wb) {
            2 => PgType::Int2,
            4 => PgType::Int4,
            _ => PgType::Int8,
        };
        if (op == '/' || op == '%') && y == 0 {
            return Err(div0());
        }
        let r = match op {
            '+' => x.checked_add(y),
            '-' => x.checked_sub(y),
            '*' => x.checked_mul(y),
            '/' => x.checked_div(y),
            '%' => x.checked_rem(y),
            _ => None,
        }
        .ok_or_else(|| range_err(&ty))?;
        return int_to(r, &ty).map_err(|_| range_err(&ty));
    }
    let is_float = |d: &Datum| matches!(d, Datum::Float4(_) | Datum::Float8(_));
    if is_float(a) || is_float(b) {
        let (x, y) = match (to_f64(a), to_f64(b)) {
            (Some(x), Some(y)) => (x, y),
            _ => return Err(no_operator(op, a, b)),
        };
        if (op == '/' || op == '%') && y == 0.0 {
            return Err(div0());
        }
        let r = match op {
            '+' => x + y,
            '-' => x - y,
            '*' => x * y,
            '/' => x / y,
            _ => x % y,
        };
        if r.is_infinite() && x.is_finite() && y.is_finite() {
            return Err(SqlError::new(
                codes::NUMERIC_VALUE_OUT_OF_RANGE,
                "value out of range: overflow",
            ));
        }
        let both4 = matches!(a, Datum::Float4(_)) && matches!(b, Datum::Float4(_));
        return Ok(if both4 {
            Datum::Float4(r as f32)
        } else {
            Datum::Float8(r)
        });
    }
    match (numeric_text(a), numeric_text(b)) {
        (Some(x), Some(y)) => Ok(Datum::Numeric(numeric::arith(&x, &y, op)?)),
        _ => Err(no_operator(op, a, b)),
    }
}

fn no_operator(op: char, a: &Datum, b: &Datum) -> SqlError {
    SqlError::new(
        codes::UNDEFINED_FUNCTION,
        format!(
            "operator does not exist for values {} {op} {}",
            text_of(a).unwrap_or_default(),
            text_of(b).unwrap_or_default()
        ),
    )
}

fn call(f: Func, vals: Vec<Datum>, ctx: &ExecCtx) -> Result<Datum, SqlError> {
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
                        "22011",
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_and_arithmetic() {
        assert_eq!(
            cast_datum(Datum::Text("t".into()), &PgType::Bool).unwrap(),
            Datum::Bool(true)
        );
        assert_eq!(
            cast_datum(Datum::Bool(true), &PgType::Varchar).unwrap(),
            Datum::Text("true".into())
        );
        assert_eq!(
            cast_datum(Datum::Int8(70000), &PgType::Int2)
                .unwrap_err()
                .code,
            "22003"
        );
        assert_eq!(
            cast_datum(Datum::Numeric("2.5".into()), &PgType::Int4).unwrap(),
            Datum::Int4(3)
        );
        assert_eq!(
            arith('+', &Datum::Int4(i32::MAX), &Datum::Int4(1))
                .unwrap_err()
                .code,
            "22003"
        );
        assert_eq!(
            arith('/', &Datum::Int8(1), &Datum::Int8(0))
                .unwrap_err()
                .code,
            "22012"
        );
        assert_eq!(
            arith('*', &Datum::Int2(3), &Datum::Int8(4)).unwrap(),
            Datum::Int8(12)
        );
        assert!(like("rds_x", "rds%"));
        assert!(!like("server_version", "rds%"));
        assert!(like("a_c", "a\\_c"));
    }
}
