//! Joins: the inner (right) side is read once and kept (charged to the
//! statement's budget), with a hash index on the equi-join columns when the
//! condition has any; the outer (left) side streams through, and each of
//! its rows is combined with its matching inner rows as they are pulled. A
//! join holds its inner side, never its product.
//!
//! Right and full joins also mark the inner rows that matched (a flag per
//! row, charged too); once the outer side ends, the inner rows no outer row
//! matched come out with NULLs for the outer columns.

use std::borrow::Cow;
use std::collections::HashMap;

use rocklake_types::datum::Datum;
use rocklake_types::SqlError;

use crate::exec::context::{ExecCtx, Scope};
use crate::exec::eval::eval_pred;
use crate::exec::memory::{owned_bytes, HeldRows, Reservation, ALLOCATION_OVERHEAD};
use crate::exec::stream::{RowCow, RowStream, Stream};
use crate::plan::{BExpr, JoinKind};
use rocklake_types::value::equality::push_hash_key;

/// Writes the hashable key of a row's equi-join columns into `key`;
/// `false` if one is NULL (NULL matches nothing).
fn equi_key(row: &[Datum], columns: impl Iterator<Item = usize>, key: &mut String) -> bool {
    key.clear();
    for column in columns {
        let value = &row[column];
        if value.is_null() {
            return false;
        }
        push_hash_key(value, key);
        key.push('\u{1}');
    }
    true
}

/// The inner rows that may match an outer row: the first `n` (every one
/// without equi-join pairs, none for a key no inner row has), or the group
/// of inner rows with its key (read in place from the index).
#[derive(Clone, Copy)]
enum Candidates {
    First(usize),
    Group(usize),
}

/// The inner rows by equi-join key: each key's group of row positions.
struct KeyIndex {
    groups_by_key: HashMap<String, usize>,
    groups: Vec<Vec<usize>>,
}

impl Candidates {
    /// How many inner rows they are (`index`: the join's, which a group is of).
    fn len(self, index: Option<&KeyIndex>) -> usize {
        match (self, index) {
            (Candidates::First(count), _) => count,
            (Candidates::Group(group), Some(index)) => index.groups[group].len(),
            (Candidates::Group(_), None) => 0,
        }
    }

    /// The position among the inner rows of the candidate `at`.
    fn position(self, index: Option<&KeyIndex>, at: usize) -> usize {
        match (self, index) {
            (Candidates::Group(group), Some(index)) => index.groups[group][at],
            _ => at,
        }
    }
}

/// An inner, left, right or full join of two streams.
pub(crate) struct Join<'a> {
    left: Stream<'a>,
    right: Vec<RowCow<'a>>,
    index: Option<KeyIndex>,
    /// The outer row's key, written in place for each row.
    probe: String,
    kind: JoinKind,
    condition: JoinCondition<'a>,
    left_width: usize,
    right_width: usize,
    /// Right and full joins: whether each inner row matched an outer row.
    matched: Vec<bool>,
    /// Once the outer side has ended (right and full joins): the next inner
    /// row to hand out if it matched none.
    unmatched_from: Option<usize>,
    equi: &'a [(usize, usize)],
    outer: Vec<&'a [Datum]>,
    ctx: &'a ExecCtx<'a>,
    _held: Reservation<'a>,
    /// The outer row being joined, its candidate inner rows, how far
    /// through them, and whether one matched.
    current: Option<(RowCow<'a>, Candidates, usize, bool)>,
}

/// What a join combines and how.
pub(crate) struct JoinSpec<'a> {
    pub(crate) kind: JoinKind,
    pub(crate) on: Option<&'a BExpr>,
    pub(crate) left_width: usize,
    pub(crate) right_width: usize,
    pub(crate) equi: &'a [(usize, usize)],
}

impl<'a> Join<'a> {
    /// Reads the whole inner side now (the outer one streams later).
    pub(crate) fn new(
        left: Stream<'a>,
        mut right: Stream<'a>,
        spec: JoinSpec<'a>,
        outer: Vec<&'a [Datum]>,
        ctx: &'a ExecCtx<'a>,
    ) -> Result<Self, SqlError> {
        let mut rows = HeldRows::new(ctx.budget());
        while let Some(row) = right.next()? {
            let bytes = owned_bytes(&row);
            rows.push(row, bytes)?;
        }
        let (rows, mut held) = rows.into_parts();
        let index = if spec.equi.is_empty() {
            None
        } else {
            let mut index = KeyIndex {
                groups_by_key: HashMap::new(),
                groups: Vec::new(),
            };
            let mut key = String::new();
            for (i, row) in rows.iter().enumerate() {
                if equi_key(row, spec.equi.iter().map(|(_, r)| *r), &mut key) {
                    held.grow(
                        key.len()
                            + 2 * ALLOCATION_OVERHEAD
                            + std::mem::size_of::<(String, Vec<usize>, usize)>(),
                    )?;
                    match index.groups_by_key.get(key.as_str()) {
                        Some(&group) => index.groups[group].push(i),
                        None => {
                            index.groups_by_key.insert(key.clone(), index.groups.len());
                            index.groups.push(vec![i]);
                        }
                    }
                }
            }
            Some(index)
        };
        let matched = match spec.kind {
            JoinKind::Right | JoinKind::Full => {
                held.grow(rows.len())?;
                vec![false; rows.len()]
            }
            JoinKind::Inner | JoinKind::Left => Vec::new(),
        };
        Ok(Join {
            left,
            right: rows,
            index,
            probe: String::new(),
            kind: spec.kind,
            condition: JoinCondition::new(spec.on),
            left_width: spec.left_width,
            right_width: spec.right_width,
            matched,
            unmatched_from: None,
            equi: spec.equi,
            outer,
            ctx,
            _held: held,
            current: None,
        })
    }

    /// The inner rows that may match `left`.
    fn candidates(&mut self, left: &[Datum]) -> Candidates {
        let Some(index) = &self.index else {
            return Candidates::First(self.right.len());
        };
        let columns = self.equi.iter().map(|(l, _)| *l);
        match equi_key(left, columns, &mut self.probe)
            .then(|| index.groups_by_key.get(self.probe.as_str()))
            .flatten()
        {
            Some(&group) => Candidates::Group(group),
            None => Candidates::First(0),
        }
    }

    /// The next inner row no outer row matched, with NULLs before it.
    fn next_unmatched(&mut self, mut from: usize) -> Result<Option<RowCow<'a>>, SqlError> {
        while from < self.right.len() {
            self.ctx.tick()?;
            let index = from;
            from += 1;
            if !self.matched[index] {
                self.unmatched_from = Some(from);
                let right = &self.right[index];
                let mut combined = Vec::with_capacity(self.left_width + right.len());
                combined.extend(std::iter::repeat_n(Datum::Null, self.left_width));
                combined.extend_from_slice(right);
                return Ok(Some(Cow::Owned(combined)));
            }
        }
        self.unmatched_from = Some(from);
        Ok(None)
    }
}

impl<'a> RowStream<'a> for Join<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        loop {
            if let Some(from) = self.unmatched_from {
                return self.next_unmatched(from);
            }
            if self.current.is_none() {
                let Some(left) = self.left.next()? else {
                    if self.matched.is_empty() {
                        return Ok(None);
                    }
                    self.unmatched_from = Some(0);
                    continue;
                };
                let candidates = self.candidates(&left);
                self.current = Some((left, candidates, 0, false));
            }
            let (left, candidates, position, matched) = self.current.as_mut().expect("set above");
            let count = candidates.len(self.index.as_ref());
            while *position < count {
                let index = candidates.position(self.index.as_ref(), *position);
                let right = &self.right[index];
                *position += 1;
                if !self.condition.holds(left, right, &self.outer, self.ctx)? {
                    continue;
                }
                *matched = true;
                if let Some(flag) = self.matched.get_mut(index) {
                    *flag = true;
                }
                // The left row's last candidate matched: nothing needs the
                // left row after this one, so it moves into it.
                let row = if *position == count {
                    let (left, ..) = self.current.take().expect("set above");
                    combined(left, right)
                } else {
                    combined(Cow::Borrowed(left), right)
                };
                return Ok(Some(Cow::Owned(row)));
            }
            let (left, _, _, matched) = self.current.take().expect("set above");
            if !matched && matches!(self.kind, JoinKind::Left | JoinKind::Full) {
                return Ok(Some(Cow::Owned(null_extended(left, self.right_width))));
            }
        }
    }
}

/// A join's condition, checked on a left and a right row without copying
/// them into one (unless the condition holds a subquery, which reads the
/// row whole: decided once per join).
#[derive(Clone, Copy)]
pub(crate) struct JoinCondition<'a> {
    on: Option<&'a BExpr>,
    reads_whole_row: bool,
}

impl<'a> JoinCondition<'a> {
    /// The condition `on` (none: every pair matches).
    pub(crate) fn new(on: Option<&'a BExpr>) -> Self {
        JoinCondition {
            on,
            reads_whole_row: on.is_some_and(BExpr::has_subquery),
        }
    }

    /// Whether `left` and `right` satisfy the condition.
    pub(crate) fn holds(
        &self,
        left: &[Datum],
        right: &[Datum],
        outer: &[&[Datum]],
        ctx: &ExecCtx<'_>,
    ) -> Result<bool, SqlError> {
        ctx.tick()?;
        let Some(condition) = self.on else {
            return Ok(true);
        };
        let whole;
        let scope = if self.reads_whole_row {
            whole = combined(Cow::Borrowed(left), right);
            Scope {
                outer,
                row: &whole,
                tail: &[],
            }
        } else {
            Scope {
                outer,
                row: left,
                tail: right,
            }
        };
        Ok(eval_pred(condition, ctx, scope)? == Some(true))
    }
}

/// `left` and `right` as one row (`left` moved when it is owned).
pub(crate) fn combined(left: RowCow<'_>, right: &[Datum]) -> Vec<Datum> {
    let mut combined = match left {
        Cow::Owned(mut row) => {
            row.reserve(right.len());
            row
        }
        Cow::Borrowed(row) => {
            let mut combined = Vec::with_capacity(row.len() + right.len());
            combined.extend_from_slice(row);
            combined
        }
    };
    combined.extend_from_slice(right);
    combined
}

/// A left row no right row matched, with NULLs for the right columns.
pub(crate) fn null_extended(left: RowCow<'_>, right_width: usize) -> Vec<Datum> {
    let mut combined = left.into_owned();
    combined.extend(std::iter::repeat_n(Datum::Null, right_width));
    combined
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::exec::memory::MemoryBudget;
    use crate::exec::scan_data::ScanData;
    use crate::exec::select::run_query;
    use crate::exec::Limits;
    use crate::plan::{BExpr, CmpOp, FromPlan, OutCol, QueryPlan, SelectPlan, SetPlan, SortKey};

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
                windows: Vec::new(),
                set_calls: Vec::new(),
                projection: (0..4).map(col).collect(),
                distinct: false,
                distinct_on: None,
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
                    origin: None,
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
        let budget = MemoryBudget::default();
        let limits = Limits {
            budget: &budget,
            interrupt: None,
        };
        let ctx = ExecCtx::new(&data, &cat, limits);
        for (kind, expected) in [
            (JoinKind::Inner, 2),
            (JoinKind::Left, 4),
            (JoinKind::Right, 3),
            (JoinKind::Full, 5),
        ] {
            let hashed = run_query(&join_plan(vec![(0, 0)], kind), &ctx, &[]).unwrap();
            let looped = run_query(&join_plan(Vec::new(), kind), &ctx, &[]).unwrap();
            assert_eq!(hashed, looped);
            assert_eq!(hashed.len(), expected, "{kind:?}");
            // DESC puts NULLs first by default, as in PostgreSQL.
            assert_eq!(hashed[0][3], Datum::Null);
            if matches!(kind, JoinKind::Right | JoinKind::Full) {
                // The right row no left row matched, with NULLs before it.
                let last = hashed.last().unwrap();
                assert_eq!(
                    last,
                    &vec![Datum::Null, Datum::Null, Datum::Int4(3), Datum::Int4(30)]
                );
            }
        }
    }
}

#[cfg(test)]
mod bounds {
    use super::*;
    use crate::catalog::Catalog;
    use crate::exec::memory::MemoryBudget;
    use crate::exec::scan_data::ScanData;
    use crate::exec::select::run_query;
    use crate::exec::Limits;
    use crate::plan::{AggFunc, AggPlan, FromPlan, OutCol, QueryPlan, SelectPlan, SetPlan};

    fn count_of_cross_join() -> QueryPlan {
        QueryPlan {
            body: SetPlan::Select(Box::new(SelectPlan {
                from: FromPlan::Join {
                    left: Box::new(FromPlan::Scan(0)),
                    right: Box::new(FromPlan::Scan(1)),
                    kind: JoinKind::Inner,
                    on: None,
                    left_width: 1,
                    right_width: 1,
                    equi: Vec::new(),
                },
                filter: None,
                agg: Some(AggPlan {
                    group: Vec::new(),
                    calls: vec![crate::plan::AggCall::simple(AggFunc::CountStar, None)],
                }),
                having: None,
                windows: Vec::new(),
                set_calls: Vec::new(),
                projection: vec![BExpr::Col { up: 0, idx: 0 }],
                distinct: false,
                distinct_on: None,
            })),
            order: Vec::new(),
            limit: None,
            offset: None,
            columns: vec![OutCol {
                name: "count".into(),
                ty: None,
                origin: None,
            }],
        }
    }

    #[test]
    fn a_cross_join_streams_its_product_through_count_in_bounded_memory() {
        let side: Vec<Vec<Datum>> = (0..2000).map(|i| vec![Datum::Int8(i)]).collect();
        let data = vec![ScanData::Owned(side.clone()), ScanData::Owned(side)];
        let cat = Catalog::default();
        // Far less than the 4 million combined rows would take.
        let budget = MemoryBudget::new(1024 * 1024);
        let limits = Limits {
            budget: &budget,
            interrupt: None,
        };
        let ctx = ExecCtx::new(&data, &cat, limits);
        let rows = run_query(&count_of_cross_join(), &ctx, &[]).unwrap();
        assert_eq!(rows, vec![vec![Datum::Int8(4_000_000)]]);
        // The inner side's 2000 row slots, not the product.
        assert!(budget.peak() < 256 * 1024, "peak {}", budget.peak());
    }

    #[test]
    fn a_sort_over_the_memory_limit_fails_with_53200() {
        let big: Vec<Vec<Datum>> = (0..10_000)
            .map(|i| vec![Datum::text(format!("{i:0>200}"))])
            .collect();
        let data = vec![ScanData::Owned(big)];
        let cat = Catalog::default();
        let budget = MemoryBudget::new(256 * 1024);
        let limits = Limits {
            budget: &budget,
            interrupt: None,
        };
        let ctx = ExecCtx::new(&data, &cat, limits);
        let sorted = QueryPlan {
            body: SetPlan::Select(Box::new(SelectPlan {
                from: FromPlan::Scan(0),
                filter: None,
                agg: None,
                having: None,
                windows: Vec::new(),
                set_calls: Vec::new(),
                projection: vec![BExpr::Col { up: 0, idx: 0 }],
                distinct: false,
                distinct_on: None,
            })),
            order: vec![crate::plan::SortKey {
                idx: 0,
                desc: false,
                nulls_first: false,
            }],
            limit: None,
            offset: None,
            columns: vec![OutCol {
                name: "v".into(),
                ty: None,
                origin: None,
            }],
        };
        let error = run_query(&sorted, &ctx, &[]).unwrap_err();
        assert_eq!(error.code, rocklake_types::SqlState::OUT_OF_MEMORY);
        assert!(budget.peak() <= 256 * 1024);
        assert_eq!(budget.used(), 0, "everything held is given back");
    }
}
