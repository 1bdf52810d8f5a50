//! The SQL engine over the real store: scans that the key order answers with
//! one seek (`max`/`min` of a key column) give the same results as full scans,
//! inside and outside a write transaction.

mod common;

use common::query;

use std::sync::Arc;

use rocklake_sql::Session;
use rocklake_store::SqlCatalog;
use rocklake_types::datum::Datum;

const CREATE_SNAPSHOT: &str = "CREATE TABLE \"public\".\"ducklake_snapshot\"(\"snapshot_id\" BIGINT PRIMARY KEY, \
    \"snapshot_time\" TIMESTAMP WITH TIME ZONE, \"schema_version\" BIGINT, \"next_catalog_id\" BIGINT, \
    \"next_file_id\" BIGINT)";

fn one(value: i64) -> Vec<Vec<Datum>> {
    vec![vec![Datum::Int8(value)]]
}

#[tokio::test]
async fn max_and_min_of_a_key_column_seek_the_ends_of_the_key_range() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::open(dir.path()).await;
    let mut s = Session::new(Arc::new(SqlCatalog::new(store.clone())));
    query(&mut s, &format!("{CREATE_SNAPSHOT}; SELECT 1")).await;
    let empty = query(
        &mut s,
        "SELECT MAX(snapshot_id) FROM public.ducklake_snapshot",
    )
    .await;
    assert_eq!(empty, vec![vec![Datum::Null]], "max of no rows is NULL");

    // Ids 3..=40 out of order, so key order and insertion order differ.
    for id in (3..=40).rev().step_by(2).chain((3..=40).step_by(2)) {
        query(
            &mut s,
            &format!(
                "INSERT INTO public.ducklake_snapshot VALUES ({id}, NOW(), {id}, 0, 0); SELECT 1"
            ),
        )
        .await;
    }
    let latest = "SELECT snapshot_id, schema_version FROM public.ducklake_snapshot \
                  WHERE snapshot_id = (SELECT MAX(snapshot_id) FROM public.ducklake_snapshot)";
    assert_eq!(
        query(&mut s, latest).await,
        vec![vec![Datum::Int8(40), Datum::Int8(40)]]
    );
    assert_eq!(
        query(
            &mut s,
            "SELECT min(snapshot_id) FROM public.ducklake_snapshot"
        )
        .await,
        one(3)
    );

    // Inside a write transaction the seek sees the transaction's own rows,
    // and another session does not.
    query(
        &mut s,
        "BEGIN; INSERT INTO public.ducklake_snapshot VALUES (41, NOW(), 41, 0, 0); \
         INSERT INTO public.ducklake_snapshot VALUES (2, NOW(), 2, 0, 0); SELECT 1",
    )
    .await;
    assert_eq!(
        query(
            &mut s,
            "SELECT max(snapshot_id) FROM public.ducklake_snapshot"
        )
        .await,
        one(41)
    );
    assert_eq!(
        query(
            &mut s,
            "SELECT min(snapshot_id) FROM public.ducklake_snapshot"
        )
        .await,
        one(2)
    );
    let mut other = Session::new(Arc::new(SqlCatalog::new(store.clone())));
    assert_eq!(
        query(
            &mut other,
            "SELECT max(snapshot_id) FROM public.ducklake_snapshot"
        )
        .await,
        one(40)
    );
    // A deleted last row is not found by the seek.
    query(
        &mut s,
        "DELETE FROM public.ducklake_snapshot WHERE snapshot_id = 41; SELECT 1",
    )
    .await;
    assert_eq!(
        query(
            &mut s,
            "SELECT max(snapshot_id) FROM public.ducklake_snapshot"
        )
        .await,
        one(40)
    );
    query(&mut s, "COMMIT; SELECT 1").await;

    // Where the key order cannot answer, the full scan still does.
    assert_eq!(
        query(
            &mut s,
            "SELECT max(snapshot_id) FROM public.ducklake_snapshot WHERE schema_version < 10"
        )
        .await,
        one(9)
    );
    assert_eq!(
        query(
            &mut s,
            "SELECT max(schema_version) FROM public.ducklake_snapshot"
        )
        .await,
        one(40)
    );
    assert_eq!(
        query(
            &mut s,
            "SELECT max(snapshot_id), count(*) FROM public.ducklake_snapshot"
        )
        .await,
        vec![vec![Datum::Int8(40), Datum::Int8(39)]]
    );
}

#[tokio::test]
async fn sessions_sharing_the_registry_cache_see_every_create_and_drop() {
    use rocklake_codec::keys::Counter;
    let dir = tempfile::tempdir().unwrap();
    let store = common::open(dir.path()).await;
    let storage: Arc<SqlCatalog> = Arc::new(SqlCatalog::new(store.clone()));
    let mut a = Session::new(storage.clone());
    let mut b = Session::new(storage.clone());
    assert_eq!(
        query(
            &mut b,
            "SELECT count(*) FROM pg_catalog.pg_class WHERE relname = 't1'"
        )
        .await,
        one(0)
    );
    query(
        &mut a,
        "CREATE TABLE t1 (id BIGINT); INSERT INTO t1 VALUES (5); SELECT 1",
    )
    .await;
    let version = store.counter(Counter::RegistryVersion).await.unwrap();
    assert_eq!(version, Some(1), "one DDL commit, one bump");
    assert_eq!(query(&mut b, "SELECT id FROM t1").await, one(5));

    // A transaction that began before the DROP keeps seeing the table.
    query(&mut b, "BEGIN; SELECT id FROM t1").await;
    query(&mut a, "DROP TABLE t1; SELECT 1").await;
    assert_eq!(query(&mut b, "SELECT id FROM t1").await, one(5));
    query(&mut b, "COMMIT; SELECT 1").await;
    let err = b
        .execute("SELECT id FROM t1")
        .await
        .pop()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code, "42P01", "{err:?}");

    // A schema created elsewhere is visible at once.
    query(
        &mut a,
        "CREATE SCHEMA s2; CREATE TABLE s2.t2 (v VARCHAR); SELECT 1",
    )
    .await;
    assert_eq!(query(&mut b, "SELECT count(*) FROM s2.t2").await, one(0));
    assert_eq!(
        store.counter(Counter::RegistryVersion).await.unwrap(),
        Some(3)
    );

    // Sessions keep the relation list across transactions while the registry
    // version stays; a transaction's own DDL is seen at once and forgotten
    // on rollback.
    query(
        &mut b,
        "BEGIN; SELECT count(*) FROM s2.t2; CREATE TABLE t3 (id BIGINT); \
         INSERT INTO t3 VALUES (7); CREATE SCHEMA s3; SELECT 1",
    )
    .await;
    assert_eq!(query(&mut b, "SELECT id FROM t3").await, one(7));
    assert_eq!(
        query(
            &mut b,
            "SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = 's3'"
        )
        .await,
        one(1)
    );
    query(&mut b, "ROLLBACK; SELECT 1").await;
    for sql in ["SELECT id FROM t3", "CREATE TABLE s3.t4 (id BIGINT)"] {
        let err = b.execute(sql).await.pop().unwrap().unwrap_err();
        assert!(
            ["42P01", "3F000"].contains(&err.code.as_str()),
            "{sql}: {err:?}"
        );
    }
    assert_eq!(
        query(
            &mut b,
            "SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = 's3'"
        )
        .await,
        one(0)
    );
    query(&mut a, "CREATE TABLE t3 (v VARCHAR); SELECT 1").await;
    assert_eq!(query(&mut b, "SELECT count(*) FROM t3").await, one(0));
}

/// DuckLake deletes `ducklake_file_column_stats` rows by `data_file_id`, not
/// a key prefix: the DELETE scans the whole table. It holds only the rows
/// it deletes, so it runs under a statement memory limit far below the
/// table's size (it failed with 53200 when the scan copied every row).
#[tokio::test]
async fn update_and_delete_by_a_non_key_column_hold_only_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::open(dir.path()).await;
    let mut s = Session::new(Arc::new(SqlCatalog::new(store.clone())));
    query(&mut s, common::CREATE_FILE_COLUMN_STATS).await;
    query(
        &mut s,
        "INSERT INTO public.ducklake_file_column_stats SELECT g / 4, 1, g % 4, 1000, 10, 0, \
         repeat('x', 100) || g, repeat('y', 100) || g, false FROM generate_series(1, 20000) g; SELECT 1",
    )
    .await;
    // 20,000 rows of ~250 bytes each: several MiB decoded.
    s.set_memory_limit(512 * 1024);
    query(
        &mut s,
        "DELETE FROM public.ducklake_file_column_stats WHERE data_file_id IN (7, 9); SELECT 1",
    )
    .await;
    query(
        &mut s,
        "UPDATE public.ducklake_file_column_stats SET null_count = 1 WHERE data_file_id = 11; SELECT 1",
    )
    .await;
    let counts = query(
        &mut s,
        "SELECT count(*), count(*) FILTER (WHERE null_count = 1), \
         count(*) FILTER (WHERE data_file_id IN (7, 9)) FROM public.ducklake_file_column_stats",
    )
    .await;
    assert_eq!(
        counts,
        vec![vec![Datum::Int8(19_992), Datum::Int8(4), Datum::Int8(0)]]
    );
    // The deleted rows' ctids: a later DELETE by ctid finds the same rows
    // a query reads.
    let first = query(
        &mut s,
        "SELECT ctid FROM public.ducklake_file_column_stats WHERE data_file_id = 12 ORDER BY column_id",
    )
    .await;
    let ctid = match &first[0][0] {
        Datum::Tid { block, offset } => format!("({block},{offset})"),
        other => panic!("ctid is {other:?}"),
    };
    query(
        &mut s,
        &format!("DELETE FROM public.ducklake_file_column_stats WHERE ctid = '{ctid}'; SELECT 1"),
    )
    .await;
    assert_eq!(
        query(
            &mut s,
            "SELECT count(*) FROM public.ducklake_file_column_stats WHERE data_file_id = 12"
        )
        .await,
        vec![vec![Datum::Int8(3)]]
    );
}

/// A row deleted and inserted again under the same primary key in one
/// transaction is no duplicate, as in PostgreSQL (the committed row the
/// transaction deleted itself was taken for a conflicting one: 23505).
#[tokio::test]
async fn a_key_deleted_then_inserted_again_in_one_transaction_is_no_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = common::two_sessions(dir.path()).await;
    query(
        &mut a,
        "CREATE TABLE public.ducklake_snapshot_changes (snapshot_id BIGINT PRIMARY KEY, \
         changes_made VARCHAR, author VARCHAR, commit_message VARCHAR, commit_extra_info VARCHAR); \
         INSERT INTO public.ducklake_snapshot_changes (snapshot_id, changes_made) \
         VALUES (1, 'a'), (2, 'b'); SELECT 1",
    )
    .await;
    query(
        &mut a,
        "BEGIN; DELETE FROM public.ducklake_snapshot_changes WHERE snapshot_id = 2; \
         INSERT INTO public.ducklake_snapshot_changes (snapshot_id, changes_made) VALUES (2, 'c'); \
         COMMIT; SELECT 1",
    )
    .await;
    let rows = query(
        &mut b,
        "SELECT snapshot_id, changes_made FROM public.ducklake_snapshot_changes ORDER BY 1",
    )
    .await;
    assert_eq!(
        rows,
        vec![
            vec![Datum::Int8(1), Datum::text("a")],
            vec![Datum::Int8(2), Datum::text("c")]
        ]
    );
    // A key the transaction did not delete still conflicts.
    let refused = a
        .execute("INSERT INTO public.ducklake_snapshot_changes (snapshot_id) VALUES (1)")
        .await
        .pop()
        .unwrap()
        .unwrap_err();
    assert_eq!(refused.code.as_str(), "23505");
}
