//! The privilege checks, as PostgreSQL 15 makes them (`superuser()`,
//! `has_privs_of_role`, `is_member_of_role`, `have_createdb_privilege`,
//! ...), for the role acting and the roles as they are.

use rocklake_types::roles::RoleCatalog;
use rocklake_types::SqlError;

use super::denied;

/// What one session asks of another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// Cancel its running query (`pg_cancel_backend`).
    Cancel,
    /// End it (`pg_terminate_backend`).
    Terminate,
}

/// Who acts: a session's current user and session user, over the roles as
/// they are. Without enforcement (no authentication) every check passes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Who<'a> {
    pub(crate) catalog: &'a RoleCatalog,
    /// `current_user`: the role privileges are checked for.
    pub(crate) current: &'a str,
    /// `session_user`: whose memberships `SET ROLE` may use.
    pub(crate) session: &'a str,
    /// Whether privileges are checked at all.
    pub(crate) enforced: bool,
}

impl Who<'_> {
    /// Whether `name` is a superuser (an unknown role is not, unless
    /// nothing is enforced).
    fn role_is_superuser(&self, name: &str) -> bool {
        !self.enforced || self.catalog.role(name).is_some_and(|role| role.superuser)
    }

    /// PostgreSQL's `superuser()`: the current user is a superuser.
    pub(crate) fn is_superuser(&self) -> bool {
        self.role_is_superuser(self.current)
    }

    /// Whether the session user is a superuser.
    pub(crate) fn session_is_superuser(&self) -> bool {
        self.role_is_superuser(self.session)
    }

    /// `has_privs_of_role(current_user, role)`: a superuser, the role
    /// itself, or a member through inheriting roles.
    pub(crate) fn has_privs_of(&self, role: &str) -> bool {
        self.is_superuser() || self.catalog.reaches(self.current, role, true)
    }

    /// `is_member_of_role(session_user, role)` for `SET ROLE`: a superuser
    /// session, or a member through any roles.
    pub(crate) fn session_may_become(&self, role: &str) -> bool {
        self.session_is_superuser() || self.catalog.reaches(self.session, role, false)
    }

    /// `is_member_of_role(current_user, role)`.
    pub(crate) fn is_member_of(&self, role: &str) -> bool {
        self.is_superuser() || self.catalog.reaches(self.current, role, false)
    }

    /// Whether the current user holds the admin option of `role` (directly
    /// or through a role it inherits), PostgreSQL 15's `is_admin_of_role`.
    pub(crate) fn is_admin_of(&self, role: &str) -> bool {
        if self.is_superuser() {
            return true;
        }
        self.catalog.roles.iter().any(|holder| {
            holder.member_of.iter().any(|m| m.role == role && m.admin)
                && self.catalog.reaches(self.current, &holder.name, true)
        })
    }

    /// `have_createrole_privilege()`.
    pub(crate) fn may_create_roles(&self) -> bool {
        self.is_superuser()
            || self
                .catalog
                .role(self.current)
                .is_some_and(|role| role.createrole)
    }

    /// `have_createdb_privilege()`.
    pub(crate) fn may_create_databases(&self) -> bool {
        self.is_superuser()
            || self
                .catalog
                .role(self.current)
                .is_some_and(|role| role.createdb)
    }

    /// `CREATE DATABASE` is allowed.
    pub(crate) fn check_create_database(&self) -> Result<(), SqlError> {
        if self.may_create_databases() {
            Ok(())
        } else {
            Err(denied("permission denied to create database"))
        }
    }

    /// The current user owns database `database` (or has the privileges
    /// of its owner), as `DROP DATABASE` and `ALTER DATABASE` need.
    pub(crate) fn check_database_owner(&self, database: &str) -> Result<(), SqlError> {
        if self.has_privs_of(self.catalog.owner_of(database)) {
            Ok(())
        } else {
            Err(denied(format!("must be owner of database {database}")))
        }
    }

    /// The current user may make `role` the owner of an object: it must be
    /// a member of it (`check_is_member_of_role`).
    pub(crate) fn check_may_give_to(&self, role: &str) -> Result<(), SqlError> {
        if self.is_member_of(role) {
            Ok(())
        } else {
            Err(denied(format!("must be member of role \"{role}\"")))
        }
    }

    /// The current user may end a session of `user` (`pg_terminate_backend`,
    /// `DROP DATABASE ... WITH (FORCE)`): superuser sessions only by
    /// superusers, others by roles with the privileges of their user
    /// (PostgreSQL 15's messages).
    pub(crate) fn check_may_signal(&self, user: &str) -> Result<(), SqlError> {
        self.check_may_send(user, Signal::Terminate)
    }

    /// The current user may cancel a query of (`Signal::Cancel`) or end
    /// (`Signal::Terminate`) a session of `user`.
    pub(crate) fn check_may_send(&self, user: &str, signal: Signal) -> Result<(), SqlError> {
        let (superuser_message, member_message) = match signal {
            Signal::Cancel => (
                "must be a superuser to cancel superuser query",
                "must be a member of the role whose query is being canceled or member of pg_signal_backend",
            ),
            Signal::Terminate => (
                "must be a superuser to terminate superuser process",
                "must be a member of the role whose process is being terminated or member of pg_signal_backend",
            ),
        };
        if self.role_is_superuser(user) && !self.is_superuser() {
            return Err(denied(superuser_message));
        }
        if self.has_privs_of(user) || self.has_privs_of("pg_signal_backend") {
            Ok(())
        } else {
            Err(denied(member_message))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocklake_types::roles::Membership;
    use rocklake_types::SqlState;

    fn catalog() -> RoleCatalog {
        let mut catalog = RoleCatalog::default();
        let mut owner = catalog.new_role("owner");
        owner.createdb = true;
        owner.login = true;
        catalog.insert(owner);
        let mut alice = catalog.new_role("alice");
        alice.login = true;
        alice.member_of.push(Membership {
            role: "owner".into(),
            admin: false,
        });
        catalog.insert(alice);
        let bob = catalog.new_role("bob");
        catalog.insert(bob);
        catalog.owners.insert("sales".into(), "owner".into());
        catalog
    }

    fn who<'a>(catalog: &'a RoleCatalog, name: &'a str) -> Who<'a> {
        Who {
            catalog,
            current: name,
            session: name,
            enforced: true,
        }
    }

    #[test]
    fn owners_and_their_members_may_drop_their_databases() {
        let catalog = catalog();
        assert!(who(&catalog, "owner").check_database_owner("sales").is_ok());
        assert!(who(&catalog, "alice").check_database_owner("sales").is_ok());
        let refused = who(&catalog, "bob")
            .check_database_owner("sales")
            .unwrap_err();
        assert_eq!(refused.code, SqlState::INSUFFICIENT_PRIVILEGE);
        assert_eq!(refused.message, "must be owner of database sales");
        assert!(who(&catalog, "bob").check_database_owner("lake").is_err());
        assert!(who(&catalog, "postgres")
            .check_database_owner("sales")
            .is_ok());
    }

    #[test]
    fn createdb_is_an_attribute_not_inherited() {
        let catalog = catalog();
        assert!(who(&catalog, "owner").check_create_database().is_ok());
        assert!(who(&catalog, "alice").check_create_database().is_err());
        let open = Who {
            enforced: false,
            ..who(&catalog, "nobody")
        };
        assert!(open.check_create_database().is_ok());
        assert!(open.is_superuser());
    }

    #[test]
    fn canceling_a_query_speaks_of_queries() {
        let catalog = catalog();
        let err = who(&catalog, "alice")
            .check_may_send("postgres", Signal::Cancel)
            .unwrap_err();
        assert_eq!(err.message, "must be a superuser to cancel superuser query");
        let err = who(&catalog, "bob")
            .check_may_send("alice", Signal::Cancel)
            .unwrap_err();
        assert!(err.message.contains("whose query is being canceled"));
        assert!(who(&catalog, "alice")
            .check_may_send("owner", Signal::Cancel)
            .is_ok());
    }

    #[test]
    fn superuser_sessions_end_only_by_superusers() {
        let catalog = catalog();
        assert!(who(&catalog, "alice").check_may_signal("postgres").is_err());
        assert!(who(&catalog, "alice").check_may_signal("owner").is_ok());
        assert!(who(&catalog, "bob").check_may_signal("alice").is_err());
        assert!(who(&catalog, "postgres").check_may_signal("bob").is_ok());
    }
}
