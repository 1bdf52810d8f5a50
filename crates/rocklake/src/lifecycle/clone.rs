//! `rocklake clone LOCATION NEW_LOCATION --checkpoint NAME --data-path DIR`:
//! a writable zero-copy clone of every lake under a root, as of a
//! checkpoint, that diverges from its parent independently.
//!
//! The catalog is cloned by SlateDB (the clone's manifest refers to the
//! parent's files; nothing is copied but the WAL). The DuckLake data files
//! are shared too, so the clone is then made to keep its hands off its
//! parent's files:
//! - its `data_path` becomes DIR (one lake) or `DIR/<database>[/<schema>]/`
//!   (several): new files of the clone go there, and its orphan sweep only
//!   lists there. DIR may not be inside the parent's data path or contain it;
//! - every file it inherited gets an absolute path (it stays where it is);
//! - the parent's pending file deletions are dropped from the clone;
//! - both sides record the shared files (ids below the checkpoint's
//!   `next_file_id`): the clone never schedules them for deletion, and the
//!   parent refuses to while the clone exists (see
//!   [`rocklake_store::sharing`]). `--release` lifts the parent's refusal once
//!   the clone is no longer used.
//!
//! Clones need the parent on the same object store (the same machine's
//! file system, or the same bucket).

use std::time::Instant;

use anyhow::{bail, Context};
use rocklake_sql::Session;
use rocklake_store::sharing::{self, Sharing, Side};
use rocklake_store::{LakeRoot, Role, ServedRoot, StoreLocation, StoreOptions};

use super::{empty_target, finish_target, lakes, remove_written, Lake};
use crate::transfer::literal;
use crate::transfer::rocklake::{run_sql, texts};

/// Arguments of `rocklake clone`.
#[derive(clap::Args, Debug)]
pub struct CloneArgs {
    /// Root of the databases to clone (as `rocklake serve` takes it).
    location: String,
    /// Root of the clone: a new or empty directory or s3:// prefix on the
    /// same object store.
    new_location: String,
    /// The checkpoint to clone (see `rocklake checkpoint create`).
    #[arg(long, required_unless_present = "release")]
    checkpoint: Option<String>,
    /// Where the clone writes its new data files (see above).
    #[arg(long, required_unless_present = "release")]
    data_path: Option<String>,
    /// Clone only these databases (repeatable; default: all).
    #[arg(long)]
    database: Vec<String>,
    /// Instead of cloning: let the parent delete the files it shares with
    /// the clone at NEW_LOCATION again (the clone must no longer be used).
    #[arg(long)]
    release: bool,
    #[command(flatten)]
    keys: crate::catalog_key::CatalogKeyArgs,
}

/// Runs `rocklake clone`.
pub async fn clone(args: CloneArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let source = StoreLocation::parse(&args.location)?;
    source.check_reachable().await?;
    let parent = LakeRoot::open(source)?;
    let lakes = lakes(&parent, &args.database).await?;
    if args.release {
        return release(&lakes, &args.new_location).await;
    }
    let (Some(checkpoint), Some(data_path)) = (&args.checkpoint, &args.data_path) else {
        bail!("--checkpoint and --data-path are required");
    };
    let target = empty_target(&args.new_location, "clone").await?;
    if !parent.location().same_store(target.location()) {
        bail!(
            "{} and {} are on different object stores: a clone shares its parent's files, so it \
             must be in the same bucket (or on the same file system); use `rocklake backup` to copy",
            parent.location(),
            target.location()
        );
    }
    let keys = args.keys.keys()?;
    let outcome = async {
        for lake in &lakes {
            rocklake_store::checkpoints::clone_catalog(
                &lake.location,
                checkpoint,
                &lake.under(&target)?,
                keys.as_ref(),
            )
            .await
            .with_context(|| format!("cloning lake {}", lake.label()))?;
        }
        take_ownership(&target, &lakes, data_path, keys).await?;
        finish_target(&parent, &target).await
    }
    .await;
    if let Err(error) = outcome {
        remove_written(&target).await;
        return Err(error);
    }
    eprintln!(
        "cloned {} lakes of {} (checkpoint {checkpoint:?}) to {} in {:.2} s; the clone writes new data files under {data_path}",
        lakes.len(),
        parent.location(),
        target.location(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Rewrites each cloned lake so it leaves its parent's files alone, and
/// records the shared files on both sides.
async fn take_ownership(
    target: &LakeRoot,
    lakes: &[Lake],
    data_path: &str,
    keys: Option<std::sync::Arc<rocklake_store::CatalogKeys>>,
) -> anyhow::Result<()> {
    let served = ServedRoot::open(
        target.clone(),
        Role::Writer(StoreOptions {
            keys,
            ..StoreOptions::default()
        }),
        None,
    )
    .await
    .with_context(|| format!("opening the clone at {}", target.location()))?;
    let outcome = async {
        for lake in lakes {
            let lake_data_path = if lakes.len() == 1 {
                with_slash(data_path)
            } else {
                format!("{}{}/", with_slash(data_path), lake.label())
            };
            let below_file_id = rewrite_lake(&served, lake, &lake_data_path)
                .await
                .with_context(|| format!("taking over lake {} in the clone", lake.label()))?;
            let clone_location = lake.under(target)?;
            let id = uuid::Uuid::new_v4().simple().to_string();
            for (location, side, with) in [
                (&clone_location, Side::Clone, &lake.location),
                (&lake.location, Side::Parent, &clone_location),
            ] {
                let record = Sharing {
                    side,
                    below_file_id,
                    with: with.to_string(),
                };
                sharing::record(location, &record, &id).await?;
            }
        }
        anyhow::Ok(())
    }
    .await;
    served.close().await?;
    outcome
}

fn with_slash(path: &str) -> String {
    if path.ends_with('/') {
        path.to_string()
    } else {
        format!("{path}/")
    }
}

/// Rewrites one cloned lake (see the module docs); returns the first file
/// id the clone does not share.
async fn rewrite_lake(served: &ServedRoot, lake: &Lake, data_path: &str) -> anyhow::Result<u64> {
    let database = served
        .database(&lake.database)
        .with_context(|| format!("database {:?} did not open", lake.database))?;
    let mut session = Session::for_database(database.storage(), Default::default());
    session.set_database(&lake.database);
    let schema = crate::transfer::ident(lake.schema.as_deref().unwrap_or("public"));
    let table = |name: &str| format!("{schema}.{name}");
    run_sql(&mut session, "BEGIN").await?;
    let parent_data_path = texts(
        &mut session,
        &format!(
            "SELECT value FROM {} WHERE key = 'data_path'",
            table("ducklake_metadata")
        ),
    )
    .await?
    .first()
    .and_then(|row| row[0].clone())
    .context("the catalog has no data_path")?;
    check_separate(&parent_data_path, data_path)?;
    let below_file_id: u64 = texts(
        &mut session,
        &format!(
            "SELECT max(next_file_id) FROM {}",
            table("ducklake_snapshot")
        ),
    )
    .await?
    .first()
    .and_then(|row| row[0].as_deref().and_then(|v| v.parse().ok()))
    .unwrap_or(0);
    let schemas = texts(
        &mut session,
        &format!(
            "SELECT schema_id, path, path_is_relative FROM {}",
            table("ducklake_schema")
        ),
    )
    .await?;
    let tables = texts(
        &mut session,
        &format!(
            "SELECT DISTINCT table_id, schema_id, path, path_is_relative FROM {}",
            table("ducklake_table")
        ),
    )
    .await?;
    let resolve = |base: &str, path: &Option<String>, relative: &Option<String>| {
        let path = path.clone().unwrap_or_default();
        if relative.as_deref() == Some("t") {
            format!("{base}{path}")
        } else {
            path
        }
    };
    for row in &tables {
        let schema_base = schemas
            .iter()
            .find(|s| s[0] == row[1])
            .map(|s| resolve(&with_slash(&parent_data_path), &s[1], &s[2]))
            .unwrap_or_else(|| with_slash(&parent_data_path));
        let table_base = resolve(&schema_base, &row[2], &row[3]);
        let table_id = row[0].clone().unwrap_or_default();
        for files in ["ducklake_data_file", "ducklake_delete_file"] {
            run_sql(
                &mut session,
                &format!(
                    "UPDATE {} SET path = {} || path, path_is_relative = false \
                     WHERE table_id = {table_id} AND path_is_relative",
                    table(files),
                    literal(&table_base)
                ),
            )
            .await?;
        }
    }
    run_sql(
        &mut session,
        &format!(
            "DELETE FROM {}",
            table("ducklake_files_scheduled_for_deletion")
        ),
    )
    .await?;
    run_sql(
        &mut session,
        &format!(
            "UPDATE {} SET value = {} WHERE key = 'data_path'",
            table("ducklake_metadata"),
            literal(data_path)
        ),
    )
    .await?;
    run_sql(&mut session, "COMMIT").await?;
    Ok(below_file_id)
}

/// Refuses a clone data path inside the parent's, or around it: each
/// side's orphan sweep lists its own data path and would delete the other's
/// files.
fn check_separate(parent: &str, clone: &str) -> anyhow::Result<()> {
    let (parent, clone) = (with_slash(parent), with_slash(clone));
    if clone.starts_with(&parent) || parent.starts_with(&clone) {
        bail!(
            "--data-path {clone} and the parent's data path {parent} overlap: each side's \
             delete_orphaned_files would delete the other's files; choose a separate directory"
        );
    }
    Ok(())
}

/// `rocklake clone --release`: drops the parents' records of the clone's
/// lakes.
async fn release(lakes: &[Lake], clone: &str) -> anyhow::Result<()> {
    let clone_root = LakeRoot::open(StoreLocation::parse(clone)?)?;
    let mut released = 0;
    for lake in lakes {
        let clone_lake = lake.under(&clone_root)?.to_string();
        released += sharing::release(&lake.location, &clone_lake).await?;
    }
    if released == 0 {
        bail!("no lake under the parent records a clone at {clone}");
    }
    eprintln!("released {released} lakes: the parent may delete the files it shared with {clone}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_paths_must_not_overlap() {
        assert!(check_separate("/data/lake/", "/data/clone").is_ok());
        assert!(check_separate("/data/lake", "/data/lake/clone/").is_err());
        assert!(check_separate("/data/lake/", "/data/").is_err());
        assert!(check_separate("/data/lake/", "/data/lake").is_err());
    }
}
