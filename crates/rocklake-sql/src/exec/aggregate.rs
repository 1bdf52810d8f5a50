//! Grouping and aggregate functions. Each group keeps one running state
//! per aggregate (a count, a sum, the best value so far), not its input
//! rows, so `count(*)` over any number of rows holds nothing per row; only
//! the groups (and the values of `DISTINCT` aggregates) are charged to the
//! statement's budget.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use rocklake_types::datum::{Datum, Row};
use rocklake_types::value::numeric;
use rocklake_types::{SqlError, SqlState};

use crate::exec::compare::{compare, numeric_text};
use crate::exec::eval::eval;
use crate::exec::memory::{row_bytes, Reservation};
use crate::exec::operators::arith;
use crate::exec::select::{hash_key, row_key};
use crate::exec::stream::{Buffered, RowCow, RowStream, Stream};
use crate::exec::{ExecCtx, Scope};
use crate::plan::{AggFunc, AggPlan};

/// The running state of one aggregate call over one group.
#[derive(Clone)]
pub(crate) struct Accumulator {
    func: AggFunc,
    /// Rows seen (`count(*)`) or non-NULL values seen (the others).
    count: i64,
    /// The sum so far (`sum`, `avg`), or the best value (`min`, `max`).
    value: Option<Datum>,
    /// `bool_and` / `bool_or` so far.
    truth: Option<bool>,
    /// Values seen, for `DISTINCT` aggregates.
    seen: Option<HashSet<String>>,
}

impl Accumulator {
    pub(crate) fn new(func: AggFunc, distinct: bool) -> Self {
        Accumulator {
            func,
            count: 0,
            value: None,
            truth: None,
            seen: distinct.then(HashSet::new),
        }
    }

    /// Adds one input value; returns the bytes it now holds more.
    pub(crate) fn add(&mut self, value: Datum) -> Result<usize, SqlError> {
        let mut held = 0;
        if let Some(seen) = &mut self.seen {
            let key = hash_key(&value);
            if seen.contains(&key) {
                return Ok(0);
            }
            held = key.len() + std::mem::size_of::<String>();
            seen.insert(key);
        }
        if self.func == AggFunc::CountStar {
            self.count += 1;
            return Ok(held);
        }
        if value.is_null() {
            return Ok(held);
        }
        self.count += 1;
        match self.func {
            AggFunc::CountStar | AggFunc::Count => {}
            AggFunc::Min | AggFunc::Max => {
                let want = if self.func == AggFunc::Max {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
                if self
                    .value
                    .as_ref()
                    .is_none_or(|best| compare(&value, best) == want)
                {
                    self.value = Some(value);
                }
            }
            AggFunc::BoolAnd => {
                let v = matches!(value, Datum::Bool(true));
                self.truth = Some(self.truth.unwrap_or(true) && v);
            }
            AggFunc::BoolOr => {
                let v = matches!(value, Datum::Bool(true));
                self.truth = Some(self.truth.unwrap_or(false) || v);
            }
            AggFunc::Sum | AggFunc::Avg => {
                let acc = match self.value.take() {
                    Some(acc) => acc,
                    None => match &value {
                        Datum::Int2(_) | Datum::Int4(_) => Datum::Int8(0),
                        Datum::Int8(_) => Datum::Numeric("0".into()),
                        Datum::Float4(_) if self.func == AggFunc::Sum => Datum::Float4(0.0),
                        Datum::Float4(_) | Datum::Float8(_) => Datum::Float8(0.0),
                        _ => Datum::Numeric("0".into()),
                    },
                };
                let value = match &acc {
                    Datum::Numeric(_) => Datum::Numeric(numeric_text(&value).unwrap_or_default()),
                    _ => value,
                };
                self.value = Some(arith('+', &acc, &value)?);
            }
        }
        Ok(held)
    }

    /// The aggregate's result.
    pub(crate) fn finish(self) -> Result<Datum, SqlError> {
        Ok(match self.func {
            AggFunc::CountStar | AggFunc::Count => Datum::Int8(self.count),
            AggFunc::Min | AggFunc::Max | AggFunc::Sum => self.value.unwrap_or(Datum::Null),
            AggFunc::BoolAnd | AggFunc::BoolOr => {
                self.truth.map(Datum::Bool).unwrap_or(Datum::Null)
            }
            AggFunc::Avg => match self.value {
                None => Datum::Null,
                Some(Datum::Float8(sum)) => Datum::Float8(sum / self.count as f64),
                Some(other) => {
                    let sum = numeric_text(&other).ok_or_else(|| {
                        SqlError::new(
                            SqlState::UNDEFINED_FUNCTION,
                            "avg of this type is not supported",
                        )
                    })?;
                    Datum::Numeric(numeric::arith(&sum, &self.count.to_string(), '/')?)
                }
            },
        })
    }
}

/// GROUP BY and aggregates: reads all of its input on the first pull,
/// then hands out one row per group (the group's key values, then its
/// aggregate values), groups in the order they were first seen. Without
/// GROUP BY there is exactly one row, even for no input.
pub(crate) struct Aggregate<'a> {
    input: Option<Stream<'a>>,
    plan: &'a AggPlan,
    outer: Vec<&'a [Datum]>,
    ctx: &'a ExecCtx<'a>,
    groups: Option<Buffered<'a>>,
}

impl<'a> Aggregate<'a> {
    pub(crate) fn new(
        input: Stream<'a>,
        plan: &'a AggPlan,
        outer: Vec<&'a [Datum]>,
        ctx: &'a ExecCtx<'a>,
    ) -> Self {
        Aggregate {
            input: Some(input),
            plan,
            outer,
            ctx,
            groups: None,
        }
    }

    fn group_all(&self, mut input: Stream<'a>) -> Result<Buffered<'a>, SqlError> {
        let mut held = Reservation::new(self.ctx.budget());
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut groups: Vec<(Row, Vec<Accumulator>)> = Vec::new();
        while let Some(row) = input.next()? {
            let scope = Scope {
                outer: &self.outer,
                row: &row,
            };
            let mut key = Vec::with_capacity(self.plan.group.len());
            for g in &self.plan.group {
                key.push(eval(g, self.ctx, scope)?);
            }
            let text = row_key(&key);
            let at = match index.get(&text) {
                Some(&at) => at,
                None => {
                    held.grow(row_bytes(&key) + 2 * text.len() + 64 * self.plan.calls.len())?;
                    let accumulators = self
                        .plan
                        .calls
                        .iter()
                        .map(|(func, _, distinct)| Accumulator::new(*func, *distinct))
                        .collect();
                    groups.push((key, accumulators));
                    index.insert(text, groups.len() - 1);
                    groups.len() - 1
                }
            };
            for (accumulator, (_, arg, _)) in groups[at].1.iter_mut().zip(&self.plan.calls) {
                let value = match arg {
                    Some(x) => eval(x, self.ctx, scope)?,
                    None => Datum::Bool(true),
                };
                let more = accumulator.add(value)?;
                if more > 0 {
                    held.grow(more)?;
                }
            }
        }
        if self.plan.group.is_empty() && groups.is_empty() {
            let accumulators = self
                .plan
                .calls
                .iter()
                .map(|(func, _, distinct)| Accumulator::new(*func, *distinct))
                .collect();
            groups.push((Vec::new(), accumulators));
        }
        let mut rows = Vec::with_capacity(groups.len());
        for (mut key, accumulators) in groups {
            for accumulator in accumulators {
                key.push(accumulator.finish()?);
            }
            rows.push(Cow::Owned(key));
        }
        Ok(Buffered::new(rows, Some(held)))
    }
}

impl<'a> RowStream<'a> for Aggregate<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        if let Some(input) = self.input.take() {
            self.groups = Some(self.group_all(input)?);
        }
        match &mut self.groups {
            Some(groups) => groups.next(),
            None => Ok(None),
        }
    }
}
