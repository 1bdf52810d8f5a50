//! A whole-table binary COPY kept encoded and extended, over the real store:
//! after commits that only added rows (which a scan hands over after the
//! others, in `ctid` order, wherever their keys sort), the kept tuples
//! followed by those of the added rows answer the next COPY; any other
//! change (a delete, an update, an older snapshot, the transaction's own
//! writes) reads the table again. Every answer is checked against a plain
//! SELECT of the same rows.
//!
//! Its own test binary: the outcome counters are the process's.

mod common;

use common::query;

use rocklake_sql::Session;
use rocklake_types::datum::Datum;

const COPY: &str = "COPY (SELECT \"data_file_id\", \"column_id\", \"min_value\" FROM \
                    \"public\".\"ducklake_file_column_stats\") TO STDOUT (FORMAT binary)";
const SELECT: &str =
    "SELECT data_file_id, column_id, min_value FROM public.ducklake_file_column_stats";

/// Runs the COPY in `session`, checks it against the SELECT and returns
/// how it was answered (`none`: as any query, when the transaction's read
/// has no stamp) and its rows.
async fn copy(session: &mut Session) -> (&'static str, Vec<Vec<Datum>>) {
    let before = ["hit", "extended", "miss"].map(common::encoded_copies);
    let rows = query(session, COPY).await;
    let after = ["hit", "extended", "miss"].map(common::encoded_copies);
    assert_eq!(rows, query(session, SELECT).await, "COPY and SELECT differ");
    let changed: Vec<&str> = ["hit", "extended", "miss"]
        .into_iter()
        .zip(before.iter().zip(&after))
        .filter(|(_, (b, a))| a > b)
        .map(|(name, _)| name)
        .collect();
    assert!(changed.len() <= 1, "one outcome per COPY: {changed:?}");
    (changed.first().copied().unwrap_or("none"), rows)
}

async fn insert(session: &mut Session, file: i64) {
    let sql = format!(
        "INSERT INTO public.ducklake_file_column_stats (data_file_id, table_id, column_id, \
         min_value) SELECT {file}, 1, c, 'v{file}.' || c FROM generate_series(0, 3) c; SELECT 1"
    );
    query(session, &sql).await;
}

fn files(rows: &[Vec<Datum>]) -> Vec<i64> {
    let mut ids: Vec<i64> = rows.iter().filter_map(|row| row[0].as_i64()).collect();
    ids.dedup();
    ids
}

#[tokio::test]
async fn a_kept_copy_is_extended_only_by_rows_added_after_its_last() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = common::two_sessions(dir.path()).await;
    query(&mut a, common::CREATE_FILE_COLUMN_STATS).await;
    for file in 1..=20 {
        insert(&mut a, file).await;
    }
    assert_eq!(copy(&mut a).await.0, "miss");
    assert_eq!(copy(&mut b).await.0, "hit");

    // Rows of a new data file sort after every kept row.
    insert(&mut a, 21).await;
    let (how, rows) = copy(&mut b).await;
    assert_eq!((how, rows.len()), ("extended", 84));
    assert_eq!(copy(&mut a).await.0, "hit");

    // Two commits between reads, one of them of another table.
    insert(&mut a, 22).await;
    query(&mut a, "CREATE TABLE public.other (x INT); SELECT 1").await;
    insert(&mut a, 23).await;
    let (how, rows) = copy(&mut b).await;
    assert_eq!(how, "extended");
    assert_eq!(files(&rows), (1..=23).collect::<Vec<_>>());

    // A row whose key sorts among the kept ones (the key is table, column,
    // data file): added all the same, after them.
    query(
        &mut a,
        "INSERT INTO public.ducklake_file_column_stats (data_file_id, table_id, column_id, \
         min_value) VALUES (3, 1, 0, 'late'); SELECT 1",
    )
    .await;
    let (how, rows) = copy(&mut b).await;
    assert_eq!((how, rows.len()), ("extended", 93));
    assert_eq!(rows.last().unwrap()[2], Datum::text("late"));

    // Deleting rows, or updating one: read again.
    query(
        &mut a,
        "DELETE FROM public.ducklake_file_column_stats WHERE data_file_id = 23; SELECT 1",
    )
    .await;
    assert_eq!(copy(&mut b).await.0, "miss");
    query(
        &mut a,
        "UPDATE public.ducklake_file_column_stats SET min_value = 'u' WHERE data_file_id = 2; \
         SELECT 1",
    )
    .await;
    assert_eq!(copy(&mut b).await.0, "miss");
    insert(&mut a, 24).await;
    assert_eq!(copy(&mut b).await.0, "extended");

    // A snapshot older than the kept result is not served it.
    query(&mut b, "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1").await;
    assert_eq!(copy(&mut b).await.0, "hit");
    insert(&mut a, 25).await;
    assert_eq!(copy(&mut a).await.0, "extended");
    let (how, rows) = copy(&mut b).await;
    assert_eq!(
        how, "none",
        "a snapshot before the last commit has no stamp"
    );
    assert_eq!(files(&rows).last(), Some(&24));
    query(&mut b, "COMMIT; SELECT 1").await;
    let (how, rows) = copy(&mut b).await;
    assert_eq!(how, "hit");
    assert_eq!(files(&rows).last(), Some(&25));

    // A transaction's own added rows are read with the table, not kept.
    query(&mut a, "BEGIN; SELECT 1").await;
    insert(&mut a, 26).await;
    let rows = query(&mut a, COPY).await;
    assert_eq!(files(&rows).last(), Some(&26));
    query(&mut a, "ROLLBACK; SELECT 1").await;
    let (how, rows) = copy(&mut a).await;
    assert_eq!(how, "hit");
    assert_eq!(files(&rows).last(), Some(&25));

    a_key_deleted_and_written_again_is_no_added_row(&mut a, &mut b).await;
}

/// A table whose key is not the row sequence: a row deleted and inserted
/// again under the same key gets a later row sequence, but replaces a kept
/// row rather than adding one (in two commits, or in one transaction).
async fn a_key_deleted_and_written_again_is_no_added_row(a: &mut Session, b: &mut Session) {
    query(
        a,
        "CREATE TABLE public.ducklake_snapshot_changes (snapshot_id BIGINT PRIMARY KEY, \
         changes_made VARCHAR, author VARCHAR, commit_message VARCHAR, commit_extra_info VARCHAR); \
         INSERT INTO public.ducklake_snapshot_changes (snapshot_id, changes_made) \
         SELECT g, 'v' || g FROM generate_series(1, 5) g; SELECT 1",
    )
    .await;
    assert_eq!(copy_changes(b).await, (0, 1, 5));
    query(
        a,
        "DELETE FROM public.ducklake_snapshot_changes WHERE snapshot_id = 3; SELECT 1",
    )
    .await;
    query(
        a,
        "INSERT INTO public.ducklake_snapshot_changes (snapshot_id, changes_made) VALUES (3, 'new'); \
         SELECT 1",
    )
    .await;
    assert_eq!(copy_changes(b).await, (0, 1, 5), "two commits: read again");
    query(
        a,
        "BEGIN; DELETE FROM public.ducklake_snapshot_changes WHERE snapshot_id = 4; \
         INSERT INTO public.ducklake_snapshot_changes (snapshot_id, changes_made) VALUES (4, 'again'); \
         COMMIT; SELECT 1",
    )
    .await;
    assert_eq!(
        copy_changes(b).await,
        (0, 1, 5),
        "one transaction: read again"
    );
    query(
        a,
        "INSERT INTO public.ducklake_snapshot_changes (snapshot_id, changes_made) VALUES (6, 'v6'); \
         SELECT 1",
    )
    .await;
    assert_eq!(copy_changes(b).await, (1, 0, 6), "a new key: extended");
}

const CHANGES_COPY: &str = "COPY (SELECT \"snapshot_id\", \"changes_made\" FROM \
                            \"public\".\"ducklake_snapshot_changes\") TO STDOUT (FORMAT binary)";

/// Runs `CHANGES_COPY`, checks it against a SELECT, and returns how many
/// COPYs were extended and read again meanwhile, and its rows.
async fn copy_changes(session: &mut Session) -> (u64, u64, usize) {
    let before = ["extended", "miss"].map(common::encoded_copies);
    let rows = query(session, CHANGES_COPY).await;
    let after = ["extended", "miss"].map(common::encoded_copies);
    let select = "SELECT snapshot_id, changes_made FROM public.ducklake_snapshot_changes";
    assert_eq!(rows, query(session, select).await, "COPY and SELECT differ");
    (after[0] - before[0], after[1] - before[1], rows.len())
}
