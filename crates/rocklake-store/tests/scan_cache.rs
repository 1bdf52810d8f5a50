//! The writer's scan cache over real SlateDB: a cached scan is never served to
//! a transaction whose snapshot holds a different state of the table, however
//! commits and reads interleave.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::*;
use rocklake_codec::relations::Relation;
use rocklake_store::{CatalogStore, KeyedRow, WriteTxn};
use rocklake_types::datum::Datum;
use slatedb::IterationOrder;

/// Snapshot ids and data file ids of the rows read, in key order.
fn ids(rows: &[KeyedRow]) -> Vec<i64> {
    rows.iter()
        .map(|r| r.row[0].as_i64().expect("id column"))
        .collect()
}

async fn setup(store: &CatalogStore) -> (Relation, Relation) {
    let mut txn = store.write().unwrap();
    let mut rels = create_tables(&mut txn, &["ducklake_snapshot", "ducklake_data_file"]).await;
    txn.insert(&rels[0], snapshot_row(0)).await.unwrap();
    txn.commit().await.unwrap();
    let files = rels.remove(1);
    (rels.remove(0), files)
}

/// Commit `n` adds snapshot `n` and data file `n - 1`, and sets the previous
/// file's end snapshot (an update in place, as DuckLake does on DELETE).
async fn commit_step(store: &CatalogStore, snapshots: &Relation, files: &Relation, n: i64) {
    let mut txn = store.write().unwrap();
    let current = txn.view().rows(files, &[]).await.unwrap();
    assert_eq!(
        ids(&current),
        (0..n - 1).collect::<Vec<_>>(),
        "writer's own view"
    );
    if let Some(last) = current.last() {
        let mut row = last.row.clone();
        row[3] = Datum::Int8(n);
        txn.update(files, &last.key, last.row_seq, row)
            .await
            .unwrap();
    }
    txn.insert(snapshots, snapshot_row(n)).await.unwrap();
    txn.insert(files, data_file_row(n - 1, 1, n)).await.unwrap();
    // Reads of a table this transaction wrote see its own writes.
    assert_eq!(txn.view().rows(files, &[]).await.unwrap().len(), n as usize);
    txn.commit().await.unwrap();
}

#[tokio::test]
async fn old_snapshots_keep_their_rows_and_new_ones_see_commits() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let (snapshots, files) = setup(&store).await;
    for n in 1..=20i64 {
        let before = store.read().unwrap();
        // Read twice so the second read fills the cache, a third hits it.
        for _ in 0..3 {
            assert_eq!(
                ids(&before.view().rows(&files, &[]).await.unwrap()).len(),
                (n - 1) as usize
            );
        }
        commit_step(&store, &snapshots, &files, n).await;
        assert_eq!(
            ids(&before.view().rows(&files, &[]).await.unwrap()),
            (0..n - 1).collect::<Vec<_>>(),
            "a snapshot taken before commit {n} must not see it"
        );
        let after = store.read().unwrap();
        for _ in 0..3 {
            let rows = after.view().rows(&files, &[]).await.unwrap();
            assert_eq!(ids(&rows), (0..n).collect::<Vec<_>>());
            if n > 1 {
                let updated = &rows[(n - 2) as usize].row[3];
                assert_eq!(updated, &Datum::Int8(n), "update of commit {n} visible");
            }
            assert_eq!(
                after.view().rows(&snapshots, &[]).await.unwrap().len(),
                n as usize + 1
            );
            let latest = after
                .view()
                .edge_row(&snapshots, &[], IterationOrder::Descending)
                .await
                .unwrap()
                .expect("a snapshot");
            assert_eq!(latest.row[0], Datum::Int8(n), "latest snapshot seek");
            let first = after
                .view()
                .edge_row(&snapshots, &[], IterationOrder::Ascending)
                .await
                .unwrap();
            assert_eq!(first.unwrap().row[0], Datum::Int8(0));
        }
        assert_eq!(
            before
                .view()
                .edge_row(&snapshots, &[], IterationOrder::Descending)
                .await
                .unwrap()
                .unwrap()
                .row[0],
            Datum::Int8(n - 1),
            "an older snapshot's seek"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_readers_never_see_a_mixed_state() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let (snapshots, files) = setup(&store).await;
    let done = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for reader in 0..3 {
        let (store, snapshots, files, done) = (
            store.clone(),
            snapshots.clone(),
            files.clone(),
            done.clone(),
        );
        readers.push(tokio::spawn(async move {
            let mut checks = 0u64;
            while !done.load(Ordering::SeqCst) {
                // Alternate read and write transactions: both use the cache.
                let (snaps, data) = if checks.is_multiple_of(2) {
                    let txn = store.read().unwrap();
                    let data = txn.view().rows(&files, &[]).await.unwrap();
                    (txn.view().rows(&snapshots, &[]).await.unwrap(), data)
                } else {
                    let txn = store.write().unwrap();
                    let data = txn.view().rows(&files, &[]).await.unwrap();
                    (txn.view().rows(&snapshots, &[]).await.unwrap(), data)
                };
                // Every commit adds one snapshot and one file, so the two
                // tables agree only if both come from the same state.
                let latest = *ids(&snaps).last().unwrap();
                assert_eq!(
                    ids(&data),
                    (0..latest).collect::<Vec<_>>(),
                    "reader {reader}: files disagree with snapshot {latest}"
                );
                checks += 1;
                // Cache hits do not yield; let the runtime stop this task
                // should the writer fail.
                tokio::task::yield_now().await;
            }
            checks
        }));
    }
    for n in 1..=150i64 {
        commit_step(&store, &snapshots, &files, n).await;
    }
    done.store(true, Ordering::SeqCst);
    for reader in readers {
        assert!(reader.await.unwrap() > 0);
    }
}

/// Reads `files` three times in fresh read transactions (the second read
/// fills the cache, the third hits it) and returns the last read.
async fn read_thrice(store: &CatalogStore, files: &Relation) -> Vec<KeyedRow> {
    let mut last = Vec::new();
    for _ in 0..3 {
        last = store.read().unwrap().view().rows(files, &[]).await.unwrap();
    }
    last
}

/// Cached scans carried through commits (write-through) hold exactly what a
/// scan would read: updates, deletes and inserts of a commit appear, the
/// writes of a commit that failed do not.
#[tokio::test]
async fn commits_update_cached_scans_and_failed_commits_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let (_, files) = setup(&store).await;
    let mut txn = store.write().unwrap();
    for id in 0..5 {
        txn.insert(&files, data_file_row(id, 1, 1)).await.unwrap();
    }
    txn.commit().await.unwrap();
    assert_eq!(ids(&read_thrice(&store, &files).await), vec![0, 1, 2, 3, 4]);

    // Update file 1, delete file 3, add file 9 in one commit.
    let current = store
        .read()
        .unwrap()
        .view()
        .rows(&files, &[])
        .await
        .unwrap();
    let mut txn = store.write().unwrap();
    let mut changed = current[1].row.clone();
    changed[3] = Datum::Int8(7);
    txn.update(&files, &current[1].key, current[1].row_seq, changed)
        .await
        .unwrap();
    txn.delete(&current[3].key).unwrap();
    txn.insert(&files, data_file_row(9, 1, 2)).await.unwrap();
    txn.commit().await.unwrap();
    let after = store
        .read()
        .unwrap()
        .view()
        .rows(&files, &[])
        .await
        .unwrap();
    assert_eq!(ids(&after), vec![0, 1, 2, 4, 9]);
    assert_eq!(after[1].row[3], Datum::Int8(7));
    assert_eq!(
        after,
        read_thrice(&store, &files).await,
        "served from the cache"
    );

    // Two transactions change the same row; the second commit fails and its
    // other writes must not reach the cache either.
    let mut first = store.write().unwrap();
    let mut second = store.write().unwrap();
    let rows = first.view().rows(&files, &[]).await.unwrap();
    let mut a = rows[0].row.clone();
    a[3] = Datum::Int8(100);
    first
        .update(&files, &rows[0].key, rows[0].row_seq, a)
        .await
        .unwrap();
    let mut b = rows[0].row.clone();
    b[3] = Datum::Int8(200);
    second
        .update(&files, &rows[0].key, rows[0].row_seq, b)
        .await
        .unwrap();
    second
        .insert(&files, data_file_row(50, 1, 3))
        .await
        .unwrap();
    first.commit().await.unwrap();
    assert!(second.commit().await.is_err(), "write-write conflict");
    let last = read_thrice(&store, &files).await;
    assert_eq!(ids(&last), vec![0, 1, 2, 4, 9], "no file 50");
    assert_eq!(last[0].row[3], Datum::Int8(100));

    // The last-row seek, cached, follows inserts beyond it and deletes of it.
    let last_file = |store: CatalogStore, files: Relation| async move {
        let mut last = None;
        for _ in 0..3 {
            last = store
                .read()
                .unwrap()
                .view()
                .edge_row(&files, &[], IterationOrder::Descending)
                .await
                .unwrap();
        }
        last.map(|row| row.row[0].clone())
    };
    assert_eq!(
        last_file(store.clone(), files.clone()).await,
        Some(Datum::Int8(9))
    );
    let mut txn = store.write().unwrap();
    txn.insert(&files, data_file_row(60, 1, 4)).await.unwrap();
    txn.commit().await.unwrap();
    assert_eq!(
        last_file(store.clone(), files.clone()).await,
        Some(Datum::Int8(60))
    );
    let newest = store
        .read()
        .unwrap()
        .view()
        .edge_row(&files, &[], IterationOrder::Descending)
        .await
        .unwrap()
        .unwrap();
    let mut txn = store.write().unwrap();
    txn.delete(&newest.key).unwrap();
    txn.commit().await.unwrap();
    assert_eq!(
        last_file(store.clone(), files.clone()).await,
        Some(Datum::Int8(9))
    );
    let last = store
        .read()
        .unwrap()
        .view()
        .rows(&files, &[])
        .await
        .unwrap();

    // What the cache serves equals what a reopened store scans.
    drop(store);
    let store = open(dir.path()).await;
    assert_eq!(
        store
            .read()
            .unwrap()
            .view()
            .rows(&files, &[])
            .await
            .unwrap(),
        last
    );
}

/// Inserts snapshot `id` in `txn` and asserts it is refused as a duplicate.
async fn insert_duplicate(txn: &mut WriteTxn, snapshots: &Relation, id: i64) {
    let err = txn.insert(snapshots, snapshot_row(id)).await.unwrap_err();
    assert!(
        matches!(err, rocklake_store::StoreError::UniqueViolation { .. }),
        "snapshot {id}: {err:?}"
    );
}

/// Inserts snapshot `id` in a transaction of its own and commits it.
async fn insert_snapshot(store: &CatalogStore, snapshots: &Relation, id: i64) {
    let mut txn = store.write().unwrap();
    txn.insert(snapshots, snapshot_row(id)).await.unwrap();
    txn.commit().await.unwrap();
}

/// The key of an insert beyond the cached last row is known to be free
/// without a seek; every other key is still probed, in the transaction's
/// snapshot and among later commits.
#[tokio::test]
async fn uniqueness_probes_beyond_the_cached_last_row_still_find_every_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let (snapshots, _) = setup(&store).await;
    // Reads and keeps the last row, then inserts beyond it.
    insert_snapshot(&store, &snapshots, 1).await;
    insert_snapshot(&store, &snapshots, 2).await;

    let duplicate = |id: i64| {
        let store = store.clone();
        let snapshots = snapshots.clone();
        async move {
            insert_duplicate(&mut store.write().unwrap(), &snapshots, id).await;
        }
    };
    duplicate(2).await; // the last row itself
    duplicate(0).await; // a row before it

    // A transaction whose snapshot predates a commit of the same key finds
    // it at insert, through the last row that commit carried forward.
    let mut early = store.write().unwrap();
    assert_eq!(
        ids(&early.view().rows(&snapshots, &[]).await.unwrap()),
        vec![0, 1, 2]
    );
    insert_snapshot(&store, &snapshots, 3).await;
    insert_duplicate(&mut early, &snapshots, 3).await;
    drop(early);

    // Keys beyond every committed row go in, and the rows are all there.
    let mut txn = store.write().unwrap();
    txn.insert(&snapshots, snapshot_row(4)).await.unwrap();
    txn.insert(&snapshots, snapshot_row(5)).await.unwrap();
    txn.commit().await.unwrap();
    let rows = store
        .read()
        .unwrap()
        .view()
        .rows(&snapshots, &[])
        .await
        .unwrap();
    assert_eq!(ids(&rows), vec![0, 1, 2, 3, 4, 5]);
}

/// A transaction that inserted into a table still answers the probes of
/// its next inserts beyond every key without a seek (what the snapshot's
/// last row was, and the greatest key it wrote), and still finds every
/// duplicate: its own rows, the snapshot's, and a commit made since.
#[tokio::test]
async fn uniqueness_probes_after_the_transactions_own_inserts_still_find_every_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let (snapshots, _) = setup(&store).await;
    insert_snapshot(&store, &snapshots, 1).await;

    let mut txn = store.write().unwrap();
    for id in 2..=50 {
        txn.insert(&snapshots, snapshot_row(id)).await.unwrap();
    }
    for id in [50, 20, 1, 0] {
        insert_duplicate(&mut txn, &snapshots, id).await;
    }
    drop(txn);

    // A commit since the transaction's snapshot took a key beyond both the
    // snapshot's last row and the transaction's own rows.
    let mut txn = store.write().unwrap();
    txn.insert(&snapshots, snapshot_row(2)).await.unwrap();
    insert_snapshot(&store, &snapshots, 3).await;
    insert_duplicate(&mut txn, &snapshots, 3).await;
    drop(txn);

    let mut txn = store.write().unwrap();
    for id in 4..=9 {
        txn.insert(&snapshots, snapshot_row(id)).await.unwrap();
    }
    txn.commit().await.unwrap();
    let rows = store
        .read()
        .unwrap()
        .view()
        .rows(&snapshots, &[])
        .await
        .unwrap();
    assert_eq!(ids(&rows), vec![0, 1, 3, 4, 5, 6, 7, 8, 9]);
}

/// The registry version kept in memory is the one each transaction's
/// snapshot holds, through DDL commits, a failed one, and a reopen.
#[tokio::test]
async fn transactions_get_the_registry_version_their_snapshot_holds() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    assert_eq!(
        store
            .read()
            .unwrap()
            .view()
            .registry_version()
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        store
            .read()
            .unwrap()
            .view()
            .registry_version()
            .await
            .unwrap(),
        0
    );
    let before = store.read().unwrap();

    let mut ddl = store.write().unwrap();
    create_tables(&mut ddl, &["ducklake_snapshot"]).await;
    ddl.commit().await.unwrap();
    assert_eq!(
        before.view().registry_version().await.unwrap(),
        0,
        "an older snapshot"
    );
    assert_eq!(
        store
            .read()
            .unwrap()
            .view()
            .registry_version()
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .write()
            .unwrap()
            .view()
            .registry_version()
            .await
            .unwrap(),
        1
    );

    // Two transactions create the same table: the second fails at commit.
    let mut first = store.write().unwrap();
    let mut second = store.write().unwrap();
    create_tables(&mut first, &["ducklake_data_file"]).await;
    create_tables(&mut second, &["ducklake_data_file"]).await;
    first.commit().await.unwrap();
    assert!(second.commit().await.is_err());
    assert_eq!(
        store
            .read()
            .unwrap()
            .view()
            .registry_version()
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        store
            .read()
            .unwrap()
            .view()
            .registry_version()
            .await
            .unwrap(),
        2
    );
    drop(before);
    drop(store);

    let reopened = open(dir.path()).await;
    assert_eq!(
        reopened
            .read()
            .unwrap()
            .view()
            .registry_version()
            .await
            .unwrap(),
        2
    );
}

/// A cached scan of thousands of rows (DuckDB's `ducklake_column` of a
/// large catalog) is carried through a commit that writes under it, and
/// holds exactly the committed state (regression: such scans were dropped
/// and read again from SlateDB after every `CREATE TABLE`).
#[tokio::test]
async fn large_cached_scans_are_carried_through_commits() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let (_, files) = setup(&store).await;
    let mut txn = store.write().unwrap();
    for id in 0..3000 {
        txn.insert(&files, data_file_row(id, 1, 1)).await.unwrap();
    }
    txn.commit().await.unwrap();
    let before = read_thrice(&store, &files).await;
    assert_eq!(ids(&before), (0..3000).collect::<Vec<_>>());

    let mut txn = store.write().unwrap();
    let mut changed = before[10].row.clone();
    changed[3] = Datum::Int8(42);
    txn.update(&files, &before[10].key, before[10].row_seq, changed)
        .await
        .unwrap();
    txn.delete(&before[2999].key).unwrap();
    txn.insert(&files, data_file_row(5000, 1, 2)).await.unwrap();
    txn.commit().await.unwrap();

    let after = read_thrice(&store, &files).await;
    let expected: Vec<i64> = (0..2999).chain([5000]).collect();
    assert_eq!(ids(&after), expected);
    assert_eq!(after[10].row[3], Datum::Int8(42));
    // A transaction that wrote the table reads it from SlateDB, not the cache.
    let mut writer = store.write().unwrap();
    writer
        .insert(&files, data_file_row(6000, 1, 3))
        .await
        .unwrap();
    let scanned = writer.view().rows(&files, &[]).await.unwrap();
    assert_eq!(
        &scanned[..after.len()],
        &after[..],
        "cache and SlateDB agree"
    );
}
