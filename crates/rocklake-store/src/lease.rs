//! The writer lease of a served root: which server may write its catalogs,
//! so a standby can tell that the writer is gone and take over, and a
//! second writer cannot take over silently.
//!
//! ```text
//! ROOT/lease/term-<20 digits>   one object per claim, created only if absent
//! ROOT/lease/beat               the holder's heartbeat, overwritten
//! ```
//!
//! A server becomes the writer by creating the claim object of the next
//! term (an object store's create-if-absent, a local directory's link that
//! fails on an existing name): of several servers claiming the same term,
//! exactly one succeeds. The holder then writes its heartbeat every quarter
//! of the takeover bound ([`LeaseOptions::takeover_after`]), each time after
//! checking that no claim of a later term exists; one that finds one has
//! lost the lease ([`Ended::Lost`]).
//!
//! Another server judges the holder gone when its heartbeat has not changed
//! for the takeover bound, measured by its own clock from when it saw the
//! last change (so the two clocks need not agree, only run at about the same
//! rate), or at once when the holder released the lease on a clean shutdown
//! or ran on the same host and its process no longer exists.
//!
//! The holder acknowledges commits only while its last heartbeat started
//! less than three quarters of the bound ago ([`LeaseGate`]), so a writer
//! that was paused or cut off stops committing before anyone may take over.
//! The lease decides who should write; SlateDB's writer fencing and the
//! commit journal's owner file (see [`crate::journal`]) stay the last line:
//! a writer that resumes after a takeover cannot make a commit durable, and
//! every commit it acknowledged before is replayed by the new writer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use prost::Message;
use rocklake_codec::values::pb;
use slatedb::object_store::path::Path as ObjectPath;
use slatedb::object_store::{ObjectStoreExt, PutMode, PutOptions};

use crate::error::{StoreError, StoreResult};
use crate::faults::Fault;
use crate::root::LakeRoot;

/// Folder of the lease under a root.
const LEASE: &str = "lease";
/// The holder's heartbeat object.
const BEAT: &str = "beat";

/// How long a writer's heartbeat may stay unchanged before another server
/// takes over, by default.
pub const DEFAULT_TAKEOVER_AFTER: Duration = Duration::from_secs(3);

/// How a server holds or watches the lease.
#[derive(Debug, Clone)]
pub struct LeaseOptions {
    /// How long the holder's heartbeat may stay unchanged before the holder
    /// counts as gone.
    pub takeover_after: Duration,
    /// What holds the lease, for messages (`rocklake serve on ADDR`).
    pub address: String,
}

impl LeaseOptions {
    /// How often a watcher reads the heartbeat.
    fn poll_every(&self) -> Duration {
        (self.takeover_after / 8).clamp(Duration::from_millis(20), Duration::from_secs(1))
    }

    /// How often the holder writes its heartbeat.
    fn renew_every(&self) -> Duration {
        self.takeover_after / 4
    }

    /// How long after a heartbeat started the holder may still commit.
    fn valid_for(&self) -> Duration {
        self.takeover_after * 3 / 4
    }
}

/// This process as a lease holder (see [`pb::WriterLease`]).
fn this_process(address: &str) -> pb::WriterLease {
    let mut id = [0u8; 8];
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut id);
    let pid = std::process::id();
    pb::WriterLease {
        holder: id.iter().map(|b| format!("{b:02x}")).collect(),
        host: read_proc("sys/kernel/hostname").unwrap_or_default(),
        boot_id: read_proc("sys/kernel/random/boot_id").unwrap_or_default(),
        pid,
        process_start: process_start(pid).unwrap_or(0),
        address: address.to_string(),
        ..pb::WriterLease::default()
    }
}

fn read_proc(name: &str) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{name}"))
        .ok()
        .map(|text| text.trim().to_string())
}

/// When process `pid` started, in clock ticks after boot (field 22 of
/// `/proc/PID/stat`), if it exists.
fn process_start(pid: u32) -> Option<u64> {
    let stat = read_proc(&format!("{pid}/stat"))?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// Whether `holder` ran on this host and its process is gone (a holder on
/// another host, or on a host without `/proc`, is never judged this way).
fn gone_from_this_host(holder: &pb::WriterLease, me: &pb::WriterLease) -> bool {
    if holder.host.is_empty()
        || holder.boot_id.is_empty()
        || holder.host != me.host
        || holder.boot_id != me.boot_id
        || holder.holder == me.holder
    {
        return false;
    }
    match process_start(holder.pid) {
        None => true,
        Some(start) => holder.process_start != 0 && start != holder.process_start,
    }
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Who holds a root's lease, as a watcher last read it.
#[derive(Debug, Clone, Default)]
pub struct LeaseState {
    /// The highest term claimed.
    pub term: u64,
    /// The heartbeat of that term, once its holder wrote one.
    pub holder: Option<pb::WriterLease>,
}

impl LeaseState {
    /// The holder in words, for messages.
    pub fn describe(&self) -> String {
        match &self.holder {
            Some(h) => format!(
                "term {}, held by {} (host {}, pid {})",
                self.term, h.address, h.host, h.pid
            ),
            None => format!(
                "term {}, claimed by a server that has not started",
                self.term
            ),
        }
    }

    /// How long ago, by this host's wall clock, the holder's last
    /// heartbeat was written (`None` before the first).
    pub fn heartbeat_age(&self) -> Option<Duration> {
        let written = self.holder.as_ref()?.written_unix_ms;
        Some(Duration::from_millis(unix_ms().saturating_sub(written)))
    }

    /// Whether the holder released the lease, or none was ever claimed.
    fn free(&self) -> bool {
        self.term == 0 || self.holder.as_ref().is_some_and(|h| h.released)
    }

    /// What changes with each heartbeat.
    fn progress(&self) -> (u64, Option<(String, u64)>) {
        let beat = self.holder.as_ref().map(|h| (h.holder.clone(), h.beat));
        (self.term, beat)
    }
}

/// The lease objects of a root.
#[derive(Clone)]
struct LeaseObjects {
    root: LakeRoot,
}

impl LeaseObjects {
    fn claim_path(&self, term: u64) -> ObjectPath {
        self.root.object_path(&[LEASE, &format!("term-{term:020}")])
    }

    /// The highest term claimed (0: none), by listing the claims.
    async fn highest_term(&self) -> StoreResult<u64> {
        let names = self.root.list_names(&[LEASE]).await?;
        Ok(names
            .iter()
            .filter_map(|name| name.strip_prefix("term-")?.parse::<u64>().ok())
            .max()
            .unwrap_or(0))
    }

    async fn claim_exists(&self, term: u64) -> StoreResult<bool> {
        let path = self.claim_path(term);
        match self.root.objects().head(&path).await {
            Ok(_) => Ok(true),
            Err(slatedb::object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.root.error(format!("cannot read {path}: {e}"))),
        }
    }

    /// The lease as it stands: the highest term (found from `known` on by
    /// probing the next claims, or by listing when `known` is 0) and its
    /// heartbeat.
    async fn read(&self, known: u64) -> StoreResult<LeaseState> {
        let mut term = if known == 0 {
            self.highest_term().await?
        } else {
            known
        };
        while self.claim_exists(term + 1).await? {
            term += 1;
        }
        let beat = match self.root.read_object_at(&[LEASE, BEAT]).await? {
            Some(bytes) => Some(pb::WriterLease::decode(bytes.as_ref()).map_err(|e| {
                self.root
                    .error(format!("the lease heartbeat cannot be read: {e}"))
            })?),
            None => None,
        };
        let holder = beat.filter(|beat| beat.term == term);
        Ok(LeaseState { term, holder })
    }

    /// Claims `term`: whether this call created its claim object.
    async fn claim(&self, term: u64, me: &pb::WriterLease) -> StoreResult<bool> {
        let path = self.claim_path(term);
        let mut claim = me.clone();
        claim.term = term;
        claim.written_unix_ms = unix_ms();
        let options = PutOptions::from(PutMode::Create);
        match self
            .root
            .objects()
            .put_opts(&path, claim.encode_to_vec().into(), options)
            .await
        {
            Ok(_) => Ok(true),
            Err(slatedb::object_store::Error::AlreadyExists { .. }) => Ok(false),
            Err(e) => Err(self.root.error(format!("cannot create {path}: {e}"))),
        }
    }

    /// Writes the heartbeat; a failure as the storage fault it is.
    async fn write_beat(&self, beat: &pb::WriterLease) -> Result<(), Fault> {
        let path = self.root.object_path(&[LEASE, BEAT]);
        self.root
            .objects()
            .put(&path, beat.encode_to_vec().into())
            .await
            .map(|_| ())
            .map_err(|e| Fault::of(&e))
    }
}

/// Watches a root's lease until its holder is gone.
struct Watcher {
    objects: LeaseObjects,
    options: LeaseOptions,
    me: pb::WriterLease,
    state: LeaseState,
    changed_at: Instant,
}

impl Watcher {
    async fn new(root: &LakeRoot, options: &LeaseOptions) -> StoreResult<Watcher> {
        let objects = LeaseObjects { root: root.clone() };
        let state = objects.read(0).await?;
        Ok(Watcher {
            objects,
            options: options.clone(),
            me: this_process(&options.address),
            state,
            changed_at: Instant::now(),
        })
    }

    /// Reads the lease again; whether its holder made progress.
    async fn poll(&mut self) -> StoreResult<bool> {
        let state = self.objects.read(self.state.term).await?;
        let moved = state.progress() != self.state.progress();
        if moved {
            self.changed_at = Instant::now();
            rocklake_metrics::metrics().lease_heartbeat();
        }
        rocklake_metrics::metrics().set_lease_term(state.term);
        self.state = state;
        Ok(moved)
    }

    /// Why the holder counts as gone, if it does.
    fn gone(&self) -> Option<String> {
        if self.state.term == 0 {
            return Some("no server ever held the lease".to_string());
        }
        if self.state.free() {
            return Some("the writer released the lease when it shut down".to_string());
        }
        if let Some(holder) = &self.state.holder {
            if gone_from_this_host(holder, &self.me) {
                return Some(format!("the writer's process {} has exited", holder.pid));
            }
        }
        let quiet = self.changed_at.elapsed();
        (quiet >= self.options.takeover_after).then(|| {
            format!(
                "the writer's heartbeat has not changed for {} ms",
                quiet.as_millis()
            )
        })
    }

    /// Claims the next term; the held lease when this server won it.
    async fn claim(&mut self, why: &str) -> StoreResult<Option<HeldLease>> {
        let term = self.state.term + 1;
        if !self.objects.claim(term, &self.me).await? {
            // Another server won this term: watch it from now on.
            self.poll().await?;
            self.changed_at = Instant::now();
            return Ok(None);
        }
        tracing::info!(term, why, "claimed the writer lease");
        let beat = pb::WriterLease {
            term,
            ..self.me.clone()
        };
        let held = HeldLease {
            gate: Arc::new(LeaseGate::new(
                self.objects.clone(),
                self.options.clone(),
                beat,
            )),
            term,
            previous: self.state.clone(),
        };
        held.gate.renew(false).await?;
        rocklake_metrics::metrics().set_lease_term(term);
        rocklake_metrics::metrics().lease_heartbeat();
        Ok(Some(held))
    }
}

/// What [`acquire`] does when a live writer holds the lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenHeld {
    /// Refuse to start ([`StoreError::LeaseHeld`]).
    Refuse,
    /// Claim the next term at once, fencing the live writer (a planned
    /// switchover).
    TakeOver,
}

/// Claims the lease for a writer that starts: at once when it is free or
/// its holder is gone; when a live writer holds it, as `when_held` says. A
/// holder that neither released the lease nor shows progress is watched
/// for the takeover bound first.
pub async fn acquire(
    root: &LakeRoot,
    options: &LeaseOptions,
    when_held: WhenHeld,
) -> StoreResult<HeldLease> {
    let mut watcher = Watcher::new(root, options).await?;
    loop {
        let why = match (watcher.gone(), when_held) {
            (Some(why), _) => why,
            (None, WhenHeld::TakeOver) => "a switchover (--take-over)".to_string(),
            (None, WhenHeld::Refuse) => {
                tokio::time::sleep(options.poll_every()).await;
                if watcher.poll().await? {
                    return Err(StoreError::LeaseHeld {
                        location: root.location().to_string(),
                        holder: watcher.state.describe(),
                    });
                }
                continue;
            }
        };
        if let Some(held) = watcher.claim(&why).await? {
            return Ok(held);
        }
    }
}

/// Claims the lease when nobody holds it or its holder is known to be gone
/// without waiting (released, or its process on this host exited); `None`
/// when a holder may be alive.
pub async fn claim_if_free(
    root: &LakeRoot,
    options: &LeaseOptions,
) -> StoreResult<Option<HeldLease>> {
    let mut watcher = Watcher::new(root, options).await?;
    match watcher.gone() {
        Some(why) => watcher.claim(&why).await,
        None => Ok(None),
    }
}

/// Waits until the holder of the lease is gone and claims it (what a
/// standby does); of several servers waiting, one wins each term and the
/// others go on waiting.
pub async fn wait_and_claim(root: &LakeRoot, options: &LeaseOptions) -> StoreResult<HeldLease> {
    let mut watcher = Watcher::new(root, options).await?;
    loop {
        if let Some(why) = watcher.gone() {
            if let Some(held) = watcher.claim(&why).await? {
                return Ok(held);
            }
            continue;
        }
        tokio::time::sleep(options.poll_every()).await;
        if let Err(error) = watcher.poll().await {
            tracing::warn!(%error, "reading the writer lease failed");
        }
    }
}

/// Reads who holds the lease of `root` now (for status and messages).
pub async fn current(root: &LakeRoot) -> StoreResult<LeaseState> {
    LeaseObjects { root: root.clone() }.read(0).await
}

/// Whether the holder may commit now (see the module docs), and the
/// holder's heartbeat. Shared with every catalog the holder opens: a commit
/// that finds the last heartbeat too old writes one itself before it gives
/// up ([`LeaseGate::ensure`]), so a renewal task starved of CPU does not
/// stop commits.
#[derive(Debug)]
pub struct LeaseGate {
    started: Instant,
    /// Milliseconds after `started` until which commits are acknowledged.
    valid_until_ms: AtomicU64,
    lost: OnceLock<String>,
    /// Why the last heartbeat could not be written, until one is.
    fault: std::sync::Mutex<Option<Fault>>,
    objects: LeaseObjects,
    options: LeaseOptions,
    /// The holder's heartbeat (one renewal at a time).
    beat: tokio::sync::Mutex<pb::WriterLease>,
}

impl std::fmt::Debug for LeaseObjects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LeaseObjects({})", self.root.location())
    }
}

impl LeaseGate {
    fn new(objects: LeaseObjects, options: LeaseOptions, beat: pb::WriterLease) -> LeaseGate {
        LeaseGate {
            started: Instant::now(),
            valid_until_ms: AtomicU64::new(0),
            lost: OnceLock::new(),
            fault: std::sync::Mutex::new(None),
            objects,
            options,
            beat: tokio::sync::Mutex::new(beat),
        }
    }

    fn extend(&self, until: Instant) {
        let ms = until.saturating_duration_since(self.started).as_millis() as u64;
        self.valid_until_ms.fetch_max(ms, Ordering::AcqRel);
    }

    fn lose(&self, reason: String) {
        let _ = self.lost.set(reason);
    }

    /// Fails unless the lease is held and its last heartbeat is recent.
    pub fn check(&self) -> StoreResult<()> {
        if let Some(reason) = self.lost.get() {
            return Err(StoreError::LeaseLost(reason.clone()));
        }
        let now = self.started.elapsed().as_millis() as u64;
        if now >= self.valid_until_ms.load(Ordering::Acquire) {
            // The heartbeat was not written in time: storage failed it or
            // did not answer (or this process was paused). Said as the
            // storage fault it is (53100 or 58030); commits resume once a
            // heartbeat is written, unless another server took over.
            let fault = self.fault.lock().unwrap_or_else(|e| e.into_inner()).clone();
            return Err(StoreError::StorageFault {
                fault: fault.unwrap_or_else(|| {
                    Fault::io("storage did not take the writer lease's heartbeat in time")
                }),
                detail: "The writer lease could not be renewed, so this server acknowledges \
                         no commit until storage takes writes again."
                    .to_string(),
            });
        }
        Ok(())
    }

    /// [`LeaseGate::check`], writing a heartbeat first when the last one is
    /// too old (a renewal that was late, not one that failed for good).
    pub async fn ensure(&self) -> StoreResult<()> {
        if self.lost.get().is_none() && self.check().is_err() {
            if let Err(error) = self.renew(false).await {
                tracing::warn!(%error, "renewing the writer lease for a commit failed");
            }
        }
        self.check()
    }

    /// Why the lease was lost, once it was.
    pub fn lost(&self) -> Option<&str> {
        self.lost.get().map(String::as_str)
    }

    /// Writes one heartbeat (the next one when `next`), unless a later
    /// term was claimed (then the lease is lost).
    async fn renew(&self, next: bool) -> StoreResult<()> {
        let mut beat = self.beat.lock().await;
        let started = Instant::now();
        if self.objects.claim_exists(beat.term + 1).await? {
            let state = self.objects.read(beat.term).await?;
            self.lose(format!("another server took over ({})", state.describe()));
            return Ok(());
        }
        if next {
            beat.beat += 1;
        }
        beat.written_unix_ms = unix_ms();
        let written = self.objects.write_beat(&beat).await;
        *self.fault.lock().unwrap_or_else(|e| e.into_inner()) = written.as_ref().err().cloned();
        written.map_err(|fault| {
            self.objects
                .root
                .error(format!("cannot write the lease heartbeat: {fault}"))
        })?;
        self.extend(started + self.options.valid_for());
        Ok(())
    }
}

/// The lease, held by this server.
pub struct HeldLease {
    gate: Arc<LeaseGate>,
    term: u64,
    previous: LeaseState,
}

impl HeldLease {
    /// The term this server holds.
    pub fn term(&self) -> u64 {
        self.term
    }

    /// Who held the lease before (for messages).
    pub fn previous(&self) -> &LeaseState {
        &self.previous
    }

    /// The gate commits check (see [`LeaseGate`]).
    pub fn gate(&self) -> Arc<LeaseGate> {
        self.gate.clone()
    }

    /// Renews the lease until it is lost or `stop` resolves; returns why it
    /// ended.
    pub async fn keep(self, stop: impl std::future::Future<Output = ()>) -> Ended {
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => return Ended::Stopped(Box::new(self)),
                _ = tokio::time::sleep(self.gate.options.renew_every()) => {}
            }
            if let Err(error) = self.gate.renew(true).await {
                tracing::warn!(%error, "renewing the writer lease failed");
            }
            if let Some(reason) = self.gate.lost() {
                tracing::error!(reason, "lost the writer lease");
                return Ended::Lost(reason.to_string());
            }
            rocklake_metrics::metrics().lease_heartbeat();
        }
    }

    /// Runs `work` while renewing the lease, then releases it (for a
    /// command that writes a root outside a server, such as an import).
    pub async fn hold_during<T>(
        self,
        work: impl std::future::Future<Output = T>,
    ) -> StoreResult<T> {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let keeping = self.keep(async {
            let _ = stopped.await;
        });
        let (ended, output) = tokio::join!(keeping, async {
            let output = work.await;
            let _ = stop.send(());
            output
        });
        match ended {
            Ended::Stopped(held) => held.release().await?,
            Ended::Lost(reason) => return Err(StoreError::LeaseLost(reason)),
        }
        Ok(output)
    }

    /// Marks the lease released (after a clean shutdown), so the next
    /// server claims it at once.
    pub async fn release(self) -> StoreResult<()> {
        let gate = &self.gate;
        let mut beat = gate.beat.lock().await;
        if gate.lost().is_some() || gate.objects.claim_exists(beat.term + 1).await? {
            return Ok(());
        }
        beat.beat += 1;
        beat.released = true;
        beat.written_unix_ms = unix_ms();
        gate.objects.write_beat(&beat).await.map_err(|fault| {
            gate.objects
                .root
                .error(format!("cannot release the lease: {fault}"))
        })
    }
}

/// How [`HeldLease::keep`] ended.
pub enum Ended {
    /// The caller stopped it; the lease is still held.
    Stopped(Box<HeldLease>),
    /// Another server took over, for this reason.
    Lost(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::location::StoreLocation;

    #[test]
    fn the_heartbeat_age_is_measured_from_its_wall_clock_time() {
        let mut state = LeaseState::default();
        assert_eq!(state.heartbeat_age(), None);
        state.holder = Some(pb::WriterLease {
            written_unix_ms: unix_ms() - 2_000,
            ..pb::WriterLease::default()
        });
        let age = state.heartbeat_age().expect("written");
        assert!(
            age >= Duration::from_secs(2) && age < Duration::from_secs(60),
            "{age:?}"
        );
    }

    fn options(ms: u64) -> LeaseOptions {
        LeaseOptions {
            takeover_after: Duration::from_millis(ms),
            address: "rocklake serve on 127.0.0.1:1".to_string(),
        }
    }

    fn root(dir: &tempfile::TempDir) -> LakeRoot {
        LakeRoot::open(StoreLocation::Local(dir.path().to_path_buf())).unwrap()
    }

    #[tokio::test]
    async fn the_first_writer_claims_at_once_and_a_second_is_refused_while_it_lives() {
        let dir = tempfile::tempdir().unwrap();
        let first = acquire(&root(&dir), &options(300), WhenHeld::Refuse)
            .await
            .unwrap();
        assert_eq!(first.term(), 1);
        first.gate().check().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let keeping = tokio::spawn(first.keep(async {
            let _ = stopped.await;
        }));
        let refused = acquire(&root(&dir), &options(300), WhenHeld::Refuse).await;
        let Err(StoreError::LeaseHeld { holder, .. }) = refused else {
            panic!("a second writer started while the first renews its lease");
        };
        assert!(holder.contains("term 1"), "{holder}");
        stop.send(()).unwrap();
        let Ended::Stopped(first) = keeping.await.unwrap() else {
            panic!("the lease was lost")
        };
        first.release().await.unwrap();
        let next = acquire(&root(&dir), &options(60_000), WhenHeld::Refuse)
            .await
            .unwrap();
        assert_eq!(next.term(), 2, "a released lease is claimed at once");
    }

    #[tokio::test]
    async fn a_silent_holder_is_taken_over_and_learns_it_lost_the_lease() {
        let dir = tempfile::tempdir().unwrap();
        let first = acquire(&root(&dir), &options(200), WhenHeld::Refuse)
            .await
            .unwrap();
        let gate = first.gate();
        // The holder stops renewing (a paused process): its gate closes.
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(gate.check().is_err(), "a holder past its heartbeat commits");
        let standby = wait_and_claim(&root(&dir), &options(200)).await.unwrap();
        assert_eq!(standby.term(), 2);
        // The old holder resumes renewing and finds the later claim.
        match first.keep(std::future::pending()).await {
            Ended::Lost(reason) => assert!(reason.contains("took over"), "{reason}"),
            Ended::Stopped(_) => unreachable!(),
        }
        assert!(matches!(gate.check(), Err(StoreError::LeaseLost(_))));
        standby.gate().check().unwrap();
    }

    #[tokio::test]
    async fn a_commit_writes_a_late_heartbeat_itself_unless_the_lease_was_taken() {
        let dir = tempfile::tempdir().unwrap();
        let held = acquire(&root(&dir), &options(200), WhenHeld::Refuse)
            .await
            .unwrap();
        let gate = held.gate();
        // Nobody renews (a renewal task starved of CPU): a commit renews.
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(gate.check().is_err());
        gate.ensure().await.unwrap();
        gate.check().unwrap();
        // Once another server claimed the next term, it cannot.
        let _other = acquire(&root(&dir), &options(200), WhenHeld::TakeOver)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(matches!(gate.ensure().await, Err(StoreError::LeaseLost(_))));
    }

    #[tokio::test]
    async fn of_several_standbys_exactly_one_wins_each_term() {
        let dir = tempfile::tempdir().unwrap();
        let first = acquire(&root(&dir), &options(150), WhenHeld::Refuse)
            .await
            .unwrap();
        drop(first);
        let winners = Arc::new(AtomicU64::new(0));
        let waiting: Vec<_> = (0..4)
            .map(|_| {
                let root = root(&dir);
                let winners = winners.clone();
                tokio::spawn(async move {
                    let held = wait_and_claim(&root, &options(150)).await.unwrap();
                    winners.fetch_add(1, Ordering::SeqCst);
                    held.keep(std::future::pending()).await
                })
            })
            .collect();
        // Until one has taken over (a generous bound, for a loaded
        // machine), then long enough for a second claim to show.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while winners.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert_eq!(winners.load(Ordering::SeqCst), 1, "one standby takes over");
        assert_eq!(current(&root(&dir)).await.unwrap().term, 2);
        for waiter in waiting {
            waiter.abort();
        }
    }

    #[tokio::test]
    async fn a_switchover_claims_at_once_and_the_lease_records_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let _first = acquire(&root(&dir), &options(60_000), WhenHeld::Refuse)
            .await
            .unwrap();
        let second = acquire(&root(&dir), &options(60_000), WhenHeld::TakeOver)
            .await
            .unwrap();
        assert_eq!(second.term(), 2);
        assert_eq!(second.previous().term, 1);
        let state = current(&root(&dir)).await.unwrap();
        let holder = state.holder.unwrap();
        assert_eq!(holder.pid, std::process::id());
        assert_eq!(holder.address, "rocklake serve on 127.0.0.1:1");
    }

    #[test]
    fn a_holder_on_this_host_is_gone_when_its_process_is() {
        let me = this_process("a");
        let mut other = this_process("b");
        assert!(!gone_from_this_host(&other, &me), "this process is alive");
        other.process_start += 1;
        assert!(gone_from_this_host(&other, &me), "a reused pid");
        other.pid = u32::MAX;
        assert!(gone_from_this_host(&other, &me), "no such process");
        other.host = "elsewhere".to_string();
        assert!(!gone_from_this_host(&other, &me), "another host");
    }
}
