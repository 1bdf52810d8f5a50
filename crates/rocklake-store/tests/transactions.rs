//! Integration tests of the catalog store over real SlateDB on a temporary
//! directory: durability across reopen, snapshot isolation, conflicts, MVCC,
//! counters, fencing.

mod common;

use common::*;
use rocklake_codec::keys::{decode_key, Counter, SystemKey};
use rocklake_codec::tables::CatalogTable;
use rocklake_store::error::ObjectKind;
use rocklake_store::{catalog_relation, StoreError};
use rocklake_types::datum::{ColumnDef, Datum, PgType};

#[tokio::test]
async fn committed_rows_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = open(dir.path()).await;
        let mut txn = store.write().unwrap();
        let rels = create_tables(&mut txn, &["ducklake_snapshot", "ducklake_data_file"]).await;
        txn.insert(&rels[0], snapshot_row(0)).await.unwrap();
        for file in 0..5 {
            txn.insert(&rels[1], data_file_row(file, 1, 0))
                .await
                .unwrap();
        }
        txn.commit().await.unwrap();
        store.close().await.unwrap();
    }
    let store = open(dir.path()).await;
    let read = store.read().unwrap();
    let snapshots = read
        .view()
        .rows(&relation(&store, "ducklake_snapshot").await, &[])
        .await
        .unwrap();
    assert_eq!(snapshots.len(), 1);
    assert_eq!(snapshots[0].row, snapshot_row(0));
    let files = read
        .view()
        .rows(&relation(&store, "ducklake_data_file").await, &[1])
        .await
        .unwrap();
    assert_eq!(files.len(), 5);
    assert_eq!(files[3].row, data_file_row(3, 1, 0));
    assert_eq!(store.epoch(), 2, "second open is the second writer");
}

#[tokio::test]
async fn readers_see_a_consistent_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut setup = store.write().unwrap();
    let rel = create_tables(&mut setup, &["ducklake_snapshot"])
        .await
        .remove(0);
    setup.insert(&rel, snapshot_row(0)).await.unwrap();
    setup.commit().await.unwrap();

    let before = store.read().unwrap();
    let writer_view = store.write().unwrap();
    let mut txn = store.write().unwrap();
    txn.insert(&rel, snapshot_row(1)).await.unwrap();
    // The writer sees its own uncommitted row; nobody else does.
    assert_eq!(txn.view().rows(&rel, &[]).await.unwrap().len(), 2);
    assert_eq!(
        store
            .read()
            .unwrap()
            .view()
            .rows(&rel, &[])
            .await
            .unwrap()
            .len(),
        1
    );
    txn.commit().await.unwrap();

    assert_eq!(
        before.view().rows(&rel, &[]).await.unwrap().len(),
        1,
        "old snapshot unchanged"
    );
    assert_eq!(
        writer_view.view().rows(&rel, &[]).await.unwrap().len(),
        1,
        "older transaction unchanged"
    );
    assert_eq!(
        store
            .read()
            .unwrap()
            .view()
            .rows(&rel, &[])
            .await
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn concurrent_commits_of_one_snapshot_id_fail_with_unique_violation() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut setup = store.write().unwrap();
    let rel = create_tables(&mut setup, &["ducklake_snapshot"])
        .await
        .remove(0);
    setup.commit().await.unwrap();

    // Both insert snapshot 7 before either commits: as on PostgreSQL, the
    // second insert waits for the first transaction and, once it commits,
    // fails at the statement (not at its own commit).
    let mut first = store.write().unwrap();
    let mut second = store.write().unwrap();
    first.insert(&rel, snapshot_row(7)).await.unwrap();
    let committed = std::sync::atomic::AtomicBool::new(false);
    let (second_insert, ()) = tokio::join!(
        async {
            let result = second.insert(&rel, snapshot_row(7)).await;
            assert!(
                committed.load(std::sync::atomic::Ordering::SeqCst),
                "the second insert must wait for the first transaction"
            );
            result
        },
        async {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            committed.store(true, std::sync::atomic::Ordering::SeqCst);
            first.commit().await.unwrap();
        }
    );
    match second_insert {
        Err(StoreError::UniqueViolation {
            table,
            columns,
            values,
            ..
        }) => {
            assert_eq!(table, "ducklake_snapshot");
            assert_eq!(columns, "snapshot_id");
            assert_eq!(values, "7");
        }
        other => panic!("expected a unique violation, got {other:?}"),
    }

    // A third transaction that began before the first committed fails at insert,
    // as PostgreSQL does once the first has committed.
    let mut late = store.write().unwrap();
    let err = late.insert(&rel, snapshot_row(7)).await.unwrap_err();
    assert!(matches!(err, StoreError::UniqueViolation { .. }), "{err:?}");

    let rows = store.read().unwrap().view().rows(&rel, &[]).await.unwrap();
    assert_eq!(rows.len(), 1);
}

#[tokio::test]
async fn concurrent_updates_of_one_row_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut setup = store.write().unwrap();
    let rel = create_tables(&mut setup, &["ducklake_table_stats"])
        .await
        .remove(0);
    setup
        .insert(
            &rel,
            vec![
                Datum::Int8(1),
                Datum::Int8(0),
                Datum::Int8(0),
                Datum::Int8(0),
            ],
        )
        .await
        .unwrap();
    setup.commit().await.unwrap();

    let mut a = store.write().unwrap();
    let mut b = store.write().unwrap();
    let row_a = a.view().rows(&rel, &[1]).await.unwrap().remove(0);
    let row_b = b.view().rows(&rel, &[1]).await.unwrap().remove(0);
    a.update(
        &rel,
        &row_a.key,
        row_a.row_seq,
        vec![
            Datum::Int8(1),
            Datum::Int8(10),
            Datum::Int8(10),
            Datum::Int8(1),
        ],
    )
    .await
    .unwrap();
    b.update(
        &rel,
        &row_b.key,
        row_b.row_seq,
        vec![
            Datum::Int8(1),
            Datum::Int8(20),
            Datum::Int8(20),
            Datum::Int8(2),
        ],
    )
    .await
    .unwrap();
    a.commit().await.unwrap();
    let err = b.commit().await.unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");
    let rows = store.read().unwrap().view().rows(&rel, &[1]).await.unwrap();
    assert_eq!(rows[0].row[1], Datum::Int8(10));
}

#[tokio::test]
async fn unique_keys_are_enforced_within_a_transaction_and_by_primary_key_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut txn = store.write().unwrap();
    let rel = create_tables(&mut txn, &["ducklake_schema"])
        .await
        .remove(0);
    let schema_row = |begin: i64| {
        vec![
            Datum::Int8(0),
            Datum::Uuid([7; 16]),
            Datum::Int8(begin),
            Datum::Null,
            Datum::Text("main".into()),
            Datum::Text("main/".into()),
            Datum::Bool(true),
        ]
    };
    txn.insert(&rel, schema_row(0)).await.unwrap();
    // schema_id is the PRIMARY KEY: another version of schema 0 is a duplicate
    // even though its key (schema_id | begin_snapshot) differs.
    let err = txn.insert(&rel, schema_row(5)).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::UniqueViolation { columns, .. } if columns == "schema_id"),
        "{err:?}"
    );
    txn.commit().await.unwrap();
}

#[tokio::test]
async fn updates_that_change_key_columns_move_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut txn = store.write().unwrap();
    let rel = create_tables(&mut txn, &["ducklake_data_file"])
        .await
        .remove(0);
    let stored = txn.insert(&rel, data_file_row(3, 1, 2)).await.unwrap();
    txn.commit().await.unwrap();

    let mut txn = store.write().unwrap();
    let mut moved = data_file_row(3, 1, 2);
    moved[1] = Datum::Int8(9);
    let new = txn
        .update(&rel, &stored.key, stored.row_seq, moved.clone())
        .await
        .unwrap();
    assert_eq!(
        new.row_seq, stored.row_seq,
        "row identity survives the move"
    );
    txn.commit().await.unwrap();
    let read = store.read().unwrap();
    assert!(read.view().rows(&rel, &[1]).await.unwrap().is_empty());
    assert_eq!(read.view().rows(&rel, &[9]).await.unwrap()[0].row, moved);
}

#[tokio::test]
async fn visible_rows_follow_begin_and_end_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut txn = store.write().unwrap();
    let rel = create_tables(&mut txn, &["ducklake_table"]).await.remove(0);
    let table_row = |begin: i64, end: Option<i64>, name: &str| {
        vec![
            Datum::Int8(5),
            Datum::Uuid([1; 16]),
            Datum::Int8(begin),
            end.map(Datum::Int8).unwrap_or(Datum::Null),
            Datum::Int8(0),
            Datum::Text(name.into()),
            Datum::text(format!("{name}/")),
            Datum::Bool(true),
        ]
    };
    txn.insert(&rel, table_row(100, Some(200), "t_old"))
        .await
        .unwrap();
    txn.insert(&rel, table_row(200, Some(300), "t_mid"))
        .await
        .unwrap();
    txn.insert(&rel, table_row(300, None, "t_new"))
        .await
        .unwrap();
    txn.commit().await.unwrap();

    let read = store.read().unwrap();
    let name_at = |rows: Vec<rocklake_store::KeyedRow>| {
        rows.into_iter()
            .map(|r| r.row[5].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert!(read
        .view()
        .visible_rows(&rel, &[5], 99)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        name_at(read.view().visible_rows(&rel, &[5], 100).await.unwrap()),
        ["t_old"]
    );
    assert_eq!(
        name_at(read.view().visible_rows(&rel, &[5], 250).await.unwrap()),
        ["t_mid"]
    );
    assert_eq!(
        name_at(read.view().visible_rows(&rel, &[5], 300).await.unwrap()),
        ["t_new"]
    );
    assert_eq!(
        name_at(read.view().visible_rows(&rel, &[], 10_000).await.unwrap()),
        ["t_new"]
    );
    // Non-versioned tables are refused rather than answered wrongly.
    let stats = catalog_relation(CatalogTable::by_name("ducklake_table_stats").unwrap());
    assert!(read.view().visible_rows(&stats, &[], 1).await.is_err());
}

#[tokio::test]
async fn counters_and_hot_key_commit_with_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut txn = store.write().unwrap();
    let rel = create_tables(&mut txn, &["ducklake_snapshot"])
        .await
        .remove(0);
    txn.insert(&rel, snapshot_row(4)).await.unwrap();
    txn.commit().await.unwrap();
    assert_eq!(
        store.counter(Counter::NextSnapshotId).await.unwrap(),
        Some(5)
    );
    assert_eq!(
        store.counter(Counter::NextCatalogId).await.unwrap(),
        Some(14)
    );
    assert_eq!(store.counter(Counter::NextFileId).await.unwrap(), Some(24));
    let hot = store
        .read()
        .unwrap()
        .view()
        .hot_key()
        .await
        .unwrap()
        .unwrap();
    assert_eq!(hot.snapshot_id, 4);
    assert_eq!(hot.schema_version, 4);

    // Row sequences stay unique across a reopen.
    let before = store.counter(Counter::NextRowSeq).await.unwrap().unwrap();
    store.close().await.unwrap();
    let store = open(dir.path()).await;
    let mut txn = store.write().unwrap();
    let rel = relation(&store, "ducklake_snapshot").await;
    let stored = txn.insert(&rel, snapshot_row(5)).await.unwrap();
    assert!(stored.row_seq >= before, "{} < {before}", stored.row_seq);
    txn.commit().await.unwrap();
    let seqs: Vec<u64> = store
        .read()
        .unwrap()
        .view()
        .rows(&rel, &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.row_seq)
        .collect();
    assert_eq!(seqs.len(), 2);
    assert_ne!(seqs[0], seqs[1]);
}

#[tokio::test]
async fn a_second_writer_fences_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let first = open(dir.path()).await;
    let mut txn = first.write().unwrap();
    let rel = create_tables(&mut txn, &["ducklake_snapshot"])
        .await
        .remove(0);
    txn.insert(&rel, snapshot_row(0)).await.unwrap();
    txn.commit().await.unwrap();
    assert_eq!(
        first.system_u64(SystemKey::WriterEpoch).await.unwrap(),
        Some(1)
    );

    let second = open(dir.path()).await;
    assert_eq!(second.epoch(), 2);
    assert_eq!(
        second.system_u64(SystemKey::WriterEpoch).await.unwrap(),
        Some(2)
    );

    let fenced = commit_row(&first, &rel, snapshot_row(1)).await;
    assert!(
        matches!(fenced, Err(StoreError::Fenced { epoch: 1 })),
        "{fenced:?}"
    );

    // Nothing the fenced writer tried is visible to the new one or after reopen.
    let rows = second.read().unwrap().view().rows(&rel, &[]).await.unwrap();
    assert_eq!(rows.len(), 1);
    second.close().await.unwrap();
    let third = open(dir.path()).await;
    assert_eq!(
        third
            .read()
            .unwrap()
            .view()
            .rows(&rel, &[])
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn relations_and_schemas_are_registered() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut txn = store.write().unwrap();
    create_tables(&mut txn, &["ducklake_metadata"]).await;
    assert!(txn.create_namespace("lake_meta", false).await.unwrap());
    assert!(!txn.create_namespace("lake_meta", true).await.unwrap());
    let inlined = create_inlined_table(&mut txn, vec![ColumnDef::new("a", PgType::Int4)]).await;
    let exists = txn
        .create_relation(
            "public",
            "ducklake_inlined_data_1_1",
            inlined.columns.clone(),
            vec![],
            false,
        )
        .await;
    assert!(
        matches!(exists, Err(StoreError::AlreadyExists { .. })),
        "{exists:?}"
    );
    // The same catalog table in a second schema would share its tag: refused.
    let table = CatalogTable::by_name("ducklake_metadata").unwrap();
    let clash = txn
        .create_relation(
            "lake_meta",
            "ducklake_metadata",
            table.column_defs(),
            vec![],
            false,
        )
        .await;
    assert!(
        matches!(clash, Err(StoreError::Unsupported(_))),
        "{clash:?}"
    );
    let missing = txn
        .create_relation(
            "nope",
            "t",
            vec![ColumnDef::new("a", PgType::Int4)],
            vec![],
            false,
        )
        .await;
    assert!(
        matches!(
            missing,
            Err(StoreError::NotFound {
                kind: ObjectKind::Schema,
                ..
            })
        ),
        "{missing:?}"
    );
    let row = txn
        .insert(
            &inlined,
            vec![Datum::Int8(0), Datum::Int8(1), Datum::Null, Datum::Int4(42)],
        )
        .await
        .unwrap();
    assert_eq!(
        decode_key(&row.key).unwrap().to_string(),
        "inlined_data table_id=1 schema_version=1 row_id=0 begin_snapshot=1"
    );
    txn.commit().await.unwrap();
    store.close().await.unwrap();

    let store = open(dir.path()).await;
    let read = store.read().unwrap();
    let names: Vec<String> = read
        .view()
        .relations()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, ["ducklake_metadata", "ducklake_inlined_data_1_1"]);
    assert_eq!(
        read.view().namespaces().await.unwrap(),
        ["public", "lake_meta"]
    );
    let rows = read.view().rows(&inlined, &[]).await.unwrap();
    assert_eq!(rows[0].row[3], Datum::Int4(42));
}

#[tokio::test]
async fn a_dropped_transaction_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut txn = store.write().unwrap();
    let rel = create_tables(&mut txn, &["ducklake_snapshot"])
        .await
        .remove(0);
    txn.commit().await.unwrap();
    let mut txn = store.write().unwrap();
    txn.insert(&rel, snapshot_row(1)).await.unwrap();
    drop(txn);
    assert!(store
        .read()
        .unwrap()
        .view()
        .rows(&rel, &[])
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn dropping_a_relation_removes_its_rows_and_registry_entry() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut txn = store.write().unwrap();
    let rels = create_tables(&mut txn, &["ducklake_snapshot", "ducklake_data_file"]).await;
    txn.insert(&rels[0], snapshot_row(0)).await.unwrap();
    txn.insert(&rels[1], data_file_row(1, 1, 0)).await.unwrap();
    txn.commit().await.unwrap();

    let mut txn = store.write().unwrap();
    assert!(txn
        .drop_relation("public", "ducklake_data_file", false)
        .await
        .unwrap());
    assert!(!txn
        .drop_relation("public", "ducklake_data_file", true)
        .await
        .unwrap());
    let missing = txn
        .drop_relation("public", "ducklake_data_file", false)
        .await;
    assert!(
        matches!(missing, Err(StoreError::NotFound { .. })),
        "{missing:?}"
    );
    txn.commit().await.unwrap();

    let read = store.read().unwrap();
    assert!(read
        .view()
        .relation("public", "ducklake_data_file")
        .await
        .unwrap()
        .is_none());
    assert!(read.view().rows(&rels[1], &[]).await.unwrap().is_empty());
    assert_eq!(
        read.view().rows(&rels[0], &[]).await.unwrap().len(),
        1,
        "other tables untouched"
    );
}

/// Regression: when a concurrent writer commits the same snapshot first, a
/// later insert that collides on a non-primary key (an inlined-data row) must
/// still report the snapshot's primary key, as PostgreSQL would.
/// A transaction waiting for a unique key another transaction inserted goes
/// on when that one rolls back; two that wait for each other's keys get a
/// deadlock error, and the other one goes on.
#[tokio::test]
async fn waits_for_inserted_keys_end_with_the_holder_or_a_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut txn = store.write().unwrap();
    let snapshot = create_tables(&mut txn, &["ducklake_snapshot"])
        .await
        .remove(0);
    txn.commit().await.unwrap();

    let mut holder = store.write().unwrap();
    holder.insert(&snapshot, snapshot_row(5)).await.unwrap();
    let mut waiter = store.write().unwrap();
    let (inserted, ()) = tokio::join!(waiter.insert(&snapshot, snapshot_row(5)), async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        drop(holder);
    });
    inserted.unwrap();
    waiter.commit().await.unwrap();

    let mut a = store.write().unwrap();
    let mut b = store.write().unwrap();
    a.insert(&snapshot, snapshot_row(10)).await.unwrap();
    b.insert(&snapshot, snapshot_row(11)).await.unwrap();
    let snap = &snapshot;
    let (a_result, b_result) = tokio::join!(a.insert(snap, snapshot_row(11)), async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let result = b.insert(snap, snapshot_row(10)).await;
        drop(b);
        result
    });
    assert!(
        matches!(b_result, Err(StoreError::Deadlock)),
        "{b_result:?}"
    );
    a_result.unwrap();
    a.commit().await.unwrap();
    let ids: Vec<Datum> = store
        .read()
        .unwrap()
        .view()
        .rows(&snapshot, &[])
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.row[0].clone())
        .collect();
    assert_eq!(ids, vec![Datum::Int8(5), Datum::Int8(10), Datum::Int8(11)]);
}

/// Regression: two transactions that each found no table of a name in their
/// snapshot both committed a CREATE TABLE of it, leaving two relations with
/// one name. Commits that change the registry now conflict with each other.
#[tokio::test]
async fn concurrent_creates_of_one_table_name_do_not_both_commit() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut first = store.write().unwrap();
    let mut second = store.write().unwrap();
    create_tables(&mut first, &["ducklake_metadata"]).await;
    create_tables(&mut second, &["ducklake_metadata"]).await;
    first.commit().await.unwrap();
    let err = second.commit().await.unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");
    let named: Vec<_> = store
        .read()
        .unwrap()
        .view()
        .relations()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.name == "ducklake_metadata")
        .collect();
    assert_eq!(named.len(), 1);
}
