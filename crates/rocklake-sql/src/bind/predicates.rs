//! Binding of operators and predicates: unary and binary operators,
//! comparisons, `IS ...`, `IN`, `BETWEEN`, `LIKE` and subqueries in
//! expressions.

use std::sync::Arc;

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{BinaryOperator, Expr, Query, UnaryOperator, Value};

use super::expr::{datum_type, int_literal};
use crate::bind::Binder;
use crate::plan::{common_type, BExpr, CmpOp, ConstantSet, Form, Ty};
use rocklake_types::value::equality::hash_key;

impl Binder<'_> {
    /// `-x`, `+x`, `NOT x`.
    pub(super) fn bind_unary(
        &mut self,
        op: &UnaryOperator,
        expr: &Expr,
    ) -> Result<(BExpr, Ty), SqlError> {
        match op {
            UnaryOperator::Minus => {
                if let Expr::Value(v) = expr {
                    if let Value::Number(n, _) = &v.value {
                        let d = int_literal(&format!("-{n}"));
                        let t = datum_type(&d);
                        return Ok((BExpr::Const(d), t));
                    }
                }
                self.bind_prefix("-", expr)
            }
            UnaryOperator::Plus => self.bind_prefix("+", expr),
            UnaryOperator::PGSquareRoot => self.bind_prefix("|/", expr),
            UnaryOperator::PGCubeRoot => self.bind_prefix("||/", expr),
            UnaryOperator::PGAbs => self.bind_prefix("@", expr),
            UnaryOperator::BitwiseNot => self.bind_prefix("~", expr),
            UnaryOperator::Not => Ok((
                BExpr::Not(Box::new(self.bind_bool(expr, "NOT")?)),
                Some(PgType::Bool),
            )),
            other => Err(SqlError::unsupported(format!(
                "operator {other} is not supported"
            ))),
        }
    }

    /// `string [NOT] SIMILAR TO pattern [ESCAPE e]`: `string ~
    /// similar_to_escape(pattern, e)`, as PostgreSQL rewrites it.
    pub(super) fn bind_similar_to(
        &mut self,
        expr: &Expr,
        pattern: &Expr,
        escape: Option<&Expr>,
        negated: bool,
    ) -> Result<(BExpr, Ty), SqlError> {
        let string = self.bind_expr(expr)?;
        let mut args = vec![self.bind_expr(pattern)?];
        if let Some(escape) = escape {
            args.push(self.bind_expr(escape)?);
        }
        let posix = self.bind_library_call("similar_to_escape", args)?;
        let symbol = if negated { "!~" } else { "~" };
        self.bind_operator(symbol, Form::Infix, vec![string, posix])
            .expect("the library has the regular expression operators")
    }

    /// `(start, end) OVERLAPS (start, end)`: the library's `overlaps`.
    fn bind_overlaps(&mut self, left: &Expr, right: &Expr) -> Result<(BExpr, Ty), SqlError> {
        let pair = |e: &Expr| match e {
            Expr::Tuple(items) if items.len() == 2 => Ok([items[0].clone(), items[1].clone()]),
            _ => Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "wrong number of parameters on left side of OVERLAPS expression",
            )),
        };
        let [a, b] = pair(left)?;
        let [c, d] = pair(right)?;
        let mut args = Vec::with_capacity(4);
        for e in [&a, &b, &c, &d] {
            args.push(self.bind_expr(e)?);
        }
        // PostgreSQL names the function it rewrites OVERLAPS to.
        let candidates = crate::functions::functions("overlaps");
        self.bind_resolved("pg_catalog.overlaps", Form::Function, candidates, args)
    }

    /// Comparisons, `AND`/`OR`, arithmetic and `||`.
    pub(super) fn bind_binary(
        &mut self,
        left: &Expr,
        op: &BinaryOperator,
        right: &Expr,
    ) -> Result<(BExpr, Ty), SqlError> {
        let cmp = match op {
            BinaryOperator::Eq => Some(CmpOp::Eq),
            BinaryOperator::NotEq => Some(CmpOp::Ne),
            BinaryOperator::Lt => Some(CmpOp::Lt),
            BinaryOperator::LtEq => Some(CmpOp::Le),
            BinaryOperator::Gt => Some(CmpOp::Gt),
            BinaryOperator::GtEq => Some(CmpOp::Ge),
            _ => None,
        };
        if let Some(c) = cmp {
            return self.bind_cmp(c, left, right);
        }
        match op {
            BinaryOperator::And | BinaryOperator::Or => self.bind_connective(left, op, right),
            BinaryOperator::Plus => self.bind_infix("+", left, right),
            BinaryOperator::Minus => self.bind_infix("-", left, right),
            BinaryOperator::Multiply => self.bind_infix("*", left, right),
            BinaryOperator::Divide => self.bind_infix("/", left, right),
            BinaryOperator::Modulo => self.bind_infix("%", left, right),
            BinaryOperator::BitwiseAnd => self.bind_infix("&", left, right),
            BinaryOperator::BitwiseOr => self.bind_infix("|", left, right),
            BinaryOperator::PGBitwiseXor => self.bind_infix("#", left, right),
            BinaryOperator::PGBitwiseShiftLeft => self.bind_infix("<<", left, right),
            BinaryOperator::PGBitwiseShiftRight => self.bind_infix(">>", left, right),
            BinaryOperator::PGExp => self.bind_infix("^", left, right),
            BinaryOperator::StringConcat => {
                let (l, lt) = self.bind_expr(left)?;
                let (r, rt) = self.bind_expr(right)?;
                if lt.as_ref().is_some_and(PgType::is_array)
                    || rt.as_ref().is_some_and(PgType::is_array)
                {
                    return self.bind_array_concat((l, lt), (r, rt));
                }
                // jsonb || jsonb (an untyped literal taken as jsonb).
                let jsonb = Some(PgType::Jsonb);
                if (lt == jsonb && (rt.is_none() || rt == jsonb)) || (lt.is_none() && rt == jsonb) {
                    return self
                        .bind_operator("||", Form::Infix, vec![(l, lt), (r, rt)])
                        .expect("the library has jsonb's ||");
                }
                let l = self.coerce(l, &lt, &lt.clone().unwrap_or(PgType::Text), "||")?;
                let r = self.coerce(r, &rt, &rt.clone().unwrap_or(PgType::Text), "||")?;
                Ok((BExpr::Concat(Box::new(l), Box::new(r)), Some(PgType::Text)))
            }
            BinaryOperator::Arrow => self.bind_infix("->", left, right),
            BinaryOperator::LongArrow => self.bind_infix("->>", left, right),
            BinaryOperator::HashArrow => self.bind_infix("#>", left, right),
            BinaryOperator::HashLongArrow => self.bind_infix("#>>", left, right),
            BinaryOperator::AtArrow => self.bind_infix("@>", left, right),
            BinaryOperator::ArrowAt => self.bind_infix("<@", left, right),
            BinaryOperator::Question => self.bind_infix("?", left, right),
            BinaryOperator::QuestionPipe => self.bind_infix("?|", left, right),
            BinaryOperator::QuestionAnd => self.bind_infix("?&", left, right),
            BinaryOperator::HashMinus => self.bind_infix("#-", left, right),
            BinaryOperator::PGOverlap => self.bind_infix("&&", left, right),
            BinaryOperator::PGStartsWith => self.bind_infix("^@", left, right),
            BinaryOperator::Overlaps => self.bind_overlaps(left, right),
            BinaryOperator::PGRegexMatch => self.bind_infix("~", left, right),
            BinaryOperator::PGRegexIMatch => self.bind_infix("~*", left, right),
            BinaryOperator::PGRegexNotMatch => self.bind_infix("!~", left, right),
            BinaryOperator::PGRegexNotIMatch => self.bind_infix("!~*", left, right),
            // psql writes `OPERATOR(pg_catalog.~)`.
            BinaryOperator::PGCustomBinaryOperator(parts)
                if parts.len() == 2 && parts[0].eq_ignore_ascii_case("pg_catalog") =>
            {
                match parts[1].as_str() {
                    "=" => self.bind_cmp(CmpOp::Eq, left, right),
                    "<>" => self.bind_cmp(CmpOp::Ne, left, right),
                    symbol => self.bind_infix(symbol, left, right),
                }
            }
            BinaryOperator::Custom(symbol) => self.bind_infix(symbol, left, right),
            other => Err(SqlError::unsupported(format!(
                "operator {other} is not supported"
            ))),
        }
    }

    /// `left symbol right` through the library of operators.
    fn bind_infix(
        &mut self,
        symbol: &str,
        left: &Expr,
        right: &Expr,
    ) -> Result<(BExpr, Ty), SqlError> {
        let l = self.bind_expr(left)?;
        let r = self.bind_expr(right)?;
        let inputs = [l.1.clone(), r.1.clone()];
        self.bind_operator(symbol, Form::Infix, vec![l, r])
            .unwrap_or_else(|| Err(no_operator(symbol, Form::Infix, &inputs)))
    }

    /// `symbol operand` through the library of operators.
    fn bind_prefix(&mut self, symbol: &str, operand: &Expr) -> Result<(BExpr, Ty), SqlError> {
        let x = self.bind_expr(operand)?;
        let inputs = [x.1.clone()];
        self.bind_operator(symbol, Form::Prefix, vec![x])
            .unwrap_or_else(|| Err(no_operator(symbol, Form::Prefix, &inputs)))
    }

    /// A chain of `AND` (or of `OR`): every operand of the tree of that
    /// operator (balanced by [`crate::parse::prepare`], and through
    /// parentheses), found without recursion and in order, becomes one
    /// n-ary node.
    fn bind_connective(
        &mut self,
        left: &Expr,
        op: &BinaryOperator,
        right: &Expr,
    ) -> Result<(BExpr, Ty), SqlError> {
        let mut operands = Vec::new();
        let mut pending = vec![right, left];
        while let Some(e) = pending.pop() {
            match e {
                Expr::BinaryOp {
                    left,
                    op: inner,
                    right,
                } if inner == op => {
                    pending.push(right);
                    pending.push(left);
                }
                Expr::Nested(inner) if matches!(inner.as_ref(), Expr::BinaryOp { op: o, .. } if o == op) => {
                    pending.push(inner)
                }
                other => operands.push(other),
            }
        }
        let what = op.to_string();
        let mut bound = Vec::with_capacity(operands.len());
        for operand in operands {
            bound.push(self.bind_bool(operand, &what)?);
        }
        let node = if *op == BinaryOperator::And {
            BExpr::And(bound)
        } else {
            equalities_as_set(&bound).unwrap_or(BExpr::Or(bound))
        };
        Ok((node, Some(PgType::Bool)))
    }

    /// `x IS [NOT] NULL` (`e` says which).
    pub(super) fn bind_is_null(&mut self, x: &Expr, e: &Expr) -> Result<(BExpr, Ty), SqlError> {
        let negated = matches!(e, Expr::IsNotNull(_));
        Ok((
            BExpr::IsNull(Box::new(self.bind_expr(x)?.0), negated),
            Some(PgType::Bool),
        ))
    }

    /// `x IS [NOT] TRUE/FALSE` (`e` says which).
    pub(super) fn bind_is_bool(&mut self, x: &Expr, e: &Expr) -> Result<(BExpr, Ty), SqlError> {
        let b = self.bind_bool(x, "IS")?;
        let target = matches!(e, Expr::IsTrue(_) | Expr::IsNotTrue(_));
        let neg = matches!(e, Expr::IsNotTrue(_) | Expr::IsNotFalse(_));
        Ok((BExpr::IsBool(Box::new(b), target, neg), Some(PgType::Bool)))
    }

    /// `l IS [NOT] DISTINCT FROM r`.
    pub(super) fn bind_is_distinct(
        &mut self,
        l: &Expr,
        r: &Expr,
        not_distinct: bool,
    ) -> Result<(BExpr, Ty), SqlError> {
        if let Some(fields) = self.bind_row_distinct(l, r, not_distinct) {
            return fields;
        }
        let (lb, lt) = self.bind_expr(l)?;
        let (rb, rt) = self.bind_expr(r)?;
        let (lb, rb) = self.unify_pair(lb, lt, rb, rt, "IS DISTINCT FROM")?;
        Ok((
            BExpr::IsDistinct(Box::new(lb), Box::new(rb), not_distinct),
            Some(PgType::Bool),
        ))
    }

    /// `x [NOT] IN (a, b, ...)`: every item is resolved to one common type.
    pub(super) fn bind_in_list(
        &mut self,
        expr: &Expr,
        list: &[Expr],
        negated: bool,
    ) -> Result<(BExpr, Ty), SqlError> {
        if let Some(fields) = self.bind_row_in_list(expr, list, negated) {
            return fields;
        }
        let (xb, xt) = self.bind_expr(expr)?;
        let mut items = Vec::new();
        let mut ty = xt.clone();
        for i in list {
            let (b, t) = self.bind_expr(i)?;
            ty = common_type(&ty, &t, "IN")?;
            items.push((b, t));
        }
        let ty = ty.unwrap_or(PgType::Text);
        let xb = self.coerce(xb, &xt, &ty, "IN")?;
        let mut bound = Vec::new();
        for (b, t) in items {
            bound.push(self.coerce(b, &t, &ty, "IN")?);
        }
        Ok((in_list(xb, bound, negated), Some(PgType::Bool)))
    }

    /// `x [NOT] IN (subquery)`.
    pub(super) fn bind_in_subquery(
        &mut self,
        expr: &Expr,
        subquery: &Query,
        negated: bool,
    ) -> Result<(BExpr, Ty), SqlError> {
        let (xb, xt) = self.bind_expr(expr)?;
        let (sub, st) = self.bind_subquery(subquery)?;
        if sub.plan.columns.len() != 1 {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "subquery has too many columns",
            ));
        }
        let xb = match (&xt, &st) {
            (None, Some(t)) => self.coerce(xb, &xt, t, "IN")?,
            _ => xb,
        };
        Ok((BExpr::InSub(Box::new(xb), sub, negated), Some(PgType::Bool)))
    }

    /// A scalar subquery: one column, at most one row.
    pub(super) fn bind_scalar_subquery(&mut self, q: &Query) -> Result<(BExpr, Ty), SqlError> {
        let (sub, t) = self.bind_subquery(q)?;
        if sub.plan.columns.len() != 1 {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "subquery must return only one column",
            ));
        }
        Ok((BExpr::Scalar(sub), t.or(Some(PgType::Text))))
    }

    /// `x [NOT] BETWEEN low AND high`, as `x >= low AND x <= high`.
    pub(super) fn bind_between(
        &mut self,
        expr: &Expr,
        low: &Expr,
        high: &Expr,
        negated: bool,
    ) -> Result<(BExpr, Ty), SqlError> {
        let (ge, _) = self.bind_cmp(CmpOp::Ge, expr, low)?;
        let (le, _) = self.bind_cmp(CmpOp::Le, expr, high)?;
        let both = BExpr::And(vec![ge, le]);
        Ok((
            if negated {
                BExpr::Not(Box::new(both))
            } else {
                both
            },
            Some(PgType::Bool),
        ))
    }

    /// `x [NOT] LIKE/ILIKE pattern`.
    pub(super) fn bind_like(
        &mut self,
        expr: &Expr,
        pattern: &Expr,
        negated: bool,
        case_insensitive: bool,
        escape_char: Option<&Expr>,
    ) -> Result<(BExpr, Ty), SqlError> {
        let escape = match escape_char {
            None => Some('\\'),
            Some(escape) => {
                let text = match self.bind_expr(escape)? {
                    (BExpr::Const(Datum::Text(text)), _) => text,
                    _ => {
                        return Err(SqlError::unsupported(format!(
                            "LIKE ... ESCAPE {escape}: the escape must be a constant string"
                        )))
                    }
                };
                let mut chars = text.chars();
                match (chars.next(), chars.next()) {
                    (None, _) => None,
                    (Some(c), None) => Some(c),
                    _ => {
                        return Err(SqlError::new(
                            SqlState::INVALID_ESCAPE_SEQUENCE,
                            "invalid escape string",
                        )
                        .with_hint("Escape string must be empty or one character."))
                    }
                }
            }
        };
        let (xb, xt) = self.bind_expr(expr)?;
        let xb = self.coerce(xb, &xt, &xt.clone().unwrap_or(PgType::Text), "LIKE")?;
        let (pb, pt) = self.bind_expr(pattern)?;
        let pb = self.coerce(pb, &pt, &PgType::Text, "LIKE")?;
        Ok((
            BExpr::Like(
                Box::new(xb),
                Box::new(pb),
                negated,
                case_insensitive,
                escape,
            ),
            Some(PgType::Bool),
        ))
    }
}

/// `c = v1 OR c = v2 OR ...` over one column and many constants: the same
/// answer as `c IN (v1, v2, ...)` (NULL when `c` is), hashed.
fn equalities_as_set(operands: &[BExpr]) -> Option<BExpr> {
    if operands.len() < MIN_HASHED_IN_LIST {
        return None;
    }
    let mut column = None;
    let mut values = Vec::with_capacity(operands.len());
    for operand in operands {
        let BExpr::Cmp(CmpOp::Eq, a, b) = operand else {
            return None;
        };
        let (col, value) = match (a.as_ref(), b.as_ref()) {
            (BExpr::Col { up, idx }, BExpr::Const(d))
            | (BExpr::Const(d), BExpr::Col { up, idx }) => ((*up, *idx), d),
            _ => return None,
        };
        if *column.get_or_insert(col) != col || !hashable(value) {
            return None;
        }
        values.push(value.clone());
    }
    let (up, idx) = column?;
    Some(in_set(BExpr::Col { up, idx }, values, false))
}

/// Whether `value` is a constant whose [`hash_key`] matches its equality.
fn hashable(value: &Datum) -> bool {
    matches!(
        value,
        Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_) | Datum::Text(_)
    )
}

/// Lists at least this long of constants are hashed (PostgreSQL hashes
/// from 9 elements).
const MIN_HASHED_IN_LIST: usize = 9;

/// `x IN (list)`, hashed when the list is long and all constants of a type
/// whose hash key matches its equality (integers, text).
fn in_list(x: BExpr, list: Vec<BExpr>, negated: bool) -> BExpr {
    let values: Option<Vec<Datum>> = list
        .iter()
        .map(|item| match item {
            BExpr::Const(d) if hashable(d) => Some(d.clone()),
            _ => None,
        })
        .collect();
    match values {
        Some(values) if values.len() >= MIN_HASHED_IN_LIST => in_set(x, values, negated),
        _ => BExpr::InList(Box::new(x), list, negated),
    }
}

/// `x [NOT] IN` the hashed set of `values`.
fn in_set(x: BExpr, values: Vec<Datum>, negated: bool) -> BExpr {
    let keys = values.iter().map(hash_key).collect();
    BExpr::InSet(Box::new(x), Arc::new(ConstantSet { values, keys }), negated)
}

/// PostgreSQL's error for an operator symbol the library does not have.
fn no_operator(symbol: &str, form: Form, inputs: &[Ty]) -> SqlError {
    crate::functions::resolve::unresolved_error(
        crate::functions::resolve::Unresolved::NoMatch,
        symbol,
        form,
        inputs,
    )
}
