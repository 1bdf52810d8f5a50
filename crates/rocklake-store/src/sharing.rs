//! Data files a lake shares with its clones (see `rocklake clone`).
//!
//! A clone starts with its parent's catalog at a checkpoint, so both
//! catalogs name the DuckLake data and delete files written before it: the
//! files whose id is below the parent's `next_file_id` at that snapshot.
//! Neither side may delete such a file while the other may still read it:
//!
//! - the **clone** never schedules a shared file for deletion: DuckLake's
//!   `INSERT INTO ducklake_files_scheduled_for_deletion` rows for them are
//!   left out, so the clone's cleanup never removes them (and its orphan
//!   sweep only lists the clone's own DATA_PATH);
//! - the **parent** refuses to schedule one (SQLSTATE 55006): had it
//!   forgotten the file instead, its orphan sweep, which lists the parent's
//!   DATA_PATH, would delete it.
//!
//! Each side records the boundary in a small object next to its catalog,
//! written by `rocklake clone` (the parent's server may be running, so its
//! catalog itself is not written): `shared-files/clone-<id>` in the parent
//! lake, `shared-files/parent` in the clone lake; each holds
//! `below_file_id=<N>` and `with=<the other lake's location>` lines. A
//! parent's record is removed with `rocklake clone --release`.

use std::sync::Arc;

use futures::TryStreamExt;
use rocklake_types::datum::Datum;
use rocklake_types::{SqlError, SqlState};
use slatedb::object_store::path::Path as ObjectPath;
use slatedb::object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::error::{StoreError, StoreResult};
use crate::location::StoreLocation;

/// The catalog table DuckLake schedules file deletions in.
pub const SCHEDULED_FOR_DELETION: &str = "ducklake_files_scheduled_for_deletion";

/// Folder of the records, next to the lake's `catalog` folder.
const FOLDER: &str = "shared-files";
/// A clone's record of its parent.
const PARENT: &str = "parent";
/// Prefix of a parent's record of one clone.
const CLONE_PREFIX: &str = "clone-";

/// Which side of a sharing a record describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Side {
    /// This lake is a clone; `with` is its parent.
    Clone,
    /// This lake is the parent; `with` is one clone.
    Parent,
}

/// One record: files below `below_file_id` are shared with `with`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sharing {
    /// This lake's side.
    pub side: Side,
    /// Files with a smaller id are shared.
    pub below_file_id: u64,
    /// The other lake's location.
    pub with: String,
}

impl Sharing {
    fn text(&self) -> String {
        format!("below_file_id={}\nwith={}\n", self.below_file_id, self.with)
    }

    fn parse(side: Side, text: &str) -> Option<Sharing> {
        let mut below = None;
        let mut with = None;
        for line in text.lines() {
            match line.split_once('=') {
                Some(("below_file_id", value)) => below = value.trim().parse().ok(),
                Some(("with", value)) => with = Some(value.to_string()),
                _ => {}
            }
        }
        Some(Sharing {
            side,
            below_file_id: below?,
            with: with?,
        })
    }
}

/// The records' folder of the lake at `location`, and its store.
fn folder(location: &StoreLocation) -> StoreResult<(Arc<dyn ObjectStore>, ObjectPath)> {
    let (objects, catalog) = location.open_object_store()?;
    let mut parts: Vec<_> = catalog.parts().collect();
    parts.pop();
    Ok((objects, ObjectPath::from_iter(parts).join(FOLDER)))
}

fn storage_error(location: &StoreLocation, reason: String) -> StoreError {
    StoreError::Location {
        location: location.to_string(),
        reason,
    }
}

/// Records at `location` that it shares files below `below_file_id` with
/// the lake at `with`, on `side`; `id` names a parent's record of a clone.
pub async fn record(location: &StoreLocation, sharing: &Sharing, id: &str) -> StoreResult<()> {
    let (objects, folder) = folder(location)?;
    let name = match sharing.side {
        Side::Clone => PARENT.to_string(),
        Side::Parent => format!("{CLONE_PREFIX}{id}"),
    };
    objects
        .put(&folder.join(name), PutPayload::from(sharing.text()))
        .await
        .map_err(|e| storage_error(location, format!("cannot record shared files: {e}")))?;
    Ok(())
}

/// Removes the parent's records of clones at `clone` (when the clone is
/// gone, the parent may delete the files again); returns how many.
pub async fn release(location: &StoreLocation, clone: &str) -> StoreResult<usize> {
    let (objects, folder) = folder(location)?;
    let mut released = 0;
    for (path, sharing) in read_all(location, objects.as_ref(), &folder).await? {
        if sharing.side == Side::Parent && sharing.with == clone {
            objects
                .delete(&path)
                .await
                .map_err(|e| storage_error(location, format!("cannot delete {path}: {e}")))?;
            released += 1;
        }
    }
    Ok(released)
}

/// Every record of the lake at `location`.
pub async fn records(location: &StoreLocation) -> StoreResult<Vec<Sharing>> {
    let (objects, folder) = folder(location)?;
    Ok(read_all(location, objects.as_ref(), &folder)
        .await?
        .into_iter()
        .map(|(_, sharing)| sharing)
        .collect())
}

async fn read_all(
    location: &StoreLocation,
    objects: &dyn ObjectStore,
    folder: &ObjectPath,
) -> StoreResult<Vec<(ObjectPath, Sharing)>> {
    let listed: Vec<_> = match objects.list(Some(folder)).try_collect().await {
        Ok(listed) => listed,
        Err(slatedb::object_store::Error::NotFound { .. }) => Vec::new(),
        Err(e) => {
            return Err(storage_error(
                location,
                format!("cannot list {folder}: {e}"),
            ))
        }
    };
    let mut out = Vec::new();
    for meta in listed {
        let side = match meta.location.filename() {
            Some(PARENT) => Side::Clone,
            Some(name) if name.starts_with(CLONE_PREFIX) => Side::Parent,
            _ => continue,
        };
        let bytes = objects
            .get(&meta.location)
            .await
            .map_err(|e| storage_error(location, format!("cannot read {}: {e}", meta.location)))?
            .bytes()
            .await
            .map_err(|e| storage_error(location, format!("cannot read {}: {e}", meta.location)))?;
        if let Some(sharing) = Sharing::parse(side, &String::from_utf8_lossy(&bytes)) {
            out.push((meta.location, sharing));
        }
    }
    Ok(out)
}

/// The rows of an insert into [`SCHEDULED_FOR_DELETION`] this lake may
/// make: a clone's rows for shared files are left out; a parent's fail the
/// insert. `file_id_column` is the position of `data_file_id`.
pub fn schedulable(
    records: &[Sharing],
    rows: Vec<Vec<Datum>>,
    file_id_column: usize,
) -> Result<Vec<Vec<Datum>>, Box<SqlError>> {
    if records.is_empty() {
        return Ok(rows);
    }
    let mut kept = Vec::with_capacity(rows.len());
    for row in rows {
        let file_id = row
            .get(file_id_column)
            .and_then(Datum::as_i64)
            .and_then(|id| u64::try_from(id).ok());
        let shared = |side: Side| {
            records
                .iter()
                .find(|r| r.side == side && file_id.is_some_and(|id| id < r.below_file_id))
        };
        if let Some(clone) = shared(Side::Parent) {
            return Err(Box::new(SqlError::new(
                SqlState::OBJECT_IN_USE,
                format!(
                    "data file {} is shared with the clone at {} and cannot be deleted while it exists",
                    file_id.unwrap_or_default(),
                    clone.with
                ),
            )
            .with_hint("run `rocklake clone --release` for the clone once it is no longer used")));
        }
        if shared(Side::Clone).is_none() {
            kept.push(row);
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64) -> Vec<Datum> {
        vec![Datum::Int8(id), Datum::text("f.parquet".to_string())]
    }

    fn sharing(side: Side, below: u64) -> Sharing {
        Sharing {
            side,
            below_file_id: below,
            with: "elsewhere".into(),
        }
    }

    #[test]
    fn records_read_back() {
        let record = sharing(Side::Parent, 42);
        assert_eq!(Sharing::parse(Side::Parent, &record.text()), Some(record));
        assert_eq!(Sharing::parse(Side::Clone, "with=x\n"), None);
    }

    #[test]
    fn a_clone_leaves_shared_files_out() {
        let kept = schedulable(
            &[sharing(Side::Clone, 10)],
            vec![row(3), row(10), row(11)],
            0,
        )
        .unwrap();
        let ids: Vec<_> = kept.iter().map(|r| r[0].as_i64().unwrap()).collect();
        assert_eq!(ids, [10, 11]);
    }

    #[test]
    fn a_parent_refuses_to_delete_shared_files() {
        let error =
            schedulable(&[sharing(Side::Parent, 10)], vec![row(12), row(9)], 0).unwrap_err();
        assert_eq!(error.code, SqlState::OBJECT_IN_USE);
        assert!(schedulable(&[sharing(Side::Parent, 10)], vec![row(12)], 0).is_ok());
    }

    #[tokio::test]
    async fn records_are_stored_next_to_the_catalog_and_released() {
        let dir = tempfile::tempdir().unwrap();
        let location = StoreLocation::Local(dir.path().to_path_buf());
        record(&location, &sharing(Side::Parent, 7), "a")
            .await
            .unwrap();
        record(&location, &sharing(Side::Parent, 9), "b")
            .await
            .unwrap();
        assert_eq!(records(&location).await.unwrap().len(), 2);
        assert_eq!(release(&location, "elsewhere").await.unwrap(), 2);
        assert!(records(&location).await.unwrap().is_empty());
    }
}
