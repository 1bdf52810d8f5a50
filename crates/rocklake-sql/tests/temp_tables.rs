#![allow(clippy::result_large_err)]

//! postgres_scanner's UPDATE through a temporary table, as DuckLake sends it
//! for `ducklake_set_option` overwriting an existing option:
//!
//! ```text
//! CREATE LOCAL TEMPORARY TABLE "update_data_<uuid>"(...) ON COMMIT DROP;
//! COPY "update_data_<uuid>" FROM STDIN (FORMAT TEXT, NULL '')
//! UPDATE t SET v = tmp.v FROM tmp WHERE t.ctid = __page_id_string::TID
//! ```
//!
//! (Before: `unsupported CREATE TABLE form`, so DuckDB failed with "Failed to
//! insert config option in DuckLake".)

use rocklake_types::copy::CopyFormat;
use std::sync::Arc;

use rocklake_sql::{MemoryStorage, Session};
use rocklake_types::copy::text as copy_text;
use rocklake_types::datum::{Datum, Row};
use rocklake_types::output::{CollectSink, QueryOutput};

mod support;
use support::ok;

async fn rows(s: &mut Session, sql: &str) -> Vec<Row> {
    match ok(s, sql).await.pop() {
        Some(QueryOutput::Rows { rows, .. }) | Some(QueryOutput::CopyOut { rows, .. }) => {
            rows.into_rows()
        }
        other => panic!("{sql}: {other:?}"),
    }
}

const TMP: &str = "\"update_data_038b5cb7-825d-4e18-a269-aa881a79351b\"";

#[tokio::test]
async fn update_from_a_text_copied_temporary_table() {
    let storage = MemoryStorage::new();
    let mut s = Session::new(Arc::new(storage.clone()));
    ok(&mut s, "CREATE TABLE \"public\".\"ducklake_metadata\"(\"key\" VARCHAR NOT NULL, \"value\" VARCHAR NOT NULL, \"scope\" VARCHAR, \"scope_id\" BIGINT)").await;
    ok(&mut s, "INSERT INTO ducklake_metadata VALUES ('data_inlining_row_limit', '5', NULL, NULL), ('version', '1.0', NULL, NULL)").await;

    ok(&mut s, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ").await;
    let ctid = rows(&mut s, "COPY (SELECT \"key\", \"scope\", ctid FROM \"public\".\"ducklake_metadata\" WHERE \"key\" = 'data_inlining_row_limit' COLLATE \"C\") TO STDOUT (FORMAT \"binary\");").await;
    let Datum::Tid { block, offset } = ctid[0][2] else {
        panic!("{ctid:?}")
    };
    ok(&mut s, &format!("CREATE LOCAL TEMPORARY TABLE {TMP}(\"value\" VARCHAR, __page_id_string VARCHAR) ON COMMIT DROP;")).await;
    // postgres_scanner sends the ctid quoted; PostgreSQL's tidin accepts that.
    let data = format!("20\t'({block},{offset})'\n");
    let mut sink = CollectSink::new().with_copy_source(Box::new(move |columns, format| {
        let CopyFormat::Text(format) = format else {
            panic!("a text COPY, not {format:?}")
        };
        assert_eq!(format.null, "");
        copy_text::decode(data.as_bytes(), columns, format)
    }));
    s.run(
        &format!("COPY {TMP} FROM STDIN (FORMAT TEXT, NULL '')"),
        &mut sink,
    )
    .await
    .unwrap();
    let copied = sink.into_results().pop().unwrap().unwrap();
    assert!(
        matches!(&copied, QueryOutput::Command { tag, .. } if tag == "COPY 1"),
        "{copied:?}"
    );
    let out = ok(&mut s, &format!("UPDATE \"public\".\"ducklake_metadata\" SET \"value\" = {TMP}.\"value\" FROM {TMP} WHERE \"ducklake_metadata\".ctid=__page_id_string::TID")).await;
    assert!(
        matches!(&out[0], QueryOutput::Command { tag, .. } if tag == "UPDATE 1"),
        "{out:?}"
    );
    ok(&mut s, "COMMIT").await;

    let got = rows(
        &mut s,
        "SELECT key, value FROM ducklake_metadata ORDER BY key",
    )
    .await;
    assert_eq!(
        got,
        vec![
            vec![
                Datum::Text("data_inlining_row_limit".into()),
                Datum::Text("20".into())
            ],
            vec![Datum::Text("version".into()), Datum::Text("1.0".into())],
        ]
    );
    // ON COMMIT DROP: the temporary table is gone, and never reached storage.
    let e = s
        .execute(&format!("SELECT * FROM {TMP}"))
        .await
        .pop()
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, "42P01");
    let mut other = Session::new(Arc::new(storage));
    let tables = rows(
        &mut other,
        "SELECT relname FROM pg_class WHERE relname LIKE 'update_data%'",
    )
    .await;
    assert!(tables.is_empty(), "{tables:?}");
}

#[tokio::test]
async fn temporary_tables_vanish_on_rollback_and_shadow_public_names() {
    let storage = MemoryStorage::new();
    let mut s = Session::new(Arc::new(storage));
    ok(&mut s, "CREATE TABLE t (a INTEGER)").await;
    ok(&mut s, "INSERT INTO t VALUES (1)").await;
    ok(&mut s, "BEGIN").await;
    ok(
        &mut s,
        "CREATE TEMPORARY TABLE t (a INTEGER) ON COMMIT DROP",
    )
    .await;
    ok(&mut s, "INSERT INTO t VALUES (2), (3)").await;
    assert_eq!(
        rows(&mut s, "SELECT count(*) FROM t").await,
        vec![vec![Datum::Int8(2)]]
    );
    assert_eq!(
        rows(&mut s, "SELECT count(*) FROM public.t").await,
        vec![vec![Datum::Int8(1)]]
    );
    ok(&mut s, "ROLLBACK").await;
    assert_eq!(
        rows(&mut s, "SELECT a FROM t").await,
        vec![vec![Datum::Int4(1)]]
    );

    // Session-long temporary tables are not supported: 0A000, not a silent answer.
    let e = s
        .execute("CREATE TEMPORARY TABLE x (a INTEGER)")
        .await
        .pop()
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, "0A000");
    let e = s
        .execute("CREATE TEMPORARY TABLE public.x (a INTEGER) ON COMMIT DROP")
        .await
        .pop()
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, "42P16");
}
