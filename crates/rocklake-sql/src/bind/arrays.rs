//! Binding of array expressions (`ARRAY[...]`, `ARRAY(subquery)`,
//! `a[i]`, `x op ANY/ALL (array)`) and of the set-returning calls of a
//! select list (`unnest`, `generate_subscripts`, `generate_series`).

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{AccessExpr, Array, Expr, Query, Subscript};

use crate::bind::Binder;
use crate::functions::datetime::series::SERIES_ARRAY;
use crate::plan::{common_type, BExpr, CmpOp, Form, FromPlan, Func, SetCall, SetFunc, Ty};

/// Column indexes from here up stand for set-returning calls until the
/// select list is bound and their real place (after every other column of
/// the rows the projection reads) is known.
const SET_CALL_PLACEHOLDER: usize = 1 << 40;

impl Binder<'_> {
    /// `ARRAY[e1, e2, ...]`: the elements resolved to one type.
    pub(super) fn bind_array_constructor(
        &mut self,
        array: &Array,
    ) -> Result<(BExpr, Ty), SqlError> {
        let mut bound = Vec::with_capacity(array.elem.len());
        let mut element: Ty = None;
        for item in &array.elem {
            let (b, t) = self.bind_expr(item)?;
            element = common_type(&element, &t, "ARRAY")?;
            bound.push((b, t));
        }
        let element = match element {
            Some(t) if t.is_array() => {
                return Err(SqlError::unsupported(
                    "multidimensional arrays are not supported",
                ))
            }
            Some(t) => t,
            None if bound.is_empty() => {
                return Err(SqlError::new(
                    SqlState::INDETERMINATE_DATATYPE,
                    "cannot determine type of empty array",
                )
                .with_hint("Explicitly cast to the desired type, for example ARRAY[]::integer[]."))
            }
            None => PgType::Text,
        };
        let mut items = Vec::with_capacity(bound.len());
        for (b, t) in bound {
            items.push(self.coerce(b, &t, &element, "ARRAY")?);
        }
        let array = match items.iter().all(|i| matches!(i, BExpr::Const(_))) {
            true => BExpr::Const(Datum::array(
                items
                    .into_iter()
                    .map(|i| match i {
                        BExpr::Const(d) => d,
                        _ => unreachable!("all constants"),
                    })
                    .collect::<Vec<_>>(),
            )),
            false => BExpr::Array(items),
        };
        Ok((array, Some(PgType::array_of(element))))
    }

    /// `a || b` where one side is an array: the arrays concatenated, or the
    /// element appended or prepended.
    pub(super) fn bind_array_concat(
        &mut self,
        (l, lt): (BExpr, Ty),
        (r, rt): (BExpr, Ty),
    ) -> Result<(BExpr, Ty), SqlError> {
        let array_of = |t: &Ty| t.as_ref().filter(|t| t.is_array()).cloned();
        // An untyped operand beside an array is an array too (`'{1}'`).
        let (array_type, func) = match (array_of(&lt), array_of(&rt)) {
            (Some(a), Some(_)) => (a, Func::ArrayCat),
            (Some(a), None) if rt.is_none() => (a, Func::ArrayCat),
            (Some(a), None) => (a, Func::ArrayAppend),
            (None, Some(a)) if lt.is_none() => (a, Func::ArrayCat),
            (None, Some(a)) => (a, Func::ArrayPrepend),
            (None, None) => return Err(SqlError::internal("array concatenation without an array")),
        };
        // Vectors concatenate as the arrays of their elements.
        let element = array_type.element_type().unwrap_or(PgType::Text);
        let array_type = PgType::array_of(element.clone());
        let (l_to, r_to) = match func {
            Func::ArrayAppend => (array_type.clone(), element),
            Func::ArrayPrepend => (element, array_type.clone()),
            _ => (array_type.clone(), array_type.clone()),
        };
        let l = self.coerce_or_cast(l, &lt, &l_to)?;
        let r = self.coerce_or_cast(r, &rt, &r_to)?;
        Ok((BExpr::Func(func, vec![l, r]), Some(array_type)))
    }

    fn coerce_or_cast(&mut self, b: BExpr, from: &Ty, to: &PgType) -> Result<BExpr, SqlError> {
        match from {
            Some(t) if t != to && (t.is_array() || to.is_array()) => {
                Ok(BExpr::Cast(Box::new(b), to.clone()))
            }
            _ => self.coerce(b, from, to, "||"),
        }
    }

    /// `ARRAY(subquery)`: the subquery's one column as an array.
    pub(super) fn bind_array_subquery(&mut self, q: &Query) -> Result<(BExpr, Ty), SqlError> {
        let (sub, t) = self.bind_subquery(q)?;
        if sub.plan.columns.len() != 1 {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "subquery must return only one column",
            ));
        }
        let element = t.unwrap_or(PgType::Text);
        if element.is_array() {
            return Err(SqlError::unsupported(
                "multidimensional arrays are not supported",
            ));
        }
        Ok((BExpr::ArraySub(sub), Some(PgType::array_of(element))))
    }

    /// `a[i]` (one subscript; slices are refused).
    pub(super) fn bind_subscripts(
        &mut self,
        root: &Expr,
        chain: &[AccessExpr],
    ) -> Result<(BExpr, Ty), SqlError> {
        // `t.col[i]` parses as `t` with the accesses `.col` and `[i]`: the
        // leading `.name`s of an identifier are its qualified column name.
        let mut path: Vec<String> = match root {
            Expr::Identifier(id) => vec![crate::ident::fold(id)],
            Expr::CompoundIdentifier(ids) => ids.iter().map(crate::ident::fold).collect(),
            _ => Vec::new(),
        };
        let names = if path.is_empty() {
            0
        } else {
            chain
                .iter()
                .take_while(|a| matches!(a, AccessExpr::Dot(Expr::Identifier(_))))
                .count()
        };
        for access in &chain[..names] {
            if let AccessExpr::Dot(Expr::Identifier(id)) = access {
                path.push(crate::ident::fold(id));
            }
        }
        let (mut b, mut t) = if names > 0 {
            self.resolve_column(&path)?
        } else {
            self.bind_expr(root)?
        };
        for access in &chain[names..] {
            if let AccessExpr::Dot(Expr::Identifier(field)) = access {
                (b, t) = field_of(b, t, field)?;
                continue;
            }
            let AccessExpr::Subscript(Subscript::Index { index }) = access else {
                return Err(SqlError::unsupported(format!(
                    "array slices and field access are not supported: {access}"
                )));
            };
            let Some(element) = t.as_ref().and_then(PgType::element_type) else {
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "cannot subscript type {} because it does not support subscripting",
                        t.as_ref().map_or("unknown", PgType::display_name)
                    ),
                ));
            };
            let (ib, it) = self.bind_expr(index)?;
            let ib = self.coerce(ib, &it, &PgType::Int4, "array subscript")?;
            b = BExpr::Subscript(Box::new(b), Box::new(ib));
            t = Some(element);
        }
        Ok((b, t))
    }

    /// `x op ANY (array)` / `x op ALL (array)` over an array value.
    pub(super) fn bind_any_all(
        &mut self,
        left: &Expr,
        op: CmpOp,
        right: &Expr,
        all: bool,
    ) -> Result<(BExpr, Ty), SqlError> {
        let (rb, rt) = self.bind_expr(right)?;
        let (lb, lt) = self.bind_expr(left)?;
        let element = match (&rt, &lt) {
            (Some(t), _) => t.element_type().ok_or_else(|| {
                SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "op ANY/ALL (array) requires array on right side, not {}",
                        t.display_name()
                    ),
                )
            })?,
            (None, Some(t)) => t.clone(),
            (None, None) => PgType::Text,
        };
        let rb = self.coerce(rb, &rt, &PgType::array_of(element.clone()), "ANY/ALL")?;
        let target = common_type(&lt, &Some(element), "ANY/ALL")?.unwrap_or(PgType::Text);
        let lb = self.coerce(lb, &lt, &target, "ANY/ALL")?;
        Ok((
            BExpr::AnyAll(op, Box::new(lb), Box::new(rb), all),
            Some(PgType::Bool),
        ))
    }

    /// A set-returning call of the select list: bound, registered, and
    /// standing for its column.
    pub(super) fn bind_set_call(
        &mut self,
        name: &str,
        args: &[&Expr],
    ) -> Result<(BExpr, Ty), SqlError> {
        let Some(calls) = self.set_calls.take() else {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("set-returning function {name}() is not supported here"),
            ));
        };
        // Arguments may not hold set-returning calls themselves.
        let bound = self.bind_set_args(name, args);
        self.set_calls = Some(calls);
        let (func, args, ty) = bound?;
        let calls = self.set_calls.as_mut().expect("restored above");
        calls.push(SetCall { func, args });
        Ok((
            BExpr::Col {
                up: 0,
                idx: SET_CALL_PLACEHOLDER + calls.len() - 1,
            },
            ty,
        ))
    }

    /// A set-returning function as a FROM item: one column, named by the
    /// alias (or its column list), else by the function. Its arguments see
    /// the enclosing queries, not the sibling FROM items (no LATERAL).
    pub(super) fn bind_from_function(
        &mut self,
        name: &str,
        args: &[&Expr],
        alias: Option<&sqlparser::ast::TableAlias>,
        ordinality: bool,
    ) -> Result<FromPlan, SqlError> {
        if !is_set_function(name) {
            return Err(SqlError::unsupported(format!(
                "function {name}() is not supported in FROM"
            )));
        }
        let saved = std::mem::take(self.scope());
        let saved_agg = self.agg.take();
        let saved_calls = self.set_calls.take();
        let bound = self.bind_set_args(name, args);
        self.set_calls = saved_calls;
        self.agg = saved_agg;
        *self.scope() = saved;
        let (func, args, ty) = bound?;
        let entry = alias.map_or_else(|| name.to_string(), |a| crate::ident::fold(&a.name));
        let (mut columns, spread) = match &ty {
            // A function returning rows: their fields are the columns.
            Some(PgType::Record(fields)) => (
                fields
                    .iter()
                    .map(|(field, field_type)| (field.clone(), Some(field_type.clone())))
                    .collect(),
                true,
            ),
            // Named by its output parameter, else by the alias or itself.
            _ => {
                let column = output_name(name).map_or_else(|| entry.clone(), str::to_string);
                (vec![(column, ty)], false)
            }
        };
        if ordinality {
            columns.push(("ordinality".to_string(), Some(PgType::Int8)));
        }
        self.add_function_entry(alias, entry, columns);
        Ok(FromPlan::Function {
            call: SetCall { func, args },
            spread,
            ordinality,
        })
    }

    fn bind_set_args(
        &mut self,
        name: &str,
        args: &[&Expr],
    ) -> Result<(SetFunc, Vec<BExpr>, Ty), SqlError> {
        let mut bound = Vec::with_capacity(args.len());
        let mut types = Vec::with_capacity(args.len());
        for arg in args {
            let (b, t) = self.bind_expr(arg)?;
            bound.push(b);
            types.push(t);
        }
        let array_arg = |t: &Ty| -> Result<PgType, SqlError> {
            t.as_ref().and_then(PgType::element_type).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!(
                        "function {name}({}) does not exist",
                        t.as_ref().map_or("unknown", PgType::display_name)
                    ),
                )
            })
        };
        if let Some(hidden) = array_behind(name) {
            // The library's array of the values, unnested.
            let args = bound.into_iter().zip(types).collect();
            let candidates = crate::functions::functions(hidden);
            let (array, ty) = self.bind_resolved(name, Form::Function, candidates, args)?;
            let element = array_arg(&ty)?;
            return Ok((SetFunc::Unnest, vec![array], Some(element)));
        }
        Ok(match (name, bound.len()) {
            ("unnest", 1) => {
                let element = array_arg(&types[0])?;
                (SetFunc::Unnest, bound, Some(element))
            }
            (EXPAND_ARRAY, 1) => {
                let element = array_arg(&types[0])?;
                let row = vec![("x".to_string(), element), ("n".to_string(), PgType::Int4)];
                (
                    SetFunc::ExpandArray,
                    bound,
                    Some(PgType::Record(row.into())),
                )
            }
            ("generate_subscripts", 2 | 3) => {
                array_arg(&types[0])?;
                let mut out = vec![bound.remove(0)];
                let dimension = bound.remove(0);
                out.push(self.coerce(dimension, &types[1], &PgType::Int4, name)?);
                if let Some(reverse) = bound.pop() {
                    out.push(self.coerce(reverse, &types[2], &PgType::Bool, name)?);
                }
                (SetFunc::GenerateSubscripts, out, Some(PgType::Int4))
            }
            ("generate_series", 3) if types.iter().flatten().any(is_time) => {
                let args = bound.into_iter().zip(types).collect();
                let candidates = crate::functions::functions(SERIES_ARRAY);
                let (array, ty) = self.bind_resolved(name, Form::Function, candidates, args)?;
                let element = array_arg(&ty)?;
                (SetFunc::Unnest, vec![array], Some(element))
            }
            ("generate_series", 2 | 3) => {
                let mut ty: Ty = None;
                for t in &types {
                    ty = common_type(&ty, t, name)?;
                }
                let ty = match ty.unwrap_or(PgType::Int4) {
                    PgType::Int2 | PgType::Int4 => PgType::Int4,
                    PgType::Int8 => PgType::Int8,
                    other => {
                        return Err(SqlError::unsupported(format!(
                            "generate_series over {} is not supported",
                            other.display_name()
                        )))
                    }
                };
                let mut out = Vec::with_capacity(bound.len());
                for (b, t) in bound.into_iter().zip(&types) {
                    out.push(self.coerce(b, t, &ty, name)?);
                }
                (SetFunc::GenerateSeries, out, Some(ty))
            }
            _ => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!(
                        "function {name} with {} arguments does not exist",
                        bound.len()
                    ),
                ))
            }
        })
    }
}

/// `(row).field`: the field of a row value, by name; PostgreSQL's errors
/// for a field a row lacks and for a value that is not a row.
fn field_of(row: BExpr, ty: Ty, field: &sqlparser::ast::Ident) -> Result<(BExpr, Ty), SqlError> {
    let name = crate::ident::fold(field);
    match &ty {
        Some(PgType::Record(fields)) => {
            let Some(i) = fields.iter().position(|(n, _)| *n == name) else {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("could not identify column \"{name}\" in record data type"),
                ));
            };
            let field_type = fields[i].1.clone();
            Ok((
                BExpr::Func(Func::RecordField(i), vec![row]),
                Some(field_type),
            ))
        }
        other => Err(SqlError::new(
            SqlState::WRONG_OBJECT_TYPE,
            format!(
                "column notation .{name} applied to type {}, which is not a composite type",
                other.as_ref().map_or("unknown", PgType::display_name)
            ),
        )),
    }
}

/// Points the placeholders of set-returning calls in `e` at their columns,
/// which follow the `width` columns of the rows the projection reads.
pub(super) fn place_set_calls(e: &mut BExpr, width: usize) {
    if let BExpr::Col { up: 0, idx } = e {
        if *idx >= SET_CALL_PLACEHOLDER {
            *idx = width + (*idx - SET_CALL_PLACEHOLDER);
        }
        return;
    }
    e.for_each_child_mut(|child| place_set_calls(child, width));
}

/// Whether a function name is one of the set-returning functions.
pub(super) fn is_set_function(name: &str) -> bool {
    matches!(
        name,
        "unnest" | "generate_subscripts" | "generate_series" | EXPAND_ARRAY
    ) || array_behind(name).is_some()
}

/// Whether a `generate_series` argument makes it a series of timestamps.
fn is_time(t: &PgType) -> bool {
    matches!(
        t,
        PgType::Date | PgType::Timestamp | PgType::TimestampTz | PgType::Interval
    )
}

/// The name of a set-returning function's one output parameter, which
/// names its column in FROM whatever the alias.
fn output_name(name: &str) -> Option<&'static str> {
    crate::functions::json::sets::SET_FUNCTIONS
        .iter()
        .find(|(set, _, _)| *set == name)
        .and_then(|(_, _, column)| *column)
}

/// The library function whose array holds the values of set-returning
/// function `name`, for those computed that way.
fn array_behind(name: &str) -> Option<&'static str> {
    use crate::functions::strings::{regex, STRING_TO_TABLE_ARRAY};

    Some(match name {
        "regexp_matches" => regex::MATCHES_ARRAY,
        "regexp_split_to_table" => regex::SPLIT_ARRAY,
        "string_to_table" => STRING_TO_TABLE_ARRAY,
        "pg_listening_channels" => crate::functions::activity::LISTENING_CHANNELS_ARRAY,
        _ => {
            return crate::functions::json::sets::SET_FUNCTIONS
                .iter()
                .find(|(set, _, _)| *set == name)
                .map(|(_, array, _)| *array)
        }
    })
}

/// PostgreSQL's `information_schema._pg_expandarray(anyarray)`, returning
/// `SETOF record (x anyelement, n int)`: only by this qualified name, as
/// `information_schema` is not on the search path.
pub(super) const EXPAND_ARRAY: &str = "information_schema._pg_expandarray";

/// The comparison operator of a binary operator, if it is one.
pub(super) fn comparison(op: &sqlparser::ast::BinaryOperator) -> Option<CmpOp> {
    use sqlparser::ast::BinaryOperator as Op;
    Some(match op {
        Op::Eq => CmpOp::Eq,
        Op::NotEq => CmpOp::Ne,
        Op::Lt => CmpOp::Lt,
        Op::LtEq => CmpOp::Le,
        Op::Gt => CmpOp::Gt,
        Op::GtEq => CmpOp::Ge,
        _ => return None,
    })
}
