//! Window frames at run time: each row's frame as a range of its sorted
//! partition, and aggregates over the frames of a partition's rows.
//!
//! Frames only move forward from one row to the next, so an aggregate adds
//! the rows that enter the frame to a running state; when rows leave it
//! (the frame's start moves), their values are taken out again where that
//! is exact (`count`, and `sum`/`avg` of integers), as PostgreSQL's inverse
//! transition functions do, and otherwise the state restarts from the
//! frame's first row (PostgreSQL restarts too, so `min`, `max` and float
//! sums see the frame's rows in its order).

use rocklake_types::datum::Datum;
use rocklake_types::{SqlError, SqlState};

use crate::exec::aggregate::Accumulator;
use crate::exec::context::ExecCtx;
use crate::plan::{AggFunc, BExpr, FrameBound, FrameUnits, WindowFrame};

/// The peer groups of a sorted partition (rows equal in the window's ORDER
/// BY keys; all rows when it has none).
pub(crate) struct Peers {
    /// Each group's rows, `start..end`, in order.
    pub(crate) groups: Vec<(usize, usize)>,
    /// The group of each row.
    group_of: Vec<usize>,
}

impl Peers {
    /// Groups of `len` rows, where `same(a, b)` tells whether rows `a` and
    /// `b` (`a` before `b`) are peers.
    pub(crate) fn new(len: usize, same: impl Fn(usize, usize) -> bool) -> Self {
        let mut groups = Vec::new();
        let mut group_of = Vec::with_capacity(len);
        let mut start = 0;
        while start < len {
            let mut end = start + 1;
            while end < len && same(start, end) {
                end += 1;
            }
            group_of.extend(std::iter::repeat_n(groups.len(), end - start));
            groups.push((start, end));
            start = end;
        }
        Peers { groups, group_of }
    }
}

/// One end of a frame, its offset evaluated.
#[derive(Debug, Clone, Copy)]
enum Bound {
    UnboundedPreceding,
    Preceding(usize),
    CurrentRow,
    Following(usize),
    UnboundedFollowing,
}

/// A window frame with its offsets evaluated.
pub(crate) struct Frame {
    units: FrameUnits,
    start: Bound,
    end: Bound,
}

impl Frame {
    /// `frame` with its offsets evaluated by `eval` (once per statement, as
    /// PostgreSQL does): NULL is 22004 and a negative offset 22013.
    pub(crate) fn resolve(
        frame: &WindowFrame,
        mut eval: impl FnMut(&BExpr) -> Result<Datum, SqlError>,
    ) -> Result<Frame, SqlError> {
        let mut bound = |b: &FrameBound, which: &str| -> Result<Bound, SqlError> {
            let offset =
                |e: &BExpr, eval: &mut dyn FnMut(&BExpr) -> Result<Datum, SqlError>| match eval(e)?
                {
                    Datum::Null => Err(SqlError::new(
                        SqlState::NULL_VALUE_NOT_ALLOWED,
                        format!("frame {which} offset must not be null"),
                    )),
                    d => match d.as_i64() {
                        Some(v) if v < 0 => Err(SqlError::new(
                            SqlState::INVALID_PRECEDING_OR_FOLLOWING_SIZE,
                            format!("frame {which} offset must not be negative"),
                        )),
                        Some(v) => Ok(usize::try_from(v).unwrap_or(usize::MAX)),
                        None => Err(SqlError::internal("frame offset is not an integer")),
                    },
                };
            Ok(match b {
                FrameBound::UnboundedPreceding => Bound::UnboundedPreceding,
                FrameBound::Preceding(e) => Bound::Preceding(offset(e, &mut eval)?),
                FrameBound::CurrentRow => Bound::CurrentRow,
                FrameBound::Following(e) => Bound::Following(offset(e, &mut eval)?),
                FrameBound::UnboundedFollowing => Bound::UnboundedFollowing,
            })
        };
        let start = bound(&frame.start, "starting")?;
        let end = bound(&frame.end, "ending")?;
        if frame.units == FrameUnits::Range
            && [start, end]
                .iter()
                .any(|b| matches!(b, Bound::Preceding(_) | Bound::Following(_)))
        {
            return Err(SqlError::unsupported(
                "RANGE with offset PRECEDING/FOLLOWING is not supported",
            ));
        }
        Ok(Frame {
            units: frame.units,
            start,
            end,
        })
    }

    /// The frame of row `i` of a partition with these peers, as the rows
    /// `start..end` (empty when `end <= start`).
    pub(crate) fn rows(&self, i: usize, peers: &Peers) -> (usize, usize) {
        let len = peers.group_of.len();
        let group = peers.group_of[i];
        let groups = &peers.groups;
        let by_rows = self.units == FrameUnits::Rows;
        let start = match self.start {
            Bound::UnboundedPreceding => 0,
            Bound::Preceding(k) if by_rows => i.saturating_sub(k),
            Bound::Preceding(k) => groups[group.saturating_sub(k)].0,
            Bound::CurrentRow if by_rows => i,
            Bound::CurrentRow => groups[group].0,
            Bound::Following(k) if by_rows => i.saturating_add(k).min(len),
            Bound::Following(k) => groups.get(group.saturating_add(k)).map_or(len, |g| g.0),
            Bound::UnboundedFollowing => len,
        };
        let end = match self.end {
            Bound::UnboundedPreceding => 0,
            Bound::Preceding(k) if by_rows => (i + 1).saturating_sub(k),
            Bound::Preceding(k) => group.checked_sub(k).map_or(0, |g| groups[g].1),
            Bound::CurrentRow if by_rows => i + 1,
            Bound::CurrentRow => groups[group].1,
            Bound::Following(k) if by_rows => i.saturating_add(k).saturating_add(1).min(len),
            Bound::Following(k) => groups.get(group.saturating_add(k)).map_or(len, |g| g.1),
            Bound::UnboundedFollowing => len,
        };
        (start, end)
    }
}

/// `func` over each of `frames` (ranges of `values`, moving forward).
pub(crate) fn aggregate_frames(
    func: AggFunc,
    values: &[Datum],
    frames: &[(usize, usize)],
    ctx: &ExecCtx,
) -> Result<Vec<Datum>, SqlError> {
    let mut out = Vec::with_capacity(frames.len());
    let mut state = Accumulator::new(func, false);
    // The state holds values[from..to].
    let (mut from, mut to) = (0, 0);
    let mut last: Option<((usize, usize), Datum)> = None;
    for &(start, end) in frames {
        let end = end.max(start);
        if let Some((frame, value)) = &last {
            if *frame == (start, end) {
                out.push(value.clone());
                continue;
            }
        }
        if start < from || end < to {
            (state, from, to) = (Accumulator::new(func, false), start, start);
        }
        while from < start {
            ctx.tick()?;
            if from >= to || !state.remove(&values[from])? {
                (state, from, to) = (Accumulator::new(func, false), start, start);
                break;
            }
            from += 1;
        }
        while to < end {
            ctx.tick()?;
            state.add(values[to].clone())?;
            to += 1;
        }
        let value = state.clone().finish()?;
        last = Some(((start, end), value.clone()));
        out.push(value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::exec::memory::MemoryBudget;
    use crate::exec::Limits;

    #[test]
    fn sliding_aggregates_equal_each_frame_computed_afresh() {
        let cat = Catalog::default();
        let budget = MemoryBudget::default();
        let limits = Limits {
            budget: &budget,
            interrupt: None,
        };
        let ctx = ExecCtx::new(&[], &cat, limits);
        let int4: Vec<Datum> = (0..40)
            .map(|i| match i % 7 {
                3 => Datum::Null,
                _ => Datum::Int4(i * 37 % 11 - 5),
            })
            .collect();
        let int8: Vec<Datum> = (0..40)
            .map(|i| match i % 5 {
                2 => Datum::Null,
                _ => Datum::Int8(i64::MAX - i),
            })
            .collect();
        for values in [int4, int8] {
            check_sliding(&values, &ctx);
        }
    }

    fn check_sliding(values: &[Datum], ctx: &ExecCtx) {
        let peers = Peers::new(values.len(), |a, b| a / 3 == b / 3);
        for units in [FrameUnits::Rows, FrameUnits::Groups] {
            for (before, after) in [(0, 0), (2, 1), (5, 0), (0, 3), (9, 9)] {
                let frame = Frame {
                    units,
                    start: Bound::Preceding(before),
                    end: Bound::Following(after),
                };
                let frames: Vec<_> = (0..values.len()).map(|i| frame.rows(i, &peers)).collect();
                for func in [
                    AggFunc::CountStar,
                    AggFunc::Count,
                    AggFunc::Sum,
                    AggFunc::Avg,
                    AggFunc::Min,
                    AggFunc::Max,
                ] {
                    let slid = aggregate_frames(func, values, &frames, ctx).unwrap();
                    for (i, &(start, end)) in frames.iter().enumerate() {
                        let mut fresh = Accumulator::new(func, false);
                        for value in &values[start..end.max(start)] {
                            fresh.add(value.clone()).unwrap();
                        }
                        assert_eq!(
                            slid[i],
                            fresh.finish().unwrap(),
                            "{func:?} {units:?} row {i}"
                        );
                    }
                }
            }
        }
    }
}
