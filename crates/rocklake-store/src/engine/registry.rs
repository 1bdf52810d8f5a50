//! The relation registry as transactions see it, and the copy the server
//! keeps of its latest version.
//!
//! Both views of a registry (relations by name, for resolving; the engine's
//! definitions in relation-id order, for the catalog) are persistent maps: a
//! DDL statement changes one entry and shares every other with the version
//! it read, and transactions at one registry version share one registry.
//! Neither a `CREATE TABLE` nor the first statement after it copies the
//! registry, whatever its size.

use std::sync::{Arc, Mutex, OnceLock};

use rocklake_codec::relations::{Relation, RowLayout};
use rocklake_sql::storage::{KeyChecks, RelationDef, RelationList};

use crate::txn::RelationMap;

/// The registry at one version, as one transaction sees it.
#[derive(Clone, Default)]
pub(super) struct Registry {
    /// Relations by (schema, name).
    by_name: RelationMap,
    /// Relations by relation id (the engine's definitions carry it).
    by_id: imbl::OrdMap<u64, Arc<Relation>>,
    /// The engine's definition of each relation, by relation id.
    definitions: imbl::OrdMap<u64, Arc<RelationDef>>,
}

impl Registry {
    /// The registry holding `relations`.
    pub(super) fn of(relations: Vec<Relation>) -> Registry {
        let mut registry = Registry::default();
        for relation in relations {
            registry.insert(relation);
        }
        registry
    }

    /// Relations by (schema, name).
    pub(super) fn by_name(&self) -> &RelationMap {
        &self.by_name
    }

    /// The relation `schema.name`.
    pub(super) fn get(&self, schema: &str, name: &str) -> Option<&Arc<Relation>> {
        self.by_name.get(schema, name)
    }

    /// The relation with id `relation_id`.
    pub(super) fn by_id(&self, relation_id: u64) -> Option<&Arc<Relation>> {
        self.by_id.get(&relation_id)
    }

    /// Adds (or replaces) `relation`.
    pub(super) fn insert(&mut self, relation: Relation) {
        let relation = Arc::new(relation);
        self.definitions
            .insert(relation.relation_id, Arc::new(definition(&relation)));
        self.by_id.insert(relation.relation_id, relation.clone());
        self.by_name.insert(relation);
    }

    /// Removes the relation `schema.name`, returning it.
    pub(super) fn remove(&mut self, schema: &str, name: &str) -> Option<Arc<Relation>> {
        let removed = self.by_name.remove(schema, name)?;
        self.definitions.remove(&removed.relation_id);
        self.by_id.remove(&removed.relation_id);
        Some(removed)
    }

    /// The engine's definitions in relation-id order (pointers into the
    /// shared definitions: O(relations) pointer copies).
    pub(super) fn definitions(&self) -> RelationList {
        Arc::new(self.definitions.values().cloned().collect())
    }
}

/// The engine's definition of a stored relation. DuckLake's tables are
/// keyed by their primary key (see docs/key-layout.md), so a duplicate is
/// the store's to refuse; a generic table's rows are kept in insertion
/// order, so the engine checks its key against the rows it sees.
pub(super) fn definition(relation: &Relation) -> RelationDef {
    let mut def = RelationDef::new(
        relation.schema.clone(),
        relation.name.clone(),
        relation.columns.clone(),
        relation.primary_key.clone(),
    );
    def.key_checks = match relation.layout() {
        RowLayout::Generic { .. } => KeyChecks::Engine,
        _ => KeyChecks::Storage,
    };
    def.storage_id = Some(relation.relation_id);
    def
}

/// The engine's list of a registry version's relations, built once for
/// every transaction that reads that version (sessions' catalogs share it).
pub(super) type SharedDefinitions = OnceLock<RelationList>;

/// The registry at one version.
struct KeptRegistry {
    version: u64,
    registry: Registry,
    definitions: Arc<SharedDefinitions>,
}

/// The relation registry as last loaded or committed, with its version.
/// Transactions that see the same version share it instead of scanning and
/// decoding the registry again.
#[derive(Default)]
pub(super) struct RegistryCache {
    latest: Mutex<Option<KeptRegistry>>,
}

impl RegistryCache {
    /// The kept registry and its shared list when it is at `version`.
    pub(super) fn at(&self, version: u64) -> Option<(Registry, Arc<SharedDefinitions>)> {
        match &*self.latest() {
            Some(kept) if kept.version == version => {
                Some((kept.registry.clone(), kept.definitions.clone()))
            }
            _ => None,
        }
    }

    /// Keeps `registry` as the registry at `version`, unless it keeps that
    /// version or a newer one; the list of the relations at `version` to
    /// share (unshared for an older version).
    pub(super) fn publish(&self, version: u64, registry: Registry) -> Arc<SharedDefinitions> {
        let mut latest = self.latest();
        match &*latest {
            // One version, one registry: its list is shared.
            Some(kept) if kept.version == version => kept.definitions.clone(),
            Some(kept) if kept.version > version => Arc::default(),
            _ => {
                let definitions: Arc<SharedDefinitions> = Arc::default();
                *latest = Some(KeptRegistry {
                    version,
                    registry,
                    definitions: definitions.clone(),
                });
                definitions
            }
        }
    }

    /// The kept registry, locked; dropped (loaded again) after a panic while
    /// it was locked.
    fn latest(&self) -> std::sync::MutexGuard<'_, Option<KeptRegistry>> {
        self.latest.lock().unwrap_or_else(|poisoned| {
            let mut latest = poisoned.into_inner();
            *latest = None;
            self.latest.clear_poison();
            latest
        })
    }
}
