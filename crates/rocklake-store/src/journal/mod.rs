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
//! When the file is full, the writer flushes SlateDB (after which every
//! frame written so far is in the catalog durably) and starts again at the
//! file's start. When a writer opens the catalog it claims the journal
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

use bytes::Bytes;
use prost::Message;
use rocklake_codec::keys::SystemKey;
use rocklake_codec::values::pb;
use slatedb::{BlockTransformer, Db, DbReadOps};

use crate::error::{StoreError, StoreResult};
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
        let context = WriterContext {
            syncs: syncs.clone(),
            epoch,
            owner: owner_path,
            db: db.clone(),
            runtime: tokio::runtime::Handle::current(),
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
        })
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

    /// Hands commit `seq`'s frame to the writer thread. Called under the
    /// commit lock once the commit is applied, so frames follow commit
    /// order.
    pub(crate) fn submit(&self, seq: u64, frame: Vec<u8>) -> Pending {
        self.next_seq.store(seq + 1, Ordering::SeqCst);
        let (done, wait) = tokio::sync::oneshot::channel();
        let sender = self.submissions.lock().unwrap_or_else(|e| e.into_inner());
        // A send fails only when the thread is gone; the wait then fails.
        let _ = sender.send(Submission { frame, done });
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

impl Pending {
    /// Waits until the frame is durable and the journal still this
    /// writer's (`epoch`).
    pub(crate) async fn durable(self, epoch: u64) -> StoreResult<()> {
        match self.0.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(JournalFailure::Fenced)) => Err(StoreError::Fenced { epoch }),
            Ok(Err(JournalFailure::Io(reason))) => Err(StoreError::Journal(reason)),
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
