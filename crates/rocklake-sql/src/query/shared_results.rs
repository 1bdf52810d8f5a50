//! [`CatalogResults`]: results of queries over the virtual `pg_catalog` and
//! `information_schema` tables, kept for one catalog version and shared by
//! the sessions of a server.
//!
//! DuckDB's `postgres_scanner` sends the same catalog query (a join of
//! `pg_class`, `pg_namespace`, `pg_attribute`, `pg_type`, `pg_description` and
//! `pg_constraint`) every time a DuckDB attaches the catalog and when it looks
//! up a table. The virtual tables are derived from the relation and schema
//! lists (and the database name) alone, so while the catalog version (the
//! registry version) stays the same, the same statement gives the same rows:
//! a new DuckDB connection gets them without computing the join again. A
//! newer version replaces what was kept; transactions at an older version (or
//! whose own DDL or temporary tables changed their catalog) compute theirs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rocklake_types::datum::ColumnDef;

use crate::catalog::RelationIndexes;
use crate::plan::{ScanReq, ScanSource};
use crate::storage::RelationList;
use rocklake_types::rows::ResultRows;

/// Results kept at most.
const MAX_RESULTS: usize = 64;
/// Rows of a result kept at most.
const MAX_ROWS: usize = 10_000;

/// Results of catalog queries by database and statement text, for the
/// newest catalog version seen.
#[derive(Default)]
pub struct CatalogResults {
    kept: Mutex<Kept>,
    /// The newest lists seen of each database (by name).
    lists: Mutex<HashMap<String, CatalogLists>>,
}

/// The relation and schema lists of one catalog version of a database, with
/// their indexes (built on first use). Sessions keep the lists of the version
/// they last read, and a server's sessions share the newest: a new session
/// (DuckDB opens several per ATTACH) takes them instead of loading the lists
/// and indexing thousands of relations again.
#[derive(Clone)]
pub struct CatalogLists {
    /// The storage's catalog version (see `StorageTxn::catalog_version`).
    pub version: u64,
    /// Every relation.
    pub relations: RelationList,
    /// Every schema name.
    pub schemas: Arc<Vec<String>>,
    /// Indexes of `relations`.
    pub indexes: Arc<RelationIndexes>,
}

#[derive(Default)]
struct Kept {
    version: u64,
    by_statement: HashMap<(String, String), (Vec<ColumnDef>, ResultRows)>,
}

/// Whether a statement's result depends only on the catalog lists: it reads
/// at least one virtual table, only virtual tables derived from the
/// relations and schemas (not `pg_settings`, which `SET` changes, nor
/// `pg_stat_activity`: see
/// [`crate::catalog::VirtualTable::is_live`]), and not
/// the transaction's time.
pub fn derives_from_catalog(scans: &[ScanReq], reads_time: bool) -> bool {
    !reads_time
        && !scans.is_empty()
        && scans.iter().all(|scan| match &scan.source {
            ScanSource::Virtual(table) => !table.is_live(),
            ScanSource::Table(_) | ScanSource::DatabaseSize | ScanSource::RelationSizes => false,
        })
}

/// Where a result belongs: the catalog version it was computed at, the
/// database the session is connected to, and the statement text.
pub struct ResultKey {
    /// Catalog version of the transaction's catalog.
    pub version: u64,
    /// Database name (`current_database()`, `pg_database`).
    pub database: String,
    /// The statement, as text.
    pub statement: String,
}

impl CatalogResults {
    /// The kept results, locked; dropped after a panic while they were locked.
    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|poisoned| {
            let mut kept = poisoned.into_inner();
            *kept = Kept::default();
            self.kept.clear_poison();
            kept
        })
    }

    /// The result kept for `key`, if any.
    pub fn get(&self, key: &ResultKey) -> Option<(Vec<ColumnDef>, ResultRows)> {
        let kept = self.kept();
        if kept.version != key.version {
            return None;
        }
        kept.by_statement
            .get(&(key.database.clone(), key.statement.clone()))
            .cloned()
    }

    /// The newest lists kept of `database`, whatever their version (a
    /// session that needs another version's lists extends their indexes).
    pub fn lists(&self, database: &str) -> Option<CatalogLists> {
        let lists = self.lists.lock().unwrap_or_else(|e| e.into_inner());
        lists.get(database).cloned()
    }

    /// Keeps `lists` of `database` unless newer ones are kept (lists of the
    /// same version replace the kept ones: they hold the same relations).
    pub fn keep_lists(&self, database: &str, lists: CatalogLists) {
        let mut kept = self.lists.lock().unwrap_or_else(|e| e.into_inner());
        match kept.get_mut(database) {
            Some(newer) if newer.version > lists.version => {}
            Some(kept) => *kept = lists,
            None => {
                kept.insert(database.to_string(), lists);
            }
        }
    }

    /// Keeps a result computed at `key.version`, unless it is large, many
    /// are kept already, or a newer version is kept.
    pub fn put(&self, key: ResultKey, columns: &[ColumnDef], rows: &ResultRows) {
        let mut kept = self.kept();
        if key.version > kept.version {
            kept.version = key.version;
            kept.by_statement.clear();
        }
        if key.version == kept.version
            && rows.len() <= MAX_ROWS
            && kept.by_statement.len() < MAX_RESULTS
        {
            kept.by_statement.insert(
                (key.database, key.statement),
                (columns.to_vec(), rows.clone()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::VirtualTable;
    use crate::storage::{RelationDef, ScanFilter};
    use rocklake_types::datum::{Datum, PgType};

    fn scan(source: ScanSource) -> ScanReq {
        ScanReq {
            source,
            filter: ScanFilter::default(),
            keyed_by: Vec::new(),
            reads_ctid: false,
            looked_up: false,
            columns: None,
        }
    }

    #[test]
    fn only_catalog_derived_statements_are_kept() {
        let class = scan(ScanSource::Virtual(VirtualTable::Class));
        let settings = scan(ScanSource::Virtual(VirtualTable::Settings));
        let sessions = scan(ScanSource::Virtual(VirtualTable::StatActivity));
        assert!(!derives_from_catalog(
            std::slice::from_ref(&sessions),
            false
        ));
        let table = scan(ScanSource::Table(RelationDef::new(
            "public",
            "t",
            Vec::new(),
            Vec::new(),
        )));
        assert!(derives_from_catalog(std::slice::from_ref(&class), false));
        assert!(!derives_from_catalog(std::slice::from_ref(&class), true));
        assert!(!derives_from_catalog(&[], false));
        assert!(!derives_from_catalog(&[class.clone(), settings], false));
        assert!(!derives_from_catalog(&[class, table], false));
    }

    fn key(version: u64, database: &str, statement: &str) -> ResultKey {
        ResultKey {
            version,
            database: database.into(),
            statement: statement.into(),
        }
    }

    #[test]
    fn results_are_kept_per_version_and_database_and_large_ones_not_at_all() {
        let results = CatalogResults::default();
        let columns = vec![ColumnDef::new("n", PgType::Int8)];
        let small = ResultRows::Owned(vec![vec![Datum::Int8(1)]]);
        let large = ResultRows::Owned(vec![vec![Datum::Int8(1)]; MAX_ROWS + 1]);
        results.put(key(3, "lake", "small"), &columns, &small);
        results.put(key(3, "lake", "large"), &columns, &large);
        assert_eq!(
            results.get(&key(3, "lake", "small")),
            Some((columns.clone(), small.clone()))
        );
        assert!(results.get(&key(3, "lake", "large")).is_none());
        assert!(results.get(&key(3, "other", "small")).is_none());
        assert!(results.get(&key(2, "lake", "small")).is_none());

        // An older version does not displace the newer one; a newer one does.
        results.put(key(2, "lake", "old"), &columns, &small);
        assert!(results.get(&key(2, "lake", "old")).is_none());
        assert!(results.get(&key(3, "lake", "small")).is_some());
        results.put(key(4, "lake", "new"), &columns, &small);
        assert!(results.get(&key(3, "lake", "small")).is_none());
        assert!(results.get(&key(4, "lake", "new")).is_some());
    }
}
