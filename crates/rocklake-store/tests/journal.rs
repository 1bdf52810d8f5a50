//! The commit journal of a local catalog: commits acknowledged from it
//! survive SIGKILL although SlateDB never wrote them, also after the journal
//! wrapped around and for commits too large for it; a new writer replays
//! them and fences the old one; an encrypted catalog's journal holds no
//! plaintext; concurrent commits share syncs.
//!
//! The crash child is this same test binary, re-run with `--ignored --exact
//! journal_crash_child`. Its SlateDB has no background flush, so what it
//! acknowledged is in SlateDB only if the journal's replay puts it there.

mod common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;

use common::*;
use rocklake_store::{
    CatalogKeys, CatalogReplica, CatalogStore, ReplicaOptions, StoreError, StoreLocation,
    StoreOptions,
};
use rocklake_types::datum::Datum;

const CHILD_DIR_ENV: &str = "ROCKLAKE_JOURNAL_CHILD_DIR";
const CHILD_JOURNAL_BYTES_ENV: &str = "ROCKLAKE_JOURNAL_CHILD_BYTES";
const CHILD_FILES_ENV: &str = "ROCKLAKE_JOURNAL_CHILD_FILES";

/// SlateDB without a background WAL flush: only the journal (or a
/// commit's own flush) makes anything durable.
fn unflushed(journal_bytes: u64) -> StoreOptions {
    StoreOptions {
        flush_interval: None,
        journal_bytes,
        ..StoreOptions::default()
    }
}

/// The child: commits snapshot `i` with FILES data files each (3 by
/// default), then prints `acked i`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by the SIGKILL tests of this file as a child process"]
async fn journal_crash_child() {
    let Ok(dir) = std::env::var(CHILD_DIR_ENV) else {
        return;
    };
    let journal_bytes = std::env::var(CHILD_JOURNAL_BYTES_ENV)
        .map(|b| b.parse().unwrap())
        .unwrap_or(rocklake_store::journal::DEFAULT_FILE_BYTES);
    let files: i64 = std::env::var(CHILD_FILES_ENV)
        .map(|b| b.parse().unwrap())
        .unwrap_or(3);
    let store = open_with(std::path::Path::new(&dir), unflushed(journal_bytes)).await;
    commit_snapshots_forever(&store, files).await;
}

/// Runs the child until it acknowledged `stop_after` commits, SIGKILLs it,
/// and returns the last commit acknowledged.
fn run_child_and_kill(dir: &std::path::Path, env: &[(&str, String)], stop_after: i64) -> i64 {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--ignored", "--exact", "journal_crash_child", "--nocapture"])
        .env(CHILD_DIR_ENV, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let mut acked = -1;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        if let Some(n) = line.unwrap().strip_prefix("acked ") {
            acked = n.parse().unwrap();
            if acked >= stop_after {
                break;
            }
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        acked >= stop_after,
        "the child stopped after commit {acked}"
    );
    acked
}

/// The relation `name` in `public` as `read` sees it.
async fn relation_in(
    read: &rocklake_store::ReadTxn,
    name: &str,
) -> rocklake_codec::relations::Relation {
    read.view().relation("public", name).await.unwrap().unwrap()
}

/// Every commit up to `acked` is there whole, and any later one (in flight
/// at the kill) is there whole or not at all.
async fn check_commits(store: &CatalogStore, acked: i64, files: i64) {
    let read = store.read().unwrap();
    let snapshots = read
        .view()
        .rows(&relation(store, "ducklake_snapshot").await, &[])
        .await
        .unwrap();
    let ids: HashSet<i64> = snapshots
        .iter()
        .map(|r| r.row[0].as_i64().unwrap())
        .collect();
    for i in 0..=acked {
        assert!(ids.contains(&i), "acknowledged commit {i} lost");
    }
    let data_files = read
        .view()
        .rows(&relation(store, "ducklake_data_file").await, &[])
        .await
        .unwrap();
    for id in &ids {
        let count = data_files
            .iter()
            .filter(|r| r.row[2] == Datum::Int8(*id))
            .count();
        assert_eq!(count as i64, files, "commit {id} is not whole");
    }
}

#[tokio::test]
async fn journaled_commits_survive_sigkill_without_a_slatedb_write() {
    let dir = tempfile::tempdir().unwrap();
    let acked = run_child_and_kill(dir.path(), &[], 30);
    // The child's SlateDB wrote its WAL only when opening and for the
    // first commit's registry change, not once per commit.
    assert!(
        wal_objects(dir.path()) < 10,
        "the child wrote a WAL object per commit"
    );
    let store = open(dir.path()).await;
    check_commits(&store, acked, 3).await;
    store.close().await.unwrap();
    // Closed cleanly: no journal file is left to replay.
    let left: Vec<_> = std::fs::read_dir(dir.path().join("journal"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".log"))
        .collect();
    assert!(
        left.is_empty(),
        "journal files left after a clean close: {left:?}"
    );
    let again = open(dir.path()).await;
    check_commits(&again, acked, 3).await;
}

#[tokio::test]
async fn commits_survive_sigkill_after_the_journal_wrapped() {
    let dir = tempfile::tempdir().unwrap();
    // A 16 KiB journal holds a few dozen of these commits: the child wraps
    // around several times (flushing SlateDB each time) before the kill.
    let acked = run_child_and_kill(
        dir.path(),
        &[(CHILD_JOURNAL_BYTES_ENV, (16 * 1024).to_string())],
        150,
    );
    let store = open(dir.path()).await;
    check_commits(&store, acked, 3).await;
}

#[tokio::test]
async fn commits_too_large_for_the_journal_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    // 4 KiB of journal takes commits of up to 1 KiB; each of these writes
    // 20 data files (several KiB), so each waits for SlateDB's own write.
    let acked = run_child_and_kill(
        dir.path(),
        &[
            (CHILD_JOURNAL_BYTES_ENV, 4096.to_string()),
            (CHILD_FILES_ENV, 20.to_string()),
        ],
        8,
    );
    let store = open(dir.path()).await;
    check_commits(&store, acked, 20).await;
}

#[tokio::test]
async fn a_new_writer_replays_the_journal_and_fences_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let first = open_with(
        dir.path(),
        unflushed(rocklake_store::journal::DEFAULT_FILE_BYTES),
    )
    .await;
    let mut setup = first.write().unwrap();
    let rel = create_tables(&mut setup, &["ducklake_snapshot"])
        .await
        .remove(0);
    setup.commit().await.unwrap();
    for i in 0..5 {
        commit_row(&first, &rel, snapshot_row(i)).await.unwrap();
    }
    let wal_before = wal_objects(dir.path());

    let second = open(dir.path()).await;
    let rows = second.read().unwrap().view().rows(&rel, &[]).await.unwrap();
    assert_eq!(
        rows.len(),
        5,
        "the new writer replayed the old one's commits"
    );
    assert!(wal_objects(dir.path()) > wal_before);

    // The old writer's SlateDB has not noticed yet; its journal has.
    let fenced = commit_row(&first, &rel, snapshot_row(5)).await;
    assert!(
        matches!(fenced, Err(StoreError::Fenced { epoch: 1 })),
        "{fenced:?}"
    );
    commit_row(&second, &rel, snapshot_row(6)).await.unwrap();
    second.close().await.unwrap();
    let third = open(dir.path()).await;
    let ids: Vec<i64> = third
        .read()
        .unwrap()
        .view()
        .rows(&rel, &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.row[0].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![0, 1, 2, 3, 4, 6]);
}

#[tokio::test]
async fn an_encrypted_catalogs_journal_holds_no_plaintext() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Arc::new(CatalogKeys::parse(&CatalogKeys::generate()).unwrap());
    let options = StoreOptions {
        keys: Some(keys.clone()),
        ..unflushed(rocklake_store::journal::DEFAULT_FILE_BYTES)
    };
    let first = open_with(dir.path(), options).await;
    let mut setup = first.write().unwrap();
    let rel = create_tables(&mut setup, &["ducklake_data_file"])
        .await
        .remove(0);
    setup.commit().await.unwrap();
    commit_row(&first, &rel, data_file_row(424242, 1, 1))
        .await
        .unwrap();

    let journal_dir = dir.path().join("journal");
    for entry in std::fs::read_dir(&journal_dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(
            !bytes.windows(11).any(|w| w == b"file-424242"),
            "the journal holds a value in plaintext"
        );
    }
    let second = open_with(
        dir.path(),
        StoreOptions {
            keys: Some(keys),
            ..StoreOptions::default()
        },
    )
    .await;
    let rows = second.read().unwrap().view().rows(&rel, &[]).await.unwrap();
    assert_eq!(rows.len(), 1, "the sealed commit was replayed");
    assert_eq!(rows[0].row[0], Datum::Int8(424242));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_commits_share_journal_syncs() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let mut setup = store.write().unwrap();
    let rel = create_tables(&mut setup, &["ducklake_data_file"])
        .await
        .remove(0);
    setup.commit().await.unwrap();
    let before = store.journal_syncs().unwrap();
    let commits = 64;
    commit_concurrently(&store, &rel, commits).await;
    let syncs = store.journal_syncs().unwrap() - before;
    eprintln!("{commits} concurrent commits made {syncs} journal syncs");
    assert!(
        syncs < commits as u64,
        "{syncs} syncs for {commits} commits: none shared"
    );
    let rows = store.read().unwrap().view().rows(&rel, &[]).await.unwrap();
    assert_eq!(rows.len(), commits as usize);
}

#[tokio::test]
async fn readers_of_a_live_catalog_see_its_journaled_commits() {
    let dir = tempfile::tempdir().unwrap();
    let source = StoreLocation::Local(dir.path().join("source"));
    let store = open_with(
        &dir.path().join("source"),
        unflushed(rocklake_store::journal::DEFAULT_FILE_BYTES),
    )
    .await;
    let mut setup = store.write().unwrap();
    let rel = create_tables(&mut setup, &["ducklake_data_file"])
        .await
        .remove(0);
    setup.commit().await.unwrap();
    commit_row(&store, &rel, data_file_row(777, 1, 1))
        .await
        .unwrap();

    // SlateDB never wrote the commit; `rocklake keys`, backups and export's
    // replica add it from the journal.
    let latest = CatalogReplica::open_latest(&source, ReplicaOptions::default())
        .await
        .unwrap();
    let read = latest.replica.read();
    let seen = read
        .view()
        .rows(&relation_in(&read, "ducklake_data_file").await, &[])
        .await
        .unwrap();
    assert_eq!(seen.len(), 1, "the replica misses the journaled commit");
    let dump = CatalogStore::dump_read_only(&source, None).await.unwrap();
    assert!(
        dump.iter()
            .any(|(_, value)| value.windows(8).any(|w| w == b"file-777")),
        "the dump misses the journaled commit"
    );
    let target = StoreLocation::Local(dir.path().join("copy"));
    let report = rocklake_store::backup_copy::copy_catalog(&source, None, &target, None)
        .await
        .unwrap();
    assert!(report.journaled >= 1, "{report:?}");
    let copy = open(&dir.path().join("copy")).await;
    let rows = copy
        .read()
        .unwrap()
        .view()
        .rows(&relation(&copy, "ducklake_data_file").await, &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].row[0], Datum::Int8(777));
}
