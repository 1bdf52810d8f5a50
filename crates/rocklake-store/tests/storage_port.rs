//! The contract of the SQL engine's storage port ([`Storage`] and
//! [`StorageTxn`], documented in `rocklake_sql::storage`), checked alike over
//! the in-memory test storage, the catalog store on real SlateDB, and the
//! store behind the session's routing transaction ([`Database`]). A storage
//! that passes here can sit under the engine; where the three differ the
//! engine would see different answers, so every case runs over all of them.

mod common;

use std::sync::Arc;
use std::time::Duration;

use rocklake_sql::storage::{
    ColumnBound, KeyChecks, RelationChange, RelationDef, ScanFilter, Storage, StorageTxn,
};
use rocklake_sql::{Database, MemoryStorage};
use rocklake_store::SqlCatalog;
use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};
use rocklake_types::{SqlError, SqlState};

/// A storage under test, with what must live as long as it does.
struct Subject {
    storage: Arc<dyn Storage>,
    _dir: Option<tempfile::TempDir>,
}

async fn memory() -> Subject {
    Subject {
        storage: Arc::new(MemoryStorage::new()),
        _dir: None,
    }
}

async fn store() -> Subject {
    let dir = tempfile::tempdir().unwrap();
    let store = common::open(dir.path()).await;
    Subject {
        storage: Arc::new(SqlCatalog::new(store)),
        _dir: Some(dir),
    }
}

async fn routed_store() -> Subject {
    let subject = store().await;
    Subject {
        storage: Arc::new(Database::single(subject.storage.clone())),
        _dir: subject._dir,
    }
}

/// Runs each case over every storage.
macro_rules! over_every_storage {
    ($($case:ident),* $(,)?) => {
        mod memory_storage {
            $(#[tokio::test] async fn $case() { super::$case(super::memory().await).await })*
        }
        mod catalog_store {
            $(#[tokio::test] async fn $case() { super::$case(super::store().await).await })*
        }
        mod routed_catalog_store {
            $(#[tokio::test] async fn $case() { super::$case(super::routed_store().await).await })*
        }
    };
}

over_every_storage!(
    schemas_are_created_once_and_listed,
    relations_are_created_looked_up_and_dropped,
    writes_are_seen_by_their_transaction_and_after_commit_only,
    a_dropped_transaction_keeps_nothing,
    a_transaction_reads_its_snapshot,
    read_only_transactions_refuse_writes,
    a_scan_returns_every_row_its_filter_admits,
    listed_definitions_find_their_relation_again,
    keys_are_refused_by_whoever_the_definition_names,
    a_key_committed_concurrently_is_refused,
    an_update_of_a_row_changed_since_the_snapshot_fails,
    altered_relations_keep_their_rows,
    schemas_holding_relations_drop_only_with_cascade,
    the_catalog_version_changes_with_the_relations,
);

/// `public.items (id bigint primary key, label text)`, a table users create.
fn items() -> RelationDef {
    RelationDef::new(
        "public",
        "items",
        vec![
            ColumnDef::new("id", PgType::Int8),
            ColumnDef::new("label", PgType::Text),
        ],
        vec![0],
    )
}

/// DuckLake's `ducklake_snapshot`, which the catalog store keys by its
/// primary key.
fn snapshots() -> RelationDef {
    RelationDef::new(
        "public",
        "ducklake_snapshot",
        vec![
            ColumnDef::new("snapshot_id", PgType::Int8),
            ColumnDef::new("snapshot_time", PgType::TimestampTz),
            ColumnDef::new("schema_version", PgType::Int8),
            ColumnDef::new("next_catalog_id", PgType::Int8),
            ColumnDef::new("next_file_id", PgType::Int8),
        ],
        vec![0],
    )
}

fn item(id: i64, label: &str) -> Row {
    vec![Datum::Int8(id), Datum::text(label)]
}

fn snapshot(id: i64) -> Row {
    vec![
        Datum::Int8(id),
        Datum::Null,
        Datum::Int8(id),
        Datum::Int8(0),
        Datum::Int8(0),
    ]
}

/// Whether `result` says the storage lacks an optional capability of the
/// port (the trait's default answer, 0A000), which ends the case for it.
fn lacks<T>(result: &Result<T, SqlError>) -> bool {
    matches!(result, Err(error) if error.code == SqlState::FEATURE_NOT_SUPPORTED)
}

/// Fails unless `result` is an error with SQLSTATE `expected`.
fn assert_fails<T>(result: Result<T, SqlError>, expected: SqlState, what: &str) {
    match result {
        Ok(_) => panic!("{what}: succeeded, expected {expected:?}"),
        Err(error) => assert_eq!(error.code, expected, "{what}: {error:?}"),
    }
}

async fn write(subject: &Subject) -> Box<dyn StorageTxn> {
    subject.storage.begin(false).await.unwrap()
}

/// Creates `def` in a transaction of its own and returns it as storage
/// lists it.
async fn create(subject: &Subject, def: RelationDef) -> RelationDef {
    let mut txn = write(subject).await;
    assert!(txn.create_relation(def.clone(), false).await.unwrap());
    txn.commit().await.unwrap();
    listed(subject, &def.schema, &def.name).await
}

/// `schema.name` as a new transaction lists it.
async fn listed(subject: &Subject, schema: &str, name: &str) -> RelationDef {
    let mut txn = subject.storage.begin(true).await.unwrap();
    txn.relation(schema, name)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{schema}.{name} is not listed"))
}

/// The rows of `def` that `txn` sees, sorted.
async fn rows(txn: &mut dyn StorageTxn, def: &RelationDef) -> Vec<Row> {
    let mut rows: Vec<Row> = txn
        .scan(def, &ScanFilter::default())
        .await
        .unwrap()
        .into_iter()
        .map(|scanned| scanned.row)
        .collect();
    rows.sort_by_key(|row| format!("{row:?}"));
    rows
}

/// The rows of `def` a new transaction sees.
async fn committed(subject: &Subject, def: &RelationDef) -> Vec<Row> {
    let mut txn = subject.storage.begin(true).await.unwrap();
    rows(txn.as_mut(), def).await
}

async fn insert(subject: &Subject, def: &RelationDef, new: Vec<Row>) {
    let mut txn = write(subject).await;
    txn.insert(def, new).await.unwrap();
    txn.commit().await.unwrap();
}

async fn schemas_are_created_once_and_listed(subject: Subject) {
    let mut txn = write(&subject).await;
    assert!(txn.create_schema("s1", false).await.unwrap());
    assert!(!txn.create_schema("s1", true).await.unwrap());
    assert_fails(
        txn.create_schema("s1", false).await,
        SqlState::DUPLICATE_SCHEMA,
        "second CREATE SCHEMA",
    );
}

async fn relations_are_created_looked_up_and_dropped(subject: Subject) {
    let mut txn = write(&subject).await;
    assert!(txn.create_schema("s1", false).await.unwrap());
    txn.commit().await.unwrap();
    let mut txn = write(&subject).await;
    assert!(txn.schemas().await.unwrap().contains(&"s1".to_string()));
    assert!(txn.create_relation(items(), false).await.unwrap());
    assert!(!txn.create_relation(items(), true).await.unwrap());
    assert_fails(
        txn.create_relation(items(), false).await,
        SqlState::DUPLICATE_TABLE,
        "second CREATE TABLE",
    );
    let mut elsewhere = items();
    elsewhere.schema = "nowhere".into();
    assert_fails(
        txn.create_relation(elsewhere, false).await,
        SqlState::INVALID_SCHEMA_NAME,
        "CREATE TABLE in a missing schema",
    );
    txn.commit().await.unwrap();

    let found = listed(&subject, "public", "items").await;
    assert_eq!(
        (found.columns.len(), found.primary_key.clone()),
        (2, vec![0])
    );
    let mut txn = write(&subject).await;
    let names: Vec<String> = txn
        .relations()
        .await
        .unwrap()
        .iter()
        .map(|def| format!("{}.{}", def.schema, def.name))
        .collect();
    assert!(names.contains(&"public.items".to_string()), "{names:?}");
    assert!(txn.relation("public", "missing").await.unwrap().is_none());
    assert!(txn.drop_relation("public", "items", false).await.unwrap());
    assert!(!txn.drop_relation("public", "items", true).await.unwrap());
    assert_fails(
        txn.drop_relation("public", "items", false).await,
        SqlState::UNDEFINED_TABLE,
        "second DROP TABLE",
    );
    txn.commit().await.unwrap();
    let mut txn = subject.storage.begin(true).await.unwrap();
    assert!(txn.relation("public", "items").await.unwrap().is_none());
}

async fn writes_are_seen_by_their_transaction_and_after_commit_only(subject: Subject) {
    let def = create(&subject, items()).await;
    let mut txn = write(&subject).await;
    txn.insert(&def, vec![item(1, "a"), item(2, "b"), item(3, "c")])
        .await
        .unwrap();
    let scanned = txn.scan(&def, &ScanFilter::default()).await.unwrap();
    let id_of = |id: i64| {
        scanned
            .iter()
            .find(|s| s.row[0] == Datum::Int8(id))
            .map(|s| s.id)
            .unwrap()
    };
    txn.update(&def, id_of(2), item(2, "b2")).await.unwrap();
    txn.delete(&def, id_of(3)).await.unwrap();
    let own = rows(txn.as_mut(), &def).await;
    assert_eq!(own, vec![item(1, "a"), item(2, "b2")]);
    assert!(
        committed(&subject, &def).await.is_empty(),
        "uncommitted rows are seen by other transactions"
    );
    txn.commit().await.unwrap();
    assert_eq!(committed(&subject, &def).await, own);
}

async fn a_dropped_transaction_keeps_nothing(subject: Subject) {
    let def = create(&subject, items()).await;
    insert(&subject, &def, vec![item(1, "kept")]).await;
    let mut txn = write(&subject).await;
    txn.insert(&def, vec![item(2, "dropped")]).await.unwrap();
    txn.create_schema("dropped", false).await.unwrap();
    drop(txn);
    assert_eq!(committed(&subject, &def).await, vec![item(1, "kept")]);
    let mut txn = subject.storage.begin(true).await.unwrap();
    assert!(!txn.schemas().await.unwrap().contains(&"dropped".into()));
}

async fn a_transaction_reads_its_snapshot(subject: Subject) {
    let def = create(&subject, items()).await;
    insert(&subject, &def, vec![item(1, "before")]).await;
    let mut early = subject.storage.begin(true).await.unwrap();
    assert_eq!(rows(early.as_mut(), &def).await, vec![item(1, "before")]);
    insert(&subject, &def, vec![item(2, "after")]).await;
    assert_eq!(
        rows(early.as_mut(), &def).await,
        vec![item(1, "before")],
        "a commit after the snapshot is seen"
    );
    assert_eq!(committed(&subject, &def).await.len(), 2);
}

async fn read_only_transactions_refuse_writes(subject: Subject) {
    let def = create(&subject, items()).await;
    let mut txn = subject.storage.begin(true).await.unwrap();
    assert_fails(
        txn.insert(&def, vec![item(1, "x")]).await,
        SqlState::READ_ONLY_SQL_TRANSACTION,
        "INSERT",
    );
    let mut txn = subject.storage.begin(true).await.unwrap();
    assert_fails(
        txn.create_schema("s", false).await,
        SqlState::READ_ONLY_SQL_TRANSACTION,
        "CREATE SCHEMA",
    );
}

async fn a_scan_returns_every_row_its_filter_admits(subject: Subject) {
    for def in [items(), snapshots()] {
        let def = create(&subject, def).await;
        let row = |id| match def.columns.len() {
            2 => item(id, "x"),
            _ => snapshot(id),
        };
        insert(&subject, &def, (1..=20).map(row).collect()).await;
        let mut txn = subject.storage.begin(true).await.unwrap();
        let filters = [
            (ColumnBound::Eq(Datum::Int8(7)), vec![7]),
            (
                ColumnBound::In(vec![Datum::Int8(3), Datum::Int8(15), Datum::Int8(99)]),
                vec![3, 15],
            ),
            (
                ColumnBound::Range {
                    lower: Some((Datum::Int8(5), false)),
                    upper: Some((Datum::Int8(9), true)),
                },
                vec![6, 7, 8, 9],
            ),
        ];
        for (bound, wanted) in filters {
            let filter = ScanFilter {
                bounds: vec![(0, bound.clone())],
                extreme: None,
            };
            let ids: Vec<i64> = txn
                .scan(&def, &filter)
                .await
                .unwrap()
                .iter()
                .filter_map(|s| s.row[0].as_i64())
                .collect();
            for id in wanted {
                assert!(ids.contains(&id), "{}: {bound:?} left out {id}", def.name);
            }
        }
    }
}

async fn listed_definitions_find_their_relation_again(subject: Subject) {
    let def = create(&subject, items()).await;
    insert(&subject, &def, vec![item(1, "a")]).await;
    // A definition the engine built itself (no storage id) finds the
    // relation by name; one storage listed finds the same relation.
    let built = items();
    let mut txn = subject.storage.begin(true).await.unwrap();
    assert_eq!(rows(txn.as_mut(), &built).await, vec![item(1, "a")]);
    assert_eq!(rows(txn.as_mut(), &def).await, vec![item(1, "a")]);
    // After a rename, the old name no longer resolves.
    let mut txn = write(&subject).await;
    let renamed = txn
        .alter_relation("public", "items", RelationChange::Rename("things".into()))
        .await;
    if lacks(&renamed) {
        return;
    }
    renamed.unwrap();
    txn.commit().await.unwrap();
    let mut txn = subject.storage.begin(true).await.unwrap();
    assert!(txn.scan(&built, &ScanFilter::default()).await.is_err());
    let renamed = listed(&subject, "public", "things").await;
    assert_eq!(rows(txn.as_mut(), &renamed).await, vec![item(1, "a")]);
}

async fn keys_are_refused_by_whoever_the_definition_names(subject: Subject) {
    for def in [items(), snapshots()] {
        let def = create(&subject, def).await;
        let row = |id| match def.columns.len() {
            2 => item(id, "x"),
            _ => snapshot(id),
        };
        insert(&subject, &def, vec![row(1)]).await;
        if def.key_checks == KeyChecks::Storage {
            let mut txn = write(&subject).await;
            assert_fails(
                txn.insert(&def, vec![row(1)]).await,
                SqlState::UNIQUE_VIOLATION,
                "a committed key inserted again",
            );
            let mut txn = write(&subject).await;
            let twice = async {
                txn.insert(&def, vec![row(2)]).await?;
                txn.insert(&def, vec![row(2)]).await
            };
            assert_fails(
                twice.await,
                SqlState::UNIQUE_VIOLATION,
                "a key inserted twice",
            );
        }
    }
    // The catalog store keys DuckLake's tables by their primary key and
    // keeps a user's table in insertion order.
    let users = listed(&subject, "public", "items").await;
    assert_eq!(users.key_checks, KeyChecks::Engine);
}

async fn a_key_committed_concurrently_is_refused(subject: Subject) {
    for def in [items(), snapshots()] {
        let def = Arc::new(create(&subject, def).await);
        let row = |id| match def.columns.len() {
            2 => item(id, "x"),
            _ => snapshot(id),
        };
        let mut first = write(&subject).await;
        let mut second = write(&subject).await;
        first.insert(&def, vec![row(5)]).await.unwrap();
        // The second inserter may wait for the first to end (as PostgreSQL
        // does) or commit first and make the first fail at commit: either
        // way exactly one of them keeps the key.
        let second_def = def.clone();
        let duplicate = row(5);
        let second = tokio::spawn(async move {
            second.insert(&second_def, vec![duplicate]).await?;
            second.commit().await
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let first = first.commit().await;
        let second = tokio::time::timeout(Duration::from_secs(30), second)
            .await
            .expect("the second inserter hangs")
            .unwrap();
        let failed = match (first, second) {
            (Ok(()), Err(error)) | (Err(error), Ok(())) => error,
            (first, second) => panic!("{}: {first:?} and {second:?}", def.name),
        };
        assert_fails::<()>(
            Err(failed),
            SqlState::UNIQUE_VIOLATION,
            &format!("{}: a key committed concurrently", def.name),
        );
        assert_eq!(committed(&subject, &def).await, vec![row(5)]);
    }
}

async fn an_update_of_a_row_changed_since_the_snapshot_fails(subject: Subject) {
    let def = create(&subject, items()).await;
    insert(&subject, &def, vec![item(1, "a")]).await;
    let mut late = write(&subject).await;
    let id = late.scan(&def, &ScanFilter::default()).await.unwrap()[0].id;
    // Storage may require (the catalog store does) that a row be read in
    // the transaction that changes it, as the engine always does.
    let mut early = write(&subject).await;
    early.scan(&def, &ScanFilter::default()).await.unwrap();
    early.update(&def, id, item(1, "early")).await.unwrap();
    early.commit().await.unwrap();
    let outcome = async {
        late.update(&def, id, item(1, "late")).await?;
        late.commit().await
    };
    assert_fails(
        outcome.await,
        SqlState::SERIALIZATION_FAILURE,
        "a lost update",
    );
    assert_eq!(committed(&subject, &def).await, vec![item(1, "early")]);
}

async fn altered_relations_keep_their_rows(subject: Subject) {
    let def = create(&subject, items()).await;
    insert(&subject, &def, vec![item(1, "a")]).await;
    let mut txn = write(&subject).await;
    let altered = txn
        .alter_relation(
            "public",
            "items",
            RelationChange::AddColumn {
                column: ColumnDef::new("n", PgType::Int4),
                missing: Some(Datum::Int4(7)),
            },
        )
        .await;
    if lacks(&altered) {
        return;
    }
    let altered = altered.unwrap();
    assert_eq!(altered.columns.len(), 3);
    let altered = txn
        .alter_relation(
            "public",
            "items",
            RelationChange::RenameColumn {
                from: "label".into(),
                to: "title".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(altered.columns[1].name, "title");
    assert_fails(
        txn.alter_relation(
            "public",
            "items",
            RelationChange::DropColumn("missing".into()),
        )
        .await,
        SqlState::UNDEFINED_COLUMN,
        "DROP COLUMN of a missing column",
    );
    drop(txn);
    // The failed statement left the transaction unusable for the engine;
    // the rows are as the first two changes would leave them once
    // committed in a transaction of their own.
    let mut txn = write(&subject).await;
    txn.alter_relation(
        "public",
        "items",
        RelationChange::AddColumn {
            column: ColumnDef::new("n", PgType::Int4),
            missing: Some(Datum::Int4(7)),
        },
    )
    .await
    .unwrap();
    txn.commit().await.unwrap();
    let def = listed(&subject, "public", "items").await;
    assert_eq!(
        committed(&subject, &def).await,
        vec![vec![Datum::Int8(1), Datum::text("a"), Datum::Int4(7)]]
    );
}

async fn schemas_holding_relations_drop_only_with_cascade(subject: Subject) {
    let mut txn = write(&subject).await;
    txn.create_schema("s1", false).await.unwrap();
    let mut def = items();
    def.schema = "s1".into();
    txn.create_relation(def, false).await.unwrap();
    txn.commit().await.unwrap();
    let mut txn = write(&subject).await;
    let refused = txn.drop_schema("s1", false, false).await;
    if lacks(&refused) {
        return;
    }
    assert_fails(
        refused,
        SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
        "DROP SCHEMA of a schema holding a table",
    );
    let mut txn = write(&subject).await;
    assert!(txn.drop_schema("s1", false, true).await.unwrap());
    assert!(!txn.drop_schema("s1", true, false).await.unwrap());
    assert_fails(
        txn.drop_schema("s1", false, false).await,
        SqlState::INVALID_SCHEMA_NAME,
        "second DROP SCHEMA",
    );
    txn.commit().await.unwrap();
    let mut txn = subject.storage.begin(true).await.unwrap();
    assert!(txn.relation("s1", "items").await.unwrap().is_none());
    assert!(!txn.schemas().await.unwrap().contains(&"s1".into()));
}

async fn the_catalog_version_changes_with_the_relations(subject: Subject) {
    let def = create(&subject, items()).await;
    let version = |subject: &Subject| {
        let storage = subject.storage.clone();
        async move {
            let mut txn = storage.begin(true).await.unwrap();
            let version = txn.catalog_version().await.unwrap();
            (version, txn.relations().await.unwrap().len())
        }
    };
    let (before, count) = version(&subject).await;
    insert(&subject, &def, vec![item(1, "rows do not change it")]).await;
    let (after_rows, _) = version(&subject).await;
    let mut other = items();
    other.name = "more".into();
    create(&subject, other).await;
    let (after_ddl, count_after) = version(&subject).await;
    assert_eq!(count_after, count + 1);
    // Storage that cannot tell says `None`; one that can must tell a DDL
    // change apart.
    if let (Some(before), Some(after_rows), Some(after_ddl)) = (before, after_rows, after_ddl) {
        assert_eq!(before, after_rows);
        assert_ne!(before, after_ddl);
    }
}
