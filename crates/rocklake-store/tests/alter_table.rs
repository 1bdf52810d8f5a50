//! ALTER TABLE through the SQL engine over the real store: DuckLake's
//! 0.3 -> 1.0 migration statements on catalog tables, older rows reading added
//! defaults, rollback, and the altered tables surviving a reopen.

mod common;

use common::query;

use std::sync::Arc;

use rocklake_codec::tags::Tag;
use rocklake_sql::Session;
use rocklake_store::SqlCatalog;
use rocklake_types::datum::Datum;
use rocklake_types::SqlState;

async fn fails(session: &mut Session, sql: &str) -> SqlState {
    match session.execute(sql).await.pop().expect("a result") {
        Ok(output) => panic!("{sql} succeeded: {output:?}"),
        Err(e) => e.code,
    }
}

fn text(s: &str) -> Datum {
    Datum::text(s.to_string())
}

/// `ducklake_data_file` and `ducklake_column` as DuckDB 1.4 (spec 0.3) creates them.
const CREATE_0_3: &str = "CREATE TABLE \"public\".\"ducklake_data_file\"(\"data_file_id\" BIGINT PRIMARY KEY, \
    \"table_id\" BIGINT, \"begin_snapshot\" BIGINT, \"end_snapshot\" BIGINT, \"file_order\" BIGINT, \
    \"path\" VARCHAR, \"path_is_relative\" BOOLEAN, \"file_format\" VARCHAR, \"record_count\" BIGINT, \
    \"file_size_bytes\" BIGINT, \"footer_size\" BIGINT, \"row_id_start\" BIGINT, \"partition_id\" BIGINT, \
    \"encryption_key\" VARCHAR, \"partial_file_info\" VARCHAR, \"mapping_id\" BIGINT); \
    CREATE TABLE \"public\".\"ducklake_column\"(\"column_id\" BIGINT, \"begin_snapshot\" BIGINT, \
    \"end_snapshot\" BIGINT, \"table_id\" BIGINT, \"column_order\" BIGINT, \"column_name\" VARCHAR, \
    \"column_type\" VARCHAR, \"initial_default\" VARCHAR, \"default_value\" VARCHAR, \
    \"nulls_allowed\" BOOLEAN, \"parent_column\" BIGINT); \
    INSERT INTO ducklake_data_file VALUES (1, 5, 1, NULL, NULL, 'a.parquet', true, 'parquet', 10, \
    100, 10, 0, NULL, NULL, 'partial_max:3', NULL); \
    INSERT INTO ducklake_column VALUES (1, 1, NULL, 5, 0, 'id', 'int32', NULL, NULL, true, NULL)";

/// What DuckDB 1.5.5 sends to migrate those two tables (double spaces included).
const MIGRATE: &str = "ALTER TABLE \"public\".\"ducklake_column\" ADD COLUMN  \"default_value_type\" VARCHAR DEFAULT 'literal'; \
    ALTER TABLE \"public\".\"ducklake_column\" ADD COLUMN  \"default_value_dialect\" VARCHAR DEFAULT NULL; \
    ALTER TABLE \"public\".\"ducklake_data_file\" ADD COLUMN  \"partial_max\" BIGINT; \
    ALTER TABLE \"public\".\"ducklake_data_file\" DROP COLUMN  \"partial_file_info\"";

#[tokio::test]
async fn the_0_3_migration_keeps_catalog_rows_under_their_tags_and_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::open(dir.path()).await;
    let mut s = Session::new(Arc::new(SqlCatalog::new(store.clone())));
    query(&mut s, &format!("{CREATE_0_3}; SELECT 1")).await;
    assert_eq!(
        common::relation(&store, "ducklake_data_file")
            .await
            .placement()
            .tag,
        Tag::DataFile
    );

    // Rolled back, the migration leaves nothing.
    query(&mut s, &format!("BEGIN; {MIGRATE}; ROLLBACK; SELECT 1")).await;
    assert_eq!(
        query(&mut s, "SELECT count(*) FROM information_schema.columns WHERE table_name = 'ducklake_data_file' AND column_name = 'partial_file_info'").await,
        vec![vec![Datum::Int8(1)]]
    );

    query(&mut s, &format!("BEGIN; {MIGRATE}; COMMIT; SELECT 1")).await;
    query(
        &mut s,
        "INSERT INTO ducklake_data_file VALUES (2, 5, 2, NULL, NULL, 'b.parquet', true, 'parquet', \
         1, 1, 1, 10, NULL, NULL, NULL, 4); \
         INSERT INTO ducklake_column (column_id, begin_snapshot, table_id, column_order, column_name, \
         column_type, nulls_allowed) VALUES (2, 2, 5, 1, 'x', 'varchar', true); SELECT 1",
    )
    .await;
    drop(s);
    drop(store);

    let store = common::open(dir.path()).await;
    let mut s = Session::new(Arc::new(SqlCatalog::new(store.clone())));
    assert_eq!(
        query(
            &mut s,
            "SELECT data_file_id, path, mapping_id, partial_max FROM ducklake_data_file ORDER BY 1"
        )
        .await,
        vec![
            vec![Datum::Int8(1), text("a.parquet"), Datum::Null, Datum::Null],
            vec![
                Datum::Int8(2),
                text("b.parquet"),
                Datum::Null,
                Datum::Int8(4)
            ],
        ]
    );
    assert_eq!(
        query(
            &mut s,
            "SELECT column_id, default_value_type, default_value_dialect FROM ducklake_column \
             WHERE table_id = 5 ORDER BY 1"
        )
        .await,
        vec![
            vec![Datum::Int8(1), text("literal"), Datum::Null],
            vec![Datum::Int8(2), text("literal"), Datum::Null],
        ],
        "the old row reads the added default, the new one got it on insert"
    );
    // The primary key still holds.
    assert_eq!(
        fails(
            &mut s,
            "INSERT INTO ducklake_data_file (data_file_id, table_id) VALUES (2, 5)"
        )
        .await,
        SqlState::UNIQUE_VIOLATION
    );
    let relation = common::relation(&store, "ducklake_data_file").await;
    assert_eq!(relation.placement().tag, Tag::DataFile);
    assert_eq!(relation.columns.len(), 16);
}

#[tokio::test]
async fn alter_table_errors_are_postgresql_errors() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::open(dir.path()).await;
    let mut s = Session::new(Arc::new(SqlCatalog::new(store.clone())));
    query(
        &mut s,
        "CREATE TABLE t (a int PRIMARY KEY, b text); INSERT INTO t VALUES (1, NULL); SELECT 1",
    )
    .await;
    for (sql, code) in [
        (
            "ALTER TABLE nope ADD COLUMN x int",
            SqlState::UNDEFINED_TABLE,
        ),
        ("ALTER TABLE t ADD COLUMN b int", SqlState::DUPLICATE_COLUMN),
        ("ALTER TABLE t DROP COLUMN zz", SqlState::UNDEFINED_COLUMN),
        (
            "ALTER TABLE t RENAME COLUMN zz TO y",
            SqlState::UNDEFINED_COLUMN,
        ),
        (
            "ALTER TABLE t RENAME COLUMN a TO b",
            SqlState::DUPLICATE_COLUMN,
        ),
        (
            "ALTER TABLE t ALTER COLUMN b SET NOT NULL",
            SqlState::NOT_NULL_VIOLATION,
        ),
        (
            "ALTER TABLE t ADD COLUMN c int NOT NULL",
            SqlState::NOT_NULL_VIOLATION,
        ),
        (
            "ALTER TABLE t ALTER COLUMN a DROP NOT NULL",
            SqlState::INVALID_TABLE_DEFINITION,
        ),
        (
            "ALTER TABLE t ADD COLUMN d timestamptz DEFAULT now()",
            SqlState::FEATURE_NOT_SUPPORTED,
        ),
    ] {
        assert_eq!(fails(&mut s, sql).await, code, "{sql}");
    }
    // A NOT NULL column with a default fills the existing rows.
    query(
        &mut s,
        "ALTER TABLE t ADD COLUMN e int NOT NULL DEFAULT 5; SELECT 1",
    )
    .await;
    assert_eq!(
        query(&mut s, "SELECT a, b, e FROM t").await,
        vec![vec![Datum::Int4(1), Datum::Null, Datum::Int4(5)]]
    );
    // A rename onto an existing table fails; dropping the primary-key column drops the key.
    query(&mut s, "CREATE TABLE u (x int); SELECT 1").await;
    assert_eq!(
        fails(&mut s, "ALTER TABLE t RENAME TO u").await,
        SqlState::DUPLICATE_TABLE
    );
    query(
        &mut s,
        "ALTER TABLE t DROP COLUMN a; INSERT INTO t (b) VALUES ('x'), ('x'); SELECT 1",
    )
    .await;
    assert_eq!(
        query(&mut s, "SELECT count(*) FROM t").await,
        vec![vec![Datum::Int8(3)]]
    );
}

/// The 0.2 -> 0.3 migration renames `ducklake_file_column_statistics` (a
/// table of no DuckLake 0.3+ name, stored as generic rows) to
/// `ducklake_file_column_stats`: its rows move under the catalog table's tag,
/// keeping their row sequence (ctid).
#[tokio::test]
async fn a_rename_to_a_catalog_table_name_moves_the_rows_to_its_tag() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::open(dir.path()).await;
    let mut s = Session::new(Arc::new(SqlCatalog::new(store.clone())));
    query(
        &mut s,
        "CREATE TABLE ducklake_file_column_statistics (data_file_id BIGINT, table_id BIGINT, \
         column_id BIGINT, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, \
         min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN); \
         INSERT INTO ducklake_file_column_statistics VALUES (1, 5, 1, 10, 3, 0, '1', '9', NULL), \
         (2, 5, 1, 11, 4, 1, '2', '8', false); SELECT 1",
    )
    .await;
    let before = common::relation(&store, "ducklake_file_column_statistics").await;
    assert_eq!(before.placement().tag, Tag::GenericRow);
    let ctids = query(
        &mut s,
        "SELECT ctid::text FROM ducklake_file_column_statistics ORDER BY data_file_id",
    )
    .await;
    query(
        &mut s,
        "ALTER TABLE IF EXISTS ducklake_file_column_statistics RENAME TO ducklake_file_column_stats; \
         ALTER TABLE IF EXISTS ducklake_no_such_table RENAME TO ducklake_other; \
         ALTER TABLE ducklake_file_column_stats ADD COLUMN extra_stats VARCHAR DEFAULT NULL; SELECT 1",
    )
    .await;
    let after = common::relation(&store, "ducklake_file_column_stats").await;
    assert_eq!(after.placement().tag, Tag::FileColumnStats);
    assert_eq!(
        query(
            &mut s,
            "SELECT ctid::text FROM ducklake_file_column_stats ORDER BY data_file_id"
        )
        .await,
        ctids,
        "the rows keep their identity"
    );
    assert_eq!(
        query(
            &mut s,
            "SELECT data_file_id, min_value, contains_nan, extra_stats FROM ducklake_file_column_stats \
             WHERE table_id = 5 ORDER BY 1"
        )
        .await,
        vec![
            vec![Datum::Int8(1), text("1"), Datum::Null, Datum::Null],
            vec![Datum::Int8(2), text("2"), Datum::Bool(false), Datum::Null],
        ]
    );
    assert_eq!(
        fails(&mut s, "SELECT * FROM ducklake_file_column_statistics").await,
        SqlState::UNDEFINED_TABLE
    );
}
