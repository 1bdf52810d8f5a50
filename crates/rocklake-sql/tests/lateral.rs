//! `LATERAL` subqueries as PostgreSQL 15 answers them (the expected rows
//! are PostgreSQL's): run once per row of the FROM items before them, in
//! comma lists, CROSS, inner and LEFT joins; a LATERAL subquery that reads
//! nothing outside itself is a plain derived table (so also in RIGHT and
//! FULL joins); RIGHT and FULL joins of one that does are 42P10; the rows
//! of each run are charged to the statement's budget.

use rocklake_sql::{MemoryStorage, Session};
use rocklake_types::SqlState;

mod support;
use support::{error, ok, session, text_rows};

async fn with_tables() -> Session {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(
        &mut s,
        "CREATE TABLE la (id int, n int); \
         INSERT INTO la VALUES (1, 2), (2, 0), (3, 1), (NULL, 1); \
         CREATE TABLE lb (id int, w text); \
         INSERT INTO lb VALUES (1, 'x'), (1, 'y'), (3, 'z'), (4, 'q')",
    )
    .await;
    s
}

#[tokio::test]
async fn a_lateral_subquery_runs_per_row_of_the_items_before_it() {
    let mut s = with_tables().await;
    let cases: &[(&str, &[&str])] = &[
        (
            "SELECT la.id, s.w FROM la, LATERAL (SELECT w FROM lb WHERE lb.id = la.id ORDER BY w) s \
             ORDER BY 1, 2",
            &["1|x", "1|y", "3|z"],
        ),
        (
            "SELECT la.id, s.w FROM la LEFT JOIN LATERAL (SELECT w FROM lb WHERE lb.id = la.id \
             ORDER BY w DESC LIMIT 1) s ON true ORDER BY 1 NULLS FIRST, 2",
            &["NULL|NULL", "1|y", "2|NULL", "3|z"],
        ),
        (
            "SELECT la.id, s.c FROM la CROSS JOIN LATERAL (SELECT count(*) AS c FROM lb \
             WHERE lb.id <= la.n) s ORDER BY 1 NULLS LAST",
            &["1|2", "2|0", "3|2", "NULL|2"],
        ),
        (
            "SELECT la.id, s.w FROM la JOIN LATERAL (SELECT id, w FROM lb WHERE lb.id = la.id) s \
             ON s.w <> 'y' ORDER BY 1, 2",
            &["1|x", "3|z"],
        ),
        (
            "SELECT la.id, t.k FROM la, LATERAL (SELECT k FROM (SELECT la.id + 1 AS k \
             UNION ALL SELECT la.n) u) t ORDER BY 1, 2",
            &["1|2", "1|2", "2|0", "2|3", "3|1", "3|4", "NULL|1", "NULL|NULL"],
        ),
        (
            "SELECT (SELECT max(s.w) FROM lb b2, LATERAL (SELECT b2.w || la.id::text AS w) s) \
             FROM la ORDER BY la.id",
            &["z1", "z2", "z3", "NULL"],
        ),
        (
            "SELECT la.id, s.one FROM la RIGHT JOIN LATERAL (SELECT 1 AS one) s ON true \
             ORDER BY 1",
            &["1|1", "2|1", "3|1", "NULL|1"],
        ),
        ("SELECT * FROM LATERAL (SELECT 1 AS a) s", &["1"]),
    ];
    for (sql, expected) in cases {
        assert_eq!(text_rows(&mut s, sql).await, *expected, "{sql}");
    }
}

#[tokio::test]
async fn outer_joins_that_null_extend_the_left_items_refuse_lateral_references() {
    let mut s = with_tables().await;
    for sql in [
        "SELECT * FROM la FULL JOIN LATERAL (SELECT la.id) s ON true",
        "SELECT * FROM la RIGHT JOIN LATERAL (SELECT la.id) s ON true",
    ] {
        assert_eq!(
            error(&mut s, sql).await.code,
            SqlState::INVALID_COLUMN_REFERENCE,
            "{sql}"
        );
    }
    // A LATERAL subquery that reads only an enclosing query is a derived
    // table: RIGHT/FULL joins of it are fine (regression: 42P10).
    assert_eq!(
        text_rows(
            &mut s,
            "SELECT (SELECT count(*) FROM lb RIGHT JOIN LATERAL (SELECT la.n AS m) x ON true) \
             FROM la ORDER BY la.id",
        )
        .await,
        ["4", "4", "4", "4"]
    );
    // UPDATE ... FROM with LATERAL: refused, not run with shifted columns.
    let e = error(
        &mut s,
        "UPDATE la SET n = x.y FROM lb, LATERAL (SELECT lb.id AS y) x WHERE la.id = lb.id",
    )
    .await;
    assert_eq!(e.code, SqlState::FEATURE_NOT_SUPPORTED);
    // Without LATERAL a derived table does not see the items before it.
    let e = error(&mut s, "SELECT * FROM la, (SELECT la.id) s").await;
    assert_eq!(e.code, SqlState::UNDEFINED_TABLE);
}

#[tokio::test]
async fn each_runs_rows_count_against_the_statement_memory_limit() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    s.set_memory_limit(256 * 1024);
    let e = error(
        &mut s,
        "SELECT count(*) FROM generate_series(1, 3) g, \
         LATERAL (SELECT i::text || 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' AS t \
         FROM generate_series(1, 20000 * g) i) s",
    )
    .await;
    assert_eq!(e.code, SqlState::OUT_OF_MEMORY, "{e:?}");
}
