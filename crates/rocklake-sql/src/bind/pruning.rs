//! Rows as narrow as the columns a query reads. The `pg_catalog` tables
//! are wide (`pg_class` has 33 columns, `pg_type` 32) and client catalog
//! queries read a few of each: DuckDB's attach joins `pg_class`,
//! `pg_namespace`, `pg_attribute` and `pg_type` for every column of every
//! relation and reads nine. A join copies every column of its two rows, so
//! a virtual table hands the executor only the columns some part of the
//! query reads ([`ScanReq::columns`], [`FromPlan::Lookup`]'s `columns`),
//! and the query's column references, join widths and equi-join pairs are
//! renumbered to the narrowed rows. Stored tables keep every column.
//!
//! Only where every read of the FROM clause's columns is in sight: a
//! SELECT without aggregates, windows, set-returning calls, DISTINCT ON or
//! subqueries, over scans and joins only. There the columns read are those
//! its projection (with ORDER BY's hidden keys and the `ctid`s of FOR
//! UPDATE), WHERE, join conditions and equi-join pairs name; a scan's
//! bounds select its rows before they are narrowed.

use crate::bind::Binder;
use crate::plan::{BExpr, FromPlan, ScanReq, ScanSource, SelectPlan};

impl Binder<'_> {
    /// Narrows the rows of `plan`'s virtual tables to the columns it reads
    /// and renumbers its column references to match.
    pub(super) fn narrow_rows(&mut self, plan: &mut SelectPlan) {
        if !self.reads_in_sight(plan) {
            return;
        }
        let Some(width) = self.width_of(&plan.from) else {
            return;
        };
        let mut read = vec![false; width];
        for e in plan.projection.iter().chain(&plan.filter) {
            mark_read(e, 0, &mut read);
        }
        mark_joins(&plan.from, 0, &mut read);
        let mut kept = vec![true; width];
        narrow_scans(&mut plan.from, 0, width, &read, &mut kept, &mut self.scans);
        let renumber = Renumbering::new(&kept);
        for e in plan.projection.iter_mut().chain(&mut plan.filter) {
            renumber.expr(e, 0);
        }
        renumber.joins(&mut plan.from, 0);
    }

    /// Whether every read of `plan`'s FROM columns is in its own
    /// expressions.
    fn reads_in_sight(&self, plan: &SelectPlan) -> bool {
        plan.agg.is_none()
            && plan.having.is_none()
            && plan.windows.is_empty()
            && plan.set_calls.is_empty()
            && plan.distinct_on.is_none()
            && !plan.projection.iter().any(BExpr::has_subquery)
            && !plan.filter.as_ref().is_some_and(BExpr::has_subquery)
            && self.joins_only(&plan.from)
    }

    /// Whether `from` is scans and joins (without subqueries in their
    /// conditions) only, with a virtual table among the scans.
    fn joins_only(&self, from: &FromPlan) -> bool {
        fn walk(from: &FromPlan, scans: &[ScanReq], virtual_seen: &mut bool) -> bool {
            match from {
                FromPlan::Scan(id) => {
                    *virtual_seen |= matches!(scans[*id].source, ScanSource::Virtual(_));
                    true
                }
                FromPlan::Lookup { .. } => {
                    *virtual_seen = true;
                    true
                }
                FromPlan::Join {
                    left, right, on, ..
                } => {
                    !on.as_ref().is_some_and(BExpr::has_subquery)
                        && walk(left, scans, virtual_seen)
                        && walk(right, scans, virtual_seen)
                }
                _ => false,
            }
        }
        let mut virtual_seen = false;
        walk(from, &self.scans, &mut virtual_seen) && virtual_seen
    }

    /// The width of `from`'s rows (a join's, or a lone virtual table's:
    /// `joins_only` lets nothing else through).
    fn width_of(&self, from: &FromPlan) -> Option<usize> {
        match from {
            FromPlan::Join {
                left_width,
                right_width,
                ..
            } => Some(left_width + right_width),
            FromPlan::Scan(id) => match &self.scans[*id].source {
                ScanSource::Virtual(table) => Some(table.columns().len()),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Marks the columns of this query level's row that `e` reads, `offset`
/// being where the row `e` is evaluated over starts.
fn mark_read(e: &BExpr, offset: usize, read: &mut [bool]) {
    if let BExpr::Col { up: 0, idx } = e {
        if let Some(slot) = read.get_mut(offset + idx) {
            *slot = true;
        }
    }
    e.for_each_child(|child| mark_read(child, offset, read));
}

/// Marks the columns the joins of `from` (starting at `offset`) read.
fn mark_joins(from: &FromPlan, offset: usize, read: &mut [bool]) {
    if let FromPlan::Join {
        left,
        right,
        on,
        left_width,
        equi,
        ..
    } = from
    {
        if let Some(on) = on {
            mark_read(on, offset, read);
        }
        for &(l, r) in equi {
            for column in [offset + l, offset + left_width + r] {
                if let Some(slot) = read.get_mut(column) {
                    *slot = true;
                }
            }
        }
        mark_joins(left, offset, read);
        mark_joins(right, offset + left_width, read);
    }
}

/// Narrows each virtual table of `from` (its rows at `offset`, `width`
/// wide) to the columns `read` marks, clearing the others in `kept`.
fn narrow_scans(
    from: &mut FromPlan,
    offset: usize,
    width: usize,
    read: &[bool],
    kept: &mut [bool],
    scans: &mut [ScanReq],
) {
    let narrow = |kept: &mut [bool]| -> Vec<usize> {
        let is_read = |c: usize| read.get(offset + c).copied().unwrap_or(true);
        for c in 0..width {
            kept[offset + c] = is_read(c);
        }
        (0..width).filter(|&c| is_read(c)).collect()
    };
    match from {
        FromPlan::Scan(id) => {
            let scan = &mut scans[*id];
            if matches!(scan.source, ScanSource::Virtual(_)) {
                scan.columns = Some(narrow(kept));
            }
        }
        FromPlan::Lookup { columns, .. } => *columns = Some(narrow(kept)),
        FromPlan::Join {
            left,
            right,
            left_width,
            right_width,
            ..
        } => {
            let (left_width, right_width) = (*left_width, *right_width);
            narrow_scans(left, offset, left_width, read, kept, scans);
            narrow_scans(right, offset + left_width, right_width, read, kept, scans);
        }
        _ => {}
    }
}

/// Where each column of the FROM row lands once the unread columns of
/// virtual tables are gone.
struct Renumbering {
    /// `before[c]`: how many kept columns precede column `c` (one entry
    /// past the last column).
    before: Vec<usize>,
}

impl Renumbering {
    fn new(kept: &[bool]) -> Self {
        let mut before = Vec::with_capacity(kept.len() + 1);
        let mut count = 0;
        before.push(0);
        for &k in kept {
            count += usize::from(k);
            before.push(count);
        }
        Renumbering { before }
    }

    /// The new index of column `column`, counted from the new place of
    /// column `start` (both in the whole FROM row).
    fn index(&self, column: usize, start: usize) -> usize {
        let at = |c: usize| self.before[c.min(self.before.len() - 1)];
        at(column) - at(start)
    }

    /// Renumbers the columns `e` reads of a row starting at `offset`.
    fn expr(&self, e: &mut BExpr, offset: usize) {
        if let BExpr::Col { up: 0, idx } = e {
            *idx = self.index(offset + *idx, offset);
        }
        e.for_each_child_mut(|child| self.expr(child, offset));
    }

    /// Renumbers the joins of `from` (its rows starting at `offset`): their
    /// conditions, equi-join pairs and widths.
    fn joins(&self, from: &mut FromPlan, offset: usize) {
        if let FromPlan::Join {
            left,
            right,
            on,
            left_width,
            right_width,
            equi,
            ..
        } = from
        {
            let (old_left, old_right) = (*left_width, *right_width);
            let right_start = offset + old_left;
            if let Some(on) = on {
                self.expr(on, offset);
            }
            for (l, r) in equi.iter_mut() {
                *l = self.index(offset + *l, offset);
                *r = self.index(right_start + *r, right_start);
            }
            *left_width = self.index(right_start, offset);
            *right_width = self.index(right_start + old_right, right_start);
            self.joins(left, offset);
            self.joins(right, right_start);
        }
    }
}
