//! The journal's owner file: the epoch of the writer the journal belongs to.
//!
//! A writer taking a catalog over writes its epoch here (and syncs it)
//! before it reads the older writers' journal files; a writer checks the
//! file after each sync and acknowledges its commits only while the epoch is
//! still its own. So a commit the fenced writer acknowledged was synced
//! before the new writer read the journal, and is replayed by it.

use std::io::Write;
use std::path::Path;

use super::writer::JournalFailure;

/// Records `epoch` as the journal's owner, durably.
pub(crate) fn claim(path: &Path, epoch: u64) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    file.write_all(&epoch.to_be_bytes())?;
    file.sync_all()
}

/// Fails with [`JournalFailure::Fenced`] unless `epoch` owns the journal.
/// Reads the file by its path each time, so a replaced or removed file
/// counts too.
pub(crate) fn check(path: &Path, epoch: u64) -> Result<(), JournalFailure> {
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => JournalFailure::Fenced,
        _ => JournalFailure::Io(crate::faults::Fault::of(&e)),
    })?;
    let owner = bytes
        .get(..8)
        .map(|b| u64::from_be_bytes(b.try_into().expect("8 bytes")));
    if owner == Some(epoch) {
        Ok(())
    } else {
        Err(JournalFailure::Fenced)
    }
}
