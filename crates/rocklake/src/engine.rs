//! Plugs RockLake's SQL engine ([`rocklake_sql::Session`]) into the server:
//! the engine's session is a [`SqlSession`], and [`EngineSessions`] opens one
//! per connection over the storage of the database the client names (every
//! database of a [`ServedRoot`], or one shared [`Storage`]).

use rocklake_types::notify::NotificationHub;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rocklake_sql::{CatalogResults, Databases, Roles, Session, Storage};
use rocklake_store::{DropRefused, ServedDatabase, ServedRoles, ServedRoot, SessionGuard};
use rocklake_types::activity::{ActivityBoard, ActivityGuard, NewSession};
use rocklake_types::settings::format_milliseconds;
use rocklake_types::{
    BindParam, Deallocate, Described, ResultSink, SinkError, SqlError, SqlState, TxStatus,
};
use rocklake_wire::{SessionFactory, SessionStart, SqlSession};

/// The engine's [`Session`] as the wire server's [`SqlSession`]; while it
/// lives, its database counts it as connected.
pub struct EngineSession {
    session: Session,
    _connected: Option<SessionGuard>,
    _on_board: ActivityGuard,
}

#[async_trait]
impl SqlSession for EngineSession {
    async fn run(&mut self, sql: &str, sink: &mut dyn ResultSink) -> Result<(), SinkError> {
        self.session.run(sql, sink).await
    }

    async fn run_bound(
        &mut self,
        sql: &str,
        params: &[BindParam],
        sink: &mut dyn ResultSink,
    ) -> Result<(), SinkError> {
        self.session.run_bound(sql, params, sink).await
    }

    async fn describe(&mut self, sql: &str, param_types: &[u32]) -> Result<Described, SqlError> {
        self.session.describe(sql, param_types).await
    }

    fn take_deallocations(&mut self) -> Vec<Deallocate> {
        self.session.take_deallocations()
    }

    fn status(&self) -> TxStatus {
        self.session.status()
    }

    fn take_reported_changes(&mut self) -> Vec<(String, String)> {
        self.session.take_reported_changes()
    }

    fn protocol_error(&mut self) {
        self.session.abort_block();
    }

    fn idle_in_transaction_timeout(&self) -> Option<Duration> {
        self.session.idle_in_transaction_timeout()
    }

    fn mailbox(&self) -> Option<Arc<rocklake_types::notify::Mailbox>> {
        self.session.mailbox()
    }
}

/// Limits every session of a server gets (from `rocklake serve`'s flags).
#[derive(Debug, Clone, Default)]
pub struct SessionLimits {
    /// Bytes one statement may hold in kept rows; `None` for the engine's
    /// default.
    pub statement_memory: Option<usize>,
    /// Default of `statement_timeout` (sessions may change it).
    pub statement_timeout: Option<Duration>,
    /// Default of `idle_in_transaction_session_timeout`.
    pub idle_in_transaction_timeout: Option<Duration>,
    /// Most sessions the server serves at once (`max_connections`).
    pub max_connections: Option<usize>,
}

/// Where sessions find their database.
enum Source {
    /// One storage, whatever database name the client gives.
    Single {
        storage: Arc<dyn Storage>,
        catalog_results: Arc<CatalogResults>,
    },
    /// The databases of a served root, with its roles.
    Root(Arc<RootDatabases>, Arc<ServedRoles>),
}

/// Opens an engine [`Session`] for each connection, over the storage of
/// the database the client names; the sessions of one database share the
/// results of catalog queries.
pub struct EngineSessions {
    /// Replaced when the server changes role (see [`EngineSessions::switch`]).
    source: std::sync::Mutex<Arc<Source>>,
    limits: SessionLimits,
    /// What every session of the server is doing.
    board: Arc<ActivityBoard>,
    /// LISTEN/NOTIFY between the sessions.
    notifications: Arc<NotificationHub>,
}

impl EngineSessions {
    /// A factory whose sessions all use `storage`, whatever database they
    /// name.
    pub fn new(storage: Arc<dyn Storage>) -> Self {
        EngineSessions {
            source: std::sync::Mutex::new(Arc::new(Source::Single {
                storage,
                catalog_results: Arc::default(),
            })),
            limits: SessionLimits::default(),
            board: Arc::new(ActivityBoard::new()),
            notifications: NotificationHub::new(),
        }
    }

    /// A factory for the databases of `root`, with its `roles`: a client
    /// naming another database is refused with FATAL 3D000, a role that
    /// may not log in with FATAL 28000; sessions may create and drop
    /// databases and roles as their privileges allow.
    pub fn served(root: Arc<ServedRoot>, replica: bool, roles: Arc<ServedRoles>) -> Self {
        EngineSessions {
            source: std::sync::Mutex::new(Arc::new(Source::Root(
                Arc::new(RootDatabases { root, replica }),
                roles,
            ))),
            limits: SessionLimits::default(),
            board: Arc::new(ActivityBoard::new()),
            notifications: NotificationHub::new(),
        }
    }

    /// Serves the databases of `root` with `roles` to the sessions that
    /// start from now on (a standby that took over serves its writer's
    /// root; sessions of the one before keep theirs until they end).
    pub fn switch(&self, root: Arc<ServedRoot>, replica: bool, roles: Arc<ServedRoles>) {
        let source = Source::Root(Arc::new(RootDatabases { root, replica }), roles);
        *self.source.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(source);
    }

    fn source(&self) -> Arc<Source> {
        self.source
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// What every session of the server is doing (`pg_stat_activity`).
    pub fn board(&self) -> Arc<ActivityBoard> {
        self.board.clone()
    }

    /// Gives every session these limits.
    pub fn with_limits(mut self, limits: SessionLimits) -> Self {
        self.limits = limits;
        self
    }

    /// A session of the database the client named, for `user`.
    async fn open(
        &self,
        name: &str,
        user: &str,
    ) -> Result<(Session, Option<Arc<ServedDatabase>>), SqlError> {
        let source = self.source();
        let (databases, roles) = match source.as_ref() {
            Source::Single {
                storage,
                catalog_results,
            } => {
                let session = Session::sharing(storage.clone(), catalog_results.clone());
                return Ok((session, None));
            }
            Source::Root(databases, roles) => (databases, roles),
        };
        check_login(roles.as_ref(), &databases.root, user)?;
        let mut database = databases.root.database(name);
        if database.is_none() && databases.replica {
            // A replica learns of databases its writer created by looking.
            if let Err(error) = databases.root.refresh().await {
                tracing::warn!(%error, "looking for new databases failed");
            }
            database = databases.root.database(name);
        }
        let database = database.ok_or_else(|| match databases.root.broken().get(name) {
            Some(reason) => SqlError::new(
                SqlState::IO_ERROR,
                format!("database \"{name}\" cannot be opened: {reason}"),
            ),
            None => SqlError::new(
                SqlState::INVALID_CATALOG_NAME,
                format!("database \"{name}\" does not exist"),
            ),
        })?;
        let mut session = Session::for_database(database.storage(), database.catalog_results());
        session.set_databases(databases.clone());
        session.set_roles(roles.clone());
        Ok((session, Some(database)))
    }
}

/// PostgreSQL's checks when a role logs in (with authentication): the
/// role may log in, and is within its connection limit.
fn check_login(roles: &dyn Roles, root: &ServedRoot, user: &str) -> Result<(), SqlError> {
    if !roles.enforced() {
        return Ok(());
    }
    let catalog = roles.current();
    let Some(role) = catalog.role(user) else {
        return Err(SqlError::new(
            SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
            format!("role \"{user}\" does not exist"),
        ));
    };
    if !role.login {
        return Err(SqlError::new(
            SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
            format!("role \"{user}\" is not permitted to log in"),
        ));
    }
    let limit = role.connection_limit;
    if limit >= 0 && !role.superuser && root.sessions_of(user) >= limit as usize {
        return Err(SqlError::new(
            SqlState::TOO_MANY_CONNECTIONS,
            format!("too many connections for role \"{user}\""),
        ));
    }
    Ok(())
}

#[async_trait]
impl SessionFactory for EngineSessions {
    fn hot_standby(&self) -> bool {
        matches!(self.source().as_ref(), Source::Root(databases, _) if databases.replica)
    }

    async fn new_session(&self, start: SessionStart<'_>) -> Result<Box<dyn SqlSession>, SqlError> {
        let user = &start.client.user;
        let (mut session, database) = self.open(&start.client.database, user).await?;
        let guard =
            database.map(|database| database.connect(start.pid, start.interrupt.clone(), user));
        session.set_database(&start.client.database);
        session.set_identity(start.client.identity());
        session.set_backend_pid(start.pid);
        session.set_notifications(self.notifications.clone());
        let on_board = self.board.join(
            NewSession {
                pid: start.pid,
                database: start.client.database.clone(),
                user: session.session_user(),
                application_name: start.client.application_name.clone(),
                client: start.peer,
            },
            start.interrupt.clone(),
        );
        session.set_activity(on_board.board(), on_board.activity());
        session.set_interrupt(start.interrupt);
        if let Some(bytes) = self.limits.statement_memory {
            session.set_memory_limit(bytes);
        }
        let time_defaults = [
            ("statement_timeout", self.limits.statement_timeout),
            (
                "idle_in_transaction_session_timeout",
                self.limits.idle_in_transaction_timeout,
            ),
        ];
        for (name, timeout) in time_defaults {
            let Some(timeout) = timeout else { continue };
            if let Err(error) = session.set_default_setting(name, &format_milliseconds(timeout)) {
                tracing::warn!(name, %error, "server default of a setting refused");
            }
        }
        // What the client started the session with comes after the
        // server's defaults (a bad value ends the connection, as in
        // PostgreSQL).
        for (name, value) in &start.client.settings {
            session.set_default_setting(name, value)?;
        }
        if let Some(max) = self.limits.max_connections {
            if let Err(error) = session.set_default_setting("max_connections", &max.to_string()) {
                tracing::warn!(%error, "server default of max_connections refused");
            }
        }
        Ok(Box::new(EngineSession {
            session,
            _connected: guard,
            _on_board: on_board,
        }))
    }
}

/// The databases of a served root as the engine's [`Databases`].
struct RootDatabases {
    root: Arc<ServedRoot>,
    replica: bool,
}

#[async_trait]
impl Databases for RootDatabases {
    fn names(&self) -> Vec<String> {
        self.root.names()
    }

    fn generation(&self) -> u64 {
        self.root.generation()
    }

    fn session_users(&self, name: &str) -> Vec<String> {
        self.root
            .database(name)
            .map(|database| database.session_users())
            .unwrap_or_default()
    }

    async fn create(&self, name: &str) -> Result<(), SqlError> {
        if self.replica {
            return Err(SqlError::read_only("CREATE DATABASE"));
        }
        let created = self
            .root
            .create_database(name)
            .await
            .map_err(rocklake_store::engine::to_sql)?;
        if !created {
            return Err(SqlError::new(
                SqlState::DUPLICATE_DATABASE,
                format!("database \"{name}\" already exists"),
            ));
        }
        Ok(())
    }

    async fn drop(&self, name: &str, if_exists: bool, force: bool) -> Result<bool, SqlError> {
        if self.replica {
            return Err(SqlError::read_only("DROP DATABASE"));
        }
        match self.root.drop_database(name, force).await {
            Ok(()) => Ok(true),
            Err(DropRefused::Missing) if if_exists => Ok(false),
            Err(DropRefused::Missing) => Err(SqlError::new(
                SqlState::INVALID_CATALOG_NAME,
                format!("database \"{name}\" does not exist"),
            )),
            Err(DropRefused::InUse(count)) => Err(SqlError::new(
                SqlState::OBJECT_IN_USE,
                format!("database \"{name}\" is being accessed by other users"),
            )
            .with_detail(if count == 1 {
                "There is 1 other session using the database.".to_string()
            } else {
                format!("There are {count} other sessions using the database.")
            })),
            Err(DropRefused::Store(error)) => Err(rocklake_store::engine::to_sql(error)),
        }
    }
}
