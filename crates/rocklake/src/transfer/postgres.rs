//! A DuckLake catalog in PostgreSQL (tokio-postgres): read in one
//! repeatable-read, read-only transaction; written in one transaction.

use anyhow::Context;
use tokio_postgres::{NoTls, SimpleQueryMessage};

use super::{SourceCatalog, SourceTable};

/// Reads every table of `schema` from the PostgreSQL database `dsn` names
/// (libpq key=value form, as in DuckLake's `postgres:` metadata string).
pub async fn read(dsn: &str, schema: &str) -> anyhow::Result<SourceCatalog> {
    let description = format!("postgres:{dsn}");
    let client = connect(dsn, "source").await?;
    client
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .await
        .context("beginning the source transaction")?;
    let names = client
        .query(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY c.oid",
            &[&schema],
        )
        .await
        .context("listing the source's tables")?;
    let mut tables = Vec::new();
    for row in names {
        let name: String = row.get(0);
        tables.push(read_table(&client, schema, &name).await?);
    }
    client.batch_execute("COMMIT").await.ok();
    if tables.is_empty() {
        anyhow::bail!("{description}: schema {schema:?} holds no table");
    }
    Ok(SourceCatalog {
        description,
        tables,
    })
}

/// A connection to `dsn` (libpq key=value form); `role` names it in errors.
/// A password may also come from ROCKLAKE_SOURCE_PASSWORD (the source),
/// ROCKLAKE_TARGET_PASSWORD (the target) or PGPASSWORD.
async fn connect(dsn: &str, role: &str) -> anyhow::Result<tokio_postgres::Client> {
    let mut config: tokio_postgres::Config = dsn
        .parse()
        .map_err(|e| anyhow::anyhow!("invalid postgres {role} {dsn:?}: {e}"))?;
    if config.get_user().is_none() {
        config.user(std::env::var("USER").unwrap_or_else(|_| "postgres".to_string()));
    }
    if config.get_password().is_none() {
        let own = format!("ROCKLAKE_{}_PASSWORD", role.to_uppercase());
        if let Ok(password) = std::env::var(own).or_else(|_| std::env::var("PGPASSWORD")) {
            config.password(password);
        }
    }
    let (client, connection) = config
        .connect(NoTls)
        .await
        .with_context(|| format!("cannot connect to the {role} postgres:{dsn}"))?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!(%error, "postgres connection ended");
        }
    });
    Ok(client)
}

async fn read_table(
    client: &tokio_postgres::Client,
    schema: &str,
    name: &str,
) -> anyhow::Result<SourceTable> {
    let qualified = format!(
        "\"{}\".\"{}\"",
        schema.replace('"', "\"\""),
        name.replace('"', "\"\"")
    );
    let columns = client
        .query(
            "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), \
                    pg_get_expr(d.adbin, d.adrelid) \
             FROM pg_attribute a LEFT JOIN pg_attrdef d \
               ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
             WHERE a.attrelid = $1::text::regclass AND a.attnum > 0 AND NOT a.attisdropped \
             ORDER BY a.attnum",
            &[&qualified],
        )
        .await
        .with_context(|| format!("reading the columns of {qualified}"))?
        .into_iter()
        .map(|row| (row.get(0), row.get(1), row.get(2)))
        .collect();
    let primary_key = client
        .query(
            "SELECT a.attname::text FROM pg_index i \
             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey) \
             WHERE i.indrelid = $1::text::regclass AND i.indisprimary \
             ORDER BY array_position(i.indkey::int2[], a.attnum)",
            &[&qualified],
        )
        .await
        .with_context(|| format!("reading the primary key of {qualified}"))?
        .into_iter()
        .map(|row| row.get(0))
        .collect();
    let mut rows = Vec::new();
    for message in client
        .simple_query(&format!("SELECT * FROM {qualified}"))
        .await
        .with_context(|| format!("reading the rows of {qualified}"))?
    {
        if let SimpleQueryMessage::Row(row) = message {
            rows.push(
                (0..row.len())
                    .map(|i| row.get(i).map(str::to_string))
                    .collect(),
            );
        }
    }
    Ok(SourceTable {
        name: name.to_string(),
        columns,
        primary_key,
        rows,
    })
}

/// Writes `catalog` into `schema` of the PostgreSQL database `dsn` names,
/// in one transaction; the schema must hold no table. Returns the rows per
/// table.
pub async fn write(
    dsn: &str,
    schema: &str,
    catalog: &SourceCatalog,
) -> anyhow::Result<Vec<(String, usize)>> {
    let client = connect(dsn, "target").await?;
    client
        .batch_execute("BEGIN")
        .await
        .context("beginning the target transaction")?;
    let existing: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')",
            &[&schema],
        )
        .await
        .context("looking at the target schema")?
        .get(0);
    if existing > 0 {
        anyhow::bail!(
            "postgres:{dsn}: schema {schema:?} holds {existing} tables: export needs an empty target"
        );
    }
    client
        .batch_execute(&format!(
            "CREATE SCHEMA IF NOT EXISTS {}",
            super::ident(schema)
        ))
        .await
        .context("creating the target schema")?;
    let total = catalog.tables.iter().map(|t| t.rows.len()).sum();
    let progress = super::progress_bar(total);
    let mut counts = Vec::new();
    for table in &catalog.tables {
        progress.set_message(table.name.clone());
        let create = super::create_table(schema, table);
        client
            .batch_execute(&create)
            .await
            .with_context(|| format!("postgres:{dsn}: {create}"))?;
        for batch in table.rows.chunks(super::BATCH_ROWS) {
            client
                .batch_execute(&super::insert(schema, table, batch))
                .await
                .with_context(|| format!("postgres:{dsn}: inserting into {}", table.name))?;
            progress.inc(batch.len() as u64);
        }
        counts.push((table.name.clone(), table.rows.len()));
    }
    progress.finish_and_clear();
    client
        .batch_execute("COMMIT")
        .await
        .context("committing the target transaction")?;
    Ok(counts)
}
