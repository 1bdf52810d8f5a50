//! Moving a whole DuckLake catalog between backends: `rocklake import`
//! (another backend into RockLake, [`import`]) and `rocklake export`
//! (RockLake into another backend, [`export`]).
//!
//! A catalog travels as a [`SourceCatalog`]: every table of its metadata
//! schema (the catalog tables of its spec version and the inlined-data
//! tables) with its column types, primary key and every row in PostgreSQL's
//! text form, read in one consistent transaction. It is written with the
//! same PostgreSQL statements ([`create_table`], [`insert`]) into either
//! side: RockLake's engine speaks PostgreSQL's SQL. Each side's reading and
//! writing is in [`postgres`] and [`rocklake`]; a SQLite catalog ([`sqlite`])
//! is read into and written from the same form, with its values converted
//! to and from PostgreSQL's types.

mod export;
mod import;
mod postgres;
pub(crate) mod rocklake;
mod sqlite;

pub use export::{export, ExportArgs};
pub use import::{import, ImportArgs};

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};

/// Spec versions RockLake stores (`ducklake_metadata`'s `version`).
pub const SPEC_VERSIONS: &[&str] = &["0.3", "0.4", "1.0", "1.1"];

/// Rows per INSERT statement.
pub const BATCH_ROWS: usize = 500;

/// The RockLake lake an import writes or an export reads.
#[derive(clap::Args, Debug)]
pub struct LakeArgs {
    /// The database (import: created, or given a lake with --schema).
    #[arg(long, default_value = rocklake_store::served::DEFAULT_DATABASE)]
    pub database: String,
    /// The METADATA_SCHEMA the lake is in, on both sides (default: the
    /// default schema, `public`).
    #[arg(long)]
    pub schema: Option<String>,
    #[command(flatten)]
    pub keys: crate::catalog_key::CatalogKeyArgs,
}

impl LakeArgs {
    /// The lake's schema.
    pub fn schema(&self) -> String {
        self.schema.clone().unwrap_or_else(|| "public".to_string())
    }
}

/// One table of the source.
pub struct SourceTable {
    /// Its name.
    pub name: String,
    /// `(name, SQL type, DEFAULT expression)` of each column, in order.
    pub columns: Vec<(String, String, Option<String>)>,
    /// Its primary-key columns.
    pub primary_key: Vec<String>,
    /// Its rows, each value in PostgreSQL's text form (`None`: NULL).
    pub rows: Vec<Vec<Option<String>>>,
}

/// The source's tables, read in one consistent transaction.
pub struct SourceCatalog {
    /// Where it came from (for messages).
    pub description: String,
    /// Its tables, `ducklake_metadata` included.
    pub tables: Vec<SourceTable>,
}

impl SourceCatalog {
    /// The spec version `ducklake_metadata` records.
    pub fn spec_version(&self) -> anyhow::Result<String> {
        let metadata = self
            .tables
            .iter()
            .find(|t| t.name == "ducklake_metadata")
            .with_context(|| format!("{} holds no DuckLake catalog", self.description))?;
        let key = metadata.columns.iter().position(|c| c.0 == "key");
        let value = metadata.columns.iter().position(|c| c.0 == "value");
        let (Some(key), Some(value)) = (key, value) else {
            bail!(
                "{}: ducklake_metadata has no key/value columns",
                self.description
            );
        };
        metadata
            .rows
            .iter()
            .find(|row| row[key].as_deref() == Some("version"))
            .and_then(|row| row[value].clone())
            .with_context(|| format!("{}: ducklake_metadata has no version", self.description))
    }
}

/// A quoted identifier.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A quoted string literal.
pub fn literal(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// `CREATE TABLE schema.name (...)` of a source table.
pub fn create_table(schema: &str, table: &SourceTable) -> String {
    let mut parts: Vec<String> = table
        .columns
        .iter()
        .map(|(name, sql_type, default)| match default {
            Some(default) => format!("{} {sql_type} DEFAULT {default}", ident(name)),
            None => format!("{} {sql_type}", ident(name)),
        })
        .collect();
    if !table.primary_key.is_empty() {
        let key: Vec<String> = table.primary_key.iter().map(|c| ident(c)).collect();
        parts.push(format!("PRIMARY KEY ({})", key.join(", ")));
    }
    format!(
        "CREATE TABLE {}.{} ({})",
        ident(schema),
        ident(&table.name),
        parts.join(", ")
    )
}

/// One multi-row `INSERT` of `rows` of a source table.
pub fn insert(schema: &str, table: &SourceTable, rows: &[Vec<Option<String>>]) -> String {
    let columns: Vec<String> = table.columns.iter().map(|c| ident(&c.0)).collect();
    let values: Vec<String> = rows
        .iter()
        .map(|row| {
            let values: Vec<String> = row
                .iter()
                .map(|value| value.as_deref().map_or("NULL".to_string(), literal))
                .collect();
            format!("({})", values.join(", "))
        })
        .collect();
    format!(
        "INSERT INTO {}.{} ({}) VALUES {}",
        ident(schema),
        ident(&table.name),
        columns.join(", "),
        values.join(", ")
    )
}

/// A progress bar over `total` rows.
pub fn progress_bar(total: usize) -> ProgressBar {
    ProgressBar::new(total as u64).with_style(
        ProgressStyle::with_template("{msg:32} [{bar:40}] {pos}/{len} rows ({per_sec}, {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    )
}

/// Fails unless `catalog` is of a spec version RockLake stores; returns it.
pub fn check_version(catalog: &SourceCatalog) -> anyhow::Result<String> {
    let version = catalog.spec_version()?;
    if !SPEC_VERSIONS.contains(&version.as_str()) {
        bail!(
            "{} is a DuckLake catalog of spec version {version}, which RockLake does not store \
             (it stores {})",
            catalog.description,
            SPEC_VERSIONS.join(", ")
        );
    }
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_quote_names_and_values() {
        let table = SourceTable {
            name: "ducklake_metadata".into(),
            columns: vec![
                ("key".into(), "character varying".into(), None),
                (
                    "scope".into(),
                    "character varying".into(),
                    Some("'x'::character varying".into()),
                ),
            ],
            primary_key: vec!["key".into()],
            rows: vec![vec![Some("it's".into()), None]],
        };
        assert_eq!(
            create_table("public", &table),
            "CREATE TABLE \"public\".\"ducklake_metadata\" (\"key\" character varying, \"scope\" character varying DEFAULT 'x'::character varying, PRIMARY KEY (\"key\"))"
        );
        assert_eq!(
            insert("public", &table, &table.rows),
            "INSERT INTO \"public\".\"ducklake_metadata\" (\"key\", \"scope\") VALUES ('it''s', NULL)"
        );
    }
}
