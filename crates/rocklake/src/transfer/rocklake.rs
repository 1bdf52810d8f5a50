//! Reading and writing a catalog in RockLake, through its SQL engine.

use anyhow::{bail, Context};
use rocklake_sql::Session;
use rocklake_store::ServedRoot;
use rocklake_types::output::QueryOutput;

use super::{create_table, ident, insert, literal, progress_bar, SourceCatalog, BATCH_ROWS};

/// Writes every table in one transaction; returns the rows per table.
pub async fn write(
    served: &ServedRoot,
    database: &str,
    schema: &str,
    source: &SourceCatalog,
    new_database: bool,
) -> anyhow::Result<Vec<(String, usize)>> {
    let target = served
        .database(database)
        .with_context(|| format!("database {database:?} did not open"))?;
    let mut session = Session::for_database(target.storage(), Default::default());
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
    let progress = progress_bar(total);
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

/// Runs one statement, failing with its error.
pub(crate) async fn run_sql(session: &mut Session, sql: &str) -> anyhow::Result<Vec<QueryOutput>> {
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

/// Reads every table of `schema`'s lake in `database` under the root at
/// `location`, on one snapshot, without opening it as a writer.
pub async fn read(
    location: &str,
    database: &str,
    schema: &str,
    keys: Option<std::sync::Arc<rocklake_store::CatalogKeys>>,
) -> anyhow::Result<SourceCatalog> {
    use rocklake_store::{CatalogReplica, LakeRoot, ReplicaOptions, SqlCatalog, StoreLocation};

    let root_location = StoreLocation::parse(location)?;
    root_location.check_reachable().await?;
    let root = LakeRoot::open(root_location.clone())?;
    if !root.has_database(database).await? {
        bail!("database {database:?} does not exist under {root_location}");
    }
    let lake = if schema == "public" {
        root.database_location(database)?
    } else if root
        .lake_schemas(database)
        .await?
        .iter()
        .any(|s| s == schema)
    {
        root.lake_location(database, schema)?
    } else {
        bail!("database {database:?} has no lake in schema {schema:?}");
    };
    // Every commit acknowledged before now, also those the writer's commit
    // journal holds and SlateDB does not yet.
    let latest = CatalogReplica::open_latest(
        &lake,
        ReplicaOptions {
            keys,
            ..ReplicaOptions::default()
        },
    )
    .await
    .with_context(|| format!("opening {lake} read-only"))?;
    let replica = &latest.replica;
    let mut session = Session::new(std::sync::Arc::new(SqlCatalog::replica(replica.clone())));
    session.set_database(database);
    run_sql(&mut session, "BEGIN READ ONLY").await?;
    let names = texts(
        &mut session,
        &format!(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = {} \
             AND table_type = 'BASE TABLE'",
            literal(schema)
        ),
    )
    .await?;
    let mut names: Vec<String> = names.into_iter().filter_map(|row| row[0].clone()).collect();
    // ducklake_metadata first, as DuckLake creates it; then by name.
    names.sort_by_key(|name| (name != "ducklake_metadata", name.clone()));
    let mut tables = Vec::new();
    for name in names {
        tables.push(read_table(&mut session, schema, &name).await?);
    }
    run_sql(&mut session, "COMMIT").await?;
    replica.close().await?;
    Ok(SourceCatalog {
        description: format!("rocklake:{location} database {database:?} schema {schema:?}"),
        tables,
    })
}

async fn read_table(
    session: &mut Session,
    schema: &str,
    name: &str,
) -> anyhow::Result<super::SourceTable> {
    let columns = texts(
        session,
        &format!(
            "SELECT column_name, data_type, numeric_precision::text, numeric_scale::text, \
             column_default, ordinal_position::text FROM information_schema.columns \
             WHERE table_schema = {} AND table_name = {} ORDER BY ordinal_position",
            literal(schema),
            literal(name)
        ),
    )
    .await?;
    let key = texts(
        session,
        &format!(
            "SELECT c.conkey::text FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid \
             JOIN pg_namespace n ON n.oid = r.relnamespace \
             WHERE c.contype = 'p' AND n.nspname = {} AND r.relname = {}",
            literal(schema),
            literal(name)
        ),
    )
    .await?;
    let positions: Vec<String> = key
        .first()
        .and_then(|row| row[0].clone())
        .map(|text| {
            text.trim_matches(|c| c == '{' || c == '}')
                .split(',')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let primary_key = positions
        .iter()
        .filter_map(|position| {
            columns
                .iter()
                .find(|c| c[5].as_deref() == Some(position.as_str()))
                .and_then(|c| c[0].clone())
        })
        .collect();
    let columns: Vec<(String, String, Option<String>)> = columns
        .into_iter()
        .map(|c| {
            let name = c[0].clone().unwrap_or_default();
            let mut sql_type = c[1].clone().unwrap_or_default();
            if let (Some(p), Some(s)) = (&c[2], &c[3]) {
                if sql_type == "numeric" {
                    sql_type = format!("numeric({p},{s})");
                }
            }
            (name, sql_type, c[4].clone())
        })
        .collect();
    let listed: Vec<String> = columns.iter().map(|(name, _, _)| ident(name)).collect();
    let rows = texts(
        session,
        &format!(
            "SELECT {} FROM {}.{}",
            listed.join(", "),
            ident(schema),
            ident(name)
        ),
    )
    .await?;
    Ok(super::SourceTable {
        name: name.to_string(),
        columns,
        primary_key,
        rows,
    })
}

/// The rows of a query, each value in PostgreSQL's text form.
pub(crate) async fn texts(
    session: &mut Session,
    sql: &str,
) -> anyhow::Result<Vec<Vec<Option<String>>>> {
    let mut out = Vec::new();
    for output in run_sql(session, sql).await? {
        if let QueryOutput::Rows { rows, .. } = output {
            for row in rows.into_rows() {
                out.push(
                    row.iter()
                        .map(rocklake_types::value::text::format_text)
                        .collect(),
                );
            }
        }
    }
    Ok(out)
}
