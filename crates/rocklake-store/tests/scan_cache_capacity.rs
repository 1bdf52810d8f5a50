//! How many scans the writer's scan cache remembers: DuckDB's `SHOW ALL
//! TABLES` on a catalog of 5,000 tables reads 10,000 small prefixes, which
//! must not evict the whole-table scans every transaction reads again
//! (regression: with room for 4,096 prefixes they were evicted and read
//! again from SlateDB). Alone in its binary: it counts the process's cache
//! hits.

mod common;

use common::*;
use rocklake_codec::relations::Relation;
use rocklake_store::CatalogStore;

/// The scan cache's hits so far, from the metrics endpoint's text.
fn hits() -> u64 {
    let text = rocklake_metrics::metrics().render();
    text.lines()
        .find(|line| line.starts_with("rocklake_scan_cache_lookups_total{") && line.contains("hit"))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

async fn read_whole(store: &CatalogStore, files: &Relation) -> usize {
    store
        .read()
        .unwrap()
        .view()
        .rows(files, &[])
        .await
        .unwrap()
        .len()
}

#[tokio::test]
async fn ten_thousand_small_scans_leave_the_whole_table_scans_cached() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut txn = store.write().unwrap();
    let files = create_tables(&mut txn, &["ducklake_data_file"])
        .await
        .remove(0);
    for id in 0..5 {
        txn.insert(&files, data_file_row(id, 1, 1)).await.unwrap();
    }
    txn.commit().await.unwrap();
    for _ in 0..3 {
        assert_eq!(read_whole(&store, &files).await, 5);
    }
    // 10,000 other prefixes, each read twice (the second read keeps it).
    for id in 100..10_100u64 {
        for _ in 0..2 {
            store
                .read()
                .unwrap()
                .view()
                .rows(&files, &[id])
                .await
                .unwrap();
        }
    }
    let before = hits();
    assert_eq!(read_whole(&store, &files).await, 5);
    assert_eq!(hits(), before + 1, "the whole-table scan is still cached");
}
