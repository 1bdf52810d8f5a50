//! `rocklake backup LOCATION DEST`: a consistent copy of every lake under a
//! root into a new root (another directory or bucket), which `rocklake
//! serve DEST` opens as a normal catalog.
//!
//! Each lake is copied from its checkpoint `--checkpoint NAME` (made with
//! `rocklake checkpoint create NAME` on the running server: one consistent
//! point of the whole database), or without one from the latest state a
//! reader sees (every commit acknowledged when the copy starts, each lake on
//! its own). No server is stopped or fenced. See [`rocklake_store::copy`].

use std::time::Instant;

use anyhow::Context;
use rocklake_store::{LakeRoot, StoreLocation};

use super::{empty_target, finish_target, lakes, remove_written};

/// Arguments of `rocklake backup`.
#[derive(clap::Args, Debug)]
pub struct BackupArgs {
    /// Root of the databases to back up (as `rocklake serve` takes it).
    location: String,
    /// Where to: a new or empty directory or s3:// prefix.
    dest: String,
    /// Copy this checkpoint (see `rocklake checkpoint`) instead of the
    /// latest state.
    #[arg(long)]
    checkpoint: Option<String>,
    /// Back up only these databases (repeatable; default: all).
    #[arg(long)]
    database: Vec<String>,
    #[command(flatten)]
    keys: crate::catalog_key::CatalogKeyArgs,
}

/// Runs `rocklake backup`.
pub async fn backup(args: BackupArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let source = StoreLocation::parse(&args.location)?;
    source.check_reachable().await?;
    let root = LakeRoot::open(source)?;
    let lakes = lakes(&root, &args.database).await?;
    let target = empty_target(&args.dest, "backup").await?;
    let keys = args.keys.keys()?;
    let (mut total_keys, mut total_bytes) = (0, 0);
    for lake in &lakes {
        let copied = rocklake_store::backup_copy::copy_catalog(
            &lake.location,
            args.checkpoint.as_deref(),
            &lake.under(&target)?,
            keys.as_ref(),
        )
        .await
        .with_context(|| format!("backing up lake {}", lake.label()));
        let report = match copied {
            Ok(report) => report,
            Err(error) => {
                remove_written(&target).await;
                return Err(error);
            }
        };
        println!(
            "{}\t{} keys\t{} bytes",
            lake.label(),
            report.keys,
            report.bytes
        );
        total_keys += report.keys;
        total_bytes += report.bytes;
    }
    finish_target(&root, &target).await?;
    eprintln!(
        "backed up {} lakes of {} ({}) to {}: {total_keys} keys, {total_bytes} bytes in {:.2} s",
        lakes.len(),
        root.location(),
        match &args.checkpoint {
            Some(name) => format!("checkpoint {name:?}"),
            None => "latest state".to_string(),
        },
        target.location(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
