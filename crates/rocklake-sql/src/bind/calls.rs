//! Calls of the built-in library ([`crate::functions`]): operators and
//! functions are resolved among the entries of their name by PostgreSQL's
//! rules, their arguments coerced to the types resolution chose (an
//! untyped literal parsed as that type now), and an immutable call of
//! constants computed here, as PostgreSQL's planner folds it (so `1/0` is
//! an error even where no row is read).

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::interval::{parse_interval_with, IntervalFields};
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{Expr, Value};

use crate::bind::Binder;
use crate::functions::{self, resolve};
use crate::plan::{BExpr, Builtin, Call, CallEnv, Form, Param, Reads, Ty, Volatility};

/// PostgreSQL's `FUNC_MAX_ARGS`: a function takes at most this many
/// arguments.
const MAX_ARGUMENTS: usize = 100;

impl Binder<'_> {
    /// `left symbol right` or `symbol operand` through the library; `None`
    /// when the library has no operator of that symbol and form.
    pub(super) fn bind_operator(
        &mut self,
        symbol: &str,
        form: Form,
        operands: Vec<(BExpr, Ty)>,
    ) -> Option<Result<(BExpr, Ty), SqlError>> {
        let candidates = functions::operators(symbol, form);
        if candidates.is_empty() {
            return None;
        }
        Some(self.bind_resolved(symbol, form, candidates, operands))
    }

    /// `name(args)` through the library; `None` when it has no function of
    /// that name.
    pub(super) fn bind_library_function(
        &mut self,
        name: &str,
        args: &[&Expr],
    ) -> Option<Result<(BExpr, Ty), SqlError>> {
        let candidates = functions::functions(name);
        if candidates.is_empty() {
            return None;
        }
        let bound = args
            .iter()
            .map(|a| self.bind_expr(a))
            .collect::<Result<Vec<_>, _>>();
        Some(bound.and_then(|args| self.bind_resolved(name, Form::Function, candidates, args)))
    }

    /// `name(positional, name => value, ...)` in named (or mixed) notation:
    /// the arguments placed by the parameters' names, left-out ones given
    /// their defaults; `None` when the library has no function of that
    /// name.
    pub(super) fn bind_named_call(
        &mut self,
        name: &str,
        positional: &[&Expr],
        named: &[(String, &Expr)],
    ) -> Option<Result<(BExpr, Ty), SqlError>> {
        let candidates = functions::functions(name);
        if candidates.is_empty() {
            return None;
        }
        let placed = candidates
            .iter()
            .find_map(|b| place_named(b, positional, named).map(|args| (*b, args)));
        let Some((builtin, args)) = placed else {
            let mut shown: Vec<String> = positional.iter().map(|e| e.to_string()).collect();
            shown.extend(named.iter().map(|(n, e)| format!("{n} => {e}")));
            return Some(Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {name}({}) does not exist", shown.join(", ")),
            )
            .with_hint(
                "No function matches the given name and argument types. You might need to add \
                 explicit type casts.",
            )));
        };
        let mut bound = Vec::with_capacity(args.len());
        for (i, arg) in args.into_iter().enumerate() {
            bound.push(match arg {
                Placed::Given(e) => match self.bind_expr(e) {
                    Ok(b) => b,
                    Err(e) => return Some(Err(e)),
                },
                Placed::Default(value) => {
                    let t = match &builtin.params[i] {
                        Param::Ty(t) => Some(t.clone()),
                        _ => None,
                    };
                    (BExpr::Const(value), t)
                }
            });
        }
        Some(self.bind_resolved(name, Form::Function, &[builtin], bound))
    }

    /// `name(args)` of bound arguments, through the library (which has it).
    pub(super) fn bind_library_call(
        &mut self,
        name: &str,
        args: Vec<(BExpr, Ty)>,
    ) -> Result<(BExpr, Ty), SqlError> {
        let candidates = functions::functions(name);
        self.bind_resolved(name, Form::Function, candidates, args)
    }

    /// `INTERVAL '...' [qualifier]`: a constant read with the qualifier's
    /// fields.
    pub(super) fn bind_interval_literal(
        &mut self,
        interval: &sqlparser::ast::Interval,
    ) -> Result<(BExpr, Ty), SqlError> {
        let text = match interval.value.as_ref() {
            Expr::Value(v) => match &v.value {
                Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => s.clone(),
                other => other.to_string(),
            },
            other => {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("syntax error at or near \"{other}\""),
                ))
            }
        };
        let field = |f: &Option<sqlparser::ast::DateTimeField>| {
            f.as_ref().map(|f| f.to_string().to_ascii_uppercase())
        };
        let fields = match field(&interval.leading_field) {
            None => None,
            Some(leading) => {
                let last = field(&interval.last_field);
                Some(
                    IntervalFields::of(&leading, last.as_deref()).ok_or_else(|| {
                        SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            format!("syntax error at or near \"{}\"", last.unwrap_or(leading)),
                        )
                    })?,
                )
            }
        };
        let (months, days, micros) = parse_interval_with(&text, fields)?;
        Ok((
            BExpr::Const(Datum::Interval {
                months,
                days,
                micros,
            }),
            Some(PgType::Interval),
        ))
    }

    /// Resolves a call among `candidates` and binds it.
    pub(super) fn bind_resolved(
        &mut self,
        name: &str,
        form: Form,
        candidates: &[&'static Builtin],
        args: Vec<(BExpr, Ty)>,
    ) -> Result<(BExpr, Ty), SqlError> {
        if args.len() > MAX_ARGUMENTS {
            return Err(SqlError::new(
                SqlState::TOO_MANY_ARGUMENTS,
                format!("cannot pass more than {MAX_ARGUMENTS} arguments to a function"),
            ));
        }
        let inputs: Vec<Ty> = args.iter().map(|(_, t)| t.clone()).collect();
        let resolved = resolve::resolve(candidates, &inputs, form)
            .map_err(|why| resolve::unresolved_error(why, name, form, &inputs))?;
        let builtin = resolved.builtin;
        let mut bound = Vec::with_capacity(args.len());
        for (i, ((arg, from), to)) in args.into_iter().zip(&resolved.info.arg_types).enumerate() {
            let any = builtin_param(builtin, i).is_some_and(|p| *p == Param::Any);
            bound.push(if any && from.is_some() {
                arg
            } else {
                self.coerce(arg, &from, to, name)?
            });
        }
        if builtin.reads == Reads::Session {
            self.reads_time = true;
        }
        let mut info = resolved.info;
        // Left-out parameters with defaults get them.
        let first_default = builtin.params.len() - builtin.defaults.len();
        for i in bound.len().max(first_default)..builtin.params.len() {
            bound.push(BExpr::Const(builtin.defaults[i - first_default].clone()));
            if let Param::Ty(t) = &builtin.params[i] {
                info.arg_types.push(t.clone());
                info.untyped.push(false);
            }
        }
        let result = Some(info.result.clone());
        let call = Call {
            builtin,
            args: bound,
            info,
        };
        if builtin.volatility == Volatility::Immutable {
            if let Some(value) = self.fold(&call)? {
                return Ok((BExpr::Const(value), result));
            }
        }
        Ok((BExpr::Call(Box::new(call)), result))
    }

    /// The value of an immutable call whose arguments are constants.
    fn fold(&self, call: &Call) -> Result<Option<Datum>, SqlError> {
        let mut values = Vec::with_capacity(call.args.len());
        for arg in &call.args {
            match arg {
                BExpr::Const(value) => values.push(value.clone()),
                _ => return Ok(None),
            }
        }
        if call.builtin.strict && values.iter().any(Datum::is_null) {
            return Ok(Some(Datum::Null));
        }
        let memory = crate::exec::memory::MemoryBudget::default();
        let env = CallEnv {
            catalog: self.cat,
            memory: &memory,
            interrupt: None,
        };
        (call.builtin.eval)(&values, &call.info, &env).map(Some)
    }
}

/// The parameter of `builtin` at argument position `i` (variadic ones
/// included).
fn builtin_param(builtin: &Builtin, i: usize) -> Option<&Param> {
    builtin.params.get(i).or(builtin.variadic.as_ref())
}

/// An argument of a call in named notation, placed at its parameter.
enum Placed<'e> {
    /// Written in the call.
    Given(&'e Expr),
    /// Left out: the parameter's default.
    Default(Datum),
}

/// The arguments of `b` for a call with `positional` then `named`
/// arguments, or `None` when `b` has no such parameters.
fn place_named<'e>(
    b: &Builtin,
    positional: &[&'e Expr],
    named: &[(String, &'e Expr)],
) -> Option<Vec<Placed<'e>>> {
    if b.names.is_empty() || positional.len() > b.params.len() {
        return None;
    }
    let mut slots: Vec<Option<&'e Expr>> = vec![None; b.params.len()];
    for (i, e) in positional.iter().enumerate() {
        slots[i] = Some(e);
    }
    for (name, e) in named {
        let i = b.names.iter().position(|n| n == name)?;
        if slots[i].is_some() {
            return None;
        }
        slots[i] = Some(e);
    }
    let first_default = b.params.len() - b.defaults.len();
    slots
        .into_iter()
        .enumerate()
        .map(|(i, slot)| match slot {
            Some(e) => Some(Placed::Given(e)),
            None if i >= first_default => {
                Some(Placed::Default(b.defaults[i - first_default].clone()))
            }
            None => None,
        })
        .collect()
}
