//! The virtual `information_schema` views: each view's columns beside the
//! rows it derives from the catalog.

use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};

use super::{col, default_expression, schema_names, text};
use crate::catalog::Catalog;
use rocklake_types::datum::PgType::{Int4, Name, Varchar};

pub(super) fn schemata_columns() -> Vec<ColumnDef> {
    vec![
        col("catalog_name", Name),
        col("schema_name", Name),
        col("schema_owner", Name),
    ]
}

pub(super) fn schemata_rows(cat: &Catalog) -> Vec<Row> {
    schema_names(cat)
        .iter()
        .map(|s| vec![text(&cat.database), text(s), text("postgres")])
        .collect()
}

pub(super) fn tables_columns() -> Vec<ColumnDef> {
    vec![
        col("table_catalog", Name),
        col("table_schema", Name),
        col("table_name", Name),
        col("table_type", Varchar),
    ]
}

pub(super) fn tables_rows(cat: &Catalog) -> Vec<Row> {
    cat.relations
        .iter()
        .map(|r| {
            vec![
                text(&cat.database),
                text(&r.schema),
                text(&r.name),
                text("BASE TABLE"),
            ]
        })
        .collect()
}

pub(super) fn columns_columns() -> Vec<ColumnDef> {
    vec![
        col("table_catalog", Name),
        col("table_schema", Name),
        col("table_name", Name),
        col("column_name", Name),
        col("ordinal_position", Int4),
        col("column_default", Varchar),
        col("is_nullable", Varchar),
        col("data_type", Varchar),
        col("numeric_precision", Int4),
        col("numeric_scale", Int4),
        col("udt_name", Name),
    ]
}

pub(super) fn columns_rows(cat: &Catalog) -> Vec<Row> {
    let mut out = Vec::new();
    for r in cat.relations.iter() {
        for (i, c) in r.columns.iter().enumerate() {
            let (p, s) = match c.pg_type {
                PgType::Numeric(Some((p, s))) => (Datum::Int4(p.into()), Datum::Int4(s.into())),
                _ => (Datum::Null, Datum::Null),
            };
            let nullable = !(c.not_null || r.primary_key.contains(&i));
            let data_type = if c.pg_type.is_array() {
                "ARRAY"
            } else {
                c.pg_type.display_name()
            };
            out.push(vec![
                text(&cat.database),
                text(&r.schema),
                text(&r.name),
                text(&c.name),
                Datum::Int4(i as i32 + 1),
                c.default
                    .as_ref()
                    .map_or(Datum::Null, |d| text(&default_expression(d, &c.pg_type))),
                text(if nullable { "YES" } else { "NO" }),
                text(data_type),
                p,
                s,
                text(c.pg_type.type_name()),
            ]);
        }
    }
    out
}
