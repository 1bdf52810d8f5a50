//! Named checkpoints of a catalog: SlateDB checkpoints that pin one
//! consistent state of a lake's database.
//!
//! A checkpoint keeps every object its state needs safe from SlateDB's
//! garbage collector, and so from `rocklake excise` too (excise deletes rows
//! in the live state; the checkpoint's state still has them). `rocklake
//! backup` and `rocklake clone` read a checkpoint.
//!
//! Only the writer creates checkpoints ([`CatalogStore::create_checkpoint`]):
//! it flushes what it acknowledged first, so the checkpoint holds every
//! commit acknowledged before it was asked for. Listing and deleting work on
//! the location, with or without a server (they update SlateDB's manifest,
//! which the writer shares safely).

use slatedb::admin::Admin;
use slatedb::config::{CheckpointOptions, CheckpointScope};
use slatedb::Checkpoint;

use crate::error::{ObjectKind, StoreError, StoreResult};
use crate::location::StoreLocation;
use crate::store::CatalogStore;

/// The SlateDB admin client of the catalog at `location`.
fn admin(location: &StoreLocation) -> StoreResult<Admin> {
    let (object_store, path) = location.open_object_store()?;
    Ok(Admin::builder(path, object_store).build())
}

/// A checkpoint name as RockLake accepts it: 1 to 63 letters, digits, `_`,
/// `-` or `.` (it is shown in listings and used on command lines).
fn check_name(name: &str) -> StoreResult<()> {
    let valid = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if valid {
        Ok(())
    } else {
        Err(StoreError::InvalidRequest(format!(
            "invalid checkpoint name {name:?}: use 1 to 63 letters, digits, '_', '-' or '.'"
        )))
    }
}

/// The named checkpoints of the catalog at `location`, oldest first.
pub async fn list(location: &StoreLocation) -> StoreResult<Vec<Checkpoint>> {
    let mut checkpoints: Vec<Checkpoint> = admin(location)?
        .list_checkpoints(None)
        .await
        .map_err(|e| StoreError::storage(format!("listing the checkpoints of {location}"), e, 0))?
        .into_iter()
        .filter(|checkpoint| checkpoint.name.as_deref().is_some_and(|n| !n.is_empty()))
        .collect();
    checkpoints.sort_by_key(|checkpoint| checkpoint.create_time);
    Ok(checkpoints)
}

/// The checkpoint `name` of the catalog at `location`.
pub async fn find(location: &StoreLocation, name: &str) -> StoreResult<Checkpoint> {
    list(location)
        .await?
        .into_iter()
        .find(|checkpoint| checkpoint.name.as_deref() == Some(name))
        .ok_or_else(|| StoreError::NotFound {
            kind: ObjectKind::Checkpoint,
            name: name.to_string(),
        })
}

/// Deletes the checkpoint `name` of the catalog at `location`; what it
/// pinned becomes garbage SlateDB may collect.
pub async fn delete(location: &StoreLocation, name: &str) -> StoreResult<()> {
    let checkpoint = find(location, name).await?;
    admin(location)?
        .delete_checkpoint(checkpoint.id)
        .await
        .map_err(|e| {
            StoreError::storage(format!("deleting checkpoint {name:?} of {location}"), e, 0)
        })
}

/// Creates at `target` (on the same object store) a writable zero-copy
/// clone of the catalog at `source` as of its checkpoint `name`: the clone's
/// manifest refers to the source's files, which SlateDB keeps while the
/// clone needs them; the clone's own writes go to `target`. An encrypted
/// source is cloned with the same keys.
pub async fn clone_catalog(
    source: &StoreLocation,
    name: &str,
    target: &StoreLocation,
    keys: Option<&std::sync::Arc<crate::encryption::CatalogKeys>>,
) -> StoreResult<()> {
    use crate::encryption::{prepare, Opening};
    let checkpoint = find(source, name).await?;
    if target.holds_catalog().await? {
        return Err(StoreError::InvalidRequest(format!(
            "{target} already holds a catalog"
        )));
    }
    // The source's keys must open it; the clone gets the same marker.
    prepare(source, keys, Opening::Reader).await?;
    prepare(target, keys, Opening::Writer).await?;
    let (_, source_path) = source.open_object_store()?;
    let (objects, target_path) = target.open_object_store()?;
    Admin::builder(target_path, objects)
        .build()
        .create_clone_builder_from_source(slatedb::admin::CloneSourceSpec::with_checkpoint(
            source_path,
            checkpoint.id,
        ))
        .build()
        .await
        .map_err(|e| {
            StoreError::storage(
                format!("cloning {source} (checkpoint {name:?}) into {target}"),
                e,
                0,
            )
        })
}

impl CatalogStore {
    /// Creates the checkpoint `name`: every commit acknowledged before the
    /// call is in it. Fails with [`StoreError::AlreadyExists`] when the
    /// catalog has a checkpoint of that name.
    pub async fn create_checkpoint(&self, name: &str) -> StoreResult<Checkpoint> {
        check_name(name)?;
        if find(self.location(), name).await.is_ok() {
            return Err(StoreError::AlreadyExists {
                kind: ObjectKind::Checkpoint,
                name: name.to_string(),
            });
        }
        let options = CheckpointOptions {
            name: Some(name.to_string()),
            ..CheckpointOptions::default()
        };
        self.inner
            .db
            .create_checkpoint(CheckpointScope::All, &options)
            .await
            .map_err(|e| {
                StoreError::storage(
                    format!("creating checkpoint {name:?} of {}", self.location()),
                    e,
                    self.inner.epoch,
                )
            })?;
        find(self.location(), name).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreOptions;

    #[test]
    fn names_are_checked() {
        assert!(check_name("nightly-2026.12.05_a").is_ok());
        for bad in ["", "a b", "x/y", &"n".repeat(64)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn create_list_delete() {
        let dir = tempfile::tempdir().unwrap();
        let location = StoreLocation::Local(dir.path().to_path_buf());
        let store = CatalogStore::open(&location, StoreOptions::default())
            .await
            .unwrap();
        let created = store.create_checkpoint("before").await.unwrap();
        assert_eq!(created.name.as_deref(), Some("before"));
        assert!(matches!(
            store.create_checkpoint("before").await,
            Err(StoreError::AlreadyExists { .. })
        ));
        store.create_checkpoint("after").await.unwrap();
        let names: Vec<_> = list(&location)
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.name.unwrap())
            .collect();
        assert_eq!(names, ["before", "after"]);
        delete(&location, "before").await.unwrap();
        assert!(matches!(
            delete(&location, "before").await,
            Err(StoreError::NotFound { .. })
        ));
        assert_eq!(list(&location).await.unwrap().len(), 1);
        store.close().await.unwrap();
    }
}
