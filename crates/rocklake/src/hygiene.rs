//! Catalog hygiene: the writer drops DuckLake's inlined-data tables that no
//! client can ever read again, on the retention schedule (see
//! docs/hygiene.md for the rule and where it comes from).
//!
//! DuckLake keeps rows inserted in small batches in tables of the metadata
//! schema, `ducklake_inlined_data_<table id>_<schema version>`, registered
//! in `ducklake_inlined_data_tables`, and deletes of Parquet rows in
//! `ducklake_inlined_delete_<table id>` (not registered). Its reader loads the
//! inlined tables of the tables alive at the snapshot it reads, and fails
//! when a registered table is missing: so a table goes together with its
//! registration, in one transaction. A DuckLake table none of whose
//! versions is alive at any snapshot still in `ducklake_snapshot` can never
//! be read again (its snapshots were expired by DuckLake, or excised by
//! RockLake's retention); its inlined tables are what DuckLake's own
//! `ducklake_expire_snapshots` drops since duckdb/ducklake#1145, and what
//! older DuckLake releases (and RockLake's excision) left behind. Inlined
//! tables of such tables, registered or not, are dropped; nothing of a table
//! alive at some readable snapshot is dropped.
//!
//! Inside the inlined tables that stay, rows no readable snapshot sees are
//! deleted by the rule DuckLake's own `ducklake_expire_snapshots` applies to
//! data files, schemas and views (no snapshot `s` with `begin_snapshot <= s
//! < end_snapshot` left); DuckLake itself leaves such inlined rows until a
//! flush. Deletes of Parquet rows kept inline (`ducklake_inlined_delete_*`)
//! go when their data file is no longer in `ducklake_data_file`.

use std::collections::BTreeSet;

use rocklake_sql::Session;
use rocklake_store::ServedRoot;

use crate::catalog_sql::{query, quote_ident, quote_literal, run, run_counting};

/// What one pass dropped in one lake.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HygieneReport {
    /// Inlined-data and inlined-delete tables dropped.
    pub dropped: Vec<String>,
    /// Rows deleted inside the inlined tables kept: (table, rows).
    pub dead_rows: Vec<(String, u64)>,
}

/// One pass over every lake of every database the server writes.
pub async fn run_pass(root: &ServedRoot) {
    for name in root.names() {
        let Some(database) = root.database(&name) else {
            continue;
        };
        let schemas = root.root().lake_schemas(&name).await.unwrap_or_default();
        let mut session = crate::catalog_sql::session(&name, &database);
        for schema in std::iter::once("public").chain(schemas.iter().map(String::as_str)) {
            match clean_lake(&mut session, schema).await {
                Ok(report) => {
                    for table in &report.dropped {
                        tracing::info!(database = %name, schema, table, "hygiene: dropped an inlined table no snapshot can read");
                    }
                    if !report.dropped.is_empty() {
                        rocklake_metrics::metrics().hygiene_dropped(report.dropped.len() as u64);
                    }
                    for (table, rows) in &report.dead_rows {
                        tracing::info!(database = %name, schema, table, rows, "hygiene: deleted inlined rows no snapshot can read");
                        rocklake_metrics::metrics().hygiene_deleted_rows(*rows);
                    }
                }
                Err(error) => {
                    tracing::warn!(database = %name, schema, %error, "hygiene pass failed");
                }
            }
        }
    }
}

/// Drops, in the lake of metadata schema `schema`, the inlined tables of
/// DuckLake tables that no readable snapshot sees.
pub async fn clean_lake(
    session: &mut Session,
    schema: &str,
) -> Result<HygieneReport, rocklake_types::SqlError> {
    let s = quote_ident(schema);
    let mut report = HygieneReport::default();
    // The snapshots still readable, in order; no DuckLake catalog in this
    // schema (yet): nothing to do.
    let Some(snapshots) = query(
        session,
        &format!("SELECT snapshot_id FROM {s}.ducklake_snapshot"),
    )
    .await
    .map(|rows| {
        let mut ids: Vec<i64> = rows.iter().filter_map(|row| cell(row, 0)).collect();
        ids.sort_unstable();
        ids
    }) else {
        return Ok(report);
    };
    // Table ids alive at some snapshot still readable (unknown: nothing is
    // judged dead).
    let Some(tables) = query(
        session,
        &format!("SELECT table_id, begin_snapshot, end_snapshot FROM {s}.ducklake_table"),
    )
    .await
    else {
        return Err(rocklake_types::SqlError::internal(
            "hygiene could not read ducklake_table",
        ));
    };
    let alive: BTreeSet<i64> = tables
        .iter()
        .filter_map(|row| Some((cell(row, 0)?, span_at(row, 1)?)))
        .filter(|&(_, (begin, end))| any_snapshot_in(&snapshots, begin, end))
        .map(|(id, _)| id)
        .collect();
    let registered = query(
        session,
        &format!("SELECT table_id, table_name FROM {s}.ducklake_inlined_data_tables"),
    )
    .await
    .unwrap_or_default();
    let existing = query(
        session,
        &format!(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = {} AND c.relkind = 'r' \
             AND (c.relname LIKE 'ducklake\\_inlined\\_data\\_%' \
                  OR c.relname LIKE 'ducklake\\_inlined\\_delete\\_%')",
            quote_literal(schema)
        ),
    )
    .await
    .unwrap_or_default();
    let existing: BTreeSet<String> = existing
        .into_iter()
        .filter_map(|row| row.into_iter().next().flatten())
        .collect();
    // Registered tables of dead table ids: the registration and the table
    // go together.
    for row in &registered {
        let (Some(id), Some(name)) = (
            row.first()
                .cloned()
                .flatten()
                .and_then(|v| v.parse::<i64>().ok()),
            row.get(1).cloned().flatten(),
        ) else {
            continue;
        };
        if alive.contains(&id) {
            continue;
        }
        let dropped = run(
            session,
            &format!(
                "BEGIN; DELETE FROM {s}.ducklake_inlined_data_tables WHERE table_id = {id} \
                 AND table_name = {}; DROP TABLE IF EXISTS {s}.{}; COMMIT",
                quote_literal(&name),
                quote_ident(&name)
            ),
        )
        .await;
        if let Err(error) = dropped {
            // End the block the failed step left open.
            let _ = session.execute("ROLLBACK").await;
            return Err(error);
        }
        if existing.contains(&name) {
            report.dropped.push(name);
        }
    }
    // Unregistered leftovers and inlined-delete tables of dead table ids.
    let still_registered: BTreeSet<String> = query(
        session,
        &format!("SELECT table_name FROM {s}.ducklake_inlined_data_tables"),
    )
    .await
    .unwrap_or_default()
    .into_iter()
    .filter_map(|row| row.into_iter().next().flatten())
    .collect();
    for name in &existing {
        if still_registered.contains(name) || report.dropped.contains(name) {
            continue;
        }
        let Some(id) = inlined_table_id(name) else {
            continue;
        };
        if alive.contains(&id) {
            continue;
        }
        run(
            session,
            &format!("DROP TABLE IF EXISTS {s}.{}", quote_ident(name)),
        )
        .await?;
        report.dropped.push(name.clone());
    }
    let kept: Vec<&String> = existing
        .iter()
        .filter(|name| !report.dropped.contains(name))
        .collect();
    report.dead_rows = delete_dead_rows(session, &s, &snapshots, &kept).await?;
    Ok(report)
}

/// Deletes, inside the inlined tables `tables` (of schema `s`, quoted),
/// the rows none of `snapshots` (the readable ones, in order) sees, and
/// inlined deletes of data files gone from `ducklake_data_file`.
async fn delete_dead_rows(
    session: &mut Session,
    s: &str,
    snapshots: &[i64],
    tables: &[&String],
) -> Result<Vec<(String, u64)>, rocklake_types::SqlError> {
    let mut deleted = Vec::new();
    for name in tables {
        let t = format!("{s}.{}", quote_ident(name));
        let rows = if name.starts_with("ducklake_inlined_delete_") {
            run_counting(
                session,
                &format!(
                    "DELETE FROM {t} WHERE file_id NOT IN \
                     (SELECT data_file_id FROM {s}.ducklake_data_file)"
                ),
            )
            .await?
        } else {
            // The (begin, end) spans of ended rows, judged against the
            // snapshots in memory: a correlated NOT EXISTS per row would
            // read every snapshot for every row.
            let ended = query(
                session,
                &format!(
                    "SELECT DISTINCT begin_snapshot, end_snapshot FROM {t} \
                     WHERE end_snapshot IS NOT NULL"
                ),
            )
            .await
            .unwrap_or_default();
            let dead: Vec<(i64, i64)> = ended
                .iter()
                .filter_map(|row| span_at(row, 0))
                .filter(|&(begin, end)| !any_snapshot_in(snapshots, begin, end))
                .collect();
            let mut rows = 0;
            for chunk in dead.chunks(200) {
                let spans = chunk
                    .iter()
                    .map(|(b, e)| format!("(begin_snapshot = {b} AND end_snapshot = {e})"))
                    .collect::<Vec<_>>()
                    .join(" OR ");
                rows += run_counting(session, &format!("DELETE FROM {t} WHERE {spans}")).await?;
            }
            rows
        };
        if rows > 0 {
            deleted.push(((*name).clone(), rows));
        }
    }
    Ok(deleted)
}

/// Cell `i` of a text row as an integer.
fn cell(row: &[Option<String>], i: usize) -> Option<i64> {
    row.get(i)?.as_deref()?.parse().ok()
}

/// The `[begin_snapshot, end_snapshot)` span in cells `at` and `at + 1`
/// of a text row, an open end (NULL) as `i64::MAX`.
fn span_at(row: &[Option<String>], at: usize) -> Option<(i64, i64)> {
    let end = match row.get(at + 1)? {
        None => i64::MAX,
        Some(_) => cell(row, at + 1)?,
    };
    Some((cell(row, at)?, end))
}

/// Whether a snapshot of `sorted` lies in `[begin, end)`.
fn any_snapshot_in(sorted: &[i64], begin: i64, end: i64) -> bool {
    let first = sorted.partition_point(|&s| s < begin);
    sorted.get(first).is_some_and(|&s| s < end)
}

/// The table id in the name of an inlined-data
/// (`ducklake_inlined_data_<id>_<version>`) or inlined-delete
/// (`ducklake_inlined_delete_<id>`) table.
fn inlined_table_id(name: &str) -> Option<i64> {
    if let Some(rest) = name.strip_prefix("ducklake_inlined_data_") {
        let (id, version) = rest.split_once('_')?;
        version.parse::<i64>().ok()?;
        return id.parse().ok();
    }
    name.strip_prefix("ducklake_inlined_delete_")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_is_dead_when_no_snapshot_lies_in_it() {
        let snapshots = [3, 7, 8, 20];
        assert!(any_snapshot_in(&snapshots, 3, 4));
        assert!(!any_snapshot_in(&snapshots, 4, 7), "end is exclusive");
        assert!(any_snapshot_in(&snapshots, 4, 8));
        assert!(!any_snapshot_in(&snapshots, 9, 20));
        assert!(!any_snapshot_in(&snapshots, 0, 3));
        assert!(!any_snapshot_in(&snapshots, 21, 30));
        assert!(!any_snapshot_in(&[], 0, 10));
    }

    #[test]
    fn spans_read_an_open_end_as_unbounded() {
        let row = |cells: &[Option<&str>]| -> Vec<Option<String>> {
            cells.iter().map(|c| c.map(str::to_string)).collect()
        };
        assert_eq!(
            span_at(&row(&[Some("7"), Some("3"), None]), 1),
            Some((3, i64::MAX))
        );
        assert_eq!(span_at(&row(&[Some("3"), Some("9")]), 0), Some((3, 9)));
        assert_eq!(span_at(&row(&[Some("3")]), 0), None);
        assert_eq!(cell(&row(&[Some("x")]), 0), None);
    }

    #[test]
    fn inlined_table_names_give_their_table_ids() {
        assert_eq!(inlined_table_id("ducklake_inlined_data_12_3"), Some(12));
        assert_eq!(inlined_table_id("ducklake_inlined_delete_7"), Some(7));
        assert_eq!(inlined_table_id("ducklake_inlined_data_12"), None);
        assert_eq!(inlined_table_id("ducklake_inlined_data_x_1"), None);
        assert_eq!(inlined_table_id("ducklake_table"), None);
    }
}
