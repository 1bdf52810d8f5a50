//! `INSERT ... ON CONFLICT`: the arbiter is the primary key (the only unique
//! constraint RockLake tables have). A row whose key is already taken is
//! skipped (`DO NOTHING`) or turns into an update of the row holding the key
//! (`DO UPDATE SET ... [WHERE ...]`, over the row and `excluded`), as in
//! PostgreSQL. A key taken by a transaction committing concurrently is found
//! at commit: the losing transaction fails with 23505 rather than waiting.

use std::collections::HashSet;

use rocklake_types::datum::{Datum, Row};
use rocklake_types::rows::RowId;
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{AssignmentTarget, ConflictTarget, OnConflict, OnConflictAction};

use super::returning::RowExpressions;
use super::{check_not_null, name_parts};
use crate::exec::cast::assign;
use crate::exec::scan_data::ScanData;
use crate::exec::StmtEnv;
use crate::storage::{RelationDef, StorageTxn};
use rocklake_types::value::equality::row_key;

/// What a conflicting row turns into.
enum Action {
    Nothing,
    /// The columns set, then the values and the WHERE condition (last, if
    /// any) over `existing ++ excluded`.
    Update {
        columns: Vec<usize>,
        values: RowExpressions,
        has_condition: bool,
    },
}

/// A bound ON CONFLICT clause.
pub(crate) struct Conflicts<'a> {
    def: &'a RelationDef,
    action: Action,
}

/// What inserting a statement's rows under ON CONFLICT did: the rows
/// inserted and updated, in statement order, as RETURNING sees them.
pub(crate) struct Applied {
    /// Inserted and updated rows (their new values).
    pub changed: Vec<Row>,
}

impl<'a> Conflicts<'a> {
    /// Binds `on` for inserts into `def` (named `alias` in the statement).
    pub(crate) fn bind(
        env: &StmtEnv<'_>,
        def: &'a RelationDef,
        alias: &str,
        on: &OnConflict,
    ) -> Result<Conflicts<'a>, SqlError> {
        check_arbiter(def, on)?;
        let action = match &on.action {
            OnConflictAction::DoNothing => Action::Nothing,
            OnConflictAction::DoUpdate(update) => {
                let mut columns = Vec::with_capacity(update.assignments.len());
                let mut items = Vec::with_capacity(update.assignments.len() + 1);
                for assignment in &update.assignments {
                    let AssignmentTarget::ColumnName(column) = &assignment.target else {
                        return Err(SqlError::unsupported(format!(
                            "unsupported assignment target: {}",
                            assignment.target
                        )));
                    };
                    let name = name_parts(column)?.pop().unwrap_or_default();
                    let index = def.column_index(&name).ok_or_else(|| {
                        SqlError::new(
                            SqlState::UNDEFINED_COLUMN,
                            format!(
                                "column \"{name}\" of relation \"{}\" does not exist",
                                def.name
                            ),
                        )
                    })?;
                    columns.push(index);
                    items.push(assignment.value.to_string());
                }
                if let Some(condition) = &update.selection {
                    items.push(format!("({condition})::boolean"));
                }
                let values = RowExpressions::bind(
                    env.cat,
                    env.now,
                    env.pid,
                    &[(def, alias), (def, "excluded")],
                    &items,
                )?;
                Action::Update {
                    columns,
                    values,
                    has_condition: update.selection.is_some(),
                }
            }
        };
        Ok(Conflicts { def, action })
    }

    /// Inserts `rows`, each unless its key is taken; a taken key skips the
    /// row or updates the row holding it.
    pub(crate) async fn apply(
        &self,
        txn: &mut dyn StorageTxn,
        env: &StmtEnv<'_>,
        rows: Vec<Row>,
    ) -> Result<Applied, SqlError> {
        // What DO UPDATE's subqueries read, read once for the statement.
        let data = match &self.action {
            Action::Update { values, .. } => values.prefetch(txn, env).await?,
            Action::Nothing => Vec::new(),
        };
        let mut proposed: HashSet<String> = HashSet::new();
        let mut inserts = Vec::new();
        let mut changed = Vec::new();
        for row in rows {
            if self.def.primary_key.is_empty() {
                changed.push(row.clone());
                inserts.push(row);
                continue;
            }
            let key = super::keys::key_of(self.def, &row);
            let first_time = proposed.insert(row_key(&key));
            if !first_time {
                match self.action {
                    Action::Nothing => continue,
                    Action::Update { .. } => return Err(second_time()),
                }
            }
            match super::keys::row_with_key(txn, self.def, &key).await? {
                None => {
                    changed.push(row.clone());
                    inserts.push(row);
                }
                Some(_) if matches!(self.action, Action::Nothing) => {}
                Some((id, existing)) => {
                    let update = self.update(txn, env, &data, id, existing, row);
                    if let Some(updated) = update.await? {
                        changed.push(updated);
                    }
                }
            }
        }
        if !inserts.is_empty() {
            env.limits
                .unless_stopped(txn.insert(self.def, inserts))
                .await?;
        }
        Ok(Applied { changed })
    }

    /// `DO UPDATE` of the row `id` (now `existing`) for the proposed row
    /// `excluded`; the new row, or `None` when the WHERE condition does not
    /// hold.
    async fn update(
        &self,
        txn: &mut dyn StorageTxn,
        env: &StmtEnv<'_>,
        data: &[ScanData],
        id: RowId,
        existing: Row,
        excluded: Row,
    ) -> Result<Option<Row>, SqlError> {
        let Action::Update {
            columns,
            values,
            has_condition,
        } = &self.action
        else {
            return Ok(None);
        };
        let mut both = existing.clone();
        both.extend(excluded);
        let mut computed = values
            .evaluate_over(data, env, std::slice::from_ref(&both))?
            .pop()
            .unwrap_or_default();
        if *has_condition && !matches!(computed.pop(), Some(Datum::Bool(true))) {
            return Ok(None);
        }
        let mut new_row = existing;
        for (&column, value) in columns.iter().zip(computed) {
            new_row[column] = assign(value, &self.def.columns[column].pg_type)?;
        }
        check_not_null(self.def, &new_row)?;
        env.limits
            .unless_stopped(txn.update(self.def, id, new_row.clone()))
            .await?;
        Ok(Some(new_row))
    }
}

fn second_time() -> SqlError {
    SqlError::new(
        SqlState::CARDINALITY_VIOLATION,
        "ON CONFLICT DO UPDATE command cannot affect row a second time",
    )
    .with_hint(
        "Ensure that no rows proposed for insertion within the same command have duplicate constrained values.",
    )
}

/// The conflict target must name the primary key (its columns in any
/// order, or its constraint); `DO UPDATE` needs one.
fn check_arbiter(def: &RelationDef, on: &OnConflict) -> Result<(), SqlError> {
    let no_match = || {
        SqlError::new(
            SqlState::INVALID_COLUMN_REFERENCE,
            "there is no unique or exclusion constraint matching the ON CONFLICT specification",
        )
    };
    match &on.conflict_target {
        None if matches!(on.action, OnConflictAction::DoUpdate(_)) => Err(SqlError::new(
            SqlState::SYNTAX_ERROR,
            "ON CONFLICT DO UPDATE requires inference specification or constraint name",
        )
        .with_hint("For example, ON CONFLICT (column_name).")),
        None => Ok(()),
        Some(ConflictTarget::Columns {
            predicate: Some(_), ..
        }) => Err(SqlError::unsupported(
            "ON CONFLICT (...) WHERE (partial unique indexes) is not supported",
        )),
        Some(ConflictTarget::Columns { columns, .. }) => {
            let mut named: Vec<usize> = Vec::with_capacity(columns.len());
            for column in columns {
                let name = crate::ident::fold(column);
                let index = def.column_index(&name).ok_or_else(|| {
                    SqlError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{name}\" does not exist"),
                    )
                })?;
                named.push(index);
            }
            named.sort_unstable();
            named.dedup();
            let mut key = def.primary_key.clone();
            key.sort_unstable();
            if key.is_empty() || named != key {
                return Err(no_match());
            }
            Ok(())
        }
        Some(ConflictTarget::OnConstraint(name)) => {
            let name = name_parts(name)?.pop().unwrap_or_default();
            if def.primary_key.is_empty() || name != def.primary_key_name() {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!(
                        "constraint \"{name}\" for table \"{}\" does not exist",
                        def.name
                    ),
                ));
            }
            Ok(())
        }
    }
}
