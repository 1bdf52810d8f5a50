//! Values that only the writer's commits change, as its commits left them,
//! so a transaction learns them without a SlateDB read (a point read costs
//! tens of microseconds):
//!
//! - the registry version (`Counter::RegistryVersion`, bumped by every
//!   commit that creates or drops a relation or schema), which every
//!   transaction reads to know whether the relation lists it has are
//!   current;
//! - the retention floor (`SystemKey::RetainFrom`, advanced by the
//!   server's retention), which every transaction that scans
//!   `ducklake_snapshot` reads.
//!
//! Commits are numbered by the scan cache (see [`crate::scan_cache`]): the
//! commit that changes a value records the new value under its number
//! before it counts as ended. A transaction whose snapshot holds the commits
//! up to `seen` may use the kept value when the last change is among them;
//! otherwise it reads the key, and keeps what it read when its snapshot
//! holds the last change.

use std::sync::Mutex;

/// What a commit writes to a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ValueWrite {
    /// Nothing.
    None,
    /// This value.
    Value(u64),
    /// Something not kept here (a removal, or writes too many to keep).
    Unknown,
}

impl ValueWrite {
    /// What the commit did to the value, once it succeeded or failed.
    pub(crate) fn outcome(self, succeeded: bool) -> ValueChange {
        match (self, succeeded) {
            (ValueWrite::None, _) => ValueChange::Unchanged,
            (ValueWrite::Value(value), true) => ValueChange::Set(value),
            (ValueWrite::Value(_), false) | (ValueWrite::Unknown, _) => ValueChange::Unknown,
        }
    }
}

/// What a commit did to a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ValueChange {
    /// It did not write it.
    Unchanged,
    /// It set it to this value and succeeded.
    Set(u64),
    /// It wrote it but failed: whether the write landed is not known here.
    Unknown,
}

/// The last known value and the commit that set it.
#[derive(Default)]
pub(crate) struct KnownValue {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Number of the last commit that changed the value (or may have).
    changed_at: u64,
    /// The value since that commit, once known.
    value: Option<u64>,
}

impl KnownValue {
    /// The state, locked. After a panic while it was locked the value is
    /// forgotten (read from SlateDB again), never trusted.
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| {
            let mut state = poisoned.into_inner();
            state.value = None;
            self.state.clear_poison();
            state
        })
    }

    /// The value a snapshot holding the commits up to `seen` reads, if known.
    pub(crate) fn at(&self, seen: u64) -> Option<u64> {
        let state = self.state();
        (state.changed_at <= seen).then_some(state.value).flatten()
    }

    /// Keeps `value`, read by a snapshot holding the commits up to `seen`,
    /// if that snapshot holds the last change.
    pub(crate) fn keep(&self, seen: u64, value: u64) {
        let mut state = self.state();
        if state.changed_at <= seen {
            state.value = Some(value);
        }
    }

    /// Records commit `number`'s change; called before the commit counts as
    /// ended.
    pub(crate) fn committed(&self, number: u64, change: ValueChange) {
        let value = match change {
            ValueChange::Unchanged => return,
            ValueChange::Set(value) => Some(value),
            ValueChange::Unknown => None,
        };
        let mut state = self.state();
        state.changed_at = number;
        state.value = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_value_serves_snapshots_that_hold_its_last_change() {
        let known = KnownValue::default();
        assert_eq!(known.at(0), None, "nothing read yet");
        known.keep(0, 0);
        assert_eq!(known.at(0), Some(0));
        known.committed(1, ValueChange::Unchanged);
        assert_eq!(known.at(1), Some(0), "a commit without DDL changes nothing");

        known.committed(2, ValueChange::Set(1));
        assert_eq!(known.at(1), None, "a snapshot before the change reads it");
        assert_eq!(known.at(2), Some(1));
        known.keep(1, 0);
        assert_eq!(known.at(3), Some(1), "an older read does not replace it");

        known.committed(4, ValueChange::Unknown);
        assert_eq!(known.at(5), None, "after a failed change, read again");
        known.keep(5, 2);
        assert_eq!(known.at(5), Some(2));
    }

    #[test]
    fn a_failed_or_unkept_write_leaves_the_value_unknown() {
        assert_eq!(ValueWrite::None.outcome(false), ValueChange::Unchanged);
        assert_eq!(ValueWrite::Value(3).outcome(true), ValueChange::Set(3));
        assert_eq!(ValueWrite::Value(3).outcome(false), ValueChange::Unknown);
        assert_eq!(ValueWrite::Unknown.outcome(true), ValueChange::Unknown);
    }
}
