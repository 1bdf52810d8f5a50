//! Tags: named snapshots that stay readable whatever the retention floor
//! (system keys `snapshot-tag/NAME`: see
//! [`rocklake_codec::keys::SNAPSHOT_TAG_PREFIX`]).
//!
//! A tag protects its snapshot in two ways: [`CatalogStore::retain_from`]
//! never moves the floor past the oldest tagged snapshot (so excision keeps
//! everything a tagged snapshot sees), and a transaction that deletes a
//! tagged snapshot's `ducklake_snapshot` row (DuckLake's
//! `ducklake_expire_snapshots`) fails with SQLSTATE 55000, naming the tag.
//! Tags are system keys of the lake's catalog, so backups, checkpoints and
//! clones carry them.

use rocklake_codec::keys::{snapshot_tag_key, snapshot_tags_prefix};
use rocklake_codec::tags::Tag;

use crate::error::{StoreError, StoreResult};
use crate::store::CatalogStore;
use crate::view::CatalogView;

/// One tag: its name and the snapshot it protects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotTag {
    /// The tag's name.
    pub name: String,
    /// The tagged snapshot id.
    pub snapshot: u64,
}

/// Every tag `view` sees, by name.
pub(crate) async fn tags_in(view: &CatalogView<'_>) -> StoreResult<Vec<SnapshotTag>> {
    let prefix = snapshot_tags_prefix();
    let mut tags = Vec::new();
    for (key, value) in view.reads().scan_prefix(&prefix).await? {
        let name = String::from_utf8_lossy(&key[prefix.len()..]).into_owned();
        let snapshot = value
            .get(..8)
            .map(|b| u64::from_be_bytes(b.try_into().expect("8 bytes")))
            .ok_or_else(|| StoreError::InvalidRequest(format!("tag {name:?} is damaged")))?;
        tags.push(SnapshotTag { name, snapshot });
    }
    Ok(tags)
}

/// Fails when `key` is the `ducklake_snapshot` row of a tagged snapshot.
pub(crate) async fn check_not_tagged(view: &CatalogView<'_>, key: &[u8]) -> StoreResult<()> {
    if key.len() != 9 || key[0] != Tag::Snapshot.byte() {
        return Ok(());
    }
    let snapshot = u64::from_be_bytes(key[1..9].try_into().expect("8 bytes"));
    match tags_in(view)
        .await?
        .into_iter()
        .find(|t| t.snapshot == snapshot)
    {
        Some(tag) => Err(StoreError::SnapshotTagged {
            snapshot,
            tag: tag.name,
        }),
        None => Ok(()),
    }
}

fn check_name(name: &str) -> StoreResult<()> {
    if name.is_empty() || name.len() > 63 {
        return Err(StoreError::InvalidRequest(format!(
            "a tag name has 1 to 63 bytes, not {}",
            name.len()
        )));
    }
    Ok(())
}

impl CatalogStore {
    /// Tags `snapshot` as `name`. The snapshot must exist and be readable
    /// (at or above the retention floor); a tag of that name must not.
    pub async fn tag_snapshot(&self, name: &str, snapshot: u64) -> StoreResult<()> {
        check_name(name)?;
        let mut txn = self.write()?;
        let view = txn.view();
        if tags_in(&view).await?.iter().any(|t| t.name == name) {
            return Err(StoreError::InvalidRequest(format!(
                "tag \"{name}\" already exists (rocklake_untag('{name}') first)"
            )));
        }
        let floor = view.retain_from().await?;
        let exists = view
            .reads()
            .get(&snapshot_row_key(snapshot))
            .await?
            .is_some();
        if !exists || snapshot < floor {
            return Err(StoreError::InvalidRequest(format!(
                "snapshot {snapshot} cannot be tagged: it does not exist{}",
                if snapshot < floor {
                    format!(" any more (the retention floor is {floor})")
                } else {
                    String::new()
                }
            )));
        }
        txn.put(&snapshot_tag_key(name), &snapshot.to_be_bytes())?;
        txn.commit().await?;
        tracing::info!(tag = name, snapshot, "snapshot tagged");
        Ok(())
    }

    /// Removes the tag `name`; whether it existed.
    pub async fn untag_snapshot(&self, name: &str) -> StoreResult<bool> {
        let mut txn = self.write()?;
        let key = snapshot_tag_key(name);
        if txn.view().reads().get(&key).await?.is_none() {
            return Ok(false);
        }
        txn.remove(&key)?;
        txn.commit().await?;
        tracing::info!(tag = name, "snapshot tag removed");
        Ok(true)
    }

    /// Every tag, by name.
    pub async fn snapshot_tags(&self) -> StoreResult<Vec<SnapshotTag>> {
        let txn = self.read()?;
        tags_in(&txn.view()).await
    }
}

/// The key of snapshot `id`'s `ducklake_snapshot` row.
fn snapshot_row_key(id: u64) -> Vec<u8> {
    let mut key = vec![Tag::Snapshot.byte()];
    key.extend_from_slice(&id.to_be_bytes());
    key
}
