//! Window function calls (`f(...) OVER (PARTITION BY ... ORDER BY ...
//! [frame])`) in a SELECT's select list and ORDER BY: each becomes a column
//! appended to the SELECT's rows before the projection (see
//! [`crate::exec::window`]; frames in [`super::frames`]).

use sqlparser::ast::{Function, OrderBySort, WindowType};

use crate::bind::Binder;
use crate::plan::{AggFunc, BExpr, Ty, WindowCall, WindowFunc};
use rocklake_types::datum::PgType;
use rocklake_types::{SqlError, SqlState};

impl Binder<'_> {
    /// Binds `f` (named `name`, with positional `args`) called with OVER.
    pub(super) fn bind_window_call(
        &mut self,
        f: &Function,
        name: &str,
        args: &[&sqlparser::ast::Expr],
        star: bool,
        distinct: bool,
    ) -> Result<(BExpr, Ty), SqlError> {
        let Some(WindowType::WindowSpec(spec)) = &f.over else {
            return Err(SqlError::unsupported(format!(
                "named windows are not supported: {f}"
            )));
        };
        super::frames::check_frame(spec.window_frame.as_ref())?;
        if spec.window_name.is_some() {
            return Err(SqlError::unsupported(format!(
                "named windows are not supported: {f}"
            )));
        }
        if f.filter.is_some() || distinct {
            return Err(SqlError::unsupported(format!(
                "FILTER and DISTINCT in window functions are not supported: {f}"
            )));
        }
        if self.windows.is_none() && self.grouped_select {
            return Err(SqlError::unsupported(format!(
                "window functions over GROUP BY or aggregates are not supported: {f}"
            )));
        }
        let Some((base, _)) = &self.windows else {
            return Err(SqlError::new(
                SqlState::WINDOWING_ERROR,
                format!("window functions are not allowed here: {f}"),
            ));
        };
        let base = *base;
        let (func, arity): (WindowFunc, &[usize]) = match name {
            "row_number" => (WindowFunc::RowNumber, &[0]),
            "rank" => (WindowFunc::Rank, &[0]),
            "dense_rank" => (WindowFunc::DenseRank, &[0]),
            "lag" => (WindowFunc::Lag, &[1, 2, 3]),
            "lead" => (WindowFunc::Lead, &[1, 2, 3]),
            "first_value" => (WindowFunc::FirstValue, &[1]),
            "last_value" => (WindowFunc::LastValue, &[1]),
            "count" if star => (WindowFunc::Aggregate(AggFunc::CountStar), &[0]),
            "count" => (WindowFunc::Aggregate(AggFunc::Count), &[1]),
            "sum" => (WindowFunc::Aggregate(AggFunc::Sum), &[1]),
            "min" => (WindowFunc::Aggregate(AggFunc::Min), &[1]),
            "max" => (WindowFunc::Aggregate(AggFunc::Max), &[1]),
            "avg" => (WindowFunc::Aggregate(AggFunc::Avg), &[1]),
            "bool_and" | "every" => (WindowFunc::Aggregate(AggFunc::BoolAnd), &[1]),
            "bool_or" => (WindowFunc::Aggregate(AggFunc::BoolOr), &[1]),
            "ntile" => (WindowFunc::Ntile, &[1]),
            "percent_rank" => (WindowFunc::PercentRank, &[0]),
            "cume_dist" => (WindowFunc::CumeDist, &[0]),
            "nth_value" => (WindowFunc::NthValue, &[2]),
            other => match crate::plan::aggregate_named(other) {
                Some(func @ (AggFunc::Dispersion(_) | AggFunc::Bits(_))) => {
                    (WindowFunc::Aggregate(func), &[1])
                }
                _ => {
                    return Err(SqlError::unsupported(format!(
                        "window function {name} is not supported"
                    )))
                }
            },
        };
        if !arity.contains(&args.len()) {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!(
                    "function {name} with {} arguments does not exist",
                    args.len()
                ),
            ));
        }
        let mut bound_args = Vec::with_capacity(args.len());
        let mut types = Vec::with_capacity(args.len());
        for arg in args {
            let (b, t) = self.bind_expr(arg)?;
            bound_args.push(b);
            types.push(t);
        }
        // ntile's buckets and nth_value's position are integers.
        let position = match func {
            WindowFunc::Ntile => Some(0),
            WindowFunc::NthValue => Some(1),
            _ => None,
        };
        if let Some(at) = position {
            let b = std::mem::replace(
                &mut bound_args[at],
                BExpr::Const(rocklake_types::Datum::Null),
            );
            bound_args[at] = self.coerce(b, &types[at], &PgType::Int4, name)?;
        }
        // lag/lead: the offset is a bigint; the default takes the value's type.
        if matches!(func, WindowFunc::Lag | WindowFunc::Lead) {
            if let Some(offset) = bound_args.get_mut(1) {
                let b = std::mem::replace(offset, BExpr::Const(rocklake_types::Datum::Null));
                *offset = self.coerce(b, &types[1], &PgType::Int8, "lag/lead offset")?;
            }
            if let (Some(default), Some(Some(to))) = (bound_args.get_mut(2), types.first()) {
                let b = std::mem::replace(default, BExpr::Const(rocklake_types::Datum::Null));
                *default = self.coerce(b, &types[2], to, "lag/lead default")?;
            }
        }
        let ty: Ty = match func {
            WindowFunc::RowNumber | WindowFunc::Rank | WindowFunc::DenseRank => Some(PgType::Int8),
            WindowFunc::Aggregate(AggFunc::CountStar | AggFunc::Count) => Some(PgType::Int8),
            WindowFunc::Aggregate(AggFunc::BoolAnd | AggFunc::BoolOr) => Some(PgType::Bool),
            WindowFunc::Ntile => Some(PgType::Int4),
            WindowFunc::PercentRank | WindowFunc::CumeDist => Some(PgType::Float8),
            WindowFunc::Aggregate(AggFunc::Dispersion(_)) => match types.first().cloned().flatten()
            {
                Some(PgType::Float4 | PgType::Float8) => Some(PgType::Float8),
                _ => Some(PgType::Numeric(None)),
            },
            WindowFunc::Aggregate(AggFunc::Sum) => sum_type(types.first().cloned().flatten()),
            WindowFunc::Aggregate(AggFunc::Avg) => match types.first().cloned().flatten() {
                Some(PgType::Float4 | PgType::Float8) => Some(PgType::Float8),
                _ => Some(PgType::Numeric(None)),
            },
            _ => types.first().cloned().flatten(),
        };
        let mut partition = Vec::with_capacity(spec.partition_by.len());
        for e in &spec.partition_by {
            partition.push(self.bind_expr(e)?.0);
        }
        let mut order = Vec::with_capacity(spec.order_by.len());
        for o in &spec.order_by {
            let desc = matches!(o.options.sort, Some(OrderBySort::Desc));
            let nulls_first = o.options.nulls_first.unwrap_or(desc);
            order.push((self.bind_expr(&o.expr)?.0, desc, nulls_first));
        }
        let frame = self.bind_frame(spec.window_frame.as_ref(), !order.is_empty())?;
        let (_, calls) = self.windows.as_mut().expect("checked above");
        calls.push(WindowCall {
            func,
            args: bound_args,
            partition,
            order,
            frame,
        });
        Ok((
            BExpr::Col {
                up: 0,
                idx: base + calls.len() - 1,
            },
            ty,
        ))
    }
}

/// The result type of `sum` over values of type `t`, as PostgreSQL's.
fn sum_type(t: Option<PgType>) -> Ty {
    Some(match t {
        Some(PgType::Int2 | PgType::Int4) => PgType::Int8,
        Some(PgType::Float4) => PgType::Float4,
        Some(PgType::Float8) => PgType::Float8,
        _ => PgType::Numeric(None),
    })
}
