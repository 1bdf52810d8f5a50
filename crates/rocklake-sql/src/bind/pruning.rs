//! Unread columns of virtual tables. The `pg_catalog` tables are wide
//! (`pg_class` has 33 columns, `pg_type` 32) and client catalog queries
//! read a few of each: DuckDB's attach joins `pg_class`, `pg_namespace`,
//! `pg_attribute` and `pg_type` for every column of every relation and
//! reads nine. A join copies every column of its rows, so the columns no
//! part of the query reads are NULL in the rows a virtual table hands the
//! executor ([`ScanReq::unread`], [`FromPlan::Lookup`]'s `unread`).
//!
//! Only where every read of the FROM clause's columns is in sight: a
//! SELECT without aggregates, windows, set-returning calls, DISTINCT ON or
//! subqueries, over scans and joins only. There the columns read are those
//! its projection (with ORDER BY's hidden keys), WHERE, join conditions,
//! equi-join pairs and scan bounds name.

use crate::bind::Binder;
use crate::plan::{BExpr, FromPlan, ScanReq, ScanSource, SelectPlan};

impl Binder<'_> {
    /// Marks the columns of `plan`'s virtual tables that no part of it reads.
    pub(super) fn mark_unread_columns(&mut self, plan: &mut SelectPlan) {
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
        assign_unread(&mut plan.from, 0, width, &read, &mut self.scans);
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

/// Records, for each virtual table of `from` (its rows at `offset`, `width`
/// wide), the columns `read` leaves unread (never those its scan is bounded
/// by).
fn assign_unread(
    from: &mut FromPlan,
    offset: usize,
    width: usize,
    read: &[bool],
    scans: &mut [ScanReq],
) {
    let unread = || -> Vec<usize> {
        (0..width)
            .filter(|c| !read.get(offset + c).copied().unwrap_or(true))
            .collect()
    };
    match from {
        FromPlan::Scan(id) => {
            let scan = &mut scans[*id];
            if !matches!(scan.source, ScanSource::Virtual(_)) {
                return;
            }
            let bounded: Vec<usize> = scan
                .filter
                .bounds
                .iter()
                .map(|(column, _)| *column)
                .chain(scan.keyed_by.iter().map(|(column, _)| *column))
                .collect();
            scan.unread = unread()
                .into_iter()
                .filter(|c| !bounded.contains(c))
                .collect();
        }
        FromPlan::Lookup {
            unread: columns, ..
        } => *columns = unread(),
        FromPlan::Join {
            left,
            right,
            left_width,
            right_width,
            ..
        } => {
            let (left_width, right_width) = (*left_width, *right_width);
            assign_unread(left, offset, left_width, read, scans);
            assign_unread(right, offset + left_width, right_width, read, scans);
        }
        _ => {}
    }
}
