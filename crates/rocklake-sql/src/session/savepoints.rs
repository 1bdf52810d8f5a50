//! `SAVEPOINT`, `RELEASE [SAVEPOINT]` and `ROLLBACK TO [SAVEPOINT]` inside a
//! transaction block.
//!
//! Storage transactions cannot undo part of their writes, so a rollback to a
//! savepoint is possible when nothing was changed since the savepoint: then
//! the transaction goes on from there, also after an error (a statement that
//! failed changed nothing), which is how drivers use savepoints around reads
//! (psycopg's type lookups, SQLAlchemy's nested transactions around probes).
//! A rollback over changes fails with `0A000` and leaves the transaction
//! aborted, never half undone.

use rocklake_types::{SqlError, SqlState};

/// The savepoints of the current transaction block, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Savepoints {
    stack: Vec<Savepoint>,
}

#[derive(Debug)]
struct Savepoint {
    name: String,
    /// Whether a statement that may change data ran since it was set.
    changed: bool,
    /// How many NOTIFYs and LISTEN changes the transaction had queued then.
    notifications: NotifyMark,
}

/// The number of NOTIFYs and of LISTEN/UNLISTEN changes a transaction had
/// queued at a savepoint (a rollback to it forgets the later ones, as in
/// PostgreSQL).
pub(crate) type NotifyMark = (usize, usize);

fn no_such(name: &str) -> SqlError {
    SqlError::new(
        SqlState::INVALID_SAVEPOINT_SPECIFICATION,
        format!("savepoint \"{name}\" does not exist"),
    )
}

impl Savepoints {
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// Forgets them all (the transaction ended).
    pub fn clear(&mut self) {
        self.stack.clear();
    }

    /// `SAVEPOINT name` (a name may be reused: the newest one counts),
    /// with what the transaction had queued to notify.
    pub fn set(&mut self, name: String, notifications: NotifyMark) {
        self.stack.push(Savepoint {
            name,
            changed: false,
            notifications,
        });
    }

    /// Notes a statement that may change data.
    pub fn note_change(&mut self) {
        for savepoint in &mut self.stack {
            savepoint.changed = true;
        }
    }

    fn position(&self, name: &str) -> Result<usize, SqlError> {
        self.stack
            .iter()
            .rposition(|s| s.name == name)
            .ok_or_else(|| no_such(name))
    }

    /// `RELEASE name`: forgets it and every later one; their changes stay.
    pub fn release(&mut self, name: &str) -> Result<(), SqlError> {
        let at = self.position(name)?;
        let changed = self.stack[at..].iter().any(|s| s.changed);
        self.stack.truncate(at);
        if changed {
            self.note_change();
        }
        Ok(())
    }

    /// `ROLLBACK TO name`: keeps it, forgets every later one; fails when
    /// something changed since it was set. Returns what was queued to
    /// notify when it was set.
    pub fn rollback_to(&mut self, name: &str) -> Result<NotifyMark, SqlError> {
        let at = self.position(name)?;
        if self.stack[at].changed {
            return Err(SqlError::unsupported(format!(
                "ROLLBACK TO SAVEPOINT {name} after changes made since the savepoint is not supported by RockLake; roll back the whole transaction"
            )));
        }
        self.stack.truncate(at + 1);
        Ok(self.stack[at].notifications)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollback_to_a_savepoint_without_changes_since_keeps_it() {
        let mut savepoints = Savepoints::default();
        savepoints.set("a".into(), (0, 0));
        savepoints.set("b".into(), (2, 1));
        assert_eq!(savepoints.rollback_to("a").unwrap(), (0, 0));
        assert_eq!(
            savepoints.release("b").unwrap_err().code,
            SqlState::INVALID_SAVEPOINT_SPECIFICATION
        );
        savepoints.note_change();
        savepoints.set("c".into(), (0, 0));
        assert!(savepoints.rollback_to("c").is_ok());
        assert_eq!(
            savepoints.rollback_to("a").unwrap_err().code,
            SqlState::FEATURE_NOT_SUPPORTED
        );
        savepoints.release("a").unwrap();
        assert!(savepoints.is_empty());
    }
}
