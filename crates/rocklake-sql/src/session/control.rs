//! Transaction control of a [`Session`]: `BEGIN`, `COMMIT`, savepoints,
//! `SET TRANSACTION`, `SET SESSION CHARACTERISTICS`, `DISCARD`.

use rocklake_types::output::{Notice, QueryOutput};
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{DiscardObject, Statement, TransactionMode};

use super::{aborted, no_transaction, Session, TxState};
use crate::session::transaction;

impl Session {
    /// Fails unless inside BEGIN ... COMMIT (as PostgreSQL does for `what`).
    pub(super) fn in_block(&self, what: &str) -> Result<(), SqlError> {
        match self.state {
            TxState::Block(_) => Ok(()),
            _ => Err(SqlError::new(
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                format!("{what} can only be used in transaction blocks"),
            )),
        }
    }

    /// `ROLLBACK TO SAVEPOINT name`: the transaction goes on from the
    /// savepoint, also after an error (see [`crate::session::savepoints`]).
    pub(super) fn rollback_to_savepoint(&mut self, name: &str) -> Result<QueryOutput, SqlError> {
        match std::mem::replace(&mut self.state, TxState::Idle) {
            TxState::Block(ctx) => {
                self.state = TxState::Block(ctx);
                let mark = self.savepoints.rollback_to(name)?;
                self.forget_notifications_after(mark);
            }
            TxState::Failed(Some(ctx)) => {
                self.state = TxState::Failed(Some(ctx));
                let mark = self.savepoints.rollback_to(name)?;
                self.forget_notifications_after(mark);
                if let TxState::Failed(Some(ctx)) =
                    std::mem::replace(&mut self.state, TxState::Idle)
                {
                    self.state = TxState::Block(ctx);
                }
            }
            TxState::Failed(None) => {
                self.state = TxState::Failed(None);
                return Err(SqlError::new(
                    SqlState::INVALID_SAVEPOINT_SPECIFICATION,
                    format!("savepoint \"{name}\" does not exist"),
                ));
            }
            other => {
                self.state = other;
                return Err(SqlError::new(
                    SqlState::NO_ACTIVE_SQL_TRANSACTION,
                    "ROLLBACK TO SAVEPOINT can only be used in transaction blocks",
                ));
            }
        }
        Ok(QueryOutput::command("ROLLBACK"))
    }

    /// `DISCARD ALL`: outside a transaction block, forgets the settings.
    pub(super) fn discard(
        &mut self,
        stmt: &Statement,
        object_type: &DiscardObject,
    ) -> Result<QueryOutput, SqlError> {
        if let TxState::Block(_) = self.state {
            return Err(SqlError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                "DISCARD ALL cannot run inside a transaction block",
            ));
        }
        if !matches!(object_type, DiscardObject::ALL) {
            return Err(SqlError::unsupported(format!("{stmt} is not supported")));
        }
        self.settings.reset_all();
        Ok(QueryOutput::command("DISCARD ALL"))
    }

    /// `SET SESSION CHARACTERISTICS AS TRANSACTION modes`: the defaults of
    /// the transactions that begin later.
    pub(super) fn set_session_characteristics(
        &mut self,
        modes: &[TransactionMode],
    ) -> Result<QueryOutput, SqlError> {
        let mode = self.default_mode().with_modes(modes)?;
        self.settings
            .set("default_transaction_isolation", mode.isolation)?;
        self.settings.set(
            "default_transaction_read_only",
            rocklake_types::settings::on_off(mode.read_only),
        )?;
        Ok(QueryOutput::command("SET"))
    }

    /// `SET TRANSACTION modes` (`warn`: PostgreSQL's warning outside a
    /// transaction block), also `SET transaction_isolation = ...`: changes
    /// the current transaction (see [`crate::session::transaction::TxnMode::set`]).
    /// A read-only transaction made read-write has run nothing yet, so its
    /// first statement begins its storage transaction again, able to write
    /// (see `Session::take_snapshot`).
    pub(super) fn set_transaction(
        &mut self,
        modes: &[TransactionMode],
        warn: bool,
    ) -> Result<QueryOutput, SqlError> {
        let in_block = matches!(self.state, TxState::Block(_));
        let Some(ctx) = self.ctx_mut() else {
            self.default_mode().with_modes(modes)?;
            return Ok(set_output(warn));
        };
        let queried = ctx.queried;
        ctx.mode.set(modes, queried)?;
        Ok(set_output(warn && !in_block))
    }

    pub(super) async fn begin(
        &mut self,
        modes: &[TransactionMode],
    ) -> Result<QueryOutput, SqlError> {
        let mode = self.default_mode().with_modes(modes)?;
        match std::mem::replace(&mut self.state, TxState::Idle) {
            TxState::Idle => {
                self.state = TxState::Block(self.begin_ctx(mode).await?);
                self.settings.begin_block();
                Ok(QueryOutput::command("BEGIN"))
            }
            TxState::Implicit(mut ctx) => {
                self.settings.begin_block();
                // BEGIN inside a query string: its modes apply to the
                // transaction the string already runs in.
                let queried = ctx.queried;
                let outcome = ctx.mode.set(modes, queried);
                self.state = TxState::Block(ctx);
                outcome?;
                Ok(QueryOutput::command("BEGIN"))
            }
            TxState::Block(ctx) => {
                self.state = TxState::Block(ctx);
                Ok(QueryOutput::Command {
                    tag: "BEGIN".into(),
                    notices: vec![Notice {
                        code: SqlState::ACTIVE_SQL_TRANSACTION,
                        message: "there is already a transaction in progress".into(),
                    }],
                })
            }
            TxState::Failed(ctx) => {
                self.state = TxState::Failed(ctx);
                Err(aborted())
            }
        }
    }

    pub(super) async fn commit(&mut self) -> Result<QueryOutput, SqlError> {
        self.savepoints.clear();
        match std::mem::replace(&mut self.state, TxState::Idle) {
            TxState::Idle => Ok(no_transaction("COMMIT")),
            TxState::Failed(_) => {
                self.transaction_ended(false);
                Ok(QueryOutput::command("ROLLBACK"))
            }
            TxState::Block(ctx) | TxState::Implicit(ctx) => {
                if let Err(error) = self.notifications_fit() {
                    drop(ctx);
                    self.transaction_ended(false);
                    return Err(error);
                }
                let committed = ctx.txn.commit().await;
                self.transaction_ended(committed.is_ok());
                committed?;
                Ok(QueryOutput::command("COMMIT"))
            }
        }
    }
}

/// `SET`, with PostgreSQL's warning for a `SET TRANSACTION` outside a
/// transaction block when `warn`.
fn set_output(warn: bool) -> QueryOutput {
    QueryOutput::Command {
        tag: "SET".into(),
        notices: if warn {
            vec![transaction::outside_block_warning()]
        } else {
            Vec::new()
        },
    }
}
