//! Rows of a virtual table for given values of one column, without building
//! the whole table: the rows a catalog lookup such as
//! `pg_attribute WHERE attrelid = X` or DuckDB's `... AND relname = 'x'`
//! reads. With thousands of relations the whole of `pg_class` or
//! `pg_attribute` is tens of thousands of rows, most of a lookup's cost.
//!
//! [`VirtualTable::wanted_rows_where`] returns exactly the rows of
//! [`VirtualTable::rows`] whose column equals one of the keys (PostgreSQL's
//! equality, [`equality_key`]); it builds the rows of the relations that
//! can hold such a value and keeps those that do.

use std::collections::{BTreeSet, HashSet};

use rocklake_types::datum::{Datum, PgType, Row};
use rocklake_types::value::equality::{equality_key, push_equality_key};

use super::{pg_catalog, VirtualTable, Wanted};
use crate::catalog::Catalog;

/// The columns whose values pick rows without building the whole table.
const KEYED: &[(VirtualTable, &str)] = &[
    (VirtualTable::Class, "oid"),
    (VirtualTable::Class, "relname"),
    (VirtualTable::Attribute, "attrelid"),
    (VirtualTable::Type, "oid"),
    (VirtualTable::Constraint, "conrelid"),
];

impl VirtualTable {
    /// Whether [`VirtualTable::wanted_rows_where`] can pick rows by column `column`
    /// (a position in [`VirtualTable::columns`]) without building the table.
    pub fn is_keyed(self, column: usize) -> bool {
        self.columns()
            .get(column)
            .is_some_and(|c| self.keyed_by(&c.name))
    }

    /// Whether the column named `name` is keyed.
    fn keyed_by(self, name: &str) -> bool {
        KEYED
            .iter()
            .any(|(table, keyed)| *table == self && *keyed == name)
    }

    /// The rows whose column `column` equals one of `keys`, in the order of
    /// [`VirtualTable::rows`] per key. For a column that is not keyed, the
    /// whole table is built and filtered. `None` when a key is not a value
    /// of the column's kind (integers and oids for an oid column, text for a
    /// name): PostgreSQL would compare them after a cast, so the caller
    /// filters the whole table as the query says. Only the `wanted`
    /// columns are built (see [`Wanted`]).
    pub fn wanted_rows_where(
        self,
        cat: &Catalog,
        column: usize,
        keys: &[Datum],
        wanted: Wanted<'_>,
    ) -> Option<Vec<Row>> {
        let columns = self.columns();
        let def = columns.get(column)?;
        let pg_type = &def.pg_type;
        let comparable = |key: &Datum| match key {
            Datum::Null => true,
            Datum::Int2(_)
            | Datum::Int4(_)
            | Datum::Int8(_)
            | Datum::Oid(_)
            | Datum::Reg { .. } => {
                matches!(
                    pg_type,
                    PgType::Oid | PgType::Int2 | PgType::Int4 | PgType::Int8
                )
            }
            Datum::Text(_) => pg_type.is_string(),
            _ => false,
        };
        if !keys.iter().all(comparable) {
            return None;
        }
        // Each key once: `relname IN ('x', 'x')` is one relation's rows.
        let mut keys_wanted = HashSet::new();
        let mut distinct = Vec::new();
        for key in keys.iter().filter(|key| !key.is_null()) {
            if keys_wanted.insert(equality_key(key)) {
                distinct.push(key);
            }
        }
        // The rows are built with the key column, to be picked by it.
        let wanted_at = wanted.position(column);
        let (built, key_at) = match wanted_at {
            Some(at) => (wanted, at),
            None => (Wanted::ALL, column),
        };
        let mut rows = if self.keyed_by(&def.name) {
            // Each relation once: `relname IN ('t', 't_pkey')` names one
            // relation twice (its table and its index).
            let mut owners = BTreeSet::new();
            for key in distinct {
                self.owners(cat, &def.name, key, &mut owners);
            }
            self.rows_of(cat, &owners, &keys_wanted, built)
        } else {
            self.wanted_rows(cat, built)
        };
        let mut key = Vec::new();
        rows.retain(|row| {
            key.clear();
            push_equality_key(&row[key_at], &mut key);
            keys_wanted.contains(&key)
        });
        if wanted_at.is_none() {
            wanted.narrow(&mut rows);
        }
        Some(rows)
    }

    /// Adds the positions of the relations whose rows may have `key` in the
    /// column named `column` (perhaps more: the caller keeps the rows that
    /// do).
    fn owners(self, cat: &Catalog, column: &str, key: &Datum, owners: &mut BTreeSet<usize>) {
        if let (VirtualTable::Class, "relname") = (self, column) {
            let Some(name) = key.as_str() else { return };
            owners.extend(cat.named(name));
            return;
        }
        if let Some(oid) = key.as_i64().and_then(|v| u32::try_from(v).ok()) {
            owners.extend(cat.owners_of(oid));
        }
    }

    /// The table's rows of the relations at `owners` (in the order of
    /// [`VirtualTable::rows`]), and for `pg_type` the built-in types'
    /// rows whose oid is `wanted`.
    fn rows_of(
        self,
        cat: &Catalog,
        owners: &BTreeSet<usize>,
        wanted: &HashSet<Vec<u8>>,
        columns: Wanted<'_>,
    ) -> Vec<Row> {
        let mut rows = Vec::new();
        let relations = owners.iter().map(|&i| &cat.relations[i]);
        match self {
            VirtualTable::Class => {
                relations.for_each(|r| pg_catalog::class_rows_of(r, columns, &mut rows))
            }
            VirtualTable::Attribute => {
                relations.for_each(|r| pg_catalog::attribute_rows_of(r, columns, &mut rows))
            }
            VirtualTable::Type => {
                rows = pg_catalog::builtin_type_rows(cat, columns, |oid| {
                    wanted.contains(&equality_key(&Datum::Oid(oid)))
                });
                rows.extend(relations.map(|r| pg_catalog::row_type_row(cat, columns, r)));
            }
            VirtualTable::Constraint => {
                rows.extend(relations.filter_map(|r| pg_catalog::constraint_row_of(r)));
                columns.narrow(&mut rows);
            }
            _ => rows = self.wanted_rows(cat, columns),
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Arc;

    use rocklake_types::datum::{ColumnDef, PgType};

    use super::*;
    use crate::storage::RelationDef;

    fn relation(schema: &str, name: &str, key: bool) -> RelationDef {
        RelationDef::new(
            schema,
            name,
            vec![
                ColumnDef::new("id", PgType::Int8),
                ColumnDef::new("label", PgType::Text),
            ],
            if key { vec![0] } else { Vec::new() },
        )
    }

    impl VirtualTable {
        fn rows_where(self, cat: &Catalog, column: usize, keys: &[Datum]) -> Option<Vec<Row>> {
            self.wanted_rows_where(cat, column, keys, Wanted::ALL)
        }
    }

    fn catalog() -> Catalog {
        Catalog {
            relations: Arc::new(vec![
                relation("public", "a", true).into(),
                relation("public", "b", false).into(),
                relation("lake", "a", false).into(),
                relation("public", "a_pkey", true).into(),
            ]),
            schemas: Arc::new(vec!["public".into(), "lake".into()]),
            ..Catalog::default()
        }
    }

    /// For every keyed column and every value it holds (plus values it
    /// does not), the keyed rows are the whole table's rows with that value.
    #[test]
    fn keyed_rows_are_the_tables_rows_with_the_key() {
        let cat = catalog();
        for (table, name) in KEYED {
            let column = table
                .columns()
                .iter()
                .position(|c| c.name == *name)
                .unwrap();
            assert!(table.is_keyed(column));
            let all = table.rows(&cat);
            let mut keys: Vec<Datum> = all.iter().map(|row| row[column].clone()).collect();
            keys.extend([Datum::Oid(1), Datum::Int4(-1), Datum::Null]);
            for key in &keys {
                let expected: Vec<&Row> = all
                    .iter()
                    .filter(|row| !key.is_null() && equality_key(&row[column]) == equality_key(key))
                    .collect();
                let got = table
                    .rows_where(&cat, column, std::slice::from_ref(key))
                    .unwrap_or_default();
                assert_eq!(got.iter().collect::<Vec<_>>(), expected, "{name} = {key:?}");
            }
            // All keys at once: each row once, in the table's order.
            let present: Vec<Datum> = all.iter().map(|row| row[column].clone()).collect();
            let every = table.rows_where(&cat, column, &present).unwrap_or_default();
            let expected: Vec<&Row> = all.iter().filter(|row| !row[column].is_null()).collect();
            assert_eq!(
                every.iter().collect::<Vec<_>>(),
                expected,
                "{name}: every key"
            );
            let distinct: BTreeSet<Vec<u8>> = keys.iter().map(equality_key).collect();
            assert!(
                distinct.len() > 2,
                "{name}: the catalog has values to look up"
            );
        }
    }

    #[test]
    fn an_integer_key_finds_an_oid_and_unkeyed_columns_filter_the_table() {
        let cat = catalog();
        let oid = Catalog::rel_oid(&cat.relations[1]);
        let by_int = VirtualTable::Attribute.rows_where(&cat, 0, &[Datum::Int8(oid.into())]);
        assert_eq!(
            by_int.map(|rows| rows.len()),
            Some(3),
            "ctid and two columns"
        );
        assert!(!VirtualTable::Attribute.is_keyed(1));
        let by_name = VirtualTable::Attribute.rows_where(&cat, 1, &[Datum::text("label")]);
        assert_eq!(by_name.map(|rows| rows.len()), Some(4));
        // '16384' compared with an oid is cast first: no keyed rows for it.
        let by_text = VirtualTable::Attribute.rows_where(&cat, 0, &[Datum::text("16384")]);
        assert_eq!(by_text, None);
        let twice =
            VirtualTable::Attribute.rows_where(&cat, 0, &[Datum::Oid(oid), Datum::Oid(oid)]);
        assert_eq!(twice.map(|rows| rows.len()), Some(3), "each key once");
    }

    #[test]
    fn a_relation_named_twice_gives_its_rows_once() {
        // `relname IN ('a', 'a_pkey')` names public.a by its table and by
        // its index (regression: its rows came twice).
        let keys = [Datum::text("a"), Datum::text("a_pkey"), Datum::text("a")];
        let rows = VirtualTable::Class.rows_where(&catalog(), 1, &keys);
        let names: Vec<String> = rows
            .unwrap_or_default()
            .iter()
            .map(|row| row[1].as_str().unwrap_or_default().to_string())
            .collect();
        // public.a and its index, lake.a, the table public.a_pkey.
        assert_eq!(names, ["a", "a_pkey", "a", "a_pkey"]);
    }

    /// Rows built with some columns are the whole rows narrowed to them,
    /// for the whole table and for keys (also when the key column is not
    /// among the wanted ones).
    #[test]
    fn wanted_columns_are_the_whole_rows_narrowed() {
        let cat = catalog();
        for (table, name) in KEYED {
            let width = table.columns().len();
            let column = table
                .columns()
                .iter()
                .position(|c| c.name == *name)
                .unwrap();
            let all = table.rows(&cat);
            let key = all[all.len() - 1][column].clone();
            let picks: [&[usize]; 4] = [&[column], &[width - 1, 0, column], &[1, width - 2], &[]];
            for columns in picks {
                let wanted = Wanted(Some(columns));
                let mut expected = all.clone();
                wanted.narrow(&mut expected);
                assert_eq!(
                    table.wanted_rows(&cat, wanted),
                    expected,
                    "{name} {columns:?}"
                );
                let mut keyed = table.rows_where(&cat, column, std::slice::from_ref(&key));
                if let Some(rows) = keyed.as_mut() {
                    wanted.narrow(rows);
                }
                let got = table.wanted_rows_where(&cat, column, std::slice::from_ref(&key), wanted);
                assert_eq!(got, keyed, "{name} = {key:?}, {columns:?}");
            }
        }
    }
}
