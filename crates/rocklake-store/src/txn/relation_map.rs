//! [`RelationMap`]: the relations of a registry version by name and by
//! where their rows live, in persistent maps, so a transaction that creates
//! or drops one relation shares every other entry with the registry it read
//! and checks a new relation against the others without a scan.

use std::sync::Arc;

use rocklake_codec::relations::Relation;
use rocklake_codec::tags::Tag;

/// Relations by (schema, name), and by row placement.
#[derive(Clone, Default)]
pub struct RelationMap {
    by_name: imbl::HashMap<(String, String), Arc<Relation>>,
    /// By the tag and prefix of their row keys: two relations found here
    /// would share rows.
    by_rows: imbl::HashMap<(Tag, Vec<u64>), Arc<Relation>>,
}

impl RelationMap {
    /// The map holding `relations`.
    pub fn of(relations: impl IntoIterator<Item = Relation>) -> RelationMap {
        let mut map = RelationMap::default();
        for relation in relations {
            map.insert(Arc::new(relation));
        }
        map
    }

    /// The relation `schema.name`.
    pub fn get(&self, schema: &str, name: &str) -> Option<&Arc<Relation>> {
        self.by_name.get(&(schema.to_string(), name.to_string()))
    }

    /// Adds (or replaces) `relation`.
    pub fn insert(&mut self, relation: Arc<Relation>) {
        self.by_rows.insert(relation.row_prefix(), relation.clone());
        let key = (relation.schema.clone(), relation.name.clone());
        self.by_name.insert(key, relation);
    }

    /// Removes the relation `schema.name`, returning it.
    pub fn remove(&mut self, schema: &str, name: &str) -> Option<Arc<Relation>> {
        let removed = self
            .by_name
            .remove(&(schema.to_string(), name.to_string()))?;
        let placement = removed.row_prefix();
        if self
            .by_rows
            .get(&placement)
            .is_some_and(|kept| kept.relation_id == removed.relation_id)
        {
            self.by_rows.remove(&placement);
        }
        Some(removed)
    }

    /// A relation other than the one with id `except` whose rows would be
    /// `relation`'s.
    pub fn sharing_rows_with(&self, relation: &Relation, except: Option<u64>) -> Option<&Relation> {
        self.by_rows
            .get(&relation.row_prefix())
            .filter(|kept| Some(kept.relation_id) != except)
            .map(|kept| kept.as_ref())
    }

    /// Every relation, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = &Arc<Relation>> {
        self.by_name.values()
    }
}
