//! The commit journal of a catalog in a local directory.
//!
//! SlateDB makes a write durable by writing a new WAL object; in a local
//! directory that is a new file, its fsync, a link and a directory fsync
//! (about 0.8 ms on the reference machine, against 0.15 ms for PostgreSQL's
//! WAL: one write and `fdatasync` into a file allocated beforehand). So a
//! writer of a local catalog acknowledges a commit once it is in the
//! journal instead: the commit is applied to SlateDB without waiting
//! (visible at once, made durable by SlateDB's background WAL flush within
//! its flush interval), and its keys and values go as one frame into a
//! zero-filled journal file, with one `fdatasync` shared by every commit
//! waiting (group commit). Each journaled commit also writes its sequence
//! number to the `journal-applied` system key, so the catalog itself says
//! which journaled commits it holds.
//!
//! When the next frame would not fit in the file, the commit flushes SlateDB
//! before it is applied (after which every frame written so far is in the
//! catalog durably) and its frame starts again at the file's start. That
//! flush is the one wait of a journaled commit on SlateDB's storage: it is
//! bounded by the storage timeout and the statement's interrupts, and a
//! commit that gives up has changed nothing (see [`Journal::reserve`]). When a writer opens the catalog it claims the journal
//! ([`owner`]), replays the frames above `journal-applied` of the older
//! writers' files ([`recovery`]), removes them and starts its own file, named
//! by its epoch. Commits larger than a quarter of the file (at most 1 MiB)
//! skip the journal: they wait for SlateDB's own durable write, holding the
//! commit lock so no later commit is acknowledged before them. On S3 there
//! is no journal: SlateDB's WAL objects are the only durable copy.

mod frame;
mod owner;
mod recovery;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use prost::Message;
use rocklake_codec::keys::SystemKey;
use rocklake_codec::values::pb;
use slatedb::{BlockTransformer, Db, DbReadOps};

use crate::error::{StoreError, StoreResult};
use crate::faults::{Fault, StorageHealth};
use crate::location::StoreLocation;
use crate::reader::Reads;
pub use recovery::JournaledCommit;
use writer::{JournalFailure, JournalFile, Submission, WriterContext};

/// Size of a journal file by default. A full file costs one SlateDB flush.
pub const DEFAULT_FILE_BYTES: u64 = 2 << 20;

/// The largest commit (keys and values) that goes through the journal.
const MAX_PAYLOAD_BYTES: usize = 1 << 20;

/// Name of the owner file in the journal directory.
const OWNER_FILE: &str = "owner";

/// The journal of an open catalog (see the module docs).
pub(crate) struct Journal {
    submissions: Mutex<Sender<Submission>>,
    next_seq: AtomicU64,
    cipher: Option<Arc<dyn BlockTransformer>>,
    file: PathBuf,
    syncs: Arc<AtomicU64>,
    max_payload_bytes: usize,
    db: Db,
    /// Size of the journal file.
    size: u64,
    /// Bytes of the frames submitted since the last start at the file's
    /// start (changed under the commit lock).
    used: AtomicU64,
    /// The highest sequence number the writer thread synced.
    confirmed: Arc<AtomicU64>,
    /// Why the journal takes no more commits, once it failed.
    broken: Arc<Mutex<Option<JournalFailure>>>,
    /// The SlateDB flush a commit waits for to start again at the file's
    /// start (it goes on when a commit gives up waiting).
    wrap_flush: Mutex<Option<WrapFlush>>,
}

/// A flush of SlateDB that lets the journal start again at its start.
struct WrapFlush {
    started: Instant,
    done: tokio::sync::watch::Receiver<Option<Result<(), JournalFailure>>>,
}

/// A commit's wait for its frame to be durable.
pub(crate) struct Pending(tokio::sync::oneshot::Receiver<Result<(), JournalFailure>>);

impl Journal {
    /// Claims the journal in `directory` for the writer of `epoch` (whose
    /// epoch is already durable in `db`), replays what older writers left
    /// and starts this writer's journal file.
    /// `file_bytes` is the size of the journal file.
    pub(crate) async fn open(
        directory: &Path,
        file_bytes: u64,
        epoch: u64,
        db: &Db,
        cipher: Option<Arc<dyn BlockTransformer>>,
    ) -> StoreResult<Journal> {
        let io = |doing: &str, e: std::io::Error| {
            StoreError::Journal(format!("{doing} {}: {e}", directory.display()))
        };
        std::fs::create_dir_all(directory).map_err(|e| io("creating", e))?;
        let owner_path = directory.join(OWNER_FILE);
        owner::claim(&owner_path, epoch).map_err(|e| io("claiming", e))?;
        sync_directory(directory).map_err(|e| io("syncing", e))?;
        let replayed = recovery::replay(directory, epoch, db, cipher.as_ref()).await?;
        if replayed.commits > 0 {
            tracing::info!(
                commits = replayed.commits,
                "replayed acknowledged commits from the commit journal"
            );
        }
        for (_, old) in recovery::files(directory)? {
            std::fs::remove_file(&old).map_err(|e| io("removing an old journal file in", e))?;
        }
        let path = directory.join(format!("{epoch:020}{}", recovery::FILE_SUFFIX));
        let file =
            create_zeroed(&path, file_bytes).map_err(|e| io("creating a journal file in", e))?;
        sync_directory(directory).map_err(|e| io("syncing", e))?;
        let (sender, receiver) = std::sync::mpsc::channel();
        let syncs = Arc::new(AtomicU64::new(0));
        let confirmed = Arc::new(AtomicU64::new(replayed.last_seq));
        let broken = Arc::new(Mutex::new(None));
        let context = WriterContext {
            syncs: syncs.clone(),
            epoch,
            owner: owner_path,
            confirmed: confirmed.clone(),
            broken: broken.clone(),
        };
        let journal_file = JournalFile {
            file,
            size: file_bytes,
            position: 0,
        };
        std::thread::Builder::new()
            .name("rocklake-journal".to_string())
            .spawn(move || writer::run(journal_file, context, receiver))
            .map_err(|e| io("starting the journal writer for", e))?;
        Ok(Journal {
            submissions: Mutex::new(sender),
            next_seq: AtomicU64::new(replayed.last_seq + 1),
            cipher,
            file: path,
            syncs,
            // A quarter of the file at most, so a wrap leaves room for it.
            max_payload_bytes: MAX_PAYLOAD_BYTES.min((file_bytes / 4) as usize),
            db: db.clone(),
            size: file_bytes,
            used: AtomicU64::new(0),
            confirmed,
            broken,
            wrap_flush: Mutex::new(None),
        })
    }

    /// The highest sequence number synced into the journal.
    pub(crate) fn confirmed_seq(&self) -> u64 {
        self.confirmed.load(Ordering::SeqCst)
    }

    /// Fails when the journal takes no more commits (it failed for good, or
    /// a newer writer took it over), before anything is applied.
    pub(crate) fn check_usable(&self, epoch: u64) -> StoreResult<()> {
        let broken = self
            .broken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match broken {
            None => Ok(()),
            Some(failure) => Err(failure_error(failure, epoch, NOT_APPLIED)),
        }
    }

    /// Makes room for a frame of `bytes` before its commit is applied
    /// (under the commit lock): `Ok(false)` when it fits after the frames
    /// submitted so far; otherwise flushes SlateDB, so that every commit
    /// applied so far is in the catalog durably, and `Ok(true)`: the frame
    /// goes to the file's start. The flush is waited for at most `timeout`
    /// (counted from when it began: a flush a commit gave up on is not
    /// waited for again from scratch), and is given up at once when the
    /// statement is interrupted; either way nothing was applied.
    pub(crate) async fn reserve(
        &self,
        bytes: u64,
        timeout: Duration,
        health: &StorageHealth,
        epoch: u64,
    ) -> StoreResult<bool> {
        let used = self.used.load(Ordering::SeqCst);
        if used + bytes <= self.size {
            self.used.store(used + bytes, Ordering::SeqCst);
            return Ok(false);
        }
        let (started, mut done) = {
            let mut slot = self.wrap_flush.lock().unwrap_or_else(|e| e.into_inner());
            let flush = slot.get_or_insert_with(|| {
                let (report, done) = tokio::sync::watch::channel(None);
                let db = self.db.clone();
                tokio::spawn(async move {
                    let outcome = db.flush().await.map_err(|e| match e.kind() {
                        slatedb::ErrorKind::Closed(slatedb::CloseReason::Fenced) => {
                            JournalFailure::Fenced
                        }
                        _ => {
                            tracing::error!(error = %e, "flushing the catalog to reuse the commit journal failed");
                            JournalFailure::Io(Fault::of(&e))
                        }
                    });
                    let _ = report.send(Some(outcome));
                });
                WrapFlush {
                    started: Instant::now(),
                    done,
                }
            });
            (flush.started, flush.done.clone())
        };
        let left = timeout.saturating_sub(started.elapsed());
        let finished = tokio::select! {
            finished = tokio::time::timeout(left, done.wait_for(Option::is_some)) => finished,
            error = rocklake_types::interrupt::current_stopped() => {
                return Err(StoreError::Interrupted(Box::new(error)))
            }
        };
        let outcome = match finished {
            Ok(Ok(outcome)) => outcome.clone().unwrap_or(Ok(())),
            Ok(Err(_)) => Err(JournalFailure::Io(Fault::io(
                "the flush task ended without an answer",
            ))),
            Err(_) => {
                let fault = health.fault_or(|| {
                    Fault::io(format!(
                        "storage did not finish a write within {}",
                        crate::faults::format_timeout(timeout)
                    ))
                });
                return Err(StoreError::StorageFault {
                    fault,
                    detail: NOT_APPLIED.to_string(),
                });
            }
        };
        *self.wrap_flush.lock().unwrap_or_else(|e| e.into_inner()) = None;
        match outcome {
            Ok(()) => {
                self.used.store(bytes, Ordering::SeqCst);
                Ok(true)
            }
            Err(JournalFailure::Io(fault)) => Err(StoreError::StorageFault {
                fault: health.fault_or(|| fault),
                detail: NOT_APPLIED.to_string(),
            }),
            Err(failure) => Err(failure_error(failure, epoch, NOT_APPLIED)),
        }
    }

    /// The most bytes of keys and values a commit may write to go through
    /// the journal.
    pub(crate) fn max_payload_bytes(&self) -> usize {
        self.max_payload_bytes
    }

    /// The sequence number the next journaled commit takes (read under the
    /// commit lock; [`Journal::submit`] moves it on).
    pub(crate) fn next_seq(&self) -> u64 {
        self.next_seq.load(Ordering::SeqCst)
    }

    /// The frame of commit `seq` writing `writes` (a `None` value deletes
    /// the key), sealed when the catalog is encrypted.
    pub(crate) async fn frame<'a>(
        &self,
        seq: u64,
        writes: impl Iterator<Item = (&'a [u8], Option<&'a [u8]>)>,
    ) -> StoreResult<Vec<u8>> {
        let batch = pb::JournalBatch {
            writes: writes
                .map(|(key, value)| pb::JournalWrite {
                    key: key.to_vec(),
                    value: value.map(<[u8]>::to_vec),
                })
                .collect(),
        };
        let plain = Bytes::from(batch.encode_to_vec());
        let payload = match &self.cipher {
            Some(cipher) => cipher
                .encode(plain)
                .await
                .map_err(|e| StoreError::Journal(format!("sealing commit {seq}: {e}")))?,
            None => plain,
        };
        let mut frame = Vec::with_capacity(frame::HEADER_BYTES + payload.len());
        frame::encode(seq, &payload, &mut frame);
        Ok(frame)
    }

    /// Hands commit `seq`'s frame to the writer thread (at the file's start
    /// when [`Journal::reserve`] said so). Called under the commit lock once
    /// the commit is applied, so frames follow commit order.
    pub(crate) fn submit(&self, seq: u64, frame: Vec<u8>, restart: bool) -> Pending {
        self.next_seq.store(seq + 1, Ordering::SeqCst);
        let (done, wait) = tokio::sync::oneshot::channel();
        let sender = self.submissions.lock().unwrap_or_else(|e| e.into_inner());
        // A send fails only when the thread is gone; the wait then fails.
        let _ = sender.send(Submission {
            seq,
            frame,
            restart,
            done,
        });
        Pending(wait)
    }

    /// Syncs of the journal file so far (each acknowledged a group of
    /// commits).
    pub(crate) fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }

    /// Removes this writer's journal file once the catalog was closed (and
    /// so flushed): a cleanly stopped catalog leaves no journal to replay.
    pub(crate) fn remove_file(&self) {
        if let Err(error) = std::fs::remove_file(&self.file) {
            tracing::warn!(%error, file = %self.file.display(), "could not remove the commit journal");
        }
    }
}

/// What a commit that failed before it was applied left behind.
pub(crate) const NOT_APPLIED: &str =
    "Nothing of this transaction was applied: the catalog is as it was before it.";

/// What a commit that failed after it was applied left behind.
pub(crate) const APPLIED_UNCONFIRMED: &str = "The commit was applied, but storage did not \
     confirm it durable in time. It becomes durable when storage recovers, unless the server \
     stops first; until then no further commit is accepted.";

/// The error of a journal `failure`; `detail` says what became of the commit.
fn failure_error(failure: JournalFailure, epoch: u64, detail: &str) -> StoreError {
    match failure {
        JournalFailure::Fenced => StoreError::Fenced { epoch },
        JournalFailure::Io(fault) => StoreError::StorageFault {
            fault,
            detail: detail.to_string(),
        },
    }
}

impl Pending {
    /// Waits until the frame is durable and the journal still this
    /// writer's (`epoch`).
    pub(crate) async fn durable(self, epoch: u64) -> StoreResult<()> {
        match self.0.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(failure)) => Err(failure_error(failure, epoch, APPLIED_UNCONFIRMED)),
            Err(_) => Err(StoreError::Journal(
                "the journal writer stopped before the commit was durable".to_string(),
            )),
        }
    }
}

/// The commits a local catalog's journal holds, read without taking it
/// over: what a reader of the catalog (a backup, `rocklake keys`) adds to
/// the state it reads, above that state's `journal-applied`. Read them
/// before opening the reader: a commit acknowledged before this read is in
/// it, or was in SlateDB (and so in the reader's state) before the journal
/// let go of it.
pub struct PendingCommits(Vec<JournaledCommit>);

impl PendingCommits {
    /// Reads the journal of the catalog at `location` (nothing on S3 or
    /// where no writer ever journaled).
    pub async fn read(
        location: &StoreLocation,
        cipher: Option<&Arc<dyn BlockTransformer>>,
    ) -> StoreResult<PendingCommits> {
        let Some(directory) = location.journal_directory() else {
            return Ok(PendingCommits(Vec::new()));
        };
        if !directory.is_dir() {
            return Ok(PendingCommits(Vec::new()));
        }
        Ok(PendingCommits(
            recovery::read_commits(&directory, None, cipher).await?,
        ))
    }

    /// The commits the state `source` reads does not hold (those above its
    /// `journal-applied`), oldest first.
    pub(crate) async fn missing_from<R: DbReadOps + Sync>(
        &self,
        source: &R,
    ) -> StoreResult<Vec<&JournaledCommit>> {
        let applied = Reads { source, epoch: 0 }
            .get_u64(&SystemKey::JournalApplied.key())
            .await?
            .unwrap_or(0);
        Ok(self
            .0
            .iter()
            .filter(|commit| commit.seq > applied)
            .collect())
    }
}

/// Creates `path` as a new file of `size` zero bytes, synced: later frames
/// overwrite allocated blocks, so a sync writes data only.
fn create_zeroed(path: &Path, size: u64) -> std::io::Result<std::fs::File> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)?;
    let zeroes = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        let chunk = left.min(zeroes.len() as u64) as usize;
        file.write_all(&zeroes[..chunk])?;
        left -= chunk as u64;
    }
    file.sync_all()?;
    Ok(file)
}

fn sync_directory(directory: &Path) -> std::io::Result<()> {
    std::fs::File::open(directory)?.sync_all()
}
