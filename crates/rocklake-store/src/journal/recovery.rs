//! Replaying the journal when a writer opens a catalog: the commits older
//! writers acknowledged from their journal files but SlateDB did not hold
//! durably yet.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use rocklake_codec::keys::SystemKey;
use rocklake_codec::values::pb;
use slatedb::{BlockTransformer, Db, WriteBatch};

use super::frame;
use crate::error::{StoreError, StoreResult};
use crate::reader::Reads;

/// Suffix of journal file names (`<epoch>.log`, the epoch in 20 digits).
pub(crate) const FILE_SUFFIX: &str = ".log";

/// What replaying found.
pub(crate) struct Replayed {
    /// Commits written to SlateDB again.
    pub(crate) commits: usize,
    /// The highest sequence number seen in any journal or in SlateDB.
    pub(crate) last_seq: u64,
}

/// The journal files in `directory` as `(epoch, path)`, oldest first.
pub(crate) fn files(directory: &Path) -> StoreResult<Vec<(u64, PathBuf)>> {
    let listing = std::fs::read_dir(directory)
        .map_err(|e| StoreError::Journal(format!("listing {}: {e}", directory.display())))?;
    let mut files = Vec::new();
    for entry in listing {
        let entry = entry
            .map_err(|e| StoreError::Journal(format!("listing {}: {e}", directory.display())))?;
        let name = entry.file_name();
        let epoch = name
            .to_str()
            .and_then(|name| name.strip_suffix(FILE_SUFFIX))
            .and_then(|epoch| epoch.parse::<u64>().ok());
        if let Some(epoch) = epoch {
            files.push((epoch, entry.path()));
        }
    }
    files.sort();
    Ok(files)
}

/// One commit read from a journal file.
pub struct JournaledCommit {
    /// Its sequence number (`journal-applied` once SlateDB holds it).
    pub seq: u64,
    writes: Vec<pb::JournalWrite>,
}

impl JournaledCommit {
    /// Every key it wrote with its new value (`None`: deleted).
    pub fn writes(&self) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
        self.writes
            .iter()
            .map(|write| (write.key.as_slice(), write.value.as_deref()))
    }

    /// The commit as a SlateDB write batch.
    pub fn batch(&self) -> WriteBatch {
        let mut batch = WriteBatch::new();
        for (key, value) in self.writes() {
            match value {
                Some(value) => batch.put(key, value),
                None => batch.delete(key),
            }
        }
        batch
    }
}

/// The commits of the journal files in `directory` of epochs before
/// `before_epoch` (all when `None`), oldest first.
pub(crate) async fn read_commits(
    directory: &Path,
    before_epoch: Option<u64>,
    cipher: Option<&Arc<dyn BlockTransformer>>,
) -> StoreResult<Vec<JournaledCommit>> {
    let mut commits = Vec::new();
    for (file_epoch, path) in files(directory)? {
        if before_epoch.is_some_and(|epoch| file_epoch >= epoch) {
            continue;
        }
        let bytes = std::fs::read(&path)
            .map_err(|e| StoreError::Journal(format!("reading {}: {e}", path.display())))?;
        for (seq, payload) in frame::scan(&bytes) {
            let writes = decode(payload, cipher).await.map_err(|e| {
                StoreError::Journal(format!("commit {seq} in {}: {e}", path.display()))
            })?;
            commits.push(JournaledCommit { seq, writes });
        }
    }
    Ok(commits)
}

/// Writes to `db`, in order, every commit of the journal files of epochs
/// before `epoch` that SlateDB does not hold (its sequence number is above
/// the `journal-applied` system key), then makes them durable.
pub(crate) async fn replay(
    directory: &Path,
    epoch: u64,
    db: &Db,
    cipher: Option<&Arc<dyn BlockTransformer>>,
) -> StoreResult<Replayed> {
    let reads = Reads { source: db, epoch };
    let mut applied = reads
        .get_u64(&SystemKey::JournalApplied.key())
        .await?
        .unwrap_or(0);
    let mut replayed = Replayed {
        commits: 0,
        last_seq: applied,
    };
    for commit in read_commits(directory, Some(epoch), cipher).await? {
        replayed.last_seq = replayed.last_seq.max(commit.seq);
        if commit.seq <= applied {
            continue;
        }
        db.write(commit.batch())
            .await
            .map_err(|e| StoreError::storage("replaying the commit journal", e, epoch))?;
        applied = commit.seq;
        replayed.commits += 1;
    }
    if replayed.commits > 0 {
        db.flush()
            .await
            .map_err(|e| StoreError::storage("replaying the commit journal", e, epoch))?;
    }
    Ok(replayed)
}

/// The writes of one frame's payload.
async fn decode(
    payload: &[u8],
    cipher: Option<&Arc<dyn BlockTransformer>>,
) -> Result<Vec<pb::JournalWrite>, String> {
    let plain = match cipher {
        Some(cipher) => cipher
            .decode(Bytes::copy_from_slice(payload))
            .await
            .map_err(|e| e.to_string())?,
        None => Bytes::copy_from_slice(payload),
    };
    let journaled = pb::JournalBatch::decode(plain).map_err(|e| e.to_string())?;
    Ok(journaled.writes)
}
