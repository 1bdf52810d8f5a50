//! Roles as PostgreSQL's `pg_authid` and `pg_auth_members` hold them, and
//! the owners of databases: the data every layer reads (the engine checks
//! privileges against it and shows it in `pg_roles`, the wire server finds
//! passwords in it, the store keeps it). The rules of who may do what live
//! in the engine (`rocklake_sql::roles`).

use std::collections::BTreeMap;

/// The oid of the bootstrap superuser (PostgreSQL's `BOOTSTRAP_SUPERUSERID`).
pub const BOOTSTRAP_OID: u32 = 10;

/// The name of the bootstrap superuser, which always exists.
pub const BOOTSTRAP_ROLE: &str = "postgres";

/// The first oid given to a role a user creates (PostgreSQL's
/// `FirstNormalObjectId`).
pub const FIRST_ROLE_OID: u32 = 16384;

/// One role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleDef {
    /// Its name (1 to 63 bytes).
    pub name: String,
    /// Its oid, fixed for its life (a rename keeps it).
    pub oid: u32,
    /// `SUPERUSER`: passes every privilege check.
    pub superuser: bool,
    /// `CREATEDB`: may create databases.
    pub createdb: bool,
    /// `CREATEROLE`: may create, alter and drop roles that are not
    /// superusers.
    pub createrole: bool,
    /// `LOGIN`: may connect.
    pub login: bool,
    /// `INHERIT`: has the privileges of the roles it is a member of.
    pub inherit: bool,
    /// `REPLICATION` (shown; RockLake has no replication protocol).
    pub replication: bool,
    /// `BYPASSRLS` (shown; RockLake has no row security).
    pub bypassrls: bool,
    /// `CONNECTION LIMIT` (-1: none).
    pub connection_limit: i32,
    /// Its password as a SCRAM-SHA-256 verifier
    /// (`SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`).
    pub verifier: Option<String>,
    /// The roles it is a member of.
    pub member_of: Vec<Membership>,
    /// Its session defaults (`ALTER ROLE ... [IN DATABASE ...] SET`).
    pub settings: Vec<RoleSetting>,
}

impl RoleDef {
    /// A role with PostgreSQL's defaults for `CREATE ROLE name`:
    /// NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT NOLOGIN.
    pub fn new(name: &str, oid: u32) -> RoleDef {
        RoleDef {
            name: name.to_string(),
            oid,
            superuser: false,
            createdb: false,
            createrole: false,
            login: false,
            inherit: true,
            replication: false,
            bypassrls: false,
            connection_limit: -1,
            verifier: None,
            member_of: Vec::new(),
            settings: Vec::new(),
        }
    }

    /// The bootstrap superuser, with every attribute.
    pub fn bootstrap() -> RoleDef {
        RoleDef {
            superuser: true,
            createdb: true,
            createrole: true,
            login: true,
            replication: true,
            bypassrls: true,
            ..RoleDef::new(BOOTSTRAP_ROLE, BOOTSTRAP_OID)
        }
    }
}

/// A role's membership in another role (`GRANT role TO member`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    /// The role granted.
    pub role: String,
    /// `WITH ADMIN OPTION`: the member may grant it on.
    pub admin: bool,
}

/// A session default of a role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleSetting {
    /// The database it applies in; `None` for every database.
    pub database: Option<String>,
    /// The setting's name, lower case.
    pub name: String,
    /// Its value as `SET` would take it.
    pub value: String,
}

/// Every role of a server and the owner of each database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleCatalog {
    /// The roles, in name order; the bootstrap superuser is always there.
    pub roles: Vec<RoleDef>,
    /// The oid the next role gets.
    pub next_oid: u32,
    /// The owner of each database (a role name); a database missing here
    /// belongs to the bootstrap superuser.
    pub owners: BTreeMap<String, String>,
}

impl Default for RoleCatalog {
    fn default() -> Self {
        RoleCatalog {
            roles: vec![RoleDef::bootstrap()],
            next_oid: FIRST_ROLE_OID,
            owners: BTreeMap::new(),
        }
    }
}

impl RoleCatalog {
    /// The role named `name`.
    pub fn role(&self, name: &str) -> Option<&RoleDef> {
        self.roles
            .binary_search_by(|role| role.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.roles[i])
    }

    /// The role named `name`, to change.
    pub fn role_mut(&mut self, name: &str) -> Option<&mut RoleDef> {
        match self
            .roles
            .binary_search_by(|role| role.name.as_str().cmp(name))
        {
            Ok(i) => Some(&mut self.roles[i]),
            Err(_) => None,
        }
    }

    /// The role with oid `oid`.
    pub fn role_by_oid(&self, oid: u32) -> Option<&RoleDef> {
        self.roles.iter().find(|role| role.oid == oid)
    }

    /// Adds `role` (whose name is new), keeping name order.
    pub fn insert(&mut self, role: RoleDef) {
        let at = self
            .roles
            .binary_search_by(|r| r.name.as_str().cmp(&role.name))
            .unwrap_or_else(|i| i);
        self.roles.insert(at, role);
    }

    /// Removes the role named `name`.
    pub fn remove(&mut self, name: &str) -> Option<RoleDef> {
        let at = self
            .roles
            .binary_search_by(|role| role.name.as_str().cmp(name))
            .ok()?;
        Some(self.roles.remove(at))
    }

    /// A new role named `name` with the next oid.
    pub fn new_role(&mut self, name: &str) -> RoleDef {
        let oid = self.next_oid;
        self.next_oid += 1;
        RoleDef::new(name, oid)
    }

    /// The owner of database `database`.
    pub fn owner_of(&self, database: &str) -> &str {
        self.owners
            .get(database)
            .map(String::as_str)
            .unwrap_or(BOOTSTRAP_ROLE)
    }

    /// Whether `member` is `role` or a member of it, directly or through
    /// other roles; with `inheriting`, only through roles that inherit
    /// (PostgreSQL's `has_privs_of_role`), else through any
    /// (`is_member_of_role`).
    pub fn reaches(&self, member: &str, role: &str, inheriting: bool) -> bool {
        let mut seen = vec![member.to_string()];
        let mut next = 0;
        while next < seen.len() {
            let current = seen[next].clone();
            next += 1;
            if current == role {
                return true;
            }
            let Some(def) = self.role(&current) else {
                continue;
            };
            if inheriting && !def.inherit {
                continue;
            }
            for membership in &def.member_of {
                if !seen.contains(&membership.role) {
                    seen.push(membership.role.clone());
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memberships_reach_through_inheriting_roles_only_when_asked() {
        let mut catalog = RoleCatalog::default();
        let mut admin = catalog.new_role("admin");
        admin.createdb = true;
        catalog.insert(admin);
        let mut ops = catalog.new_role("ops");
        ops.member_of.push(Membership {
            role: "admin".into(),
            admin: false,
        });
        catalog.insert(ops);
        let mut bob = catalog.new_role("bob");
        bob.inherit = false;
        bob.member_of.push(Membership {
            role: "ops".into(),
            admin: false,
        });
        catalog.insert(bob);
        assert!(catalog.reaches("bob", "admin", false));
        assert!(
            !catalog.reaches("bob", "admin", true),
            "bob does not inherit"
        );
        assert!(catalog.reaches("ops", "admin", true));
        assert!(catalog.reaches("bob", "bob", true));
        assert!(!catalog.reaches("admin", "ops", false));
        assert_eq!(
            catalog
                .roles
                .iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>(),
            ["admin", "bob", "ops", "postgres"]
        );
        assert_eq!(catalog.role("ops").unwrap().oid, FIRST_ROLE_OID + 1);
        assert_eq!(catalog.owner_of("lake"), BOOTSTRAP_ROLE);
    }
}
