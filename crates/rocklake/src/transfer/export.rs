//! `rocklake export ROOT TARGET`: copies a RockLake lake into an empty
//! PostgreSQL database (DuckLake's `postgres:` metadata string), so a lake
//! can always leave. The lake is read as a read replica does (one snapshot,
//! no writer fenced), so it works while a server runs; the target is written
//! in one transaction.

use std::time::Instant;

use anyhow::bail;

use super::{check_version, postgres, rocklake, LakeArgs};

/// Arguments of `rocklake export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Root of the RockLake databases (as `rocklake serve` takes it).
    location: String,
    /// Where to, as DuckLake's ATTACH writes it after `ducklake:`, e.g.
    /// `postgres:dbname=lake host=127.0.0.1 user=postgres`.
    target: String,
    #[command(flatten)]
    lake: LakeArgs,
}

/// Runs `rocklake export`.
pub async fn export(args: ExportArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let schema = args.lake.schema();
    let Some(("postgres", dsn)) = args.target.split_once(':') else {
        bail!(
            "unsupported target {:?}: `rocklake export` writes `postgres:...` catalogs",
            args.target
        );
    };
    let keys = args.lake.keys.keys()?;
    let catalog = rocklake::read(&args.location, &args.lake.database, &schema, keys).await?;
    let version = check_version(&catalog)?;
    let counts = postgres::write(dsn, &schema, &catalog).await?;
    let rows: usize = counts.iter().map(|(_, n)| n).sum();
    let elapsed = started.elapsed();
    eprintln!(
        "exported {} (spec {version}) to postgres:{dsn}: {} tables, {rows} rows in {:.1} s \
         ({:.0} rows/s)",
        catalog.description,
        counts.len(),
        elapsed.as_secs_f64(),
        rows as f64 / elapsed.as_secs_f64().max(1e-9)
    );
    for (table, count) in &counts {
        println!("{table}\t{count}");
    }
    Ok(())
}
