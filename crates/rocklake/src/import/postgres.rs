//! Reading a DuckLake catalog from PostgreSQL (tokio-postgres), in one
//! repeatable-read, read-only transaction.

use anyhow::Context;
use tokio_postgres::{NoTls, SimpleQueryMessage};

use super::{SourceCatalog, SourceTable};

/// Reads every table of `schema` from the PostgreSQL database `dsn` names
/// (libpq key=value form, as in DuckLake's `postgres:` metadata string; a
/// password may also come from ROCKLAKE_SOURCE_PASSWORD or PGPASSWORD).
pub async fn read(dsn: &str, schema: &str) -> anyhow::Result<SourceCatalog> {
    let mut config: tokio_postgres::Config = dsn
        .parse()
        .map_err(|e| anyhow::anyhow!("invalid postgres source {dsn:?}: {e}"))?;
    if config.get_user().is_none() {
        config.user(std::env::var("USER").unwrap_or_else(|_| "postgres".to_string()));
    }
    if config.get_password().is_none() {
        if let Ok(password) =
            std::env::var("ROCKLAKE_SOURCE_PASSWORD").or_else(|_| std::env::var("PGPASSWORD"))
        {
            config.password(password);
        }
    }
    let description = format!("postgres:{dsn}");
    let (client, connection) = config
        .connect(NoTls)
        .await
        .with_context(|| format!("cannot connect to the source {description}"))?;
    let driver = tokio::spawn(connection);
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
    drop(client);
    let _ = driver.await;
    if tables.is_empty() {
        anyhow::bail!("{description}: schema {schema:?} holds no table");
    }
    Ok(SourceCatalog {
        description,
        tables,
    })
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
