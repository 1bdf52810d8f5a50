//! Backups and clones of a whole root, on SlateDB's checkpoints:
//! `rocklake backup` ([`backup`]) and `rocklake clone` ([`clone`]).
//! Checkpoints themselves are made by the server (`rocklake checkpoint`).

mod backup;
mod clone;

pub use backup::{backup, BackupArgs};
pub use clone::{clone, CloneArgs};

use anyhow::bail;
use rocklake_store::{LakeRoot, StoreLocation, Work};

/// One lake of a root: its database, its schema (`None`: the database's
/// home lake) and where it is.
pub struct Lake {
    /// The database.
    pub database: String,
    /// The METADATA_SCHEMA of a schema lake.
    pub schema: Option<String>,
    /// Its location.
    pub location: StoreLocation,
}

impl Lake {
    /// The lake's name in messages: `db` or `db/schema`.
    pub fn label(&self) -> String {
        match &self.schema {
            Some(schema) => format!("{}/{schema}", self.database),
            None => self.database.clone(),
        }
    }

    /// The same lake under another root.
    pub fn under(&self, root: &LakeRoot) -> anyhow::Result<StoreLocation> {
        Ok(match &self.schema {
            Some(schema) => root.lake_location(&self.database, schema)?,
            None => root.database_location(&self.database)?,
        })
    }
}

/// The lakes of `root` (of `only` databases when any are named).
pub async fn lakes(root: &LakeRoot, only: &[String]) -> anyhow::Result<Vec<Lake>> {
    if root.has_single_catalog().await? {
        bail!(
            "{} holds the single catalog of an earlier release: start `rocklake serve` on it once first",
            root.location()
        );
    }
    let databases = root.databases().await?;
    for name in only {
        if !databases.contains(name) {
            bail!("database {name:?} does not exist under {}", root.location());
        }
    }
    let mut lakes = Vec::new();
    for database in databases {
        if !only.is_empty() && !only.contains(&database) {
            continue;
        }
        lakes.push(Lake {
            database: database.clone(),
            schema: None,
            location: root.database_location(&database)?,
        });
        for schema in root.lake_schemas(&database).await? {
            lakes.push(Lake {
                database: database.clone(),
                location: root.lake_location(&database, &schema)?,
                schema: Some(schema),
            });
        }
    }
    if lakes.is_empty() {
        bail!("{} holds no database", root.location());
    }
    Ok(lakes)
}

/// The root at `text` for `command` (a backup or clone) to write: it must
/// hold nothing, or only what an interrupted backup or clone left (which
/// is deleted: the command starts over). It is marked as being written
/// until [`finish_target`], so a killed command never leaves a root that
/// `serve` would open as complete.
pub async fn empty_target(text: &str, command: &str) -> anyhow::Result<LakeRoot> {
    let location = StoreLocation::parse(text)?;
    location.check_reachable().await?;
    let root = LakeRoot::open(location.clone())?;
    if let Some(previous) = root.unfinished_work(Work::Root).await? {
        eprintln!(
            "rocklake: {location} holds what an interrupted `rocklake {previous}` left; starting over"
        );
        root.clear_unfinished().await?;
    }
    if root.has_single_catalog().await? || !root.databases().await?.is_empty() {
        bail!("{location} already holds a catalog: the target must be new or empty");
    }
    root.begin_work(Work::Root, command).await?;
    Ok(root)
}

/// Completes a root a backup or clone wrote: the roles of `source` come
/// along, then the root is marked complete.
pub async fn finish_target(source: &LakeRoot, target: &LakeRoot) -> anyhow::Result<()> {
    target.save_roles(&source.load_roles().await?).await?;
    target.finish_work(Work::Root).await?;
    Ok(())
}

/// Deletes what a failed backup or clone wrote (the marker last).
pub async fn remove_written(root: &LakeRoot) {
    if let Err(error) = root.clear_unfinished().await {
        eprintln!(
            "rocklake: could not remove the partial copy at {}: {error}",
            root.location()
        );
    }
}
