//! Simple predicates are pushed down to `StorageTxn::scan` as `ScanFilter`s,
//! and the engine re-checks them (the in-memory storage ignores filters).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rocklake_sql::storage::{
    ColumnBound, RelationDef, RelationList, RowId, ScanFilter, ScannedRow, Storage, StorageResult,
    StorageTxn,
};
use rocklake_sql::{MemoryStorage, Session};
use rocklake_types::datum::{Datum, Row};
use rocklake_types::output::QueryOutput;

#[derive(Clone)]
struct Recording {
    inner: MemoryStorage,
    seen: Arc<Mutex<Vec<(String, ScanFilter)>>>,
}

struct RecordingTxn {
    inner: Box<dyn StorageTxn>,
    seen: Arc<Mutex<Vec<(String, ScanFilter)>>>,
}

#[async_trait]
impl Storage for Recording {
    async fn begin(&self, read_only: bool) -> StorageResult<Box<dyn StorageTxn>> {
        Ok(Box::new(RecordingTxn {
            inner: self.inner.begin(read_only).await?,
            seen: self.seen.clone(),
        }))
    }
}

#[async_trait]
impl StorageTxn for RecordingTxn {
    async fn relation(&mut self, schema: &str, name: &str) -> StorageResult<Option<RelationDef>> {
        self.inner.relation(schema, name).await
    }
    async fn relations(&mut self) -> StorageResult<RelationList> {
        self.inner.relations().await
    }
    async fn create_relation(
        &mut self,
        def: RelationDef,
        if_not_exists: bool,
    ) -> StorageResult<bool> {
        self.inner.create_relation(def, if_not_exists).await
    }
    async fn drop_relation(
        &mut self,
        schema: &str,
        name: &str,
        if_exists: bool,
    ) -> StorageResult<bool> {
        self.inner.drop_relation(schema, name, if_exists).await
    }
    async fn create_schema(&mut self, name: &str, if_not_exists: bool) -> StorageResult<bool> {
        self.inner.create_schema(name, if_not_exists).await
    }
    async fn schemas(&mut self) -> StorageResult<Vec<String>> {
        self.inner.schemas().await
    }
    async fn scan(
        &mut self,
        relation: &RelationDef,
        filter: &ScanFilter,
    ) -> StorageResult<Vec<ScannedRow>> {
        self.seen
            .lock()
            .unwrap()
            .push((relation.name.clone(), filter.clone()));
        self.inner.scan(relation, filter).await
    }
    async fn insert(&mut self, relation: &RelationDef, rows: Vec<Row>) -> StorageResult<()> {
        self.inner.insert(relation, rows).await
    }
    async fn update(
        &mut self,
        relation: &RelationDef,
        id: RowId,
        new_row: Row,
    ) -> StorageResult<()> {
        self.inner.update(relation, id, new_row).await
    }
    async fn delete(&mut self, relation: &RelationDef, id: RowId) -> StorageResult<()> {
        self.inner.delete(relation, id).await
    }
    async fn commit(self: Box<Self>) -> StorageResult<()> {
        self.inner.commit().await
    }
}

#[tokio::test]
async fn pushes_equality_in_and_ranges() {
    let storage = Recording {
        inner: MemoryStorage::new(),
        seen: Arc::new(Mutex::new(Vec::new())),
    };
    let mut s = Session::new(Arc::new(storage.clone()));
    for sql in [
        "CREATE TABLE \"public\".\"ducklake_table_stats\"(\"table_id\" BIGINT, \"record_count\" BIGINT, \"next_row_id\" BIGINT, \"file_size_bytes\" BIGINT)",
        "INSERT INTO \"public\".ducklake_table_stats VALUES (3, 10, 10, 100), (4, 1, 1, 1), (5, 2, 2, 2)",
    ] {
        s.execute(sql).await.into_iter().for_each(|r| {
            r.unwrap();
        });
    }
    storage.seen.lock().unwrap().clear();
    let res = s
        .execute("COPY (SELECT \"table_id\", \"record_count\" FROM \"public\".\"ducklake_table_stats\" WHERE \"table_id\" = '3' AND \"record_count\" <= '10') TO STDOUT (FORMAT \"binary\")")
        .await;
    let Ok(QueryOutput::CopyOut { rows, .. }) = &res[0] else {
        panic!("{res:?}")
    };
    assert_eq!(
        rows,
        &vec![vec![Datum::Int8(3), Datum::Int8(10)]].into(),
        "re-checked although storage ignores filters"
    );
    let seen = storage.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let bounds = &seen[0].1.bounds;
    assert!(
        bounds.contains(&(0, ColumnBound::Eq(Datum::Int8(3)))),
        "{bounds:?}"
    );
    assert!(
        bounds.contains(&(
            1,
            ColumnBound::Range {
                lower: None,
                upper: Some((Datum::Int8(10), true))
            }
        )),
        "{bounds:?}"
    );
    storage.seen.lock().unwrap().clear();
    let res = s
        .execute("DELETE FROM \"public\".ducklake_table_stats WHERE table_id IN (4, 5)")
        .await;
    assert!(matches!(&res[0], Ok(QueryOutput::Command { tag, .. }) if tag == "DELETE 2"));
    let seen = storage.seen.lock().unwrap().clone();
    assert_eq!(
        seen[0].1.bounds,
        vec![(0, ColumnBound::In(vec![Datum::Int8(4), Datum::Int8(5)]))]
    );
}

#[tokio::test]
async fn a_lone_max_or_min_marks_its_scan_as_needing_one_extreme_row() {
    use rocklake_sql::storage::Extreme;
    let storage = Recording {
        inner: MemoryStorage::new(),
        seen: Arc::new(Mutex::new(Vec::new())),
    };
    let mut s = Session::new(Arc::new(storage.clone()));
    for r in s
        .execute("CREATE TABLE t (id BIGINT, v BIGINT); INSERT INTO t VALUES (1, 5), (7, 2)")
        .await
    {
        r.unwrap();
    }
    let cases = [
        (
            "SELECT MAX(id) FROM t",
            Some(Extreme {
                column: 0,
                largest: true,
            }),
        ),
        (
            "SELECT min(v) FROM t",
            Some(Extreme {
                column: 1,
                largest: false,
            }),
        ),
        // The WHERE clause may drop the extreme row: every row is needed.
        ("SELECT max(id) FROM t WHERE v > 3", None),
        ("SELECT max(id), count(*) FROM t", None),
        ("SELECT max(id) FROM t GROUP BY v", None),
        ("SELECT max(id + 1) FROM t", None),
    ];
    for (sql, expected) in cases {
        storage.seen.lock().unwrap().clear();
        for r in s.execute(sql).await {
            r.unwrap();
        }
        let seen = storage.seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "{sql}");
        assert_eq!(seen[0].1.extreme, expected, "{sql}");
    }
    // The subquery DuckLake sends for the latest snapshot.
    storage.seen.lock().unwrap().clear();
    let res = s
        .execute("SELECT id, v FROM t WHERE id = (SELECT MAX(id) FROM t)")
        .await;
    let Ok(QueryOutput::Rows { rows, .. }) = &res[0] else {
        panic!("{res:?}")
    };
    assert_eq!(rows, &vec![vec![Datum::Int8(7), Datum::Int8(2)]].into());
    let extremes: Vec<_> = storage
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|(_, f)| f.extreme)
        .collect();
    assert!(
        extremes.contains(&Some(Extreme {
            column: 0,
            largest: true
        })),
        "{extremes:?}"
    );
    // ... and its value keys the outer scan, which is read after it.
    let seen = storage.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(
        seen[1].1.bounds,
        vec![(0, ColumnBound::Eq(Datum::Int8(7)))],
        "{seen:?}"
    );
    // A subquery with no rows (NULL) keys nothing and matches nothing.
    let res = s
        .execute("SELECT id FROM t WHERE id = (SELECT max(id) FROM t WHERE v > 100)")
        .await;
    let Ok(QueryOutput::Rows { rows, .. }) = &res[0] else {
        panic!("{res:?}")
    };
    assert!(rows.is_empty());
}
