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
use rocklake_types::value::equality::push_equality_key;

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
        push_equality_key(row.get(column).unwrap_or(&Datum::Null), &mut out);
    }
    out
}
