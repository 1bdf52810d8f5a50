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
    /// `tags`: `writes` (`bytes` of keys and values) when it succeeded and
    /// kept them. The oldest commits go when over the bounds.
    pub(crate) fn push(
        &mut self,
        number: u64,
        tags: TagSet,
        writes: Option<Arc<Writes>>,
        bytes: usize,
    ) {
        self.bytes += bytes;
        self.commits.push_back(RecentCommit {
            number,
            tags,
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
    /// after `since` and up to `seen` (`None` for a deleted key), in key
    /// order; `None` when that is not known (see
    /// [`crate::scan_cache::CacheView::changes_since`]).
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
            let writes = commit.writes.as_ref()?;
            let under = writes
                .range::<[u8], _>((Bound::Included(prefix), Bound::Unbounded))
                .take_while(|(key, _)| key.starts_with(prefix));
            for (key, value) in under {
                changes.insert(key.clone(), value.clone());
            }
        }
        Some(changes)
    }
}
