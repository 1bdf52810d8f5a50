//! Set-returning functions of a select list (`unnest`,
//! `generate_subscripts`, `generate_series`,
//! `information_schema._pg_expandarray`): each input row becomes as many
//! rows as its longest call returns, each with one column per call appended
//! (NULL where a call has run out), as PostgreSQL 10 and later run them.
//! A row whose calls all return nothing is dropped.

use std::borrow::Cow;

use rocklake_types::datum::Datum;
use rocklake_types::{Row, SqlError, SqlState};

use crate::exec::arrays::lower_bound;
use crate::exec::context::{ExecCtx, Scope};
use crate::exec::eval::eval;
use crate::exec::stream::{RowCow, RowStream, Stream};
use crate::plan::{SetCall, SetFunc};

/// The stage that runs a select list's set-returning calls.
pub(crate) struct SetCalls<'a> {
    input: Stream<'a>,
    calls: &'a [SetCall],
    outer: Vec<&'a [Datum]>,
    ctx: &'a ExecCtx<'a>,
    /// The input row being expanded, its calls' values, how many rows it
    /// expands to, and the next row's position among them.
    current: Option<(Row, Vec<SetValues>, usize, usize)>,
}

impl<'a> SetCalls<'a> {
    pub(crate) fn new(
        input: Stream<'a>,
        calls: &'a [SetCall],
        outer: Vec<&'a [Datum]>,
        ctx: &'a ExecCtx<'a>,
    ) -> Self {
        SetCalls {
            input,
            calls,
            outer,
            ctx,
            current: None,
        }
    }

    /// The values of each call for one input row.
    fn call_values(&self, row: &[Datum]) -> Result<Vec<SetValues>, SqlError> {
        let scope = Scope {
            outer: &self.outer,
            row,
            tail: &[],
        };
        let mut results = Vec::with_capacity(self.calls.len());
        for call in self.calls {
            let mut args = Vec::with_capacity(call.args.len());
            for arg in &call.args {
                args.push(eval(arg, self.ctx, scope)?);
            }
            results.push(set_values(call.func, &args)?);
        }
        Ok(results)
    }
}

impl<'a> RowStream<'a> for SetCalls<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        loop {
            if let Some((row, results, rows, at)) = &mut self.current {
                if *at < *rows {
                    self.ctx.tick()?;
                    let mut expanded = Vec::with_capacity(row.len() + results.len());
                    expanded.extend_from_slice(row);
                    expanded.extend(results.iter().map(|values| values.get(*at)));
                    *at += 1;
                    return Ok(Some(Cow::Owned(expanded)));
                }
            }
            let Some(row) = self.input.next()? else {
                return Ok(None);
            };
            let results = self.call_values(&row)?;
            let rows = results.iter().map(SetValues::len).max().unwrap_or(0);
            self.current = Some((row.into_owned(), results, rows, 0));
        }
    }
}

/// A set-returning function in FROM: its values as one-column rows.
pub(crate) struct FunctionScan<'a> {
    values: SetValues,
    spread: bool,
    ordinality: bool,
    next: usize,
    ctx: &'a ExecCtx<'a>,
}

impl<'a> FunctionScan<'a> {
    pub(crate) fn new(
        call: &'a SetCall,
        (spread, ordinality): (bool, bool),
        outer: Vec<&'a [Datum]>,
        ctx: &'a ExecCtx<'a>,
    ) -> Result<Self, SqlError> {
        let scope = Scope {
            outer: &outer,
            row: &[],
            tail: &[],
        };
        let mut args = Vec::with_capacity(call.args.len());
        for arg in &call.args {
            args.push(eval(arg, ctx, scope)?);
        }
        Ok(FunctionScan {
            values: set_values(call.func, &args)?,
            spread,
            ordinality,
            next: 0,
            ctx,
        })
    }
}

impl<'a> RowStream<'a> for FunctionScan<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        if self.next >= self.values.len() {
            return Ok(None);
        }
        self.ctx.tick()?;
        let value = self.values.get(self.next);
        self.next += 1;
        let mut row = match value {
            Datum::Record(fields) if self.spread => fields.to_vec(),
            value => vec![value],
        };
        if self.ordinality {
            row.push(Datum::Int8(self.next as i64));
        }
        Ok(Some(Cow::Owned(row)))
    }
}

/// What one call returns for one row: a list, or an arithmetic series
/// produced as it is read (never held whole).
enum SetValues {
    List(Vec<Datum>),
    Series {
        start: i128,
        step: i128,
        count: usize,
        int4: bool,
    },
}

impl SetValues {
    fn len(&self) -> usize {
        match self {
            SetValues::List(items) => items.len(),
            SetValues::Series { count, .. } => *count,
        }
    }

    /// The value at `at`, NULL past the end.
    fn get(&self, at: usize) -> Datum {
        match self {
            SetValues::List(items) => items.get(at).cloned().unwrap_or(Datum::Null),
            SetValues::Series { .. } if at >= self.len() => Datum::Null,
            SetValues::Series {
                start, step, int4, ..
            } => {
                let value = start + step * at as i128;
                if *int4 {
                    Datum::Int4(value as i32)
                } else {
                    Datum::Int8(value as i64)
                }
            }
        }
    }
}

/// The values one call returns for one row of arguments.
fn set_values(func: SetFunc, args: &[Datum]) -> Result<SetValues, SqlError> {
    if args.iter().take(2).any(Datum::is_null) {
        return Ok(SetValues::List(Vec::new()));
    }
    Ok(match func {
        SetFunc::Unnest => SetValues::List(
            args[0]
                .elements()
                .map(<[Datum]>::to_vec)
                .unwrap_or_default(),
        ),
        SetFunc::ExpandArray => SetValues::List(
            args[0]
                .elements()
                .unwrap_or_default()
                .iter()
                .zip(1..)
                .map(|(x, n)| Datum::Record(vec![x.clone(), Datum::Int4(n)].into()))
                .collect(),
        ),
        SetFunc::GenerateSubscripts => {
            let (Some(items), Some(1)) = (args[0].elements(), args[1].as_i64()) else {
                return Ok(SetValues::List(Vec::new()));
            };
            let reverse = matches!(args.get(2), Some(Datum::Bool(true)));
            let lower = i128::from(lower_bound(&args[0]));
            let count = items.len();
            SetValues::Series {
                start: if reverse {
                    lower + count as i128 - 1
                } else {
                    lower
                },
                step: if reverse { -1 } else { 1 },
                count,
                int4: true,
            }
        }
        SetFunc::GenerateSeries => {
            let (Some(start), Some(stop)) = (args[0].as_i64(), args[1].as_i64()) else {
                return Ok(SetValues::List(Vec::new()));
            };
            let step = match args.get(2) {
                None => 1,
                Some(d) if d.is_null() => return Ok(SetValues::List(Vec::new())),
                Some(d) => d.as_i64().unwrap_or(1),
            };
            if step == 0 {
                return Err(SqlError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    "step size cannot equal zero",
                ));
            }
            let count = if (step > 0 && start > stop) || (step < 0 && start < stop) {
                0
            } else {
                (i128::from(stop) - i128::from(start)) / i128::from(step) + 1
            };
            let int4 = matches!(args[0], Datum::Int4(_) | Datum::Int2(_))
                && matches!(args[1], Datum::Int4(_) | Datum::Int2(_));
            SetValues::Series {
                start: i128::from(start),
                step: i128::from(step),
                count: usize::try_from(count).unwrap_or(usize::MAX),
                int4,
            }
        }
    })
}
