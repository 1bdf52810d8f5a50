//! Session-level behaviour: statements, transactions, failed blocks,
//! concurrency, pg_catalog queries and unsupported SQL.

use rocklake_sql::{MemoryStorage, Session};
use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};
use rocklake_types::output::{CollectSink, QueryOutput, TxStatus};
use rocklake_types::{SqlError, SqlState};

mod support;
use support::{ok, session};

async fn one(s: &mut Session, sql: &str) -> QueryOutput {
    let mut v = ok(s, sql).await;
    assert_eq!(v.len(), 1, "{sql}");
    v.remove(0)
}

async fn rows(s: &mut Session, sql: &str) -> (Vec<ColumnDef>, Vec<Row>) {
    match one(s, sql).await {
        QueryOutput::Rows { columns, rows } | QueryOutput::Returning { columns, rows, .. } => {
            (columns, rows.into_rows())
        }
        other => panic!("{sql}: expected rows, got {other:?}"),
    }
}

async fn err(s: &mut Session, sql: &str) -> SqlError {
    let v = s.execute(sql).await;
    match v.into_iter().last() {
        Some(Err(e)) => e,
        other => panic!("{sql}: expected an error, got {other:?}"),
    }
}

fn tag(o: &QueryOutput) -> &str {
    match o {
        QueryOutput::Command { tag, .. } | QueryOutput::Returning { tag, .. } => tag,
        other => panic!("expected a command, got {other:?}"),
    }
}

const SNAPSHOT: &str = "CREATE TABLE \"public\".\"ducklake_snapshot\"(\"snapshot_id\" BIGINT PRIMARY KEY, \"snapshot_time\" TIMESTAMP WITH TIME ZONE, \"schema_version\" BIGINT, \"next_catalog_id\" BIGINT, \"next_file_id\" BIGINT)";

async fn with_snapshot() -> (MemoryStorage, Session) {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    assert_eq!(tag(&one(&mut s, SNAPSHOT).await), "CREATE TABLE");
    (storage, s)
}

#[tokio::test]
async fn select_literals_and_functions() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    let (cols, r) = rows(
        &mut s,
        "SELECT 1, 'a' || 'b' AS x, NULL, 7 / 2, 1.5 + 1, COALESCE(NULL, 3)",
    )
    .await;
    let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["?column?", "x", "?column?", "?column?", "?column?", "coalesce"]
    );
    assert_eq!(cols[0].pg_type, PgType::Int4);
    assert_eq!(cols[2].pg_type, PgType::Text);
    assert_eq!(
        r[0],
        vec![
            Datum::Int4(1),
            Datum::Text("ab".into()),
            Datum::Null,
            Datum::Int4(3),
            Datum::Numeric("2.5".into()),
            Datum::Int4(3)
        ]
    );
    let e = err(&mut s, "SELECT 1/0").await;
    assert_eq!(e.code, "22012");
    let e = err(&mut s, "SELECT 2147483647::int4 + 1").await;
    assert_eq!(e.code, "22003");
    let (_, r) = rows(&mut s, "SELECT CASE WHEN 1 > 2 THEN 'a' ELSE 'b' END, NULLIF(1, 1), GREATEST(1, 5, 3), 'abc' LIKE 'a%', 'ABC' ILIKE 'a_c'").await;
    assert_eq!(
        r[0],
        vec![
            Datum::Text("b".into()),
            Datum::Null,
            Datum::Int4(5),
            Datum::Bool(true),
            Datum::Bool(true)
        ]
    );
    let (_, r) = rows(&mut s, "SELECT NULL = 1, NULL AND false, NULL OR true, 1 IN (2, NULL), 1 NOT IN (2, 3), 2 BETWEEN 1 AND 3").await;
    assert_eq!(
        r[0],
        vec![
            Datum::Null,
            Datum::Bool(false),
            Datum::Bool(true),
            Datum::Null,
            Datum::Bool(true),
            Datum::Bool(true)
        ]
    );
    let (_, r) = rows(&mut s, "SELECT CAST('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' AS UUID), '(0,1)'::tid, '2024-01-01 00:00:00+02'::timestamptz, lower('AbC'), length('héllo'), substring('hello' from 2 for 3), replace('aXb', 'X', '-'), abs(-4)").await;
    assert_eq!(
        r[0][1],
        Datum::Tid {
            block: 0,
            offset: 1
        }
    );
    assert_eq!(r[0][3], Datum::Text("abc".into()));
    assert_eq!(r[0][4], Datum::Int4(5));
    assert_eq!(r[0][5], Datum::Text("ell".into()));
    assert_eq!(r[0][6], Datum::Text("a-b".into()));
    assert_eq!(r[0][7], Datum::Int4(4));
    let e = err(&mut s, "SELECT (SELECT 1 UNION ALL SELECT 2)").await;
    assert_eq!(e.code, "21000");
}

#[tokio::test]
async fn insert_update_delete_round_trip() {
    let (_storage, mut s) = with_snapshot().await;
    let out = one(
        &mut s,
        "INSERT INTO \"public\".ducklake_snapshot VALUES (1, NOW(), 0, 1, 0), (2, NOW(), 1, 2, 3)",
    )
    .await;
    assert_eq!(tag(&out), "INSERT 0 2");
    let (cols, r) = rows(&mut s, "SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM \"public\".ducklake_snapshot WHERE snapshot_id = ( SELECT MAX(snapshot_id) FROM \"public\".ducklake_snapshot )").await;
    assert_eq!(cols[0].pg_type, PgType::Int8);
    assert_eq!(
        r,
        vec![vec![
            Datum::Int8(2),
            Datum::Int8(1),
            Datum::Int8(2),
            Datum::Int8(3)
        ]]
    );
    // Unknown-typed literal against bigint, as postgres_scanner pushes filters.
    let (_, r) = rows(
        &mut s,
        "SELECT \"snapshot_id\" FROM \"public\".\"ducklake_snapshot\" WHERE \"snapshot_id\" = '1'",
    )
    .await;
    assert_eq!(r, vec![vec![Datum::Int8(1)]]);
    let e = err(
        &mut s,
        "SELECT 1 FROM ducklake_snapshot WHERE snapshot_id = 'x'",
    )
    .await;
    assert_eq!(e.code, "22P02");
    assert_eq!(tag(&one(&mut s, "UPDATE \"public\".ducklake_snapshot SET schema_version = 9 WHERE snapshot_id IN (SELECT MIN(snapshot_id) FROM ducklake_snapshot)").await), "UPDATE 1");
    let (_, r) = rows(
        &mut s,
        "SELECT schema_version, ctid FROM ducklake_snapshot ORDER BY snapshot_id",
    )
    .await;
    assert_eq!(r[0][0], Datum::Int8(9));
    let Datum::Tid { block, offset } = r[1][1] else {
        panic!("ctid")
    };
    let del =
        format!("DELETE FROM \"public\".ducklake_snapshot WHERE ctid IN ('({block},{offset})')");
    assert_eq!(tag(&one(&mut s, &del).await), "DELETE 1");
    let (_, r) = rows(&mut s, "SELECT count(*) FROM ducklake_snapshot WHERE ctid BETWEEN '(0,0)'::tid AND '(4294967295,0)'::tid").await;
    assert_eq!(r, vec![vec![Datum::Int8(1)]]);
    let e = err(
        &mut s,
        "INSERT INTO ducklake_snapshot VALUES (NULL, NOW(), 0, 0, 0)",
    )
    .await;
    assert_eq!(e.code, "23502");
}

#[tokio::test]
async fn update_from_values_cte() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(&mut s, "CREATE TABLE \"public\".\"ducklake_table_column_stats\"(\"table_id\" BIGINT, \"column_id\" BIGINT, \"contains_null\" BOOLEAN, \"contains_nan\" BOOLEAN, \"min_value\" VARCHAR, \"max_value\" VARCHAR, \"extra_stats\" VARCHAR)").await;
    ok(&mut s, "INSERT INTO \"public\".ducklake_table_column_stats VALUES (1, 1, true, NULL, '0', '1', NULL), (1, 2, true, NULL, 'a', 'b', NULL), (2, 1, true, NULL, 'q', 'r', NULL)").await;
    let out = one(&mut s, "WITH new_values(tid, cid, new_contains_null, new_contains_nan, new_min, new_max, new_extra_stats) AS ( VALUES (1, 1, false, NULL, '100000', '200007', NULL),(1, 2, false, NULL, 'a', 'z', NULL) ) UPDATE \"public\".ducklake_table_column_stats SET contains_null=CAST(new_contains_null AS BOOLEAN), contains_nan=CAST(new_contains_nan AS BOOLEAN), min_value=new_min, max_value=new_max, extra_stats=new_extra_stats FROM new_values WHERE table_id=tid AND column_id=cid").await;
    assert_eq!(tag(&out), "UPDATE 2");
    let (_, r) = rows(&mut s, "SELECT table_id, column_id, contains_null, min_value, max_value FROM ducklake_table_column_stats ORDER BY table_id, column_id DESC").await;
    assert_eq!(
        r[0],
        vec![
            Datum::Int8(1),
            Datum::Int8(2),
            Datum::Bool(false),
            Datum::Text("a".into()),
            Datum::Text("z".into())
        ]
    );
    assert_eq!(r[1][3], Datum::Text("100000".into()));
    assert_eq!(
        r[2],
        vec![
            Datum::Int8(2),
            Datum::Int8(1),
            Datum::Bool(true),
            Datum::Text("q".into()),
            Datum::Text("r".into())
        ]
    );
}

#[tokio::test]
async fn multi_statement_is_one_implicit_transaction() {
    let (_storage, mut s) = with_snapshot().await;
    let res = s.execute("INSERT INTO ducklake_snapshot VALUES (1, NOW(), 0, 0, 0); INSERT INTO ducklake_snapshot VALUES (1, NOW(), 0, 0, 0); SELECT 1").await;
    assert_eq!(res.len(), 2, "stops after the first error");
    assert!(res[0].is_ok());
    assert_eq!(res[1].as_ref().unwrap_err().code, "23505");
    assert_eq!(s.status(), TxStatus::Idle);
    let (_, r) = rows(&mut s, "SELECT count(*) FROM ducklake_snapshot").await;
    assert_eq!(
        r,
        vec![vec![Datum::Int8(0)]],
        "the whole string rolled back"
    );
}

#[tokio::test]
async fn failed_block_semantics() {
    let (_storage, mut s) = with_snapshot().await;
    let res = s.execute("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ; INSERT INTO ducklake_snapshot VALUES (1, NOW(), 0, 0, 0)").await;
    assert!(res.iter().all(|r| r.is_ok()));
    assert_eq!(s.status(), TxStatus::InBlock);
    let e = err(&mut s, "SELECT * FROM no_such_table").await;
    assert_eq!(e.code, "42P01");
    assert_eq!(s.status(), TxStatus::Failed);
    let e = err(&mut s, "SELECT 1").await;
    assert_eq!(e.code, "25P02");
    assert_eq!(
        e.message,
        "current transaction is aborted, commands ignored until end of transaction block"
    );
    assert_eq!(tag(&one(&mut s, "COMMIT").await), "ROLLBACK");
    assert_eq!(s.status(), TxStatus::Idle);
    let (_, r) = rows(&mut s, "SELECT count(*) FROM ducklake_snapshot").await;
    assert_eq!(r, vec![vec![Datum::Int8(0)]]);
    // A block that commits keeps its writes; ROLLBACK discards them.
    ok(
        &mut s,
        "BEGIN; INSERT INTO ducklake_snapshot VALUES (1, NOW(), 0, 0, 0); COMMIT",
    )
    .await;
    ok(
        &mut s,
        "START TRANSACTION; INSERT INTO ducklake_snapshot VALUES (2, NOW(), 0, 0, 0)",
    )
    .await;
    assert_eq!(tag(&one(&mut s, "ROLLBACK").await), "ROLLBACK");
    let (_, r) = rows(&mut s, "SELECT count(*) FROM ducklake_snapshot").await;
    assert_eq!(r, vec![vec![Datum::Int8(1)]]);
}

#[tokio::test]
async fn read_only_transactions_reject_writes() {
    let (_storage, mut s) = with_snapshot().await;
    ok(
        &mut s,
        "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY",
    )
    .await;
    let e = err(
        &mut s,
        "INSERT INTO ducklake_snapshot VALUES (1, NOW(), 0, 0, 0)",
    )
    .await;
    assert_eq!(e.code, "25006");
    ok(&mut s, "ROLLBACK").await;
}

#[tokio::test]
async fn concurrent_snapshot_inserts_conflict_once() {
    let (storage, mut setup) = with_snapshot().await;
    drop(setup.execute("SELECT 1").await);
    let mut a = session(&storage);
    let mut b = session(&storage);
    ok(&mut a, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ").await;
    ok(&mut b, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ").await;
    let ra = a
        .execute("INSERT INTO \"public\".ducklake_snapshot VALUES (13, NOW(), 4, 5, 9)")
        .await;
    let rb = b
        .execute("INSERT INTO \"public\".ducklake_snapshot VALUES (13, NOW(), 4, 5, 9)")
        .await;
    let ca = a.execute("COMMIT").await;
    let cb = b.execute("COMMIT").await;
    let errors: Vec<SqlError> = [ra, rb, ca, cb]
        .into_iter()
        .flatten()
        .filter_map(|r| r.err())
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!(e.code, "23505");
    assert_eq!(
        e.message,
        "duplicate key value violates unique constraint \"ducklake_snapshot_pkey\""
    );
    assert_eq!(
        e.detail.as_deref(),
        Some("Key (snapshot_id)=(13) already exists.")
    );
    assert_eq!(e.constraint.as_deref(), Some("ducklake_snapshot_pkey"));
    assert_eq!(e.table.as_deref(), Some("ducklake_snapshot"));
    // Insert-time detection when the other transaction already committed.
    let mut c = session(&storage);
    let mut d = session(&storage);
    ok(&mut c, "BEGIN").await;
    ok(&mut d, "BEGIN").await;
    ok(
        &mut c,
        "INSERT INTO ducklake_snapshot VALUES (14, NOW(), 0, 0, 0); COMMIT",
    )
    .await;
    let e = err(
        &mut d,
        "INSERT INTO ducklake_snapshot VALUES (14, NOW(), 0, 0, 0)",
    )
    .await;
    assert_eq!(e.code, "23505");
    assert_eq!(d.status(), TxStatus::Failed);
    assert_eq!(tag(&one(&mut d, "ROLLBACK").await), "ROLLBACK");
}

#[tokio::test]
async fn create_table_rules() {
    let (_storage, mut s) = with_snapshot().await;
    let out = one(
        &mut s,
        "CREATE TABLE IF NOT EXISTS \"public\".ducklake_snapshot(snapshot_id BIGINT)",
    )
    .await;
    match out {
        QueryOutput::Command { tag, notices } => {
            assert_eq!(tag, "CREATE TABLE");
            assert_eq!(notices.len(), 1);
            assert_eq!(notices[0].code, "42P07");
            assert_eq!(
                notices[0].message,
                "relation \"ducklake_snapshot\" already exists, skipping"
            );
        }
        other => panic!("{other:?}"),
    }
    let e = err(&mut s, "CREATE TABLE ducklake_snapshot(a BIGINT)").await;
    assert_eq!(e.code, "42P07");
    let e = err(&mut s, "CREATE TABLE IF NOT EXISTS \"public\".ducklake_inlined_data_4_4(row_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, c TIME_NS)").await;
    assert_eq!(e.code, "42704");
    assert_eq!(e.message, "type \"time_ns\" does not exist");
    assert_eq!(
        tag(&one(&mut s, "CREATE SCHEMA IF NOT EXISTS\"lake_meta\"").await),
        "CREATE SCHEMA"
    );
    ok(
        &mut s,
        "CREATE TABLE \"lake_meta\".\"T\"(\"A\" INTEGER, b VARCHAR NOT NULL)",
    )
    .await;
    let (cols, _) = rows(&mut s, "SELECT \"A\", B FROM lake_meta.\"T\"").await;
    assert_eq!(cols[0].name, "A");
    assert_eq!(cols[1].name, "b");
}

/// Regression: CREATE TABLE refused DEFAULT, so a PostgreSQL catalog whose
/// columns have defaults (a migrated `ducklake_column`) could not be
/// imported, and psql users could not create such tables.
#[tokio::test]
async fn create_table_keeps_constant_defaults() {
    let (_storage, mut s) = with_snapshot().await;
    ok(
        &mut s,
        "CREATE TABLE d(a BIGINT, kind VARCHAR DEFAULT 'literal'::character varying, \
         n INTEGER DEFAULT -1 NOT NULL)",
    )
    .await;
    ok(&mut s, "INSERT INTO d (a) VALUES (1)").await;
    let (_, got) = rows(&mut s, "SELECT a, kind, n FROM d").await;
    assert_eq!(
        got,
        vec![vec![
            Datum::Int8(1),
            Datum::text("literal"),
            Datum::Int4(-1)
        ]]
    );
    let (_, defaults) = rows(
        &mut s,
        "SELECT column_name::text, column_default::text FROM information_schema.columns \
         WHERE table_name = 'd' ORDER BY ordinal_position",
    )
    .await;
    assert_eq!(defaults[1][1], Datum::text("'literal'::character varying"));
    let e = err(&mut s, "CREATE TABLE v(a BIGINT DEFAULT random())").await;
    assert_eq!(e.code, "0A000");
}

#[tokio::test]
async fn unsupported_sql_is_rejected_and_session_survives() {
    let (_storage, mut s) = with_snapshot().await;
    for sql in [
        r"SELECT 'aa' ~ '(a)\1'",
        "SELECT sum(snapshot_id) OVER (ORDER BY snapshot_id RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM ducklake_snapshot",
        "DROP TABLE ducklake_snapshot CASCADE",
        "DROP VIEW ducklake_snapshot",
        "ALTER TABLE ducklake_snapshot ADD COLUMN x INT",
        "INSERT INTO ducklake_snapshot VALUES (1, NOW(), 0, 0, 0) ON CONFLICT (snapshot_id) WHERE snapshot_id > 0 DO NOTHING",
    ] {
        let e = err(&mut s, sql).await;
        assert_eq!(e.code, "0A000", "{sql}: {e}");
        assert_eq!(s.status(), TxStatus::Idle);
    }
    ok(&mut s, "BEGIN").await;
    let e = err(&mut s, r"SELECT 'aa' ~ '(a)\1'").await;
    assert_eq!(e.code, "0A000");
    assert_eq!(s.status(), TxStatus::Failed);
    ok(&mut s, "ROLLBACK").await;
    let (_, r) = rows(&mut s, "SELECT 1").await;
    assert_eq!(r, vec![vec![Datum::Int4(1)]]);
}

#[tokio::test]
async fn copy_in_and_out() {
    let (_storage, mut s) = with_snapshot().await;
    let row = vec![
        Datum::Int8(0),
        Datum::TimestampTz(0),
        Datum::Int8(0),
        Datum::Int8(1),
        Datum::Int8(0),
    ];
    let mut sink = CollectSink::new().with_copy_data(Ok(vec![row]));
    s.run(
        "COPY \"public\".\"ducklake_snapshot\" FROM STDIN (FORMAT BINARY)",
        &mut sink,
    )
    .await
    .unwrap();
    let (columns, _) = &sink.copy_requests[0];
    assert_eq!(columns.len(), 5);
    let done = sink.results.pop().unwrap().unwrap();
    assert_eq!(tag(&done), "COPY 1");
    let out = one(&mut s, "COPY (SELECT \"snapshot_id\", ctid FROM \"public\".\"ducklake_snapshot\" WHERE \"snapshot_id\" = '0') TO STDOUT (FORMAT \"binary\")").await;
    let QueryOutput::CopyOut { columns, rows } = out else {
        panic!("{out:?}")
    };
    assert_eq!(columns[1].pg_type, PgType::Tid);
    assert_eq!(rows.len(), 1);
    // An aborted COPY leaves nothing behind.
    let mut sink = CollectSink::new().with_copy_data(Err(SqlError::new(
        SqlState::QUERY_CANCELED,
        "COPY from stdin failed: aborted by the client",
    )));
    s.run(
        "COPY \"public\".\"ducklake_snapshot\" (\"snapshot_id\") FROM STDIN (FORMAT BINARY)",
        &mut sink,
    )
    .await
    .unwrap();
    assert_eq!(sink.results.pop().unwrap().unwrap_err().code, "57014");
    let (_, r) = rows_of(&mut s, "SELECT count(*) FROM ducklake_snapshot").await;
    assert_eq!(r, vec![vec![Datum::Int8(1)]]);
    // Text COPY FROM STDIN is accepted (postgres_scanner's UPDATE path, see
    // tests/temp_tables.rs), and so is CSV; COPY TO STDOUT works in every
    // format (the wire server encodes and decodes the streams).
    let mut sink = CollectSink::new();
    s.run(
        "COPY ducklake_snapshot FROM STDIN (FORMAT TEXT, NULL '\\b')",
        &mut sink,
    )
    .await
    .unwrap();
    assert!(
        matches!(&sink.copy_requests[0].1, rocklake_types::copy::CopyFormat::Text(f) if f.null == "\\b"),
        "{:?}",
        sink.copy_requests
    );
    let mut sink = CollectSink::new();
    s.run(
        "COPY ducklake_snapshot FROM STDIN (FORMAT CSV, HEADER)",
        &mut sink,
    )
    .await
    .unwrap();
    assert!(
        matches!(&sink.copy_requests[0].1, rocklake_types::copy::CopyFormat::Csv(f) if f.header),
        "{:?}",
        sink.copy_requests
    );
    assert!(matches!(
        one(
            &mut s,
            "COPY (SELECT 1) TO STDOUT WITH (FORMAT csv, HEADER)"
        )
        .await,
        QueryOutput::CopyOut { .. }
    ));
    let e = err(&mut s, "COPY (SELECT 1) TO STDOUT (QUOTE '\"')").await;
    assert_eq!(e.code, "0A000", "{e}");
}

async fn rows_of(s: &mut Session, sql: &str) -> (Vec<ColumnDef>, Vec<Row>) {
    rows(s, sql).await
}

#[tokio::test]
async fn describe_without_running() {
    let (_storage, mut s) = with_snapshot().await;
    let cols = s
        .describe("SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM \"public\".ducklake_snapshot WHERE snapshot_id = ( SELECT MAX(snapshot_id) FROM \"public\".ducklake_snapshot )", &[])
        .await
        .unwrap()
        .columns;
    assert_eq!(cols.len(), 4);
    assert!(cols.iter().all(|c| c.pg_type == PgType::Int8));
    assert_eq!(s.status(), TxStatus::Idle);
    assert!(s
        .describe(
            "INSERT INTO ducklake_snapshot VALUES (1, NOW(), 0, 0, 0)",
            &[]
        )
        .await
        .unwrap()
        .columns
        .is_empty());
}

#[tokio::test]
async fn settings_show_and_discard() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    let (cols, r) = rows(&mut s, "SHOW server_version").await;
    assert_eq!(cols[0].name, "server_version");
    assert_eq!(r[0][0], Datum::Text("15.18".into()));
    assert_eq!(
        tag(&one(&mut s, "SET search_path TO lake_meta").await),
        "SET"
    );
    let (_, r) = rows(&mut s, "SHOW search_path").await;
    assert_eq!(r[0][0], Datum::Text("lake_meta".into()));
    // PostgreSQL completes SHOW with the tag `SHOW`, not `SELECT 1`.
    assert_eq!(tag(&one(&mut s, "SHOW search_path").await), "SHOW");
    assert_eq!(tag(&one(&mut s, "SHOW ALL").await), "SHOW");
    assert_eq!(tag(&one(&mut s, "DISCARD ALL").await), "DISCARD ALL");
    let (_, r) = rows(&mut s, "SHOW TimeZone").await;
    assert_eq!(r[0][0], Datum::Text("Etc/UTC".into()));
    let (_, r) = rows(
        &mut s,
        "SELECT current_schema(), current_database(), pg_backend_pid() > 0",
    )
    .await;
    assert_eq!(r[0][0], Datum::Text("public".into()));
    assert_eq!(r[0][2], Datum::Bool(true));
}

#[tokio::test]
async fn group_by_having_order_limit_union() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(&mut s, "CREATE TABLE t(g INTEGER, v BIGINT, s VARCHAR)").await;
    ok(
        &mut s,
        "INSERT INTO t VALUES (1, 10, 'a'), (1, 20, 'b'), (2, 5, NULL), (3, NULL, 'c')",
    )
    .await;
    let (cols, r) = rows(&mut s, "SELECT g, count(*), sum(v), max(s), avg(v) FROM t GROUP BY g HAVING count(*) >= 1 ORDER BY 2 DESC, g LIMIT 2 OFFSET 0").await;
    assert_eq!(cols[1].pg_type, PgType::Int8);
    assert_eq!(cols[2].pg_type, PgType::Numeric(None));
    assert_eq!(
        r[0],
        vec![
            Datum::Int4(1),
            Datum::Int8(2),
            Datum::Numeric("30".into()),
            Datum::Text("b".into()),
            Datum::Numeric("15.0000000000000000".into())
        ]
    );
    assert_eq!(r.len(), 2);
    let (_, r) = rows(&mut s, "SELECT s FROM t ORDER BY s NULLS FIRST").await;
    assert_eq!(r[0][0], Datum::Null);
    let (_, r) = rows(&mut s, "SELECT g FROM t UNION SELECT 7 ORDER BY g DESC").await;
    assert_eq!(
        r.iter().map(|x| x[0].clone()).collect::<Vec<_>>(),
        vec![
            Datum::Int4(7),
            Datum::Int4(3),
            Datum::Int4(2),
            Datum::Int4(1)
        ]
    );
    let (_, r) = rows(&mut s, "SELECT DISTINCT g FROM t ORDER BY g").await;
    assert_eq!(r.len(), 3);
    let (_, r) = rows(
        &mut s,
        "SELECT a.g, b.v FROM t a LEFT JOIN t b ON a.g = b.g AND b.v > 10 ORDER BY a.g, b.v",
    )
    .await;
    assert_eq!(r.len(), 4);
    assert_eq!(r[0], vec![Datum::Int4(1), Datum::Int8(20)]);
    assert_eq!(r[2], vec![Datum::Int4(2), Datum::Null]);
    let (_, r) = rows(&mut s, "SELECT x.n FROM (SELECT count(*) AS n FROM t) AS x WHERE EXISTS (SELECT 1 FROM t WHERE t.g = 3)").await;
    assert_eq!(r, vec![vec![Datum::Int8(4)]]);
    let (_, r) = rows(&mut s, "WITH c(k) AS (SELECT g FROM t WHERE v IS NOT NULL) SELECT count(DISTINCT k), bool_and(k > 0) FROM c").await;
    assert_eq!(r, vec![vec![Datum::Int8(2), Datum::Bool(true)]]);
    let (_, r) = rows(
        &mut s,
        "SELECT g FROM t o WHERE v = (SELECT max(v) FROM t i WHERE i.g = o.g)",
    )
    .await;
    assert_eq!(r.len(), 2, "correlated subquery");
    let e = err(&mut s, "SELECT g, v FROM t GROUP BY g").await;
    assert_eq!(e.code, "42803");
}

#[test]
fn execute_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    assert_send(&s.execute("SELECT 1"));
    assert_send(&s.describe("SELECT 1", &[]));
    let mut sink = CollectSink::new();
    assert_send(&s.run("SELECT 1", &mut sink));
}

#[tokio::test]
async fn ducklake_literal_forms() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(&mut s, "CREATE TABLE IF NOT EXISTS \"public\".ducklake_inlined_data_1_1(row_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, h VARCHAR, b BIGINT, d DOUBLE PRECISION, r REAL, v BYTEA, i INTERVAL, u UUID, tz TIME WITH TIME ZONE, n DECIMAL(4,1), j VARCHAR)").await;
    let out = one(&mut s, "INSERT INTO \"public\".ducklake_inlined_data_1_1 VALUES (0, 1, NULL, 170141183460469231731687303715884105727, -9223372036854775808, 1.7976931348623157e+308, CAST('nan' AS REAL), '\\x6f6e65', CAST('14 months 3 days 14706789000 microseconds' AS INTERVAL), CAST('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' AS UUID), CAST('10:00:00+02' AS TIME WITH TIME ZONE), 12.35, '{\"a\": \"x\\\"y\"}')").await;
    assert_eq!(tag(&out), "INSERT 0 1");
    let (_, r) = rows(
        &mut s,
        "SELECT h, b, d, v, i, n, j, tz FROM ducklake_inlined_data_1_1",
    )
    .await;
    let row = &r[0];
    assert_eq!(
        row[0],
        Datum::Text("170141183460469231731687303715884105727".into())
    );
    assert_eq!(row[1], Datum::Int8(i64::MIN));
    assert_eq!(row[2], Datum::Float8(f64::MAX));
    assert_eq!(
        row[3],
        Datum::Bytea(b"one".to_vec()),
        "backslashes are literal (standard_conforming_strings)"
    );
    assert_eq!(
        row[4],
        Datum::Interval {
            months: 14,
            days: 3,
            micros: 14_706_789_000
        }
    );
    assert_eq!(row[5], Datum::Numeric("12.4".into()));
    assert_eq!(row[6], Datum::Text("{\"a\": \"x\\\"y\"}".into()));
    assert_eq!(
        row[7],
        Datum::TimeTz {
            micros: 36_000_000_000,
            offset_west_secs: -7200
        }
    );
    let e = err(
        &mut s,
        "INSERT INTO ducklake_inlined_data_1_1 (row_id, n) VALUES (1, 12345)",
    )
    .await;
    assert_eq!(e.code, "22003");
    let e = err(
        &mut s,
        "SELECT 1 FROM ducklake_inlined_data_1_1 WHERE h = 1",
    )
    .await;
    assert_eq!(e.code, "42883");
}

#[tokio::test]
async fn snapshot_isolation_between_sessions() {
    let (storage, mut a) = with_snapshot().await;
    let mut b = session(&storage);
    ok(&mut a, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ").await;
    let (_, r) = rows(&mut a, "SELECT count(*) FROM ducklake_snapshot").await;
    assert_eq!(r[0][0], Datum::Int8(0));
    ok(
        &mut b,
        "INSERT INTO ducklake_snapshot VALUES (1, NOW(), 0, 0, 0)",
    )
    .await;
    let (_, r) = rows(&mut a, "SELECT count(*) FROM ducklake_snapshot").await;
    assert_eq!(r[0][0], Datum::Int8(0), "a keeps its snapshot");
    // NOW() is fixed for the transaction.
    let (_, r1) = rows(&mut a, "SELECT NOW()").await;
    let (_, r2) = rows(&mut a, "SELECT CURRENT_TIMESTAMP").await;
    assert_eq!(r1, r2);
    ok(&mut a, "COMMIT").await;
    let (_, r) = rows(&mut a, "SELECT count(*) FROM ducklake_snapshot").await;
    assert_eq!(r[0][0], Datum::Int8(1));
    // Concurrent updates of one row: the second committer fails with 40001.
    ok(&mut a, "BEGIN").await;
    ok(&mut b, "BEGIN").await;
    ok(
        &mut a,
        "UPDATE ducklake_snapshot SET schema_version = 1 WHERE snapshot_id = 1",
    )
    .await;
    ok(
        &mut b,
        "UPDATE ducklake_snapshot SET schema_version = 2 WHERE snapshot_id = 1",
    )
    .await;
    ok(&mut a, "COMMIT").await;
    let e = err(&mut b, "COMMIT").await;
    assert_eq!(e.code, "40001");
    assert_eq!(b.status(), TxStatus::Idle);
}

#[tokio::test]
async fn datetime_comparisons_across_types() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    let (_, r) = rows(&mut s, "SELECT DATE '2024-01-02' > TIMESTAMP '2024-01-01 23:00:00', '2024-01-01'::date = '2024-01-01 00:00:00+00'::timestamptz").await;
    assert_eq!(r[0], vec![Datum::Bool(true), Datum::Bool(true)]);
}

#[tokio::test]
async fn insert_select_and_delete_in_subquery() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(&mut s, "CREATE TABLE src(a INTEGER, b VARCHAR); CREATE TABLE dst(x BIGINT NOT NULL, y VARCHAR, z BOOLEAN)").await;
    ok(
        &mut s,
        "INSERT INTO src VALUES (1, 'one'), (2, 'two'), (3, NULL)",
    )
    .await;
    let out = one(
        &mut s,
        "INSERT INTO dst (y, x) SELECT b, a * 10 FROM src WHERE a < 3",
    )
    .await;
    assert_eq!(tag(&out), "INSERT 0 2");
    let (cols, r) = rows(&mut s, "SELECT * FROM dst ORDER BY x").await;
    assert_eq!(
        cols.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["x", "y", "z"]
    );
    assert_eq!(
        r[0],
        vec![Datum::Int8(10), Datum::Text("one".into()), Datum::Null]
    );
    let e = err(&mut s, "INSERT INTO dst (y) SELECT b FROM src").await;
    assert_eq!(e.code, "23502");
    assert_eq!(
        e.message,
        "null value in column \"x\" of relation \"dst\" violates not-null constraint"
    );
    let out = one(
        &mut s,
        "DELETE FROM dst WHERE x IN (SELECT a * 10 FROM src WHERE b = 'two')",
    )
    .await;
    assert_eq!(tag(&out), "DELETE 1");
    let out = one(&mut s, "DELETE FROM dst WHERE x NOT IN (SELECT a FROM src)").await;
    assert_eq!(tag(&out), "DELETE 1");
}

#[tokio::test]
async fn settings_defaults_and_bare_functions() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(&mut s, "SET application_name = 'duckdb'").await;
    let (_, r) = rows(&mut s, "SHOW application_name").await;
    assert_eq!(r[0][0], Datum::Text("duckdb".into()));
    ok(&mut s, "SET application_name TO DEFAULT").await;
    let (_, r) = rows(&mut s, "SHOW application_name").await;
    assert_eq!(r[0][0], Datum::text(String::new()));
    let (cols, r) = rows(&mut s, "SHOW ALL").await;
    assert_eq!(cols.len(), 3);
    assert!(r
        .iter()
        .any(|x| x[0] == Datum::Text("server_version".into())));
    let (cols, r) = rows(&mut s, "SELECT current_schema, current_user").await;
    assert_eq!(cols[0].name, "current_schema");
    assert_eq!(r[0][0], Datum::Text("public".into()));
    let e = err(&mut s, "SHOW no_such_setting").await;
    assert_eq!(e.code, "42704");
}

#[tokio::test]
async fn group_by_output_alias_and_regclass_of_catalogs() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(
        &mut s,
        "CREATE TABLE t(g INTEGER); INSERT INTO t VALUES (1), (2), (3)",
    )
    .await;
    let (_, r) = rows(
        &mut s,
        "SELECT g % 2 AS parity, count(*) FROM t GROUP BY parity ORDER BY parity",
    )
    .await;
    assert_eq!(
        r,
        vec![
            vec![Datum::Int4(0), Datum::Int8(1)],
            vec![Datum::Int4(1), Datum::Int8(2)]
        ]
    );
    let (_, r) = rows(&mut s, "SELECT to_regclass('pg_class'), to_regclass('pg_catalog.pg_namespace'), to_regclass('nope')").await;
    let named = |oid, name: &str| Datum::Reg {
        oid,
        name: name.into(),
    };
    assert_eq!(
        r[0],
        vec![
            named(1259, "pg_class"),
            named(2615, "pg_namespace"),
            Datum::Null
        ]
    );
}

#[tokio::test]
async fn correlated_reference_into_grouped_query_is_rejected() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(
        &mut s,
        "CREATE TABLE t(g INTEGER, v INTEGER); INSERT INTO t VALUES (1, 1), (1, 2)",
    )
    .await;
    let e = err(
        &mut s,
        "SELECT g, (SELECT count(*) FROM t i WHERE i.v = o.g) FROM t o GROUP BY g",
    )
    .await;
    assert_eq!(e.code, "0A000");
    // Uncorrelated subqueries in grouped queries are fine.
    let (_, r) = rows(
        &mut s,
        "SELECT g, count(*), (SELECT max(v) FROM t) FROM t GROUP BY g",
    )
    .await;
    assert_eq!(
        r,
        vec![vec![Datum::Int4(1), Datum::Int8(2), Datum::Int4(2)]]
    );
}

#[tokio::test]
async fn cte_referencing_enclosing_query_reads_its_row() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(
        &mut s,
        "CREATE TABLE t(a INTEGER); INSERT INTO t VALUES (1), (2)",
    )
    .await;
    let (_, r) = rows(
        &mut s,
        "SELECT (WITH x AS (SELECT o.a AS v) SELECT v FROM x) FROM t o ORDER BY 1",
    )
    .await;
    assert_eq!(r, vec![vec![Datum::Int4(1)], vec![Datum::Int4(2)]]);
    // Read from a deeper level, its enclosing rows would be numbered
    // differently: refused rather than answered wrongly.
    let e = err(
        &mut s,
        "SELECT (WITH x AS (SELECT o.a AS v) SELECT (SELECT v FROM x)) FROM t o",
    )
    .await;
    assert_eq!(e.code, "0A000");
    let (_, r) = rows(
        &mut s,
        "SELECT (WITH x AS (SELECT max(a) AS v FROM t) SELECT v FROM x) FROM t o ORDER BY 1",
    )
    .await;
    assert_eq!(r, vec![vec![Datum::Int4(2)], vec![Datum::Int4(2)]]);
}

/// Regression: `ducklake_flush_inlined_data` drops old inlined-data tables with
/// `DROP Table  IF EXISTS "public"."..."`, which used to fail with 0A000.
#[tokio::test]
async fn drop_table_if_exists_as_ducklake_sends_it() {
    let (storage, mut s) = with_snapshot().await;
    ok(
        &mut s,
        "INSERT INTO ducklake_snapshot VALUES (1, NOW(), 0, 0, 0)",
    )
    .await;
    let out = ok(
        &mut s,
        "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ;\nDROP Table  IF EXISTS \"public\".\"ducklake_snapshot\"",
    )
    .await;
    assert_eq!(tag(&out[1]), "DROP TABLE");
    ok(&mut s, "COMMIT").await;
    let e = err(&mut s, "SELECT * FROM ducklake_snapshot").await;
    assert_eq!(e.code, "42P01", "{e}");
    match one(&mut s, "DROP TABLE IF EXISTS ducklake_snapshot").await {
        QueryOutput::Command { tag, notices } => {
            assert_eq!(tag, "DROP TABLE");
            assert_eq!(
                notices[0].message,
                "table \"ducklake_snapshot\" does not exist, skipping"
            );
        }
        other => panic!("{other:?}"),
    }
    let e = err(&mut s, "DROP TABLE ducklake_snapshot").await;
    assert_eq!(e.code, "42P01", "{e}");
    // The name can be created again, empty.
    let mut fresh = session(&storage);
    ok(&mut fresh, SNAPSHOT).await;
    let (_, r) = rows(&mut fresh, "SELECT count(*) FROM ducklake_snapshot").await;
    assert_eq!(r, vec![vec![Datum::Int8(0)]]);
}

/// Scans that never name `ctid` are read in place from rows shared with
/// storage; every way of naming it (select list, filter, a join, a correlated
/// subquery, a derived table) must still see each row's own ctid.
#[tokio::test]
async fn ctid_is_seen_wherever_it_is_named() {
    let (_, mut s) = with_snapshot().await;
    ok(&mut s, "INSERT INTO ducklake_snapshot VALUES (0, NULL, 10, 1, 1), (1, NULL, 11, 1, 1), (2, NULL, 12, 1, 1)").await;
    let (_, direct) = rows(
        &mut s,
        "SELECT snapshot_id, ctid FROM ducklake_snapshot ORDER BY snapshot_id",
    )
    .await;
    assert_eq!(direct.len(), 3);
    let tids: Vec<Datum> = direct.iter().map(|r| r[1].clone()).collect();
    assert!(
        tids.iter().all(|t| matches!(t, Datum::Tid { .. })),
        "{tids:?}"
    );
    let (_, plain) = rows(
        &mut s,
        "SELECT snapshot_id FROM ducklake_snapshot WHERE schema_version > 10 ORDER BY snapshot_id",
    )
    .await;
    assert_eq!(plain, vec![vec![Datum::Int8(1)], vec![Datum::Int8(2)]]);
    let (_, derived) = rows(&mut s, "SELECT snapshot_id, c FROM (SELECT snapshot_id, ctid AS c FROM ducklake_snapshot) AS d ORDER BY snapshot_id").await;
    assert_eq!(
        derived.iter().map(|r| r[1].clone()).collect::<Vec<_>>(),
        tids
    );
    let (_, joined) = rows(&mut s, "SELECT a.snapshot_id, b.ctid FROM ducklake_snapshot a JOIN ducklake_snapshot b ON a.snapshot_id = b.snapshot_id ORDER BY a.snapshot_id").await;
    assert_eq!(
        joined.iter().map(|r| r[1].clone()).collect::<Vec<_>>(),
        tids
    );
    let (_, correlated) = rows(&mut s, "SELECT snapshot_id FROM ducklake_snapshot o WHERE EXISTS (SELECT 1 FROM ducklake_snapshot i WHERE i.ctid = o.ctid AND i.snapshot_id = 1)").await;
    assert_eq!(correlated, vec![vec![Datum::Int8(1)]]);
    let (_, filtered) = rows(
        &mut s,
        &format!(
            "SELECT snapshot_id FROM ducklake_snapshot WHERE ctid = '{}'",
            match &tids[2] {
                Datum::Tid { block, offset } => format!("({block},{offset})"),
                _ => unreachable!(),
            }
        ),
    )
    .await;
    assert_eq!(filtered, vec![vec![Datum::Int8(2)]]);
    let (_, counted) = rows(
        &mut s,
        "SELECT count(*), max(schema_version) FROM ducklake_snapshot WHERE snapshot_id >= 1",
    )
    .await;
    assert_eq!(counted, vec![vec![Datum::Int8(2), Datum::Int8(12)]]);
}

/// Filters use three-valued logic: a row is kept only when its condition is
/// true, never when it is NULL, however the NULL arises.
#[tokio::test]
async fn filters_keep_only_rows_whose_condition_is_true() {
    let (_, mut s) = with_snapshot().await;
    ok(&mut s, "INSERT INTO ducklake_snapshot VALUES (0, NULL, NULL, 1, 1), (1, NULL, 1, 1, 1), (2, NULL, 2, NULL, 1)").await;
    let ids =
        |rows: Vec<Row>| -> Vec<i64> { rows.iter().map(|r| r[0].as_i64().unwrap()).collect() };
    let cases: [(&str, &[i64]); 8] = [
        ("NOT (schema_version = 1)", &[2]),
        ("schema_version IS NULL OR schema_version > 1", &[0, 2]),
        ("NOT (schema_version IS NULL) AND schema_version <> 2", &[1]),
        ("schema_version = 1 OR next_catalog_id IS NULL", &[1, 2]),
        ("NOT (schema_version = 1 OR next_catalog_id = 1)", &[]),
        ("NOT (schema_version > 5 AND next_catalog_id = 1)", &[1, 2]),
        ("schema_version IN (1, NULL)", &[1]),
        ("(schema_version = 2) IS NOT TRUE", &[0, 1]),
    ];
    for (condition, expected) in cases {
        let (_, r) = rows(
            &mut s,
            &format!(
                "SELECT snapshot_id FROM ducklake_snapshot WHERE {condition} ORDER BY snapshot_id"
            ),
        )
        .await;
        assert_eq!(ids(r), expected, "{condition}");
    }
}

/// Long IN lists of constants are hashed; the answers are those of the
/// linear comparison, NULLs included, and key seeks still use the list.
#[tokio::test]
async fn long_in_lists_answer_as_short_ones() {
    let (_storage, mut s) = with_snapshot().await;
    ok(
        &mut s,
        "INSERT INTO ducklake_snapshot SELECT 1, NOW(), 0, 0, 0",
    )
    .await;
    ok(&mut s, "INSERT INTO ducklake_snapshot VALUES (2, NOW(), 0, 0, 0), (3, NOW(), 0, 0, 0), (40, NOW(), 0, 0, 0)").await;
    let long: String = (10..1000).map(|i| format!("{i}, ")).collect();
    let cases = [
        (format!("SELECT 5 IN ({long} 5)"), Datum::Bool(true)),
        (format!("SELECT 5::int2 IN ({long} 6)"), Datum::Bool(false)),
        (format!("SELECT 5 NOT IN ({long} 6)"), Datum::Bool(true)),
        (format!("SELECT NULL::int8 IN ({long} 5)"), Datum::Null),
        (format!("SELECT 5 IN ({long} NULL)"), Datum::Null),
        (format!("SELECT 12 IN ({long} NULL)"), Datum::Bool(true)),
        (
            "SELECT 'b' IN ('a','c','d','e','f','g','h','i','j','b')".into(),
            Datum::Bool(true),
        ),
        (
            "SELECT 'B' IN ('a','c','d','e','f','g','h','i','j','b')".into(),
            Datum::Bool(false),
        ),
        (
            format!("SELECT count(*) FROM ducklake_snapshot WHERE snapshot_id IN ({long} 2, 3)"),
            Datum::Int8(3),
        ),
        (
            format!("SELECT count(*) FROM ducklake_snapshot WHERE snapshot_id NOT IN ({long} 2)"),
            Datum::Int8(2),
        ),
    ];
    let ors = |last: &str| {
        let terms: Vec<String> = (10..1000).map(|i| format!("snapshot_id = {i}")).collect();
        format!(
            "SELECT count(*) FROM ducklake_snapshot WHERE {} OR {last}",
            terms.join(" OR ")
        )
    };
    let cases = cases.into_iter().chain([
        (ors("3 = snapshot_id"), Datum::Int8(2)),
        (ors("snapshot_id = NULL"), Datum::Int8(1)),
        (ors("snapshot_id > 2"), Datum::Int8(2)),
    ]);
    for (sql, expected) in cases {
        let (_, r) = rows(&mut s, &sql).await;
        assert_eq!(r, vec![vec![expected]], "{}", &sql[..40.min(sql.len())]);
    }
}

#[tokio::test]
async fn window_functions_number_rank_and_aggregate_per_partition() {
    let (_storage, mut s) = with_snapshot().await;
    ok(
        &mut s,
        "INSERT INTO ducklake_snapshot VALUES (1, NOW(), 0, 0, 0), (2, NOW(), 0, 0, 0), \
         (3, NOW(), 1, 0, 0), (4, NOW(), 1, 0, 0), (5, NOW(), 1, 0, 0)",
    )
    .await;
    let (_, r) = rows(
        &mut s,
        "SELECT snapshot_id, row_number() OVER (PARTITION BY schema_version ORDER BY snapshot_id DESC), \
         rank() OVER (ORDER BY schema_version), count(*) OVER (PARTITION BY schema_version), \
         sum(snapshot_id) OVER (ORDER BY snapshot_id), lag(snapshot_id) OVER (ORDER BY snapshot_id) \
         FROM ducklake_snapshot ORDER BY snapshot_id",
    )
    .await;
    let int = |v: i64| Datum::Int8(v);
    let numeric = |v: &str| Datum::Numeric(v.to_string());
    assert_eq!(
        r,
        vec![
            vec![int(1), int(2), int(1), int(2), numeric("1"), Datum::Null],
            vec![int(2), int(1), int(1), int(2), numeric("3"), int(1)],
            vec![int(3), int(3), int(3), int(3), numeric("6"), int(2)],
            vec![int(4), int(2), int(3), int(3), numeric("10"), int(3)],
            vec![int(5), int(1), int(3), int(3), numeric("15"), int(4)],
        ]
    );
    let e = err(
        &mut s,
        "SELECT snapshot_id FROM ducklake_snapshot WHERE row_number() OVER () > 1",
    )
    .await;
    assert_eq!(e.code, "42P20");
    let e = err(
        &mut s,
        "SELECT schema_version, count(*) OVER () FROM ducklake_snapshot GROUP BY schema_version",
    )
    .await;
    assert_eq!(e.code, "0A000", "{e}");
    let e = err(
        &mut s,
        "SELECT schema_version FROM ducklake_snapshot GROUP BY schema_version \
         HAVING count(*) OVER () > 0",
    )
    .await;
    assert_eq!(e.code, "42P20", "{e}");
}

/// Within a transaction that creates and drops tables, each statement's
/// catalog finds exactly the tables that exist at that point.
#[tokio::test]
async fn names_resolve_after_each_ddl_of_a_transaction() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    let regclass = "SELECT coalesce(to_regclass('a')::text, '-'), \
        coalesce(to_regclass('b')::text, '-'), coalesce(to_regclass('before_txn')::text, '-')";
    let steps = [
        ("CREATE TABLE before_txn (a int); BEGIN", "-|-|before_txn"),
        ("CREATE TABLE a (x int)", "a|-|before_txn"),
        (
            "INSERT INTO a VALUES (1); CREATE TABLE b (y int)",
            "a|b|before_txn",
        ),
        ("DROP TABLE a", "-|b|before_txn"),
        ("CREATE TABLE a (z text)", "a|b|before_txn"),
        ("COMMIT", "a|b|before_txn"),
    ];
    for (statements, expected) in steps {
        ok(&mut s, statements).await;
        assert_eq!(
            support::text_rows(&mut s, regclass).await,
            [expected],
            "after {statements}"
        );
    }
    let columns = "SELECT attname FROM pg_attribute WHERE attrelid = 'a'::regclass AND attnum > 0";
    assert_eq!(support::text_rows(&mut s, columns).await, ["z"]);
}
