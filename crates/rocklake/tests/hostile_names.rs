//! Property: DDL with any name (any characters, 0 to 100,000 bytes) never
//! creates, changes or deletes anything outside the object's own folder.
//!
//! A served root on a temporary directory holds a sentinel database with
//! data; a session of database `lake` runs `CREATE DATABASE`, `DROP
//! DATABASE`, `CREATE SCHEMA` with a DuckLake table (a schema lake) and
//! `DROP SCHEMA ... CASCADE` with random names. After each statement every
//! file outside the statement's own folders is as it was: the sentinel's
//! files untouched, no file appearing or vanishing elsewhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use rocklake::engine::EngineSessions;
use rocklake_store::root::name_segment;
use rocklake_store::{
    DeclaredRoles, LakeRoot, Role, ServedRoles, ServedRoot, StoreLocation, StoreOptions,
};
use rocklake_types::output::CollectSink;
use rocklake_wire::startup::ClientParams;
use rocklake_wire::{SessionFactory, SessionStart};

/// Every file under `dir`, with its length and contents' hash.
fn tree(dir: &Path) -> BTreeMap<PathBuf, (u64, u64)> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
                });
                files.insert(
                    path.strip_prefix(dir).unwrap().to_path_buf(),
                    (bytes.len() as u64, hash),
                );
            }
        }
    }
    files
}

/// The folders a statement about `name` may change (besides the session's
/// own database's catalog and the roles), as path prefixes under the root.
fn own_folders(name: &str) -> Vec<PathBuf> {
    let cut = rocklake_types::ident::truncate_name(name);
    let mut folders = vec![
        PathBuf::from("databases/lake/catalog"),
        PathBuf::from("databases/lake/journal"),
        PathBuf::from("roles"),
    ];
    if let Ok(segment) = name_segment(cut) {
        folders.push(PathBuf::from("databases").join(&segment));
        folders.push(PathBuf::from("databases/lake/schemas").join(&segment));
    }
    folders
}

fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn names() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(".".to_string()),
        Just("..".to_string()),
        Just("/".to_string()),
        Just("../keepdb".to_string()),
        Just("keepdb/..".to_string()),
        Just("databases".to_string()),
        Just("lake".to_string()),
        Just("keepdb".to_string()),
        "\\PC{0,20}",
        "[a-z./+\\\\-]{1,12}",
        (60usize..=70).prop_map(|n| "n".repeat(n)),
        (1usize..=100_000).prop_map(|n| "é".repeat(n / 2)),
    ]
}

async fn served(dir: &Path) -> (Arc<ServedRoot>, Arc<ServedRoles>) {
    let location = StoreLocation::Local(dir.to_path_buf());
    let root = LakeRoot::open(location).unwrap();
    let served = Arc::new(
        ServedRoot::open(
            root.clone(),
            Role::Writer(StoreOptions::default()),
            Some("lake"),
        )
        .await
        .unwrap(),
    );
    let roles = Arc::new(
        ServedRoles::open(root, true, false, DeclaredRoles::default(), None)
            .await
            .unwrap(),
    );
    (served, roles)
}

async fn session(factory: &EngineSessions, database: &str) -> Box<dyn rocklake_wire::SqlSession> {
    let client = ClientParams {
        user: "postgres".into(),
        database: database.into(),
        ..ClientParams::default()
    };
    factory
        .new_session(SessionStart {
            client: &client,
            pid: 1,
            interrupt: Arc::default(),
            peer: None,
        })
        .await
        .unwrap()
}

async fn run(session: &mut dyn rocklake_wire::SqlSession, sql: &str) {
    let mut sink = CollectSink::new();
    session.run(sql, &mut sink).await.unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn ddl_with_any_name_touches_only_its_own_folder(name in names()) {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let (root, roles) = served(dir.path()).await;
            let factory = EngineSessions::served(root.clone(), false, roles);
            {
                let mut lake = session(&factory, "lake").await;
                run(lake.as_mut(), "CREATE DATABASE keepdb").await;
                let mut keep = session(&factory, "keepdb").await;
                run(keep.as_mut(), "CREATE TABLE kept (a int); INSERT INTO kept VALUES (1)").await;
            }
            // Let SlateDB's background writes of the set-up settle.
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            let allowed = own_folders(&name);
            let outside = |files: BTreeMap<PathBuf, (u64, u64)>| -> BTreeMap<PathBuf, (u64, u64)> {
                files
                    .into_iter()
                    .filter(|(path, _)| !allowed.iter().any(|folder| path.starts_with(folder)))
                    .collect()
            };
            let mut lake = session(&factory, "lake").await;
            let q = quoted(&name);
            for sql in [
                format!("CREATE DATABASE {q}"),
                format!("DROP DATABASE IF EXISTS {q}"),
                format!("DROP DATABASE {q} WITH (FORCE)"),
                format!("CREATE SCHEMA {q}"),
                format!("CREATE TABLE {q}.ducklake_metadata (key varchar, value varchar)"),
                format!("DROP SCHEMA {q} CASCADE"),
            ] {
                let before = outside(tree(dir.path()));
                run(lake.as_mut(), &sql).await;
                let after = outside(tree(dir.path()));
                if rocklake_types::ident::truncate_name(&name) != "keepdb" {
                    let sentinel = before.keys().filter(|p| p.starts_with("databases/keepdb"));
                    assert!(sentinel.count() > 0, "the sentinel has files");
                }
                assert_eq!(before, after, "{}: files outside its own folders changed", &sql[..sql.len().min(80)]);
            }
            if rocklake_types::ident::truncate_name(&name) != "keepdb" {
                let mut keep = session(&factory, "keepdb").await;
                let mut sink = CollectSink::new();
                keep.run("SELECT count(*) FROM kept", &mut sink).await.unwrap();
                let results = sink.into_results();
                assert!(results.iter().all(|r| r.is_ok()), "{results:?}");
            }
            drop(lake);
            root.close().await.unwrap();
        });
    }
}
