//! The relation registry a committing transaction hands to the other
//! transactions of its server (instead of their scanning it again) is the
//! registry storage holds: after every kind of DDL, a session sharing the
//! server's cache sees what a session of a fresh server (which scans the
//! registry) sees.

mod common;

use std::sync::Arc;

use common::query;
use rocklake_sql::Session;
use rocklake_store::SqlCatalog;

/// Every relation with its columns, as the engine sees them.
const RELATIONS: &str = "SELECT n.nspname, c.relname, a.attnum, a.attname, a.atttypid \
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
    JOIN pg_attribute a ON a.attrelid = c.oid \
    WHERE c.relkind = 'r' AND a.attnum > 0 ORDER BY 1, 2, 3";

#[tokio::test]
async fn the_registry_a_ddl_commit_publishes_is_the_stored_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::open(dir.path()).await;
    let shared = Arc::new(SqlCatalog::new(store.clone()));
    let mut writer = Session::new(shared.clone());
    let mut reader = Session::new(shared.clone());
    let steps = [
        "CREATE TABLE t1 (a int PRIMARY KEY, b text)",
        "CREATE TABLE t2 (x bigint); CREATE TABLE t3 (y int)",
        "ALTER TABLE t1 ADD COLUMN c double precision",
        "ALTER TABLE t1 DROP COLUMN b",
        "ALTER TABLE t1 RENAME COLUMN c TO d",
        "ALTER TABLE t2 RENAME TO t2_renamed",
        "DROP TABLE t3",
        "BEGIN; CREATE TABLE rolled_back (z int); ROLLBACK",
        "CREATE SCHEMA other; CREATE TABLE other.t1 (q int)",
        "BEGIN; CREATE TABLE t4 (a int); DROP TABLE t4; CREATE TABLE t5 (b int); COMMIT",
    ];
    for step in steps {
        query(&mut writer, &format!("{step}; SELECT 1")).await;
        let cached = query(&mut reader, RELATIONS).await;
        let mut fresh = Session::new(Arc::new(SqlCatalog::new(store.clone())));
        let scanned = query(&mut fresh, RELATIONS).await;
        assert_eq!(cached, scanned, "after {step}");
        assert!(!scanned.is_empty());
    }
    let names: Vec<String> = query(
        &mut reader,
        "SELECT DISTINCT relname FROM pg_class ORDER BY 1",
    )
    .await
    .into_iter()
    .map(|row| row[0].as_str().unwrap_or_default().to_string())
    .collect();
    assert_eq!(names, ["t1", "t1_pkey", "t2_renamed", "t5"]);
}

/// Tables whose rows would share keys are refused through the registry the
/// server keeps (an inlined data table of the same table and schema version
/// in another schema, created or renamed into place), and allowed again once
/// the first is dropped.
#[tokio::test]
async fn tables_that_would_share_rows_are_refused_through_the_kept_registry() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::open(dir.path()).await;
    let mut session = Session::new(Arc::new(SqlCatalog::new(store)));
    let inlined = |schema: &str, name: &str| {
        format!(
            "CREATE TABLE {schema}.{name} (row_id bigint, begin_snapshot bigint, \
             end_snapshot bigint, a int)"
        )
    };
    let refused = |results: Vec<Result<_, rocklake_types::SqlError>>| {
        let error = results.into_iter().find_map(Result::err).expect("refused");
        assert!(
            error.message.contains("one DuckLake catalog per server"),
            "{error:?}"
        );
    };
    query(
        &mut session,
        &format!(
            "CREATE SCHEMA other; {}; SELECT 1",
            inlined("public", "ducklake_inlined_data_7_1")
        ),
    )
    .await;
    refused(
        session
            .execute(&inlined("other", "ducklake_inlined_data_7_1"))
            .await,
    );
    query(
        &mut session,
        &format!("{}; SELECT 1", inlined("other", "t")),
    )
    .await;
    refused(
        session
            .execute("ALTER TABLE other.t RENAME TO ducklake_inlined_data_7_1")
            .await,
    );
    query(
        &mut session,
        &format!(
            "DROP TABLE public.ducklake_inlined_data_7_1; {}; SELECT 1",
            inlined("other", "ducklake_inlined_data_7_1")
        ),
    )
    .await;
}

/// Within a transaction that creates and drops tables, each statement's
/// catalog (its indexes extended from the statement before's when the
/// relation list only grew) finds exactly the tables that exist then.
#[tokio::test]
async fn names_resolve_after_each_ddl_of_a_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::open(dir.path()).await;
    let mut session = Session::new(Arc::new(SqlCatalog::new(store)));
    let regclass = "SELECT coalesce(to_regclass('a')::text, '-') || '|' || \
        coalesce(to_regclass('b')::text, '-') || '|' || coalesce(to_regclass('before_txn')::text, '-')";
    let names = |rows: Vec<Vec<rocklake_types::datum::Datum>>| -> String {
        rows[0][0].as_str().unwrap_or_default().to_string()
    };
    query(&mut session, "CREATE TABLE before_txn (a int); SELECT 1").await;
    assert_eq!(names(query(&mut session, regclass).await), "-|-|before_txn");
    query(&mut session, "BEGIN; SELECT 1").await;
    assert_eq!(names(query(&mut session, regclass).await), "-|-|before_txn");
    query(&mut session, "CREATE TABLE a (x int); SELECT 1").await;
    assert_eq!(names(query(&mut session, regclass).await), "a|-|before_txn");
    query(
        &mut session,
        "INSERT INTO a VALUES (1); CREATE TABLE b (y int); SELECT 1",
    )
    .await;
    assert_eq!(names(query(&mut session, regclass).await), "a|b|before_txn");
    query(&mut session, "DROP TABLE a; SELECT 1").await;
    assert_eq!(names(query(&mut session, regclass).await), "-|b|before_txn");
    query(&mut session, "CREATE TABLE a (z text); SELECT 1").await;
    let columns = query(
        &mut session,
        "SELECT attname FROM pg_attribute WHERE attrelid = 'a'::regclass AND attnum > 0",
    )
    .await;
    assert_eq!(columns.len(), 1);
    assert_eq!(columns[0][0].as_str(), Some("z"));
    query(&mut session, "COMMIT; SELECT 1").await;
    assert_eq!(names(query(&mut session, regclass).await), "a|b|before_txn");
}
