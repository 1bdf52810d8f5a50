//! Row locks of a query: `SELECT ... FOR UPDATE | FOR SHARE [OF t, ...]
//! [NOWAIT | SKIP LOCKED]` on the statement's top-level SELECT.
//!
//! The binder checks the clauses as PostgreSQL's parse analysis does (its
//! SQLSTATEs and messages), picks the stored tables whose rows are locked
//! (every FROM table, or those named in `OF`; rows of virtual catalog tables
//! are not locked), and appends each one's hidden `ctid` to the projection
//! (after the visible columns and hidden sort keys), so that the rows a
//! query returns tell which stored rows to lock (see [`crate::query::locking`]).

use sqlparser::ast::{LockClause, LockType, NonBlock, Query, SetExpr};

use super::{name_parts, Binder, EntryKind};
use crate::plan::{BExpr, FromPlan, JoinKind, ScanSource, SelectPlan};
use crate::storage::{LockStrength, LockWait, RelationDef};
use rocklake_types::{SqlError, SqlState};

/// One locking clause of a query, as written.
#[derive(Debug, Clone)]
pub struct Clause {
    strength: LockStrength,
    wait: LockWait,
    /// The names after `OF` (all FROM tables when `None`).
    of: Option<Vec<String>>,
}

/// One stored table whose returned rows are locked.
#[derive(Debug, Clone)]
pub struct LockTarget {
    /// The table.
    pub relation: RelationDef,
    /// The column of the query's body rows holding the row's `ctid`.
    pub column: usize,
    /// The strongest strength asked for it.
    pub strength: LockStrength,
    /// What to do when another transaction holds a row.
    pub wait: LockWait,
}

/// The row locks of a query.
#[derive(Debug, Clone)]
pub struct LockPlan {
    /// The first clause's strength (PostgreSQL names the statement by it).
    pub strength: LockStrength,
    /// Whether the clauses cover any table (stored or catalog): a read-only
    /// transaction refuses the statement then.
    pub any_table: bool,
    /// The stored tables locked.
    pub targets: Vec<LockTarget>,
}

impl LockPlan {
    /// Whether some table skips rows held by others (`SKIP LOCKED`).
    pub fn skips_locked(&self) -> bool {
        self.targets.iter().any(|t| t.wait == LockWait::SkipLocked)
    }
}

fn not_supported(message: String) -> SqlError {
    SqlError::unsupported(message)
}

fn clause(lock: &LockClause) -> Result<Clause, SqlError> {
    let strength = match lock.lock_type {
        LockType::Update => LockStrength::Update,
        LockType::Share => LockStrength::Share,
    };
    let wait = match lock.nonblock {
        None => LockWait::Wait,
        Some(NonBlock::Nowait) => LockWait::Nowait,
        Some(NonBlock::SkipLocked) => LockWait::SkipLocked,
    };
    let of = match &lock.of {
        None => None,
        Some(name) => {
            let parts = name_parts(name)?;
            if parts.len() != 1 {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    format!(
                        "{} must specify unqualified relation names",
                        strength.clause()
                    ),
                ));
            }
            Some(parts)
        }
    };
    Ok(Clause { strength, wait, of })
}

/// PostgreSQL's `CheckSelectLocking`: what a locking SELECT may not have.
fn check_select(plan: &SelectPlan, strength: LockStrength) -> Result<(), SqlError> {
    let refused = if plan.distinct || plan.distinct_on.is_some() {
        Some("DISTINCT clause")
    } else if plan.agg.as_ref().is_some_and(|a| !a.group.is_empty()) {
        Some("GROUP BY clause")
    } else if plan.having.is_some() {
        Some("HAVING clause")
    } else if plan.agg.is_some() {
        Some("aggregate functions")
    } else if !plan.windows.is_empty() {
        Some("window functions")
    } else if !plan.set_calls.is_empty() {
        Some("set-returning functions in the target list")
    } else {
        None
    };
    match refused {
        Some(what) => Err(not_supported(format!(
            "{} is not allowed with {what}",
            strength.clause()
        ))),
        None => Ok(()),
    }
}

/// The scans on the nullable side of an outer join (the right input of a
/// left join, the left of a right join, both of a full join).
fn nullable_scans(from: &FromPlan, nullable: bool, out: &mut Vec<usize>) {
    match from {
        FromPlan::Scan(id) if nullable => out.push(*id),
        FromPlan::Join {
            left, right, kind, ..
        } => {
            let (left_nullable, right_nullable) = match kind {
                JoinKind::Inner => (false, false),
                JoinKind::Left => (false, true),
                JoinKind::Right => (true, false),
                JoinKind::Full => (true, true),
            };
            nullable_scans(left, nullable || left_nullable, out);
            nullable_scans(right, nullable || right_nullable, out);
        }
        _ => {}
    }
}

/// Adds a table to the locked ones, or strengthens its lock: the strongest
/// strength wins, NOWAIT over SKIP LOCKED over waiting (as in PostgreSQL).
fn merge(wanted: &mut Vec<(usize, LockStrength, LockWait)>, entry: usize, c: &Clause) {
    let rank = |w: LockWait| match w {
        LockWait::Wait => 0,
        LockWait::SkipLocked => 1,
        LockWait::Nowait => 2,
    };
    match wanted.iter_mut().find(|(e, _, _)| *e == entry) {
        Some((_, strength, wait)) => {
            *strength = (*strength).max(c.strength);
            if rank(c.wait) > rank(*wait) {
                *wait = c.wait;
            }
        }
        None => wanted.push((entry, c.strength, c.wait)),
    }
}

impl Binder<'_> {
    /// The locking clauses of `q`, checked before its body is bound;
    /// `None` without any. `may_lock`: `q` is the statement's top-level
    /// query (locks in subqueries and WITH queries are not supported).
    pub(super) fn lock_clauses(
        &self,
        q: &Query,
        may_lock: bool,
    ) -> Result<Option<Vec<Clause>>, SqlError> {
        if q.locks.is_empty() {
            return Ok(None);
        }
        let clauses = q.locks.iter().map(clause).collect::<Result<Vec<_>, _>>()?;
        let first = clauses[0].strength.clause();
        if !may_lock {
            return Err(not_supported(format!(
                "{first} in a subquery, a WITH query or a DML statement is not supported"
            )));
        }
        match q.body.as_ref() {
            SetExpr::Select(_) => Ok(Some(clauses)),
            SetExpr::SetOperation { .. } => Err(not_supported(format!(
                "{first} is not allowed with UNION/INTERSECT/EXCEPT"
            ))),
            SetExpr::Values(_) => Err(not_supported(format!(
                "{first} cannot be applied to VALUES"
            ))),
            other => Err(not_supported(format!(
                "{first} on {other} is not supported"
            ))),
        }
    }

    /// Plans the locks of a bound SELECT (its FROM scope still current):
    /// checks it, then appends the `ctid` of each locked table to its
    /// projection and keeps the plan in [`Binder::locking`].
    pub(super) fn lock_select(
        &mut self,
        clauses: Vec<Clause>,
        plan: &mut SelectPlan,
    ) -> Result<(), SqlError> {
        let first = clauses[0].strength;
        check_select(plan, first)?;
        let entries = self.scope().entries.clone();
        let mut wanted = Vec::new();
        let mut any_table = false;
        for c in &clauses {
            let covered: Vec<usize> = match &c.of {
                None => (0..entries.len()).collect(),
                Some(names) => {
                    let name = &names[0];
                    let found = entries.iter().position(|e| e.alias == *name);
                    let Some(found) = found else {
                        return Err(SqlError::new(
                            SqlState::UNDEFINED_TABLE,
                            format!(
                                "relation \"{name}\" in {} clause not found in FROM clause",
                                c.strength.clause()
                            ),
                        ));
                    };
                    let refused = match entries[found].kind {
                        EntryKind::Cte => Some("a WITH query"),
                        EntryKind::Function => Some("a function"),
                        _ => None,
                    };
                    if let Some(what) = refused {
                        return Err(not_supported(format!(
                            "{} cannot be applied to {what}",
                            c.strength.clause()
                        )));
                    }
                    vec![found]
                }
            };
            for index in covered {
                match entries[index].kind {
                    EntryKind::Stored => merge(&mut wanted, index, c),
                    EntryKind::Virtual => {}
                    EntryKind::Subquery => {
                        return Err(not_supported(format!(
                            "{} of a subquery in FROM is not supported",
                            c.strength.clause()
                        )))
                    }
                    EntryKind::Cte | EntryKind::Function => continue,
                }
                any_table = true;
            }
        }
        let mut nullable = Vec::new();
        nullable_scans(&plan.from, false, &mut nullable);
        let mut targets = Vec::new();
        for (index, strength, wait) in wanted {
            let Some((column, scan)) = entries[index].ctid else {
                return Err(SqlError::internal("a stored table without its ctid"));
            };
            if nullable.contains(&scan) {
                return Err(not_supported(format!(
                    "{} cannot be applied to the nullable side of an outer join",
                    strength.clause()
                )));
            }
            let relation = match &self.scans[scan].source {
                ScanSource::Table(def) => def.clone(),
                _ => return Err(SqlError::internal("a locked scan that is not a table")),
            };
            self.scans[scan].reads_ctid = true;
            targets.push(LockTarget {
                relation,
                column: plan.projection.len(),
                strength,
                wait,
            });
            plan.projection.push(BExpr::Col { up: 0, idx: column });
        }
        self.locking = Some(LockPlan {
            strength: first,
            any_table,
            targets,
        });
        Ok(())
    }
}
