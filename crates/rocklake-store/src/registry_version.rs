//! The registry version (`Counter::RegistryVersion`, bumped by every commit
//! that creates or drops a relation or schema) as the writer's commits left
//! it, so a transaction learns it without a SlateDB read.
//!
//! Every transaction reads the version to know whether the relation lists it
//! has are current. Only the writer changes it, in commits numbered by the
//! scan cache (see [`crate::scan_cache`]): the commit that changes it records
//! the new value under its number before it counts as ended. A transaction
//! whose snapshot holds the commits up to `seen` may use the kept value when
//! the last change is among them; otherwise it reads the counter, and keeps
//! what it read when its snapshot holds the last change.

use std::sync::Mutex;

/// What a commit did to the registry version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RegistryChange {
    /// It did not write it.
    Unchanged,
    /// It set it to this value and succeeded.
    Set(u64),
    /// It wrote it but failed: whether the write landed is not known here.
    Unknown,
}

/// The last known registry version and the commit that set it.
#[derive(Default)]
pub(crate) struct KnownRegistryVersion {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Number of the last commit that changed the version (or may have).
    changed_at: u64,
    /// The version since that commit, once known.
    version: Option<u64>,
}

impl KnownRegistryVersion {
    /// The state, locked. After a panic while it was locked the version is
    /// forgotten (read from SlateDB again), never trusted.
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| {
            let mut state = poisoned.into_inner();
            state.version = None;
            self.state.clear_poison();
            state
        })
    }

    /// The version a snapshot holding the commits up to `seen` reads, if known.
    pub(crate) fn at(&self, seen: u64) -> Option<u64> {
        let state = self.state();
        (state.changed_at <= seen)
            .then_some(state.version)
            .flatten()
    }

    /// Keeps `version`, read by a snapshot holding the commits up to `seen`,
    /// if that snapshot holds the last change.
    pub(crate) fn keep(&self, seen: u64, version: u64) {
        let mut state = self.state();
        if state.changed_at <= seen {
            state.version = Some(version);
        }
    }

    /// Records commit `number`'s change; called before the commit counts as
    /// ended.
    pub(crate) fn committed(&self, number: u64, change: RegistryChange) {
        let version = match change {
            RegistryChange::Unchanged => return,
            RegistryChange::Set(version) => Some(version),
            RegistryChange::Unknown => None,
        };
        let mut state = self.state();
        state.changed_at = number;
        state.version = version;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_version_serves_snapshots_that_hold_its_last_change() {
        let known = KnownRegistryVersion::default();
        assert_eq!(known.at(0), None, "nothing read yet");
        known.keep(0, 0);
        assert_eq!(known.at(0), Some(0));
        known.committed(1, RegistryChange::Unchanged);
        assert_eq!(known.at(1), Some(0), "a commit without DDL changes nothing");

        known.committed(2, RegistryChange::Set(1));
        assert_eq!(known.at(1), None, "a snapshot before the change reads it");
        assert_eq!(known.at(2), Some(1));
        known.keep(1, 0);
        assert_eq!(known.at(3), Some(1), "an older read does not replace it");

        known.committed(4, RegistryChange::Unknown);
        assert_eq!(known.at(5), None, "after a failed change, read again");
        known.keep(5, 2);
        assert_eq!(known.at(5), Some(2));
    }
}
