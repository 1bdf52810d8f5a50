//! Primary keys of generic relations (tables users create themselves, keyed
//! by row sequence) across concurrent transactions, over real SlateDB on a
//! temporary directory: a second insert of a key waits for the transaction
//! in flight that inserted it and fails once it commits (goes on once it
//! rolls back), and a key committed after a transaction began fails its
//! insert or its update, as PostgreSQL's unique index does.

mod common;

use common::*;
use rocklake_codec::relations::Relation;
use rocklake_store::{CatalogStore, StoreError, StoreResult};
use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};

/// Creates `public.users (name text primary key, n integer)`.
async fn users(store: &CatalogStore) -> Relation {
    let mut txn = store.write().unwrap();
    let relation = txn
        .create_relation(
            "public",
            "users",
            vec![
                ColumnDef::new("name", PgType::Text),
                ColumnDef::new("n", PgType::Int4),
            ],
            vec![0],
            false,
        )
        .await
        .unwrap()
        .unwrap();
    txn.commit().await.unwrap();
    relation
}

fn user(name: &str, n: i32) -> Row {
    vec![Datum::text(name), Datum::Int4(n)]
}

/// The committed rows of `relation`, sorted.
async fn committed(store: &CatalogStore, relation: &Relation) -> Vec<Row> {
    let rows = store
        .read()
        .unwrap()
        .view()
        .rows(relation, &[])
        .await
        .unwrap();
    let mut rows: Vec<Row> = rows.into_iter().map(|r| r.row).collect();
    rows.sort_by_key(|row| format!("{row:?}"));
    rows
}

/// Asserts that `result` is the violation of `users`' key `name`.
fn assert_violation<T: std::fmt::Debug>(result: StoreResult<T>, name: &str) {
    match result {
        Err(StoreError::UniqueViolation {
            schema,
            table,
            columns,
            values,
        }) => {
            assert_eq!(
                (schema.as_str(), table.as_str(), columns.as_str()),
                ("public", "users", "name")
            );
            assert_eq!(values, name);
        }
        other => panic!("expected a unique violation, got {other:?}"),
    }
}

#[tokio::test]
async fn a_second_insert_waits_and_fails_once_the_first_commits() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let rel = users(&store).await;

    let mut first = store.write().unwrap();
    let mut second = store.write().unwrap();
    first.insert(&rel, user("k", 1)).await.unwrap();
    let second_insert = waits_for(second.insert(&rel, user("k", 2)), async move {
        first.commit().await.unwrap();
    })
    .await;
    assert_violation(second_insert, "k");
    drop(second);
    assert_eq!(committed(&store, &rel).await, vec![user("k", 1)]);
}

#[tokio::test]
async fn a_second_insert_goes_on_once_the_first_rolls_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let rel = users(&store).await;

    let mut first = store.write().unwrap();
    let mut second = store.write().unwrap();
    first.insert(&rel, user("k", 1)).await.unwrap();
    let second_insert = waits_for(second.insert(&rel, user("k", 2)), async move {
        drop(first);
    })
    .await;
    second_insert.unwrap();
    second.commit().await.unwrap();
    assert_eq!(committed(&store, &rel).await, vec![user("k", 2)]);
}

#[tokio::test]
async fn a_key_committed_after_the_snapshot_fails_the_insert() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let rel = users(&store).await;

    let mut late = store.write().unwrap();
    let mut first = store.write().unwrap();
    first.insert(&rel, user("k", 1)).await.unwrap();
    first.commit().await.unwrap();
    // `late` does not see "k", but it is committed: PostgreSQL checks unique
    // keys against the latest state, not the snapshot.
    assert!(late.view().rows(&rel, &[]).await.unwrap().is_empty());
    assert_violation(late.insert(&rel, user("k", 2)).await, "k");
    drop(late);
    assert_eq!(committed(&store, &rel).await, vec![user("k", 1)]);
}

#[tokio::test]
async fn an_update_to_a_key_inserted_concurrently_fails() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let rel = users(&store).await;
    let mut setup = store.write().unwrap();
    setup.insert(&rel, user("a", 0)).await.unwrap();
    setup.insert(&rel, user("b", 0)).await.unwrap();
    setup.commit().await.unwrap();

    // In flight: the update waits for the insert, then fails.
    let mut inserting = store.write().unwrap();
    let mut updating = store.write().unwrap();
    inserting.insert(&rel, user("k", 1)).await.unwrap();
    let a = updating.view().rows(&rel, &[]).await.unwrap().remove(0);
    assert_eq!(a.row, user("a", 0));
    let update = waits_for(
        updating.update(&rel, &a.key, a.row_seq, user("k", 2)),
        async move {
            inserting.commit().await.unwrap();
        },
    )
    .await;
    assert_violation(update, "k");
    drop(updating);

    // Committed after the snapshot: the update fails at once.
    let mut late = store.write().unwrap();
    let mut inserting = store.write().unwrap();
    inserting.insert(&rel, user("m", 1)).await.unwrap();
    inserting.commit().await.unwrap();
    let b = late.view().rows(&rel, &[]).await.unwrap();
    let b = b.into_iter().find(|r| r.row == user("b", 0)).unwrap();
    assert_violation(
        late.update(&rel, &b.key, b.row_seq, user("m", 2)).await,
        "m",
    );
    // An update that keeps the key is not checked against itself.
    late.update(&rel, &b.key, b.row_seq, user("b", 3))
        .await
        .unwrap();
    drop(late);

    assert_eq!(
        committed(&store, &rel).await,
        vec![user("a", 0), user("b", 0), user("k", 1), user("m", 1)]
    );
}

#[tokio::test]
async fn different_keys_commit_concurrently() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let rel = users(&store).await;

    let mut first = store.write().unwrap();
    let mut second = store.write().unwrap();
    first.insert(&rel, user("a", 1)).await.unwrap();
    tokio::time::timeout(HOLD, second.insert(&rel, user("b", 2)))
        .await
        .expect("another key does not wait")
        .unwrap();
    first.commit().await.unwrap();
    second.commit().await.unwrap();
    assert_eq!(
        committed(&store, &rel).await,
        vec![user("a", 1), user("b", 2)]
    );
}

#[tokio::test]
async fn a_transaction_may_delete_a_key_and_insert_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let rel = users(&store).await;
    let mut setup = store.write().unwrap();
    setup.insert(&rel, user("k", 1)).await.unwrap();
    setup.commit().await.unwrap();

    let mut txn = store.write().unwrap();
    let old = txn.view().rows(&rel, &[]).await.unwrap().remove(0);
    txn.delete(&old.key).unwrap();
    txn.insert(&rel, user("k", 2)).await.unwrap();
    txn.commit().await.unwrap();
    assert_eq!(committed(&store, &rel).await, vec![user("k", 2)]);

    // Updating a row away from a key and another onto it works too.
    let mut setup = store.write().unwrap();
    setup.insert(&rel, user("j", 0)).await.unwrap();
    setup.commit().await.unwrap();
    let mut txn = store.write().unwrap();
    let rows = txn.view().rows(&rel, &[]).await.unwrap();
    let k = rows.iter().find(|r| r.row == user("k", 2)).unwrap();
    let j = rows.iter().find(|r| r.row == user("j", 0)).unwrap();
    txn.update(&rel, &k.key, k.row_seq, user("x", 2))
        .await
        .unwrap();
    txn.update(&rel, &j.key, j.row_seq, user("k", 0))
        .await
        .unwrap();
    txn.commit().await.unwrap();
    assert_eq!(
        committed(&store, &rel).await,
        vec![user("k", 0), user("x", 2)]
    );
}

#[tokio::test]
async fn equal_numerics_are_one_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut txn = store.write().unwrap();
    let rel = txn
        .create_relation(
            "public",
            "prices",
            vec![ColumnDef::new("amount", PgType::Numeric(None))],
            vec![0],
            false,
        )
        .await
        .unwrap()
        .unwrap();
    txn.commit().await.unwrap();

    let mut late = store.write().unwrap();
    let mut first = store.write().unwrap();
    first
        .insert(&rel, vec![Datum::Numeric("1.5".into())])
        .await
        .unwrap();
    first.commit().await.unwrap();
    match late.insert(&rel, vec![Datum::Numeric("1.50".into())]).await {
        Err(StoreError::UniqueViolation {
            table,
            columns,
            values,
            ..
        }) => assert_eq!(
            (table, columns, values),
            ("prices".into(), "amount".into(), "1.50".into())
        ),
        other => panic!("expected a unique violation, got {other:?}"),
    }
}

/// Runs `sql` (one statement) in `session`: its error, if any.
async fn run(session: &mut rocklake_sql::Session, sql: &str) -> Option<rocklake_types::SqlError> {
    session.execute(sql).await.pop().expect("a result").err()
}

#[tokio::test]
async fn over_sql_concurrent_inserts_of_one_key_fail_with_23505() {
    use std::sync::Arc;

    use rocklake_sql::Session;
    use rocklake_store::SqlCatalog;
    use rocklake_types::SqlState;

    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let storage = Arc::new(SqlCatalog::new(store.clone()));
    let mut first = Session::new(storage.clone());
    let mut second = Session::new(storage);
    query(
        &mut first,
        "CREATE TABLE accounts (name text PRIMARY KEY, n int); SELECT 1",
    )
    .await;

    // Both in flight: the second INSERT waits for the first transaction.
    assert!(run(&mut first, "BEGIN").await.is_none());
    assert!(run(&mut second, "BEGIN").await.is_none());
    assert!(run(&mut first, "INSERT INTO accounts VALUES ('k', 1)")
        .await
        .is_none());
    let error = waits_for(
        run(&mut second, "INSERT INTO accounts VALUES ('k', 2)"),
        async {
            assert!(run(&mut first, "COMMIT").await.is_none());
        },
    )
    .await
    .expect("a duplicate key");
    assert_eq!(error.code, SqlState::UNIQUE_VIOLATION);
    assert_eq!(
        error.message,
        "duplicate key value violates unique constraint \"accounts_pkey\""
    );
    assert_eq!(
        error.detail.as_deref(),
        Some("Key (name)=(k) already exists.")
    );
    run(&mut second, "ROLLBACK").await;

    // Committed after the second transaction's snapshot.
    query(
        &mut second,
        "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM accounts",
    )
    .await;
    query(&mut first, "INSERT INTO accounts VALUES ('m', 1); SELECT 1").await;
    let error = run(&mut second, "INSERT INTO accounts VALUES ('m', 2)")
        .await
        .expect("a duplicate key");
    assert_eq!(error.code, SqlState::UNIQUE_VIOLATION);
    run(&mut second, "ROLLBACK").await;
    assert_eq!(
        query(&mut first, "SELECT name, n FROM accounts ORDER BY name").await,
        vec![
            vec![Datum::text("k"), Datum::Int4(1)],
            vec![Datum::text("m"), Datum::Int4(1)]
        ]
    );
}

/// Regression: a table a user names `ducklake_...` is not one of DuckLake's
/// (the store keeps it in insertion order), so its primary key is checked
/// against the rows the transaction sees like any user table's. The engine
/// once skipped the check for every `ducklake_` name and kept both rows.
#[tokio::test]
async fn a_user_table_named_like_ducklakes_checks_its_key() {
    use rocklake_sql::Session;
    use rocklake_store::SqlCatalog;
    use rocklake_types::SqlState;

    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut session = Session::new(std::sync::Arc::new(SqlCatalog::new(store.clone())));
    common::query(
        &mut session,
        "CREATE TABLE ducklake_notes (id bigint PRIMARY KEY, note text); \
         INSERT INTO ducklake_notes VALUES (1, 'first'); SELECT 1",
    )
    .await;
    for duplicate in [
        "INSERT INTO ducklake_notes VALUES (1, 'again')",
        "INSERT INTO ducklake_notes VALUES (2, 'a'), (2, 'b')",
    ] {
        let error = session
            .execute(duplicate)
            .await
            .pop()
            .unwrap()
            .expect_err(duplicate);
        assert_eq!(
            error.code,
            SqlState::UNIQUE_VIOLATION,
            "{duplicate}: {error:?}"
        );
    }
    assert_eq!(
        common::query(&mut session, "SELECT count(*) FROM ducklake_notes").await,
        vec![vec![Datum::Int8(1)]]
    );
}
