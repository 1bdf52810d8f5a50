//! Who a session is: the user it authenticated as, its session user
//! (`SET SESSION AUTHORIZATION`) and its current user (`SET ROLE`), with
//! PostgreSQL's rules for changing them.

use rocklake_types::roles::{RoleCatalog, RoleSetting};
use rocklake_types::SqlError;

use super::{denied, no_such_role, Who};

/// The roles a session acts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRoles {
    /// The user the client authenticated as (fixed for the session).
    authenticated: String,
    /// `session_user`.
    session: String,
    /// The role of `SET ROLE`; `None` is `NONE` (`current_user` is then
    /// the session user).
    role: Option<String>,
}

impl SessionRoles {
    /// A session of the user the client authenticated as.
    pub fn new(user: &str) -> SessionRoles {
        SessionRoles {
            authenticated: user.to_string(),
            session: user.to_string(),
            role: None,
        }
    }

    /// `current_user`.
    pub fn current(&self) -> &str {
        self.role.as_deref().unwrap_or(&self.session)
    }

    /// `session_user`.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// The user the client authenticated as.
    pub fn authenticated(&self) -> &str {
        &self.authenticated
    }

    /// What `SHOW role` says: the role set, or `none`.
    pub fn role_setting(&self) -> &str {
        self.role.as_deref().unwrap_or("none")
    }

    /// The checks of this session over `catalog`.
    pub(crate) fn who<'a>(&'a self, catalog: &'a RoleCatalog, enforced: bool) -> Who<'a> {
        Who {
            catalog,
            current: self.current(),
            session: &self.session,
            enforced,
        }
    }

    /// `SET ROLE name` (`None`: `SET ROLE NONE`, `RESET ROLE`): the session
    /// user must be a member of the role, or a superuser.
    pub fn set_role(
        &mut self,
        catalog: &RoleCatalog,
        enforced: bool,
        name: Option<&str>,
    ) -> Result<(), SqlError> {
        let Some(name) = name else {
            self.role = None;
            return Ok(());
        };
        if catalog.role(name).is_none() {
            return Err(no_such_role(name));
        }
        if !self.who(catalog, enforced).session_may_become(name) {
            return Err(denied(format!("permission denied to set role \"{name}\"")));
        }
        self.role = Some(name.to_string());
        Ok(())
    }

    /// `SET SESSION AUTHORIZATION name` (`None`: `DEFAULT`): only a client
    /// that authenticated as a superuser may become another user; it also
    /// ends any `SET ROLE`.
    pub fn set_session_authorization(
        &mut self,
        catalog: &RoleCatalog,
        enforced: bool,
        name: Option<&str>,
    ) -> Result<(), SqlError> {
        let target = name.unwrap_or(&self.authenticated).to_string();
        if catalog.role(&target).is_none() && enforced {
            return Err(no_such_role(&target));
        }
        let authenticated_superuser = !enforced
            || catalog
                .role(&self.authenticated)
                .is_some_and(|role| role.superuser);
        if target != self.authenticated && !authenticated_superuser {
            return Err(denied(format!(
                "permission denied to set session authorization \"{target}\""
            )));
        }
        self.session = target;
        self.role = None;
        Ok(())
    }

    /// Whether the current user is a superuser (`is_superuser`).
    pub fn is_superuser(&self, catalog: &RoleCatalog, enforced: bool) -> bool {
        self.who(catalog, enforced).is_superuser()
    }

    /// The session defaults of the session user in `database`, most
    /// specific last: the role's for every database, then those for this
    /// one (PostgreSQL applies them in that order at login).
    pub fn role_defaults<'c>(
        &self,
        catalog: &'c RoleCatalog,
        database: &str,
    ) -> Vec<&'c RoleSetting> {
        let Some(role) = catalog.role(&self.session) else {
            return Vec::new();
        };
        let everywhere = role.settings.iter().filter(|s| s.database.is_none());
        let here = role
            .settings
            .iter()
            .filter(|s| s.database.as_deref() == Some(database));
        everywhere.chain(here).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocklake_types::roles::Membership;
    use rocklake_types::SqlState;

    fn catalog() -> RoleCatalog {
        let mut catalog = RoleCatalog::default();
        let admin = catalog.new_role("admin");
        catalog.insert(admin);
        let mut bob = catalog.new_role("bob");
        bob.login = true;
        bob.member_of.push(Membership {
            role: "admin".into(),
            admin: false,
        });
        catalog.insert(bob);
        let mut eve = catalog.new_role("eve");
        eve.login = true;
        catalog.insert(eve);
        catalog
    }

    #[test]
    fn set_role_needs_membership_of_the_session_user() {
        let catalog = catalog();
        let mut bob = SessionRoles::new("bob");
        bob.set_role(&catalog, true, Some("admin")).unwrap();
        assert_eq!(bob.current(), "admin");
        assert_eq!(bob.session(), "bob");
        bob.set_role(&catalog, true, None).unwrap();
        assert_eq!(bob.current(), "bob");

        let mut eve = SessionRoles::new("eve");
        let refused = eve.set_role(&catalog, true, Some("admin")).unwrap_err();
        assert_eq!(refused.code, SqlState::INSUFFICIENT_PRIVILEGE);
        assert_eq!(refused.message, "permission denied to set role \"admin\"");
        let missing = eve.set_role(&catalog, true, Some("ghost")).unwrap_err();
        assert_eq!(missing.code, SqlState::UNDEFINED_OBJECT);
        assert_eq!(eve.current(), "eve");

        let mut root = SessionRoles::new("postgres");
        root.set_role(&catalog, true, Some("eve")).unwrap();
        assert!(!root.is_superuser(&catalog, true), "acts as eve now");
    }

    #[test]
    fn only_superusers_change_session_authorization() {
        let catalog = catalog();
        let mut eve = SessionRoles::new("eve");
        let refused = eve
            .set_session_authorization(&catalog, true, Some("bob"))
            .unwrap_err();
        assert_eq!(
            refused.message,
            "permission denied to set session authorization \"bob\""
        );
        eve.set_session_authorization(&catalog, true, Some("eve"))
            .unwrap();
        let mut root = SessionRoles::new("postgres");
        root.set_role(&catalog, true, Some("admin")).unwrap();
        root.set_session_authorization(&catalog, true, Some("bob"))
            .unwrap();
        assert_eq!((root.session(), root.current()), ("bob", "bob"));
        root.set_session_authorization(&catalog, true, None)
            .unwrap();
        assert_eq!(root.session(), "postgres");
    }
}
