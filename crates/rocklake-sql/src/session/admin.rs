//! The statements of a [`Session`] that administer the server rather than
//! a database's data: databases (`CREATE`/`DROP`/`ALTER DATABASE`), roles
//! (`CREATE`/`ALTER`/`DROP ROLE`, `GRANT`/`REVOKE` of roles) and who the
//! session is (`SET ROLE`, `SET SESSION AUTHORIZATION`).
//!
//! They act on the server's databases and roles, which are not part of
//! any database's transactions, so they run outside transaction blocks
//! (PostgreSQL lets role statements run inside one and undoes them on
//! rollback; here a block gets 25001 rather than a change that a rollback
//! would not undo). `SET ROLE` is session state and runs anywhere.

use std::sync::Arc;

use rocklake_types::output::{QueryOutput, ResultSink};
use rocklake_types::{SinkError, SqlError};
use sqlparser::ast::{
    ContextModifier, ObjectType, Reset, ResetStatement, Set, SetSessionAuthorizationParamKind,
    Statement,
};

use super::{aborted, Session, TxState};
use crate::databases::{self, DatabaseContext, ParsedDatabaseStatement};
use crate::ident::fold;
use crate::roles::{self, RoleView};
use rocklake_types::settings::on_off;

impl Session {
    /// What statements see of roles now (kept while neither the roles nor
    /// the session's identity changed).
    pub(super) fn role_view(&mut self) -> Arc<RoleView> {
        let catalog = self.roles.current();
        if let Some(view) = &self.role_view {
            if Arc::ptr_eq(&view.catalog, &catalog) && view.identity == self.identity {
                return view.clone();
            }
        }
        let view = Arc::new(RoleView {
            catalog,
            identity: self.identity.clone(),
            enforced: self.roles.enforced(),
        });
        self.role_view = Some(view.clone());
        view
    }

    /// Tells the client (ParameterStatus) whether it acts as a superuser
    /// and who its session user is, after either changed.
    pub(super) fn report_superuser(&mut self) {
        let catalog = self.roles.current();
        let superuser = self.identity.is_superuser(&catalog, self.roles.enforced());
        for (name, value) in [
            ("is_superuser", on_off(superuser)),
            ("session_authorization", self.identity.session().to_string()),
            ("role", self.identity.role_setting().to_string()),
        ] {
            if let Err(error) = self.settings.set_default(name, &value) {
                tracing::warn!(name, %error, "an identity setting was refused");
            }
        }
    }

    /// Fails unless a statement that changes the server may run now:
    /// outside a transaction block, in a session whose transactions are
    /// not read-only by default.
    fn check_administrable(&self, command: &str) -> Result<(), SqlError> {
        match self.state {
            TxState::Failed(_) => return Err(aborted()),
            TxState::Idle => {}
            _ => return Err(databases::outside_block(command)),
        }
        if self.default_mode().read_only {
            return Err(SqlError::read_only(command));
        }
        Ok(())
    }

    /// Runs a database statement (a whole query string).
    pub(super) async fn run_database_statement(
        &mut self,
        parsed: &ParsedDatabaseStatement,
        sink: &mut dyn ResultSink,
    ) -> Result<(), SinkError> {
        for notice in &parsed.notices {
            sink.notice(notice).await?;
        }
        let command = match &parsed.statement {
            databases::DatabaseStatement::Create { .. } => "CREATE DATABASE",
            databases::DatabaseStatement::Drop(_) => "DROP DATABASE",
            databases::DatabaseStatement::AlterOwner { .. } => "ALTER DATABASE",
        };
        let outcome = match (self.check_administrable(command), &self.databases) {
            (Err(error), _) => Err(error),
            (Ok(()), None) => Err(SqlError::unsupported(format!(
                "{command}: this server has one database"
            ))),
            (Ok(()), Some(dbs)) => {
                let context = DatabaseContext {
                    databases: dbs.as_ref(),
                    roles: self.roles.as_ref(),
                    identity: &self.identity,
                    current: &self.database,
                };
                context.run(&parsed.statement).await
            }
        };
        match outcome {
            Ok(output) => rocklake_types::output::send_results(vec![Ok(output)], sink).await,
            Err(error) => {
                self.on_error();
                sink.error(&error).await
            }
        }
    }

    /// Runs `stmt` when it is a role statement; `None` for any other.
    pub(super) async fn run_role_statement(
        &mut self,
        stmt: &Statement,
    ) -> Option<Result<QueryOutput, SqlError>> {
        let command = match stmt {
            Statement::CreateRole(_) => "CREATE ROLE",
            Statement::AlterRole { .. } => "ALTER ROLE",
            Statement::Drop {
                object_type: ObjectType::Role,
                ..
            } => "DROP ROLE",
            Statement::GrantRole(_) => "GRANT",
            Statement::RevokeRole(_) => "REVOKE",
            Statement::Set(Set::SetRole { .. } | Set::SetSessionAuthorization(_)) => {
                return Some(self.set_identity_statement(stmt))
            }
            Statement::Reset(ResetStatement {
                reset: Reset::SessionAuthorization,
            }) => return Some(self.set_identity_statement(stmt)),
            Statement::Reset(ResetStatement {
                reset: Reset::ConfigurationParameter(name),
            }) if name.to_string().eq_ignore_ascii_case("role") => {
                return Some(self.set_identity_statement(stmt))
            }
            _ => return None,
        };
        if let Err(error) = self.check_administrable(command) {
            return Some(Err(error));
        }
        let roles = self.roles.clone();
        let me = &self.identity;
        let outcome = match stmt {
            Statement::CreateRole(create) => roles::create_role(roles.as_ref(), me, create).await,
            Statement::AlterRole { name, operation } => {
                roles::alter_role(roles.as_ref(), me, name, operation).await
            }
            Statement::Drop {
                names, if_exists, ..
            } => roles::drop_roles(roles.as_ref(), me, names, *if_exists).await,
            Statement::GrantRole(grant) => roles::grant_roles(roles.as_ref(), me, grant).await,
            Statement::RevokeRole(revoke) => roles::revoke_roles(roles.as_ref(), me, revoke).await,
            _ => return None,
        };
        // The session's own attributes may have changed.
        self.report_superuser();
        Some(outcome)
    }

    /// `SET ROLE`, `RESET ROLE`, `SET SESSION AUTHORIZATION`, `RESET
    /// SESSION AUTHORIZATION`.
    fn set_identity_statement(&mut self, stmt: &Statement) -> Result<QueryOutput, SqlError> {
        let catalog = self.roles.current();
        let enforced = self.roles.enforced();
        let (tag, outcome) = match stmt {
            Statement::Set(Set::SetRole {
                context_modifier,
                role_name,
            }) => {
                if matches!(context_modifier, Some(ContextModifier::Local)) {
                    return Err(SqlError::unsupported(
                        "SET LOCAL ROLE: RockLake's SET ROLE lasts for the session",
                    ));
                }
                let name = role_name.as_ref().map(fold);
                (
                    "SET",
                    self.identity.set_role(&catalog, enforced, name.as_deref()),
                )
            }
            Statement::Set(Set::SetSessionAuthorization(param)) => {
                let name = match &param.kind {
                    SetSessionAuthorizationParamKind::Default => None,
                    SetSessionAuthorizationParamKind::User(id) => Some(fold(id)),
                };
                (
                    "SET",
                    self.identity
                        .set_session_authorization(&catalog, enforced, name.as_deref()),
                )
            }
            Statement::Reset(ResetStatement {
                reset: Reset::SessionAuthorization,
            }) => (
                "RESET",
                self.identity
                    .set_session_authorization(&catalog, enforced, None),
            ),
            _ => ("RESET", self.identity.set_role(&catalog, enforced, None)),
        };
        outcome?;
        self.report_superuser();
        Ok(QueryOutput::command(tag))
    }
}
