//! Joins whose inner side is a virtual catalog table looked up by key
//! ([`crate::plan::FromPlan::Lookup`]): for each outer row, the table's rows
//! whose keyed column equals the outer row's join column are built
//! ([`VirtualTable::rows_where`]) and the whole join condition is checked
//! on them. Rows built for a key are kept for the next outer rows with that
//! key (charged to the statement's budget, dropped past a bound).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use rocklake_types::datum::{Datum, Row};
use rocklake_types::value::equality::equality_key;
use rocklake_types::SqlError;

use crate::catalog::VirtualTable;
use crate::exec::join::{joined, null_extended};
use crate::exec::memory::{row_bytes, Reservation};
use crate::exec::stream::{RowCow, RowStream, Stream};
use crate::exec::ExecCtx;
use crate::plan::{BExpr, JoinKind};

/// Bytes of looked-up rows kept for reuse before they are dropped.
const KEPT_BYTES: usize = 4 << 20;

/// The virtual table side of a lookup join.
pub(crate) struct LookupSide {
    /// The table.
    pub(crate) table: VirtualTable,
    /// The outer row's join column.
    pub(crate) left_column: usize,
    /// The table's keyed column.
    pub(crate) column: usize,
}

/// An inner or left outer join of a stream with a virtual table's rows
/// looked up per row.
pub(crate) struct LookupJoin<'a> {
    left: Stream<'a>,
    side: LookupSide,
    kind: JoinKind,
    on: Option<&'a BExpr>,
    right_width: usize,
    outer: Vec<&'a [Datum]>,
    ctx: &'a ExecCtx<'a>,
    /// Rows looked up, by the key's equality encoding (the empty key: the
    /// whole table, for a key the column cannot be looked up by).
    kept: HashMap<Vec<u8>, Arc<Vec<Row>>>,
    held: Reservation<'a>,
    /// The outer row being joined, its candidate rows, how far through
    /// them, and whether one matched.
    current: Option<(RowCow<'a>, Arc<Vec<Row>>, usize, bool)>,
}

impl<'a> LookupJoin<'a> {
    /// A join of `left` with `side`'s rows, on `on`.
    pub(crate) fn new(
        left: Stream<'a>,
        side: LookupSide,
        (kind, on, right_width): (JoinKind, Option<&'a BExpr>, usize),
        outer: Vec<&'a [Datum]>,
        ctx: &'a ExecCtx<'a>,
    ) -> Self {
        LookupJoin {
            left,
            side,
            kind,
            on,
            right_width,
            outer,
            ctx,
            kept: HashMap::new(),
            held: Reservation::new(ctx.budget()),
            current: None,
        }
    }

    /// The table's rows that may match `left`: those with its key (none for
    /// NULL, which equals nothing).
    fn candidates(&mut self, left: &[Datum]) -> Result<Arc<Vec<Row>>, SqlError> {
        let key = &left[self.side.left_column];
        if key.is_null() {
            return Ok(Arc::new(Vec::new()));
        }
        let encoded = equality_key(key);
        if let Some(rows) = self.kept.get(&encoded).or_else(|| self.kept.get(&[][..])) {
            return Ok(rows.clone());
        }
        let cat = self.ctx.catalog;
        let (encoded, rows) =
            match self
                .side
                .table
                .rows_where(cat, self.side.column, std::slice::from_ref(key))
            {
                Some(rows) => (encoded, rows),
                None => (Vec::new(), self.side.table.rows(cat)),
            };
        let bytes: usize = rows.iter().map(|row| row_bytes(row)).sum::<usize>() + encoded.len();
        if self.held.bytes() + bytes > KEPT_BYTES {
            self.kept.clear();
            self.held.shrink(usize::MAX);
        }
        self.held.grow(bytes)?;
        let rows = Arc::new(rows);
        self.kept.insert(encoded, rows.clone());
        Ok(rows)
    }
}

impl<'a> RowStream<'a> for LookupJoin<'a> {
    fn next(&mut self) -> Result<Option<RowCow<'a>>, SqlError> {
        loop {
            if self.current.is_none() {
                let Some(left) = self.left.next()? else {
                    return Ok(None);
                };
                let candidates = self.candidates(&left)?;
                self.current = Some((left, candidates, 0, false));
            }
            let (left, candidates, position, matched) = self.current.as_mut().expect("set above");
            while *position < candidates.len() {
                let right = &candidates[*position];
                *position += 1;
                if let Some(row) = joined(left, right, self.on, &self.outer, self.ctx)? {
                    *matched = true;
                    return Ok(Some(Cow::Owned(row)));
                }
            }
            let (left, _, _, matched) = self.current.take().expect("set above");
            if !matched && self.kind == JoinKind::Left {
                return Ok(Some(Cow::Owned(null_extended(left, self.right_width))));
            }
        }
    }
}
