//! `RIGHT [OUTER] JOIN` and `FULL [OUTER] JOIN` as PostgreSQL 15 answers
//! them: with ON (equalities, other conditions, constants), USING (the
//! merged column the right one's, or COALESCE of both for a full join, of
//! the common type) and NATURAL; PostgreSQL's 0A000 for a FULL JOIN whose
//! condition can be neither a merge nor a hash join's; the inner side and
//! its match flags charged to the statement (the expected rows are
//! PostgreSQL 15's).

use rocklake_sql::{MemoryStorage, Session};
use rocklake_types::datum::PgType;

mod support;
use support::{error, ok, result_columns, session, text_rows};

async fn with_tables() -> Session {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(
        &mut s,
        "CREATE TABLE ja (id int, v text); \
         INSERT INTO ja VALUES (1, 'a1'), (2, 'a2'), (2, 'a2b'), (NULL, 'an'), (5, 'a5'); \
         CREATE TABLE jb (id bigint, w text); \
         INSERT INTO jb VALUES (2, 'b2'), (3, 'b3'), (NULL, 'bn'), (5, 'b5'), (5, 'b5b'); \
         CREATE TABLE jc (id numeric, u text); \
         INSERT INTO jc VALUES (3, 'c3'), (6, 'c6'), (1, 'c1')",
    )
    .await;
    s
}

async fn check(s: &mut Session, cases: &[(&str, &[&str])]) {
    for (sql, expected) in cases {
        assert_eq!(text_rows(s, sql).await, *expected, "{sql}");
    }
}

#[tokio::test]
async fn right_and_full_joins_on_conditions() {
    let mut s = with_tables().await;
    check(
        &mut s,
        &[
            (
                "SELECT ja.id, v, jb.id, w FROM ja RIGHT JOIN jb ON ja.id = jb.id ORDER BY w, v",
                &[
                    "2|a2|2|b2",
                    "2|a2b|2|b2",
                    "NULL|NULL|3|b3",
                    "5|a5|5|b5",
                    "5|a5|5|b5b",
                    "NULL|NULL|NULL|bn",
                ],
            ),
            (
                "SELECT ja.id, v, jb.id, w FROM ja FULL OUTER JOIN jb ON ja.id = jb.id \
                 ORDER BY w, v",
                &[
                    "2|a2|2|b2",
                    "2|a2b|2|b2",
                    "NULL|NULL|3|b3",
                    "5|a5|5|b5",
                    "5|a5|5|b5b",
                    "NULL|NULL|NULL|bn",
                    "1|a1|NULL|NULL",
                    "NULL|an|NULL|NULL",
                ],
            ),
            (
                "SELECT v, w FROM ja RIGHT OUTER JOIN jb ON ja.id < jb.id ORDER BY w, v",
                &[
                    "a1|b2", "a1|b3", "a2|b3", "a2b|b3", "a1|b5", "a2|b5", "a2b|b5", "a1|b5b",
                    "a2|b5b", "a2b|b5b", "NULL|bn",
                ],
            ),
            (
                "SELECT v, w FROM ja FULL JOIN jb ON ja.id = jb.id AND v < 'a5' ORDER BY v, w",
                &[
                    "a1|NULL", "a2|b2", "a2b|b2", "a5|NULL", "an|NULL", "NULL|b3", "NULL|b5",
                    "NULL|b5b", "NULL|bn",
                ],
            ),
            ("SELECT count(*) FROM ja FULL JOIN jb ON true", &["25"]),
            (
                "SELECT v, w FROM ja FULL JOIN jb ON false ORDER BY v, w",
                &[
                    "a1|NULL", "a2|NULL", "a2b|NULL", "a5|NULL", "an|NULL", "NULL|b2", "NULL|b3",
                    "NULL|b5", "NULL|b5b", "NULL|bn",
                ],
            ),
            (
                "SELECT v, w FROM ja FULL JOIN jb ON ja.id = jb.id WHERE ja.id IS NULL \
                 ORDER BY v, w",
                &["an|NULL", "NULL|b3", "NULL|bn"],
            ),
            (
                "SELECT v, w, u FROM ja LEFT JOIN jb ON ja.id = jb.id \
                 RIGHT JOIN jc ON jc.id = ja.id ORDER BY u, v, w",
                &["a1|NULL|c1", "NULL|NULL|c3", "NULL|NULL|c6"],
            ),
            (
                "SELECT count(*), count(ja.id), count(jb.id) FROM ja FULL JOIN jb \
                 ON jb.id = ja.id + 1",
                &["8|4|5"],
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn using_and_natural_merge_the_columns_as_postgresql_does() {
    let mut s = with_tables().await;
    check(
        &mut s,
        &[
            (
                "SELECT * FROM ja FULL JOIN jb USING (id) ORDER BY id, v, w",
                &[
                    "1|a1|NULL",
                    "2|a2|b2",
                    "2|a2b|b2",
                    "3|NULL|b3",
                    "5|a5|b5",
                    "5|a5|b5b",
                    "NULL|an|NULL",
                    "NULL|NULL|bn",
                ],
            ),
            (
                "SELECT * FROM ja RIGHT JOIN jb USING (id) ORDER BY w, v",
                &[
                    "2|a2|b2",
                    "2|a2b|b2",
                    "3|NULL|b3",
                    "5|a5|b5",
                    "5|a5|b5b",
                    "NULL|NULL|bn",
                ],
            ),
            (
                "SELECT * FROM ja NATURAL FULL JOIN jb ORDER BY 1, 2, 3",
                &[
                    "1|a1|NULL",
                    "2|a2|b2",
                    "2|a2b|b2",
                    "3|NULL|b3",
                    "5|a5|b5",
                    "5|a5|b5b",
                    "NULL|an|NULL",
                    "NULL|NULL|bn",
                ],
            ),
            (
                "SELECT id, v, w, u FROM ja FULL JOIN jb USING (id) FULL JOIN jc USING (id) \
                 ORDER BY id, v, w",
                &[
                    "1|a1|NULL|c1",
                    "2|a2|b2|NULL",
                    "2|a2b|b2|NULL",
                    "3|NULL|b3|c3",
                    "5|a5|b5|NULL",
                    "5|a5|b5b|NULL",
                    "6|NULL|NULL|c6",
                    "NULL|an|NULL|NULL",
                    "NULL|NULL|bn|NULL",
                ],
            ),
            (
                "SELECT id, count(*) FROM ja FULL JOIN jb USING (id) GROUP BY id ORDER BY id",
                &["1|1", "2|2", "3|1", "5|2", "NULL|2"],
            ),
            (
                "SELECT id, ja.id, jb.id FROM ja FULL JOIN jb USING (id) WHERE id > 2 \
                 ORDER BY 1, 3",
                &["3|NULL|3", "5|5|5", "5|5|5"],
            ),
        ],
    )
    .await;
    let columns = |names: &[(&str, PgType)]| -> Vec<(String, PgType)> {
        names
            .iter()
            .map(|(n, t)| (n.to_string(), t.clone()))
            .collect()
    };
    assert_eq!(
        result_columns(&mut s, "SELECT * FROM ja FULL JOIN jb USING (id)").await,
        columns(&[
            ("id", PgType::Int8),
            ("v", PgType::Text),
            ("w", PgType::Text)
        ])
    );
    assert_eq!(
        result_columns(&mut s, "SELECT * FROM ja RIGHT JOIN jb USING (id)").await,
        columns(&[
            ("id", PgType::Int8),
            ("v", PgType::Text),
            ("w", PgType::Text)
        ])
    );
    assert_eq!(
        result_columns(
            &mut s,
            "SELECT id FROM ja FULL JOIN jb USING (id) FULL JOIN jc USING (id)"
        )
        .await,
        columns(&[("id", PgType::Numeric(None))])
    );
}

#[tokio::test]
async fn full_joins_need_a_merge_or_hash_joinable_condition() {
    let mut s = with_tables().await;
    for sql in [
        "SELECT * FROM ja FULL JOIN jb ON ja.id < jb.id",
        "SELECT * FROM ja FULL JOIN jb ON ja.id = jb.id OR v = w",
        "SELECT * FROM ja FULL JOIN jb ON ja.id = 1",
        "SELECT * FROM ja FULL JOIN jb ON ja.id = ja.id",
        "SELECT * FROM ja FULL JOIN jb ON ja.id IS NOT DISTINCT FROM jb.id",
        "SELECT * FROM ja FULL JOIN jb ON ja.id = jb.id + ja.id",
    ] {
        let e = error(&mut s, sql).await;
        assert_eq!(e.code, "0A000", "{sql}: {e}");
        assert_eq!(
            e.message,
            "FULL JOIN is only supported with merge-joinable or hash-joinable join conditions"
        );
    }
    // An equality between the two sides makes the rest any condition.
    for sql in [
        "SELECT count(*) FROM ja FULL JOIN jb ON ja.id = jb.id AND ja.id = 1",
        "SELECT count(*) FROM ja FULL JOIN jb ON jb.id = ja.id AND v < w",
        "SELECT count(*) FROM ja FULL JOIN jb ON ja.id::numeric = jb.id",
        "SELECT count(*) FROM ja FULL JOIN jb ON NOT (ja.id <> jb.id)",
        "SELECT count(*) FROM ja FULL JOIN jb ON 1 = 1",
        "SELECT count(*) FROM ja FULL JOIN jb ON v = w",
    ] {
        ok(&mut s, sql).await;
    }
    let e = error(&mut s, "SELECT * FROM ja FULL JOIN jb").await;
    assert_eq!(e.code, "42601");
    let e = error(&mut s, "SELECT * FROM ja RIGHT JOIN jb").await;
    assert_eq!(e.code, "42601");
    // `a, b FULL JOIN c` is `a CROSS JOIN (b FULL JOIN c)`: every row of
    // `a` with every row of the outer join (3 x 8 and 3 x 6 here).
    for (sql, rows) in [
        ("SELECT count(*) FROM jc, ja FULL JOIN jb USING (id)", "24"),
        (
            "SELECT count(*) FROM jc, ja RIGHT JOIN jb ON ja.id = jb.id",
            "18",
        ),
    ] {
        assert_eq!(
            text_rows(&mut s, sql).await,
            vec![rows.to_string()],
            "{sql}"
        );
    }
}

#[tokio::test]
async fn the_inner_side_and_its_match_flags_are_charged_and_the_outer_streams() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    s.set_memory_limit(1024 * 1024);
    assert_eq!(
        text_rows(
            &mut s,
            "SELECT count(*), count(o), count(i) FROM generate_series(1, 200000) o \
             FULL JOIN (VALUES (0), (7)) v(i) ON o = i"
        )
        .await,
        ["200001|200000|2"]
    );
    let e = error(
        &mut s,
        "SELECT count(*) FROM (VALUES (1)) v(o) \
         RIGHT JOIN generate_series(1, 200000) i ON o = i",
    )
    .await;
    assert_eq!(e.code, "53200", "{e}");
}
