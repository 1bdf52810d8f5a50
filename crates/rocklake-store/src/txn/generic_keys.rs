//! Primary keys of generic relations (the tables psql, JDBC or ORM users
//! create) across concurrent transactions.
//!
//! Generic rows are keyed by their row sequence, not by their primary key,
//! so two transactions inserting one key write different storage keys and
//! SlateDB's commit-time conflict check never sees them clash. The SQL layer
//! checks a key against the rows the transaction itself sees; this module
//! adds what PostgreSQL's unique index does beyond that:
//!
//! - an insert (or an update that changes the primary key) claims the
//!   relation's key values in [`crate::key_locks`], so a second transaction
//!   inserting the same values waits until the first ends, then fails (it
//!   committed) or goes on (it rolled back);
//! - once claimed, the key is looked up in the latest committed state: a row
//!   with equal key values that this transaction's snapshot does not hold
//!   (committed after it began, or changed to this key since) is a
//!   violation, as PostgreSQL checks unique keys against the latest state.
//!
//! Rows this transaction sees with the same key, or deleted or updated
//! itself, are left to the SQL layer. Only the writer process commits, and a
//! claim is held until its transaction's commit is durable, so the claims
//! are the whole concurrency state.
//!
//! Generic tables have no index: each checked write scans the relation's
//! rows in the latest committed state (fine for the small tables users keep
//! next to a lake, linear in their size per inserted row).

use std::collections::HashSet;

use rocklake_codec::relations::{Relation, RowLayout};
use rocklake_codec::tags::Tag;
use rocklake_types::datum::Datum;

use super::WriteTxn;
use crate::error::StoreResult;
use crate::key_locks::Claim;
use crate::reader::{rows_prefix, KeyedRow};
use crate::unique::{key_description, UniqueKey};

/// The keys of generic rows a transaction deleted or updated: rows of the
/// latest state under them are its own business, not a concurrent commit.
#[derive(Default)]
pub(super) struct TouchedRows(HashSet<Vec<u8>>);

impl TouchedRows {
    /// Remembers `key` if it is a generic row's.
    pub(super) fn note(&mut self, key: &[u8]) {
        if key.first() == Some(&Tag::GenericRow.byte()) {
            self.0.insert(key.to_vec());
        }
    }

    fn contains(&self, key: &[u8]) -> bool {
        self.0.contains(key)
    }
}

/// Whether the store checks `relation`'s primary key here: a generic
/// relation that declares one (catalog layouts key rows by it instead).
pub(super) fn checked(relation: &Relation) -> bool {
    matches!(relation.layout(), RowLayout::Generic { .. }) && !relation.primary_key.is_empty()
}

impl WriteTxn {
    /// Checks the primary key of `row`, about to be inserted into generic
    /// `relation`, against concurrent transactions (see the module
    /// documentation): waits for a transaction in flight that wrote the same
    /// key values, then fails with [`crate::StoreError::UniqueViolation`]
    /// when the latest committed state holds them in a row this transaction
    /// does not see. `updating` is the key of the row an update rewrites.
    pub(super) async fn check_generic_key(
        &mut self,
        relation: &Relation,
        row: &[Datum],
        updating: Option<&[u8]>,
    ) -> StoreResult<()> {
        if !checked(relation) {
            return Ok(());
        }
        let values = key_values(relation, row);
        let mut claim = rows_prefix(relation, &[]);
        claim.extend_from_slice(&values);
        loop {
            match self.claims.claim(&claim) {
                Claim::Claimed => break,
                Claim::HeldBy(holder) => self.claims.wait_for(&holder).await?,
            }
        }
        for latest in self.latest_rows(relation).await? {
            if key_values(relation, &latest.row) != values
                || Some(latest.key.as_slice()) == updating
                || self.touched_rows.contains(&latest.key)
                || self.sees_key(relation, &latest.key, &values).await?
            {
                continue;
            }
            let (columns, values) = key_description(relation, &relation.primary_key, row);
            return Err(UniqueKey {
                schema: relation.schema.clone(),
                table: relation.name.clone(),
                columns,
                values,
            }
            .error());
        }
        Ok(())
    }

    /// [`Self::check_generic_key`] for an update of the row under `key` to
    /// `new_row`: only when the update changes the row's primary key.
    pub(super) async fn check_generic_update(
        &mut self,
        relation: &Relation,
        key: &[u8],
        new_row: &[Datum],
    ) -> StoreResult<()> {
        if !checked(relation) {
            return Ok(());
        }
        let unchanged = match self.view().reads().get(key).await? {
            Some(old) => {
                let old = relation.decode_row(key, &old)?;
                key_values(relation, &old.row) == key_values(relation, new_row)
            }
            None => false,
        };
        if !unchanged {
            self.check_generic_key(relation, new_row, Some(key)).await?;
        }
        Ok(())
    }

    /// Every row of `relation` in the latest committed state (not this
    /// transaction's snapshot), decoded: one scan of the relation.
    async fn latest_rows(&self, relation: &Relation) -> StoreResult<Vec<KeyedRow>> {
        self.inner
            .reads()
            .rows_under(relation, &rows_prefix(relation, &[]))
            .await
    }

    /// Whether this transaction reads the row under `key` with primary-key
    /// values `values` (from its snapshot: it did not write the key).
    async fn sees_key(&self, relation: &Relation, key: &[u8], values: &[u8]) -> StoreResult<bool> {
        let Some(value) = self.view().reads().get(key).await? else {
            return Ok(false);
        };
        let row = relation.decode_row(key, &value)?.row;
        Ok(key_values(relation, &row) == values)
    }
}

/// The primary-key values of `row` in `relation`, encoded so that values
/// PostgreSQL's equality holds equal encode the same (and others not).
fn key_values(relation: &Relation, row: &[Datum]) -> Vec<u8> {
    let mut out = Vec::new();
    for &column in &relation.primary_key {
        encode_canonical(row.get(column).unwrap_or(&Datum::Null), &mut out);
    }
    out
}

/// Appends a self-delimiting encoding of `datum` that is equal for equal
/// values of one type: numerics without trailing fraction zeros (`1.0` =
/// `1.00`), `-0` as `0` and every NaN as one for floats, intervals by their
/// span (`1 mon` = `30 days`), integers of any width as `i64`.
fn encode_canonical(datum: &Datum, out: &mut Vec<u8>) {
    let bytes = |out: &mut Vec<u8>, tag: u8, data: &[u8]| {
        out.push(tag);
        out.extend_from_slice(&(data.len() as u64).to_be_bytes());
        out.extend_from_slice(data);
    };
    match datum {
        Datum::Null => out.push(0),
        Datum::Bool(v) => out.extend_from_slice(&[1, u8::from(*v)]),
        Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_) | Datum::Oid(_) | Datum::Reg { .. } => {
            out.push(2);
            out.extend_from_slice(&datum.as_i64().unwrap_or(0).to_be_bytes());
        }
        Datum::Float4(v) => encode_float(f64::from(*v), out),
        Datum::Float8(v) => encode_float(*v, out),
        Datum::Text(s) => bytes(out, 4, s.as_bytes()),
        Datum::Bytea(b) => bytes(out, 5, b),
        Datum::Uuid(u) => bytes(out, 6, u),
        Datum::TimestampTz(v) | Datum::Timestamp(v) | Datum::Time(v) => {
            out.push(7);
            out.extend_from_slice(&v.to_be_bytes());
        }
        Datum::Date(v) => {
            out.push(8);
            out.extend_from_slice(&v.to_be_bytes());
        }
        Datum::TimeTz {
            micros,
            offset_west_secs,
        } => {
            out.push(9);
            out.extend_from_slice(&micros.to_be_bytes());
            out.extend_from_slice(&offset_west_secs.to_be_bytes());
        }
        Datum::Interval {
            months,
            days,
            micros,
        } => {
            let span = (i128::from(*months) * 30 + i128::from(*days)) * 86_400_000_000
                + i128::from(*micros);
            out.push(10);
            out.extend_from_slice(&span.to_be_bytes());
        }
        Datum::Numeric(text) => bytes(out, 11, canonical_numeric(text).as_bytes()),
        Datum::Tid { block, offset } => {
            out.push(12);
            out.extend_from_slice(&block.to_be_bytes());
            out.extend_from_slice(&offset.to_be_bytes());
        }
        Datum::Array(items) | Datum::Vector(items) | Datum::Record(items) => {
            out.push(13);
            out.extend_from_slice(&(items.len() as u64).to_be_bytes());
            for item in items.iter() {
                encode_canonical(item, out);
            }
        }
    }
}

/// A float as PostgreSQL's equality sees it: `-0 = 0`, `NaN = NaN`.
fn encode_float(v: f64, out: &mut Vec<u8>) {
    let v = if v.is_nan() {
        f64::NAN
    } else if v == 0.0 {
        0.0
    } else {
        v
    };
    out.push(3);
    out.extend_from_slice(&v.to_bits().to_be_bytes());
}

/// A numeric's canonical text (no leading zeros, sign only when not zero)
/// without the trailing zeros of its fraction, which only give its scale.
fn canonical_numeric(text: &str) -> &str {
    if !text.contains('.') {
        return text;
    }
    text.trim_end_matches('0').trim_end_matches('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(datum: Datum) -> Vec<u8> {
        let mut out = Vec::new();
        encode_canonical(&datum, &mut out);
        out
    }

    #[test]
    fn equal_values_encode_the_same() {
        assert_eq!(
            encoded(Datum::Numeric("1.0".into())),
            encoded(Datum::Numeric("1.00".into()))
        );
        assert_eq!(
            encoded(Datum::Numeric("10".into())),
            encoded(Datum::Numeric("10.000".into()))
        );
        assert_ne!(
            encoded(Datum::Numeric("10".into())),
            encoded(Datum::Numeric("1".into()))
        );
        assert_eq!(encoded(Datum::Float8(-0.0)), encoded(Datum::Float8(0.0)));
        assert_eq!(
            encoded(Datum::Float8(f64::NAN)),
            encoded(Datum::Float8(-f64::NAN))
        );
        assert_eq!(
            encoded(Datum::Interval {
                months: 1,
                days: 0,
                micros: 0
            }),
            encoded(Datum::Interval {
                months: 0,
                days: 30,
                micros: 0
            })
        );
        assert_eq!(encoded(Datum::Int4(7)), encoded(Datum::Int8(7)));
    }

    #[test]
    fn encodings_are_self_delimiting() {
        let mut ab_c = Vec::new();
        encode_canonical(&Datum::text("ab"), &mut ab_c);
        encode_canonical(&Datum::text("c"), &mut ab_c);
        let mut a_bc = Vec::new();
        encode_canonical(&Datum::text("a"), &mut a_bc);
        encode_canonical(&Datum::text("bc"), &mut a_bc);
        assert_ne!(ab_c, a_bc);
    }
}
