//! The databases of a server: `CREATE DATABASE`, `DROP DATABASE`, `ALTER
//! DATABASE ... OWNER TO` and the list `pg_database` shows, with their
//! owners and PostgreSQL's privilege checks. The server implements
//! [`Databases`] (one catalog per database under its root); a session
//! without one knows only its own database.

use async_trait::async_trait;
use rocklake_types::output::{Notice, QueryOutput};
use rocklake_types::roles::RoleCatalog;
use rocklake_types::{SqlError, SqlState};

pub use crate::parse::databases::{
    parse_database_statement, DatabaseStatement, DropDatabase, ParsedDatabaseStatement, RoleName,
};

use crate::roles::{no_such_role, Roles, SessionRoles};

/// The databases one server holds.
#[async_trait]
pub trait Databases: Send + Sync {
    /// Names of the databases, sorted.
    fn names(&self) -> Vec<String>;

    /// A number that changes whenever a database is created or dropped.
    fn generation(&self) -> u64;

    /// Creates database `name`; SQLSTATE 42P04 when it exists.
    async fn create(&self, name: &str) -> Result<(), SqlError>;

    /// Drops database `name`: `Ok(false)` when it does not exist and
    /// `if_exists` is set (3D000 otherwise); 55006 while sessions are
    /// connected to it, unless `force`, which ends them first.
    async fn drop(&self, name: &str, if_exists: bool, force: bool) -> Result<bool, SqlError>;

    /// The users of the sessions connected to database `name`.
    fn session_users(&self, name: &str) -> Vec<String>;
}

/// What a database statement needs of its session.
pub struct DatabaseContext<'a> {
    /// The server's databases.
    pub databases: &'a dyn Databases,
    /// The server's roles.
    pub roles: &'a dyn Roles,
    /// Who runs the statement.
    pub identity: &'a SessionRoles,
    /// The database the session is connected to.
    pub current: &'a str,
}

impl DatabaseContext<'_> {
    fn role(&self, name: &RoleName) -> String {
        match name {
            RoleName::Named(name) => name.clone(),
            RoleName::CurrentUser => self.identity.current().to_string(),
            RoleName::SessionUser => self.identity.session().to_string(),
        }
    }

    /// Runs a database statement.
    pub async fn run(&self, statement: &DatabaseStatement) -> Result<QueryOutput, SqlError> {
        match statement {
            DatabaseStatement::Create { name, owner } => {
                let owner = owner.as_ref().map(|owner| self.role(owner));
                self.create(name, owner).await
            }
            DatabaseStatement::Drop(drop) => self.drop(drop).await,
            DatabaseStatement::AlterOwner { name, owner } => {
                self.alter_owner(name, &self.role(owner)).await
            }
        }
    }

    /// `CREATE DATABASE name [OWNER owner]`: needs `CREATEDB`, and
    /// membership in `owner`; the creating role owns it otherwise.
    async fn create(&self, name: &str, owner: Option<String>) -> Result<QueryOutput, SqlError> {
        let enforced = self.roles.enforced();
        let roles = self.roles.current();
        let who = self.identity.who(&roles, enforced);
        who.check_create_database()?;
        let owner = owner.unwrap_or_else(|| self.identity.current().to_string());
        if enforced && roles.role(&owner).is_none() {
            return Err(no_such_role(&owner));
        }
        who.check_may_give_to(&owner)?;
        self.databases.create(name).await?;
        self.set_owner(name, &owner).await?;
        Ok(QueryOutput::command("CREATE DATABASE"))
    }

    async fn set_owner(&self, database: &str, owner: &str) -> Result<Vec<Notice>, SqlError> {
        self.roles
            .update(&|catalog: &mut RoleCatalog| {
                catalog
                    .owners
                    .insert(database.to_string(), owner.to_string());
                Ok(Vec::new())
            })
            .await
    }

    /// `DROP DATABASE`: needs ownership; `WITH (FORCE)` also the right to
    /// end each session connected to it.
    async fn drop(&self, drop: &DropDatabase) -> Result<QueryOutput, SqlError> {
        let exists = self.databases.names().contains(&drop.name);
        if exists {
            let roles = self.roles.current();
            let who = self.identity.who(&roles, self.roles.enforced());
            who.check_database_owner(&drop.name)?;
            if drop.name == self.current {
                return Err(SqlError::new(
                    SqlState::OBJECT_IN_USE,
                    "cannot drop the currently open database",
                ));
            }
            if drop.force {
                for user in self.databases.session_users(&drop.name) {
                    who.check_may_signal(&user)?;
                }
            }
        }
        let dropped = self
            .databases
            .drop(&drop.name, drop.if_exists, drop.force)
            .await?;
        let mut notices = Vec::new();
        if dropped {
            let name = drop.name.clone();
            self.roles
                .update(&|catalog: &mut RoleCatalog| {
                    catalog.owners.remove(&name);
                    Ok(Vec::new())
                })
                .await?;
        } else {
            notices.push(Notice {
                code: SqlState::SUCCESSFUL_COMPLETION,
                message: format!("database \"{}\" does not exist, skipping", drop.name),
            });
        }
        Ok(QueryOutput::Command {
            tag: "DROP DATABASE".into(),
            notices,
        })
    }

    /// `ALTER DATABASE name OWNER TO owner`: the current owner (or a
    /// superuser), a member of the new owner, with `CREATEDB`.
    async fn alter_owner(&self, name: &str, owner: &str) -> Result<QueryOutput, SqlError> {
        if !self.databases.names().iter().any(|n| n == name) {
            return Err(SqlError::new(
                SqlState::INVALID_CATALOG_NAME,
                format!("database \"{name}\" does not exist"),
            ));
        }
        let enforced = self.roles.enforced();
        let roles = self.roles.current();
        if enforced && roles.role(owner).is_none() {
            return Err(no_such_role(owner));
        }
        let who = self.identity.who(&roles, enforced);
        if roles.owner_of(name) != owner {
            who.check_database_owner(name)?;
            who.check_may_give_to(owner)?;
            if !who.may_create_databases() {
                return Err(crate::roles::denied(
                    "permission denied to change owner of database",
                ));
            }
        }
        self.set_owner(name, owner).await?;
        Ok(QueryOutput::command("ALTER DATABASE"))
    }
}

/// The error for a statement that must run outside a transaction block.
pub fn outside_block(what: &str) -> SqlError {
    SqlError::new(
        SqlState::ACTIVE_SQL_TRANSACTION,
        format!("{what} cannot run inside a transaction block"),
    )
}
