//! The server with the real SQL engine over in-memory storage, driven the way
//! DuckLake drives PostgreSQL at catalog creation and commit time.

use std::sync::Arc;

use bytes::Bytes;
use futures::{SinkExt, TryStreamExt};
use rocklake::engine::EngineSessions;
use rocklake_sql::MemoryStorage;
use rocklake_types::copy::binary::{decode_stream, encode_stream};
use rocklake_types::datum::{ColumnDef, Datum, PgType};
use rocklake_wire::ServerConfig;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

async fn start() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let factory = Arc::new(EngineSessions::new(Arc::new(MemoryStorage::new())));
    tokio::spawn(rocklake_wire::serve(
        listener,
        factory,
        ServerConfig::default(),
    ));
    port
}

async fn connect(port: u16) -> Client {
    let (client, connection) = tokio_postgres::connect(
        &format!("host=127.0.0.1 port={port} user=postgres dbname=lake"),
        NoTls,
    )
    .await
    .unwrap();
    tokio::spawn(connection);
    client
}

const CREATE: &str = "CREATE TABLE \"public\".\"ducklake_snapshot\"(\"snapshot_id\" BIGINT PRIMARY KEY, \
    \"snapshot_time\" TIMESTAMP WITH TIME ZONE, \"schema_version\" BIGINT, \"next_catalog_id\" BIGINT, \
    \"next_file_id\" BIGINT)";

fn snapshot_columns() -> Vec<ColumnDef> {
    vec![
        ColumnDef::new("snapshot_id", PgType::Int8),
        ColumnDef::new("snapshot_time", PgType::TimestampTz),
        ColumnDef::new("schema_version", PgType::Int8),
        ColumnDef::new("next_catalog_id", PgType::Int8),
        ColumnDef::new("next_file_id", PgType::Int8),
    ]
}

#[tokio::test]
async fn catalog_creation_copy_in_then_copy_out_and_conflict() {
    let port = start().await;
    let client = connect(port).await;
    client.simple_query("SELECT 1").await.unwrap();
    client.batch_execute(CREATE).await.unwrap();

    // COPY IN exactly as DuckDB sends it at catalog creation.
    let types: Vec<PgType> = snapshot_columns().into_iter().map(|c| c.pg_type).collect();
    let row = vec![
        Datum::Int8(0),
        Datum::TimestampTz(849_524_998_766_649),
        Datum::Int8(0),
        Datum::Int8(1),
        Datum::Int8(0),
    ];
    let stream = encode_stream(&types, std::slice::from_ref(&row))
        .unwrap()
        .freeze();
    let sink = client
        .copy_in::<_, Bytes>("COPY \"public\".\"ducklake_snapshot\" FROM STDIN (FORMAT BINARY)")
        .await
        .unwrap();
    futures::pin_mut!(sink);
    sink.send(stream.slice(..19)).await.unwrap();
    sink.send(stream.slice(19..stream.len() - 2)).await.unwrap();
    sink.send(stream.slice(stream.len() - 2..)).await.unwrap();
    assert_eq!(sink.finish().await.unwrap(), 1);

    // COPY OUT of the same rows.
    let data: Vec<Bytes> = client
        .copy_out(
            "COPY (SELECT \"snapshot_id\",\"snapshot_time\",\"schema_version\",\"next_catalog_id\",\
             \"next_file_id\" FROM \"public\".\"ducklake_snapshot\") TO STDOUT (FORMAT \"binary\")",
        )
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let data = data.concat();
    assert_eq!(
        decode_stream(&snapshot_columns(), &data).unwrap(),
        vec![row]
    );

    // A duplicate snapshot id inside a commit batch: 23505 with PostgreSQL's
    // message, the rest skipped, the block failed until ROLLBACK.
    let error = client
        .simple_query(
            "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ; \
             INSERT INTO \"public\".ducklake_snapshot VALUES (0, NOW(), 1, 1, 1); SELECT 1",
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&SqlState::UNIQUE_VIOLATION));
    assert!(error
        .as_db_error()
        .unwrap()
        .message()
        .contains("violates unique constraint \"ducklake_snapshot_pkey\""));
    let error = client.simple_query("SELECT 1").await.unwrap_err();
    assert_eq!(error.code(), Some(&SqlState::IN_FAILED_SQL_TRANSACTION));
    client.simple_query("ROLLBACK").await.unwrap();
}

#[tokio::test]
async fn latest_snapshot_query_prepares_like_pqprepare() {
    let port = start().await;
    let client = connect(port).await;
    client.batch_execute(CREATE).await.unwrap();
    client
        .batch_execute("INSERT INTO \"public\".ducklake_snapshot VALUES (0, NOW(), 0, 1, 0)")
        .await
        .unwrap();
    let sql = "SELECT snapshot_id, schema_version, next_catalog_id, next_file_id \
               FROM \"public\".ducklake_snapshot WHERE snapshot_id = \
               ( SELECT MAX(snapshot_id) FROM \"public\".ducklake_snapshot )";
    let statement = client.prepare(sql).await.unwrap();
    let described: Vec<(&str, &Type)> = statement
        .columns()
        .iter()
        .map(|c| (c.name(), c.type_()))
        .collect();
    assert_eq!(
        described,
        [
            ("snapshot_id", &Type::INT8),
            ("schema_version", &Type::INT8),
            ("next_catalog_id", &Type::INT8),
            ("next_file_id", &Type::INT8),
        ]
    );
    let messages = client.simple_query(sql).await.unwrap();
    let row = messages
        .iter()
        .find_map(|m| match m {
            SimpleQueryMessage::Row(row) => Some(row),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (0..4).map(|i| row.get(i)).collect::<Vec<_>>(),
        [Some("0"), Some("0"), Some("1"), Some("0")]
    );
}

/// postgres_scanner's UPDATE path (DuckLake's `ducklake_set_option` on an
/// existing option): a temporary table filled by a *text* COPY (CopyInResponse
/// in text format), then UPDATE ... FROM it by ctid. Before the fix the server
/// rejected the temporary table and only spoke binary COPY.
#[tokio::test]
async fn text_copy_into_temporary_table_then_update_by_ctid() {
    let port = start().await;
    let client = connect(port).await;
    client
        .batch_execute(
            "CREATE TABLE \"public\".\"ducklake_metadata\"(\"key\" VARCHAR NOT NULL, \
             \"value\" VARCHAR NOT NULL, \"scope\" VARCHAR, \"scope_id\" BIGINT); \
             INSERT INTO ducklake_metadata VALUES ('data_inlining_row_limit', '5', NULL, NULL)",
        )
        .await
        .unwrap();
    client
        .batch_execute("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        .await
        .unwrap();
    let ctid = client
        .simple_query("SELECT ctid::TEXT FROM ducklake_metadata")
        .await
        .unwrap()
        .into_iter()
        .find_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap().to_string()),
            _ => None,
        })
        .unwrap();
    let tmp = "\"update_data_3bac78f9-06ea-42ab-89c2-a49422cad27e\"";
    client
        .batch_execute(&format!(
            "CREATE LOCAL TEMPORARY TABLE {tmp}(\"value\" VARCHAR, __page_id_string VARCHAR) ON COMMIT DROP;"
        ))
        .await
        .unwrap();
    let sink = client
        .copy_in::<_, Bytes>(&format!("COPY {tmp} FROM STDIN (FORMAT TEXT, NULL '')"))
        .await
        .unwrap();
    futures::pin_mut!(sink);
    sink.send(Bytes::from(format!("20\t'{ctid}'\n")))
        .await
        .unwrap();
    assert_eq!(sink.finish().await.unwrap(), 1);
    let updated = client
        .execute(
            &format!(
                "UPDATE \"public\".\"ducklake_metadata\" SET \"value\" = {tmp}.\"value\" FROM {tmp} \
                 WHERE \"ducklake_metadata\".ctid=__page_id_string::TID"
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(updated, 1);
    client.batch_execute("COMMIT").await.unwrap();
    let row = client
        .query_one("SELECT value FROM ducklake_metadata", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "20");
    let error = client
        .simple_query(&format!("SELECT * FROM {tmp}"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&SqlState::UNDEFINED_TABLE));
}

/// Bind parameters: Parse infers their types from their use (tokio-postgres
/// encodes each value in binary by the type Describe reports), and Bind's
/// values run as constants of those types.
#[tokio::test]
async fn bind_parameters_are_typed_by_their_use() {
    let port = start().await;
    let client = connect(port).await;
    client
        .batch_execute(
            "CREATE TABLE t (id bigint PRIMARY KEY, small int, name varchar, score double precision, ok boolean)",
        )
        .await
        .unwrap();
    let insert = client
        .prepare("INSERT INTO t (id, small, name, score, ok) VALUES ($1, $2, $3, $4, $5)")
        .await
        .unwrap();
    assert_eq!(
        insert.params(),
        &[
            Type::INT8,
            Type::INT4,
            Type::VARCHAR,
            Type::FLOAT8,
            Type::BOOL
        ]
    );
    for id in 1..=4i64 {
        let name = format!("n{id}");
        let ok = id % 2 == 0;
        client
            .execute(
                &insert,
                &[&id, &(id as i32 * 10), &name, &(id as f64 / 2.0), &ok],
            )
            .await
            .unwrap();
    }
    client
        .execute(
            &insert,
            &[
                &5i64,
                &None::<i32>,
                &None::<String>,
                &None::<f64>,
                &None::<bool>,
            ],
        )
        .await
        .unwrap();

    let select = client
        .prepare("SELECT name, small FROM t WHERE id >= $1 AND ok = $2 ORDER BY id LIMIT $3")
        .await
        .unwrap();
    assert_eq!(select.params(), &[Type::INT8, Type::BOOL, Type::INT8]);
    let rows = client
        .query(&select, &[&1i64, &true, &10i64])
        .await
        .unwrap();
    let got: Vec<(String, i32)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(got, vec![("n2".to_string(), 20), ("n4".to_string(), 40)]);

    // The same prepared statement, executed again with other values.
    let rows = client
        .query(&select, &[&3i64, &false, &1i64])
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<_, String>(0), "n3");

    let update = client
        .prepare("UPDATE t SET name = $1 WHERE small > $2")
        .await
        .unwrap();
    assert_eq!(update.params(), &[Type::VARCHAR, Type::INT4]);
    assert_eq!(client.execute(&update, &[&"big", &25i32]).await.unwrap(), 2);
    let delete = client
        .prepare("DELETE FROM t WHERE name = $1")
        .await
        .unwrap();
    assert_eq!(delete.params(), &[Type::VARCHAR]);
    assert_eq!(client.execute(&delete, &[&"big"]).await.unwrap(), 2);

    // A declared type wins; a parameter used nowhere typed is text.
    let declared = client
        .prepare_typed("SELECT $1::int8 + 1, $2", &[Type::INT8, Type::UNKNOWN])
        .await
        .unwrap();
    assert_eq!(declared.params(), &[Type::INT8, Type::TEXT]);
    let row = client.query_one(&declared, &[&41i64, &"x"]).await.unwrap();
    assert_eq!(row.get::<_, i64>(0), 42);
    assert_eq!(row.get::<_, String>(1), "x");

    // A parameter beyond those bound is PostgreSQL's error.
    let error = client.simple_query("SELECT $1").await.unwrap_err();
    assert_eq!(error.code(), Some(&SqlState::UNDEFINED_PARAMETER));
}

/// An Execute with a row limit returns that many rows and PortalSuspended;
/// later Executes of the portal go on where it stopped (JDBC's fetch size,
/// tokio-postgres' `query_portal`).
#[tokio::test]
async fn execute_with_a_row_limit_suspends_the_portal() {
    let port = start().await;
    let mut client = connect(port).await;
    client
        .batch_execute("CREATE TABLE f (id bigint); INSERT INTO f VALUES (1), (2), (3), (4), (5)")
        .await
        .unwrap();
    let txn = client.transaction().await.unwrap();
    let statement = txn
        .prepare("SELECT id FROM f WHERE id >= $1 ORDER BY id")
        .await
        .unwrap();
    let portal = txn.bind(&statement, &[&2i64]).await.unwrap();
    let mut batches = Vec::new();
    loop {
        let rows = txn.query_portal(&portal, 2).await.unwrap();
        if rows.is_empty() {
            break;
        }
        batches.push(rows.iter().map(|r| r.get::<_, i64>(0)).collect::<Vec<_>>());
    }
    assert_eq!(batches, vec![vec![2, 3], vec![4, 5]]);
    txn.commit().await.unwrap();
}
