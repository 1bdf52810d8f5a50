//! `SELECT DISTINCT ON (...)` as PostgreSQL 15 answers it: the first row of
//! each group in ORDER BY order (the rows come out in that order), the
//! groups' NULLs equal, expressions naming output columns by position or
//! name or being any expression, PostgreSQL's 42P10 errors, and without an
//! ORDER BY the first row of each group in input order (the expected rows
//! are PostgreSQL 15's).

use rocklake_sql::{MemoryStorage, Session};

mod support;
use support::{error, ok, session, text_rows};

async fn with_tables() -> Session {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(
        &mut s,
        "CREATE TABLE l (x int, y text); \
         INSERT INTO l VALUES (1, 'a'), (1, 'a'), (1, 'a'), (2, 'b'), (2, 'b'), \
         (NULL, NULL), (NULL, NULL), (3, 'c'); \
         CREATE TABLE sr (x bigint, y varchar, z numeric); \
         INSERT INTO sr VALUES (1, 'a', 1.5), (2, 'b', 2.5), (2, 'b', 0), (2, 'b', NULL), \
         (NULL, NULL, 7), (4, 'd', 4)",
    )
    .await;
    s
}

#[tokio::test]
async fn the_first_row_of_each_group_in_order_by_order() {
    let mut s = with_tables().await;
    let cases: &[(&str, &[&str])] = &[
        (
            "SELECT DISTINCT ON (x) x, y FROM l ORDER BY x, y DESC",
            &["1|a", "2|b", "3|c", "NULL|NULL"],
        ),
        (
            "SELECT DISTINCT ON (x) x, y FROM l ORDER BY x NULLS FIRST, y",
            &["NULL|NULL", "1|a", "2|b", "3|c"],
        ),
        (
            "SELECT DISTINCT ON (y) x, y, z FROM sr ORDER BY y, z DESC NULLS LAST",
            &["1|a|1.5", "2|b|2.5", "4|d|4", "NULL|NULL|7"],
        ),
        (
            "SELECT DISTINCT ON (x) y, z FROM sr ORDER BY x, z",
            &["a|1.5", "b|0", "d|4", "NULL|7"],
        ),
        (
            "SELECT DISTINCT ON (x) x, z FROM sr ORDER BY x DESC, z DESC",
            &["NULL|7", "4|4", "2|NULL", "1|1.5"],
        ),
        (
            "SELECT DISTINCT ON (y) y, z FROM sr ORDER BY y, z NULLS FIRST",
            &["a|1.5", "b|NULL", "d|4", "NULL|7"],
        ),
        // ORDER BY only some of the expressions: the others sort next.
        (
            "SELECT DISTINCT ON (x, y) x, y FROM l ORDER BY y DESC",
            &["NULL|NULL", "3|c", "2|b", "1|a"],
        ),
        // A repeated ORDER BY key is dropped, whatever its direction.
        (
            "SELECT DISTINCT ON (x) x, y FROM l ORDER BY x, y, x DESC LIMIT 2",
            &["1|a", "2|b"],
        ),
        (
            "SELECT DISTINCT ON (x) x, count(*) FROM l GROUP BY x ORDER BY x",
            &["1|3", "2|2", "3|1", "NULL|2"],
        ),
        (
            "SELECT count(*) FROM (SELECT DISTINCT ON (x) x FROM l) s",
            &["4"],
        ),
        (
            "SELECT DISTINCT ON (x) x, y FROM l ORDER BY x OFFSET 3",
            &["NULL|NULL"],
        ),
    ];
    for (sql, expected) in cases {
        assert_eq!(text_rows(&mut s, sql).await, *expected, "{sql}");
    }
}

#[tokio::test]
async fn expressions_name_output_columns_or_anything() {
    let mut s = with_tables().await;
    let cases: &[(&str, &[&str])] = &[
        (
            "SELECT DISTINCT ON (1) x AS k, y FROM l ORDER BY k",
            &["1|a", "2|b", "3|c", "NULL|NULL"],
        ),
        (
            "SELECT DISTINCT ON (k) x AS k, y FROM l ORDER BY k DESC, y",
            &["NULL|NULL", "3|c", "2|b", "1|a"],
        ),
        (
            "SELECT DISTINCT ON (l.x) x, y FROM l ORDER BY x, y",
            &["1|a", "2|b", "3|c", "NULL|NULL"],
        ),
        (
            "SELECT DISTINCT ON (x + 1) y FROM l ORDER BY x + 1 DESC",
            &["NULL", "c", "b", "a"],
        ),
        (
            "SELECT DISTINCT ON (upper(y)) y FROM l ORDER BY upper(y), x",
            &["a", "b", "c", "NULL"],
        ),
        (
            "SELECT DISTINCT ON (x) * FROM l ORDER BY x, y",
            &["1|a", "2|b", "3|c", "NULL|NULL"],
        ),
        // Values equal by PostgreSQL's equality are one group.
        (
            "SELECT DISTINCT ON (v) v FROM (VALUES (1.0::numeric), (1.00), (2)) t(v) ORDER BY v",
            &["1.0", "2"],
        ),
    ];
    for (sql, expected) in cases {
        assert_eq!(text_rows(&mut s, sql).await, *expected, "{sql}");
    }
}

#[tokio::test]
async fn without_order_by_the_first_row_of_each_group_in_input_order() {
    let mut s = with_tables().await;
    assert_eq!(
        text_rows(&mut s, "SELECT DISTINCT ON (x) z FROM sr").await,
        ["1.5", "2.5", "4", "7"]
    );
    assert_eq!(
        text_rows(
            &mut s,
            "SELECT DISTINCT ON (x) x, z FROM sr UNION ALL SELECT 9, 9 ORDER BY 1, 2"
        )
        .await,
        ["1|1.5", "2|2.5", "4|4", "9|9", "NULL|7"]
    );
}

#[tokio::test]
async fn expressions_not_leading_the_order_by_are_42p10() {
    let mut s = with_tables().await;
    for sql in [
        "SELECT DISTINCT ON (x) x, y FROM l ORDER BY y",
        "SELECT DISTINCT ON (x) x, y FROM l ORDER BY y, x",
        "SELECT DISTINCT ON (y) x FROM l ORDER BY x, y",
        "SELECT DISTINCT ON (x, y) x FROM l ORDER BY x, x + 1",
    ] {
        let e = error(&mut s, sql).await;
        assert_eq!(e.code, "42P10", "{sql}: {e}");
        assert_eq!(
            e.message,
            "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"
        );
    }
    let e = error(&mut s, "SELECT DISTINCT ON (3) x FROM l").await;
    assert_eq!(e.code, "42P10");
    assert_eq!(e.message, "DISTINCT ON position 3 is not in select list");
    let e = error(&mut s, "SELECT DISTINCT ON (nope) x FROM l").await;
    assert_eq!(e.code, "42703");
}

#[tokio::test]
async fn the_sort_before_it_is_charged_to_the_statement() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    s.set_memory_limit(1024 * 1024);
    let e = error(
        &mut s,
        "SELECT DISTINCT ON (g % 10) g FROM generate_series(1, 200000) g ORDER BY g % 10, g DESC",
    )
    .await;
    assert_eq!(e.code, "53200", "{e}");
    assert_eq!(
        text_rows(
            &mut s,
            "SELECT DISTINCT ON (g % 3) g FROM generate_series(1, 2000) g ORDER BY g % 3, g DESC"
        )
        .await,
        ["1998", "1999", "2000"]
    );
}
