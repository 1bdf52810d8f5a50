//! Helpers shared by the store's integration tests.

#![allow(dead_code)]

use rocklake_codec::relations::Relation;
use rocklake_codec::tables::CatalogTable;
use rocklake_store::{CatalogStore, StoreLocation, StoreOptions, WriteTxn};
use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};

/// Opens (as writer) the catalog in `dir`.
pub async fn open(dir: &std::path::Path) -> CatalogStore {
    CatalogStore::open(
        &StoreLocation::Local(dir.to_path_buf()),
        StoreOptions::default(),
    )
    .await
    .expect("open catalog")
}

/// Opens (as writer) the catalog in `dir` with `options`.
pub async fn open_with(dir: &std::path::Path, options: StoreOptions) -> CatalogStore {
    CatalogStore::open(&StoreLocation::Local(dir.to_path_buf()), options)
        .await
        .expect("open catalog")
}

/// Commits `row` into `relation` in a transaction of its own.
pub async fn commit_row(
    store: &CatalogStore,
    relation: &Relation,
    row: Row,
) -> rocklake_store::StoreResult<()> {
    let mut txn = store.write()?;
    txn.insert(relation, row).await?;
    txn.commit().await
}

/// The WAL objects SlateDB wrote for the local catalog in `dir`.
pub fn wal_objects(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join("catalog").join("wal"))
        .map(|entries| entries.count())
        .unwrap_or(0)
}

/// Commits `commits` one-row transactions into `relation` (a
/// `ducklake_data_file`) at once, each from a task of its own, and waits
/// for all of them.
pub async fn commit_concurrently(store: &CatalogStore, relation: &Relation, commits: i64) {
    let relation = std::sync::Arc::new(relation.clone());
    let tasks: Vec<_> = (0..commits)
        .map(|i| {
            let store = store.clone();
            let relation = relation.clone();
            tokio::spawn(async move {
                commit_row(&store, &relation, data_file_row(i, 1, i))
                    .await
                    .unwrap();
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}

/// The crash tests' child loop: creates `ducklake_snapshot` and
/// `ducklake_data_file`, then commits snapshot `i` with `files` data files
/// for i = 0, 1, ..., printing `acked i` once each commit returned.
pub async fn commit_snapshots_forever(store: &CatalogStore, files: i64) {
    let mut setup = store.write().unwrap();
    let rels = create_tables(&mut setup, &["ducklake_snapshot", "ducklake_data_file"]).await;
    setup.commit().await.unwrap();
    for i in 0.. {
        let mut txn = store.write().unwrap();
        txn.insert(&rels[0], snapshot_row(i)).await.unwrap();
        for f in 0..files {
            txn.insert(&rels[1], data_file_row(i * files + f, 1, i))
                .await
                .unwrap();
        }
        txn.commit().await.unwrap();
        println!("acked {i}");
    }
}

/// Creates the named DuckLake catalog tables in `public` and returns them.
pub async fn create_tables(txn: &mut WriteTxn, names: &[&str]) -> Vec<Relation> {
    let mut out = Vec::new();
    for name in names {
        let relation = txn
            .create_catalog_table(name)
            .await
            .expect("create relation");
        out.push(relation.expect("new relation"));
    }
    out
}

/// Creates `ducklake_inlined_data_1_1` with the three MVCC columns and `extra`.
pub async fn create_inlined_table(txn: &mut WriteTxn, extra: Vec<ColumnDef>) -> Relation {
    let mut columns = vec![
        ColumnDef::new("row_id", PgType::Int8),
        ColumnDef::new("begin_snapshot", PgType::Int8),
        ColumnDef::new("end_snapshot", PgType::Int8),
    ];
    columns.extend(extra);
    txn.create_relation(
        "public",
        "ducklake_inlined_data_1_1",
        columns,
        vec![],
        false,
    )
    .await
    .expect("create inlined table")
    .expect("new relation")
}

/// A `ducklake_snapshot` row.
pub fn snapshot_row(id: i64) -> Row {
    vec![
        Datum::Int8(id),
        Datum::TimestampTz(1_000_000 * id),
        Datum::Int8(id),
        Datum::Int8(id + 10),
        Datum::Int8(id + 20),
    ]
}

/// A `ducklake_data_file` row of table `table_id` begun at `begin`.
pub fn data_file_row(file_id: i64, table_id: i64, begin: i64) -> Row {
    let table = CatalogTable::by_name("ducklake_data_file").unwrap();
    let mut row = vec![Datum::Null; table.columns.len()];
    row[0] = Datum::Int8(file_id);
    row[1] = Datum::Int8(table_id);
    row[2] = Datum::Int8(begin);
    row[5] = Datum::text(format!("data/file-{file_id}.parquet"));
    row[6] = Datum::Bool(true);
    row[8] = Datum::Int8(1000);
    row
}

/// Looks a relation up by name in `public` through a fresh read transaction.
pub async fn relation(store: &CatalogStore, name: &str) -> Relation {
    store
        .read()
        .unwrap()
        .view()
        .relation("public", name)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("relation {name} missing"))
}

/// The rows of the last statement of `sql` run by `session`; every statement
/// must succeed.
pub async fn query(
    session: &mut rocklake_sql::Session,
    sql: &str,
) -> Vec<Vec<rocklake_types::datum::Datum>> {
    use rocklake_types::output::QueryOutput;
    let mut results = session.execute(sql).await;
    let last = results.pop().expect("a result");
    for earlier in results {
        earlier.unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    }
    match last.unwrap_or_else(|e| panic!("{sql}: {e:?}")) {
        QueryOutput::Rows { rows, .. } | QueryOutput::CopyOut { rows, .. } => rows.into_rows(),
        other => panic!("{sql}: no rows but {other:?}"),
    }
}

/// How long a transaction in flight holds its claims (unique keys, row
/// locks) before it ends, in [`waits_for`].
pub const HOLD: std::time::Duration = std::time::Duration::from_millis(100);

/// Runs `waiting` while the transaction in flight ends (`end`, after
/// [`HOLD`]), and checks that `waiting` finished only once it had.
pub async fn waits_for<T>(
    waiting: impl std::future::Future<Output = T>,
    end: impl std::future::Future<Output = ()>,
) -> T {
    use std::sync::atomic::{AtomicBool, Ordering};
    let ended = AtomicBool::new(false);
    let (result, ()) = tokio::join!(
        async {
            let result = waiting.await;
            assert!(
                ended.load(Ordering::SeqCst),
                "must wait for the transaction in flight"
            );
            result
        },
        async {
            tokio::time::sleep(HOLD).await;
            ended.store(true, Ordering::SeqCst);
            end.await;
        }
    );
    result
}

/// DuckLake's `ducklake_file_column_stats`, created over SQL.
pub const CREATE_FILE_COLUMN_STATS: &str =
    "CREATE TABLE public.ducklake_file_column_stats (data_file_id BIGINT, table_id BIGINT, \
     column_id BIGINT, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, \
     min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN); SELECT 1";

/// Two SQL sessions over one catalog opened in `dir`.
pub async fn two_sessions(dir: &std::path::Path) -> (rocklake_sql::Session, rocklake_sql::Session) {
    let store = open(dir).await;
    let catalog = std::sync::Arc::new(rocklake_store::SqlCatalog::new(store));
    (
        rocklake_sql::Session::new(catalog.clone()),
        rocklake_sql::Session::new(catalog),
    )
}

/// The binary COPYs of whole tables the process answered with `result`
/// (`hit`, `extended` or `miss`; see the metric `encoded_copy_lookups`).
pub fn encoded_copies(result: &str) -> u64 {
    let text = rocklake_metrics::metrics().render();
    let label = format!("rocklake_encoded_copy_lookups_total{{result=\"{result}\"}}");
    text.lines()
        .find(|line| line.starts_with(&label))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
        .unwrap_or(0)
}
