//! A served root: any number of lakes under one location, each its own
//! SlateDB database (the seed's key layout stays the same in every lake: the
//! tag is the first byte of every key, and lakes are told apart by where
//! they are stored, never by a key prefix).
//!
//! ```text
//! ROOT/databases/<db>/catalog/...                   database <db>: its home catalog
//! ROOT/databases/<db>/schemas/<schema>/catalog/...  a lake in schema <schema> of <db>
//! ROOT/catalog/...                                  a single-catalog location of an
//!                                                   earlier release (see upgrade_single_catalog)
//! ROOT/roles                                        the roles and database owners
//!                                                   (see crate::roles)
//! ROOT/incomplete, ROOT/databases/<db>.incomplete,
//! ROOT/databases/<db>/schemas/<schema>.incomplete   a backup, clone or import at work
//! ```
//!
//! The commands that write a root or a database from outside a server
//! (`backup`, `clone`, `import`) write an `incomplete` marker (naming the
//! command) first and remove it last: what a killed command leaves behind
//! is refused by `serve` (a whole root) or served as broken (a database)
//! with a message naming the command, and the command's rerun starts over
//! from scratch.
//!
//! Names become path segments through [`name_segment`]: lower-case ASCII
//! letters, digits and `_` stay as they are, every other byte of the UTF-8
//! name is written `+hh`, so any PostgreSQL name maps to one segment that is
//! safe on every object store and on case-insensitive file systems.
//!
//! A path made from a name is always a strict child of its parent folder:
//! a name must hold 1 to 63 bytes (PostgreSQL's limit, which the SQL layer
//! applies before names get here), or it is refused with 42602 before any
//! path is made, so no name can stand for the parent folder itself (an
//! empty name would) or run past a file system's 255-byte file names.
//! Deleting checks the same once more on the path itself.
//!
//! A database or lake exists when its catalog has a SlateDB manifest.

use std::sync::Arc;

use futures::TryStreamExt;
use slatedb::object_store::path::Path as ObjectPath;
use slatedb::object_store::{ObjectStore, ObjectStoreExt};

use crate::error::{StoreError, StoreResult};
use crate::location::StoreLocation;

/// Folder of the databases under a root.
const DATABASES: &str = "databases";
/// Folder of a database's schema lakes.
const SCHEMAS: &str = "schemas";
/// Folder of a SlateDB catalog inside a lake's location.
const CATALOG: &str = "catalog";
/// Folder of SlateDB's manifests inside a catalog.
const MANIFEST: &str = "manifest";
/// The object of the root's roles (see [`crate::roles`]).
pub(crate) const ROLES: &str = "roles";
/// The marker of a command at work (see the module docs).
const INCOMPLETE: &str = "incomplete";

/// The path segment that stores `name` (see the module docs); names that
/// cannot be one (empty, over 63 bytes, with a NUL byte) are refused.
pub fn name_segment(name: &str) -> StoreResult<String> {
    rocklake_types::ident::check_name(name, "name")
        .map_err(|e| StoreError::InvalidName { reason: e.message })?;
    Ok(encode_segment(name))
}

/// [`name_segment`] of a name already checked.
fn encode_segment(name: &str) -> String {
    let mut segment = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_' {
            segment.push(byte as char);
        } else {
            segment.push_str(&format!("+{byte:02x}"));
        }
    }
    segment
}

/// The short name of the lake at `location` in metrics and logs: `db` for
/// a database's home lake, `db/schema` for a schema lake, the location
/// itself for a catalog outside a root's layout.
pub fn lake_label(location: &StoreLocation) -> String {
    let shown = location.to_string();
    let Some((_, rest)) = shown.rsplit_once(&format!("{DATABASES}/")) else {
        return shown;
    };
    let parts: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
    match parts.as_slice() {
        [database] => segment_name(database).unwrap_or(shown),
        [database, SCHEMAS, schema] => match (segment_name(database), segment_name(schema)) {
            (Some(database), Some(schema)) => format!("{database}/{schema}"),
            _ => shown,
        },
        _ => shown,
    }
}

/// The name a path segment stores, if it is one [`name_segment`] writes.
pub fn segment_name(segment: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(segment.len());
    let mut rest = segment.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first == b'+' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(first);
            rest = tail;
        }
    }
    let name = String::from_utf8(bytes).ok()?;
    (name_segment(&name).ok()? == segment).then_some(name)
}

/// What a command writes from outside a server (see the module docs).
#[derive(Debug, Clone, Copy)]
pub enum Work<'a> {
    /// A whole root (`backup`, `clone`).
    Root,
    /// A new database (`import`).
    Database(&'a str),
    /// A new schema lake of a database (`import --schema`).
    Lake(&'a str, &'a str),
}

/// The lakes of one served location (see the module docs).
#[derive(Clone)]
pub struct LakeRoot {
    location: StoreLocation,
    objects: Arc<dyn ObjectStore>,
    base: ObjectPath,
}

impl LakeRoot {
    /// The root at `location` (a local directory is created if missing).
    pub fn open(location: StoreLocation) -> StoreResult<LakeRoot> {
        let (objects, base) = location.root_object_store()?;
        Ok(LakeRoot {
            location,
            objects,
            base,
        })
    }

    /// Where the root is.
    pub fn location(&self) -> &StoreLocation {
        &self.location
    }

    /// Where database `name`'s home catalog is.
    pub fn database_location(&self, name: &str) -> StoreResult<StoreLocation> {
        Ok(self.location.child(DATABASES).child(&name_segment(name)?))
    }

    /// Where the lake of schema `schema` in database `database` is.
    pub fn lake_location(&self, database: &str, schema: &str) -> StoreResult<StoreLocation> {
        Ok(self
            .database_location(database)?
            .child(SCHEMAS)
            .child(&name_segment(schema)?))
    }

    fn path(&self, parts: &[&str]) -> ObjectPath {
        parts
            .iter()
            .fold(self.base.clone(), |path, part| path.join(*part))
    }

    fn database_path(&self, name: &str) -> StoreResult<ObjectPath> {
        Ok(self.path(&[DATABASES, &name_segment(name)?]))
    }

    fn lake_path(&self, database: &str, schema: &str) -> StoreResult<ObjectPath> {
        Ok(self
            .database_path(database)?
            .join(SCHEMAS)
            .join(name_segment(schema)?.as_str()))
    }

    /// Names of the databases under the root, sorted.
    pub async fn databases(&self) -> StoreResult<Vec<String>> {
        self.names_with_catalogs(&self.path(&[DATABASES])).await
    }

    /// Names of the schema lakes of `database`, sorted.
    pub async fn lake_schemas(&self, database: &str) -> StoreResult<Vec<String>> {
        self.names_with_catalogs(&self.database_path(database)?.join(SCHEMAS))
            .await
    }

    /// Whether database `name` exists.
    pub async fn has_database(&self, name: &str) -> StoreResult<bool> {
        self.has_catalog(&self.database_path(name)?).await
    }

    /// The names of the folders under `parent` that hold a catalog.
    async fn names_with_catalogs(&self, parent: &ObjectPath) -> StoreResult<Vec<String>> {
        let listing = match self.objects.list_with_delimiter(Some(parent)).await {
            Ok(listing) => listing,
            Err(slatedb::object_store::Error::NotFound { .. }) => return Ok(Vec::new()),
            Err(e) => return Err(self.error(format!("cannot list {parent}: {e}"))),
        };
        let mut names = Vec::new();
        for folder in listing.common_prefixes {
            let Some(name) = folder.filename().and_then(segment_name) else {
                continue;
            };
            if self.has_catalog(&folder).await? {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }

    /// Whether the location at `folder` holds a catalog with a manifest.
    async fn has_catalog(&self, folder: &ObjectPath) -> StoreResult<bool> {
        let manifests = folder.clone().join(CATALOG).join(MANIFEST);
        let mut listing = self.objects.list(Some(&manifests));
        match listing.try_next().await {
            Ok(first) => Ok(first.is_some()),
            Err(slatedb::object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.error(format!("cannot list {manifests}: {e}"))),
        }
    }

    /// Deletes every object of database `name`, its schema lakes included.
    /// Its manifests go first, so that a crash half way leaves no database
    /// behind, only objects that the next create of that name clears (with
    /// this same call: SlateDB must not find old WAL objects in a new
    /// database).
    pub async fn remove_database(&self, name: &str) -> StoreResult<()> {
        let folder = self.database_path(name)?;
        self.remove_folder(&folder, &self.path(&[DATABASES])).await
    }

    /// Deletes every object of the lake of `schema` in `database`.
    pub async fn remove_lake(&self, database: &str, schema: &str) -> StoreResult<()> {
        let folder = self.lake_path(database, schema)?;
        let parent = self.database_path(database)?.join(SCHEMAS);
        self.remove_folder(&folder, &parent).await
    }

    /// Deletes every object under `folder`, which must be exactly one level
    /// below `parent` (checked on the paths themselves, whatever made them).
    async fn remove_folder(&self, folder: &ObjectPath, parent: &ObjectPath) -> StoreResult<()> {
        let below: Vec<_> = folder
            .prefix_match(parent)
            .map(|rest| rest.collect())
            .unwrap_or_default();
        if below.len() != 1 || below[0].as_ref().is_empty() {
            return Err(self.error(format!(
                "refusing to delete {folder}: it is not one folder below {parent}"
            )));
        }
        let mut objects: Vec<ObjectPath> = self
            .objects
            .list(Some(folder))
            .map_ok(|meta| meta.location)
            .try_collect()
            .await
            .or_else(|e| match e {
                slatedb::object_store::Error::NotFound { .. } => Ok(Vec::new()),
                e => Err(self.error(format!("cannot list {folder}: {e}"))),
            })?;
        // Manifests first: without them nothing reads as a catalog any more.
        objects.sort_by_key(|path| !path.parts().any(|part| part.as_ref() == MANIFEST));
        for object in objects {
            match self.objects.delete(&object).await {
                Ok(()) | Err(slatedb::object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(self.error(format!("cannot delete {object}: {e}"))),
            }
        }
        if let StoreLocation::Local(_) = &self.location {
            // Empty directories stay behind on a local file system (whose
            // object paths are absolute, see StoreLocation).
            let mut directory = std::path::PathBuf::from("/");
            directory.extend(folder.parts().map(|p| p.as_ref().to_string()));
            let _ = std::fs::remove_dir_all(directory);
        }
        Ok(())
    }

    /// Whether the root itself holds a catalog of an earlier release (which
    /// served one catalog per location).
    pub async fn has_single_catalog(&self) -> StoreResult<bool> {
        self.has_catalog(&self.base).await
    }

    /// Makes the single catalog of an earlier release database `name`:
    /// copies its objects to the database's place, then deletes the
    /// originals, manifests first. Idempotent after a crash: while the
    /// original manifests exist the copy is redone from scratch; once they
    /// are gone the copy is complete and only leftovers are removed.
    /// Returns how many objects moved.
    ///
    /// No other process may write the old catalog meanwhile: stop servers
    /// of the earlier release first.
    pub async fn upgrade_single_catalog(&self, name: &str) -> StoreResult<usize> {
        let source = self.base.clone().join(CATALOG);
        let target = self.database_path(name)?.join(CATALOG);
        if self.has_catalog(&self.base).await? {
            self.remove_database(name).await?;
            let objects: Vec<ObjectPath> = self
                .objects
                .list(Some(&source))
                .map_ok(|meta| meta.location)
                .try_collect()
                .await
                .map_err(|e| self.error(format!("cannot list {source}: {e}")))?;
            for object in &objects {
                let relative = object
                    .prefix_match(&source)
                    .ok_or_else(|| self.error(format!("{object} is not under {source}")))?;
                let copy = relative.fold(target.clone(), |path, part| path.join(part));
                self.objects
                    .copy(object, &copy)
                    .await
                    .map_err(|e| self.error(format!("cannot copy {object} to {copy}: {e}")))?;
            }
            self.remove_folder(&source, &self.base).await?;
            return Ok(objects.len());
        }
        // A crash after the manifests went: finish removing the rest.
        self.remove_folder(&source, &self.base).await?;
        Ok(0)
    }

    /// Marks `scope` as being written by `command`, until
    /// [`LakeRoot::finish_work`].
    pub async fn begin_work(&self, scope: Work<'_>, command: &str) -> StoreResult<()> {
        let path = self.marker_path(scope)?;
        self.objects
            .put(&path, command.as_bytes().to_vec().into())
            .await
            .map(|_| ())
            .map_err(|e| self.error(format!("cannot write {path}: {e}")))
    }

    /// Removes the marker of [`LakeRoot::begin_work`]: the work is complete.
    pub async fn finish_work(&self, scope: Work<'_>) -> StoreResult<()> {
        let path = self.marker_path(scope)?;
        match self.objects.delete(&path).await {
            Ok(()) | Err(slatedb::object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error(format!("cannot delete {path}: {e}"))),
        }
    }

    /// The command whose work on `scope` never completed.
    pub async fn unfinished_work(&self, scope: Work<'_>) -> StoreResult<Option<String>> {
        let path = self.marker_path(scope)?;
        match self.objects.get(&path).await {
            Ok(found) => {
                let bytes = found
                    .bytes()
                    .await
                    .map_err(|e| self.error(format!("cannot read {path}: {e}")))?;
                Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
            }
            Err(slatedb::object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error(format!("cannot read {path}: {e}"))),
        }
    }

    /// Deletes what an unfinished command left under the root: every
    /// database, the roles, and the marker last.
    pub async fn clear_unfinished(&self) -> StoreResult<()> {
        self.remove_folder(&self.path(&[DATABASES]), &self.base)
            .await?;
        for name in [ROLES, INCOMPLETE] {
            let path = self.path(&[name]);
            match self.objects.delete(&path).await {
                Ok(()) | Err(slatedb::object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(self.error(format!("cannot delete {path}: {e}"))),
            }
        }
        Ok(())
    }

    /// Where the marker of `scope` is: at the root's top, or next to the
    /// folder of the database or lake (`<segment>.incomplete`: a name no
    /// folder has, since segments encode `.`), so removing leftovers of
    /// the folder keeps it.
    fn marker_path(&self, scope: Work<'_>) -> StoreResult<ObjectPath> {
        Ok(match scope {
            Work::Root => self.path(&[INCOMPLETE]),
            Work::Database(database) => self.path(&[
                DATABASES,
                &format!("{}.{INCOMPLETE}", name_segment(database)?),
            ]),
            Work::Lake(database, schema) => self
                .database_path(database)?
                .join(SCHEMAS)
                .join(format!("{}.{INCOMPLETE}", name_segment(schema)?).as_str()),
        })
    }

    /// The bytes of object `name` at the root's top, if it exists.
    pub(crate) async fn read_object(&self, name: &str) -> StoreResult<Option<bytes::Bytes>> {
        self.read_object_at(&[name]).await
    }

    /// Replaces object `name` at the root's top with `bytes` (atomically).
    pub(crate) async fn write_object(&self, name: &str, bytes: Vec<u8>) -> StoreResult<()> {
        self.write_object_at(&[name], bytes).await
    }

    /// The path of `parts` under the root.
    pub(crate) fn object_path(&self, parts: &[&str]) -> ObjectPath {
        self.path(parts)
    }

    /// The object store the root is in.
    pub(crate) fn objects(&self) -> &Arc<dyn ObjectStore> {
        &self.objects
    }

    /// The names of the objects directly in folder `parts`.
    pub(crate) async fn list_names(&self, parts: &[&str]) -> StoreResult<Vec<String>> {
        let folder = self.path(parts);
        let listed = match self.objects.list_with_delimiter(Some(&folder)).await {
            Ok(listed) => listed.objects,
            Err(slatedb::object_store::Error::NotFound { .. }) => Vec::new(),
            Err(e) => return Err(self.error(format!("cannot list {folder}: {e}"))),
        };
        Ok(listed
            .into_iter()
            .filter_map(|object| object.location.filename().map(str::to_string))
            .collect())
    }

    /// The bytes of the object at `parts`, if it exists.
    pub(crate) async fn read_object_at(&self, parts: &[&str]) -> StoreResult<Option<bytes::Bytes>> {
        let path = self.path(parts);
        match self.objects.get(&path).await {
            Ok(found) => found
                .bytes()
                .await
                .map(Some)
                .map_err(|e| self.error(format!("cannot read {path}: {e}"))),
            Err(slatedb::object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error(format!("cannot read {path}: {e}"))),
        }
    }

    /// Replaces the object at `parts` with `bytes` (atomically).
    pub(crate) async fn write_object_at(&self, parts: &[&str], bytes: Vec<u8>) -> StoreResult<()> {
        let path = self.path(parts);
        self.objects
            .put(&path, bytes.into())
            .await
            .map(|_| ())
            .map_err(|e| self.error(format!("cannot write {path}: {e}")))
    }

    pub(crate) fn error(&self, reason: String) -> StoreError {
        StoreError::Location {
            location: self.location.to_string(),
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_safe_segments_and_back() {
        for (name, segment) in [
            ("lake", "lake"),
            ("team_a", "team_a"),
            ("Sales", "+53ales"),
            ("my-db", "my+2ddb"),
            ("a/b", "a+2fb"),
            ("été", "+c3+a9t+c3+a9"),
            ("+", "+2b"),
        ] {
            assert_eq!(name_segment(name).unwrap(), segment);
            assert_eq!(segment_name(segment).as_deref(), Some(name));
        }
        for foreign in ["", "+", "+4", "+zz", "A", "+61"] {
            assert_eq!(segment_name(foreign), None, "{foreign:?}");
        }
        for refused in [String::new(), "x".repeat(64), "a\0b".to_string()] {
            assert!(name_segment(&refused).is_err(), "{refused:?}");
        }
    }
}
