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

use crate::exec::cast::text_of;
use crate::exec::compare::{compare, numeric_text};
use crate::exec::context::{ExecCtx, Scope};
use crate::exec::eval::{eval, eval_pred};
use crate::exec::memory::{row_bytes, Reservation};
use crate::exec::operators::arith;
use crate::exec::sort::order_rows;
use crate::exec::statistics::{
    combine_bits, mode, percentile_cont, percentile_disc, Moments, Pairs,
};
use crate::exec::stream::{Buffered, RowCow, RowStream, Stream};
use crate::functions::json;
use crate::plan::{AggCall, AggFunc, AggPlan, SortKey};
use rocklake_types::value::equality::{hash_key, row_key};

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
    /// The inputs of the aggregates that keep them (`array_agg`,
    /// `string_agg`): the call's ORDER BY keys, the value, the delimiter.
    items: Vec<(Row, Datum, Datum)>,
    /// The call's ORDER BY as sort keys over the items' keys.
    order: Vec<SortKey>,
    /// Sums of one variable (`variance`, `stddev` and kin).
    moments: Option<Moments>,
    /// Sums of two variables (`corr`, `covar_*`, `regr_*`).
    pairs: Pairs,
}

impl Accumulator {
    pub(crate) fn new(func: AggFunc, distinct: bool) -> Self {
        Accumulator {
            func,
            count: 0,
            value: None,
            truth: None,
            seen: distinct.then(HashSet::new),
            items: Vec::new(),
            order: Vec::new(),
            moments: None,
            pairs: Pairs::default(),
        }
    }

    /// The accumulator of one call: its function, DISTINCT and ORDER BY.
    pub(crate) fn for_call(call: &AggCall) -> Self {
        let mut accumulator = Accumulator::new(call.func, call.distinct);
        accumulator.order = call
            .order
            .iter()
            .enumerate()
            .map(|(idx, (_, desc, nulls_first))| SortKey {
                idx,
                desc: *desc,
                nulls_first: *nulls_first,
            })
            .collect();
        accumulator
    }

    /// Adds one input value; returns the bytes it now holds more.
    pub(crate) fn add(&mut self, value: Datum) -> Result<usize, SqlError> {
        self.add_item(value, Datum::Null, Vec::new())
    }

    /// Adds one input value with its delimiter (`string_agg`) and ORDER BY
    /// keys; returns the bytes it now holds more.
    pub(crate) fn add_item(
        &mut self,
        value: Datum,
        delimiter: Datum,
        keys: Row,
    ) -> Result<usize, SqlError> {
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
        if let AggFunc::Regression(_) = self.func {
            if !value.is_null() && !delimiter.is_null() {
                self.pairs.add(&value, &delimiter);
            }
            return Ok(held);
        }
        let keeps_items = matches!(
            self.func,
            AggFunc::ArrayAgg | AggFunc::JsonAgg { .. } | AggFunc::JsonObjectAgg { .. }
        ) || (matches!(self.func, AggFunc::StringAgg)
            || self.func.is_ordered_set())
            && !value.is_null();
        if keeps_items {
            held += row_bytes(&keys) + row_bytes(std::slice::from_ref(&value)) + 32;
            self.items.push((keys, value, delimiter));
            return Ok(held);
        }
        if value.is_null() {
            return Ok(held);
        }
        self.count += 1;
        match self.func {
            AggFunc::CountStar
            | AggFunc::Count
            | AggFunc::ArrayAgg
            | AggFunc::JsonAgg { .. }
            | AggFunc::JsonObjectAgg { .. }
            | AggFunc::StringAgg
            | AggFunc::Regression(_)
            | AggFunc::PercentileCont
            | AggFunc::PercentileDisc
            | AggFunc::Mode => {}
            AggFunc::Dispersion(_) => self
                .moments
                .get_or_insert_with(|| Moments::first(&value))
                .add(&value)?,
            AggFunc::Bits(op) => {
                self.value = Some(match self.value.take() {
                    Some(acc) => combine_bits(&acc, &value, op),
                    None => value,
                });
            }
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

    /// Takes one value added before out again, where that is exact:
    /// `count`, and `sum`/`avg` of integers (whose sums are exact and whose
    /// results do not depend on the values' scale); `false` when it cannot
    /// (the caller starts over).
    pub(crate) fn remove(&mut self, value: &Datum) -> Result<bool, SqlError> {
        if self.seen.is_some() {
            return Ok(false);
        }
        match self.func {
            AggFunc::CountStar => self.count -= 1,
            AggFunc::Count | AggFunc::Sum | AggFunc::Avg if value.is_null() => {}
            AggFunc::Count => self.count -= 1,
            AggFunc::Sum | AggFunc::Avg
                if matches!(value, Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_)) =>
            {
                let Some(acc) = self.value.take() else {
                    return Ok(false);
                };
                let value = match &acc {
                    Datum::Numeric(_) => Datum::Numeric(numeric_text(value).unwrap_or_default()),
                    _ => value.clone(),
                };
                self.count -= 1;
                self.value = match self.count {
                    0 => None,
                    _ => Some(arith('-', &acc, &value)?),
                };
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The aggregate's result.
    pub(crate) fn finish(mut self) -> Result<Datum, SqlError> {
        if !self.order.is_empty() {
            let order = std::mem::take(&mut self.order);
            self.items.sort_by(|a, b| order_rows(&a.0, &b.0, &order));
        }
        Ok(match self.func {
            AggFunc::ArrayAgg if self.items.is_empty() => Datum::Null,
            AggFunc::ArrayAgg => Datum::array(
                self.items
                    .into_iter()
                    .map(|(_, v, _)| v)
                    .collect::<Vec<_>>(),
            ),
            AggFunc::JsonAgg { binary, rows } => {
                json::aggregates::finish_agg(binary, rows, self.items.iter().map(|(_, v, _)| v))?
            }
            AggFunc::JsonObjectAgg { binary } => json::aggregates::finish_object_agg(
                binary,
                self.items.iter().map(|(_, key, value)| (key, value)),
            )?,
            AggFunc::StringAgg if self.items.is_empty() => Datum::Null,
            AggFunc::StringAgg => {
                let mut out = String::new();
                for (i, (_, value, delimiter)) in self.items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&text_of(delimiter).unwrap_or_default());
                    }
                    out.push_str(&text_of(value).unwrap_or_default());
                }
                Datum::text(out)
            }
            AggFunc::CountStar | AggFunc::Count => Datum::Int8(self.count),
            AggFunc::Min | AggFunc::Max | AggFunc::Sum | AggFunc::Bits(_) => {
                self.value.unwrap_or(Datum::Null)
            }
            AggFunc::Dispersion(kind) => match &self.moments {
                Some(moments) => moments.finish(kind)?,
                None => Datum::Null,
            },
            AggFunc::Regression(kind) => self.pairs.finish(kind),
            AggFunc::PercentileCont | AggFunc::PercentileDisc | AggFunc::Mode => {
                let Some(fraction) = self.items.first().map(|(_, _, f)| f.clone()) else {
                    return Ok(Datum::Null);
                };
                let sorted: Vec<Datum> = self.items.into_iter().map(|(_, v, _)| v).collect();
                let func = self.func;
                let each = |fraction: &Datum| match func {
                    AggFunc::PercentileCont => percentile_cont(&sorted, fraction),
                    AggFunc::PercentileDisc => percentile_disc(&sorted, fraction),
                    _ => Ok(mode(&sorted)),
                };
                match (&fraction, func) {
                    (
                        Datum::Array(fractions),
                        AggFunc::PercentileCont | AggFunc::PercentileDisc,
                    ) => {
                        let values = fractions.iter().map(each).collect::<Result<Vec<_>, _>>()?;
                        Datum::array(values)
                    }
                    (fraction, _) => each(fraction)?,
                }
            }
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
                tail: &[],
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
                    let accumulators = self.plan.calls.iter().map(Accumulator::for_call).collect();
                    groups.push((key, accumulators));
                    index.insert(text, groups.len() - 1);
                    groups.len() - 1
                }
            };
            for (accumulator, call) in groups[at].1.iter_mut().zip(&self.plan.calls) {
                if let Some(filter) = &call.filter {
                    if eval_pred(filter, self.ctx, scope)? != Some(true) {
                        continue;
                    }
                }
                let value = match call.args.first() {
                    Some(x) => eval(x, self.ctx, scope)?,
                    None => Datum::Bool(true),
                };
                let delimiter = match call.args.get(1) {
                    Some(x) => eval(x, self.ctx, scope)?,
                    None => Datum::Null,
                };
                let mut keys = Vec::with_capacity(call.order.len());
                for (key, _, _) in &call.order {
                    keys.push(eval(key, self.ctx, scope)?);
                }
                let more = accumulator.add_item(value, delimiter, keys)?;
                if more > 0 {
                    held.grow(more)?;
                }
            }
        }
        if self.plan.group.is_empty() && groups.is_empty() {
            let accumulators = self.plan.calls.iter().map(Accumulator::for_call).collect();
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
