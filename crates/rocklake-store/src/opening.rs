//! Opening a catalog's SlateDB database, in one place for every role that
//! opens one (the writer, replicas, backups, `rocklake keys`): the object
//! store of its location, watched for faults ([`crate::faults`]); the cipher
//! of its catalog keys, checked against the catalog's marker before
//! anything is opened ([`crate::encryption`]); its metrics, labelled with the
//! lake.

use std::sync::Arc;

use slatedb::object_store::path::Path as ObjectPath;
use slatedb::object_store::ObjectStore;
use slatedb::{BlockTransformer, Db, DbBuilder, DbReader, DbReaderBuilder};

use crate::encryption::{self, CatalogKeys, Opening};
use crate::error::StoreResult;
use crate::faults::{StorageHealth, WatchedObjectStore};
use crate::location::StoreLocation;

/// What a catalog's SlateDB database opens with.
pub(crate) struct CatalogDb {
    /// The location's object store, watched by `health`.
    pub(crate) objects: Arc<dyn ObjectStore>,
    /// The catalog's path in it.
    pub(crate) path: ObjectPath,
    /// The cipher of the catalog keys, when the catalog is encrypted.
    pub(crate) cipher: Option<Arc<dyn BlockTransformer>>,
    /// The faults its storage reported last.
    pub(crate) health: Arc<StorageHealth>,
    /// The lake's label in metrics.
    label: String,
}

impl CatalogDb {
    /// Prepares the catalog at `location` for `opening` with `keys`.
    pub(crate) async fn prepare(
        location: &StoreLocation,
        keys: Option<&Arc<CatalogKeys>>,
        opening: Opening,
    ) -> StoreResult<CatalogDb> {
        let cipher = encryption::prepare(location, keys, opening).await?;
        let (objects, path) = location.open_object_store()?;
        let health = Arc::new(StorageHealth::default());
        let objects: Arc<dyn ObjectStore> =
            Arc::new(WatchedObjectStore::new(objects, health.clone()));
        Ok(CatalogDb {
            objects,
            path,
            cipher,
            health,
            label: crate::root::lake_label(location),
        })
    }

    fn recorder(&self) -> Arc<rocklake_metrics::LakeRecorder> {
        Arc::new(rocklake_metrics::metrics().slatedb_recorder(&self.label))
    }

    /// A builder of the catalog's writer.
    pub(crate) fn writer(&self) -> DbBuilder<ObjectPath> {
        let builder = Db::builder(self.path.clone(), self.objects.clone())
            .with_metrics_recorder(self.recorder());
        match &self.cipher {
            Some(cipher) => builder.with_block_transformer(cipher.clone()),
            None => builder,
        }
    }

    /// A builder of a reader of the catalog.
    pub(crate) fn reader(&self) -> DbReaderBuilder<ObjectPath> {
        let builder = DbReader::builder(self.path.clone(), self.objects.clone())
            .with_metrics_recorder(self.recorder());
        match &self.cipher {
            Some(cipher) => builder.with_block_transformer(cipher.clone()),
            None => builder,
        }
    }
}
