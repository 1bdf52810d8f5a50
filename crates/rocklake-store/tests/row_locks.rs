//! `SELECT ... FOR UPDATE` / `FOR SHARE` over the real store (SlateDB on a
//! temporary directory), through SQL sessions: a second locker waits for
//! the transaction holding the row, then fails with 40001 when it changed
//! the row (goes on when it only locked it or rolled back); a change
//! committed after the locker began fails the lock (40001), one committed
//! while the lock is held fails the locker's COMMIT (40001); two lockers
//! waiting for each other deadlock (40P01); LIMIT and OF restrict what is
//! locked; and PostgreSQL's errors for what it refuses.

mod common;

use std::sync::Arc;

use common::{query, waits_for, HOLD};
use rocklake_sql::Session;
use rocklake_store::SqlCatalog;
use rocklake_types::datum::Datum;
use rocklake_types::output::QueryOutput;
use rocklake_types::SqlError;

/// Two sessions over one store with `t (id int primary key, v int)`
/// holding (1, 10), (2, 20), (3, 30).
async fn sessions(dir: &std::path::Path) -> (Session, Session) {
    let store = common::open(dir).await;
    let storage = Arc::new(SqlCatalog::new(store));
    let mut a = Session::new(storage.clone());
    let b = Session::new(storage);
    query(
        &mut a,
        "CREATE TABLE t (id int PRIMARY KEY, v int); \
         INSERT INTO t VALUES (1, 10), (2, 20), (3, 30); SELECT 1",
    )
    .await;
    (a, b)
}

/// The outcome of the one statement `sql`: its rows, or its error.
async fn run(session: &mut Session, sql: &str) -> Result<Vec<Vec<Datum>>, SqlError> {
    let mut results = session.execute(sql).await;
    assert_eq!(results.len(), 1, "{sql}: one statement");
    match results.pop().expect("a result")? {
        QueryOutput::Rows { rows, .. } => Ok(rows.into_rows()),
        _ => Ok(Vec::new()),
    }
}

/// Runs `sql`, which must succeed.
async fn ok(session: &mut Session, sql: &str) -> Vec<Vec<Datum>> {
    run(session, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
}

/// Asserts that `result` failed with `code`.
fn fails<T: std::fmt::Debug>(result: Result<T, SqlError>, code: &str) -> SqlError {
    match result {
        Err(e) if e.code == code => e,
        other => panic!("expected {code}, got {other:?}"),
    }
}

fn row(id: i32, v: i32) -> Vec<Datum> {
    vec![Datum::Int4(id), Datum::Int4(v)]
}

const LOCK_ONE: &str = "SELECT id, v FROM t WHERE id = 1 FOR UPDATE";

#[tokio::test]
async fn a_second_locker_waits_and_fails_once_the_first_updates_and_commits() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = sessions(dir.path()).await;
    ok(&mut a, "BEGIN").await;
    assert_eq!(ok(&mut a, LOCK_ONE).await, vec![row(1, 10)]);
    ok(&mut b, "BEGIN").await;
    ok(&mut b, "SELECT count(*) FROM t").await;
    ok(&mut a, "UPDATE t SET v = 11 WHERE id = 1").await;
    let second = waits_for(run(&mut b, LOCK_ONE), async {
        ok(&mut a, "COMMIT").await;
    })
    .await;
    let e = fails(second, "40001");
    assert_eq!(
        e.message,
        "could not serialize access due to concurrent update"
    );
    ok(&mut b, "ROLLBACK").await;
    assert_eq!(ok(&mut b, LOCK_ONE).await, vec![row(1, 11)]);
}

#[tokio::test]
async fn a_second_locker_fails_once_the_first_deletes_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = sessions(dir.path()).await;
    ok(&mut a, "BEGIN").await;
    ok(&mut b, "BEGIN").await;
    ok(&mut b, "SELECT count(*) FROM t").await;
    ok(&mut a, LOCK_ONE).await;
    ok(&mut a, "DELETE FROM t WHERE id = 1").await;
    let second = waits_for(run(&mut b, LOCK_ONE), async {
        ok(&mut a, "COMMIT").await;
    })
    .await;
    fails(second, "40001");
}

#[tokio::test]
async fn a_second_locker_goes_on_once_the_first_only_locked_or_rolled_back() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = sessions(dir.path()).await;
    ok(&mut a, "BEGIN").await;
    ok(&mut a, LOCK_ONE).await;
    ok(&mut b, "BEGIN").await;
    let second = waits_for(run(&mut b, LOCK_ONE), async {
        ok(&mut a, "COMMIT").await;
    })
    .await;
    assert_eq!(second.unwrap(), vec![row(1, 10)]);
    ok(&mut b, "COMMIT").await;

    ok(&mut a, "BEGIN").await;
    ok(&mut a, LOCK_ONE).await;
    ok(&mut a, "UPDATE t SET v = 12 WHERE id = 1").await;
    ok(&mut b, "BEGIN").await;
    let second = waits_for(run(&mut b, LOCK_ONE), async {
        ok(&mut a, "ROLLBACK").await;
    })
    .await;
    assert_eq!(second.unwrap(), vec![row(1, 10)]);
    ok(&mut b, "COMMIT").await;
}

#[tokio::test]
async fn an_update_committed_after_the_locker_began_fails_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = sessions(dir.path()).await;
    ok(&mut a, "BEGIN").await;
    ok(&mut a, "SELECT count(*) FROM t").await;
    ok(&mut b, "UPDATE t SET v = 13 WHERE id = 1").await;
    fails(run(&mut a, LOCK_ONE).await, "40001");
    ok(&mut a, "ROLLBACK").await;
    // Rows nobody changed lock fine in the same situation.
    ok(&mut a, "BEGIN").await;
    ok(&mut a, "SELECT count(*) FROM t").await;
    ok(&mut b, "UPDATE t SET v = 14 WHERE id = 1").await;
    assert_eq!(
        ok(&mut a, "SELECT id, v FROM t WHERE id = 2 FOR UPDATE").await,
        vec![row(2, 20)]
    );
    ok(&mut a, "COMMIT").await;
}

#[tokio::test]
async fn an_update_committed_while_the_lock_is_held_fails_the_lockers_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = sessions(dir.path()).await;
    ok(&mut a, "BEGIN").await;
    ok(&mut a, LOCK_ONE).await;
    // Writers take no row locks: the UPDATE does not wait (PostgreSQL's
    // would), the locker's commit fails instead.
    ok(&mut b, "UPDATE t SET v = 15 WHERE id = 1").await;
    fails(run(&mut a, "COMMIT").await, "40001");
    assert_eq!(
        ok(&mut a, "SELECT v FROM t WHERE id = 1").await,
        vec![vec![Datum::Int4(15)]]
    );
}

#[tokio::test]
async fn two_lockers_waiting_for_each_other_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = sessions(dir.path()).await;
    ok(&mut a, "BEGIN").await;
    ok(&mut b, "BEGIN").await;
    ok(&mut a, LOCK_ONE).await;
    ok(&mut b, "SELECT * FROM t WHERE id = 2 FOR UPDATE").await;
    let (first, second) = tokio::join!(
        run(&mut a, "SELECT * FROM t WHERE id = 2 FOR UPDATE"),
        async {
            tokio::time::sleep(HOLD).await;
            let result = run(&mut b, LOCK_ONE).await;
            // The victim's transaction ends, letting the other go on.
            run(&mut b, "ROLLBACK").await.unwrap();
            result
        }
    );
    assert_eq!(first.unwrap(), vec![row(2, 20)]);
    let e = fails(second, "40P01");
    assert_eq!(e.message, "deadlock detected");
    ok(&mut a, "COMMIT").await;
}

#[tokio::test]
async fn limit_and_of_restrict_the_rows_locked() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = sessions(dir.path()).await;
    query(
        &mut a,
        "CREATE TABLE u (id int, w int); INSERT INTO u VALUES (1, 100); SELECT 1",
    )
    .await;
    ok(&mut a, "BEGIN").await;
    assert_eq!(
        ok(
            &mut a,
            "SELECT id, v FROM t ORDER BY id LIMIT 1 OFFSET 1 FOR UPDATE"
        )
        .await,
        vec![row(2, 20)]
    );
    // Row 1 (pulled through, skipped by OFFSET) and row 2 are locked; row 3
    // (cut by LIMIT) is not.
    assert_eq!(
        ok(&mut b, "SELECT id FROM t WHERE id = 3 FOR UPDATE NOWAIT").await,
        vec![vec![Datum::Int4(3)]]
    );
    for id in [1, 2] {
        let e = fails(
            run(
                &mut b,
                &format!("SELECT id FROM t WHERE id = {id} FOR UPDATE NOWAIT"),
            )
            .await,
            "55P03",
        );
        assert_eq!(e.message, "could not obtain lock on row in relation \"t\"");
    }
    assert_eq!(
        ok(
            &mut b,
            "SELECT id FROM t ORDER BY id FOR UPDATE SKIP LOCKED"
        )
        .await,
        vec![vec![Datum::Int4(3)]]
    );
    // OF: only u's row is locked by the join.
    ok(&mut a, "COMMIT").await;
    ok(&mut a, "BEGIN").await;
    ok(
        &mut a,
        "SELECT t.id, u.w FROM t JOIN u ON u.id = t.id FOR UPDATE OF u",
    )
    .await;
    ok(&mut b, "SELECT id FROM t WHERE id = 1 FOR UPDATE NOWAIT").await;
    fails(
        run(&mut b, "SELECT id FROM u FOR UPDATE NOWAIT").await,
        "55P03",
    );
    ok(&mut a, "COMMIT").await;
}

#[tokio::test]
async fn postgres_refusals_keep_their_sqlstates_and_messages() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, _) = sessions(dir.path()).await;
    let cases = [
        (
            "SELECT count(*) FROM t FOR UPDATE",
            "0A000",
            "FOR UPDATE is not allowed with aggregate functions",
        ),
        (
            "SELECT v FROM t GROUP BY v FOR UPDATE",
            "0A000",
            "FOR UPDATE is not allowed with GROUP BY clause",
        ),
        (
            "SELECT DISTINCT v FROM t FOR SHARE",
            "0A000",
            "FOR SHARE is not allowed with DISTINCT clause",
        ),
        (
            "SELECT row_number() OVER () FROM t FOR UPDATE",
            "0A000",
            "FOR UPDATE is not allowed with window functions",
        ),
        (
            "SELECT id FROM t UNION SELECT id FROM t FOR UPDATE",
            "0A000",
            "FOR UPDATE is not allowed with UNION/INTERSECT/EXCEPT",
        ),
        (
            "SELECT * FROM t FOR UPDATE OF x",
            "42P01",
            "relation \"x\" in FOR UPDATE clause not found in FROM clause",
        ),
        (
            "SELECT * FROM t LEFT JOIN t AS s ON s.id = t.id FOR UPDATE",
            "0A000",
            "FOR UPDATE cannot be applied to the nullable side of an outer join",
        ),
        // Regressions: RIGHT/FULL joins and DISTINCT ON were let through.
        (
            "SELECT * FROM t RIGHT JOIN t AS s ON s.id = t.id FOR UPDATE",
            "0A000",
            "FOR UPDATE cannot be applied to the nullable side of an outer join",
        ),
        (
            "SELECT * FROM t FULL JOIN t AS s ON s.id = t.id FOR UPDATE OF s",
            "0A000",
            "FOR UPDATE cannot be applied to the nullable side of an outer join",
        ),
        (
            "SELECT DISTINCT ON (v) * FROM t ORDER BY v FOR UPDATE",
            "0A000",
            "FOR UPDATE is not allowed with DISTINCT clause",
        ),
    ];
    for (sql, code, message) in cases {
        let e = fails(run(&mut a, sql).await, code);
        assert_eq!(e.message, message, "{sql}");
    }
    ok(&mut a, "BEGIN READ ONLY").await;
    let e = fails(run(&mut a, LOCK_ONE).await, "25006");
    assert_eq!(
        e.message,
        "cannot execute SELECT FOR UPDATE in a read-only transaction"
    );
    ok(&mut a, "ROLLBACK").await;
    // Catalog rows are read, not locked.
    ok(
        &mut a,
        "SELECT relname FROM pg_class WHERE relname = 't' FOR UPDATE",
    )
    .await;
}
