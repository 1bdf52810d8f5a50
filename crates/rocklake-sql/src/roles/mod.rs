//! Roles and privileges, as far as a catalog server needs PostgreSQL's
//! model: who a session is (`session_user`, `current_user` after `SET
//! ROLE`), role attributes (`SUPERUSER`, `CREATEDB`, `CREATEROLE`, `LOGIN`,
//! `INHERIT`), memberships (`GRANT role TO role`), session defaults per role
//! (`ALTER ROLE ... SET`), and database owners. The rules are PostgreSQL
//! 15's, with its messages and SQLSTATEs:
//!
//! - `CREATE DATABASE` needs `CREATEDB` (or superuser), `DROP DATABASE`
//!   and `ALTER DATABASE ... OWNER TO` ownership (membership in the owner
//!   role counts);
//! - roles are created, altered and dropped by superusers, or by `CREATEROLE`
//!   roles for roles that are not superusers;
//! - `SET ROLE` only to a role the session user is a member of;
//! - `pg_authid` is for superusers.
//!
//! Within a database every role that may connect reads and writes every
//! schema and table (as if granted `ALL`): object privileges (`GRANT SELECT
//! ON ...`) are not modelled. A role made read-only by default
//! (`ALTER ROLE r SET default_transaction_read_only = on`) gets read-only
//! transactions, as in PostgreSQL (where it may `SET` it back: it is a
//! default, not a privilege).
//!
//! A server without authentication has one user, a superuser, whatever
//! name each session gives ([`Roles::enforced`] is false): every check
//! passes, as it did before roles existed; role settings still apply.

mod ddl;
mod identity;
mod privileges;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rocklake_types::output::Notice;
use rocklake_types::roles::RoleCatalog;
use rocklake_types::{SqlError, SqlState};

pub(crate) use ddl::{alter_role, create_role, drop_roles, grant_roles, revoke_roles};
pub use identity::SessionRoles;
pub(crate) use privileges::{Signal, Who};

/// A change of the stored roles: applied to the latest catalog, whose
/// changed copy is stored only when it succeeds; returns its notices.
pub type RoleChange<'a> =
    dyn Fn(&mut RoleCatalog) -> Result<Vec<Notice>, SqlError> + Send + Sync + 'a;

/// Where a server keeps its roles.
#[async_trait]
pub trait Roles: Send + Sync {
    /// The roles as they are now.
    fn current(&self) -> Arc<RoleCatalog>;

    /// Whether clients authenticate: only then are privileges checked.
    fn enforced(&self) -> bool;

    /// Applies `change` to the latest stored roles and stores the result,
    /// all or nothing; 25006 on a server that cannot write.
    async fn update(&self, change: &RoleChange<'_>) -> Result<Vec<Notice>, SqlError>;

    /// The verifier to keep for `password` (`CREATE ROLE ... PASSWORD`).
    fn password_verifier(&self, password: &str) -> Result<String, SqlError>;
}

/// Roles kept in memory: a server of one storage and no authentication
/// (tests, tools). Passwords are refused: nobody authenticates.
#[derive(Default)]
pub struct MemoryRoles {
    catalog: Mutex<Arc<RoleCatalog>>,
}

#[async_trait]
impl Roles for MemoryRoles {
    fn current(&self) -> Arc<RoleCatalog> {
        self.catalog
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn enforced(&self) -> bool {
        false
    }

    async fn update(&self, change: &RoleChange<'_>) -> Result<Vec<Notice>, SqlError> {
        let mut catalog = self.catalog.lock().unwrap_or_else(|e| e.into_inner());
        let mut changed = RoleCatalog::clone(&catalog);
        let notices = change(&mut changed)?;
        *catalog = Arc::new(changed);
        Ok(notices)
    }

    fn password_verifier(&self, _password: &str) -> Result<String, SqlError> {
        Err(SqlError::unsupported(
            "passwords of roles need a server with password authentication (rocklake serve --password-file)",
        ))
    }
}

/// What a transaction's statements see of roles: the roles as they were
/// when its catalog was loaded, and who the session is.
#[derive(Debug, Clone)]
pub struct RoleView {
    /// The roles.
    pub catalog: Arc<RoleCatalog>,
    /// Who the session is.
    pub identity: SessionRoles,
    /// Whether privileges are checked.
    pub enforced: bool,
}

impl Default for RoleView {
    fn default() -> Self {
        RoleView {
            catalog: Arc::default(),
            identity: SessionRoles::new(rocklake_types::roles::BOOTSTRAP_ROLE),
            enforced: false,
        }
    }
}

impl RoleView {
    /// The checks of the session over these roles.
    pub(crate) fn who(&self) -> Who<'_> {
        self.identity.who(&self.catalog, self.enforced)
    }
}

/// PostgreSQL's error for a missing role.
pub(crate) fn no_such_role(name: &str) -> SqlError {
    SqlError::new(
        SqlState::UNDEFINED_OBJECT,
        format!("role \"{name}\" does not exist"),
    )
}

/// PostgreSQL's error for a privilege a role lacks.
pub(crate) fn denied(message: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::INSUFFICIENT_PRIVILEGE, message)
}
