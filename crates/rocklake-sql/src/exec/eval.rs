//! Evaluation of bound expressions with PostgreSQL's three-valued logic.

use std::borrow::Cow;
use std::cmp::Ordering;

use rocklake_types::datum::Datum;
use rocklake_types::{SqlError, SqlState};

use crate::exec::arrays::{any_all, subscript};
use crate::exec::cast::{cast_datum, text_of};
use crate::exec::compare::{cmp_holds, compare};
use crate::exec::context::{ExecCtx, Scope};
use crate::exec::functions::{call, like};
use crate::plan::{BExpr, CallEnv, SubPlan};
use rocklake_types::value::equality::hash_key;

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
fn eval_ref<'a>(e: &'a BExpr, ctx: &ExecCtx, scope: Scope<'a>) -> Result<Cow<'a, Datum>, SqlError> {
    Ok(match e {
        BExpr::Const(d) => Cow::Borrowed(d),
        BExpr::Col { up, idx } => Cow::Borrowed(scope.column(*up, *idx)?),
        other => Cow::Owned(eval(other, ctx, scope)?),
    })
}
/// Evaluates a condition with three-valued logic: `Some(true)`,
/// `Some(false)`, or `None` for NULL. Connectives, comparisons and null tests
/// are evaluated here directly, reading their operands in place, which is
/// what a filter over many rows spends its time on.
pub fn eval_pred(e: &BExpr, ctx: &ExecCtx, scope: Scope<'_>) -> Result<Option<bool>, SqlError> {
    crate::parse::check_stack()?;
    Ok(match e {
        BExpr::And(items) => connective(items, false, ctx, scope)?,
        BExpr::Or(items) => connective(items, true, ctx, scope)?,
        BExpr::Not(inner) => eval_pred(inner, ctx, scope)?.map(|b| !b),
        BExpr::Cmp(op, l, r) => {
            let (a, b) = (eval_ref(l, ctx, scope)?, eval_ref(r, ctx, scope)?);
            if a.is_null() || b.is_null() {
                None
            } else {
                Some(cmp_holds(*op, compare(&a, &b)))
            }
        }
        BExpr::IsNull(inner, neg) => Some(match &*eval_ref(inner, ctx, scope)? {
            // A row IS NULL when every field is, IS NOT NULL when none is.
            Datum::Record(fields) => fields.iter().all(|f| f.is_null() != *neg),
            value => value.is_null() != *neg,
        }),
        other => truth(&eval(other, ctx, scope)?),
    })
}
/// `AND` (`decisive` false) or `OR` (`decisive` true) of `items` with
/// three-valued logic: the decisive value as soon as one item has it (the
/// rest is not evaluated), else NULL if any item was NULL, else the other
/// value.
fn connective(
    items: &[BExpr],
    decisive: bool,
    ctx: &ExecCtx,
    scope: Scope<'_>,
) -> Result<Option<bool>, SqlError> {
    let mut saw_null = false;
    for item in items {
        match eval_pred(item, ctx, scope)? {
            Some(value) if value == decisive => return Ok(Some(decisive)),
            Some(_) => {}
            None => saw_null = true,
        }
    }
    Ok(if saw_null { None } else { Some(!decisive) })
}

/// Evaluates `e` over the rows of `scope`.
pub fn eval(e: &BExpr, ctx: &ExecCtx, scope: Scope<'_>) -> Result<Datum, SqlError> {
    crate::parse::check_stack()?;
    Ok(match e {
        BExpr::Const(_) | BExpr::Col { .. } => eval_ref(e, ctx, scope)?.into_owned(),
        BExpr::Param(n) => return Err(crate::plan::params::no_parameter(*n)),
        BExpr::Cast(inner, to) => cast_datum(eval(inner, ctx, scope)?, to)?,
        BExpr::Concat(l, r) => match (
            text_of(&eval(l, ctx, scope)?),
            text_of(&eval(r, ctx, scope)?),
        ) {
            (Some(a), Some(b)) => Datum::text(a + &b),
            _ => Datum::Null,
        },
        BExpr::Not(_) | BExpr::Cmp(..) | BExpr::And(..) | BExpr::Or(..) | BExpr::IsNull(..) => {
            bool_datum(eval_pred(e, ctx, scope)?)
        }
        BExpr::IsDistinct(l, r, not_distinct) => {
            let (a, b) = (eval_ref(l, ctx, scope)?, eval_ref(r, ctx, scope)?);
            let same = match (a.is_null(), b.is_null()) {
                (true, true) => true,
                (false, false) => compare(&a, &b) == Ordering::Equal,
                _ => false,
            };
            Datum::Bool(same == *not_distinct)
        }
        BExpr::IsBool(inner, target, neg) => {
            Datum::Bool((truth(&eval(inner, ctx, scope)?) == Some(*target)) != *neg)
        }
        BExpr::InList(x, list, neg) => {
            let v = eval_ref(x, ctx, scope)?;
            let mut items = Vec::with_capacity(list.len());
            for item in list {
                items.push(eval(item, ctx, scope)?);
            }
            in_values(&v, items.iter(), *neg)
        }
        BExpr::InSet(x, set, neg) => match eval_ref(x, ctx, scope)? {
            v if v.is_null() => Datum::Null,
            v => Datum::Bool(set.keys.contains(&hash_key(&v)) != *neg),
        },
        BExpr::InSub(x, sub, neg) => {
            let v = eval(x, ctx, scope)?;
            let rows = ctx.run_subquery(sub, &scope.nested())?;
            in_values(&v, rows.iter().map(|r| &r[0]), *neg)
        }
        BExpr::Exists(sub, neg) => {
            Datum::Bool(ctx.run_subquery(sub, &scope.nested())?.is_empty() == *neg)
        }
        BExpr::Scalar(sub) => scalar(sub, ctx, scope)?,
        BExpr::Like(x, pat, neg, ci, escape) => {
            match (eval(x, ctx, scope)?, eval(pat, ctx, scope)?) {
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
                    Datum::Bool(like(&s, &p, *escape) != *neg)
                }
            }
        }
        BExpr::Case {
            operand,
            whens,
            otherwise,
        } => {
            let base = match operand {
                Some(o) => Some(eval(o, ctx, scope)?),
                None => None,
            };
            for (cond, result) in whens {
                let c = eval(cond, ctx, scope)?;
                let hit = match &base {
                    Some(b) => !b.is_null() && !c.is_null() && compare(b, &c) == Ordering::Equal,
                    None => truth(&c) == Some(true),
                };
                if hit {
                    return eval(result, ctx, scope);
                }
            }
            match otherwise {
                Some(o) => eval(o, ctx, scope)?,
                None => Datum::Null,
            }
        }
        BExpr::Array(items) => {
            let mut values = Vec::with_capacity(items.len());
            for item in items {
                values.push(eval(item, ctx, scope)?);
            }
            Datum::array(values)
        }
        BExpr::ArraySub(sub) => {
            let rows = ctx.run_subquery(sub, &scope.nested())?;
            Datum::array(rows.iter().map(|r| r[0].clone()).collect::<Vec<_>>())
        }
        BExpr::AnyAll(op, x, array, all) => {
            let (v, a) = (eval_ref(x, ctx, scope)?, eval(array, ctx, scope)?);
            any_all(*op, &v, &a, *all)
        }
        BExpr::Subscript(array, index) => {
            subscript(&eval(array, ctx, scope)?, &eval(index, ctx, scope)?)
        }
        BExpr::Call(call) => {
            let mut values = Vec::with_capacity(call.args.len());
            for arg in &call.args {
                let value = eval(arg, ctx, scope)?;
                if call.builtin.strict && value.is_null() {
                    return Ok(Datum::Null);
                }
                values.push(value);
            }
            let env = CallEnv {
                catalog: ctx.catalog,
                memory: ctx.budget(),
                interrupt: ctx.limits.interrupt,
            };
            (call.builtin.eval)(&values, &call.info, &env)?
        }
        BExpr::Func(f, args) => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(eval(a, ctx, scope)?);
            }
            call(*f, vals, ctx)?
        }
    })
}
fn scalar(sub: &SubPlan, ctx: &ExecCtx, scope: Scope<'_>) -> Result<Datum, SqlError> {
    let rows = ctx.run_subquery(sub, &scope.nested())?;
    match rows.len() {
        0 => Ok(Datum::Null),
        1 => Ok(rows[0][0].clone()),
        _ => Err(SqlError::new(
            SqlState::CARDINALITY_VIOLATION,
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
#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    fn value(v: Option<bool>) -> BExpr {
        BExpr::Const(v.map(Datum::Bool).unwrap_or(Datum::Null))
    }

    /// SQL's three-valued AND and OR of two values.
    fn and2(a: Option<bool>, b: Option<bool>) -> Option<bool> {
        match (a, b) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        }
    }

    fn or2(a: Option<bool>, b: Option<bool>) -> Option<bool> {
        and2(a.map(|x| !x), b.map(|x| !x)).map(|x| !x)
    }

    #[test]
    fn chains_of_and_and_or_follow_three_valued_logic() {
        let cat = Catalog::default();
        let budget = crate::exec::memory::MemoryBudget::default();
        let limits = crate::exec::Limits {
            budget: &budget,
            interrupt: None,
        };
        let ctx = ExecCtx::new(&[], &cat, limits);
        let values = [Some(true), Some(false), None];
        for a in values {
            for b in values {
                for c in values {
                    let items = vec![value(a), value(b), value(c)];
                    let and = eval_pred(&BExpr::And(items.clone()), &ctx, Scope::top(&[])).unwrap();
                    let or = eval_pred(&BExpr::Or(items), &ctx, Scope::top(&[])).unwrap();
                    assert_eq!(and, and2(and2(a, b), c), "{a:?} AND {b:?} AND {c:?}");
                    assert_eq!(or, or2(or2(a, b), c), "{a:?} OR {b:?} OR {c:?}");
                }
            }
        }
    }
}
