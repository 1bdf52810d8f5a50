//! The right rows of joins of a virtual catalog table looked up by key
//! ([`crate::plan::FromPlan::Lookup`]): for each left row, the table's rows
//! whose keyed column equals the left row's join column are built
//! ([`crate::catalog::VirtualTable::wanted_rows_where`]); the nested join
//! ([`crate::exec::nested_join`]) checks the whole join condition on them.
//! Rows built for a key are kept for the next left rows with that key
//! (charged to the statement's budget, dropped past a bound).

use std::collections::HashMap;
use std::sync::Arc;

use rocklake_types::datum::{Datum, Row};
use rocklake_types::value::equality::push_equality_key;
use rocklake_types::SqlError;

use crate::catalog::{VirtualTable, Wanted};
use crate::exec::context::ExecCtx;
use crate::exec::memory::{row_bytes, Reservation};
use crate::exec::nested_join::RightRows;

/// Bytes of looked-up rows kept for reuse before they are dropped.
const KEPT_BYTES: usize = 4 << 20;

/// The virtual table side of a lookup join.
pub(crate) struct LookupSide<'a> {
    /// The table.
    pub(crate) table: VirtualTable,
    /// The outer row's join column.
    pub(crate) left_column: usize,
    /// The table's keyed column.
    pub(crate) column: usize,
    /// The columns the query reads, in order (`None`: all).
    pub(crate) columns: Option<&'a [usize]>,
}

/// A virtual table's rows looked up by key, as the right side of a nested
/// join.
pub(crate) struct LookupRows<'a> {
    side: LookupSide<'a>,
    ctx: &'a ExecCtx<'a>,
    /// Rows looked up, by the key's equality encoding (the empty key: the
    /// whole table, for a key the column cannot be looked up by).
    kept: HashMap<Vec<u8>, Arc<Vec<Row>>>,
    held: Reservation<'a>,
    /// The current left row's key, encoded (reused from row to row).
    key: Vec<u8>,
}

impl<'a> LookupRows<'a> {
    /// `side`'s rows, looked up per left row.
    pub(crate) fn new(side: LookupSide<'a>, ctx: &'a ExecCtx<'a>) -> Self {
        LookupRows {
            side,
            ctx,
            kept: HashMap::new(),
            held: Reservation::new(ctx.budget()),
            key: Vec::new(),
        }
    }
}

impl RightRows for LookupRows<'_> {
    /// The table's rows that may match `left`: those with its key (none for
    /// NULL, which equals nothing).
    fn rows_for(&mut self, left: &[Datum]) -> Result<Arc<Vec<Row>>, SqlError> {
        let key = &left[self.side.left_column];
        if key.is_null() {
            return Ok(Arc::new(Vec::new()));
        }
        self.key.clear();
        push_equality_key(key, &mut self.key);
        if let Some(rows) = self.kept.get(&self.key).or_else(|| self.kept.get(&[][..])) {
            return Ok(rows.clone());
        }
        let encoded = self.key.clone();
        let cat = self.ctx.catalog;
        let wanted = Wanted(self.side.columns);
        let table = self.side.table;
        let (encoded, rows) =
            match table.wanted_rows_where(cat, self.side.column, std::slice::from_ref(key), wanted)
            {
                Some(rows) => (encoded, rows),
                None => (Vec::new(), table.wanted_rows(cat, wanted)),
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
