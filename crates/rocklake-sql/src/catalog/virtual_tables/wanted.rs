//! The columns of a virtual table a query reads (see `bind/pruning.rs`):
//! the wide tables (`pg_class`, `pg_attribute`, `pg_type`) build only
//! those values of each row, the others build whole rows and narrow them.

use rocklake_types::datum::{Datum, Row};

/// The columns wanted of a virtual table's rows, in order; `None`: all.
#[derive(Debug, Clone, Copy, Default)]
pub struct Wanted<'a>(pub Option<&'a [usize]>);

impl Wanted<'_> {
    /// Every column.
    pub const ALL: Wanted<'static> = Wanted(None);

    /// The row of the wanted values among `values` (one per column of the
    /// table, evaluated only when wanted).
    pub fn row(self, values: &[&dyn Fn() -> Datum]) -> Row {
        match self.0 {
            None => values.iter().map(|value| value()).collect(),
            Some(columns) => columns
                .iter()
                .map(|&c| values.get(c).map_or(Datum::Null, |value| value()))
                .collect(),
        }
    }

    /// Narrows whole rows to the wanted columns.
    pub fn narrow(self, rows: &mut [Row]) {
        let Some(columns) = self.0 else {
            return;
        };
        // Values move out unless a column is wanted twice.
        let increasing = columns.windows(2).all(|pair| pair[0] < pair[1]);
        for row in rows {
            let narrow: Row = columns
                .iter()
                .map(|&c| match row.get_mut(c) {
                    None => Datum::Null,
                    Some(value) if increasing => std::mem::replace(value, Datum::Null),
                    Some(value) => value.clone(),
                })
                .collect();
            *row = narrow;
        }
    }

    /// Where column `column` of the table is in a wanted row.
    pub fn position(self, column: usize) -> Option<usize> {
        match self.0 {
            None => Some(column),
            Some(columns) => columns.iter().position(|&c| c == column),
        }
    }
}

/// A row of `$wanted`'s columns among the values listed (one expression per
/// column of the table, each evaluated only when wanted).
macro_rules! wanted_row {
    ($wanted:expr; $($value:expr),+ $(,)?) => {
        $wanted.row(&[$(&|| $value),+])
    };
}
pub(crate) use wanted_row;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wanted_columns_in_order_and_only_those_evaluated() {
        let evaluated = std::cell::Cell::new(0);
        let value = |v: i32| {
            evaluated.set(evaluated.get() + 1);
            Datum::Int4(v)
        };
        let row = wanted_row!(Wanted(Some(&[2, 0, 7])); value(10), value(11), value(12));
        assert_eq!(row, vec![Datum::Int4(12), Datum::Int4(10), Datum::Null]);
        assert_eq!(evaluated.get(), 2);
        let whole = wanted_row!(Wanted::ALL; value(10), value(11));
        assert_eq!(whole, vec![Datum::Int4(10), Datum::Int4(11)]);
        let mut rows = vec![vec![Datum::Int4(1), Datum::Int4(2), Datum::Int4(3)]];
        Wanted(Some(&[2, 1])).narrow(&mut rows);
        assert_eq!(rows, vec![vec![Datum::Int4(3), Datum::Int4(2)]]);
        assert_eq!(Wanted(Some(&[2, 1])).position(1), Some(1));
        assert_eq!(Wanted(Some(&[2, 1])).position(0), None);
    }
}
