//! FROM clauses: scans, derived tables and joins (hash join on
//! equi-conditions, nested loops otherwise).

use std::collections::HashMap;

use rocklake_types::datum::{Datum, Row};
use rocklake_types::SqlError;

use crate::exec::eval::eval_pred;
use crate::exec::scan_data::ScanData;
use crate::exec::select::{hash_key, run_query, with_row, ExecCtx};
use crate::plan::{FromPlan, JoinKind};

/// Runs a FROM clause.
pub fn run_from(fp: &FromPlan, ctx: &ExecCtx, env: &[&[Datum]]) -> Result<Vec<Row>, SqlError> {
    match fp {
        FromPlan::Empty => Ok(vec![Vec::new()]),
        FromPlan::Scan(id) => Ok(ctx.data.get(*id).map(ScanData::to_rows).unwrap_or_default()),
        FromPlan::Derived(q) => run_query(q, ctx, &with_row(env, &[])),
        FromPlan::Join {
            left,
            right,
            kind,
            on,
            left_width: _,
            right_width,
            equi,
        } => {
            let lrows = run_from(left, ctx, env)?;
            let rrows = run_from(right, ctx, env)?;
            let mut out = Vec::new();
            let index: Option<HashMap<String, Vec<usize>>> = if equi.is_empty() {
                None
            } else {
                let mut m: HashMap<String, Vec<usize>> = HashMap::new();
                for (i, r) in rrows.iter().enumerate() {
                    if equi.iter().any(|(_, ri)| r[*ri].is_null()) {
                        continue;
                    }
                    let k: Vec<String> = equi.iter().map(|(_, ri)| hash_key(&r[*ri])).collect();
                    m.entry(k.join("\u{1}")).or_default().push(i);
                }
                Some(m)
            };
            let all: Vec<usize> = (0..rrows.len()).collect();
            for l in &lrows {
                let candidates: &[usize] = match &index {
                    None => &all,
                    Some(m) => {
                        if equi.iter().any(|(li, _)| l[*li].is_null()) {
                            &[]
                        } else {
                            let k: Vec<String> =
                                equi.iter().map(|(li, _)| hash_key(&l[*li])).collect();
                            m.get(&k.join("\u{1}")).map(|v| v.as_slice()).unwrap_or(&[])
                        }
                    }
                };
                let mut matched = false;
                for &ri in candidates {
                    let mut combined = l.clone();
                    combined.extend(rrows[ri].iter().cloned());
                    let ok = match on {
                        Some(c) => eval_pred(c, ctx, &with_row(env, &combined))? == Some(true),
                        None => true,
                    };
                    if ok {
                        matched = true;
                        out.push(combined);
                    }
                }
                if !matched && *kind == JoinKind::Left {
                    let mut combined = l.clone();
                    combined.extend(std::iter::repeat_n(Datum::Null, *right_width));
                    out.push(combined);
                }
            }
            Ok(out)
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::exec::scan_data::ScanData;
    use crate::exec::select::run_query;
    use crate::plan::{BExpr, CmpOp, OutCol, QueryPlan, SelectPlan, SetPlan, SortKey};

    fn col(idx: usize) -> BExpr {
        BExpr::Col { up: 0, idx }
    }

    fn join_plan(equi: Vec<(usize, usize)>, kind: JoinKind) -> QueryPlan {
        let on = BExpr::Cmp(CmpOp::Eq, Box::new(col(0)), Box::new(col(2)));
        QueryPlan {
            body: SetPlan::Select(Box::new(SelectPlan {
                from: FromPlan::Join {
                    left: Box::new(FromPlan::Scan(0)),
                    right: Box::new(FromPlan::Scan(1)),
                    kind,
                    on: Some(on),
                    left_width: 2,
                    right_width: 2,
                    equi,
                },
                filter: None,
                agg: None,
                having: None,
                projection: (0..4).map(col).collect(),
                distinct: false,
            })),
            order: vec![
                SortKey {
                    idx: 1,
                    desc: false,
                    nulls_first: false,
                },
                SortKey {
                    idx: 3,
                    desc: true,
                    nulls_first: true,
                },
            ],
            limit: None,
            offset: None,
            columns: (0..4)
                .map(|i| OutCol {
                    name: format!("c{i}"),
                    ty: None,
                })
                .collect(),
        }
    }
    #[test]
    fn hash_join_matches_nested_loop() {
        let left = vec![
            vec![Datum::Int8(1), Datum::Text("a".into())],
            vec![Datum::Int8(2), Datum::Text("b".into())],
            vec![Datum::Null, Datum::Text("c".into())],
        ];
        let right = vec![
            vec![Datum::Int4(1), Datum::Int4(10)],
            vec![Datum::Int4(1), Datum::Null],
            vec![Datum::Int4(3), Datum::Int4(30)],
        ];
        let data = vec![ScanData::Owned(left), ScanData::Owned(right)];
        let cat = Catalog::default();
        let ctx = ExecCtx::new(&data, &cat);
        for kind in [JoinKind::Inner, JoinKind::Left] {
            let hashed = run_query(&join_plan(vec![(0, 0)], kind), &ctx, &[]).unwrap();
            let looped = run_query(&join_plan(Vec::new(), kind), &ctx, &[]).unwrap();
            assert_eq!(hashed, looped);
            let expected = if kind == JoinKind::Inner { 2 } else { 4 };
            assert_eq!(hashed.len(), expected);
            // DESC puts NULLs first by default, as in PostgreSQL.
            assert_eq!(hashed[0][3], Datum::Null);
        }
    }
}
