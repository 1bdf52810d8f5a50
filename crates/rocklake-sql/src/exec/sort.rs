//! ORDER BY: a stage that takes all its input rows (charged to the budget),
//! sorts them with PostgreSQL's ordering and NULL placement, then hands
//! them out.

use std::cmp::Ordering;

use rocklake_types::{Datum, SqlError};

use crate::exec::compare::compare;
use crate::exec::context::ExecCtx;
use crate::exec::memory::{owned_bytes, HeldRows};
use crate::exec::stream::{Buffered, RowCow, RowStream, Stream};
use crate::plan::SortKey;

/// The order of two rows under `keys`.
pub(crate) fn order_rows(a: &[Datum], b: &[Datum], keys: &[SortKey]) -> Ordering {
    for k in keys {
        let (x, y) = (&a[k.idx], &b[k.idx]);
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if k.nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if k.nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            _ => {
                let o = compare(x, y);
                if k.desc {
                    o.reverse()
                } else {
                    o
                }
            }
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// The rows of `input` in the order of `keys` (a stable sort, so equal
/// rows keep their input order).
pub(crate) struct Sort<'a> {
    input: Option<Stream<'a>>,
    keys: &'a [SortKey],
    ctx: &'a ExecCtx<'a>,
    sorted: Option<Buffered<'a>>,
}

impl<'a> Sort<'a> {
    pub(crate) fn new(input: Stream<'a>, keys: &'a [SortKey], ctx: &'a ExecCtx<'a>) -> Self {
        Sort {
            input: Some(input),
            keys,
            ctx,
            sorted: None,
        }
    }
}

impl<'a> RowStream<'a> for Sort<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        if let Some(mut input) = self.input.take() {
            let mut rows = HeldRows::new(self.ctx.budget());
            while let Some(row) = input.next()? {
                let bytes = owned_bytes(&row);
                rows.push(row, bytes)?;
            }
            self.ctx.limits.check()?;
            // The stable merge sort allocates half the rows' slots.
            rows.grow(rows.rows().len() / 2 * std::mem::size_of::<RowCow>())?;
            rows.rows_mut().sort_by(|a, b| order_rows(a, b, self.keys));
            let (rows, held) = rows.into_parts();
            self.sorted = Some(Buffered::new(rows, Some(held)));
        }
        match &mut self.sorted {
            Some(sorted) => sorted.next(),
            None => Ok(None),
        }
    }
}
