//! Results picked in place from shared scans (`ResultRows::Picked`) hold
//! exactly the rows the general executor computes for the same query.

use std::sync::Arc;

use rocklake_sql::{MemoryStorage, Session};
use rocklake_types::datum::Row;
use rocklake_types::output::QueryOutput;
use rocklake_types::rows::ResultRows;

async fn output(s: &mut Session, sql: &str) -> QueryOutput {
    let mut outputs = s.execute(sql).await;
    assert_eq!(outputs.len(), 1, "{sql}");
    outputs.remove(0).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The rows of `sql`, and whether they were picked in place.
async fn result(s: &mut Session, sql: &str) -> (Vec<Row>, bool) {
    match output(s, sql).await {
        QueryOutput::Rows { rows, .. } | QueryOutput::CopyOut { rows, .. } => {
            let picked = matches!(rows, ResultRows::Picked(_));
            (rows.into_rows(), picked)
        }
        other => panic!("{sql}: expected rows, got {other:?}"),
    }
}

async fn catalog() -> Session {
    let mut s = Session::new(Arc::new(MemoryStorage::new()));
    for sql in [
        "CREATE TABLE t (id BIGINT PRIMARY KEY, name VARCHAR, at TIMESTAMP WITH TIME ZONE, ok BOOLEAN, ratio DOUBLE PRECISION, small INTEGER)",
        "INSERT INTO t VALUES (1, 'a', '2024-01-01 00:00:00+00', true, 0.5, 7), (2, NULL, NULL, NULL, NULL, NULL), (3, 'c', '2024-03-01 12:00:00+00', false, 2.5, -1), (4, 'd', '2024-04-01 00:00:00+00', true, NULL, 4)",
        "CREATE TABLE empty (id BIGINT, name VARCHAR)",
    ] {
        output(&mut s, sql).await;
    }
    s
}

/// Queries the picked path answers, each with an equivalent the general
/// executor answers (a LIMIT that keeps every row).
const PICKED: &[&str] = &[
    "SELECT id, name, at, ok, ratio, small FROM t",
    "SELECT small, id FROM t",
    "SELECT name FROM t WHERE ok",
    "SELECT id, name FROM t WHERE name IS NULL OR ratio > 1",
    "SELECT id FROM t WHERE NOT ok",
    "SELECT id, at FROM t WHERE id = (SELECT MAX(id) FROM t)",
    "SELECT id FROM t WHERE id IN (SELECT small FROM t)",
    "SELECT name, id FROM (SELECT id, name, ok FROM t WHERE id >= 2) AS sub",
    "SELECT \"id\" FROM (SELECT \"id\", \"name\" FROM \"t\" WHERE \"small\" > '0') AS __unnamed_subquery",
    "SELECT id, name FROM empty",
    "SELECT id FROM t WHERE id > 100",
];

#[tokio::test]
async fn picked_results_equal_the_general_executors() {
    let mut s = catalog().await;
    for sql in PICKED {
        let (picked, was_picked) = result(&mut s, sql).await;
        assert!(was_picked, "{sql}: expected a picked result");
        let general = format!("{sql} LIMIT 1000");
        let (rows, was_picked) = result(&mut s, &general).await;
        assert!(!was_picked, "{general}: LIMIT goes through the executor");
        assert_eq!(picked, rows, "{sql}");
        let copy = format!("COPY ({sql}) TO STDOUT (FORMAT \"binary\")");
        assert_eq!(result(&mut s, &copy).await, (rows, true), "{copy}");
    }
}

#[tokio::test]
async fn other_shapes_go_through_the_executor() {
    let mut s = catalog().await;
    for (sql, expected) in [
        (
            "SELECT id, id FROM t WHERE id = 1",
            vec!["Int8(1)", "Int8(1)"],
        ),
        ("SELECT id::INTEGER FROM t WHERE id = 1", vec!["Int4(1)"]),
        (
            "SELECT id, ctid FROM t WHERE id = 1",
            vec!["Int8(1)", "Tid { block: 0, offset: 1 }"],
        ),
        ("SELECT DISTINCT ok FROM t WHERE ok", vec!["Bool(true)"]),
        ("SELECT id FROM t WHERE id = 1 ORDER BY id", vec!["Int8(1)"]),
        ("SELECT count(*) FROM t WHERE id = 1", vec!["Int8(1)"]),
        (
            "SELECT small FROM (SELECT small::BIGINT AS small FROM t) AS sub WHERE small = 7",
            vec!["Int8(7)"],
        ),
    ] {
        let (rows, was_picked) = result(&mut s, sql).await;
        assert!(!was_picked, "{sql}");
        let texts: Vec<String> = rows[0].iter().map(|d| format!("{d:?}")).collect();
        assert_eq!(texts, expected, "{sql}");
    }
}
