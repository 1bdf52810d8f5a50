//! Explicit window frames as PostgreSQL 15 computes them: `ROWS`, `RANGE`
//! (`UNBOUNDED`/`CURRENT ROW` bounds, peers included) and `GROUPS`, empty
//! frames, offsets evaluated once, the functions that ignore frames, and
//! PostgreSQL's errors; `RANGE` with an offset is 0A000 (the expected rows
//! are PostgreSQL 15's).

use rocklake_sql::{MemoryStorage, Session};

mod support;
use support::{error, ok, session, text_rows};

async fn with_table() -> Session {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(
        &mut s,
        "CREATE TABLE w (g text, o int, v int); \
         INSERT INTO w VALUES ('a', 1, 10), ('a', 2, 20), ('a', 2, 25), ('a', 3, NULL), \
         ('a', 5, 50), ('b', 1, 1), ('b', 1, 2), ('b', 4, NULL)",
    )
    .await;
    s
}

async fn check(s: &mut Session, sql: &str, expected: &[&str]) {
    assert_eq!(text_rows(s, sql).await, expected, "{sql}");
}

#[tokio::test]
async fn rows_frames_slide_over_the_partition() {
    let mut s = with_table().await;
    check(
        &mut s,
        "SELECT g, o, v, \
         sum(v) OVER (PARTITION BY g ORDER BY o, v ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), \
         sum(v) OVER (PARTITION BY g ORDER BY o ROWS UNBOUNDED PRECEDING), \
         sum(v) OVER (PARTITION BY g ORDER BY o) FROM w ORDER BY g, o, v",
        &[
            "a|1|10|30|10|10",
            "a|2|20|55|30|55",
            "a|2|25|45|55|55",
            "a|3|NULL|75|55|55",
            "a|5|50|50|105|105",
            "b|1|1|3|1|3",
            "b|1|2|3|3|3",
            "b|4|NULL|2|3|3",
        ],
    )
    .await;
    check(
        &mut s,
        "SELECT o, v, \
         max(v) OVER (ORDER BY o, v ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), \
         min(v) OVER (ORDER BY o, v ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), \
         avg(v) OVER (ORDER BY o, v ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING), \
         sum(v) OVER (ORDER BY o, v ROWS 2 PRECEDING) FROM w ORDER BY o, v",
        &[
            "1|1|1|1|4.3333333333333333|1",
            "1|2|2|1|10.6666666666666667|3",
            "1|10|10|1|18.3333333333333333|13",
            "2|20|20|2|22.5000000000000000|32",
            "2|25|25|10|25.0000000000000000|55",
            "3|NULL|25|20|50.0000000000000000|45",
            "4|NULL|25|25|50.0000000000000000|25",
            "5|50|50|50|50.0000000000000000|50",
        ],
    )
    .await;
    // Sums and averages whose values leave the frame, of each kind.
    check(
        &mut s,
        "SELECT o, v, sum(v::float8 / 3) OVER (ORDER BY o, v ROWS 1 PRECEDING), \
         sum(v::bigint) OVER (ORDER BY o, v ROWS 1 PRECEDING), \
         sum(CASE WHEN o % 2 = 0 THEN v + 0.5 ELSE v::numeric END) \
         OVER (ORDER BY o, v ROWS 1 PRECEDING), \
         avg(v::bigint) OVER (ORDER BY o, v ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING), \
         bool_and(v > 15) OVER (ORDER BY o, v ROWS 1 PRECEDING) FROM w ORDER BY o, v",
        &[
            "1|1|0.3333333333333333|1|1|1.5000000000000000|f",
            "1|2|1|3|3|6.0000000000000000|f",
            "1|10|4|12|12|15.0000000000000000|f",
            "2|20|10|30|30.5|22.5000000000000000|f",
            "2|25|15|45|46.0|25.0000000000000000|t",
            "3|NULL|8.333333333333334|25|25.5|NULL|t",
            "4|NULL|NULL|NULL|NULL|50.0000000000000000|NULL",
            "5|50|16.666666666666668|50|50|50.0000000000000000|t",
        ],
    )
    .await;
}

#[tokio::test]
async fn empty_frames_and_large_or_rounded_offsets() {
    let mut s = with_table().await;
    check(
        &mut s,
        "SELECT g, o, v, first_value(v) OVER (PARTITION BY g ORDER BY o, v \
         ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING), last_value(v) OVER (PARTITION BY g \
         ORDER BY o, v ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING), count(*) OVER (PARTITION BY g \
         ORDER BY o, v ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) FROM w ORDER BY g, o, v",
        &[
            "a|1|10|20|25|2",
            "a|2|20|25|NULL|2",
            "a|2|25|NULL|50|2",
            "a|3|NULL|50|50|1",
            "a|5|50|NULL|NULL|0",
            "b|1|1|2|NULL|2",
            "b|1|2|NULL|NULL|1",
            "b|4|NULL|NULL|NULL|0",
        ],
    )
    .await;
    check(
        &mut s,
        "SELECT o, sum(v) OVER (ORDER BY o, v ROWS BETWEEN 2 FOLLOWING AND 1 FOLLOWING), \
         count(*) OVER (ORDER BY o, v ROWS BETWEEN 2 FOLLOWING AND 1 FOLLOWING), \
         sum(v) OVER (ORDER BY o, v ROWS BETWEEN 1.5 PRECEDING AND CURRENT ROW), \
         sum(v) OVER (ORDER BY o, v ROWS BETWEEN 1000000000000 PRECEDING \
         AND 9223372036854775807 FOLLOWING) FROM w ORDER BY o, v",
        &[
            "1|NULL|0|1|108",
            "1|NULL|0|3|108",
            "1|NULL|0|13|108",
            "2|NULL|0|32|108",
            "2|NULL|0|55|108",
            "3|NULL|0|45|108",
            "4|NULL|0|25|108",
            "5|NULL|0|50|108",
        ],
    )
    .await;
    check(
        &mut s,
        "SELECT sum(o) OVER (ORDER BY o ROWS BETWEEN (SELECT 1) PRECEDING AND CURRENT ROW) \
         FROM w ORDER BY o LIMIT 3",
        &["1", "2", "2"],
    )
    .await;
}

#[tokio::test]
async fn range_and_groups_frames_count_peers() {
    let mut s = with_table().await;
    check(
        &mut s,
        "SELECT o, v, count(*) OVER (ORDER BY o RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING), \
         sum(v) OVER (PARTITION BY g ORDER BY o RANGE BETWEEN UNBOUNDED PRECEDING \
         AND UNBOUNDED FOLLOWING), last_value(v) OVER (ORDER BY o RANGE BETWEEN \
         UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM w ORDER BY o, v, g",
        &[
            "1|1|8|3|50",
            "1|2|8|3|50",
            "1|10|8|105|50",
            "2|20|5|105|50",
            "2|25|5|105|50",
            "3|NULL|3|105|50",
            "4|NULL|2|3|50",
            "5|50|1|105|50",
        ],
    )
    .await;
    check(
        &mut s,
        "SELECT g, sum(v) OVER (PARTITION BY g RANGE BETWEEN CURRENT ROW AND CURRENT ROW) \
         FROM w ORDER BY 1, 2",
        &[
            "a|105", "a|105", "a|105", "a|105", "a|105", "b|3", "b|3", "b|3",
        ],
    )
    .await;
    check(
        &mut s,
        "SELECT o, v, sum(v) OVER (ORDER BY o GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING), \
         count(v) OVER (ORDER BY o GROUPS 1 PRECEDING), \
         count(*) OVER (ORDER BY o GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING), \
         first_value(v) OVER (ORDER BY o, v GROUPS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), \
         sum(v) OVER (ORDER BY o GROUPS BETWEEN 2 FOLLOWING AND 1 FOLLOWING) FROM w ORDER BY o, v",
        &[
            "1|1|58|3|5|2|NULL",
            "1|2|58|3|5|10|NULL",
            "1|10|58|3|5|20|NULL",
            "2|20|58|5|3|25|NULL",
            "2|25|58|5|3|NULL|NULL",
            "3|NULL|45|2|2|NULL|NULL",
            "4|NULL|50|0|2|50|NULL",
            "5|50|50|1|1|NULL|NULL",
        ],
    )
    .await;
    // Functions that do not read a frame ignore it.
    check(
        &mut s,
        "SELECT o, v, row_number() OVER (ORDER BY o, v ROWS 1 PRECEDING), \
         lag(v) OVER (ORDER BY o, v ROWS BETWEEN CURRENT ROW AND CURRENT ROW), \
         rank() OVER (ORDER BY o ROWS 1 PRECEDING) FROM w ORDER BY o, v",
        &[
            "1|1|1|NULL|1",
            "1|2|2|1|1",
            "1|10|3|2|1",
            "2|20|4|10|4",
            "2|25|5|20|4",
            "3|NULL|6|25|6",
            "4|NULL|7|NULL|7",
            "5|50|8|NULL|8",
        ],
    )
    .await;
}

#[tokio::test]
async fn impossible_frames_and_bad_offsets_fail_as_in_postgresql() {
    let mut s = with_table().await;
    let over = |frame: &str| format!("SELECT sum(o) OVER (ORDER BY o {frame}) FROM w");
    for (frame, code, message) in [
        (
            "ROWS UNBOUNDED FOLLOWING",
            "42P20",
            "frame start cannot be UNBOUNDED FOLLOWING",
        ),
        (
            "ROWS 1 FOLLOWING",
            "42P20",
            "frame starting from following row cannot end with current row",
        ),
        (
            "ROWS BETWEEN CURRENT ROW AND UNBOUNDED PRECEDING",
            "42P20",
            "frame end cannot be UNBOUNDED PRECEDING",
        ),
        (
            "ROWS BETWEEN CURRENT ROW AND 1 PRECEDING",
            "42P20",
            "frame starting from current row cannot have preceding rows",
        ),
        (
            "ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW",
            "42P20",
            "frame starting from following row cannot have preceding rows",
        ),
        (
            "ROWS BETWEEN -1 PRECEDING AND CURRENT ROW",
            "22013",
            "frame starting offset must not be negative",
        ),
        (
            "ROWS BETWEEN CURRENT ROW AND -2 FOLLOWING",
            "22013",
            "frame ending offset must not be negative",
        ),
        (
            "ROWS BETWEEN NULL PRECEDING AND CURRENT ROW",
            "22004",
            "frame starting offset must not be null",
        ),
        (
            "ROWS BETWEEN CURRENT ROW AND NULL FOLLOWING",
            "22004",
            "frame ending offset must not be null",
        ),
        (
            "ROWS BETWEEN v PRECEDING AND CURRENT ROW",
            "42P10",
            "argument of ROWS must not contain variables",
        ),
        (
            "GROUPS o PRECEDING",
            "42P10",
            "argument of GROUPS must not contain variables",
        ),
        (
            "RANGE BETWEEN 1 PRECEDING AND CURRENT ROW",
            "0A000",
            "RANGE with offset PRECEDING/FOLLOWING is not supported",
        ),
    ] {
        let sql = over(frame);
        let e = error(&mut s, &sql).await;
        assert_eq!(e.code, code, "{sql}: {e}");
        assert_eq!(e.message, message, "{sql}");
    }
    let e = error(&mut s, "SELECT sum(o) OVER (GROUPS 1 PRECEDING) FROM w").await;
    assert_eq!(e.code, "42P20");
    assert_eq!(e.message, "GROUPS mode requires an ORDER BY clause");
    let e = error(
        &mut s,
        "SELECT sum(o) OVER (ORDER BY o ROWS BETWEEN 'a' PRECEDING AND CURRENT ROW) FROM w",
    )
    .await;
    assert_eq!(e.code, "22P02");
    // Offsets are evaluated even when there are no rows.
    let e = error(
        &mut s,
        "SELECT sum(o) OVER (ORDER BY o ROWS BETWEEN NULL PRECEDING AND CURRENT ROW) \
         FROM w WHERE false",
    )
    .await;
    assert_eq!(e.code, "22004");
}

#[tokio::test]
async fn a_sliding_frame_over_many_rows_stays_linear_for_invertible_aggregates() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    // count and integer sums take rows out as they leave the frame: linear.
    check(
        &mut s,
        "SELECT sum(c), sum(t) FROM (SELECT \
         count(*) OVER (ORDER BY g ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS c, \
         sum(g) OVER (ORDER BY g ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS t \
         FROM generate_series(1, 20000) g) s",
        &["200010000|2666866670000"],
    )
    .await;
}
