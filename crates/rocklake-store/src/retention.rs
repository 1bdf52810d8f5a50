//! Snapshot retention: the `retain-from` floor and excision.
//!
//! Giving history up is two separate steps, as the key design asks:
//!
//! 1. [`CatalogStore::retain_from`] advances the floor kept under the system
//!    key `retain-from`. Nothing is deleted: snapshots below the floor merely
//!    stop being readable. A query that pins one (`AT (VERSION => n)`) fails
//!    with SQLSTATE 72000 ("snapshot too old"), and listings such as
//!    `ducklake_snapshots()` start at the floor. The floor only moves forward
//!    and never past the latest snapshot.
//! 2. [`CatalogStore::excise`] physically deletes what no snapshot at or above
//!    the floor can see, exactly what DuckLake's own `expire_snapshots` removes:
//!    the snapshot rows below the floor and their change records; every
//!    versioned row (tables, columns, views, macros, tags, partitioning,
//!    sorting, data and delete files, inlined rows) whose `end_snapshot` is at
//!    or below the floor; and the rows that hang off what was removed (file
//!    statistics and partition values of removed data files, the delete files
//!    and inlined deletions of removed data files, macro implementations and
//!    parameters, partition columns, sort expressions). Removed data and
//!    delete files go to `ducklake_files_scheduled_for_deletion`, so DuckLake's
//!    `ducklake_cleanup_old_files` deletes the Parquet files later, as after
//!    its own expiry. Every excision is logged with its counts per table.
//!
//! Both run as one catalog transaction each; a concurrent DuckDB commit either
//! comes before or conflicts and retries.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rocklake_codec::keys::SystemKey;
use rocklake_codec::relations::{Relation, RowLayout};
use rocklake_codec::tables::SnapshotColumns;
use rocklake_codec::tags::Tag;
use rocklake_types::datum::{timestamptz_micros, Datum};

use crate::error::{ObjectKind, StoreError, StoreResult};
use crate::reader::KeyedRow;
use crate::store::CatalogStore;
use crate::txn::WriteTxn;

/// Which snapshots to keep, as given to `rocklake gc --retain-from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetainSpec {
    /// Keep this snapshot id and every later one.
    Snapshot(u64),
    /// Keep every snapshot a reader could still ask for by a timestamp no
    /// older than this: the one current at `now - age`, and every later one.
    Age(Duration),
}

impl FromStr for RetainSpec {
    type Err = String;

    /// A bare number is a snapshot id; a number with a unit (`s`, `m`, `h`,
    /// `d`, `w`, e.g. `7d`, `12h`) is an age.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if let Ok(id) = text.parse::<u64>() {
            return Ok(RetainSpec::Snapshot(id));
        }
        let split = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let seconds_per_unit = match unit.trim() {
            "s" | "sec" | "second" | "seconds" => 1,
            "m" | "min" | "minute" | "minutes" => 60,
            "h" | "hour" | "hours" => 3_600,
            "d" | "day" | "days" => 86_400,
            "w" | "week" | "weeks" => 604_800,
            _ => return Err(bad_spec(text)),
        };
        let count: u64 = number.parse().map_err(|_| bad_spec(text))?;
        let seconds = count
            .checked_mul(seconds_per_unit)
            .ok_or_else(|| bad_spec(text))?;
        Ok(RetainSpec::Age(Duration::from_secs(seconds)))
    }
}

fn bad_spec(text: &str) -> String {
    format!(
        "invalid retention \"{text}\": expected a snapshot id (e.g. 42) or an age (e.g. 30m, 12h, 7d)"
    )
}

/// What [`CatalogStore::retain_from`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetainOutcome {
    /// The floor before the call (0: nothing given up yet).
    pub previous: u64,
    /// The floor now.
    pub floor: u64,
    /// The latest snapshot.
    pub latest: u64,
}

/// What [`CatalogStore::excise`] deleted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExciseReport {
    /// The floor excised up to.
    pub floor: u64,
    /// Rows deleted, by catalog table name (tables with none are left out).
    pub removed: BTreeMap<String, u64>,
    /// Data and delete files scheduled for deletion.
    pub scheduled_files: u64,
}

impl ExciseReport {
    /// Rows deleted, in all tables.
    pub fn rows(&self) -> u64 {
        self.removed.values().sum()
    }
}

impl CatalogStore {
    /// Advances the retention floor to what `spec` asks for, as of `now`. The
    /// floor never moves back (a smaller request leaves it where it is) and
    /// never past the latest snapshot (asking for a later snapshot id is an
    /// error).
    pub async fn retain_from(
        &self,
        spec: RetainSpec,
        now: SystemTime,
    ) -> StoreResult<RetainOutcome> {
        let mut txn = self.write()?;
        let previous = txn.view().retain_from().await?;
        let snapshots = snapshot_relation(&txn).await?;
        let rows = txn.view().rows(&snapshots, &[]).await?;
        let latest = rows
            .iter()
            .filter_map(|r| snapshot_id(&r.row))
            .max()
            .ok_or_else(|| {
                StoreError::InvalidRequest("the catalog has no snapshots to retain".to_string())
            })?;
        let wanted = match spec {
            RetainSpec::Snapshot(id) if id > latest => {
                return Err(StoreError::InvalidRequest(format!(
                    "cannot retain from snapshot {id}: the latest snapshot is {latest}"
                )));
            }
            RetainSpec::Snapshot(id) => id,
            RetainSpec::Age(age) => {
                let cutoff = timestamptz_micros(now.checked_sub(age).unwrap_or(UNIX_EPOCH));
                rows.iter()
                    .filter(|r| {
                        matches!(r.row.get(SnapshotColumns::get().snapshot_time), Some(Datum::TimestampTz(t)) if *t <= cutoff)
                    })
                    .filter_map(|r| snapshot_id(&r.row))
                    .max()
                    .unwrap_or(0)
            }
        };
        // A tagged snapshot stays readable: the floor stops at the oldest.
        let tags = crate::snapshot_tags::tags_in(&txn.view()).await?;
        let held = tags.iter().min_by_key(|t| t.snapshot);
        let wanted = match held {
            Some(tag) if tag.snapshot < wanted => {
                tracing::info!(tag = %tag.name, snapshot = tag.snapshot, wanted, "the retention floor stops at a tagged snapshot");
                tag.snapshot
            }
            _ => wanted,
        };
        let floor = previous.max(wanted);
        if floor > previous {
            txn.put(&SystemKey::RetainFrom.key(), &floor.to_be_bytes())?;
            txn.commit().await?;
            tracing::info!(previous, floor, latest, "retention floor advanced");
        }
        Ok(RetainOutcome {
            previous,
            floor,
            latest,
        })
    }

    /// Deletes every catalog row no snapshot at or above the retention floor
    /// can see (see the module documentation), in one transaction, and
    /// schedules the removed files for deletion. With no floor set, deletes
    /// nothing.
    pub async fn excise(&self, now: SystemTime) -> StoreResult<ExciseReport> {
        let mut txn = self.write()?;
        let floor = txn.view().retain_from().await?;
        let mut report = ExciseReport {
            floor,
            ..ExciseReport::default()
        };
        if floor == 0 {
            return Ok(report);
        }
        let catalog = catalog_relations(&txn.view().relations().await?);
        let mut excision = Excision {
            txn: &mut txn,
            catalog,
            report: &mut report,
        };
        excision.run(floor, timestamptz_micros(now)).await?;
        txn.commit().await?;
        for (table, count) in &report.removed {
            tracing::info!(table = %table, rows = count, floor, "excised");
        }
        tracing::warn!(
            floor,
            rows = report.rows(),
            files_scheduled = report.scheduled_files,
            "excision committed: history before snapshot {floor} is gone"
        );
        Ok(report)
    }
}

/// The catalog's relations by DuckLake table name (inlined tables by their
/// generated names).
fn catalog_relations(relations: &[Relation]) -> HashMap<String, Relation> {
    relations
        .iter()
        .filter(|r| !matches!(r.layout(), RowLayout::Generic { .. }))
        .map(|r| (r.name.clone(), r.clone()))
        .collect()
}

async fn snapshot_relation(txn: &WriteTxn) -> StoreResult<Relation> {
    txn.view()
        .relations()
        .await?
        .into_iter()
        .find(|r| matches!(r.layout(), RowLayout::Catalog(t) if t.table.tag == Tag::Snapshot))
        .ok_or_else(|| StoreError::NotFound {
            kind: ObjectKind::CatalogTable,
            name: "ducklake_snapshot".to_string(),
        })
}

fn snapshot_id(row: &[Datum]) -> Option<u64> {
    row.get(SnapshotColumns::get().snapshot_id)
        .and_then(Datum::as_i64)
        .and_then(|v| u64::try_from(v).ok())
}

fn int_at(row: &[Datum], index: usize) -> Option<i64> {
    row.get(index).and_then(Datum::as_i64)
}

/// One excision pass inside one write transaction.
struct Excision<'a> {
    txn: &'a mut WriteTxn,
    catalog: HashMap<String, Relation>,
    report: &'a mut ExciseReport,
}

/// Child tables whose rows go with a removed parent id, as
/// (parent table, id column, [child tables]); a child row goes only when no
/// row of the parent with that id remains.
const CHILDREN: &[(&str, &str, &[&str])] = &[
    (
        "ducklake_macro",
        "macro_id",
        &["ducklake_macro_impl", "ducklake_macro_parameters"],
    ),
    (
        "ducklake_partition_info",
        "partition_id",
        &["ducklake_partition_column"],
    ),
    (
        "ducklake_sort_info",
        "sort_id",
        &["ducklake_sort_expression"],
    ),
    (
        "ducklake_data_file",
        "data_file_id",
        &[
            "ducklake_file_column_stats",
            "ducklake_file_partition_value",
            "ducklake_file_variant_stats",
            "ducklake_delete_file",
        ],
    ),
];

impl Excision<'_> {
    async fn run(&mut self, floor: u64, now_micros: i64) -> StoreResult<()> {
        let paths = self.file_path_prefixes().await?;
        let floor_i64 = i64::try_from(floor).unwrap_or(i64::MAX);
        // Snapshots and their change records below the floor.
        for name in ["ducklake_snapshot", "ducklake_snapshot_changes"] {
            self.remove_where(name, "snapshot_id", |id| id < floor_i64)
                .await?;
        }
        // Versioned rows that ended at or before the floor, in every catalog
        // and inlined-data table.
        let mut removed_ids: HashMap<&str, HashSet<i64>> = HashMap::new();
        let mut scheduled: Vec<(i64, String, bool)> = Vec::new();
        let mut names: Vec<String> = self.catalog.keys().cloned().collect();
        names.sort();
        for name in &names {
            let removed = self
                .remove_where(name, "end_snapshot", |end| end <= floor_i64)
                .await?;
            self.note_removed(name, &removed, &paths, &mut removed_ids, &mut scheduled);
        }
        // Rows hanging off removed parents.
        for (parent, id_column, children) in CHILDREN {
            let Some(ids) = removed_ids.get(parent).cloned() else {
                continue;
            };
            let surviving = self.ids_in(parent, id_column).await?;
            let gone: HashSet<i64> = ids.difference(&surviving).copied().collect();
            if gone.is_empty() {
                continue;
            }
            for child in *children {
                let removed = self
                    .remove_where(child, id_column, |id| gone.contains(&id))
                    .await?;
                self.note_removed(child, &removed, &paths, &mut removed_ids, &mut scheduled);
            }
            if *parent == "ducklake_data_file" {
                self.remove_inlined_deletions(&gone).await?;
            }
        }
        self.schedule(scheduled, now_micros).await
    }

    /// Records the ids of removed rows of parent tables and the files of
    /// removed data and delete file rows.
    fn note_removed(
        &self,
        name: &str,
        removed: &[KeyedRow],
        paths: &FilePaths,
        removed_ids: &mut HashMap<&'static str, HashSet<i64>>,
        scheduled: &mut Vec<(i64, String, bool)>,
    ) {
        let Some(relation) = self.catalog.get(name) else {
            return;
        };
        if let Some((parent, id_column, _)) = CHILDREN.iter().find(|(p, _, _)| *p == name) {
            if let Some(i) = relation.column_index(id_column) {
                removed_ids
                    .entry(*parent)
                    .or_default()
                    .extend(removed.iter().filter_map(|r| int_at(&r.row, i)));
            }
        }
        let id_column = match name {
            "ducklake_data_file" => "data_file_id",
            "ducklake_delete_file" => "delete_file_id",
            _ => return,
        };
        let (Some(id), Some(table), Some(path), Some(relative)) = (
            relation.column_index(id_column),
            relation.column_index("table_id"),
            relation.column_index("path"),
            relation.column_index("path_is_relative"),
        ) else {
            return;
        };
        for row in removed {
            let (Some(file_id), Some(Datum::Text(file))) =
                (int_at(&row.row, id), row.row.get(path))
            else {
                continue;
            };
            let is_relative = matches!(row.row.get(relative), Some(Datum::Bool(true)));
            let table_id = int_at(&row.row, table).unwrap_or(-1);
            scheduled.push(paths.resolve(table_id, file, is_relative, file_id));
        }
    }

    /// Deletes the rows of `name` whose integer column `column` holds a value
    /// for which `doomed` holds (rows where it is NULL stay); returns them.
    async fn remove_where(
        &mut self,
        name: &str,
        column: &str,
        doomed: impl Fn(i64) -> bool,
    ) -> StoreResult<Vec<KeyedRow>> {
        let Some(relation) = self.catalog.get(name) else {
            return Ok(Vec::new());
        };
        let Some(index) = relation.role_column(column) else {
            return Ok(Vec::new());
        };
        let removed: Vec<KeyedRow> = self
            .txn
            .view()
            .rows(relation, &[])
            .await?
            .into_iter()
            .filter(|r| int_at(&r.row, index).is_some_and(&doomed))
            .collect();
        for row in &removed {
            self.txn.delete(&row.key)?;
        }
        if !removed.is_empty() {
            *self.report.removed.entry(name.to_string()).or_default() += removed.len() as u64;
        }
        Ok(removed)
    }

    /// Ids in `column` of the rows of `name` left in this transaction.
    async fn ids_in(&self, name: &str, id_column: &str) -> StoreResult<HashSet<i64>> {
        let Some(relation) = self.catalog.get(name) else {
            return Ok(HashSet::new());
        };
        let Some(index) = relation.role_column(id_column) else {
            return Ok(HashSet::new());
        };
        Ok(self
            .txn
            .view()
            .rows(relation, &[])
            .await?
            .iter()
            .filter_map(|r| int_at(&r.row, index))
            .collect())
    }

    /// Inlined deletions (`ducklake_inlined_delete_<T>`) of removed data files.
    async fn remove_inlined_deletions(&mut self, gone: &HashSet<i64>) -> StoreResult<()> {
        let names: Vec<String> = self
            .catalog
            .iter()
            .filter(|(_, r)| matches!(r.layout(), RowLayout::InlinedDelete { .. }))
            .map(|(name, _)| name.clone())
            .collect();
        for name in names {
            self.remove_where(&name, "file_id", |id| gone.contains(&id))
                .await?;
        }
        Ok(())
    }

    /// Adds the removed files to `ducklake_files_scheduled_for_deletion`.
    async fn schedule(
        &mut self,
        files: Vec<(i64, String, bool)>,
        now_micros: i64,
    ) -> StoreResult<()> {
        let Some(relation) = self
            .catalog
            .get("ducklake_files_scheduled_for_deletion")
            .cloned()
        else {
            return Ok(());
        };
        for (id, path, relative) in files {
            self.txn
                .insert(
                    &relation,
                    vec![
                        Datum::Int8(id),
                        Datum::text(path),
                        Datum::Bool(relative),
                        Datum::TimestampTz(now_micros),
                    ],
                )
                .await?;
            self.report.scheduled_files += 1;
        }
        Ok(())
    }

    /// Where each table's files live relative to the data path, read before
    /// anything is removed (a dropped table's rows go in the same pass).
    async fn file_path_prefixes(&self) -> StoreResult<FilePaths> {
        let mut schemas: HashMap<i64, (String, bool)> = HashMap::new();
        let mut tables: HashMap<i64, (i64, String, bool)> = HashMap::new();
        if let Some(relation) = self.catalog.get("ducklake_schema") {
            let columns =
                ["schema_id", "path", "path_is_relative"].map(|c| relation.column_index(c));
            if let [Some(id), Some(path), Some(relative)] = columns {
                for row in self.txn.view().rows(relation, &[]).await? {
                    if let (Some(schema_id), Some(Datum::Text(p))) =
                        (int_at(&row.row, id), row.row.get(path))
                    {
                        let is_relative =
                            !matches!(row.row.get(relative), Some(Datum::Bool(false)));
                        schemas.insert(schema_id, (p.to_string(), is_relative));
                    }
                }
            }
        }
        if let Some(relation) = self.catalog.get("ducklake_table") {
            let columns = ["table_id", "schema_id", "path", "path_is_relative"]
                .map(|c| relation.column_index(c));
            if let [Some(id), Some(schema), Some(path), Some(relative)] = columns {
                for row in self.txn.view().rows(relation, &[]).await? {
                    if let (Some(table_id), Some(schema_id), Some(Datum::Text(p))) = (
                        int_at(&row.row, id),
                        int_at(&row.row, schema),
                        row.row.get(path),
                    ) {
                        let is_relative =
                            !matches!(row.row.get(relative), Some(Datum::Bool(false)));
                        tables.insert(table_id, (schema_id, p.to_string(), is_relative));
                    }
                }
            }
        }
        Ok(FilePaths { schemas, tables })
    }
}

/// Schema and table paths, to turn a file path relative to its table into
/// one relative to the data path (or absolute), as DuckLake schedules them.
struct FilePaths {
    schemas: HashMap<i64, (String, bool)>,
    tables: HashMap<i64, (i64, String, bool)>,
}

impl FilePaths {
    /// `(file id, path, path is relative to the data path)`.
    fn resolve(
        &self,
        table_id: i64,
        file: &str,
        relative: bool,
        file_id: i64,
    ) -> (i64, String, bool) {
        if !relative {
            return (file_id, file.to_string(), false);
        }
        let Some((schema_id, table_path, table_relative)) = self.tables.get(&table_id) else {
            return (file_id, file.to_string(), true);
        };
        let table_file = format!("{table_path}{file}");
        if !table_relative {
            return (file_id, table_file, false);
        }
        match self.schemas.get(schema_id) {
            Some((schema_path, true)) => (file_id, format!("{schema_path}{table_file}"), true),
            Some((schema_path, false)) => (file_id, format!("{schema_path}{table_file}"), false),
            None => (file_id, table_file, true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        assert_eq!("42".parse(), Ok(RetainSpec::Snapshot(42)));
        assert_eq!(
            "7d".parse(),
            Ok(RetainSpec::Age(Duration::from_secs(7 * 86_400)))
        );
        assert_eq!(
            "12 hours".parse(),
            Ok(RetainSpec::Age(Duration::from_secs(12 * 3_600)))
        );
        assert_eq!(
            "30m".parse(),
            Ok(RetainSpec::Age(Duration::from_secs(1_800)))
        );
        assert!("-1".parse::<RetainSpec>().is_err());
        assert!("7 fortnights".parse::<RetainSpec>().is_err());
        assert!("d".parse::<RetainSpec>().is_err());
        assert!("99999999999999999999w".parse::<RetainSpec>().is_err());
    }

    #[test]
    fn relative_paths_resolve_through_table_and_schema() {
        let paths = FilePaths {
            schemas: HashMap::from([(0, ("main/".to_string(), true))]),
            tables: HashMap::from([
                (1, (0, "t/".to_string(), true)),
                (2, (0, "s3://b/elsewhere/".to_string(), false)),
            ]),
        };
        assert_eq!(
            paths.resolve(1, "f.parquet", true, 9),
            (9, "main/t/f.parquet".to_string(), true)
        );
        assert_eq!(
            paths.resolve(2, "f.parquet", true, 9),
            (9, "s3://b/elsewhere/f.parquet".to_string(), false)
        );
        assert_eq!(
            paths.resolve(1, "/abs/f.parquet", false, 9),
            (9, "/abs/f.parquet".to_string(), false)
        );
    }
}
