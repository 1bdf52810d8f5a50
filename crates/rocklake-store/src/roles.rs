//! The roles of a served root and the owners of its databases: one object,
//! `ROOT/roles` (a protobuf `RoleCatalog`), next to `ROOT/databases/`. It
//! holds no DuckLake data, so it is not a catalog: the writer rewrites it
//! whole on every change (an object store's put replaces an object
//! atomically; a local directory's is a rename), replicas read it.
//!
//! Roles the server's configuration declares — the users of its password
//! file (login roles) and those named by `--superuser` — are added at start
//! when missing (a writer stores them; a replica shows them), so every role
//! a client can authenticate as is a role of the catalog, with an oid.
//! Passwords from the password file stay in that file; a role's own
//! password (`CREATE ROLE ... PASSWORD`) is kept as a SCRAM verifier.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rocklake_sql::roles::RoleChange;
use rocklake_sql::Roles;
use rocklake_types::output::Notice;
use rocklake_types::roles::RoleCatalog;
use rocklake_types::{SqlError, SqlState};

use crate::engine::to_sql;
use crate::error::{StoreError, StoreResult};
use crate::root::LakeRoot;

/// Roles the server's configuration declares (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct DeclaredRoles {
    /// Users that log in with a password from the server's configuration.
    pub login_users: Vec<String>,
    /// Users that are superusers by the server's configuration.
    pub superusers: Vec<String>,
}

impl DeclaredRoles {
    /// Adds the declared roles to `catalog`; whether anything changed.
    fn apply(&self, catalog: &mut RoleCatalog) -> bool {
        let mut changed = false;
        for name in self.login_users.iter().chain(&self.superusers) {
            if catalog.role(name).is_none() {
                let mut role = catalog.new_role(name);
                role.login = true;
                catalog.insert(role);
                changed = true;
            }
        }
        for name in &self.superusers {
            if let Some(role) = catalog.role_mut(name) {
                if !role.superuser {
                    role.superuser = true;
                    changed = true;
                }
            }
        }
        changed
    }
}

/// Makes the verifier to keep for a password.
pub type VerifierMaker = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// The roles of a served root, as the engine's [`Roles`].
pub struct ServedRoles {
    root: LakeRoot,
    writer: bool,
    enforced: bool,
    declared: DeclaredRoles,
    verifier: Option<VerifierMaker>,
    current: Mutex<Arc<RoleCatalog>>,
    /// Serializes changes.
    changing: tokio::sync::Mutex<()>,
}

impl ServedRoles {
    /// The roles of `root`, with the `declared` ones added (and stored, by a
    /// `writer`, which also forgets owners of databases that no longer
    /// exist). `enforced` when clients authenticate; `verifier` makes the
    /// verifiers of passwords set in SQL (`None`: no passwords).
    pub async fn open(
        root: LakeRoot,
        writer: bool,
        enforced: bool,
        declared: DeclaredRoles,
        verifier: Option<VerifierMaker>,
    ) -> StoreResult<ServedRoles> {
        let mut catalog = root.load_roles().await?;
        let mut changed = declared.apply(&mut catalog);
        if writer {
            let databases = root.databases().await?;
            let before = catalog.owners.len();
            catalog
                .owners
                .retain(|database, _| databases.contains(database));
            changed |= catalog.owners.len() != before;
            if changed {
                root.save_roles(&catalog).await?;
            }
        }
        Ok(ServedRoles {
            root,
            writer,
            enforced,
            declared,
            verifier,
            current: Mutex::new(Arc::new(catalog)),
            changing: tokio::sync::Mutex::new(()),
        })
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Arc<RoleCatalog>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads the roles again (what a replica does to follow its writer).
    pub async fn refresh(&self) -> StoreResult<()> {
        let mut catalog = self.root.load_roles().await?;
        self.declared.apply(&mut catalog);
        *self.slot() = Arc::new(catalog);
        Ok(())
    }
}

#[async_trait]
impl Roles for ServedRoles {
    fn current(&self) -> Arc<RoleCatalog> {
        self.slot().clone()
    }

    fn enforced(&self) -> bool {
        self.enforced
    }

    async fn update(&self, change: &RoleChange<'_>) -> Result<Vec<Notice>, SqlError> {
        if !self.writer {
            return Err(SqlError::new(
                SqlState::READ_ONLY_SQL_TRANSACTION,
                "cannot change roles on a read-only replica",
            ));
        }
        let _changing = self.changing.lock().await;
        let mut changed = RoleCatalog::clone(&self.current());
        let notices = change(&mut changed)?;
        self.root.save_roles(&changed).await.map_err(to_sql)?;
        *self.slot() = Arc::new(changed);
        Ok(notices)
    }

    fn password_verifier(&self, password: &str) -> Result<String, SqlError> {
        match &self.verifier {
            Some(make) => Ok(make(password)),
            None => Err(SqlError::unsupported(
                "passwords of roles need a server with password authentication (rocklake serve --password-file)",
            )),
        }
    }
}

impl LakeRoot {
    /// The roles stored under the root (the bootstrap superuser alone
    /// when none are).
    pub async fn load_roles(&self) -> StoreResult<RoleCatalog> {
        match self.read_object(crate::root::ROLES).await? {
            None => Ok(RoleCatalog::default()),
            Some(bytes) => {
                rocklake_codec::roles::decode(&bytes).map_err(|e| StoreError::Location {
                    location: self.location().to_string(),
                    reason: format!("the roles object cannot be read: {e}"),
                })
            }
        }
    }

    /// Stores `catalog` as the root's roles, replacing what was there.
    pub async fn save_roles(&self, catalog: &RoleCatalog) -> StoreResult<()> {
        self.write_object(crate::root::ROLES, rocklake_codec::roles::encode(catalog))
            .await
    }
}

#[cfg(test)]
// The engine's error type is `SqlError` (see `rocklake_sql`).
#[allow(clippy::result_large_err)]
mod tests {
    use super::*;
    use crate::location::StoreLocation;

    #[tokio::test]
    async fn declared_roles_are_stored_and_changes_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let root = LakeRoot::open(StoreLocation::Local(dir.path().to_path_buf())).unwrap();
        let declared = DeclaredRoles {
            login_users: vec!["lake".into()],
            superusers: vec!["admin".into()],
        };
        let roles = ServedRoles::open(root.clone(), true, true, declared.clone(), None)
            .await
            .unwrap();
        let current = roles.current();
        assert!(current.role("lake").unwrap().login);
        assert!(!current.role("lake").unwrap().superuser);
        assert!(current.role("admin").unwrap().superuser);
        roles
            .update(&|catalog: &mut RoleCatalog| {
                let reader = catalog.new_role("reader");
                catalog.insert(reader);
                Ok(Vec::new())
            })
            .await
            .unwrap();
        let failed = roles
            .update(&|catalog: &mut RoleCatalog| {
                catalog.remove("reader");
                Err(SqlError::new(SqlState::INSUFFICIENT_PRIVILEGE, "no"))
            })
            .await;
        assert!(failed.is_err());
        assert!(
            roles.current().role("reader").is_some(),
            "a failed change changes nothing"
        );

        let replica = ServedRoles::open(root.clone(), false, true, DeclaredRoles::default(), None)
            .await
            .unwrap();
        let names: Vec<String> = replica
            .current()
            .roles
            .iter()
            .map(|r| r.name.clone())
            .collect();
        assert_eq!(names, ["admin", "lake", "postgres", "reader"]);
        let refused = replica.update(&|_: &mut RoleCatalog| Ok(Vec::new())).await;
        assert_eq!(
            refused.unwrap_err().code,
            SqlState::READ_ONLY_SQL_TRANSACTION
        );
        assert!(roles.password_verifier("x").is_err());
    }
}
