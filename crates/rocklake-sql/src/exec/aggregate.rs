//! Grouping and aggregate functions.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use rocklake_types::datum::{Datum, Row};
use rocklake_types::value::numeric;
use rocklake_types::{SqlError, SqlState};

use crate::exec::compare::{compare, numeric_text};
use crate::exec::eval::eval;
use crate::exec::operators::arith;
use crate::exec::select::{hash_key, row_key, with_row, ExecCtx};
use crate::plan::{AggFunc, AggPlan};

pub(crate) fn aggregate(
    agg: &AggPlan,
    rows: Vec<&[Datum]>,
    ctx: &ExecCtx,
    env: &[&[Datum]],
) -> Result<Vec<Row>, SqlError> {
    let mut order: Vec<String> = Vec::new();
    let mut groups: HashMap<String, (Row, Vec<Row>)> = HashMap::new();
    for r in rows {
        let e = with_row(env, r);
        let mut key = Vec::with_capacity(agg.group.len());
        for g in &agg.group {
            key.push(eval(g, ctx, &e)?);
        }
        let mut args = Vec::with_capacity(agg.calls.len());
        for (_, a, _) in &agg.calls {
            args.push(match a {
                Some(x) => eval(x, ctx, &e)?,
                None => Datum::Bool(true),
            });
        }
        let k = row_key(&key);
        let entry = groups.entry(k.clone()).or_insert_with(|| {
            order.push(k);
            (key, Vec::new())
        });
        entry.1.push(args);
    }
    if agg.group.is_empty() && groups.is_empty() {
        order.push(String::new());
        groups.insert(String::new(), (Vec::new(), Vec::new()));
    }
    let mut out = Vec::with_capacity(order.len());
    for k in order {
        let (mut key, arg_rows) = groups.remove(&k).unwrap_or_default();
        for (i, (func, _, distinct)) in agg.calls.iter().enumerate() {
            let mut vals: Vec<&Datum> = arg_rows.iter().map(|r| &r[i]).collect();
            if *distinct {
                let mut seen = HashSet::new();
                vals.retain(|v| seen.insert(hash_key(v)));
            }
            key.push(finish(*func, &vals)?);
        }
        out.push(key);
    }
    Ok(out)
}
fn finish(func: AggFunc, vals: &[&Datum]) -> Result<Datum, SqlError> {
    let non_null: Vec<&Datum> = vals.iter().copied().filter(|v| !v.is_null()).collect();
    Ok(match func {
        AggFunc::CountStar => Datum::Int8(vals.len() as i64),
        AggFunc::Count => Datum::Int8(non_null.len() as i64),
        AggFunc::Min | AggFunc::Max => {
            let want = if func == AggFunc::Max {
                Ordering::Greater
            } else {
                Ordering::Less
            };
            let mut best: Option<&Datum> = None;
            for v in non_null {
                if best.is_none_or(|b| compare(v, b) == want) {
                    best = Some(v);
                }
            }
            best.cloned().unwrap_or(Datum::Null)
        }
        AggFunc::BoolAnd | AggFunc::BoolOr => {
            if non_null.is_empty() {
                Datum::Null
            } else if func == AggFunc::BoolAnd {
                Datum::Bool(non_null.iter().all(|v| matches!(v, Datum::Bool(true))))
            } else {
                Datum::Bool(non_null.iter().any(|v| matches!(v, Datum::Bool(true))))
            }
        }
        AggFunc::Sum | AggFunc::Avg => {
            if non_null.is_empty() {
                return Ok(Datum::Null);
            }
            let mut acc = match non_null[0] {
                Datum::Int2(_) | Datum::Int4(_) => Datum::Int8(0),
                Datum::Int8(_) => Datum::Numeric("0".into()),
                Datum::Float4(_) if func == AggFunc::Sum => Datum::Float4(0.0),
                Datum::Float4(_) | Datum::Float8(_) => Datum::Float8(0.0),
                _ => Datum::Numeric("0".into()),
            };
            for v in &non_null {
                let v = match (&acc, v) {
                    (Datum::Numeric(_), d) => Datum::Numeric(numeric_text(d).unwrap_or_default()),
                    (_, d) => (*d).clone(),
                };
                acc = arith('+', &acc, &v)?;
            }
            if func == AggFunc::Sum {
                acc
            } else {
                let n = non_null.len() as i64;
                match acc {
                    Datum::Float8(s) => Datum::Float8(s / n as f64),
                    other => {
                        let s = numeric_text(&other).ok_or_else(|| {
                            SqlError::new(
                                SqlState::UNDEFINED_FUNCTION,
                                "avg of this type is not supported",
                            )
                        })?;
                        Datum::Numeric(numeric::arith(&s, &n.to_string(), '/')?)
                    }
                }
            }
        }
    })
}
