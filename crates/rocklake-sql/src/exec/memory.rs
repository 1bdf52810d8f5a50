//! [`MemoryBudget`]: the memory one statement may hold in rows it keeps
//! (hash tables of joins, sort buffers, groups, DISTINCT sets, materialized
//! subqueries, rows read into the statement). Past its limit the statement
//! fails with PostgreSQL's `53200 out of memory` instead of growing the
//! server until the operating system kills it.
//!
//! Rows that stream through a statement are not charged: a join of two
//! tables holds its inner side, not its product.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};

use rocklake_types::{Datum, SqlError, SqlState};

/// The statement memory limit when none is configured.
pub const DEFAULT_STATEMENT_MEMORY_LIMIT: usize = 256 * 1024 * 1024;

/// What one statement may hold, and what it holds now.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: usize,
    used: AtomicUsize,
    peak: AtomicUsize,
}

impl Default for MemoryBudget {
    fn default() -> Self {
        MemoryBudget::new(DEFAULT_STATEMENT_MEMORY_LIMIT)
    }
}

impl MemoryBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Self {
        MemoryBudget {
            limit,
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        }
    }

    /// Bytes held now.
    #[cfg(test)]
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Most bytes held at once.
    #[cfg(test)]
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// Takes `bytes` from the budget, or fails with 53200 when that would go
    /// over the limit (and takes nothing).
    pub fn charge(&self, bytes: usize) -> Result<(), SqlError> {
        let used = self.used.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if used > self.limit {
            self.used.fetch_sub(bytes, Ordering::Relaxed);
            return Err(SqlError::new(SqlState::OUT_OF_MEMORY, "out of memory").with_detail(
                format!(
                    "The statement needs more than its memory limit of {} to hold rows (--statement-memory-limit).",
                    human_bytes(self.limit)
                ),
            ));
        }
        self.peak.fetch_max(used, Ordering::Relaxed);
        Ok(())
    }

    /// Gives `bytes` back.
    pub fn release(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }
}

impl crate::plan::ValueMemory for MemoryBudget {
    fn check(&self, bytes: usize) -> Result<(), SqlError> {
        self.charge(bytes)?;
        self.release(bytes);
        Ok(())
    }
}

/// Bytes of a budget held by one operator, given back when it is dropped.
pub(crate) struct Reservation<'a> {
    budget: &'a MemoryBudget,
    bytes: usize,
}

impl<'a> Reservation<'a> {
    /// Nothing held yet.
    pub(crate) fn new(budget: &'a MemoryBudget) -> Self {
        Reservation { budget, bytes: 0 }
    }

    /// Holds `bytes` more.
    pub(crate) fn grow(&mut self, bytes: usize) -> Result<(), SqlError> {
        self.budget.charge(bytes)?;
        self.bytes += bytes;
        Ok(())
    }

    /// The bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Holds `bytes` less.
    pub(crate) fn shrink(&mut self, bytes: usize) {
        let bytes = bytes.min(self.bytes);
        self.budget.release(bytes);
        self.bytes -= bytes;
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
    }
}

/// What the allocator adds to each heap block (its header and rounding).
pub(crate) const ALLOCATION_OVERHEAD: usize = 16;

/// The memory a kept row takes: its values and what they point to.
pub(crate) fn row_bytes(row: &[Datum]) -> usize {
    std::mem::size_of::<Vec<Datum>>()
        + ALLOCATION_OVERHEAD
        + row.iter().map(datum_bytes).sum::<usize>()
}

/// The heap memory of a pipeline row: its values when it owns them, nothing
/// when it is borrowed in place from a scan.
#[allow(clippy::ptr_arg)] // whether it is owned is the point
pub(crate) fn owned_bytes(row: &Cow<'_, [Datum]>) -> usize {
    match row {
        Cow::Owned(values) => row_bytes(values),
        Cow::Borrowed(_) => 0,
    }
}

/// Rows an operator keeps, with their memory charged as they arrive: each
/// owned row's values, and the vector's slots as it grows (charged before
/// it grows, so the old and new buffer both count while it moves).
pub(crate) struct HeldRows<'a, T> {
    rows: Vec<T>,
    held: Reservation<'a>,
}

impl<'a, T> HeldRows<'a, T> {
    /// No rows yet.
    pub(crate) fn new(budget: &'a MemoryBudget) -> Self {
        HeldRows {
            rows: Vec::new(),
            held: Reservation::new(budget),
        }
    }

    /// Keeps `row`, which owns `value_bytes` on the heap (see [`owned_bytes`]).
    pub(crate) fn push(&mut self, row: T, value_bytes: usize) -> Result<(), SqlError> {
        if self.rows.len() == self.rows.capacity() {
            let slot = std::mem::size_of::<T>();
            let old = self.rows.capacity();
            let more = old.max(64);
            // While the buffer moves the old one is still allocated.
            self.held.grow((old + more) * slot)?;
            self.rows.reserve_exact(more);
            self.held.shrink(old * slot);
        }
        self.held.grow(value_bytes)?;
        self.rows.push(row);
        Ok(())
    }

    /// Charges `bytes` of working memory the rows need next (a sort's
    /// merge buffer, an index over them).
    pub(crate) fn grow(&mut self, bytes: usize) -> Result<(), SqlError> {
        self.held.grow(bytes)
    }

    /// The rows.
    pub(crate) fn rows(&self) -> &[T] {
        &self.rows
    }

    /// The rows, mutably (to sort them).
    pub(crate) fn rows_mut(&mut self) -> &mut [T] {
        &mut self.rows
    }

    /// The rows and the reservation that pays for them.
    pub(crate) fn into_parts(self) -> (Vec<T>, Reservation<'a>) {
        (self.rows, self.held)
    }
}

fn datum_bytes(datum: &Datum) -> usize {
    std::mem::size_of::<Datum>()
        + match datum {
            Datum::Text(s) => s.len(),
            Datum::Bytea(b) => b.len(),
            Datum::Numeric(n) => n.len(),
            Datum::Reg { name, .. } => name.len(),
            Datum::Array(items) | Datum::Vector(items) => items.iter().map(datum_bytes).sum(),
            _ => 0,
        }
}

/// `256 MiB`, `1.5 GiB`, `512 kB`.
pub fn human_bytes(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b >= KIB * KIB * KIB {
        format!("{:.1} GiB", b / (KIB * KIB * KIB))
    } else if b >= KIB * KIB {
        format!("{:.0} MiB", b / (KIB * KIB))
    } else {
        format!("{:.0} kB", b / KIB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_up_to_the_limit_and_gives_back_on_drop() {
        let budget = MemoryBudget::new(1000);
        {
            let mut held = Reservation::new(&budget);
            held.grow(600).unwrap();
            let error = held.grow(600).unwrap_err();
            assert_eq!(error.code, SqlState::OUT_OF_MEMORY);
            assert_eq!(error.message, "out of memory");
            assert_eq!(budget.used(), 600, "a refused charge takes nothing");
            held.grow(400).unwrap();
        }
        assert_eq!(budget.used(), 0);
        assert_eq!(budget.peak(), 1000);
        assert!(row_bytes(&[Datum::text("abc")]) > row_bytes(&[Datum::Int8(1)]));
    }

    #[test]
    fn held_rows_charge_their_slots_and_values() {
        let budget = MemoryBudget::new(1 << 20);
        let mut rows = HeldRows::new(&budget);
        let row = vec![Datum::Int8(1)];
        rows.push(row.clone(), row_bytes(&row)).unwrap();
        let slots = 64 * std::mem::size_of::<Vec<Datum>>();
        assert_eq!(budget.used(), slots + row_bytes(&row));
        for _ in 1..65 {
            rows.push(row.clone(), row_bytes(&row)).unwrap();
        }
        assert_eq!(rows.rows().len(), 65);
        assert_eq!(budget.used(), 2 * slots + 65 * row_bytes(&row));
        assert!(
            budget.peak() >= 3 * slots,
            "old and new buffer while it moves"
        );
        drop(rows);
        assert_eq!(budget.used(), 0);
    }
}
