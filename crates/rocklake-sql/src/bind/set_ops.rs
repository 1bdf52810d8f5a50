//! Set operations between queries: `UNION`, `INTERSECT` and `EXCEPT`, each
//! with `ALL` or not. Each result column takes the common type of the two
//! sides' columns, as PostgreSQL resolves it, and the left side's name;
//! `INTERSECT` binds tighter than `UNION` and `EXCEPT` (the parser nests
//! them so). See [`crate::exec::set_ops`] for how they run.

use rocklake_types::datum::PgType;
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{SetExpr, SetOperator, SetQuantifier};

use crate::bind::Binder;
use crate::plan::{common_type, OutCol, SetOperation, SetPlan};

impl Binder<'_> {
    /// Binds `left op right`.
    pub(super) fn bind_set_operation(
        &mut self,
        left: &SetExpr,
        op: &SetOperator,
        quantifier: &SetQuantifier,
        right: &SetExpr,
    ) -> Result<(SetPlan, Vec<OutCol>), SqlError> {
        let op = match op {
            SetOperator::Union => SetOperation::Union,
            SetOperator::Intersect => SetOperation::Intersect,
            SetOperator::Except => SetOperation::Except,
            other => return Err(SqlError::unsupported(format!("{other} is not supported"))),
        };
        let all = keeps_duplicates(op, quantifier)?;
        let (left_plan, left_cols) = self.bind_set_expr(left)?;
        let (right_plan, right_cols) = self.bind_set_expr(right)?;
        let keyword = op.keyword();
        if left_cols.len() != right_cols.len() {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("each {keyword} query must have the same number of columns"),
            ));
        }
        let mut cols = Vec::with_capacity(left_cols.len());
        let (mut left_casts, mut right_casts) = (Vec::new(), Vec::new());
        for (l, r) in left_cols.iter().zip(&right_cols) {
            let t = common_type(&l.ty, &r.ty, keyword)?.or(Some(PgType::Text));
            left_casts.push(if l.ty == t { None } else { t.clone() });
            right_casts.push(if r.ty == t { None } else { t.clone() });
            cols.push(OutCol {
                name: l.name.clone(),
                ty: t,
                origin: None,
            });
        }
        let plan = SetPlan::SetOp {
            op,
            left: Box::new(left_plan),
            right: Box::new(right_plan),
            all,
            left_casts,
            right_casts,
        };
        Ok((plan, cols))
    }
}

/// Whether a set operation keeps duplicates (`ALL`) or drops them.
fn keeps_duplicates(op: SetOperation, quantifier: &SetQuantifier) -> Result<bool, SqlError> {
    match quantifier {
        SetQuantifier::All => Ok(true),
        SetQuantifier::Distinct | SetQuantifier::None => Ok(false),
        other => Err(SqlError::unsupported(format!(
            "{} {other} is not supported",
            op.keyword()
        ))),
    }
}

/// Whether a UNION keeps duplicates (`ALL`) or drops them.
pub(crate) fn union_all(quantifier: &SetQuantifier) -> Result<bool, SqlError> {
    keeps_duplicates(SetOperation::Union, quantifier)
}
