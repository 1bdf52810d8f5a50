//! The journal's writer thread: appends the frames of commits waiting for
//! it with one write and one `fdatasync`, checks the journal still belongs
//! to this writer, then answers every one of them (group commit). It never
//! waits for SlateDB: a commit that needs the file's start again makes room
//! before it is applied (see [`super::Journal::reserve`]) and says so in
//! its submission.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::faults::Fault;

/// Why a journaled commit could not be made durable.
#[derive(Debug, Clone)]
pub(crate) enum JournalFailure {
    /// A newer writer took the journal over (see [`super::owner`]).
    Fenced,
    /// Writing or syncing the journal failed; the journal accepts no more
    /// commits (what reached the file is unknown).
    Io(Fault),
}

/// A commit's frame, handed to the writer thread in commit order.
pub(crate) struct Submission {
    pub(crate) seq: u64,
    pub(crate) frame: Vec<u8>,
    /// Write it at the file's start (SlateDB holds every earlier frame).
    pub(crate) restart: bool,
    pub(crate) done: oneshot::Sender<Result<(), JournalFailure>>,
}

/// The open journal file of this writer and where its next frame goes.
pub(crate) struct JournalFile {
    pub(crate) file: File,
    pub(crate) size: u64,
    pub(crate) position: u64,
}

/// What the writer thread needs besides the file.
pub(crate) struct WriterContext {
    pub(crate) epoch: u64,
    pub(crate) owner: PathBuf,
    /// Syncs made so far.
    pub(crate) syncs: Arc<AtomicU64>,
    /// The highest sequence number synced and confirmed.
    pub(crate) confirmed: Arc<AtomicU64>,
    /// Set once the journal failed for good.
    pub(crate) broken: Arc<Mutex<Option<JournalFailure>>>,
}

/// Runs until every sender of `submissions` is gone.
pub(crate) fn run(
    mut file: JournalFile,
    context: WriterContext,
    submissions: Receiver<Submission>,
) {
    let mut broken: Option<JournalFailure> = None;
    while let Ok(first) = submissions.recv() {
        let mut group = vec![first];
        group.extend(submissions.try_iter());
        let outcome = match &broken {
            Some(failure) => Err(failure.clone()),
            None => file.append(&group, &context),
        };
        match &outcome {
            Err(failure) => {
                tracing::error!(
                    ?failure,
                    "the commit journal failed; commits fail until a restart"
                );
                broken = Some(failure.clone());
                *context.broken.lock().unwrap_or_else(|e| e.into_inner()) = Some(failure.clone());
            }
            Ok(()) => {
                let last = group.last().map_or(0, |submission| submission.seq);
                context.confirmed.fetch_max(last, Ordering::SeqCst);
            }
        }
        for submission in group {
            // A commit whose session went away does not wait any more.
            let _ = submission.done.send(outcome.clone());
        }
    }
}

impl JournalFile {
    /// Writes the frames of `group` in order, syncs them, and checks the
    /// journal is still this writer's.
    fn append(
        &mut self,
        group: &[Submission],
        context: &WriterContext,
    ) -> Result<(), JournalFailure> {
        let mut pending = Vec::new();
        for submission in group {
            if submission.restart {
                self.write(&pending)?;
                pending.clear();
                self.position = 0;
            }
            pending.extend_from_slice(&submission.frame);
        }
        self.write(&pending)?;
        self.file
            .sync_data()
            .map_err(|e| JournalFailure::Io(Fault::of(&e)))?;
        context.syncs.fetch_add(1, Ordering::Relaxed);
        rocklake_metrics::metrics().journal_sync();
        // After the sync: a writer taking over reads the journal after
        // marking itself owner, so a frame synced before this check found
        // this writer still owner is in what the new one replays.
        super::owner::check(&context.owner, context.epoch)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), JournalFailure> {
        // Reservations keep every frame inside the file.
        if self.position + bytes.len() as u64 > self.size {
            return Err(JournalFailure::Io(Fault::io(
                "a journal frame would run past the end of the journal file",
            )));
        }
        self.file
            .write_all_at(bytes, self.position)
            .map_err(|e| JournalFailure::Io(Fault::of(&e)))?;
        self.position += bytes.len() as u64;
        Ok(())
    }
}
