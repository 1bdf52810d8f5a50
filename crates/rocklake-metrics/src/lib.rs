//! RockLake's metrics, in one home: what each layer records (the wire
//! server its sessions, statements and errors, the store its commits and
//! scan cache) and SlateDB's own statistics of every open lake, exposed in
//! Prometheus' text format by [`Metrics::render`].
//!
//! A process serves one root, so the metrics are process-wide: every layer
//! records into [`metrics()`].

mod slatedb_stats;

use std::sync::OnceLock;
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

pub use slatedb_stats::{LakeRecorder, SlateDbStats};

/// The content type of [`Metrics::render`]'s text (OpenMetrics 1.0, which
/// Prometheus reads).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Labels of a metric family: `(name, value)` pairs.
type Labels = Vec<(String, String)>;

/// Registers the counter family `name` of a cache's lookups and returns
/// its `result="hit"` and `result="miss"` counters.
fn hits_and_misses(registry: &mut Registry, name: &str, help: &str) -> (Counter, Counter) {
    let [hit, miss] = outcomes(registry, name, help, ["hit", "miss"]);
    (hit, miss)
}

/// Registers the counter family `name` and returns its counters labelled
/// `result` with each of `results`.
fn outcomes<const N: usize>(
    registry: &mut Registry,
    name: &str,
    help: &str,
    results: [&str; N],
) -> [Counter; N] {
    let family = Family::<Labels, Counter>::default();
    registry.register(name, help, family.clone());
    results.map(|result| {
        family
            .get_or_create(&vec![("result".to_string(), result.to_string())])
            .clone()
    })
}

/// How a binary COPY of a whole table was answered (see
/// [`Metrics::encoded_copy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodedCopy {
    /// With the tuples kept for the same rows.
    Hit,
    /// With kept tuples followed by those of the rows added since.
    Extended,
    /// Read and encoded.
    Miss,
}

/// Every metric RockLake records.
pub struct Metrics {
    registry: Registry,
    /// Commits that wrote something, acknowledged durable.
    commits: Counter,
    /// Time from COMMIT to the durable acknowledgement, in seconds.
    commit_seconds: Histogram,
    /// Commits refused because another transaction committed first.
    commit_conflicts: Counter,
    /// Syncs of commit journals: one per group of commits written together.
    journal_syncs: Counter,
    /// Inserts of a snapshot id another transaction had taken: the error
    /// DuckLake's retry loop waits for.
    snapshot_conflicts: Counter,
    /// Statements completed, by command (the first word of PostgreSQL's
    /// command tag: SELECT, INSERT, COPY, BEGIN, ...).
    statements: Family<Labels, Counter>,
    /// Errors sent to clients, by SQLSTATE.
    errors: Family<Labels, Counter>,
    /// Errors sent to clients in all (for the status page; not exported:
    /// the family sums to it).
    errors_total: Counter,
    /// Client sessions open now.
    active_sessions: Gauge,
    /// Client sessions started since the server started.
    sessions: Counter,
    /// Catalog scans answered from the scan cache (family
    /// `scan_cache_lookups`, `result="hit"`); looked up once, as every
    /// catalog scan counts.
    scan_cache_hits: Counter,
    /// Catalog scans the scan cache could not answer (`result="miss"`).
    scan_cache_misses: Counter,
    /// Binary COPYs of a whole table answered with the tuples kept from
    /// an earlier one (family `encoded_copy_lookups`, `result="hit"`).
    encoded_copy_hits: Counter,
    /// Such COPYs answered with the kept tuples followed by those of the
    /// rows added since (`result="extended"`).
    encoded_copy_extended: Counter,
    /// Such COPYs read and encoded again (`result="miss"`).
    encoded_copy_misses: Counter,
    /// What the server is (`role="writer"`, `"standby"` or `"replica"`): 1
    /// for its role.
    role: Family<Labels, Gauge>,
    /// Times this server took over as the writer from another one.
    takeovers: Counter,
    /// Seconds the last takeover took, from claiming the lease to taking
    /// writes.
    takeover_seconds: Gauge<f64, std::sync::atomic::AtomicU64>,
    /// The writer lease's term this server holds or watches.
    lease_term: Gauge,
    /// When the writer's heartbeat was last written (by a writer) or seen to
    /// change (by a standby), in seconds since 1970: the lease's age is
    /// `time() - rocklake_lease_heartbeat_timestamp_seconds`.
    lease_heartbeat: Gauge<f64, std::sync::atomic::AtomicU64>,
    /// Retention passes the server ran over a lake by itself.
    retention_passes: Counter,
    /// Catalog rows those passes excised.
    excised_rows: Counter,
    /// Inlined tables hygiene dropped (no snapshot could read them).
    hygiene_dropped: Counter,
    /// Rows hygiene deleted inside inlined tables (no snapshot could read them).
    hygiene_deleted_rows: Counter,
    /// SlateDB's statistics of every open lake.
    slatedb: SlateDbStats,
}

/// The process' metrics.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::with_prefix("rocklake");
        let commits = Counter::default();
        registry.register(
            "commits",
            "Transactions that wrote to a catalog and were acknowledged durable",
            commits.clone(),
        );
        // 0.25 ms to about 4 s.
        let commit_seconds = Histogram::new(exponential_buckets(0.000_25, 2.0, 15));
        registry.register(
            "commit_duration_seconds",
            "Time from COMMIT to its durable acknowledgement",
            commit_seconds.clone(),
        );
        let commit_conflicts = Counter::default();
        registry.register(
            "commit_conflicts",
            "Commits refused because a concurrent transaction wrote the same keys first",
            commit_conflicts.clone(),
        );
        let journal_syncs = Counter::default();
        registry.register(
            "journal_syncs",
            "Syncs of local commit journals (one per group of commits acknowledged together)",
            journal_syncs.clone(),
        );
        let snapshot_conflicts = Counter::default();
        registry.register(
            "snapshot_conflicts",
            "Inserts of a DuckLake snapshot id another transaction had taken (DuckLake retries these)",
            snapshot_conflicts.clone(),
        );
        let statements = Family::<Labels, Counter>::default();
        registry.register(
            "statements",
            "Statements completed, by command",
            statements.clone(),
        );
        let errors = Family::<Labels, Counter>::default();
        registry.register(
            "errors",
            "Errors sent to clients, by SQLSTATE",
            errors.clone(),
        );
        let active_sessions = Gauge::default();
        registry.register(
            "active_sessions",
            "Client sessions open now",
            active_sessions.clone(),
        );
        let sessions = Counter::default();
        registry.register("sessions", "Client sessions started", sessions.clone());
        let (scan_cache_hits, scan_cache_misses) = hits_and_misses(
            &mut registry,
            "scan_cache_lookups",
            "Catalog scans answered from the scan cache (result=hit) or from storage (result=miss)",
        );
        let [encoded_copy_hits, encoded_copy_extended, encoded_copy_misses] = outcomes(
            &mut registry,
            "encoded_copy_lookups",
            "Binary COPYs of a whole table answered with the tuples kept encoded for the same rows (result=hit), with kept tuples followed by those of the rows added since (result=extended), or read and encoded (result=miss)",
            ["hit", "extended", "miss"],
        );
        let role = Family::<Labels, Gauge>::default();
        registry.register(
            "role",
            "What the server is: 1 for role=\"writer\", \"standby\" or \"replica\"",
            role.clone(),
        );
        let takeovers = Counter::default();
        registry.register(
            "takeovers",
            "Times this server took over as the writer of its root",
            takeovers.clone(),
        );
        let takeover_seconds = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
        registry.register(
            "takeover_duration_seconds",
            "Time the last takeover took, from claiming the writer lease to taking writes",
            takeover_seconds.clone(),
        );
        let lease_term = Gauge::default();
        registry.register(
            "lease_term",
            "The writer lease's term this server holds or watches",
            lease_term.clone(),
        );
        let lease_heartbeat = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
        registry.register(
            "lease_heartbeat_timestamp_seconds",
            "When the writer's heartbeat was last written (writer) or seen to change (standby)",
            lease_heartbeat.clone(),
        );
        let retention_passes = Counter::default();
        registry.register(
            "retention_passes",
            "Retention passes the server ran over a lake by itself (serve --retain)",
            retention_passes.clone(),
        );
        let excised_rows = Counter::default();
        registry.register(
            "retention_excised_rows",
            "Catalog rows the server's retention passes excised",
            excised_rows.clone(),
        );
        let hygiene_dropped = Counter::default();
        registry.register(
            "hygiene_dropped_tables",
            "DuckLake inlined-data and inlined-delete tables hygiene dropped (no snapshot could read them)",
            hygiene_dropped.clone(),
        );
        let hygiene_deleted_rows = Counter::default();
        registry.register(
            "hygiene_deleted_inlined_rows",
            "Rows of DuckLake inlined tables hygiene deleted (no snapshot could read them)",
            hygiene_deleted_rows.clone(),
        );
        let slatedb = SlateDbStats::default();
        registry.register_collector(Box::new(slatedb.clone()));
        Metrics {
            registry,
            commits,
            commit_seconds,
            commit_conflicts,
            journal_syncs,
            snapshot_conflicts,
            statements,
            errors,
            errors_total: Counter::default(),
            active_sessions,
            sessions,
            scan_cache_hits,
            scan_cache_misses,
            encoded_copy_hits,
            encoded_copy_extended,
            encoded_copy_misses,
            role,
            takeovers,
            takeover_seconds,
            lease_term,
            lease_heartbeat,
            retention_passes,
            excised_rows,
            hygiene_dropped,
            hygiene_deleted_rows,
            slatedb,
        }
    }

    /// Records what the server is (`writer`, `standby` or `replica`), once
    /// it serves and again when it changes.
    pub fn set_role(&self, role: &str) {
        self.role.clear();
        self.role
            .get_or_create(&vec![("role".to_string(), role.to_string())])
            .set(1);
    }

    /// A takeover of the writer role that took `took`.
    pub fn takeover(&self, took: Duration) {
        self.takeovers.inc();
        self.takeover_seconds.set(took.as_secs_f64());
    }

    /// The writer lease's term, now held or watched.
    pub fn set_lease_term(&self, term: u64) {
        self.lease_term.set(term as i64);
    }

    /// The writer's heartbeat was written, or seen to change, now.
    pub fn lease_heartbeat(&self) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        self.lease_heartbeat.set(now);
    }

    /// A retention pass over a lake that excised `rows` catalog rows.
    pub fn retention_pass(&self, rows: u64) {
        self.retention_passes.inc();
        self.excised_rows.inc_by(rows);
    }

    /// Hygiene dropped `tables` inlined tables.
    pub fn hygiene_dropped(&self, tables: u64) {
        self.hygiene_dropped.inc_by(tables);
    }

    /// Rows hygiene deleted inside inlined tables.
    pub fn hygiene_deleted_rows(&self, rows: u64) {
        self.hygiene_deleted_rows.inc_by(rows);
    }

    /// A durable commit that took `took`.
    pub fn commit(&self, took: Duration) {
        self.commits.inc();
        self.commit_seconds.observe(took.as_secs_f64());
    }

    /// A sync of a commit journal, acknowledging a group of commits.
    pub fn journal_sync(&self) {
        self.journal_syncs.inc();
    }

    /// A commit refused by a concurrent one.
    pub fn commit_conflict(&self) {
        self.commit_conflicts.inc();
    }

    /// A snapshot id taken by another transaction, reported to a client.
    pub fn snapshot_conflict(&self) {
        self.snapshot_conflicts.inc();
    }

    /// A statement completed with `command_tag` (e.g. `INSERT 0 1`).
    pub fn statement(&self, command_tag: &str) {
        let command = command_tag.split(' ').next().unwrap_or_default();
        self.statements
            .get_or_create(&vec![("command".to_string(), command.to_string())])
            .inc();
    }

    /// An error with `sqlstate` sent to a client.
    pub fn error(&self, sqlstate: &str) {
        self.errors
            .get_or_create(&vec![("sqlstate".to_string(), sqlstate.to_string())])
            .inc();
        self.errors_total.inc();
    }

    /// Commits acknowledged since start.
    pub fn commit_count(&self) -> u64 {
        self.commits.get()
    }

    /// Commits refused by a conflict since start.
    pub fn commit_conflict_count(&self) -> u64 {
        self.commit_conflicts.get()
    }

    /// Snapshot id conflicts (DuckLake retries them) since start.
    pub fn snapshot_conflict_count(&self) -> u64 {
        self.snapshot_conflicts.get()
    }

    /// Errors sent to clients since start.
    pub fn error_count(&self) -> u64 {
        self.errors_total.get()
    }

    /// A client session started; it counts as active until the returned
    /// guard is dropped.
    pub fn session_started(&self) -> ActiveSession {
        self.sessions.inc();
        self.active_sessions.inc();
        ActiveSession(())
    }

    /// A catalog scan looked up in the scan cache.
    pub fn scan_cache_lookup(&self, hit: bool) {
        if hit {
            self.scan_cache_hits.inc();
        } else {
            self.scan_cache_misses.inc();
        }
    }

    /// Counts a binary COPY of a whole table by how it was answered.
    pub fn encoded_copy(&self, outcome: EncodedCopy) {
        match outcome {
            EncodedCopy::Hit => self.encoded_copy_hits.inc(),
            EncodedCopy::Extended => self.encoded_copy_extended.inc(),
            EncodedCopy::Miss => self.encoded_copy_misses.inc(),
        };
    }

    /// The recorder to give the SlateDB database of lake `lake` (its
    /// statistics carry the label `lake`).
    pub fn slatedb_recorder(&self, lake: &str) -> LakeRecorder {
        self.slatedb.recorder(lake)
    }

    /// Every metric, in OpenMetrics text ([`CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}

/// An active session; dropping it ends it.
pub struct ActiveSession(());

impl Drop for ActiveSession {
    fn drop(&mut self) {
        metrics().active_sessions.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(text: &str, line_start: &str) -> Option<f64> {
        text.lines()
            .find(|line| line.starts_with(line_start))
            .and_then(|line| line.rsplit(' ').next())
            .and_then(|value| value.parse().ok())
    }

    #[test]
    fn recorded_values_appear_in_the_exposition() {
        let metrics = metrics();
        let before = sample(&metrics.render(), "rocklake_commits_total").unwrap_or(0.0);
        metrics.commit(Duration::from_millis(3));
        metrics.statement("INSERT 0 1");
        metrics.error("23505");
        metrics.scan_cache_lookup(true);
        metrics.scan_cache_lookup(false);
        let session = metrics.session_started();
        let text = metrics.render();
        assert_eq!(sample(&text, "rocklake_commits_total"), Some(before + 1.0));
        assert!(sample(&text, "rocklake_statements_total{command=\"INSERT\"}").unwrap() >= 1.0);
        assert!(sample(&text, "rocklake_errors_total{sqlstate=\"23505\"}").unwrap() >= 1.0);
        assert!(sample(&text, "rocklake_active_sessions").unwrap() >= 1.0);
        assert!(text.contains("rocklake_commit_duration_seconds_bucket{le=\"0.004\"}"));
        for result in ["hit", "miss"] {
            let name = format!("rocklake_scan_cache_lookups_total{{result=\"{result}\"}}");
            assert!(sample(&text, &name).unwrap() >= 1.0, "{name}");
        }
        drop(session);
        assert!(text.ends_with("# EOF\n"));
    }
}
