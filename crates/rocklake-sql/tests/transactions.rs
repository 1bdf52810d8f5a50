//! Transaction characteristics (isolation level, read-only), savepoints
//! around statements that failed before writing, result columns' table
//! origins, row values (`information_schema._pg_expandarray`), and what
//! RockLake refuses with `0A000` (SERIALIZABLE); the rest is checked
//! differentially against PostgreSQL in `tests/e2e/test_sql_surface.py`.

use rocklake_sql::{MemoryStorage, Session};
use rocklake_types::datum::{ColumnDef, Datum, Row};
use rocklake_types::output::QueryOutput;
use rocklake_types::{SqlError, SqlState};

mod support;
use support::{ok, session};

async fn rows(s: &mut Session, sql: &str) -> (Vec<ColumnDef>, Vec<Row>) {
    match ok(s, sql).await.pop() {
        Some(QueryOutput::Rows { columns, rows })
        | Some(QueryOutput::Returning { columns, rows, .. }) => (columns, rows.into_rows()),
        other => panic!("{sql}: expected rows, got {other:?}"),
    }
}

async fn show(s: &mut Session, name: &str) -> String {
    let (_, rows) = rows(s, &format!("SHOW {name}")).await;
    rows[0][0].as_str().unwrap_or_default().to_string()
}

async fn err(s: &mut Session, sql: &str) -> SqlError {
    match s.execute(sql).await.into_iter().last() {
        Some(Err(e)) => e,
        other => panic!("{sql}: expected an error, got {other:?}"),
    }
}

async fn with_table() -> Session {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(&mut s, "CREATE TABLE t (id bigint PRIMARY KEY, v text)").await;
    ok(&mut s, "INSERT INTO t VALUES (1, 'one')").await;
    s
}

#[tokio::test]
async fn session_characteristics_set_the_defaults_and_read_only_is_enforced() {
    let mut s = with_table().await;
    ok(
        &mut s,
        "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
    )
    .await;
    assert_eq!(
        show(&mut s, "default_transaction_isolation").await,
        "repeatable read"
    );
    assert_eq!(
        show(&mut s, "transaction_isolation").await,
        "repeatable read"
    );
    assert_eq!(show(&mut s, "transaction_read_only").await, "on");
    for (sql, command) in [
        ("INSERT INTO t VALUES (2, 'two')", "INSERT"),
        ("UPDATE t SET v = 'x' WHERE false", "UPDATE"),
        ("DELETE FROM t", "DELETE"),
        ("CREATE TABLE u (a int)", "CREATE TABLE"),
        ("DROP TABLE t", "DROP TABLE"),
        ("ALTER TABLE t ADD COLUMN w int", "ALTER TABLE"),
    ] {
        let e = err(&mut s, sql).await;
        assert_eq!(e.code, SqlState::READ_ONLY_SQL_TRANSACTION, "{sql}");
        assert_eq!(
            e.message,
            format!("cannot execute {command} in a read-only transaction")
        );
    }
    // SET TRANSACTION READ WRITE before the first query of a block.
    ok(&mut s, "BEGIN").await;
    ok(&mut s, "SET TRANSACTION READ WRITE").await;
    assert_eq!(show(&mut s, "transaction_read_only").await, "off");
    ok(&mut s, "INSERT INTO t VALUES (2, 'two')").await;
    ok(&mut s, "COMMIT").await;
    // ... and not after it.
    ok(&mut s, "BEGIN").await;
    ok(&mut s, "SELECT 1").await;
    let e = err(&mut s, "SET TRANSACTION READ WRITE").await;
    assert_eq!(e.code, SqlState::ACTIVE_SQL_TRANSACTION);
    ok(&mut s, "ROLLBACK").await;
    ok(&mut s, "RESET default_transaction_read_only").await;
    ok(&mut s, "BEGIN READ ONLY").await;
    assert_eq!(show(&mut s, "transaction_read_only").await, "on");
    let e = err(&mut s, "INSERT INTO t VALUES (3, 'three')").await;
    assert_eq!(e.code, SqlState::READ_ONLY_SQL_TRANSACTION);
    ok(&mut s, "ROLLBACK").await;
    assert_eq!(show(&mut s, "transaction_read_only").await, "off");
    let (_, count) = rows(&mut s, "SELECT count(*) FROM t").await;
    assert_eq!(count[0][0], Datum::Int8(2));
}

#[tokio::test]
async fn settings_take_postgres_values_and_serializable_is_refused() {
    let mut s = with_table().await;
    ok(&mut s, "SET default_transaction_read_only = yes").await;
    assert_eq!(show(&mut s, "default_transaction_read_only").await, "on");
    let e = err(&mut s, "SET default_transaction_read_only = maybe").await;
    assert_eq!(e.code, SqlState::INVALID_PARAMETER_VALUE);
    assert_eq!(
        e.message,
        "parameter \"default_transaction_read_only\" requires a Boolean value"
    );
    ok(&mut s, "SET default_transaction_read_only TO DEFAULT").await;
    let e = err(&mut s, "SET default_transaction_isolation = 'bogus'").await;
    assert_eq!(e.code, SqlState::INVALID_PARAMETER_VALUE);
    // Snapshot isolation is not SERIALIZABLE: refused wherever it is asked.
    for sql in [
        "SET default_transaction_isolation = 'serializable'",
        "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE",
        "BEGIN ISOLATION LEVEL SERIALIZABLE",
    ] {
        let e = err(&mut s, sql).await;
        assert_eq!(e.code, SqlState::FEATURE_NOT_SUPPORTED, "{sql}");
    }
    assert_eq!(
        show(&mut s, "transaction_isolation").await,
        "read committed"
    );
    ok(&mut s, "BEGIN").await;
    let e = err(&mut s, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE").await;
    assert_eq!(e.code, SqlState::FEATURE_NOT_SUPPORTED);
    ok(&mut s, "ROLLBACK").await;
}

#[tokio::test]
async fn a_statement_that_failed_before_writing_leaves_the_savepoint_usable() {
    let mut s = with_table().await;
    ok(&mut s, "BEGIN").await;
    ok(&mut s, "INSERT INTO t VALUES (2, 'kept')").await;
    ok(&mut s, "SAVEPOINT a").await;
    let e = err(&mut s, "INSERT INTO t VALUES (2, 'duplicate')").await;
    assert_eq!(e.code, SqlState::UNIQUE_VIOLATION);
    ok(&mut s, "ROLLBACK TO SAVEPOINT a").await;
    ok(&mut s, "COMMIT").await;
    let (_, kept) = rows(&mut s, "SELECT v FROM t WHERE id = 2").await;
    assert_eq!(kept, vec![vec![Datum::text("kept")]]);
    // A statement that wrote still cannot be undone.
    ok(&mut s, "BEGIN").await;
    ok(&mut s, "SAVEPOINT b").await;
    ok(&mut s, "INSERT INTO t VALUES (3, 'written')").await;
    let e = err(&mut s, "ROLLBACK TO SAVEPOINT b").await;
    assert_eq!(e.code, SqlState::FEATURE_NOT_SUPPORTED);
    ok(&mut s, "ROLLBACK").await;
}

#[tokio::test]
async fn result_columns_name_the_table_columns_they_read() {
    let mut s = with_table().await;
    let (columns, _) = rows(
        &mut s,
        "SELECT id, t.v AS w, id + 1, s.v FROM (SELECT v FROM t) s, t WHERE false",
    )
    .await;
    let origins: Vec<_> = columns.iter().map(|c| c.table_column).collect();
    let oid = origins[0].expect("id reads t.id").0;
    assert_eq!(
        origins,
        vec![Some((oid, 1)), Some((oid, 2)), None, Some((oid, 2))]
    );
    // Catalog tables and views: PostgreSQL's oids and column numbers.
    let (columns, _) = rows(
        &mut s,
        "SELECT relname, indexname FROM pg_class, pg_indexes WHERE false",
    )
    .await;
    assert_eq!(columns[0].table_column, Some((1259, 2)));
    assert_eq!(columns[1].table_column, Some((12_043, 3)));
}

#[tokio::test]
async fn row_values_of_pg_expandarray_and_their_fields() {
    let mut s = with_table().await;
    let (columns, values) = rows(
        &mut s,
        "SELECT k, (k).x, (k).n FROM \
         (SELECT information_schema._pg_expandarray(ARRAY['a', NULL]) AS k) s",
    )
    .await;
    assert_eq!(columns[0].pg_type.oid(), 2249);
    assert_eq!(
        values,
        vec![
            vec![
                Datum::Record(vec![Datum::text("a"), Datum::Int4(1)].into()),
                Datum::text("a"),
                Datum::Int4(1)
            ],
            vec![
                Datum::Record(vec![Datum::Null, Datum::Int4(2)].into()),
                Datum::Null,
                Datum::Int4(2)
            ],
        ]
    );
    let (_, text) = rows(
        &mut s,
        "SELECT k::text, k IS NULL, k IS NOT NULL FROM \
         (SELECT information_schema._pg_expandarray(ARRAY['a b', NULL]) AS k) s",
    )
    .await;
    assert_eq!(
        text,
        vec![
            vec![
                Datum::text("(\"a b\",1)"),
                Datum::Bool(false),
                Datum::Bool(true)
            ],
            vec![Datum::text("(,2)"), Datum::Bool(false), Datum::Bool(false)],
        ]
    );
    // Not on the search path; in FROM its fields are the columns.
    let e = err(&mut s, "SELECT _pg_expandarray(ARRAY[1])").await;
    assert_eq!(e.code, SqlState::UNDEFINED_FUNCTION);
    let (cols, found) = rows(
        &mut s,
        "SELECT * FROM information_schema._pg_expandarray(ARRAY[7, 8])",
    )
    .await;
    let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["x", "n"]);
    assert_eq!(
        found,
        [
            vec![Datum::Int4(7), Datum::Int4(1)],
            vec![Datum::Int4(8), Datum::Int4(2)]
        ]
    );
    let e = err(&mut s, "SELECT (k).x FROM (SELECT 1 AS k) s").await;
    assert_eq!(e.code, SqlState::WRONG_OBJECT_TYPE);
}

/// A transaction block takes its snapshot at its first statement that reads
/// or writes data, as PostgreSQL does; `now()` is the snapshot's time, so a
/// DuckLake commit's snapshot time is later than those of the commits it
/// sees.
#[tokio::test]
async fn a_block_takes_its_snapshot_at_its_first_query() {
    let storage = MemoryStorage::new();
    let mut a = session(&storage);
    let mut b = session(&storage);
    ok(
        &mut a,
        "CREATE TABLE t (id bigint PRIMARY KEY, at timestamptz)",
    )
    .await;
    let count = "SELECT count(*) FROM t";
    ok(&mut a, "BEGIN ISOLATION LEVEL REPEATABLE READ; SAVEPOINT p").await;
    ok(&mut a, "SHOW transaction_isolation").await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    ok(&mut b, "INSERT INTO t VALUES (1, now())").await;
    let (_, counted) = rows(&mut a, count).await;
    assert_eq!(
        counted[0][0],
        Datum::Int8(1),
        "a commit after BEGIN is seen"
    );
    ok(&mut b, "INSERT INTO t VALUES (2, now())").await;
    let (_, counted) = rows(&mut a, count).await;
    assert_eq!(
        counted[0][0],
        Datum::Int8(1),
        "the snapshot of the first query"
    );
    let (_, seen) = rows(&mut a, "SELECT count(*) FROM t WHERE at < now()").await;
    assert_eq!(
        seen[0][0],
        Datum::Int8(1),
        "now() is after the commit it sees"
    );
    ok(&mut a, "COMMIT").await;
    let (_, counted) = rows(&mut a, count).await;
    assert_eq!(counted[0][0], Datum::Int8(2));
}
