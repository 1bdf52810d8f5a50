//! `INTERSECT [ALL]` and `EXCEPT [ALL]` as PostgreSQL 15 answers them:
//! duplicates counted, NULLs equal, `INTERSECT` binding tighter than
//! `UNION`/`EXCEPT`, column types resolved like `UNION`'s, `ORDER BY` and
//! `LIMIT` on the result, and the memory the right side takes charged to
//! the statement (the expected rows are PostgreSQL 15's).

use rocklake_sql::{MemoryStorage, Session};
use rocklake_types::datum::PgType;

mod support;
use support::{error, ok, result_columns, session, text_rows};

async fn with_tables() -> Session {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(
        &mut s,
        "CREATE TABLE l (x int, y text); \
         INSERT INTO l VALUES (1, 'a'), (1, 'a'), (1, 'a'), (2, 'b'), (2, 'b'), \
         (NULL, NULL), (NULL, NULL), (3, 'c'); \
         CREATE TABLE r (x bigint, y varchar); \
         INSERT INTO r VALUES (1, 'a'), (2, 'b'), (2, 'b'), (2, 'b'), (NULL, NULL), (4, 'd')",
    )
    .await;
    s
}

#[tokio::test]
async fn intersect_and_except_count_duplicates_and_match_nulls() {
    let mut s = with_tables().await;
    let cases: &[(&str, &[&str])] = &[
        (
            "SELECT x, y FROM l INTERSECT SELECT x, y FROM r ORDER BY 1, 2",
            &["1|a", "2|b", "NULL|NULL"],
        ),
        (
            "SELECT x, y FROM l INTERSECT ALL SELECT x, y FROM r ORDER BY 1, 2",
            &["1|a", "2|b", "2|b", "NULL|NULL"],
        ),
        (
            "SELECT x, y FROM l EXCEPT SELECT x, y FROM r ORDER BY 1, 2",
            &["3|c"],
        ),
        (
            "SELECT x, y FROM l EXCEPT ALL SELECT x, y FROM r ORDER BY 1, 2",
            &["1|a", "1|a", "3|c", "NULL|NULL"],
        ),
        (
            "SELECT x, y FROM r EXCEPT ALL SELECT x, y FROM l ORDER BY 1, 2",
            &["2|b", "4|d"],
        ),
        ("SELECT NULL::int, 'a' EXCEPT SELECT NULL, 'a'", &[]),
        (
            "SELECT 1.0::numeric INTERSECT SELECT 1.00::numeric",
            &["1.0"],
        ),
        ("SELECT 'a' INTERSECT ALL SELECT 'a'", &["a"]),
        ("SELECT x FROM l INTERSECT SELECT x FROM r WHERE false", &[]),
        ("SELECT x FROM l WHERE false EXCEPT SELECT x FROM r", &[]),
    ];
    for (sql, expected) in cases {
        assert_eq!(text_rows(&mut s, sql).await, *expected, "{sql}");
    }
}

#[tokio::test]
async fn intersect_binds_tighter_and_parentheses_nest() {
    let mut s = with_tables().await;
    let cases: &[(&str, &[&str])] = &[
        ("SELECT 1 UNION SELECT 2 INTERSECT SELECT 3", &["1"]),
        ("(SELECT 1 UNION SELECT 2) INTERSECT SELECT 2", &["2"]),
        ("SELECT 1 EXCEPT SELECT 1 INTERSECT SELECT 2", &["1"]),
        ("SELECT 1 UNION SELECT 2 EXCEPT SELECT 1", &["2"]),
        (
            "(SELECT x FROM l EXCEPT SELECT x FROM r) UNION ALL \
             (SELECT 9 INTERSECT ALL SELECT 9) ORDER BY 1",
            &["3", "9"],
        ),
        (
            "SELECT count(*) FROM (SELECT x FROM l EXCEPT ALL SELECT x FROM r) s",
            &["4"],
        ),
        (
            "WITH e AS (SELECT y FROM l EXCEPT SELECT y FROM r) SELECT * FROM e",
            &["c"],
        ),
        (
            "SELECT x FROM l WHERE x IN (SELECT x FROM l INTERSECT SELECT x FROM r) \
             ORDER BY x",
            &["1", "1", "1", "2", "2"],
        ),
    ];
    for (sql, expected) in cases {
        assert_eq!(text_rows(&mut s, sql).await, *expected, "{sql}");
    }
}

#[tokio::test]
async fn result_columns_order_and_limits() {
    let mut s = with_tables().await;
    assert_eq!(
        text_rows(
            &mut s,
            "SELECT x AS k FROM l INTERSECT SELECT x FROM r ORDER BY k NULLS FIRST"
        )
        .await,
        ["NULL", "1", "2"]
    );
    assert_eq!(
        text_rows(
            &mut s,
            "SELECT x FROM l EXCEPT ALL SELECT x FROM r ORDER BY 1 LIMIT 2 OFFSET 1"
        )
        .await,
        ["1", "3"]
    );
    assert_eq!(
        result_columns(
            &mut s,
            "SELECT x AS k, y FROM l INTERSECT SELECT x, y FROM r"
        )
        .await,
        [
            ("k".to_string(), PgType::Int8),
            ("y".to_string(), PgType::Text)
        ]
    );
    assert_eq!(
        result_columns(&mut s, "SELECT 1 INTERSECT SELECT 1.0").await,
        [("?column?".to_string(), PgType::Numeric(None))]
    );
    assert_eq!(
        text_rows(&mut s, "SELECT 1 INTERSECT SELECT 1.0").await,
        ["1"]
    );
}

#[tokio::test]
async fn mismatched_sides_fail_as_in_postgresql() {
    let mut s = with_tables().await;
    for (sql, code) in [
        ("SELECT 1, 2 INTERSECT SELECT 1", "42601"),
        ("SELECT 1 EXCEPT ALL SELECT 1, 2", "42601"),
        ("SELECT 1 INTERSECT SELECT true", "42804"),
        ("SELECT x FROM l EXCEPT SELECT y FROM r", "42804"),
        ("SELECT 1 EXCEPT SELECT 'x'", "22P02"),
    ] {
        let e = error(&mut s, sql).await;
        assert_eq!(e.code, code, "{sql}: {e}");
    }
    let e = error(&mut s, "SELECT 1 INTERSECT SELECT true").await;
    assert_eq!(
        e.message,
        "INTERSECT types integer and boolean cannot be matched"
    );
    let e = error(&mut s, "SELECT 1, 2 EXCEPT SELECT 1").await;
    assert_eq!(
        e.message,
        "each EXCEPT query must have the same number of columns"
    );
}

#[tokio::test]
async fn the_right_side_is_held_within_the_memory_limit_and_the_left_streams() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    s.set_memory_limit(1024 * 1024);
    // The left side streams: a large left side needs no memory of its own.
    assert_eq!(
        text_rows(
            &mut s,
            "SELECT count(*) FROM (SELECT g FROM generate_series(1, 200000) g \
             EXCEPT ALL SELECT 1) e"
        )
        .await,
        ["199999"]
    );
    // The right side's distinct rows are counted in memory, and charged.
    for sql in [
        "SELECT count(*) FROM (SELECT 1 INTERSECT \
         SELECT g FROM generate_series(1, 200000) g) i",
        "SELECT count(*) FROM (SELECT g FROM generate_series(1, 200000) g \
         EXCEPT SELECT 1) e",
    ] {
        let e = error(&mut s, sql).await;
        assert_eq!(e.code, "53200", "{sql}: {e}");
    }
}
