//! The keys the latest commits wrote, kept by the writer's scan cache (see
//! [`crate::scan_cache::CacheView::changes_since`]).

use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

use crate::scan_cache::{TagSet, Writes};

/// At most this many bytes of keys and values are kept (a DuckDB commit
/// writes a few KiB) ...
const MAX_RECENT_BYTES: usize = 8 << 20;
/// ... of at most this many commits.
pub(crate) const MAX_RECENT_COMMITS: usize = 4096;

/// The latest commits, oldest first, with their writes when known.
#[derive(Default)]
pub(crate) struct RecentCommits {
    commits: VecDeque<RecentCommit>,
    bytes: usize,
    /// Commits numbered up to this are no longer here (0: none dropped).
    forgotten: u64,
}

struct RecentCommit {
    number: u64,
    tags: TagSet,
    /// Tags of keys the commit deleted and then wrote again.
    rewritten: TagSet,
    /// `None`: the commit failed, or wrote too much to keep its writes.
    writes: Option<Arc<Writes>>,
    bytes: usize,
}

impl RecentCommits {
    /// None kept, and nothing known of the commits numbered up to `number`.
    pub(crate) fn forgetting_up_to(number: u64) -> Self {
        RecentCommits {
            forgotten: number,
            ..RecentCommits::default()
        }
    }

    /// Records commit `number` (numbers come in order), which wrote under
    /// `tags` (and deleted then wrote again keys under `rewritten`):
    /// `writes` (`bytes` of keys and values) when it succeeded and kept
    /// them. The oldest commits go when over the bounds.
    pub(crate) fn push(
        &mut self,
        number: u64,
        (tags, rewritten): (TagSet, TagSet),
        writes: Option<Arc<Writes>>,
        bytes: usize,
    ) {
        self.bytes += bytes;
        self.commits.push_back(RecentCommit {
            number,
            tags,
            rewritten,
            writes,
            bytes,
        });
        while self.bytes > MAX_RECENT_BYTES || self.commits.len() > MAX_RECENT_COMMITS {
            let Some(old) = self.commits.pop_front() else {
                break;
            };
            self.bytes -= old.bytes;
            self.forgotten = self.forgotten.max(old.number);
        }
    }

    /// The last write of each key under `prefix` by the commits numbered
    /// after `since` and up to `seen`, in key order, except that a key any
    /// of them deleted stays deleted (`None`): a key deleted and written
    /// again is not a new row. `None` when that is not known (see
    /// [`crate::scan_cache::CacheView::changes_since`]), or when a commit
    /// deleted and wrote again a key under the prefix's tag itself.
    pub(crate) fn changes_under(&self, prefix: &[u8], since: u64, seen: u64) -> Option<Writes> {
        let &tag = prefix.first()?;
        if since < self.forgotten {
            return None;
        }
        let mut changes = Writes::new();
        for commit in &self.commits {
            if commit.number <= since || commit.number > seen || !commit.tags.contains(tag) {
                continue;
            }
            if commit.rewritten.contains(tag) {
                return None;
            }
            let writes = commit.writes.as_ref()?;
            let under = writes
                .range::<[u8], _>((Bound::Included(prefix), Bound::Unbounded))
                .take_while(|(key, _)| key.starts_with(prefix));
            for (key, value) in under {
                match changes.get_mut(key) {
                    // Deleted by an earlier commit: stays deleted.
                    Some(None) => {}
                    Some(kept) => *kept = value.clone(),
                    None => {
                        changes.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        Some(changes)
    }
}
