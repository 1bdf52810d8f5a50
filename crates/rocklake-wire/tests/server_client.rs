//! The server driven by a real PostgreSQL client library (tokio-postgres).

mod common;

use bytes::Bytes;
use futures::{SinkExt, TryStreamExt};
use rocklake_types::copy::binary::{decode_stream, encode_stream};
use rocklake_types::datum::PgType;
use rocklake_wire::ServerConfig;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

async fn connect(port: u16) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(
        &format!("host=127.0.0.1 port={port} user=postgres dbname=lake"),
        NoTls,
    )
    .await?;
    tokio::spawn(connection);
    Ok(client)
}

#[tokio::test]
async fn simple_query_multi_statement() {
    let server = common::start(ServerConfig::default()).await;
    let client = connect(server.port).await.unwrap();
    let messages = client
        .simple_query("begin; select 1; insert; commit")
        .await
        .unwrap();
    let mut rows = Vec::new();
    let mut completions = Vec::new();
    for message in &messages {
        match message {
            SimpleQueryMessage::Row(row) => rows.push(row.get(0).map(str::to_string)),
            SimpleQueryMessage::CommandComplete(n) => completions.push(*n),
            _ => {}
        }
    }
    assert_eq!(rows, [Some("1".to_string())]);
    // BEGIN, SELECT 1, INSERT 0 3, COMMIT
    assert_eq!(completions, [0, 1, 3, 0]);
}

#[tokio::test]
async fn text_values_in_simple_query() {
    let server = common::start(ServerConfig::default()).await;
    let client = connect(server.port).await.unwrap();
    let messages = client.simple_query("select types").await.unwrap();
    let row = messages
        .iter()
        .find_map(|m| match m {
            SimpleQueryMessage::Row(row) => Some(row),
            _ => None,
        })
        .unwrap();
    let values: Vec<Option<&str>> = (0..row.len()).map(|i| row.get(i)).collect();
    assert_eq!(
        values,
        [
            Some("42"),
            Some("-7"),
            Some("t"),
            Some("hi"),
            Some("0.1"),
            Some("\\xdead"),
            Some("{1,2}"),
            Some("-12.34"),
            None
        ]
    );
}

#[tokio::test]
async fn error_mid_batch_carries_sqlstate_and_fields() {
    let server = common::start(ServerConfig::default()).await;
    let client = connect(server.port).await.unwrap();
    let error = client
        .simple_query("begin; insert; fail; insert")
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&SqlState::UNIQUE_VIOLATION));
    let db = error.as_db_error().unwrap();
    assert_eq!(db.constraint(), Some("ducklake_snapshot_pkey"));
    assert_eq!(db.table(), Some("ducklake_snapshot"));
    assert_eq!(db.schema(), Some("public"));
    assert_eq!(db.detail(), Some("Key (snapshot_id)=(13) already exists."));
    // The transaction is failed until ROLLBACK.
    let error = client.simple_query("select 1").await.unwrap_err();
    assert_eq!(error.code(), Some(&SqlState::IN_FAILED_SQL_TRANSACTION));
    client.simple_query("rollback").await.unwrap();
    client.simple_query("select 1").await.unwrap();
}

#[tokio::test]
async fn copy_out_binary_with_header() {
    let server = common::start(ServerConfig::default()).await;
    let client = connect(server.port).await.unwrap();
    let chunks: Vec<Bytes> = client
        .copy_out("copy out")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let data = chunks.concat();
    assert!(data.starts_with(b"PGCOPY\n\xff\r\n\0"));
    let columns = common::copy_columns();
    assert_eq!(decode_stream(&columns, &data).unwrap(), common::copy_rows());

    let empty: Vec<Bytes> = client
        .copy_out("copy empty")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(empty.concat().len(), 21);
}

#[tokio::test]
async fn copy_in_binary() {
    let server = common::start(ServerConfig::default()).await;
    let client = connect(server.port).await.unwrap();
    let types: Vec<PgType> = common::copy_columns()
        .into_iter()
        .map(|c| c.pg_type)
        .collect();
    let stream = encode_stream(&types, &common::copy_rows())
        .unwrap()
        .freeze();
    let sink = client.copy_in::<_, Bytes>("copy in").await.unwrap();
    futures::pin_mut!(sink);
    // Chunks that do not line up with tuples.
    for piece in stream.chunks(7) {
        sink.send(Bytes::copy_from_slice(piece)).await.unwrap();
    }
    let count = sink.finish().await.unwrap();
    assert_eq!(count, 2);
    assert_eq!(server.log.lock().unwrap().copied, common::copy_rows());
}

#[tokio::test]
async fn copy_in_bad_data_is_rejected() {
    let server = common::start(ServerConfig::default()).await;
    let client = connect(server.port).await.unwrap();
    let sink = client.copy_in::<_, Bytes>("copy in").await.unwrap();
    futures::pin_mut!(sink);
    let sent = sink.send(Bytes::from_static(b"not a copy stream")).await;
    let error = match sent {
        Err(e) => e,
        Ok(()) => sink.finish().await.unwrap_err(),
    };
    assert_eq!(error.code(), Some(&SqlState::BAD_COPY_FILE_FORMAT));
    // The connection is usable afterwards.
    client.simple_query("select 1").await.unwrap();
}

#[tokio::test]
async fn prepare_describes_columns_and_binary_results_decode() {
    let server = common::start(ServerConfig::default()).await;
    let client = connect(server.port).await.unwrap();
    let statement = client.prepare("select types").await.unwrap();
    assert!(statement.params().is_empty());
    let described: Vec<(&str, &Type)> = statement
        .columns()
        .iter()
        .map(|c| (c.name(), c.type_()))
        .collect();
    assert_eq!(
        described,
        [
            ("i4", &Type::INT4),
            ("i8", &Type::INT8),
            ("b", &Type::BOOL),
            ("t", &Type::TEXT),
            ("f8", &Type::FLOAT8),
            ("by", &Type::BYTEA),
            ("k", &Type::INT2_ARRAY),
            ("n", &Type::NUMERIC),
            ("nothing", &Type::TEXT),
        ]
    );
    // tokio-postgres asks for binary results: exercises binary DataRows.
    let rows = client.query(&statement, &[]).await.unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.get::<_, i32>(0), 42);
    assert_eq!(row.get::<_, i64>(1), -7);
    assert!(row.get::<_, bool>(2));
    assert_eq!(row.get::<_, String>(3), "hi");
    assert_eq!(row.get::<_, f64>(4), 0.1);
    assert_eq!(row.get::<_, Vec<u8>>(5), vec![0xDE, 0xAD]);
    assert_eq!(row.get::<_, Vec<i16>>(6), vec![1, 2]);
    assert_eq!(row.get::<_, Option<String>>(8), None);

    let error = client.prepare("bogus").await.unwrap_err();
    assert_eq!(error.code(), Some(&SqlState::SYNTAX_ERROR));
}

#[tokio::test]
async fn too_many_clients() {
    let config = ServerConfig {
        max_sessions: 1,
        ..ServerConfig::default()
    };
    let server = common::start(config).await;
    let first = connect(server.port).await.unwrap();
    let Err(error) = connect(server.port).await else {
        panic!("second client must be refused");
    };
    assert_eq!(error.code(), Some(&SqlState::TOO_MANY_CONNECTIONS));
    first.simple_query("select 1").await.unwrap();
}

#[tokio::test]
async fn concurrent_clients_do_not_interfere() {
    let server = common::start(ServerConfig::default()).await;
    let mut tasks = Vec::new();
    for client_no in 0..8 {
        let port = server.port;
        tasks.push(tokio::spawn(async move {
            let client = connect(port).await.unwrap();
            for round in 0..25 {
                if (client_no + round) % 3 == 0 {
                    let data: Vec<Bytes> = client
                        .copy_out("copy out")
                        .await
                        .unwrap()
                        .try_collect()
                        .await
                        .unwrap();
                    let rows = decode_stream(&common::copy_columns(), &data.concat()).unwrap();
                    assert_eq!(rows, common::copy_rows());
                } else {
                    let row = client.query_one("select types", &[]).await.unwrap();
                    assert_eq!(row.get::<_, i32>(0), 42);
                    assert_eq!(row.get::<_, String>(3), "hi");
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}
