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
            stored[index].field = super::next_extra_field(&stored);
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::keys::encode_key;
    use crate::relations::RowLayout;
    use crate::tables::CatalogTable;
    use crate::tags::Tag;

    fn int(v: i64) -> Datum {
        Datum::Int8(v)
    }

    fn columns(spec: &[(&str, PgType)]) -> Vec<ColumnDef> {
        spec.iter()
            .map(|(name, ty)| ColumnDef::new(*name, ty.clone()))
            .collect()
    }

    /// `ducklake_data_file` as DuckLake 0.3 (DuckDB 1.4) creates it.
    fn data_file_0_3() -> Relation {
        use PgType::{Bool, Int8, Varchar};
        Relation::new(
            4,
            "public".into(),
            "ducklake_data_file".into(),
            columns(&[
                ("data_file_id", Int8),
                ("table_id", Int8),
                ("begin_snapshot", Int8),
                ("end_snapshot", Int8),
                ("file_order", Int8),
                ("path", Varchar),
                ("path_is_relative", Bool),
                ("file_format", Varchar),
                ("record_count", Int8),
                ("file_size_bytes", Int8),
                ("footer_size", Int8),
                ("row_id_start", Int8),
                ("partition_id", Int8),
                ("encryption_key", Varchar),
                ("partial_file_info", Varchar),
                ("mapping_id", Int8),
            ]),
            vec![0],
        )
    }

    fn data_file_row(id: i64, partial: &str) -> Vec<Datum> {
        let mut row = vec![Datum::Null; 16];
        row[0] = int(id);
        row[1] = int(3);
        row[2] = int(1);
        row[5] = Datum::text(format!("f{id}.parquet"));
        row[14] = Datum::text(partial.to_string());
        row[15] = int(9);
        row
    }

    /// Round trip through the registry, as the store reads the entry back.
    fn reloaded(relation: &Relation) -> Relation {
        Relation::decode(relation.relation_id, &relation.encode()).unwrap()
    }

    #[test]
    fn a_spec_0_3_catalog_table_keeps_its_tag_and_key_through_the_migration() {
        let v03 = data_file_0_3();
        assert_eq!(v03.placement().tag, Tag::DataFile);
        let old_row = data_file_row(7, "partial_max:12");
        let key = v03.row_key(&old_row, 70).unwrap();
        assert_eq!(key, encode_key(Tag::DataFile, &[3, 7]));
        let value = v03.row_value(&old_row, 70).unwrap();

        // The 0.3 -> 0.4 migration, as DuckDB 1.5.5 sends it.
        let migrated = v03
            .add_column(ColumnDef::new("partial_max", PgType::Int8), None)
            .unwrap()
            .drop_column("partial_file_info")
            .unwrap();
        let migrated = reloaded(&migrated);
        let names: Vec<&str> = migrated.columns.iter().map(|c| c.name.as_str()).collect();
        let v10 = CatalogTable::by_name("ducklake_data_file").unwrap();
        let v10_names: Vec<&str> = v10.columns.iter().map(|c| c.name).collect();
        assert_eq!(names, v10_names, "the 1.0 column list, in the 1.0 order");
        let decoded = migrated.decode_row(&key, &value).unwrap();
        let mut expected = old_row.clone();
        expected.remove(14);
        expected.push(Datum::Null);
        assert_eq!(decoded.row, expected);
        assert_eq!(decoded.row_seq, 70);

        // Rows written after the migration are byte-identical to a 1.0
        // catalog's: the field numbers come from the column names.
        let fresh = Relation::new(
            5,
            "public".into(),
            "ducklake_data_file".into(),
            v10.column_defs(),
            vec![0],
        );
        let mut new_row = expected.clone();
        new_row[15] = int(12);
        assert_eq!(
            migrated.row_value(&new_row, 71).unwrap(),
            fresh.row_value(&new_row, 71).unwrap()
        );
    }

    #[test]
    fn added_columns_read_their_default_in_older_rows_only() {
        let table = CatalogTable::by_name("ducklake_column").unwrap();
        let v03_columns: Vec<ColumnDef> = table.column_defs()[..11].to_vec();
        let v03 = Relation::new(2, "public".into(), table.name.into(), v03_columns, vec![]);
        assert_eq!(v03.placement().tag, Tag::Column);
        let mut old_row = vec![Datum::Null; 11];
        for (i, v) in [(0, 5), (1, 1), (3, 2), (4, 0)] {
            old_row[i] = int(v);
        }
        old_row[5] = Datum::text("a");
        let key = v03.row_key(&old_row, 1).unwrap();
        let old_value = v03.row_value(&old_row, 1).unwrap();
        let mut with_type = ColumnDef::new("default_value_type", PgType::Varchar);
        with_type.default = Some("literal".into());
        let altered = reloaded(
            &v03.add_column(with_type, Some(Datum::text("literal")))
                .unwrap()
                .add_column(
                    ColumnDef::new("default_value_dialect", PgType::Varchar),
                    None,
                )
                .unwrap(),
        );
        let decoded = altered.decode_row(&key, &old_value).unwrap().row;
        assert_eq!(decoded[11], Datum::text("literal"));
        assert_eq!(decoded[12], Datum::Null);
        // A later row with an explicit NULL stays NULL.
        let mut new_row = decoded.clone();
        new_row[11] = Datum::Null;
        let new_value = altered.row_value(&new_row, 2).unwrap();
        assert_eq!(
            altered.decode_row(&key, &new_value).unwrap().row[11],
            Datum::Null
        );
    }

    #[test]
    fn dropped_and_readded_columns_never_resurrect_old_values() {
        let table = CatalogTable::by_name("ducklake_delete_file").unwrap();
        let relation = Relation::new(
            3,
            "public".into(),
            table.name.into(),
            table.column_defs(),
            vec![0],
        );
        let mut row = vec![Datum::Null; table.columns.len()];
        row[0] = int(1);
        row[1] = int(2);
        row[12] = int(99); // partial_max
        let key = relation.row_key(&row, 1).unwrap();
        let value = relation.row_value(&row, 1).unwrap();
        let readded = reloaded(
            &relation
                .drop_column("partial_max")
                .unwrap()
                .add_column(ColumnDef::new("partial_max", PgType::Int8), None)
                .unwrap(),
        );
        let decoded = readded.decode_row(&key, &value).unwrap().row;
        assert_eq!(decoded.len(), table.columns.len());
        assert_eq!(decoded[12], Datum::Null);
    }

    #[test]
    fn renames_keep_the_rows_and_errors_name_the_column() {
        let relation = Relation::new(
            9,
            "public".into(),
            "ducklake_inlined_data_1_2".into(),
            columns(&[
                ("row_id", PgType::Int8),
                ("begin_snapshot", PgType::Int8),
                ("end_snapshot", PgType::Int8),
                ("a", PgType::Int4),
            ]),
            vec![],
        );
        let row = vec![int(4), int(2), Datum::Null, Datum::Int4(8)];
        let key = relation.row_key(&row, 3).unwrap();
        let value = relation.row_value(&row, 3).unwrap();
        let mut renamed = relation.clone();
        for (from, to) in [
            ("row_id", "_ducklake_row_id"),
            ("begin_snapshot", "_ducklake_begin_snapshot"),
            ("end_snapshot", "_ducklake_end_snapshot"),
        ] {
            renamed = reloaded(&renamed.rename_column(from, to).unwrap());
            assert_eq!(renamed.layout(), relation.layout());
        }
        assert_eq!(renamed.decode_row(&key, &value).unwrap().row, row);
        assert_eq!(renamed.role_column("end_snapshot"), Some(2));
        assert!(matches!(
            renamed.drop_column("_ducklake_row_id"),
            Err(AlterError::KeyColumn { .. })
        ));
        assert!(matches!(
            renamed.rename_column("a", "_ducklake_row_id"),
            Err(AlterError::DuplicateColumn { .. })
        ));
        assert!(matches!(
            renamed.drop_column("row_id"),
            Err(AlterError::NoSuchColumn { .. })
        ));
        // Renamed to a name that is not an inlined table's, its rows move.
        let moved = renamed.renamed("archive");
        assert!(!moved.shares_rows_with(&renamed));
        assert!(matches!(
            moved.layout(),
            RowLayout::Generic { relation_id: 9 }
        ));
    }

    #[test]
    fn spec_1_1_inlined_tables_key_by_their_system_columns_not_user_ones() {
        let relation = Relation::new(
            9,
            "public".into(),
            "ducklake_inlined_data_1_3".into(),
            columns(&[
                ("_ducklake_row_id", PgType::Int8),
                ("_ducklake_begin_snapshot", PgType::Int8),
                ("_ducklake_end_snapshot", PgType::Int8),
                ("row_id", PgType::Int8),
                ("begin_snapshot", PgType::Int8),
            ]),
            vec![],
        );
        let a = vec![int(0), int(5), Datum::Null, int(1), Datum::Null];
        let b = vec![int(1), int(5), Datum::Null, int(1), Datum::Null];
        let key_a = relation.row_key(&a, 1).unwrap();
        assert_eq!(key_a, encode_key(Tag::InlinedData, &[1, 3, 0, 5]));
        assert_ne!(key_a, relation.row_key(&b, 2).unwrap());
        let value = relation.row_value(&a, 1).unwrap();
        assert_eq!(relation.decode_row(&key_a, &value).unwrap().row, a);
    }

    #[test]
    fn spec_1_1_columns_have_fields_of_their_own() {
        for (name, column, ty, field) in [
            ("ducklake_data_file", "row_group_count", PgType::Int8, 17),
            ("ducklake_delete_file", "row_group_count", PgType::Int8, 14),
            (
                "ducklake_table_column_stats",
                "min_is_exact",
                PgType::Bool,
                8,
            ),
            (
                "ducklake_table_column_stats",
                "max_is_exact",
                PgType::Bool,
                9,
            ),
            (
                "ducklake_file_column_stats",
                "max_is_exact",
                PgType::Bool,
                12,
            ),
            ("ducklake_schema", "parent_schema_id", PgType::Int8, 8),
        ] {
            let table = CatalogTable::by_name(name).unwrap();
            let relation =
                Relation::new(1, "public".into(), name.into(), table.column_defs(), vec![])
                    .add_column(ColumnDef::new(column, ty), None)
                    .unwrap();
            let added = relation.stored_columns().last().unwrap();
            assert_eq!(added.field, field, "{name}.{column}");
        }
    }

    proptest! {
        /// Rows of a generic table written before any number of ADD and DROP
        /// COLUMNs read as the table now is: dropped columns gone, added ones
        /// their default.
        #[test]
        fn old_dynamic_rows_read_under_every_later_column_list(
            values in proptest::collection::vec(any::<i32>(), 1..6),
            ops in proptest::collection::vec((any::<bool>(), any::<u8>(), any::<i32>()), 0..8),
        ) {
            let defs: Vec<ColumnDef> = (0..values.len())
                .map(|i| ColumnDef::new(format!("c{i}"), PgType::Int4))
                .collect();
            let mut relation = Relation::new(11, "public".into(), "t".into(), defs, vec![]);
            let row: Vec<Datum> = values.iter().map(|v| Datum::Int4(*v)).collect();
            let key = relation.row_key(&row, 5).unwrap();
            let value = relation.row_value(&row, 5).unwrap();
            let mut expected = row.clone();
            for (n, (add, pick, default)) in ops.into_iter().enumerate() {
                if add || relation.columns.len() == 1 {
                    let def = ColumnDef::new(format!("added{n}"), PgType::Int4);
                    relation = relation.add_column(def, Some(Datum::Int4(default))).unwrap();
                    expected.push(Datum::Int4(default));
                } else {
                    let index = pick as usize % relation.columns.len();
                    let name = relation.columns[index].name.clone();
                    relation = relation.drop_column(&name).unwrap();
                    expected.remove(index);
                }
                relation = reloaded(&relation);
                prop_assert_eq!(&relation.decode_row(&key, &value).unwrap().row, &expected);
            }
        }
    }
}
