//! `DROP SCHEMA` of a schema created with `CREATE SCHEMA` (its relations
//! with it under `CASCADE`). `public` is not stored, so it is not dropped.

use rocklake_codec::tags::Tag;
use rocklake_codec::values::decode_namespace;

use super::relation_map::RelationMap;
use super::WriteTxn;
use crate::error::{ObjectKind, StoreError, StoreResult};

impl WriteTxn {
    /// Drops schema `name`: `Ok(false)` when it does not exist and
    /// `if_exists` is set; [`StoreError::DependentObjects`] when it holds
    /// relations and `cascade` is not set (with it, they go too).
    pub async fn drop_namespace(
        &mut self,
        kept: Option<&RelationMap>,
        name: &str,
        if_exists: bool,
        cascade: bool,
    ) -> StoreResult<bool> {
        if name == "public" {
            return Err(StoreError::Unsupported(
                "DROP SCHEMA public: RockLake keeps the public schema".to_string(),
            ));
        }
        let entries = self
            .view()
            .reads()
            .scan_prefix(&[Tag::Namespace.byte()])
            .await?;
        let mut key = None;
        for (entry_key, value) in entries {
            if decode_namespace(&entry_key, &value)? == name {
                key = Some(entry_key);
            }
        }
        let Some(key) = key else {
            if if_exists {
                return Ok(false);
            }
            return Err(StoreError::NotFound {
                kind: ObjectKind::Schema,
                name: name.to_string(),
            });
        };
        let mut relations = self.existing(kept).await?.names_in(name);
        relations.sort();
        if !relations.is_empty() && !cascade {
            return Err(StoreError::DependentObjects {
                schema: name.to_string(),
                relations,
            });
        }
        for relation in &relations {
            self.drop_relation_among(kept, name, relation, false)
                .await?;
        }
        self.remove(&key)?;
        self.registry_changed = true;
        Ok(true)
    }
}
