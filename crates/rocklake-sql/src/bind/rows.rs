//! Row values: `ROW(...)` and `(a, b)` constructors (fields `f1`, `f2`,
//! ...), whole-row references (`t`, and `t.*` as a function argument:
//! the FROM item's row, its fields named by its columns), and the
//! comparison of two row constructors, which PostgreSQL makes field by
//! field with SQL's NULL rules (other row values compare as records:
//! NULL fields equal, and above the others).

use std::sync::Arc;

use rocklake_types::datum::PgType;
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, ObjectName};

use crate::bind::Binder;
use crate::ident::fold;
use crate::plan::{BExpr, CmpOp, Func, Ty};

impl Binder<'_> {
    /// `ROW(...)` or `(a, b, ...)`; in `ROW`, `t.*` stands for `t`'s
    /// columns.
    pub(super) fn bind_row(&mut self, items: &[RowItem<'_>]) -> Result<(BExpr, Ty), SqlError> {
        let mut values = Vec::with_capacity(items.len());
        let mut fields = Vec::with_capacity(items.len());
        for item in items {
            match item {
                RowItem::Expr(e) => {
                    let (b, t) = self.bind_expr(e)?;
                    // An untyped literal stays `unknown` (its text).
                    let b = self.coerce(b, &t, &t.clone().unwrap_or(PgType::Text), "ROW")?;
                    values.push(b);
                    fields.push(t.unwrap_or(PgType::Unknown));
                }
                RowItem::Columns(name) => {
                    let columns = self.whole_row(&entry_name(name)?)?;
                    for (b, (_, t)) in columns {
                        values.push(b);
                        fields.push(t);
                    }
                }
            }
        }
        let fields: Vec<(String, PgType)> = fields
            .into_iter()
            .enumerate()
            .map(|(i, t)| (format!("f{}", i + 1), t))
            .collect();
        Ok((
            BExpr::Func(Func::Row, values),
            Some(PgType::Record(Arc::from(fields))),
        ))
    }

    /// Whether `name` names a FROM item in scope.
    pub(super) fn names_from_item(&self, name: &str) -> bool {
        self.scopes
            .iter()
            .any(|scope| scope.entries.iter().any(|e| e.alias == name))
    }

    /// The whole row of the FROM item `name` as a value.
    pub(super) fn bind_whole_row(&mut self, name: &str) -> Result<(BExpr, Ty), SqlError> {
        let columns = self.whole_row(name)?;
        let (values, fields): (Vec<_>, Vec<_>) = columns.into_iter().unzip();
        Ok((
            BExpr::Func(Func::Row, values),
            Some(PgType::Record(Arc::from(fields))),
        ))
    }

    /// The columns of FROM item `name` (innermost first), bound, with their
    /// names and types.
    fn whole_row(&mut self, name: &str) -> Result<Vec<(BExpr, Field)>, SqlError> {
        let columns = self
            .scopes
            .iter()
            .rev()
            .find_map(|scope| scope.entries.iter().find(|e| e.alias == name))
            .map(|entry| entry.cols.clone())
            .ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{name}\" does not exist"),
                )
            })?;
        let mut out = Vec::with_capacity(columns.len());
        for (column, _) in &columns {
            let (b, t) = self.resolve_column(&[name.to_string(), column.clone()])?;
            out.push((b, (column.clone(), t.unwrap_or(PgType::Text))));
        }
        Ok(out)
    }

    /// `x::record`: a row value as it is; text cannot be read as an
    /// anonymous row (PostgreSQL's 0A000), nor another type cast.
    pub(super) fn bind_record_cast(&mut self, expr: &Expr) -> Result<(BExpr, Ty), SqlError> {
        let (b, t) = self.bind_expr(expr)?;
        match &t {
            Some(PgType::Record(_)) => Ok((b, t)),
            None => Err(SqlError::unsupported(
                "input of anonymous composite types is not implemented",
            )),
            Some(other) => Err(SqlError::new(
                SqlState::CANNOT_COERCE,
                format!("cannot cast type {} to record", other.display_name()),
            )),
        }
    }

    /// `left IS [NOT] DISTINCT FROM right` of two row constructors: field
    /// by field; `None` when they are not both constructors.
    pub(super) fn bind_row_distinct(
        &mut self,
        left: &Expr,
        right: &Expr,
        not_distinct: bool,
    ) -> Option<Result<(BExpr, Ty), SqlError>> {
        let (l, r) = (row_constructor(left)?, row_constructor(right)?);
        Some((|| {
            if l.len() != r.len() {
                return Err(unequal_rows());
            }
            let mut parts = Vec::with_capacity(l.len());
            for (a, b) in l.iter().zip(&r) {
                parts.push(self.bind_is_distinct(a, b, not_distinct)?.0);
            }
            let node = if not_distinct {
                BExpr::And(parts)
            } else {
                BExpr::Or(parts)
            };
            Ok((node, Some(PgType::Bool)))
        })())
    }

    /// `row [NOT] IN (row, ...)` of row constructors: `row = item OR ...`
    /// (`<> ... AND` when negated); `None` when `x` is not a constructor.
    pub(super) fn bind_row_in_list(
        &mut self,
        x: &Expr,
        list: &[Expr],
        negated: bool,
    ) -> Option<Result<(BExpr, Ty), SqlError>> {
        row_constructor(x)?;
        let op = if negated { CmpOp::Ne } else { CmpOp::Eq };
        Some((|| {
            let mut parts = Vec::with_capacity(list.len());
            for item in list {
                parts.push(self.bind_cmp(op, x, item)?.0);
            }
            let node = if negated {
                BExpr::And(parts)
            } else {
                BExpr::Or(parts)
            };
            Ok((node, Some(PgType::Bool)))
        })())
    }

    /// `left op right` when both are row constructors: PostgreSQL's
    /// field-by-field comparison; `None` when they are not.
    pub(super) fn bind_row_comparison(
        &mut self,
        op: CmpOp,
        left: &Expr,
        right: &Expr,
    ) -> Option<Result<(BExpr, Ty), SqlError>> {
        let (l, r) = (row_constructor(left)?, row_constructor(right)?);
        Some(self.compare_fields(op, &l, &r))
    }

    fn compare_fields(
        &mut self,
        op: CmpOp,
        left: &[&Expr],
        right: &[&Expr],
    ) -> Result<(BExpr, Ty), SqlError> {
        if left.len() != right.len() {
            return Err(unequal_rows());
        }
        if left.is_empty() {
            return Err(SqlError::unsupported("cannot compare rows of zero length"));
        }
        let bool_type = Some(PgType::Bool);
        let mut pairs = Vec::with_capacity(left.len());
        for (l, r) in left.iter().zip(right) {
            pairs.push((*l, *r));
        }
        match op {
            CmpOp::Eq | CmpOp::Ne => {
                let mut parts = Vec::with_capacity(pairs.len());
                for (l, r) in pairs {
                    parts.push(self.bind_cmp(op, l, r)?.0);
                }
                let node = if op == CmpOp::Eq {
                    BExpr::And(parts)
                } else {
                    BExpr::Or(parts)
                };
                Ok((node, bool_type))
            }
            _ => {
                // (l1 < r1) OR (l1 = r1 AND (...the rest...)), the last
                // pair with the operator itself.
                let strict = match op {
                    CmpOp::Le => CmpOp::Lt,
                    CmpOp::Ge => CmpOp::Gt,
                    other => other,
                };
                let (last_l, last_r) = pairs.pop().expect("at least one pair");
                let mut node = self.bind_cmp(op, last_l, last_r)?.0;
                while let Some((l, r)) = pairs.pop() {
                    let before = self.bind_cmp(strict, l, r)?.0;
                    let equal = self.bind_cmp(CmpOp::Eq, l, r)?.0;
                    node = BExpr::Or(vec![before, BExpr::And(vec![equal, node])]);
                }
                Ok((node, bool_type))
            }
        }
    }
}

/// PostgreSQL's errors for two row values that cannot be compared.
pub(super) fn check_comparable_records(
    left: &[(String, PgType)],
    right: &[(String, PgType)],
) -> Result<(), SqlError> {
    if left.len() != right.len() {
        return Err(SqlError::new(
            SqlState::DATATYPE_MISMATCH,
            "cannot compare record types with different numbers of columns",
        ));
    }
    for (i, ((_, l), (_, r))) in left.iter().zip(right).enumerate() {
        if !crate::plan::comparable(l, r) {
            return Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!(
                    "cannot compare dissimilar column types {} and {} at record column {}",
                    l.display_name(),
                    r.display_name(),
                    i + 1
                ),
            ));
        }
    }
    Ok(())
}

fn unequal_rows() -> SqlError {
    SqlError::new(
        SqlState::SYNTAX_ERROR,
        "unequal number of entries in row expressions",
    )
}

/// A field of a row type: its name and type.
type Field = (String, PgType);

/// An item of a `ROW(...)` constructor.
pub(super) enum RowItem<'a> {
    /// A field's expression.
    Expr(&'a Expr),
    /// `t.*`: the columns of `t`.
    Columns(&'a ObjectName),
}

/// The items of `ROW(...)`, or `None` when `f` is not that.
pub(super) fn row_items(f: &Function) -> Option<Result<Vec<RowItem<'_>>, SqlError>> {
    if f.name.0.len() != 1 || !f.name.to_string().eq_ignore_ascii_case("row") {
        return None;
    }
    let list = match &f.args {
        FunctionArguments::List(list) => list,
        FunctionArguments::None => return Some(Ok(Vec::new())),
        FunctionArguments::Subquery(_) => return None,
    };
    Some(
        list.args
            .iter()
            .map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(RowItem::Expr(e)),
                FunctionArg::Unnamed(FunctionArgExpr::QualifiedWildcard(name)) => {
                    Ok(RowItem::Columns(name))
                }
                other => Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("syntax error at or near \"{other}\""),
                )),
            })
            .collect(),
    )
}

/// The field expressions of a row constructor (`ROW(a, b)`, `(a, b)`)
/// without `t.*` items.
fn row_constructor(e: &Expr) -> Option<Vec<&Expr>> {
    match e {
        Expr::Tuple(items) => Some(items.iter().collect()),
        Expr::Nested(inner) => row_constructor(inner),
        Expr::Function(f) => row_items(f)?
            .ok()?
            .into_iter()
            .map(|item| match item {
                RowItem::Expr(e) => Some(e),
                RowItem::Columns(_) => None,
            })
            .collect(),
        _ => None,
    }
}

/// The FROM item a `t.*` names (its last part).
pub(super) fn entry_name(name: &ObjectName) -> Result<String, SqlError> {
    match name.0.last().and_then(|p| p.as_ident()) {
        Some(ident) => Ok(fold(ident)),
        None => Err(SqlError::unsupported(format!(
            "unsupported reference {name}.*"
        ))),
    }
}

/// `f` with each `t.*` argument replaced by the whole-row reference `t`
/// (outside `ROW`, `t.*` as an argument is the row itself), or `None`
/// when it has none.
pub(super) fn with_whole_rows(f: &Function) -> Option<Function> {
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    let has_star = list.args.iter().any(|a| {
        matches!(
            a,
            FunctionArg::Unnamed(FunctionArgExpr::QualifiedWildcard(_))
        )
    });
    if !has_star {
        return None;
    }
    let mut f = f.clone();
    if let FunctionArguments::List(list) = &mut f.args {
        for arg in &mut list.args {
            if let FunctionArg::Unnamed(FunctionArgExpr::QualifiedWildcard(name)) = arg {
                let parts: Vec<_> = name
                    .0
                    .iter()
                    .filter_map(|p| p.as_ident().cloned())
                    .collect();
                let e = match parts.as_slice() {
                    [one] => Expr::Identifier(one.clone()),
                    _ => Expr::CompoundIdentifier(parts),
                };
                *arg = FunctionArg::Unnamed(FunctionArgExpr::Expr(e));
            }
        }
    }
    Some(f)
}
