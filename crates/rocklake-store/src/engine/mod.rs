//! The catalog store as the SQL engine's storage: implements
//! [`rocklake_sql::Storage`] over a [`CatalogStore`] (or a
//! [`CatalogReplica`]). [`txn`] turns the engine's scans into key-prefix reads
//! and its writes into store writes; [`errors`] maps store errors to
//! PostgreSQL's.

// `SqlError` carries every field of a PostgreSQL ErrorResponse; it is the
// engine's error type and only travels on error paths.
#![allow(clippy::result_large_err)]

mod added_rows;
mod errors;
mod registry;
mod row_keys;
mod txn;

use std::sync::Arc;

use async_trait::async_trait;
use rocklake_sql::storage::{Maintenance, Storage, StorageResult, StorageTxn};
use rocklake_types::{SqlError, SqlState};

use crate::error::StoreError;
use crate::replica::CatalogReplica;
use crate::retention::RetainSpec;
use crate::store::CatalogStore;
pub use errors::to_sql;
use registry::RegistryCache;
use txn::{Access, StoreTxn};

/// Where a [`SqlCatalog`] reads and writes.
enum Source {
    /// The catalog's writer.
    Writer(CatalogStore),
    /// A read replica: every transaction is read-only.
    Replica(CatalogReplica),
}
/// [`Storage`] backed by a [`CatalogStore`] or a [`CatalogReplica`].
pub struct SqlCatalog {
    source: Source,
    registry: Arc<RegistryCache>,
}
impl SqlCatalog {
    /// Serves `store` to the SQL engine.
    pub fn new(store: CatalogStore) -> Self {
        SqlCatalog {
            source: Source::Writer(store),
            registry: Arc::default(),
        }
    }

    /// Serves a read replica to the SQL engine: reads work, and every write
    /// fails with SQLSTATE 25006 as on a PostgreSQL hot standby.
    pub fn replica(replica: CatalogReplica) -> Self {
        SqlCatalog {
            source: Source::Replica(replica),
            registry: Arc::default(),
        }
    }
}
#[async_trait]
impl Storage for SqlCatalog {
    async fn begin(&self, read_only: bool) -> StorageResult<Box<dyn StorageTxn>> {
        let access = match &self.source {
            Source::Replica(replica) => Access::Read(replica.read()),
            Source::Writer(store) if read_only => Access::Read(store.read().map_err(to_sql)?),
            Source::Writer(store) => Access::Write(Box::new(store.write().map_err(to_sql)?)),
        };
        let location = match &self.source {
            Source::Replica(replica) => replica.location().clone(),
            Source::Writer(store) => store.location().clone(),
        };
        Ok(Box::new(StoreTxn::new(
            access,
            self.registry.clone(),
            location,
        )))
    }

    async fn maintain(&self, command: Maintenance) -> StorageResult<Vec<(String, String)>> {
        let location = match &self.source {
            Source::Replica(replica) => replica.location(),
            Source::Writer(store) => store.location(),
        };
        // Listing and deleting checkpoints work on replicas too.
        let writer = match &self.source {
            Source::Writer(store) => Ok(store),
            Source::Replica(_) => Err(to_sql(StoreError::ReadOnly)),
        };
        let now = std::time::SystemTime::now();
        match command {
            Maintenance::RetainFrom { spec, .. } => {
                let spec: RetainSpec = spec
                    .parse()
                    .map_err(|e: String| SqlError::new(SqlState::INVALID_PARAMETER_VALUE, e))?;
                let outcome = writer?.retain_from(spec, now).await.map_err(to_sql)?;
                Ok(vec![
                    ("previous_retain_from".into(), outcome.previous.to_string()),
                    ("retain_from".into(), outcome.floor.to_string()),
                    ("latest_snapshot".into(), outcome.latest.to_string()),
                ])
            }
            Maintenance::Excise { .. } => {
                let report = writer?.excise(now).await.map_err(to_sql)?;
                let mut rows = vec![("retain_from".to_string(), report.floor.to_string())];
                rows.extend(report.removed.iter().map(|(table, count)| {
                    (format!("rows removed from {table}"), count.to_string())
                }));
                rows.push((
                    "files scheduled for deletion".into(),
                    report.scheduled_files.to_string(),
                ));
                Ok(rows)
            }
            Maintenance::Checkpoint { name } => {
                let created = writer?.create_checkpoint(&name).await.map_err(to_sql)?;
                Ok(vec![checkpoint_row(&created)])
            }
            Maintenance::Checkpoints => {
                let listed = crate::checkpoints::list(location).await.map_err(to_sql)?;
                Ok(listed.iter().map(checkpoint_row).collect())
            }
            Maintenance::Tag { name, snapshot, .. } => {
                let id: u64 = snapshot.trim().parse().map_err(|_| {
                    SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("\"{snapshot}\" is not a snapshot id"),
                    )
                })?;
                writer?.tag_snapshot(&name, id).await.map_err(to_sql)?;
                Ok(vec![(format!("tag {name}"), format!("snapshot {id}"))])
            }
            Maintenance::Untag { name, .. } => {
                if !writer?.untag_snapshot(&name).await.map_err(to_sql)? {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("tag \"{name}\" does not exist"),
                    ));
                }
                Ok(vec![("tag removed".into(), name)])
            }
            Maintenance::SetRetention { spec, .. } => {
                let retention =
                    crate::auto_retention::LakeRetention::parse(&spec).map_err(to_sql)?;
                writer?
                    .set_lake_retention(retention)
                    .await
                    .map_err(to_sql)?;
                Ok(vec![("retention".into(), spec.trim().to_string())])
            }
            Maintenance::Tags { .. } => {
                let tags = match &self.source {
                    Source::Writer(store) => store.snapshot_tags().await,
                    Source::Replica(replica) => {
                        crate::snapshot_tags::tags_in(&replica.read().view()).await
                    }
                }
                .map_err(to_sql)?;
                Ok(tags
                    .into_iter()
                    .map(|tag| {
                        (
                            format!("tag {}", tag.name),
                            format!("snapshot {}", tag.snapshot),
                        )
                    })
                    .collect())
            }
            Maintenance::DropCheckpoint { name } => {
                crate::checkpoints::delete(location, &name)
                    .await
                    .map_err(to_sql)?;
                Ok(vec![("checkpoint deleted".into(), name)])
            }
        }
    }
}

/// A checkpoint as a maintenance row: its name, and its id and time.
fn checkpoint_row(checkpoint: &slatedb::Checkpoint) -> (String, String) {
    (
        format!(
            "checkpoint {}",
            checkpoint.name.as_deref().unwrap_or_default()
        ),
        format!(
            "id {} created {}",
            checkpoint.id,
            checkpoint.create_time.format("%Y-%m-%d %H:%M:%S UTC")
        ),
    )
}
