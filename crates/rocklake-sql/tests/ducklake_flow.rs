//! A DuckLake session in the order the capture shows (attach fresh, a one-row
//! inlined insert commit, the reads that follow, a ctid-based delete), checking
//! the data that flows between the statements.

use std::sync::Arc;

use rocklake_sql::{MemoryStorage, Session};
use rocklake_types::datum::{Datum, Row};
use rocklake_types::output::{CollectSink, QueryOutput, TxStatus};

const S: &str = "\"public\"";

async fn batch(s: &mut Session, sql: &str) -> Vec<QueryOutput> {
    s.execute(sql)
        .await
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{sql}\n -> {e}")))
        .collect()
}

/// Runs a COPY FROM STDIN whose client sends `rows`.
async fn copy_in(s: &mut Session, sql: &str, rows: Vec<Row>) -> QueryOutput {
    let mut sink = CollectSink::new().with_copy_data(Ok(rows));
    s.run(sql, &mut sink).await.unwrap();
    sink.results
        .pop()
        .unwrap()
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

async fn copy_out(s: &mut Session, sql: &str) -> Vec<Row> {
    match batch(s, sql).await.remove(0) {
        QueryOutput::CopyOut { rows, .. } => rows.into_rows(),
        other => panic!("{sql}: {other:?}"),
    }
}

async fn attach_fresh(s: &mut Session) {
    batch(s, "SELECT 1").await;
    batch(s, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ").await;
    for ddl in [
        format!("CREATE TABLE {S}.\"ducklake_metadata\"(\"key\" VARCHAR NOT NULL, \"value\" VARCHAR NOT NULL, \"scope\" VARCHAR, \"scope_id\" BIGINT)"),
        format!("CREATE TABLE {S}.\"ducklake_snapshot\"(\"snapshot_id\" BIGINT PRIMARY KEY, \"snapshot_time\" TIMESTAMP WITH TIME ZONE, \"schema_version\" BIGINT, \"next_catalog_id\" BIGINT, \"next_file_id\" BIGINT)"),
        format!("CREATE TABLE {S}.\"ducklake_snapshot_changes\"(\"snapshot_id\" BIGINT PRIMARY KEY, \"changes_made\" VARCHAR, \"author\" VARCHAR, \"commit_message\" VARCHAR, \"commit_extra_info\" VARCHAR)"),
        format!("CREATE TABLE {S}.\"ducklake_table_stats\"(\"table_id\" BIGINT, \"record_count\" BIGINT, \"next_row_id\" BIGINT, \"file_size_bytes\" BIGINT)"),
        format!("CREATE TABLE {S}.\"ducklake_table_column_stats\"(\"table_id\" BIGINT, \"column_id\" BIGINT, \"contains_null\" BOOLEAN, \"contains_nan\" BOOLEAN, \"min_value\" VARCHAR, \"max_value\" VARCHAR, \"extra_stats\" VARCHAR)"),
        format!("CREATE TABLE {S}.\"ducklake_inlined_data_tables\"(\"table_id\" BIGINT, \"table_name\" VARCHAR, \"schema_version\" BIGINT)"),
    ] {
        batch(s, &ddl).await;
    }
    // COPY IN of the first snapshot and the metadata, inside the attach transaction.
    let snapshot = vec![vec![
        Datum::Int8(0),
        Datum::TimestampTz(0),
        Datum::Int8(0),
        Datum::Int8(1),
        Datum::Int8(0),
    ]];
    let out = copy_in(
        s,
        &format!("COPY {S}.\"ducklake_snapshot\" FROM STDIN (FORMAT BINARY)"),
        snapshot,
    )
    .await;
    assert!(matches!(out, QueryOutput::Command { ref tag, .. } if tag == "COPY 1"));
    let meta: Vec<Row> = [("version", "1.0"), ("data_path", "./data/")]
        .iter()
        .map(|(k, v)| vec![Datum::text(k.to_string()), Datum::text(v.to_string())])
        .collect();
    copy_in(
        s,
        &format!("COPY {S}.\"ducklake_metadata\" (\"key\", \"value\") FROM STDIN (FORMAT BINARY)"),
        meta,
    )
    .await;
    assert_eq!(s.status(), TxStatus::InBlock);
    batch(s, "COMMIT").await;
    batch(s, "SELECT 1").await;
    batch(s, "DISCARD ALL").await;
}

#[tokio::test]
async fn attach_insert_read_delete() {
    let storage = MemoryStorage::new();
    let mut s = Session::new(Arc::new(storage.clone()));
    attach_fresh(&mut s).await;

    let rows = copy_out(&mut s, &format!("COPY (SELECT NULL FROM {S}.\"ducklake_metadata\" LIMIT 1) TO STDOUT (FORMAT \"binary\")")).await;
    assert_eq!(rows, vec![vec![Datum::Null]]);
    let rows = copy_out(&mut s, &format!("COPY (SELECT \"key\", \"scope\" FROM {S}.\"ducklake_metadata\" WHERE \"key\" = 'version' COLLATE \"C\") TO STDOUT (FORMAT \"binary\")")).await;
    assert_eq!(rows, vec![vec![Datum::Text("version".into()), Datum::Null]]);

    // One-row inlined insert commit, as in capture §6.1.
    let latest = format!("SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM {S}.ducklake_snapshot WHERE snapshot_id = ( SELECT MAX(snapshot_id) FROM {S}.ducklake_snapshot )");
    batch(&mut s, "SELECT 1").await;
    batch(&mut s, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ").await;
    let cols = s.describe(&latest, &[]).await.unwrap().columns;
    assert_eq!(cols.len(), 4);
    let wrapped = format!("COPY (SELECT \"snapshot_id\", \"schema_version\", \"next_catalog_id\", \"next_file_id\" FROM ({latest}) AS __unnamed_subquery ) TO STDOUT (FORMAT \"binary\")");
    let rows = copy_out(&mut s, &wrapped).await;
    assert_eq!(
        rows,
        vec![vec![
            Datum::Int8(0),
            Datum::Int8(0),
            Datum::Int8(1),
            Datum::Int8(0)
        ]]
    );
    let commit = format!(
        "INSERT INTO {S}.ducklake_snapshot VALUES (1, NOW(), 1, 2, 0);\
         CREATE TABLE IF NOT EXISTS {S}.ducklake_inlined_data_1_1(row_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, id INTEGER, v BYTEA);\
         INSERT INTO {S}.ducklake_inlined_data_tables VALUES (1, 'ducklake_inlined_data_1_1', 1);\
         INSERT INTO {S}.ducklake_table_stats VALUES (1, 0, 0, 0);\
         INSERT INTO {S}.ducklake_table_column_stats VALUES (1, 1, false, NULL, '1', '1', NULL),(1, 2, false, NULL, 'a', 'a', NULL);\
         UPDATE {S}.ducklake_table_stats SET record_count=2, file_size_bytes=0, next_row_id=2 WHERE table_id=1;\
         WITH new_values(tid, cid, new_contains_null, new_contains_nan, new_min, new_max, new_extra_stats) AS ( VALUES (1, 1, false, NULL, '1', '2', NULL),(1, 2, true, NULL, 'a', 'b', NULL) ) UPDATE {S}.ducklake_table_column_stats SET contains_null=CAST(new_contains_null AS BOOLEAN), contains_nan=CAST(new_contains_nan AS BOOLEAN), min_value=new_min, max_value=new_max, extra_stats=new_extra_stats FROM new_values WHERE table_id=tid AND column_id=cid;\
         INSERT INTO {S}.ducklake_inlined_data_1_1 VALUES (0, 1, NULL, 1, '\\x6f6e65'), (1, 1, NULL, 2, NULL);\
         INSERT INTO {S}.ducklake_snapshot_changes VALUES (1, 'inserted_into_table:1', NULL, NULL, NULL)"
    );
    let outs = batch(&mut s, &commit).await;
    let tags: Vec<String> = outs
        .iter()
        .map(|o| match o {
            QueryOutput::Command { tag, .. } => tag.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        tags,
        [
            "INSERT 0 1",
            "CREATE TABLE",
            "INSERT 0 1",
            "INSERT 0 1",
            "INSERT 0 2",
            "UPDATE 1",
            "UPDATE 2",
            "INSERT 0 2",
            "INSERT 0 1"
        ]
    );
    batch(&mut s, "COMMIT").await;

    // Reads of the next transaction.
    let rows = copy_out(&mut s, &wrapped).await;
    assert_eq!(rows[0][0], Datum::Int8(1));
    let rows = copy_out(&mut s, &format!("COPY (SELECT \"table_id\", \"record_count\", \"file_size_bytes\", \"next_row_id\" FROM {S}.\"ducklake_table_stats\" WHERE \"table_id\" = '1') TO STDOUT (FORMAT \"binary\")")).await;
    assert_eq!(
        rows,
        vec![vec![
            Datum::Int8(1),
            Datum::Int8(2),
            Datum::Int8(0),
            Datum::Int8(2)
        ]]
    );
    let rows = copy_out(&mut s, &format!("COPY (SELECT \"column_id\", \"contains_null\", \"max_value\" FROM {S}.\"ducklake_table_column_stats\" WHERE \"table_id\" = '1') TO STDOUT (FORMAT \"binary\")")).await;
    assert_eq!(rows.len(), 2);
    assert!(rows.contains(&vec![
        Datum::Int8(2),
        Datum::Bool(true),
        Datum::Text("b".into())
    ]));
    let rows = copy_out(&mut s, &format!("COPY (SELECT \"begin_snapshot\", \"end_snapshot\", \"id\", \"v\", \"row_id\" FROM {S}.\"ducklake_inlined_data_1_1\" WHERE \"begin_snapshot\" <= '1') TO STDOUT (FORMAT \"binary\")")).await;
    assert_eq!(
        rows[0],
        vec![
            Datum::Int8(1),
            Datum::Null,
            Datum::Int4(1),
            Datum::Bytea(b"one".to_vec()),
            Datum::Int8(0)
        ]
    );

    // Inlined delete via CTE, then a postgres_scanner ctid delete.
    let del = format!("WITH deleted_row_list(deleted_row_id) AS ( VALUES (1) ) UPDATE {S}.ducklake_inlined_data_1_1 SET end_snapshot = 2 FROM deleted_row_list WHERE row_id=deleted_row_id AND end_snapshot IS NULL AND begin_snapshot != 2");
    let out = batch(&mut s, &del).await;
    assert!(matches!(&out[0], QueryOutput::Command { tag, .. } if tag == "UPDATE 1"));
    let rows = copy_out(&mut s, &format!("COPY (SELECT \"begin_snapshot\", ctid FROM {S}.\"ducklake_inlined_data_1_1\" WHERE \"begin_snapshot\" <= '1') TO STDOUT (FORMAT \"binary\")")).await;
    let tids: Vec<String> = rows
        .iter()
        .map(|r| match r[1] {
            Datum::Tid { block, offset } => format!("'({block},{offset})'"),
            ref other => panic!("{other:?}"),
        })
        .collect();
    let out = batch(
        &mut s,
        &format!(
            "DELETE FROM {S}.\"ducklake_inlined_data_1_1\" WHERE ctid IN ({})",
            tids.join(",")
        ),
    )
    .await;
    assert!(matches!(&out[0], QueryOutput::Command { tag, .. } if tag == "DELETE 2"));
    let rows = copy_out(&mut s, &format!("COPY (SELECT \"row_id\" FROM {S}.\"ducklake_inlined_data_1_1\" ) TO STDOUT (FORMAT \"binary\")")).await;
    assert!(rows.is_empty());
}

#[tokio::test]
async fn retry_after_conflict_follows_the_capture() {
    let storage = MemoryStorage::new();
    let mut a = Session::new(Arc::new(storage.clone()));
    attach_fresh(&mut a).await;
    let mut b = Session::new(Arc::new(storage.clone()));
    batch(&mut a, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ").await;
    batch(&mut b, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ").await;
    let commit = |id: i64| {
        format!(
            "INSERT INTO {S}.ducklake_snapshot VALUES ({id}, NOW(), 1, 2, 0);INSERT INTO {S}.ducklake_snapshot_changes VALUES ({id}, 'created_table:\"main\".\"t\"', NULL, NULL, NULL)"
        )
    };
    batch(&mut a, &commit(1)).await;
    batch(&mut a, "COMMIT").await;
    // b saw snapshot 0 as the latest and also picks id 1: the INSERT fails
    // with 23505, the rest of the batch is skipped and the block is failed.
    let res = b.execute(&commit(1)).await;
    assert_eq!(res.len(), 1);
    let e = res[0].as_ref().unwrap_err();
    assert_eq!(e.code, "23505");
    assert!(e.message.to_lowercase().contains("unique"));
    assert_eq!(b.status(), TxStatus::Failed);
    batch(&mut b, "ROLLBACK").await;
    batch(&mut b, "SELECT 1").await;
    batch(&mut b, "DISCARD ALL").await;
    batch(&mut b, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ").await;
    batch(&mut b, &commit(2)).await;
    batch(&mut b, "COMMIT").await;
    let rows = copy_out(&mut b, &format!("COPY (SELECT \"snapshot_id\", \"changes_made\" FROM {S}.\"ducklake_snapshot_changes\" WHERE \"snapshot_id\" > '0') TO STDOUT (FORMAT \"binary\")")).await;
    assert_eq!(rows.len(), 2);
    assert_eq!(
        rows[0][1],
        Datum::Text("created_table:\"main\".\"t\"".into())
    );
}
