//! `rocklake import SOURCE [ROOT]`: copies a whole DuckLake catalog held by
//! another backend into a new RockLake lake, all or nothing.
//!
//! SOURCE is DuckLake's own metadata string, as written after `ducklake:` in
//! ATTACH; `postgres:dbname=... host=...` is read here (see [`postgres`]).
//! Every table of the source's metadata schema is copied: the catalog tables
//! of its spec version and the inlined-data tables, every row, so every
//! snapshot, id, option and the data path come over, and stock DuckDB
//! attached to the result sees what it saw on the source. The source is read
//! in one consistent (repeatable-read, read-only) transaction; the target is
//! written through RockLake's SQL engine in one transaction (nothing is left
//! of a failed import), into a lake that must be new: a new database, or a
//! schema of an existing database that holds no table.

mod postgres;

use std::time::Instant;

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use rocklake_sql::Session;
use rocklake_store::{LakeRoot, Role, ServedRoot, StoreLocation, StoreOptions};
use rocklake_types::output::QueryOutput;

/// Spec versions RockLake stores (`ducklake_metadata`'s `version`).
const SPEC_VERSIONS: &[&str] = &["0.3", "0.4", "1.0", "1.1"];

/// Rows per INSERT statement.
const BATCH_ROWS: usize = 500;

/// Arguments of `rocklake import`.
#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// The source catalog as DuckLake's ATTACH writes it after `ducklake:`,
    /// e.g. `postgres:dbname=lake host=127.0.0.1 user=postgres`.
    source: String,
    /// Root of the RockLake databases (as `rocklake serve` takes it).
    #[arg(default_value = "./lake")]
    location: String,
    /// Database to create (or to add the lake to, with --schema).
    #[arg(long, default_value = rocklake_store::served::DEFAULT_DATABASE)]
    database: String,
    /// The source's METADATA_SCHEMA; the lake keeps it (default: the
    /// source's default schema, `public`).
    #[arg(long)]
    schema: Option<String>,
    #[command(flatten)]
    keys: crate::catalog_key::CatalogKeyArgs,
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
    fn spec_version(&self) -> anyhow::Result<String> {
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

/// Runs `rocklake import`.
pub async fn run(args: ImportArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let schema = args.schema.clone().unwrap_or_else(|| "public".to_string());
    let source = match args.source.split_once(':') {
        Some(("postgres", dsn)) => postgres::read(dsn, &schema).await?,
        Some((kind, _)) => bail!(
            "unsupported source {kind:?}: `rocklake import` reads `postgres:...` catalogs \
             (for sqlite: and DuckDB files see the README's import section)"
        ),
        None => bail!("SOURCE is DuckLake's metadata string, e.g. postgres:dbname=lake host=..."),
    };
    let version = source.spec_version()?;
    if !SPEC_VERSIONS.contains(&version.as_str()) {
        bail!(
            "{} is a DuckLake catalog of spec version {version}, which RockLake does not store \
             (it stores {})",
            source.description,
            SPEC_VERSIONS.join(", ")
        );
    }
    let read_time = started.elapsed();
    let location = StoreLocation::parse(&args.location)?;
    location.check_reachable().await?;
    let root = LakeRoot::open(location.clone())?;
    let new_database = !root.has_database(&args.database).await?;
    let served = ServedRoot::open(
        root.clone(),
        Role::Writer(StoreOptions {
            keys: args.keys.keys()?,
            ..StoreOptions::default()
        }),
        None,
    )
    .await
    .with_context(|| format!("opening {location}"))?;
    if new_database {
        served.create_database(&args.database).await?;
    }
    let outcome = write(&served, &args.database, &schema, &source, new_database).await;
    if outcome.is_err() && new_database {
        let _ = served.drop_database(&args.database, true).await;
    }
    served.close().await?;
    let counts = outcome?;
    let rows: usize = counts.iter().map(|(_, n)| n).sum();
    let elapsed = started.elapsed();
    eprintln!(
        "imported {} (spec {version}) into database {:?}{} of {location}: {} tables, {rows} rows \
         in {:.1} s (read {:.1} s; {:.0} rows/s)",
        source.description,
        args.database,
        if schema == "public" {
            String::new()
        } else {
            format!(", schema {schema:?}")
        },
        counts.len(),
        elapsed.as_secs_f64(),
        read_time.as_secs_f64(),
        rows as f64 / elapsed.as_secs_f64().max(1e-9)
    );
    for (table, count) in &counts {
        println!("{table}\t{count}");
    }
    Ok(())
}

/// Writes every table in one transaction; returns the rows per table.
async fn write(
    served: &ServedRoot,
    database: &str,
    schema: &str,
    source: &SourceCatalog,
    new_database: bool,
) -> anyhow::Result<Vec<(String, usize)>> {
    let target = served
        .database(database)
        .with_context(|| format!("database {database:?} did not open"))?;
    let mut session = Session::new(target.storage());
    session.set_database(database);
    run_sql(&mut session, "BEGIN").await?;
    if schema != "public" {
        run_sql(
            &mut session,
            &format!("CREATE SCHEMA IF NOT EXISTS {}", ident(schema)),
        )
        .await?;
    }
    if !new_database {
        let existing = query_count(
            &mut session,
            &format!(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = {}",
                literal(schema)
            ),
        )
        .await?;
        if existing > 0 {
            bail!("schema {schema:?} of database {database:?} holds {existing} tables: import needs an empty target");
        }
    }
    let total: usize = source.tables.iter().map(|t| t.rows.len()).sum();
    let progress = ProgressBar::new(total as u64).with_style(
        ProgressStyle::with_template("{msg:32} [{bar:40}] {pos}/{len} rows ({per_sec}, {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut counts = Vec::new();
    for table in &source.tables {
        progress.set_message(table.name.clone());
        run_sql(&mut session, &create_table(schema, table)).await?;
        for batch in table.rows.chunks(BATCH_ROWS) {
            run_sql(&mut session, &insert(schema, table, batch)).await?;
            progress.inc(batch.len() as u64);
        }
        counts.push((table.name.clone(), table.rows.len()));
    }
    progress.finish_and_clear();
    run_sql(&mut session, "COMMIT").await?;
    Ok(counts)
}

/// A quoted identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A quoted string literal.
fn literal(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

fn create_table(schema: &str, table: &SourceTable) -> String {
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

fn insert(schema: &str, table: &SourceTable, rows: &[Vec<Option<String>>]) -> String {
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

/// Runs one statement, failing with its error.
async fn run_sql(session: &mut Session, sql: &str) -> anyhow::Result<Vec<QueryOutput>> {
    let mut outputs = Vec::new();
    for result in session.execute(sql).await {
        match result {
            Ok(output) => outputs.push(output),
            Err(error) => {
                let shown: String = sql.chars().take(200).collect();
                bail!("{} (SQLSTATE {}) in: {shown}", error.message, error.code);
            }
        }
    }
    Ok(outputs)
}

async fn query_count(session: &mut Session, sql: &str) -> anyhow::Result<i64> {
    for output in run_sql(session, sql).await? {
        if let QueryOutput::Rows { rows, .. } = output {
            let rows = rows.into_rows();
            if let Some(value) = rows.first().and_then(|row| row.first()) {
                return Ok(value.as_i64().unwrap_or(0));
            }
        }
    }
    Ok(0)
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
