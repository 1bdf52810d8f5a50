//! ALTER TABLE on a relation's registry entry: each change returns the
//! altered relation. Rows stay as they are; the new entry reads them (a
//! dropped column's data is skipped, an added column reads its missing value
//! from older rows). Only a type change and a rename that moves the rows to
//! another placement need the store to rewrite rows.

use super::{Placement, Relation, StoredColumn};
use rocklake_types::datum::{ColumnDef, Datum, PgType};

/// Why an ALTER TABLE cannot change a relation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AlterError {
    /// No live column of that name.
    #[error("column \"{column}\" of relation \"{table}\" does not exist")]
    NoSuchColumn {
        /// Table name.
        table: String,
        /// Column name.
        column: String,
    },
    /// A live column of that name exists already.
    #[error("column \"{column}\" of relation \"{table}\" already exists")]
    DuplicateColumn {
        /// Table name.
        table: String,
        /// Column name.
        column: String,
    },
    /// The column is part of the row key, which cannot change in place.
    #[error("column \"{column}\" of relation \"{table}\" is part of its row key in RockLake's key layout and cannot be dropped or change type")]
    KeyColumn {
        /// Table name.
        table: String,
        /// Column name.
        column: String,
    },
}

impl Relation {
    fn stored_index(&self, name: &str) -> Result<usize, AlterError> {
        self.stored
            .iter()
            .position(|c| !c.dropped && c.def.name == name)
            .ok_or_else(|| AlterError::NoSuchColumn {
                table: self.name.clone(),
                column: name.to_string(),
            })
    }

    fn rebuilt(&self, stored: Vec<StoredColumn>, primary_key: Vec<usize>) -> Relation {
        Relation::assemble(
            self.relation_id,
            self.schema.clone(),
            self.name.clone(),
            stored,
            primary_key,
            self.placement.clone(),
            true,
        )
    }

    fn check_not_key(&self, index: usize) -> Result<(), AlterError> {
        if self.placement.is_key_column(index) {
            return Err(AlterError::KeyColumn {
                table: self.name.clone(),
                column: self.stored[index].def.name.clone(),
            });
        }
        Ok(())
    }

    /// `ADD COLUMN`: rows written before read `missing` (the DEFAULT as it
    /// was evaluated when the column was added; `None`: NULL).
    pub fn add_column(
        &self,
        def: ColumnDef,
        missing: Option<Datum>,
    ) -> Result<Relation, AlterError> {
        if self.column_index(&def.name).is_some() {
            return Err(AlterError::DuplicateColumn {
                table: self.name.clone(),
                column: def.name,
            });
        }
        let mut stored = self.stored.clone();
        stored.push(StoredColumn {
            def,
            dropped: false,
            field: 0,
            missing: missing.filter(|m| !m.is_null()),
        });
        Ok(self.rebuilt(stored, self.stored_primary_key.clone()))
    }

    /// `DROP COLUMN`: the column is hidden and its stored data skipped; a
    /// primary key over it goes with it, as in PostgreSQL.
    pub fn drop_column(&self, name: &str) -> Result<Relation, AlterError> {
        let index = self.stored_index(name)?;
        self.check_not_key(index)?;
        let mut stored = self.stored.clone();
        stored[index].dropped = true;
        let primary_key = if self.stored_primary_key.contains(&index) {
            Vec::new()
        } else {
            self.stored_primary_key.clone()
        };
        Ok(self.rebuilt(stored, primary_key))
    }

    /// `RENAME COLUMN`: a name change only (rows are keyed by position).
    pub fn rename_column(&self, from: &str, to: &str) -> Result<Relation, AlterError> {
        let index = self.stored_index(from)?;
        if from != to && self.column_index(to).is_some() {
            return Err(AlterError::DuplicateColumn {
                table: self.name.clone(),
                column: to.to_string(),
            });
        }
        let mut stored = self.stored.clone();
        stored[index].def.name = to.to_string();
        Ok(self.rebuilt(stored, self.stored_primary_key.clone()))
    }

    /// `ALTER COLUMN ... SET/DROP DEFAULT`, `SET/DROP NOT NULL`: `change`
    /// edits the column's definition (not its name or type).
    pub fn alter_column(
        &self,
        name: &str,
        change: impl FnOnce(&mut ColumnDef),
    ) -> Result<Relation, AlterError> {
        let index = self.stored_index(name)?;
        let mut stored = self.stored.clone();
        change(&mut stored[index].def);
        Ok(self.rebuilt(stored, self.stored_primary_key.clone()))
    }

    /// `ALTER COLUMN ... TYPE`: the store rewrites every row with its values
    /// converted (a catalog table's column moves to a new field, so no old
    /// value is read with the new type).
    pub fn retyped(&self, name: &str, pg_type: PgType) -> Result<Relation, AlterError> {
        let index = self.stored_index(name)?;
        self.check_not_key(index)?;
        let mut stored = self.stored.clone();
        stored[index].def.pg_type = pg_type;
        stored[index].def.default = None;
        stored[index].missing = None;
        if self.placement.catalog_table().is_some() {
            stored[index].field = stored
                .iter()
                .map(|c| c.field + 1)
                .max()
                .unwrap_or(0)
                .max(super::catalog::FIRST_EXTRA_FIELD);
        }
        Ok(self.rebuilt(stored, self.stored_primary_key.clone()))
    }

    /// `RENAME TO`: the relation under its new name. Its rows move when the
    /// new name places them elsewhere (e.g. a table renamed to a DuckLake
    /// catalog table's name, as the 0.2 -> 0.3 migration does): see
    /// [`Relation::shares_rows_with`].
    pub fn renamed(&self, to: &str) -> Relation {
        let placement = Placement::derive(self.relation_id, to, &self.stored);
        let moved =
            placement.tag != self.placement.tag || placement.prefix != self.placement.prefix;
        let mut stored = self.stored.clone();
        if moved {
            for column in &mut stored {
                column.field = 0;
            }
        }
        Relation::assemble(
            self.relation_id,
            self.schema.clone(),
            to.to_string(),
            stored,
            self.stored_primary_key.clone(),
            if moved {
                placement
            } else {
                self.placement.clone()
            },
            true,
        )
    }
}
