//! Retention over the real store, driven through SQL as `rocklake gc` and
//! `rocklake excise` drive it: the floor hides and refuses old snapshots
//! without deleting anything, only moves forward, and excision deletes exactly
//! what no kept snapshot can see and schedules the removed files.

mod common;

use std::sync::Arc;

use rocklake_sql::Session;
use rocklake_store::SqlCatalog;
use rocklake_types::datum::Datum;
use rocklake_types::output::QueryOutput;

const TABLES: &[&str] = &[
    "ducklake_snapshot",
    "ducklake_snapshot_changes",
    "ducklake_schema",
    "ducklake_table",
    "ducklake_data_file",
    "ducklake_delete_file",
    "ducklake_file_column_stats",
    "ducklake_files_scheduled_for_deletion",
];

async fn rows(session: &mut Session, sql: &str) -> Result<Vec<Vec<Datum>>, (String, String)> {
    let mut results = session.execute(sql).await;
    let last = results.pop().expect("a result");
    match last {
        Ok(QueryOutput::Rows { rows, .. }) => Ok(rows.into_rows()),
        Ok(other) => panic!("{sql}: no rows but {other:?}"),
        Err(e) => Err((e.code.to_string(), e.message.clone())),
    }
}

async fn ok(session: &mut Session, sql: &str) -> Vec<Vec<Datum>> {
    rows(session, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
}

async fn ids(session: &mut Session, sql: &str) -> Vec<i64> {
    ok(session, sql)
        .await
        .into_iter()
        .map(|row| row[0].as_i64().expect("an integer"))
        .collect()
}

fn item(result: &[Vec<Datum>], name: &str) -> String {
    result
        .iter()
        .find(|row| row[0] == Datum::text(name))
        .map(|row| match &row[1] {
            Datum::Text(value) => value.to_string(),
            other => panic!("{other:?}"),
        })
        .unwrap_or_else(|| panic!("no {name} in {result:?}"))
}

/// Snapshots 0..=5 (0..=4 in 2020, 5 now); a file that lived in snapshots
/// 1..3 with a delete file and statistics, and a file still live since 2.
async fn populated() -> (tempfile::TempDir, Session) {
    let (dir, s, _) = populated_catalog().await;
    (dir, s)
}

/// [`populated`], with the catalog for more sessions.
async fn populated_catalog() -> (tempfile::TempDir, Session, Arc<SqlCatalog>) {
    let dir = tempfile::tempdir().unwrap();
    let store = common::open(dir.path()).await;
    let mut txn = store.write().unwrap();
    common::create_tables(&mut txn, TABLES).await;
    txn.commit().await.unwrap();
    let catalog = Arc::new(SqlCatalog::new(store));
    let mut s = Session::new(catalog.clone());
    let mut sql = String::new();
    for id in 0..=5 {
        let time = if id < 5 {
            format!("'2020-01-0{} 00:00:00+00'", id + 1)
        } else {
            "NOW()".to_string()
        };
        sql.push_str(&format!(
            "INSERT INTO public.ducklake_snapshot VALUES ({id}, {time}, {id}, 10, 10);\
             INSERT INTO public.ducklake_snapshot_changes VALUES ({id}, 'change {id}', NULL, NULL, NULL);"
        ));
    }
    sql.push_str(
        "INSERT INTO public.ducklake_schema VALUES (0, NULL, 0, NULL, 'main', 'main/', true);\
         INSERT INTO public.ducklake_table VALUES (1, NULL, 1, NULL, 0, 't', 't/', true);\
         INSERT INTO public.ducklake_data_file VALUES (7, 1, 1, 3, NULL, 'old.parquet', true, 'parquet', 10, 100, 10, 0, NULL, NULL, NULL, NULL);\
         INSERT INTO public.ducklake_data_file VALUES (8, 1, 2, NULL, NULL, '/abs/live.parquet', false, 'parquet', 10, 100, 10, 10, NULL, NULL, NULL, NULL);\
         INSERT INTO public.ducklake_delete_file VALUES (9, 1, 2, NULL, 7, 'old-delete.parquet', true, 'parquet', 1, 50, 5, NULL, NULL);\
         INSERT INTO public.ducklake_file_column_stats VALUES (7, 1, 1, 10, 10, 0, '1', '9', NULL, NULL);\
         INSERT INTO public.ducklake_file_column_stats VALUES (8, 1, 1, 10, 10, 0, '1', '9', NULL, NULL);\
         SELECT 1",
    );
    ok(&mut s, &sql).await;
    (dir, s, catalog)
}

#[tokio::test]
async fn the_floor_refuses_and_hides_old_snapshots_and_only_moves_forward() {
    let (_dir, mut s) = populated().await;
    let set = ok(&mut s, "CALL rocklake_retain_from('3')").await;
    assert_eq!(item(&set, "previous_retain_from"), "0");
    assert_eq!(item(&set, "retain_from"), "3");
    assert_eq!(item(&set, "latest_snapshot"), "5");

    // Time travel to a snapshot below the floor fails cleanly ...
    let refused = rows(
        &mut s,
        "SELECT snapshot_id FROM public.ducklake_snapshot WHERE snapshot_id = 2",
    )
    .await
    .unwrap_err();
    assert_eq!(refused.0, "72000", "{refused:?}");
    assert!(refused.1.contains("snapshot 2"), "{refused:?}");
    // ... the floor itself and later ones still work, listings start at it.
    assert_eq!(
        ids(
            &mut s,
            "SELECT snapshot_id FROM public.ducklake_snapshot WHERE snapshot_id = 3"
        )
        .await,
        vec![3]
    );
    assert_eq!(
        ids(
            &mut s,
            "SELECT snapshot_id FROM public.ducklake_snapshot ORDER BY 1"
        )
        .await,
        vec![3, 4, 5]
    );
    assert_eq!(
        ids(
            &mut s,
            "SELECT min(snapshot_id) FROM public.ducklake_snapshot"
        )
        .await,
        vec![3]
    );
    assert_eq!(
        ids(
            &mut s,
            "SELECT max(snapshot_id) FROM public.ducklake_snapshot"
        )
        .await,
        vec![5]
    );
    // Nothing was deleted.
    assert_eq!(
        ids(
            &mut s,
            "SELECT count(*) FROM public.ducklake_snapshot_changes"
        )
        .await,
        vec![6]
    );

    // The floor never moves back, and never past the latest snapshot.
    let back = ok(&mut s, "CALL rocklake_retain_from(1)").await;
    assert_eq!(item(&back, "retain_from"), "3");
    let past = rows(&mut s, "CALL rocklake_retain_from('99')")
        .await
        .unwrap_err();
    assert_eq!(past.0, "22023", "{past:?}");
    let bad = rows(&mut s, "CALL rocklake_retain_from('7 fortnights')")
        .await
        .unwrap_err();
    assert_eq!(bad.0, "22023", "{bad:?}");

    // An age keeps what was current that long ago: snapshot 4 (2020).
    let aged = ok(&mut s, "CALL rocklake_retain_from('1d')").await;
    assert_eq!(item(&aged, "retain_from"), "4");

    // Not inside a transaction block.
    let in_block = rows(&mut s, "BEGIN; CALL rocklake_excise()")
        .await
        .unwrap_err();
    assert_eq!(in_block.0, "25001", "{in_block:?}");
    ok(&mut s, "ROLLBACK; SELECT 1").await;
}

#[tokio::test]
async fn excise_deletes_what_no_kept_snapshot_sees_and_schedules_its_files() {
    let (_dir, mut s) = populated().await;
    let nothing = ok(&mut s, "CALL rocklake_excise()").await;
    assert_eq!(item(&nothing, "retain_from"), "0");
    assert_eq!(item(&nothing, "files scheduled for deletion"), "0");
    assert_eq!(
        ids(&mut s, "SELECT count(*) FROM public.ducklake_snapshot").await,
        vec![6]
    );

    ok(&mut s, "CALL rocklake_retain_from(4)").await;
    let report = ok(&mut s, "CALL rocklake_excise()").await;
    assert_eq!(item(&report, "retain_from"), "4");
    assert_eq!(item(&report, "rows removed from ducklake_snapshot"), "4");
    assert_eq!(
        item(&report, "rows removed from ducklake_snapshot_changes"),
        "4"
    );
    assert_eq!(item(&report, "rows removed from ducklake_data_file"), "1");
    assert_eq!(
        item(&report, "rows removed from ducklake_file_column_stats"),
        "1"
    );
    assert_eq!(item(&report, "rows removed from ducklake_delete_file"), "1");
    assert_eq!(item(&report, "files scheduled for deletion"), "2");

    assert_eq!(
        ids(
            &mut s,
            "SELECT snapshot_id FROM public.ducklake_snapshot_changes ORDER BY 1"
        )
        .await,
        vec![4, 5]
    );
    assert_eq!(
        ids(&mut s, "SELECT data_file_id FROM public.ducklake_data_file").await,
        vec![8]
    );
    assert_eq!(
        ids(
            &mut s,
            "SELECT data_file_id FROM public.ducklake_file_column_stats"
        )
        .await,
        vec![8]
    );
    assert_eq!(
        ids(&mut s, "SELECT count(*) FROM public.ducklake_delete_file").await,
        vec![0]
    );
    // Paths as DuckLake schedules them: relative to the data path.
    let scheduled = ok(
        &mut s,
        "SELECT data_file_id, path, path_is_relative FROM public.ducklake_files_scheduled_for_deletion ORDER BY 1",
    )
    .await;
    assert_eq!(
        scheduled,
        vec![
            vec![
                Datum::Int8(7),
                Datum::Text("main/t/old.parquet".into()),
                Datum::Bool(true)
            ],
            vec![
                Datum::Int8(9),
                Datum::Text("main/t/old-delete.parquet".into()),
                Datum::Bool(true)
            ],
        ]
    );
    // Live rows are untouched, and a second excision finds nothing more.
    assert_eq!(
        ids(&mut s, "SELECT table_id FROM public.ducklake_table").await,
        vec![1]
    );
    let again = ok(&mut s, "CALL rocklake_excise()").await;
    assert_eq!(again.len(), 2, "{again:?}");
}

/// The floor is kept in memory once read (a SlateDB read per transaction
/// before); a commit that advances it replaces what was kept, so no
/// transaction after it sees the old floor, and one that began before it
/// keeps the floor of its snapshot.
#[tokio::test]
async fn the_floor_kept_in_memory_follows_the_commits_that_advance_it() {
    let (_dir, mut s, catalog) = populated_catalog().await;
    let all = "SELECT snapshot_id FROM public.ducklake_snapshot ORDER BY 1";
    for _ in 0..2 {
        assert_eq!(ids(&mut s, all).await, vec![0, 1, 2, 3, 4, 5]);
    }
    let mut before = Session::new(catalog.clone());
    ok(
        &mut before,
        "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1",
    )
    .await;
    assert_eq!(ids(&mut before, all).await, vec![0, 1, 2, 3, 4, 5]);

    ok(&mut s, "CALL rocklake_retain_from('3')").await;
    assert_eq!(ids(&mut s, all).await, vec![3, 4, 5]);
    let mut after = Session::new(catalog.clone());
    for _ in 0..2 {
        assert_eq!(ids(&mut after, all).await, vec![3, 4, 5]);
    }
    assert_eq!(
        ids(&mut before, all).await,
        vec![0, 1, 2, 3, 4, 5],
        "a snapshot taken before the floor moved"
    );
    ok(&mut before, "COMMIT; SELECT 1").await;
    assert_eq!(ids(&mut before, all).await, vec![3, 4, 5]);

    ok(&mut after, "CALL rocklake_retain_from(4)").await;
    assert_eq!(ids(&mut s, all).await, vec![4, 5]);
    assert_eq!(ids(&mut before, all).await, vec![4, 5]);
}
