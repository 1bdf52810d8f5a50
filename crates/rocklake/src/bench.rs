//! `rocklake bench-store`: commit latency and scan throughput of the catalog
//! store on a local directory, next to the latency of one durable raw SlateDB
//! write on the same disk. Prints its settings and medians; asserts nothing.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rocklake_codec::relations::Relation;
use rocklake_codec::tables::CatalogTable;
use rocklake_store::{CatalogStore, StoreLocation, StoreOptions};
use rocklake_types::datum::{Datum, Row};

/// Settings of the store benchmark.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Directory to benchmark in (a fresh temporary directory by default).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Number of timed commits.
    #[arg(long, default_value_t = 200)]
    commits: usize,
    /// Number of data-file rows for the scan benchmark.
    #[arg(long, default_value_t = 10_000)]
    files: usize,
    /// Number of timed scans.
    #[arg(long, default_value_t = 20)]
    scans: usize,
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn catalog_row(table: &CatalogTable, values: &[(&str, Datum)]) -> Row {
    let mut row = vec![Datum::Null; table.columns.len()];
    for (name, value) in values {
        row[table.column_index(name).expect("column")] = value.clone();
    }
    row
}

async fn create(store: &CatalogStore, names: &[&str]) -> anyhow::Result<Vec<Relation>> {
    let mut txn = store.write()?;
    let mut out = Vec::new();
    for name in names {
        let relation = txn.create_catalog_table(name).await?;
        out.push(relation.ok_or_else(|| anyhow::anyhow!("{name} exists in a fresh catalog"))?);
    }
    txn.commit().await?;
    Ok(out)
}

async fn raw_durable_put(dir: &std::path::Path, count: usize) -> anyhow::Result<Vec<Duration>> {
    let store =
        slatedb::object_store::local::LocalFileSystem::new_with_prefix(dir)?.with_fsync(true);
    let db = slatedb::Db::open("raw", Arc::new(store)).await?;
    let mut samples = Vec::with_capacity(count);
    for i in 0..count {
        let start = Instant::now();
        db.put(
            format!("key-{i}").as_bytes(),
            b"value-of-a-typical-size-0123456789",
        )
        .await?;
        db.flush().await?;
        samples.push(start.elapsed());
    }
    db.close().await?;
    Ok(samples)
}

/// Runs the benchmark and prints a table.
pub async fn run(args: BenchArgs) -> anyhow::Result<()> {
    let temp = tempfile::tempdir()?;
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| temp.path().to_path_buf());
    std::fs::create_dir_all(&dir)?;
    println!("rocklake bench-store");
    println!(
        "settings: dir={} commits={} files={} scans={} build={} (local directory, fsync on)",
        dir.display(),
        args.commits,
        args.files,
        args.scans,
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );

    let raw_dir = dir.join("raw");
    std::fs::create_dir_all(&raw_dir)?;
    let raw = raw_durable_put(&raw_dir, args.commits).await?;

    let location = StoreLocation::Local(dir.join("catalog"));
    let store = CatalogStore::open(&location, StoreOptions::default()).await?;
    let rels = create(
        &store,
        &[
            "ducklake_snapshot",
            "ducklake_snapshot_changes",
            "ducklake_table_stats",
            "ducklake_data_file",
            "ducklake_column",
        ],
    )
    .await?;
    let commits = time_commits(&store, &rels, args.commits).await?;
    load_scan_data(&store, &rels, args.files).await?;
    let scans = time_scans(&store, &rels, &args).await?;
    store.close().await?;
    report(raw, commits, scans, args.files);
    Ok(())
}

/// Times `count` DuckLake-like commits: a new snapshot, its change record
/// and an update of the table's statistics.
async fn time_commits(
    store: &CatalogStore,
    rels: &[Relation],
    count: usize,
) -> anyhow::Result<Vec<Duration>> {
    let snapshot_table = CatalogTable::by_name("ducklake_snapshot").unwrap();
    let changes_table = CatalogTable::by_name("ducklake_snapshot_changes").unwrap();
    let stats_table = CatalogTable::by_name("ducklake_table_stats").unwrap();
    let record_count = stats_table.column_index("record_count").unwrap();
    let mut txn = store.write()?;
    txn.insert(
        &rels[2],
        catalog_row(
            stats_table,
            &[
                ("table_id", Datum::Int8(1)),
                ("record_count", Datum::Int8(0)),
            ],
        ),
    )
    .await?;
    txn.commit().await?;
    let mut samples = Vec::with_capacity(count);
    for i in 0..count as i64 {
        let start = Instant::now();
        let mut txn = store.write()?;
        txn.insert(
            &rels[0],
            catalog_row(
                snapshot_table,
                &[
                    ("snapshot_id", Datum::Int8(i)),
                    ("snapshot_time", Datum::TimestampTz(i)),
                    ("schema_version", Datum::Int8(1)),
                    ("next_catalog_id", Datum::Int8(2)),
                    ("next_file_id", Datum::Int8(i)),
                ],
            ),
        )
        .await?;
        txn.insert(
            &rels[1],
            catalog_row(
                changes_table,
                &[
                    ("snapshot_id", Datum::Int8(i)),
                    ("changes_made", Datum::Text("inserted_into_table:1".into())),
                ],
            ),
        )
        .await?;
        let old = txn.view().rows(&rels[2], &[1]).await?.remove(0);
        let mut new_row = old.row.clone();
        new_row[record_count] = Datum::Int8(i + 1);
        txn.update(&rels[2], &old.key, old.row_seq, new_row).await?;
        txn.commit().await?;
        samples.push(start.elapsed());
    }
    Ok(samples)
}

/// Writes `files` data files of table 1, and as many column versions.
async fn load_scan_data(
    store: &CatalogStore,
    rels: &[Relation],
    files: usize,
) -> anyhow::Result<()> {
    let data_file_table = CatalogTable::by_name("ducklake_data_file").unwrap();
    let column_table = CatalogTable::by_name("ducklake_column").unwrap();
    let batch = 1000;
    for chunk_start in (0..files).step_by(batch) {
        let mut txn = store.write()?;
        for id in chunk_start..(chunk_start + batch).min(files) {
            let id = id as i64;
            txn.insert(
                &rels[3],
                catalog_row(
                    data_file_table,
                    &[
                        ("data_file_id", Datum::Int8(id)),
                        ("table_id", Datum::Int8(1)),
                        ("begin_snapshot", Datum::Int8(id / 10)),
                        ("path", Datum::text(format!("ducklake-{id:08}.parquet"))),
                        ("path_is_relative", Datum::Bool(true)),
                        ("record_count", Datum::Int8(1000)),
                        ("file_size_bytes", Datum::Int8(123_456)),
                    ],
                ),
            )
            .await?;
            txn.insert(
                &rels[4],
                catalog_row(
                    column_table,
                    &[
                        ("column_id", Datum::Int8(id % 10)),
                        ("begin_snapshot", Datum::Int8(id / 10)),
                        ("end_snapshot", Datum::Int8(id / 10 + 1)),
                        ("table_id", Datum::Int8(1)),
                        ("column_name", Datum::text(format!("c{}", id % 10))),
                        ("column_type", Datum::Text("int64".into())),
                    ],
                ),
            )
            .await?;
        }
        txn.commit().await?;
    }
    Ok(())
}

/// Timings of the scans: every data file of one table, and the column
/// versions visible at one snapshot.
struct ScanTimes {
    scan: Vec<Duration>,
    visible: Vec<Duration>,
    scanned: usize,
    visible_rows: usize,
}

async fn time_scans(
    store: &CatalogStore,
    rels: &[Relation],
    args: &BenchArgs,
) -> anyhow::Result<ScanTimes> {
    let mut times = ScanTimes {
        scan: Vec::with_capacity(args.scans),
        visible: Vec::with_capacity(args.scans),
        scanned: 0,
        visible_rows: 0,
    };
    for _ in 0..args.scans {
        let read = store.read()?;
        let start = Instant::now();
        times.scanned = read.view().rows(&rels[3], &[1]).await?.len();
        times.scan.push(start.elapsed());
        let start = Instant::now();
        times.visible_rows = read
            .view()
            .visible_rows(&rels[4], &[1], (args.files / 20) as u64)
            .await?
            .len();
        times.visible.push(start.elapsed());
    }
    Ok(times)
}

/// Prints the results as a Markdown table.
fn report(mut raw: Vec<Duration>, mut commits: Vec<Duration>, mut scans: ScanTimes, files: usize) {
    let raw_median = percentile(&mut raw, 0.5);
    let commit_median = percentile(&mut commits, 0.5);
    let scan_median = percentile(&mut scans.scan, 0.5);
    let visible_median = percentile(&mut scans.visible, 0.5);
    println!();
    println!("| metric | median | p95 | note |");
    println!("|---|---|---|---|");
    println!(
        "| raw SlateDB durable put (put + flush) | {} | {} | baseline, same disk |",
        ms(raw_median),
        ms(percentile(&mut raw, 0.95))
    );
    println!(
        "| catalog commit (snapshot + changes + stats update) | {} | {} | {:.2}x baseline |",
        ms(commit_median),
        ms(percentile(&mut commits, 0.95)),
        commit_median.as_secs_f64() / raw_median.as_secs_f64()
    );
    println!(
        "| scan data files of one table | {} | {} | {} rows, {:.0} rows/s |",
        ms(scan_median),
        ms(percentile(&mut scans.scan, 0.95)),
        scans.scanned,
        scans.scanned as f64 / scan_median.as_secs_f64()
    );
    println!(
        "| MVCC scan of column versions | {} | {} | {} of {files} visible |",
        ms(visible_median),
        ms(percentile(&mut scans.visible, 0.95)),
        scans.visible_rows,
    );
}
