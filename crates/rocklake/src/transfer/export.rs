//! `rocklake export ROOT TARGET`: copies a RockLake lake into an empty
//! PostgreSQL database or a new SQLite file (DuckLake's `postgres:` and
//! `sqlite:` metadata strings), so a lake can always leave. The lake is read as a read replica does (one snapshot,
//! no writer fenced), so it works while a server runs; the target is written
//! in one transaction.

use std::time::Instant;

use anyhow::bail;

use super::{check_version, postgres, rocklake, sqlite, LakeArgs};

/// Where an export writes.
#[derive(Clone, Copy)]
enum Target<'a> {
    /// A PostgreSQL database (libpq connection string).
    Postgres(&'a str),
    /// A new SQLite file.
    Sqlite(&'a str),
}

/// Arguments of `rocklake export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Root of the RockLake databases (as `rocklake serve` takes it).
    location: String,
    /// Where to, as DuckLake's ATTACH writes it after `ducklake:`, e.g.
    /// `postgres:dbname=lake host=127.0.0.1 user=postgres` or
    /// `sqlite:metadata.sqlite` (a new file).
    target: String,
    #[command(flatten)]
    lake: LakeArgs,
}

/// Runs `rocklake export`.
pub async fn export(args: ExportArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let schema = args.lake.schema();
    let target = match args.target.split_once(':') {
        Some(("postgres", dsn)) => Target::Postgres(dsn),
        Some(("sqlite", file)) => Target::Sqlite(file),
        _ => bail!(
            "unsupported target {:?}: `rocklake export` writes `postgres:...` and \
             `sqlite:FILE` catalogs",
            args.target
        ),
    };
    if let Target::Sqlite(file) = target {
        if std::path::Path::new(file).exists() {
            bail!("{file:?} exists: export needs an empty target (a new SQLite file)");
        }
    }
    let keys = args.lake.keys.keys()?;
    let catalog = rocklake::read(&args.location, &args.lake.database, &schema, keys).await?;
    let version = check_version(&catalog)?;
    let counts = match target {
        Target::Postgres(dsn) => postgres::write(dsn, &schema, &catalog).await?,
        Target::Sqlite(file) => {
            let written = sqlite::write(file, &catalog);
            if written.is_err() {
                // All or nothing: no half-made file stays behind.
                let _ = std::fs::remove_file(file);
            }
            written?
        }
    };
    let rows: usize = counts.iter().map(|(_, n)| n).sum();
    let elapsed = started.elapsed();
    eprintln!(
        "exported {} (spec {version}) to {}: {} tables, {rows} rows in {:.1} s \
         ({:.0} rows/s)",
        catalog.description,
        args.target,
        counts.len(),
        elapsed.as_secs_f64(),
        rows as f64 / elapsed.as_secs_f64().max(1e-9)
    );
    for (table, count) in &counts {
        println!("{table}\t{count}");
    }
    Ok(())
}
