//! Indexes of a catalog's relation list, by object oid and by name: built
//! once per catalog version on first use and shared by every transaction
//! and session at that version. A version whose list extends the list of
//! the version before (a `CREATE TABLE` adds the newest relation at the
//! end) extends that version's indexes instead of building them again, so
//! the first statement after a DDL does not pay for the whole catalog.

use std::hash::{BuildHasher, Hash};
use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::{FxBuildHasher, FxHashMap};

use super::Catalog;
use crate::storage::{RelationDef, RelationList};

/// Indexes of a catalog's relation list.
#[derive(Default)]
pub struct RelationIndexes {
    built: OnceLock<Built>,
    /// An earlier version's list and indexes, to extend when this version's
    /// list starts with the same relations (taken on first use).
    base: Mutex<Option<(RelationList, Arc<RelationIndexes>)>>,
}

impl std::fmt::Debug for RelationIndexes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelationIndexes")
            .field("built", &self.built.get().is_some())
            .finish()
    }
}

impl RelationIndexes {
    /// Indexes for a list that may extend `list`, whose indexes are
    /// `indexes`: extended from them on first use when they were built (and
    /// the list does extend it), otherwise built.
    pub fn following(list: RelationList, indexes: Arc<RelationIndexes>) -> RelationIndexes {
        let base = indexes.built.get().is_some().then_some((list, indexes));
        RelationIndexes {
            built: OnceLock::new(),
            base: Mutex::new(base),
        }
    }

    fn get(&self, relations: &[Arc<RelationDef>]) -> &Built {
        self.built.get_or_init(|| {
            let base = self.base.lock().unwrap_or_else(|e| e.into_inner()).take();
            let extended = base.and_then(|(list, indexes)| {
                let kept = list.len();
                let prefix = relations.get(..kept)?;
                let same = prefix
                    .iter()
                    .zip(list.iter())
                    .all(|(a, b)| Arc::ptr_eq(a, b));
                same.then(|| (indexes.built.get().cloned(), kept))
            });
            let (mut built, from) = match extended {
                Some((Some(built), kept)) => (built, kept),
                _ => (Built::default(), 0),
            };
            for (position, def) in relations.iter().enumerate().skip(from) {
                built.add(position as u32, def);
            }
            built
        })
    }
}

/// The indexes themselves: positions in the relation list.
#[derive(Clone, Default)]
struct Built {
    /// By the oid of each object a relation owns (the table, its row type,
    /// its primary key and the key's index).
    objects: Positions<u32>,
    /// By a hash of the relation's name and of its primary key index's
    /// name (callers compare the names).
    names: Positions<u64>,
}

impl Built {
    fn add(&mut self, position: u32, def: &RelationDef) {
        self.objects.add(Catalog::rel_oid(def), position);
        self.objects.add(Catalog::rowtype_oid(def), position);
        self.names.add(name_hash(&def.name), position);
        if !def.primary_key.is_empty() {
            self.objects.add(Catalog::pkey_oid(def), position);
            self.objects.add(Catalog::pkey_index_oid(def), position);
            self.names.add(name_hash(&def.primary_key_name()), position);
        }
    }
}

fn name_hash(name: &str) -> u64 {
    FxBuildHasher.hash_one(name)
}

/// Positions by key without an allocation per key: the first position of
/// each key, and the rare further ones (stable oids that collide, a table
/// named as another's primary key index) apart.
#[derive(Clone)]
struct Positions<K> {
    first: FxHashMap<K, u32>,
    more: FxHashMap<K, Vec<u32>>,
}

impl<K> Default for Positions<K> {
    fn default() -> Self {
        Positions {
            first: FxHashMap::default(),
            more: FxHashMap::default(),
        }
    }
}

impl<K: Hash + Eq + Copy> Positions<K> {
    fn add(&mut self, key: K, position: u32) {
        match self.first.entry(key) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(position);
            }
            std::collections::hash_map::Entry::Occupied(slot) if *slot.get() != position => {
                let more = self.more.entry(key).or_default();
                if !more.contains(&position) {
                    more.push(position);
                }
            }
            std::collections::hash_map::Entry::Occupied(_) => {}
        }
    }

    fn get(&self, key: &K) -> impl Iterator<Item = usize> + '_ {
        let first = self.first.get(key).into_iter();
        let more = self.more.get(key).into_iter().flatten();
        first.chain(more).map(|&position| position as usize)
    }
}

/// What an oid of a stored relation's objects names (by relation index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OidTarget {
    /// The table.
    Table(usize),
    /// Its primary key's index.
    PrimaryKeyIndex(usize),
    /// Its primary key constraint.
    PrimaryKey(usize),
}

impl Catalog {
    /// The stored relation's object with this oid.
    pub fn by_oid(&self, oid: u32) -> Option<(OidTarget, &RelationDef)> {
        self.owners_of(oid).find_map(|i| {
            let def = &*self.relations[i];
            let keyed = !def.primary_key.is_empty();
            let target = if Self::rel_oid(def) == oid {
                OidTarget::Table(i)
            } else if keyed && Self::pkey_index_oid(def) == oid {
                OidTarget::PrimaryKeyIndex(i)
            } else if keyed && Self::pkey_oid(def) == oid {
                OidTarget::PrimaryKey(i)
            } else {
                return None;
            };
            Some((target, def))
        })
    }

    /// The positions in [`Catalog::relations`] of the relations owning an
    /// object with this oid (more than one only when stable oids collide).
    pub fn owners_of(&self, oid: u32) -> impl Iterator<Item = usize> + '_ {
        self.indexes.get(&self.relations).objects.get(&oid)
    }

    /// The positions in [`Catalog::relations`] of the relations that may be
    /// named `name` or whose primary key's index may be (in any schema; the
    /// caller compares the names).
    pub fn named(&self, name: &str) -> impl Iterator<Item = usize> + '_ {
        self.indexes
            .get(&self.relations)
            .names
            .get(&name_hash(name))
    }

    /// The relation `schema.name`.
    pub fn find(&self, schema: &str, name: &str) -> Option<&RelationDef> {
        self.named(name)
            .map(|i| &*self.relations[i])
            .find(|r| r.schema == schema && r.name == name)
    }

    /// A relation named without a schema: PostgreSQL's search path puts the
    /// session's temporary schema first, then `public`.
    pub fn find_in_path(&self, name: &str) -> Option<&RelationDef> {
        self.find(crate::storage::route::TEMP_SCHEMA, name)
            .or_else(|| self.find("public", name))
    }

    /// `schema.name`, or `name` on the search path when no schema is given.
    pub fn find_opt(&self, schema: Option<&str>, name: &str) -> Option<&RelationDef> {
        match schema {
            Some(s) => self.find(s, name),
            None => self.find_in_path(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rocklake_types::datum::{ColumnDef, PgType};

    use super::*;

    fn relation(schema: &str, name: &str, key: bool) -> Arc<RelationDef> {
        Arc::new(RelationDef::new(
            schema,
            name,
            vec![ColumnDef::new("id", PgType::Int8)],
            if key { vec![0] } else { Vec::new() },
        ))
    }

    fn catalog(relations: Vec<Arc<RelationDef>>, indexes: RelationIndexes) -> Catalog {
        Catalog {
            relations: Arc::new(relations),
            indexes: Arc::new(indexes),
            ..Catalog::default()
        }
    }

    /// What the indexes answer for every name and oid of `relations`.
    fn answers(cat: &Catalog, relations: &[Arc<RelationDef>]) -> Vec<String> {
        let mut out = Vec::new();
        for def in relations {
            for oid in [
                Catalog::rel_oid(def),
                Catalog::rowtype_oid(def),
                Catalog::pkey_oid(def),
                Catalog::pkey_index_oid(def),
            ] {
                let owners: Vec<usize> = cat.owners_of(oid).collect();
                out.push(format!(
                    "{oid}: {owners:?} {:?}",
                    cat.by_oid(oid).map(|t| t.0)
                ));
            }
            for name in [def.name.clone(), def.primary_key_name()] {
                out.push(format!(
                    "{name}: {:?}",
                    cat.find(&def.schema, &name).map(|d| d as *const _)
                ));
                out.push(format!(
                    "{name}: {:?}",
                    cat.find_in_path(&name).map(|d| d as *const _)
                ));
            }
        }
        out
    }

    /// A list of relations named from a small alphabet, so names repeat
    /// across schemas and collide with primary key index names.
    fn relations() -> impl Strategy<Value = Vec<Arc<RelationDef>>> {
        prop::collection::vec(
            (
                prop::sample::select(vec!["public", "lake", "pg_temp"]),
                prop::sample::select(vec!["a", "b", "a_pkey", "t"]),
                any::<bool>(),
            ),
            0..12,
        )
        .prop_map(|items| {
            items
                .into_iter()
                .map(|(schema, name, key)| relation(schema, name, key))
                .collect()
        })
    }

    proptest! {
        /// Indexes extended from an earlier version's (whether or not its
        /// list is a prefix of this one's) answer as indexes built anew.
        #[test]
        fn extended_indexes_answer_as_built_ones(
            base in relations(),
            added in relations(),
            keep in 0usize..14,
        ) {
            let earlier = catalog(base.clone(), RelationIndexes::default());
            let _ = earlier.find("public", "a");
            // The new list keeps a prefix of the earlier one (all of it when
            // `keep` is large: a CREATE) and adds relations.
            let mut list: Vec<Arc<RelationDef>> = base.iter().take(keep).cloned().collect();
            list.extend(added);
            let following = RelationIndexes::following(earlier.relations.clone(), earlier.indexes.clone());
            let extended = catalog(list.clone(), following);
            let built = catalog(list.clone(), RelationIndexes::default());
            prop_assert_eq!(answers(&extended, &list), answers(&built, &list));
        }
    }

    #[test]
    fn a_list_that_extends_the_earlier_one_reuses_its_indexes() {
        let base = vec![
            relation("public", "a", true),
            relation("public", "b", false),
        ];
        let earlier = catalog(base.clone(), RelationIndexes::default());
        assert!(earlier.find("public", "b").is_some());
        let mut list = base;
        list.push(relation("public", "c", false));
        let later = catalog(
            list,
            RelationIndexes::following(earlier.relations.clone(), earlier.indexes.clone()),
        );
        assert_eq!(
            later.find("public", "c").map(|d| d.name.as_str()),
            Some("c")
        );
        assert_eq!(later.named("a_pkey").collect::<Vec<_>>(), vec![0]);
        assert!(later.indexes.base.lock().unwrap().is_none(), "base taken");
    }

    #[test]
    fn unbuilt_earlier_indexes_are_not_kept() {
        let earlier = catalog(
            vec![relation("public", "a", false)],
            RelationIndexes::default(),
        );
        let following =
            RelationIndexes::following(earlier.relations.clone(), earlier.indexes.clone());
        assert!(following.base.lock().unwrap().is_none());
    }
}
