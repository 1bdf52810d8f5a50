//! Committing a write transaction: the counters staged under the commit
//! lock, the batch applied in commit order, then acknowledged once durable,
//! through the commit journal when the catalog has one (see
//! [`crate::journal`]) or SlateDB's shared WAL write (see
//! [`crate::group_flush`]).
//!
//! Storage faults (see [`crate::faults`]) never make a commit hang. Until
//! the batch is applied, every wait (the commit lock, room in the journal)
//! gives up when the statement is interrupted or storage does not answer
//! within the storage timeout, and the catalog is as it was. Once applied,
//! the wait for durability is bounded by the storage timeout only (as
//! PostgreSQL's WAL flush, it is not canceled halfway); a commit that gives
//! up there says so, and no further commit is accepted until storage
//! confirms it ([`crate::inner::Stall`]).

use std::sync::atomic::Ordering;

use rocklake_codec::keys::{Counter, SystemKey};
use rocklake_codec::tags::Tag;
use rocklake_codec::values::{encode_hot_key, pb};

use super::WriteTxn;
use crate::error::{StoreError, StoreResult};
use crate::inner::Confirmation;
use crate::journal::Journal;
use crate::known_values::ValueWrite;
use crate::scan_cache::{TagSet, Writes, MAX_WRITES_WRITTEN_THROUGH};
use crate::unique::committed_violation;

/// Keys and values put next to a transaction's own writes at commit.
type Staged = Vec<(Vec<u8>, Vec<u8>)>;

impl WriteTxn {
    /// Commits atomically and durably: every row written, the counters and the
    /// hot key go in one batch, and the call returns once the batch is in
    /// storage. A concurrent commit of the same key fails this one with
    /// [`StoreError::UniqueViolation`] (for inserted keys) or
    /// [`StoreError::Conflict`].
    pub async fn commit(self) -> StoreResult<()> {
        self.commit_changing_registry().await.map(|_| ())
    }

    /// [`WriteTxn::commit`], returning the registry version the commit set
    /// when it changed the registry (created, dropped or altered a relation
    /// or a schema).
    pub async fn commit_changing_registry(mut self) -> StoreResult<Option<u64>> {
        let inner = self.inner.clone();
        let started = std::time::Instant::now();
        let wrote = self.wrote;
        let guard = tokio::select! {
            guard = inner.commit_lock.clone().lock_owned() => guard,
            error = rocklake_types::interrupt::current_stopped() => {
                return Err(StoreError::Interrupted(Box::new(error)))
            }
        };
        if wrote {
            // A late heartbeat is written here rather than failing the
            // commit (a lost lease still fails it).
            if let Some(lease) = &inner.lease {
                lease.ensure().await?;
            }
            inner.check_accepting()?;
        }
        let writes = self.writes.take();
        // The journal takes every commit whose writes were kept whole (up
        // to its size limit); larger ones wait for SlateDB's write.
        let journal = inner.journal.as_ref().filter(|_| wrote && writes.is_some());
        let journal_seq = journal.map(Journal::next_seq);
        let (registry_version, staged) = if wrote {
            self.stage_counters(journal_seq).await?
        } else {
            (None, Staged::new())
        };
        let frame = match (journal, journal_seq, &writes) {
            (Some(journal), Some(seq), Some(writes)) => {
                let own = writes.iter().map(|(k, v)| (k.as_slice(), v.as_deref()));
                let counters = staged
                    .iter()
                    .map(|(k, v)| (k.as_slice(), Some(v.as_slice())));
                let frame = journal.frame(seq, own.chain(counters)).await?;
                let restart = journal
                    .reserve(
                        frame.len() as u64,
                        inner.storage_timeout,
                        &inner.health,
                        inner.epoch,
                    )
                    .await?;
                Some((journal, seq, frame, restart))
            }
            _ => None,
        };
        let retain_from = retain_from_written(&self.written_tags, writes.as_ref());
        // Scans cached before this commit stay valid for snapshots taken
        // before it; the mark ends once the writes are visible (or the commit
        // failed or was abandoned).
        let mut mark = inner.scan_cache.commit_started(
            std::mem::take(&mut self.written_tags),
            writes.filter(|writes| writes.len() <= MAX_WRITES_WRITTEN_THROUGH),
            registry_version,
            retain_from,
        );
        mark.rewrote(std::mem::take(&mut self.rewritten_tags));
        let outcome = self.txn.commit().await;
        if outcome.is_ok() {
            mark.succeeded();
        }
        drop(mark);
        match outcome {
            Ok(None) => Ok(registry_version),
            Ok(Some(handle)) => {
                match frame {
                    Some((journal, seq, frame, restart)) => {
                        // Frames are handed over in commit order; their
                        // sync is shared with the commits waiting for it.
                        let pending = journal.submit(seq, frame, restart);
                        drop(guard);
                        let durable = pending.durable(inner.epoch);
                        inner.confirm(durable, Confirmation::Journal(seq)).await?;
                    }
                    None => {
                        // The batch is applied in commit order; the durable
                        // write is shared with the commits waiting for it
                        // (group commit). With a journal, later commits wait
                        // until this one is durable: they may depend on it,
                        // and the journal would acknowledge them first (a
                        // wait that gives up stalls them instead).
                        let held = inner.journal.is_some().then_some(guard);
                        inner.group_flush.request(&inner.db);
                        let seq = handle.seqnum();
                        let epoch = inner.epoch;
                        let durable = async move {
                            let durable = handle.await_durable().await.map_err(|e| {
                                StoreError::storage("waiting for a commit to be durable", e, epoch)
                            });
                            drop(held);
                            durable
                        };
                        inner.confirm(durable, Confirmation::Slate(seq)).await?;
                    }
                }
                if wrote {
                    rocklake_metrics::metrics().commit(started.elapsed());
                }
                Ok(registry_version)
            }
            Err(error) => {
                let mapped = StoreError::storage("committing", error, inner.epoch);
                if let StoreError::Conflict { .. } = mapped {
                    rocklake_metrics::metrics().commit_conflict();
                    if let Some(violation) = committed_violation(&inner, &self.unique_keys).await? {
                        return Err(violation);
                    }
                }
                Err(mapped)
            }
        }
    }

    /// Puts the counters (and the hot key, when a snapshot was inserted; and
    /// `journal-applied`, when the commit is journaled as `journal_seq`)
    /// into the batch, untracked by conflict detection so unrelated commits
    /// do not conflict on them. Runs under the commit lock, so values only
    /// grow. The registry version stays tracked: two transactions that both
    /// changed the registry conflict, so two concurrent CREATE TABLEs of one
    /// name cannot both commit (each checked the name in its own snapshot).
    /// Returns the registry version it sets when the transaction changed the
    /// registry, and what it put.
    async fn stage_counters(&self, journal_seq: Option<u64>) -> StoreResult<(Option<u64>, Staged)> {
        let latest = self.inner.reads();
        let mut puts: Vec<(Vec<u8>, Vec<u8>)> = [
            (Counter::NextRowSeq, &self.inner.next_row_seq),
            (Counter::NextRelationId, &self.inner.next_relation_id),
            (Counter::NextNamespaceId, &self.inner.next_namespace_id),
        ]
        .into_iter()
        .map(|(counter, next)| {
            (
                counter.key(),
                next.load(Ordering::SeqCst).to_be_bytes().to_vec(),
            )
        })
        .collect();
        if let Some(seq) = journal_seq {
            puts.push((SystemKey::JournalApplied.key(), seq.to_be_bytes().to_vec()));
        }
        let mut registry_version = None;
        if self.registry_changed {
            let current = latest
                .get_u64(&Counter::RegistryVersion.key())
                .await?
                .unwrap_or(0);
            puts.push((
                Counter::RegistryVersion.key(),
                (current + 1).to_be_bytes().to_vec(),
            ));
            registry_version = Some(current + 1);
        }
        if let Some(snapshot) = self.snapshot_insert {
            let current = latest
                .get_u64(&Counter::NextSnapshotId.key())
                .await?
                .unwrap_or(0);
            let next = (snapshot.snapshot_id.max(0) as u64) + 1;
            if next >= current {
                puts.push((Counter::NextSnapshotId.key(), next.to_be_bytes().to_vec()));
                puts.push((
                    Counter::NextCatalogId.key(),
                    (snapshot.next_catalog_id.max(0) as u64)
                        .to_be_bytes()
                        .to_vec(),
                ));
                puts.push((
                    Counter::NextFileId.key(),
                    (snapshot.next_file_id.max(0) as u64).to_be_bytes().to_vec(),
                ));
                let hot = pb::HotKey {
                    snapshot_id: snapshot.snapshot_id,
                    schema_version: snapshot.schema_version,
                    next_catalog_id: snapshot.next_catalog_id,
                    next_file_id: snapshot.next_file_id,
                    snapshot_time_micros: snapshot.time,
                };
                puts.push((SystemKey::HotKey.key(), encode_hot_key(&hot)));
            }
        }
        for (key, value) in &puts {
            self.txn
                .put(key, value)
                .map_err(|e| self.storage_error("staging counters", e))?;
        }
        let registry_key = Counter::RegistryVersion.key();
        self.txn
            .unmark_write(
                puts.iter()
                    .map(|(k, _)| k.as_slice())
                    .filter(|k| *k != registry_key.as_slice()),
            )
            .map_err(|e| self.storage_error("staging counters", e))?;
        Ok((registry_version, puts))
    }
}

/// What a commit with `writes` (`None`: not kept) under `tags` writes to the
/// retention floor.
fn retain_from_written(tags: &TagSet, writes: Option<&Writes>) -> ValueWrite {
    if !tags.contains(Tag::System.byte()) {
        return ValueWrite::None;
    }
    let Some(writes) = writes else {
        return ValueWrite::Unknown;
    };
    match writes.get(&SystemKey::RetainFrom.key()) {
        None => ValueWrite::None,
        Some(Some(value)) => <[u8; 8]>::try_from(value.as_slice())
            .map_or(ValueWrite::Unknown, |bytes| {
                ValueWrite::Value(u64::from_be_bytes(bytes))
            }),
        Some(None) => ValueWrite::Unknown,
    }
}
