//! Binding of expressions: name resolution, PostgreSQL's unknown-literal
//! coercion, operator typing, functions and aggregates.

use rocklake_types::datum::{Datum, PgType};
use sqlparser::ast::{CaseWhen, DataType, Expr, Ident, ObjectNamePart, Query, Value};

use crate::bind::Binder;
use crate::catalog::RegKind;
use crate::exec::cast::cast_datum;
use crate::ident::fold;
use crate::plan::{common_type, comparable, BExpr, CmpOp, Func, SubPlan, Ty};
use rocklake_types::value::numeric;
use rocklake_types::value::text::parse_text;
use rocklake_types::{SqlError, SqlState};

/// The PgType a SQL data type names; 42704 for types RockLake does not have.
pub fn pg_type_of(dt: &DataType) -> Result<PgType, SqlError> {
    let spelled = dt.to_string();
    // Built-in types live in pg_catalog: `pg_catalog.text` is `text`.
    let spelled = match spelled.get(..11) {
        Some(prefix) if prefix.eq_ignore_ascii_case("pg_catalog.") => spelled[11..].to_string(),
        _ => spelled,
    };
    let spelled = match spelled.to_ascii_uppercase().as_str() {
        "DOUBLE" => "DOUBLE PRECISION".to_string(),
        s if s.starts_with("CHARACTER VARYING") || s.starts_with("VARCHAR(") => {
            "VARCHAR".to_string()
        }
        _ => spelled,
    };
    PgType::from_sql_name(&spelled).ok_or_else(|| {
        let shown = match dt {
            DataType::Custom(name, _) => name
                .0
                .iter()
                .map(|p| match p {
                    ObjectNamePart::Identifier(id) => fold(id),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join("."),
            other => other.to_string().to_lowercase(),
        };
        SqlError::new(
            SqlState::UNDEFINED_OBJECT,
            format!("type \"{shown}\" does not exist"),
        )
    })
}

fn same_storage(a: &PgType, b: &PgType) -> bool {
    a == b || a.is_string() && b.is_string() && *a != PgType::Char && *b != PgType::Char
}

pub(super) fn int_literal(s: &str) -> Datum {
    if let Ok(v) = s.parse::<i32>() {
        Datum::Int4(v)
    } else if let Ok(v) = s.parse::<i64>() {
        Datum::Int8(v)
    } else {
        Datum::Numeric(numeric::parse(s).unwrap_or_else(|| s.to_string()))
    }
}

pub(super) fn datum_type(d: &Datum) -> Ty {
    match d {
        Datum::Int4(_) => Some(PgType::Int4),
        Datum::Int8(_) => Some(PgType::Int8),
        _ => Some(PgType::Numeric(None)),
    }
}

impl Binder<'_> {
    /// Coerces a bound expression of type `from` to `to`: unknown literals are
    /// parsed now (as PostgreSQL does), other mismatches get a runtime cast.
    pub fn coerce(
        &mut self,
        b: BExpr,
        from: &Ty,
        to: &PgType,
        ctx: &str,
    ) -> Result<BExpr, SqlError> {
        match from {
            Some(f) if same_storage(f, to) && !matches!(to, PgType::Numeric(Some(_))) => Ok(b),
            None => match b {
                BExpr::Const(Datum::Text(s)) => Ok(BExpr::Const(parse_text(&s, to)?)),
                BExpr::Param(n) => {
                    if let Some(params) = &mut self.params {
                        params.infer(n, to);
                    }
                    Ok(BExpr::Cast(Box::new(BExpr::Param(n)), to.clone()))
                }
                BExpr::Const(Datum::Null) => Ok(BExpr::Const(Datum::Null)),
                other => Ok(BExpr::Cast(Box::new(other), to.clone())),
            },
            Some(_) => {
                match b {
                    BExpr::Const(d) => Ok(BExpr::Const(cast_datum(d, to).map_err(|e| {
                        SqlError::new(e.code, format!("{} (in {ctx})", e.message))
                    })?)),
                    other => Ok(BExpr::Cast(Box::new(other), to.clone())),
                }
            }
        }
    }

    /// `$n` of a statement being prepared: of its declared type, else of
    /// unknown type until a context coerces it (see [`crate::session::params`]).
    fn bind_parameter(&mut self, text: &str) -> Result<(BExpr, Ty), SqlError> {
        let n = crate::plan::params::placeholder_index(text)?;
        let params = self
            .params
            .as_ref()
            .filter(|p| n <= p.declared.len())
            .ok_or_else(|| crate::plan::params::no_parameter(n))?;
        Ok((BExpr::Param(n), params.declared[n - 1].clone()))
    }

    /// Binds a boolean condition (WHERE, ON, HAVING).
    pub fn bind_bool(&mut self, e: &Expr, ctx: &str) -> Result<BExpr, SqlError> {
        let (b, t) = self.bind_expr(e)?;
        match &t {
            None | Some(PgType::Bool) => self.coerce(b, &t, &PgType::Bool, ctx),
            Some(other) => Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!(
                    "argument of {ctx} must be type boolean, not type {}",
                    other.display_name()
                ),
            )),
        }
    }

    pub(super) fn resolve_column(&mut self, parts: &[String]) -> Result<(BExpr, Ty), SqlError> {
        let (qual, schema, col) = match parts {
            [c] => (None, None, c.clone()),
            [t, c] => (Some(t.clone()), None, c.clone()),
            [s, t, c] => (Some(t.clone()), Some(s.clone()), c.clone()),
            [d, s, t, c] if *d == self.cat.database => {
                (Some(t.clone()), Some(s.clone()), c.clone())
            }
            [_, _, _, _] => return Err(crate::ident::cross_database(&parts.join("."))),
            _ => return Err(crate::ident::too_many_dots(parts)),
        };
        let n = self.scopes.len();
        let mut ctid_scans = Vec::new();
        for level in (0..n).rev() {
            let mut hits = Vec::new();
            let mut table_seen = false;
            for e in &self.scopes[level].entries {
                if qual.as_ref().is_some_and(|q| *q != e.alias) {
                    continue;
                }
                if schema.is_some() && e.schema != schema {
                    continue;
                }
                table_seen = true;
                if let Some(i) = e.cols.iter().position(|(c, _)| *c == col) {
                    let merged_away = qual.is_none()
                        && self.scopes[level]
                            .merged
                            .iter()
                            .any(|m| m.right == e.offset + i);
                    if !merged_away {
                        hits.push((e.offset + i, e.cols[i].1.clone()));
                    }
                } else if col == "ctid" {
                    if let Some((c, scan)) = e.ctid {
                        hits.push((c, Some(PgType::Tid)));
                        ctid_scans.push(scan);
                    }
                }
            }
            for scan in ctid_scans.drain(..) {
                if let Some(s) = self.scans.get_mut(scan) {
                    s.reads_ctid = true;
                }
            }
            if hits.len() > 1 {
                return Err(SqlError::new(
                    SqlState::AMBIGUOUS_COLUMN,
                    format!("column reference \"{col}\" is ambiguous"),
                ));
            }
            if let Some((idx, ty)) = hits.pop() {
                let up = n - 1 - level;
                if up > 0 && self.grouped_levels.contains(&level) {
                    return Err(SqlError::unsupported(format!(
                        "subquery referencing column \"{}\" of an aggregated outer query is not supported",
                        parts.join(".")
                    )));
                }
                self.lowest_scope = self.lowest_scope.min(level);
                if level < 64 {
                    self.levels_read |= 1 << level;
                }
                if up == 0 && self.agg.is_some() {
                    return Err(SqlError::new(
                        SqlState::GROUPING_ERROR,
                        format!("column \"{}\" must appear in the GROUP BY clause or be used in an aggregate function", parts.join(".")),
                    ));
                }
                if qual.is_none() {
                    if let Some(m) = self.scopes[level].merged_column(idx) {
                        return Ok((super::joins::at_level(&m.expr, up), m.ty.clone()));
                    }
                }
                return Ok((BExpr::Col { up, idx }, ty));
            }
            if qual.is_some() && table_seen {
                break;
            }
        }
        if let Some(q) = qual {
            let known = self
                .scopes
                .iter()
                .any(|s| s.entries.iter().any(|e| e.alias == q));
            if !known {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("missing FROM-clause entry for table \"{q}\""),
                ));
            }
        }
        Err(SqlError::new(
            SqlState::UNDEFINED_COLUMN,
            format!("column \"{}\" does not exist", parts.join(".")),
        ))
    }

    /// Binds a subquery used in an expression.
    pub fn bind_subquery(&mut self, q: &Query) -> Result<(SubPlan, Ty), SqlError> {
        let saved_lowest = self.lowest_scope;
        let saved_agg = self.agg.take();
        self.lowest_scope = usize::MAX;
        let my_level = self.scopes.len();
        if saved_agg.is_some() {
            self.grouped_levels.push(my_level.saturating_sub(1));
        }
        let plan = self.bind_query(q);
        if saved_agg.is_some() {
            self.grouped_levels.pop();
        }
        let correlated = self.lowest_scope < my_level || self.recursive_terms > 0;
        self.lowest_scope = saved_lowest.min(self.lowest_scope);
        self.agg = saved_agg;
        let plan = plan?;
        let ty = plan.columns.first().and_then(|c| c.ty.clone());
        let id = self.next_sub;
        self.next_sub += 1;
        Ok((
            SubPlan {
                id,
                correlated,
                plan: Box::new(plan),
            },
            ty,
        ))
    }

    pub(super) fn bind_cmp(
        &mut self,
        op: CmpOp,
        l: &Expr,
        r: &Expr,
    ) -> Result<(BExpr, Ty), SqlError> {
        if let Some(fields) = self.bind_row_comparison(op, l, r) {
            return fields;
        }
        let (lb, lt) = self.bind_expr(l)?;
        let (rb, rt) = self.bind_expr(r)?;
        let (lb, rb) = self.unify_pair(lb, lt, rb, rt, op_symbol(op))?;
        Ok((
            BExpr::Cmp(op, Box::new(lb), Box::new(rb)),
            Some(PgType::Bool),
        ))
    }

    pub(super) fn unify_pair(
        &mut self,
        lb: BExpr,
        lt: Ty,
        rb: BExpr,
        rt: Ty,
        op: &str,
    ) -> Result<(BExpr, BExpr), SqlError> {
        Ok(match (&lt, &rt) {
            (None, None) => (
                self.coerce(lb, &lt, &PgType::Text, op)?,
                self.coerce(rb, &rt, &PgType::Text, op)?,
            ),
            (None, Some(t)) => (self.coerce(lb, &lt, t, op)?, rb),
            (Some(t), None) => (lb, self.coerce(rb, &rt, t, op)?),
            (Some(a), Some(b)) => {
                if let (PgType::Record(x), PgType::Record(y)) = (a, b) {
                    super::rows::check_comparable_records(x, y)?;
                }
                if !comparable(a, b) {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!(
                            "operator does not exist: {} {op} {}",
                            a.display_name(),
                            b.display_name()
                        ),
                    ));
                }
                let mixed_datetime = a != b
                    && matches!(a, PgType::Date | PgType::Timestamp | PgType::TimestampTz)
                    && matches!(b, PgType::Date | PgType::Timestamp | PgType::TimestampTz);
                if mixed_datetime {
                    let t = PgType::TimestampTz;
                    (self.coerce(lb, &lt, &t, op)?, self.coerce(rb, &rt, &t, op)?)
                } else {
                    (lb, rb)
                }
            }
        })
    }

    /// Binds an expression, returning it with its type.
    /// Binds an expression: resolves names, types literals and checks
    /// operand types; one arm per expression family.
    pub fn bind_expr(&mut self, e: &Expr) -> Result<(BExpr, Ty), SqlError> {
        crate::parse::check_stack()?;
        if let Some(agg) = &self.agg {
            if let Some(i) = agg.group_asts.iter().position(|g| g == e) {
                return Ok((BExpr::Col { up: 0, idx: i }, agg.group_types[i].clone()));
            }
        }
        match e {
            Expr::Identifier(id) => self.bind_identifier(id),
            Expr::CompoundIdentifier(ids) => {
                self.resolve_column(&ids.iter().map(fold).collect::<Vec<_>>())
            }
            Expr::Value(v) => match &v.value {
                Value::Placeholder(text) => self.bind_parameter(text),
                other => bind_value(other),
            },
            Expr::Nested(inner) => self.bind_expr(inner),
            Expr::Collate { expr, .. } => self.bind_expr(expr),
            Expr::TypedString(ts) => {
                let t = pg_type_of(&ts.data_type)?;
                let s = ts.value.value.clone().into_string().unwrap_or_default();
                Ok((BExpr::Const(parse_text(&s, &t)?), Some(t)))
            }
            Expr::Interval(interval) => self.bind_interval_literal(interval),
            Expr::Ceil { expr, field } | Expr::Floor { expr, field } => {
                let name = if matches!(e, Expr::Ceil { .. }) {
                    "ceil"
                } else {
                    "floor"
                };
                match field {
                    sqlparser::ast::CeilFloorKind::DateTimeField(
                        sqlparser::ast::DateTimeField::NoDateTime,
                    ) => {
                        let operand = self.bind_expr(expr)?;
                        self.bind_library_call(name, vec![operand])
                    }
                    _ => Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name} with a second argument does not exist"),
                    )),
                }
            }
            Expr::AtTimeZone {
                timestamp,
                time_zone,
            } => {
                let zone = self.bind_expr(time_zone)?;
                let value = self.bind_expr(timestamp)?;
                self.bind_library_call("timezone", vec![zone, value])
            }
            Expr::Extract { field, expr, .. } => {
                let name = field.to_string().trim_matches('\'').to_lowercase();
                let operand = self.bind_expr(expr)?;
                let unit = (BExpr::Const(Datum::text(name)), Some(PgType::Text));
                self.bind_library_call("extract", vec![unit, operand])
            }
            Expr::UnaryOp { op, expr } => self.bind_unary(op, expr),
            Expr::BinaryOp { left, op, right } => self.bind_binary(left, op, right),
            Expr::IsNull(x) | Expr::IsNotNull(x) => self.bind_is_null(x, e),
            Expr::IsTrue(x) | Expr::IsNotTrue(x) | Expr::IsFalse(x) | Expr::IsNotFalse(x) => {
                self.bind_is_bool(x, e)
            }
            Expr::IsDistinctFrom(l, r) | Expr::IsNotDistinctFrom(l, r) => {
                self.bind_is_distinct(l, r, matches!(e, Expr::IsNotDistinctFrom(..)))
            }
            Expr::In {
                expr,
                target: sqlparser::ast::InTarget::List(list),
                negated,
                ..
            } => self.bind_in_list(expr, list, *negated),
            Expr::In {
                expr,
                target: sqlparser::ast::InTarget::Subquery(subquery),
                negated,
                ..
            } => self.bind_in_subquery(expr, subquery, *negated),
            Expr::Exists { subquery, negated } => {
                let (sub, _) = self.bind_subquery(subquery)?;
                Ok((BExpr::Exists(sub, *negated), Some(PgType::Bool)))
            }
            Expr::Subquery(q) => self.bind_scalar_subquery(q),
            Expr::Between {
                expr,
                negated,
                low,
                high,
            } => self.bind_between(expr, low, high, *negated),
            Expr::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => self.bind_like(expr, pattern, *negated, false, escape_char.as_deref()),
            Expr::ILike {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => self.bind_like(expr, pattern, *negated, true, escape_char.as_deref()),
            Expr::Like { .. } | Expr::ILike { .. } => {
                Err(SqlError::unsupported(format!("unsupported LIKE form: {e}")))
            }
            Expr::Cast {
                expr,
                data_type,
                format,
                ..
            } => {
                if format.is_some() {
                    return Err(SqlError::unsupported("CAST ... FORMAT is not supported"));
                }
                self.bind_cast(expr, data_type)
            }
            Expr::Case {
                operand,
                conditions,
                else_result,
                ..
            } => self.bind_case(operand.as_deref(), conditions, else_result.as_deref()),
            Expr::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => self.bind_substring(expr, substring_from.as_deref(), substring_for.as_deref()),
            Expr::Function(f) => self.bind_function(f),
            Expr::QualifiedWildcard(name, _) => {
                let (b, t) = self.bind_whole_row(&super::rows::entry_name(name)?)?;
                Ok((b, t))
            }
            Expr::Tuple(items) => {
                let items: Vec<_> = items.iter().map(super::rows::RowItem::Expr).collect();
                self.bind_row(&items)
            }
            Expr::Position { expr, r#in } => self
                .bind_library_function("strpos", &[r#in, expr])
                .expect("the library has strpos"),
            Expr::Overlay {
                expr,
                overlay_what,
                overlay_from,
                overlay_for,
            } => {
                let mut args = vec![expr.as_ref(), overlay_what, overlay_from];
                args.extend(overlay_for.as_deref());
                self.bind_library_function("overlay", &args)
                    .expect("the library has overlay")
            }
            Expr::SimilarTo {
                negated,
                expr,
                pattern,
                escape_char,
            } => self.bind_similar_to(expr, pattern, escape_char.as_deref(), *negated),
            Expr::Trim {
                expr,
                trim_where,
                trim_what,
                trim_characters: None,
            } => self.bind_trim(trim_name(trim_where.as_ref()), expr, trim_what.as_deref()),
            Expr::Array(array) => self.bind_array_constructor(array),
            Expr::CompoundFieldAccess { root, access_chain } => {
                self.bind_subscripts(root, access_chain)
            }
            Expr::AnyOp {
                left,
                compare_op,
                right,
                ..
            } => self.bind_quantified(e, left, compare_op, right, true),
            Expr::AllOp {
                left,
                compare_op,
                right,
            } => self.bind_quantified(e, left, compare_op, right, false),
            other => Err(SqlError::unsupported(format!(
                "expression not supported: {other}"
            ))),
        }
    }

    /// `x op ANY (ARRAY[...])` and `x op ALL (ARRAY[...])` over an array
    /// constructor: `= ANY` is `IN`, `<> ALL` is `NOT IN`, other operators
    /// an OR (ANY) or AND (ALL) of the comparisons, as PostgreSQL evaluates
    /// them (NULLs included).
    fn bind_quantified(
        &mut self,
        whole: &Expr,
        left: &Expr,
        op: &sqlparser::ast::BinaryOperator,
        right: &Expr,
        any: bool,
    ) -> Result<(BExpr, Ty), SqlError> {
        use sqlparser::ast::BinaryOperator as Op;
        let Expr::Array(array) = right else {
            let op = super::arrays::comparison(op)
                .ok_or_else(|| SqlError::unsupported(format!("unsupported operator in {whole}")))?;
            return self.bind_any_all(left, op, right, !any);
        };
        match (op, any) {
            (Op::Eq, true) | (Op::NotEq, false) => self.bind_in_list(left, &array.elem, !any),
            _ => {
                let mut terms = array.elem.iter().map(|item| Expr::BinaryOp {
                    left: Box::new(left.clone()),
                    op: op.clone(),
                    right: Box::new(item.clone()),
                });
                let Some(first) = terms.next() else {
                    return Ok((BExpr::Const(Datum::Bool(!any)), Some(PgType::Bool)));
                };
                let join = if any { Op::Or } else { Op::And };
                let combined = terms.fold(first, |acc, term| Expr::BinaryOp {
                    left: Box::new(acc),
                    op: join.clone(),
                    right: Box::new(term),
                });
                self.bind_expr(&Expr::Nested(Box::new(combined)))
            }
        }
    }

    /// A bare identifier: a column, or one of the SQL-standard functions
    /// PostgreSQL accepts without parentheses.
    fn bind_identifier(&mut self, id: &Ident) -> Result<(BExpr, Ty), SqlError> {
        let name = fold(id);
        match self.resolve_column(std::slice::from_ref(&name)) {
            // A FROM item's name: its whole row.
            Err(e) if e.code == SqlState::UNDEFINED_COLUMN && self.names_from_item(&name) => {
                self.bind_whole_row(&name)
            }
            Err(e) if e.code == SqlState::UNDEFINED_COLUMN && id.quote_style.is_none() => {
                let value = match name.as_str() {
                    "current_schema" => "public".to_string(),
                    "current_user" | "current_role" | "user" => {
                        self.cat.roles.identity.current().to_string()
                    }
                    "session_user" => self.cat.roles.identity.session().to_string(),
                    "current_catalog" => self.cat.database.clone(),
                    _ => return Err(e),
                };
                Ok((BExpr::Const(Datum::text(value)), Some(PgType::Name)))
            }
            other => other,
        }
    }

    /// `CAST(x AS t)` / `x::t`; casts of constants are folded, and a
    /// `regclass` constant is resolved now.
    fn bind_cast(&mut self, expr: &Expr, data_type: &DataType) -> Result<(BExpr, Ty), SqlError> {
        if data_type.to_string().eq_ignore_ascii_case("record") {
            return self.bind_record_cast(expr);
        }
        let to = pg_type_of(data_type)?;
        // `ARRAY[]::int[]`: an empty constructor takes the cast's type.
        if let (Expr::Array(array), true) = (expr, to.is_array()) {
            if array.elem.is_empty() {
                return Ok((BExpr::Const(Datum::array(Vec::new())), Some(to)));
            }
        }
        let (b, t) = self.bind_expr(expr)?;
        if let Some(kind) = RegKind::of(&to) {
            // A name is resolved now (an error if there is no such object);
            // other values when the row is read.
            return Ok(match b {
                BExpr::Const(Datum::Text(name)) => {
                    (BExpr::Const(self.cat.reg_from_name(kind, &name)?), Some(to))
                }
                b => {
                    let b = match &t {
                        Some(t) if t.is_string() || t.is_numeric() || t.is_reg() => b,
                        // A parameter: a name or a number, as text.
                        None => self.coerce(b, &t, &PgType::Text, "CAST")?,
                        Some(_) => self.coerce(b, &t, &PgType::Oid, "CAST")?,
                    };
                    (BExpr::Func(Func::ToReg(kind), vec![b]), Some(to))
                }
            });
        }
        if t == Some(PgType::Jsonb) {
            // `jsonb` to a number or boolean: the library's cast function.
            let plain = match &to {
                PgType::Numeric(_) => PgType::Numeric(None),
                other => other.clone(),
            };
            if crate::functions::json::casts::TARGETS.contains(&plain) {
                let (call, _) = self.bind_library_call(plain.type_name(), vec![(b, t)])?;
                let call = match to {
                    PgType::Numeric(Some(_)) => BExpr::Cast(Box::new(call), to.clone()),
                    _ => call,
                };
                return Ok((call, Some(to)));
            }
        }
        let b = match (&t, b) {
            (Some(_), b) => BExpr::Cast(Box::new(b), to.clone()),
            (None, b) => self.coerce(b, &t, &to, "CAST")?,
        };
        let b = match b {
            BExpr::Cast(inner, to) => match *inner {
                BExpr::Const(d) => BExpr::Const(cast_datum(d, &to)?),
                other => BExpr::Cast(Box::new(other), to),
            },
            other => other,
        };
        Ok((b, Some(to)))
    }

    /// `CASE [operand] WHEN ... THEN ... [ELSE ...] END`: the results are
    /// resolved to one common type.
    fn bind_case(
        &mut self,
        operand: Option<&Expr>,
        conditions: &[CaseWhen],
        else_result: Option<&Expr>,
    ) -> Result<(BExpr, Ty), SqlError> {
        let op = match operand {
            Some(o) => Some(self.bind_expr(o)?),
            None => None,
        };
        let mut whens = Vec::new();
        let mut ty: Ty = None;
        let mut results = Vec::new();
        for c in conditions {
            let cond = match &op {
                Some((_, ot)) => {
                    let (cb, ct) = self.bind_expr(&c.condition)?;
                    match (ot, &ct) {
                        (Some(t), None) => self.coerce(cb, &ct, &t.clone(), "CASE")?,
                        _ => cb,
                    }
                }
                None => self.bind_bool(&c.condition, "CASE/WHEN")?,
            };
            let (rb, rt) = self.bind_expr(&c.result)?;
            whens.push(cond);
            results.push((rb, rt));
        }
        let els = match else_result {
            Some(x) => Some(self.bind_expr(x)?),
            None => None,
        };
        // The ELSE result first, as PostgreSQL resolves them.
        if let Some((_, t)) = &els {
            ty = t.clone();
        }
        for (_, rt) in &results {
            ty = common_type(&ty, rt, "CASE")?;
        }
        let target = ty.unwrap_or(PgType::Text);
        let mut pairs = Vec::new();
        for (cond, (rb, rt)) in whens.into_iter().zip(results) {
            pairs.push((cond, self.coerce(rb, &rt, &target, "CASE")?));
        }
        let otherwise = match els {
            Some((b, t)) => Some(Box::new(self.coerce(b, &t, &target, "CASE")?)),
            None => None,
        };
        Ok((
            BExpr::Case {
                operand: op.map(|(b, _)| Box::new(b)),
                whens: pairs,
                otherwise,
            },
            Some(target),
        ))
    }

    /// `substring(x FROM a FOR b)`.
    fn bind_substring(
        &mut self,
        expr: &Expr,
        from: Option<&Expr>,
        count: Option<&Expr>,
    ) -> Result<(BExpr, Ty), SqlError> {
        let one = Expr::Value(Value::Number("1".into(), false).into());
        let mut args = vec![expr, from.unwrap_or(&one)];
        args.extend(count);
        self.bind_library_function("substring", &args)
            .expect("the library has substring")
    }
}

fn op_symbol(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "=",
        CmpOp::Ne => "<>",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

fn bind_value(v: &Value) -> Result<(BExpr, Ty), SqlError> {
    Ok(match v {
        Value::Number(n, _) => {
            if n.contains(['.', 'e', 'E']) {
                let s = numeric::parse(n).ok_or_else(|| {
                    SqlError::new(SqlState::SYNTAX_ERROR, format!("bad number {n}"))
                })?;
                (BExpr::Const(Datum::Numeric(s)), Some(PgType::Numeric(None)))
            } else {
                let d = int_literal(n);
                let t = datum_type(&d);
                (BExpr::Const(d), t)
            }
        }
        Value::SingleQuotedString(s)
        | Value::EscapedStringLiteral(s)
        | Value::DoubleQuotedString(s) => (BExpr::Const(Datum::text(s.clone())), None),
        Value::DollarQuotedString(d) => (BExpr::Const(Datum::text(d.value.clone())), None),
        Value::Boolean(b) => (BExpr::Const(Datum::Bool(*b)), Some(PgType::Bool)),
        Value::Null => (BExpr::Const(Datum::Null), None),
        other => {
            return Err(SqlError::unsupported(format!(
                "literal not supported: {other}"
            )))
        }
    })
}

/// The function SQL's `TRIM([BOTH | LEADING | TRAILING] ...)` calls.
pub(crate) fn trim_name(side: Option<&sqlparser::ast::TrimWhereField>) -> &'static str {
    use sqlparser::ast::TrimWhereField;
    match side {
        None | Some(TrimWhereField::Both) => "btrim",
        Some(TrimWhereField::Leading) => "ltrim",
        Some(TrimWhereField::Trailing) => "rtrim",
    }
}
