//! Join kinds and the columns `JOIN ... USING` / `NATURAL JOIN` merge.
//!
//! A merged column is, as in PostgreSQL, the left input's column for inner
//! and left joins (the right one's for an inner join when only it has the
//! common type of the two), the right input's for right joins, and
//! `COALESCE(left, right)` for full joins, each cast to the two columns'
//! common type. PostgreSQL runs a full join only as a merge or hash join, so
//! a FULL JOIN whose condition has no equality between the two sides (and is
//! not constant) is its 0A000, here too.

use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{JoinConstraint, JoinOperator};

use crate::bind::{Binder, Entry, Scope};
use crate::plan::{common_type, comparable, BExpr, CmpOp, Func, JoinKind, Ty};

/// A column merged by `JOIN ... USING` / `NATURAL JOIN`.
#[derive(Debug, Clone)]
pub struct Merged {
    /// Flat index of the left input's column (what an unqualified name
    /// finds, standing for the merged column).
    pub left: usize,
    /// Flat index of the right input's column (which unqualified names and
    /// `*` no longer see).
    pub right: usize,
    /// The flat columns of the join it belongs to (its two inputs): `*`
    /// shows the join's merged columns before them, as PostgreSQL does.
    pub join: std::ops::Range<usize>,
    /// The merged column's value, over the query level's row.
    pub expr: BExpr,
    /// Its type.
    pub ty: Ty,
}

impl Scope {
    /// The merged column that flat column `idx` stands for, if it is the
    /// left column of one (the latest, when it was merged again).
    pub fn merged_column(&self, idx: usize) -> Option<&Merged> {
        self.merged.iter().rev().find(|m| m.left == idx)
    }

    /// The FROM item whose columns hold flat column `idx`.
    pub(super) fn entry_of(&self, idx: usize) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| idx >= e.offset && idx < e.offset + e.cols.len())
    }

    /// The name of flat column `idx`.
    pub(super) fn column_name(&self, idx: usize) -> String {
        self.entry_of(idx)
            .map(|e| e.cols[idx - e.offset].0.clone())
            .unwrap_or_default()
    }

    /// The table column an expression over this level's row reads as it
    /// is: that of a plain column, none for anything else.
    pub(super) fn expr_origin(&self, e: &BExpr) -> Option<(u32, i16)> {
        let BExpr::Col { up: 0, idx } = e else {
            return None;
        };
        self.entry_of(*idx)
            .and_then(|entry| entry.origin(idx - entry.offset))
    }
}

/// `e` (over the current level's row) as read from `up` levels further in.
pub(super) fn at_level(e: &BExpr, up: usize) -> BExpr {
    let mut e = e.clone();
    shift(&mut e, up);
    e
}

fn shift(e: &mut BExpr, up: usize) {
    if let BExpr::Col { up: level @ 0, .. } = e {
        *level = up;
    }
    e.for_each_child_mut(|c| shift(c, up));
}

/// The kind of a join and its constraint (`None` for a cross join).
pub(super) fn join_kind(
    op: &JoinOperator,
) -> Result<(JoinKind, Option<&JoinConstraint>), SqlError> {
    let (kind, constraint) = match op {
        JoinOperator::Join(c) | JoinOperator::Inner(c) => (JoinKind::Inner, c),
        JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (JoinKind::Left, c),
        JoinOperator::Right(c) | JoinOperator::RightOuter(c) => (JoinKind::Right, c),
        JoinOperator::FullOuter(c) => (JoinKind::Full, c),
        JoinOperator::CrossJoin(_) => return Ok((JoinKind::Inner, None)),
        other => return Err(SqlError::unsupported(format!("unsupported join {other:?}"))),
    };
    if kind != JoinKind::Inner && matches!(constraint, JoinConstraint::None) {
        return Err(SqlError::new(
            SqlState::SYNTAX_ERROR,
            "syntax error: an outer join needs ON, USING or NATURAL",
        ));
    }
    Ok((kind, Some(constraint)))
}

/// Fails with PostgreSQL's 0A000 unless a FULL JOIN's condition can be a
/// merge or hash join's: one of its AND-ed terms is an equality between an
/// expression of the left input and one of the right input, or all of them
/// are constants (`ON true`, `ON false`).
pub(super) fn check_full_join(on: Option<&BExpr>, left_width: usize) -> Result<(), SqlError> {
    let mut terms = Vec::new();
    let mut stack: Vec<&BExpr> = on.into_iter().collect();
    while let Some(e) = stack.pop() {
        match e {
            BExpr::And(items) => stack.extend(items),
            other => terms.push(other),
        }
    }
    let constant = |e: &BExpr| sides(e, left_width) == Some((false, false));
    let joinable = |e: &BExpr| match e {
        BExpr::Cmp(CmpOp::Eq, ..) => across(e, left_width),
        // PostgreSQL turns NOT (a <> b) into a = b.
        BExpr::Not(inner) => {
            matches!(inner.as_ref(), BExpr::Cmp(CmpOp::Ne, ..)) && across(inner, left_width)
        }
        _ => false,
    };
    if terms.iter().all(|t| constant(t)) || terms.iter().any(|t| joinable(t)) {
        return Ok(());
    }
    Err(SqlError::unsupported(
        "FULL JOIN is only supported with merge-joinable or hash-joinable join conditions",
    ))
}

/// Whether the comparison `e` compares an expression of one input of a
/// join with one of the other.
fn across(e: &BExpr, left_width: usize) -> bool {
    let BExpr::Cmp(_, a, b) = e else {
        return false;
    };
    matches!(
        (sides(a, left_width), sides(b, left_width)),
        (Some((true, false)), Some((false, true))) | (Some((false, true)), Some((true, false)))
    )
}

/// Whether `e` reads columns of the left and of the right input of a join
/// (flat indexes below and from `left_width`); `None` when it holds a
/// subquery.
fn sides(e: &BExpr, left_width: usize) -> Option<(bool, bool)> {
    fn walk(e: &BExpr, left_width: usize, found: &mut Option<(bool, bool)>) {
        if e.has_subquery() {
            *found = None;
            return;
        }
        if let (BExpr::Col { up: 0, idx }, Some((left, right))) = (e, found.as_mut()) {
            if *idx < left_width {
                *left = true;
            } else {
                *right = true;
            }
        }
        e.for_each_child(|c| walk(c, left_width, found));
    }
    let mut found = Some((false, false));
    walk(e, left_width, &mut found);
    found
}

impl Binder<'_> {
    /// The visible columns (name, flat index, type) of the flat range
    /// `start..end` of the current scope: a column merged into an earlier
    /// USING column is not one, and one that stands for a merged column has
    /// its type.
    pub(super) fn visible_columns(&self, start: usize, end: usize) -> Vec<(String, usize, Ty)> {
        let scope = self.scopes.last().cloned().unwrap_or_default();
        scope
            .entries
            .iter()
            .flat_map(|e| {
                e.cols
                    .iter()
                    .enumerate()
                    .map(move |(i, (n, t))| (n.clone(), e.offset + i, t.clone()))
            })
            .filter(|(_, idx, _)| *idx >= start && *idx < end)
            .filter(|(_, idx, _)| !scope.merged.iter().any(|m| m.right == *idx))
            .map(|(n, idx, t)| match scope.merged_column(idx) {
                Some(m) => (n, idx, m.ty.clone()),
                None => (n, idx, t),
            })
            .collect()
    }

    /// `NATURAL JOIN`: the column names both sides have, in the left side's
    /// order.
    pub(super) fn common_columns(
        &self,
        base: usize,
        left_width: usize,
        right_width: usize,
    ) -> Vec<String> {
        let split = base + left_width;
        let right = self.visible_columns(split, split + right_width);
        self.visible_columns(base, split)
            .into_iter()
            .map(|(name, _, _)| name)
            .filter(|name| right.iter().any(|(r, _, _)| r == name))
            .collect()
    }

    /// `JOIN ... USING (names)`: the equality of each named column of the
    /// left side with the right side's, and the pair merged in the scope.
    pub(super) fn merge_columns(
        &mut self,
        names: &[String],
        kind: JoinKind,
        (base, left_width, right_width): (usize, usize, usize),
    ) -> Result<BExpr, SqlError> {
        let split = base + left_width;
        let mut conditions = Vec::with_capacity(names.len());
        for name in names {
            let (left, left_ty) = using_column(self.visible_columns(base, split), name, "left")?;
            let (right, right_ty) = using_column(
                self.visible_columns(split, split + right_width),
                name,
                "right",
            )?;
            let ty = common_type(&left_ty, &right_ty, "JOIN/USING")?;
            if let (Some(l), Some(r)) = (&left_ty, &right_ty) {
                if !comparable(l, r) {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!(
                            "operator does not exist: {} = {} (JOIN/USING column \"{name}\")",
                            l.display_name(),
                            r.display_name()
                        ),
                    ));
                }
            }
            let scope = self.scope();
            let column = |idx: usize| match scope.merged_column(idx) {
                Some(m) => m.expr.clone(),
                None => BExpr::Col { up: 0, idx },
            };
            let (l, r) = (column(left), column(right));
            conditions.push(BExpr::Cmp(
                CmpOp::Eq,
                Box::new(l.clone()),
                Box::new(r.clone()),
            ));
            let expr = self.merged_expr(kind, (l, &left_ty), (r, &right_ty), &ty)?;
            self.scope().merged.push(Merged {
                left,
                right,
                join: base..split + right_width,
                expr,
                ty,
            });
        }
        Ok(match conditions.len() {
            1 => conditions.pop().expect("one"),
            _ => BExpr::And(conditions),
        })
    }

    /// The value of a merged column of a join of `kind`, of type `ty`.
    fn merged_expr(
        &mut self,
        kind: JoinKind,
        (left, left_ty): (BExpr, &Ty),
        (right, right_ty): (BExpr, &Ty),
        ty: &Ty,
    ) -> Result<BExpr, SqlError> {
        let mut cast = |e: BExpr, from: &Ty| match ty {
            Some(to) if from != ty => self.coerce(e, from, to, "JOIN/USING"),
            _ => Ok(e),
        };
        Ok(match kind {
            // Either: the one of the common type as it is, as PostgreSQL
            // prefers.
            JoinKind::Inner if left_ty != ty && right_ty == ty => right,
            JoinKind::Inner | JoinKind::Left => cast(left, left_ty)?,
            JoinKind::Right => cast(right, right_ty)?,
            JoinKind::Full => BExpr::Func(
                Func::Coalesce,
                vec![cast(left, left_ty)?, cast(right, right_ty)?],
            ),
        })
    }
}

/// The one column named `name` of one side of a USING join.
fn using_column(
    side: Vec<(String, usize, Ty)>,
    name: &str,
    which: &str,
) -> Result<(usize, Ty), SqlError> {
    let hits: Vec<_> = side.into_iter().filter(|(n, _, _)| n == name).collect();
    match hits.as_slice() {
        [(_, idx, ty)] => Ok((*idx, ty.clone())),
        [] => Err(SqlError::new(
            SqlState::UNDEFINED_COLUMN,
            format!("column \"{name}\" specified in USING clause does not exist in {which} table"),
        )),
        _ => Err(SqlError::new(
            SqlState::AMBIGUOUS_COLUMN,
            format!("common column name \"{name}\" appears more than once in {which} table"),
        )),
    }
}

impl Binder<'_> {
    /// The condition of a join nested in parentheses (or following a comma
    /// item), bound over the whole FROM row, renumbered to the join's own
    /// rows, which start at column `base`. As in PostgreSQL it may not read
    /// the FROM items before it (42P01); a correlated subquery in it is not
    /// supported (its references would need the same renumbering).
    pub(super) fn nested_join_condition(
        &self,
        mut on: BExpr,
        base: usize,
    ) -> Result<BExpr, SqlError> {
        if let Some(column) = first_column_before(&on, base) {
            // A column of an item, or its hidden `ctid`.
            let entry = self.scopes.last().and_then(|scope| {
                scope.entry_of(column).or_else(|| {
                    scope
                        .entries
                        .iter()
                        .find(|e| e.ctid.is_some_and(|(ctid, _)| ctid == column))
                })
            });
            let name = entry.map_or("?", |e| e.alias.as_str());
            return Err(SqlError::new(
                SqlState::UNDEFINED_TABLE,
                format!("invalid reference to FROM-clause entry for table \"{name}\""),
            )
            .with_hint(format!(
                "There is an entry for table \"{name}\", but it cannot be referenced from \
                 this part of the query."
            )));
        }
        if has_correlated_subquery(&on) {
            return Err(SqlError::unsupported(
                "correlated subqueries in the condition of a parenthesized join are not supported",
            ));
        }
        shift_columns(&mut on, base);
        Ok(on)
    }
}

/// The first column below `base` of this query level's row that `e` reads.
fn first_column_before(e: &BExpr, base: usize) -> Option<usize> {
    if let BExpr::Col { up: 0, idx } = e {
        if *idx < base {
            return Some(*idx);
        }
    }
    let mut found = None;
    e.for_each_child(|child| found = found.or_else(|| first_column_before(child, base)));
    found
}

/// Whether `e` holds a subquery that reads enclosing rows.
fn has_correlated_subquery(e: &BExpr) -> bool {
    let own = match e {
        BExpr::InSub(_, sub, _)
        | BExpr::Exists(sub, _)
        | BExpr::Scalar(sub)
        | BExpr::ArraySub(sub) => sub.correlated,
        _ => false,
    };
    let mut found = own;
    e.for_each_child(|child| found = found || has_correlated_subquery(child));
    found
}

/// Moves the columns `e` reads of this query level's row `by` places left.
fn shift_columns(e: &mut BExpr, by: usize) {
    if let BExpr::Col { up: 0, idx } = e {
        *idx -= by;
    }
    e.for_each_child_mut(|child| shift_columns(child, by));
}
