//! `rocklake import SOURCE [ROOT]`: copies a whole DuckLake catalog held by
//! another backend into a new RockLake lake, all or nothing.
//!
//! SOURCE is DuckLake's own metadata string, as written after `ducklake:` in
//! ATTACH (`postgres:dbname=... host=...` or `sqlite:FILE`). Every snapshot, id, option and
//! the data path come over, so stock DuckDB attached to the result sees what
//! it saw on the source. The target is a lake that must be new: a new
//! database, or a schema of an existing database that holds no table.

use std::time::Instant;

use anyhow::{bail, Context};
use rocklake_store::{LakeRoot, Role, ServedRoot, StoreLocation, StoreOptions, Work};

use super::{check_version, postgres, rocklake, sqlite, LakeArgs};

/// Arguments of `rocklake import`.
#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// The source catalog as DuckLake's ATTACH writes it after `ducklake:`,
    /// e.g. `postgres:dbname=lake host=127.0.0.1 user=postgres` or
    /// `sqlite:metadata.sqlite`.
    source: String,
    /// Root of the RockLake databases (as `rocklake serve` takes it).
    #[arg(default_value = "./lake")]
    location: String,
    #[command(flatten)]
    lake: LakeArgs,
}

/// Deletes what an import wrote into `work`.
async fn remove_target(root: &LakeRoot, work: Work<'_>) -> anyhow::Result<()> {
    match work {
        Work::Database(database) => root.remove_database(database).await?,
        Work::Lake(database, schema) => root.remove_lake(database, schema).await?,
        Work::Root => {}
    }
    Ok(())
}

fn describe(work: Work<'_>) -> String {
    match work {
        Work::Database(database) => format!("database {database:?}"),
        Work::Lake(database, schema) => format!("the lake of schema {schema:?} in {database:?}"),
        Work::Root => "the root".to_string(),
    }
}

/// Runs `rocklake import`.
pub async fn import(args: ImportArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let schema = args.lake.schema();
    let source = match args.source.split_once(':') {
        Some(("postgres", dsn)) => postgres::read(dsn, &schema).await?,
        Some(("sqlite", file)) => {
            if schema != "public" {
                bail!("a SQLite catalog has no schemas: import it without --schema");
            }
            sqlite::read(file)?
        }
        Some((kind, _)) => bail!(
            "unsupported source {kind:?}: `rocklake import` reads `postgres:...` and \
             `sqlite:FILE` catalogs (a DuckDB-file catalog moves through DuckDB: see the README)"
        ),
        None => bail!("SOURCE is DuckLake's metadata string, e.g. postgres:dbname=lake host=..."),
    };
    let version = check_version(&source)?;
    let read_time = started.elapsed();
    let location = StoreLocation::parse(&args.location)?;
    location.check_reachable().await?;
    let root = LakeRoot::open(location.clone())?;
    if root.has_single_catalog().await? {
        bail!("{location} holds the single catalog of an earlier release: start `rocklake serve` on it once first");
    }
    let database = args.lake.database.as_str();
    let work = if schema == "public" {
        Work::Database(database)
    } else {
        Work::Lake(database, &schema)
    };
    // What an interrupted import left is deleted: the import starts over.
    if let Some(previous) = root.unfinished_work(work).await? {
        eprintln!(
            "rocklake: an interrupted `rocklake {previous}` left {} incomplete; starting over",
            describe(work)
        );
        remove_target(&root, work).await?;
    }
    // Decided from the listing alone, before anything is opened (opening
    // the root as its writer would fence a server serving it).
    let new_database = !root.has_database(&args.lake.database).await?;
    if !new_database && schema == "public" {
        bail!(
            "database {:?} exists under {location}: import needs an empty target (a new \
             database, or --schema for a new METADATA_SCHEMA lake)",
            args.lake.database
        );
    }
    if !new_database
        && root
            .lake_schemas(&args.lake.database)
            .await?
            .contains(&schema)
    {
        bail!(
            "database {:?} already has a lake in schema {schema:?}: import needs an empty target",
            args.lake.database
        );
    }
    // A server writing the root would be fenced by the import: refuse while
    // one lives (its lease), and hold the lease while importing.
    let lease_options = rocklake_store::lease::LeaseOptions {
        takeover_after: rocklake_store::lease::DEFAULT_TAKEOVER_AFTER,
        address: "rocklake import".to_string(),
    };
    let lease = rocklake_store::lease::acquire(
        &root,
        &lease_options,
        rocklake_store::lease::WhenHeld::Refuse,
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e} (stop the server, or import into another root)"))?;
    let outcome = lease
        .hold_during(async {
            // Marked as being written until it is complete, so a killed import
            // leaves nothing a server would serve as complete.
            root.begin_work(work, "import").await?;
            let served = ServedRoot::open(
                root.clone(),
                Role::Writer(StoreOptions {
                    keys: args.lake.keys.keys()?,
                    ..StoreOptions::default()
                }),
                None,
            )
            .await
            .with_context(|| format!("opening {location}"))?;
            if new_database {
                served.create_database(&args.lake.database).await?;
            }
            let outcome =
                rocklake::write(&served, &args.lake.database, &schema, &source, new_database).await;
            if outcome.is_err() && new_database {
                let _ = served.drop_database(&args.lake.database, true).await;
            }
            served.close().await?;
            if outcome.is_err() {
                remove_target(&root, work).await?;
            }
            root.finish_work(work).await?;
            anyhow::Ok(outcome)
        })
        .await??;
    let counts = outcome?;
    let rows: usize = counts.iter().map(|(_, n)| n).sum();
    let elapsed = started.elapsed();
    eprintln!(
        "imported {} (spec {version}) into database {:?}{} of {location}: {} tables, {rows} rows \
         in {:.1} s (read {:.1} s; {:.0} rows/s)",
        source.description,
        args.lake.database,
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
