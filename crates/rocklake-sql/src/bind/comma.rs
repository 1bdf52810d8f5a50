//! WHERE conditions as join conditions of the inner joins a FROM list
//! makes (`FROM a, b, c WHERE a.x = b.x AND ...`): each conjunct joins the
//! rows as early as the columns it reads allow (hashed when it is an
//! equality of columns), instead of filtering the whole cross product. The
//! WHERE clause still applies in full afterwards; for inner joins this
//! gives the same rows.

use crate::bind::Binder;
use crate::plan::{BExpr, FromPlan, JoinKind};

impl Binder<'_> {
    /// Copies the conjuncts of `filter` into the inner joins of `from`.
    pub(super) fn attach_to_inner_joins(&self, from: &mut FromPlan, filter: &BExpr) {
        let FromPlan::Join {
            left_width,
            right_width,
            ..
        } = from
        else {
            return;
        };
        // Only a FROM list whose rows start at the query level's first
        // column (its joins' conditions read a prefix of the flat row).
        if *left_width + *right_width != self.scopes.last().map_or(0, |s| s.width) {
            return;
        }
        let mut conjuncts = Vec::new();
        let mut stack = vec![filter];
        while let Some(e) = stack.pop() {
            match e {
                BExpr::And(items) => stack.extend(items),
                other => conjuncts.push(other),
            }
        }
        for conjunct in conjuncts.into_iter().rev() {
            if let Some(needed) = columns_needed(conjunct) {
                self.attach(from, conjunct, needed);
            }
        }
    }

    /// Adds `conjunct` (which reads the first `needed` columns) to the
    /// lowest inner join of the left-deep chain that has them all. A left
    /// join passes on a conjunct of its left input's columns alone: the
    /// rows it drops for failing it are dropped by the WHERE clause anyway
    /// (a left join keeps its left rows as they are).
    fn attach(&self, from: &mut FromPlan, conjunct: &BExpr, needed: usize) {
        let FromPlan::Join {
            left,
            kind,
            on,
            left_width,
            right_width,
            equi,
            ..
        } = from
        else {
            return;
        };
        if needed > *left_width + *right_width {
            return;
        }
        match kind {
            JoinKind::Inner => {}
            JoinKind::Left if needed <= *left_width => return self.attach(left, conjunct, needed),
            // An outer join that null-extends the rows a conjunct reads
            // (its right input's for LEFT, its left input's for RIGHT, both
            // for FULL) keeps it above.
            JoinKind::Left | JoinKind::Right | JoinKind::Full => return,
        }
        if needed <= *left_width && matches!(**left, FromPlan::Join { .. }) {
            return self.attach(left, conjunct, needed);
        }
        equi.extend(self.equi_pairs(conjunct, *left_width));
        *on = Some(match on.take() {
            None => conjunct.clone(),
            Some(BExpr::And(mut items)) => {
                items.push(conjunct.clone());
                BExpr::And(items)
            }
            Some(other) => BExpr::And(vec![other, conjunct.clone()]),
        });
    }
}

/// One past the highest column of this query level `e` reads; `None` when
/// it cannot move into a join (it reads enclosing queries or subqueries,
/// or names no column).
fn columns_needed(e: &BExpr) -> Option<usize> {
    if e.has_subquery() {
        return None;
    }
    fn walk(x: &BExpr, needed: &mut Option<usize>) {
        if let BExpr::Col { up, idx } = x {
            *needed = match (*needed, up) {
                (Some(n), 0) => Some(n.max(idx + 1)),
                _ => None,
            };
        }
        x.for_each_child(|c| walk(c, needed));
    }
    let mut needed = Some(0);
    walk(e, &mut needed);
    needed.filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use sqlparser::ast::Statement;

    use crate::bind::Binder;
    use crate::catalog::Catalog;
    use crate::plan::{FromPlan, SetPlan};

    /// The `on` conditions and hashed pairs of a left-deep join chain, top
    /// first.
    fn joins(plan: &FromPlan) -> Vec<(bool, usize)> {
        match plan {
            FromPlan::Join { left, on, equi, .. } => {
                let mut out = vec![(on.is_some(), equi.len())];
                out.extend(joins(left));
                out
            }
            _ => Vec::new(),
        }
    }

    #[test]
    fn where_conjuncts_join_a_from_list_as_early_as_they_can() {
        let cat = Catalog::default();
        let sql = "SELECT 1 FROM pg_namespace n, pg_class c, pg_attribute a, pg_type t \
                   WHERE n.oid = c.relnamespace AND c.oid = a.attrelid AND a.attnum > 0 \
                   AND n.nspname = 'public'";
        let Some(Statement::Query(query)) = crate::parse::parse(sql).unwrap().pop() else {
            panic!("not a query");
        };
        let plan = Binder::new(&cat, 0, 0).bind_query(&query).unwrap();
        let SetPlan::Select(select) = plan.body else {
            panic!("not a SELECT");
        };
        // `t` joins on nothing; `a` on `c.oid = a.attrelid` (hashed) and
        // `attnum > 0`; `c` on `n.oid = c.relnamespace` (hashed) and the
        // condition on `n` alone (the lowest join that has its column).
        assert_eq!(joins(&select.from), vec![(false, 0), (true, 1), (true, 1)]);
        assert!(select.filter.is_some());
    }
}
