//! [`Session`]: one client connection's SQL state — its transaction block
//! and settings — and statement dispatch, following PostgreSQL's rules for
//! simple-query strings, implicit transactions and failed blocks. Results go
//! to a [`ResultSink`] statement by statement, rows as they are produced.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rocklake_types::activity::{ActivityBoard, SessionActivity, SessionState};
use rocklake_types::datum::timestamptz_micros;
use rocklake_types::interrupt::within;
use rocklake_types::output::{BatchResult, CollectSink, Notice, QueryOutput, ResultSink, TxStatus};
use rocklake_types::params::{BindParam, Deallocate};
use rocklake_types::settings::SessionIdentity;
use rocklake_types::{Interrupt, SinkError, SqlError, SqlState};
use sqlparser::ast::{ObjectType, Set, SetExpr, Statement};

use crate::catalog::{Catalog, RelationIndexes};
use crate::copy::copy_statement;
use crate::databases::{self, Databases};
use crate::exec::memory::{MemoryBudget, DEFAULT_STATEMENT_MEMORY_LIMIT};
use crate::exec::{Limits, StmtEnv};
use crate::ident::fold;
use crate::maintenance;
use crate::parse;
use crate::query::shared_results::{CatalogLists, CatalogResults};
use crate::query::{self, Destination, Failure};
use crate::roles::{MemoryRoles, RoleView, Roles, SessionRoles};
use crate::storage::route::{Database, WriteCount};
use crate::storage::{RelationList, Storage, StorageTxn};
use crate::write::ddl;
use crate::write::dml;
use savepoints::Savepoints;
use settings::SessionSettings;
use transaction::TxnMode;

mod admin;
mod completion;
mod control;
mod describe;
pub(crate) mod notify;
pub(crate) mod params;
pub(crate) mod prepare;
pub(crate) mod savepoints;
pub(crate) mod settings;
pub(crate) mod transaction;

use completion::HeldCompletion;

static NEXT_PID: AtomicI32 = AtomicI32::new(10_000);

/// Which protocol a query string came by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    /// A Query message.
    Simple,
    /// Parse/Bind/Execute (the lexer's notices went at Parse; the implicit
    /// transaction commits at Sync).
    Extended,
}

struct TxnCtx {
    txn: Box<dyn StorageTxn>,
    now: i64,
    catalog: Option<Catalog>,
    /// The storage's catalog version of `catalog` (see
    /// [`StorageTxn::catalog_version`]); `None` when this transaction changed
    /// the catalog or has temporary tables. Catalog query results are shared
    /// under it.
    catalog_version: Option<u64>,
    /// Its isolation level and read-only flag.
    mode: TxnMode,
    /// Whether a statement that reads or writes data ran in it.
    queried: bool,
    /// The writes asked of `txn`.
    writes: WriteCount,
    /// The settings' generation its catalog shows.
    settings_seen: u64,
}

enum TxState {
    Idle,
    /// The implicit transaction of a simple-query string.
    Implicit(TxnCtx),
    /// Inside BEGIN ... COMMIT.
    Block(TxnCtx),
    /// A block after an error: only ROLLBACK/COMMIT (and ROLLBACK TO a
    /// savepoint, which needs the transaction kept) are accepted.
    Failed(Option<TxnCtx>),
}

/// One client session: executes SQL strings against a [`Storage`].
pub struct Session {
    /// Where the database's rows live: its home storage and schema lakes.
    storage: Arc<Database>,
    /// The server's databases, when it has several.
    databases: Option<Arc<dyn Databases>>,
    state: TxState,
    savepoints: Savepoints,
    /// Prepared statements dropped by DEALLOCATE, for the connection.
    deallocations: Vec<Deallocate>,
    settings: SessionSettings,
    database: String,
    pid: i32,
    /// Stops the running statement (cancel, timeout, shutdown, client gone).
    interrupt: Arc<Interrupt>,
    /// Bytes one statement may hold in kept rows.
    memory_limit: usize,
    /// The relation and schema lists last loaded, with the storage's catalog
    /// version they belong to (see [`StorageTxn::catalog_version`]).
    known_catalog: Option<CatalogLists>,
    /// The relation list and indexes of the catalog built last (also one
    /// its transaction changed, which has no version): the next catalog's
    /// indexes extend these when its list extends this one.
    last_indexes: Option<(RelationList, Arc<RelationIndexes>)>,
    /// Results of catalog queries, shared with the other sessions of a server.
    catalog_results: Arc<CatalogResults>,
    /// The server's roles.
    roles: Arc<dyn Roles>,
    /// Who the session is.
    identity: SessionRoles,
    /// What statements see of roles, kept while neither the roles nor the
    /// identity change.
    role_view: Option<Arc<RoleView>>,
    /// The server's sessions, and this session's entry among them.
    board: Arc<ActivityBoard>,
    activity: Option<Arc<SessionActivity>>,
    /// LISTEN/NOTIFY (a server's sessions share a hub).
    notifications: Option<notify::SessionNotifications>,
}

fn now_micros() -> i64 {
    timestamptz_micros(SystemTime::now())
}

fn aborted() -> SqlError {
    SqlError::new(
        SqlState::IN_FAILED_SQL_TRANSACTION,
        "current transaction is aborted, commands ignored until end of transaction block",
    )
}

fn no_transaction(tag: &str) -> QueryOutput {
    QueryOutput::Command {
        tag: tag.to_string(),
        notices: vec![Notice {
            code: SqlState::NO_ACTIVE_SQL_TRANSACTION,
            message: "there is no transaction in progress".into(),
        }],
    }
}

impl Session {
    /// A new idle session over `storage` (a database without schema lakes).
    pub fn new(storage: Arc<dyn Storage>) -> Self {
        Self::sharing(storage, Arc::default())
    }

    /// A new idle session over `storage` (a database without schema lakes)
    /// that shares the results of catalog queries with the other sessions
    /// given the same `catalog_results` (those of one server, over the same
    /// storage).
    pub fn sharing(storage: Arc<dyn Storage>, catalog_results: Arc<CatalogResults>) -> Self {
        Self::for_database(Arc::new(Database::single(storage)), catalog_results)
    }

    /// A new idle session of `database`, sharing the results of catalog
    /// queries as [`Session::sharing`] does.
    pub fn for_database(database: Arc<Database>, catalog_results: Arc<CatalogResults>) -> Self {
        Session {
            storage: database,
            state: TxState::Idle,
            savepoints: Savepoints::default(),
            deallocations: Vec::new(),
            settings: SessionSettings::default(),
            database: "rocklake".into(),
            pid: NEXT_PID.fetch_add(1, Ordering::Relaxed),
            interrupt: Arc::default(),
            memory_limit: DEFAULT_STATEMENT_MEMORY_LIMIT,
            known_catalog: None,
            last_indexes: None,
            catalog_results,
            databases: None,
            roles: Arc::new(MemoryRoles::default()),
            identity: SessionRoles::new(rocklake_types::roles::BOOTSTRAP_ROLE),
            role_view: None,
            board: Arc::default(),
            activity: None,
            notifications: None,
        }
    }

    /// Uses the server's roles (by default a session has roles of its own,
    /// in memory, and no authentication).
    pub fn set_roles(&mut self, roles: Arc<dyn Roles>) {
        self.roles = roles;
        self.role_view = None;
    }

    /// Lets the session create and drop the server's databases and list
    /// them in `pg_database`.
    pub fn set_databases(&mut self, databases: Arc<dyn Databases>) {
        self.databases = Some(databases);
    }

    /// Sets the database name reported by `current_database()` (from startup).
    pub fn set_database(&mut self, name: &str) {
        self.database = name.to_string();
    }

    /// Sets who the session belongs to (from startup): the defaults of
    /// `session_authorization` and `application_name` come from it.
    /// The session user's role defaults (`ALTER ROLE ... SET`) for the
    /// database set with [`Session::set_database`] apply from here on.
    ///
    /// Without authentication a user no role declares acts as the
    /// bootstrap superuser `postgres` (a server of one user: PostgreSQL
    /// would refuse the connection).
    pub fn set_identity(&mut self, identity: SessionIdentity) {
        let roles = self.roles.current();
        let declared = roles.role(&identity.user).is_some();
        let user = if declared || self.roles.enforced() {
            identity.user.clone()
        } else {
            rocklake_types::roles::BOOTSTRAP_ROLE.to_string()
        };
        self.identity = SessionRoles::new(&user);
        self.settings
            .set_identity(SessionIdentity { user, ..identity });
        for setting in self.identity.role_defaults(&roles, &self.database) {
            if let Err(error) = self.settings.set_default(&setting.name, &setting.value) {
                tracing::warn!(role = %self.identity.session(), setting = %setting.name, %error, "a role default was refused");
            }
        }
        self.report_superuser();
    }

    /// Sets the value of setting `name` before the session changes it (the
    /// server's `--statement-timeout`, ...); fails for a value the setting
    /// cannot take.
    pub fn set_default_setting(&mut self, name: &str, value: &str) -> Result<(), SqlError> {
        self.settings.set_default(name, value)
    }

    /// Uses `interrupt` to stop running statements (the wire server's, set
    /// by cancel requests, shutdown and the client connection).
    pub fn set_interrupt(&mut self, interrupt: Arc<Interrupt>) {
        self.interrupt = interrupt;
    }

    /// Sets how many bytes one statement may hold in kept rows.
    pub fn set_memory_limit(&mut self, bytes: usize) {
        self.memory_limit = bytes;
    }

    /// The pid reported by `pg_backend_pid()` (for BackendKeyData).
    pub fn backend_pid(&self) -> i32 {
        self.pid
    }

    /// Sets the pid `pg_backend_pid()` reports: the server's, in its
    /// BackendKeyData.
    pub fn set_backend_pid(&mut self, pid: i32) {
        self.pid = pid;
    }

    /// The reported settings that changed since the client was last told
    /// them, with their values (ParameterStatus before ReadyForQuery).
    pub fn take_reported_changes(&mut self) -> Vec<(String, String)> {
        self.settings.take_reported_changes()
    }

    /// Transaction status for ReadyForQuery.
    pub fn status(&self) -> TxStatus {
        match self.state {
            TxState::Idle | TxState::Implicit(_) => TxStatus::Idle,
            TxState::Block(_) => TxStatus::InBlock,
            TxState::Failed(_) => TxStatus::Failed,
        }
    }

    /// How long the session may sit idle inside a transaction block
    /// (`idle_in_transaction_session_timeout`), if limited.
    pub fn idle_in_transaction_timeout(&self) -> Option<Duration> {
        self.settings
            .duration("idle_in_transaction_session_timeout")
    }

    /// DISCARD ALL outside a statement: drops any transaction and settings.
    pub fn reset(&mut self) {
        self.state = TxState::Idle;
        self.settings.reset_all();
    }

    /// An error outside a statement (the extended protocol's Parse, Bind,
    /// Describe): an open transaction block becomes Failed, as after a
    /// failed statement; outside a block nothing changes.
    pub fn abort_block(&mut self) {
        if matches!(self.state, TxState::Block(_)) {
            self.on_error();
        }
    }

    /// After an error: a block becomes Failed, an implicit transaction is rolled back.
    fn on_error(&mut self) {
        self.state = match std::mem::replace(&mut self.state, TxState::Idle) {
            TxState::Block(ctx) if !self.savepoints.is_empty() => TxState::Failed(Some(ctx)),
            TxState::Block(_) => TxState::Failed(None),
            TxState::Failed(ctx) => TxState::Failed(ctx),
            TxState::Implicit(_) => {
                self.savepoints.clear();
                self.transaction_ended(false);
                TxState::Idle
            }
            TxState::Idle => {
                self.savepoints.clear();
                self.block_ended(false);
                TxState::Idle
            }
        };
    }

    fn begin_ctx(
        &self,
        mode: TxnMode,
    ) -> impl std::future::Future<Output = Result<TxnCtx, SqlError>> + Send + 'static {
        let storage = self.storage.clone();
        async move {
            let writes = WriteCount::default();
            let txn = storage
                .begin_counted(mode.read_only, writes.clone())
                .await?;
            Ok(TxnCtx {
                txn: Box::new(txn),
                now: now_micros(),
                catalog: None,
                catalog_version: None,
                mode,
                queried: false,
                writes,
                settings_seen: u64::MAX,
            })
        }
    }

    /// The characteristics a transaction begins with when nothing else is
    /// asked for.
    fn default_mode(&self) -> TxnMode {
        let (isolation, read_only) = self.settings.transaction_defaults();
        TxnMode {
            isolation,
            read_only,
        }
    }

    /// The current transaction, if one is running (not failed).
    fn ctx_mut(&mut self) -> Option<&mut TxnCtx> {
        match &mut self.state {
            TxState::Implicit(c) | TxState::Block(c) => Some(c),
            _ => None,
        }
    }

    /// Lets `transaction_isolation` and `transaction_read_only` show the
    /// current transaction's characteristics.
    fn sync_transaction_settings(&mut self) {
        let current = match &self.state {
            TxState::Implicit(c) | TxState::Block(c) | TxState::Failed(Some(c)) => {
                Some((c.mode.isolation.clone(), c.mode.read_only))
            }
            TxState::Failed(None) | TxState::Idle => None,
        };
        self.settings.set_transaction(current);
    }

    /// Runs a simple-query string, sending each statement's results to
    /// `sink` as they are produced: statements run in order, stopping after
    /// the first error; outside BEGIN the whole string is one implicit
    /// transaction. Fails only when the client connection is gone.
    pub async fn run(&mut self, sql: &str, sink: &mut dyn ResultSink) -> Result<(), SinkError> {
        self.statement_started(sql);
        let result = self.run_string(sql, &[], sink, Protocol::Simple).await;
        self.statement_ended();
        result
    }

    /// The session user (`session_user`): the authenticated user, or the
    /// bootstrap superuser on a server without authentication.
    pub fn session_user(&self) -> String {
        self.identity.session().to_string()
    }

    /// Lets the session LISTEN and NOTIFY with the other sessions of its
    /// database on `hub` (after its database and pid are set).
    pub fn set_notifications(&mut self, hub: Arc<rocklake_types::notify::NotificationHub>) {
        self.notifications = Some(notify::SessionNotifications::new(
            hub,
            &self.database,
            self.pid,
        ));
    }

    /// The session's mailbox: notifications for the client, sent between
    /// transactions.
    pub fn mailbox(&self) -> Option<Arc<rocklake_types::notify::Mailbox>> {
        self.notifications.as_ref().map(|n| n.mailbox())
    }

    /// Forgets the NOTIFYs and LISTEN changes queued after `mark` (a
    /// rollback to a savepoint).
    fn forget_notifications_after(&mut self, mark: savepoints::NotifyMark) {
        if let Some(notifications) = &mut self.notifications {
            notifications.rollback_to(mark);
        }
    }

    /// Fails with 54000 when a listener has no room for the notifications
    /// of the transaction about to commit.
    fn notifications_fit(&self) -> Result<(), SqlError> {
        match &self.notifications {
            Some(notifications) => notifications.check_room(),
            None => Ok(()),
        }
    }

    /// A transaction block (or a query string outside one) ended: settings
    /// and notifications follow its outcome.
    fn block_ended(&mut self, committed: bool) {
        self.settings.end_block(committed);
        if let Some(notifications) = &mut self.notifications {
            notifications.transaction_ended(committed);
        }
    }

    /// Puts the session on the server's board of sessions as `activity`.
    pub fn set_activity(&mut self, board: Arc<ActivityBoard>, activity: Arc<SessionActivity>) {
        self.board = board;
        self.activity = Some(activity);
    }

    fn statement_started(&self, sql: &str) {
        if let Some(activity) = &self.activity {
            rocklake_types::activity::enter(activity);
            activity.statement_started(sql, self.status() == TxStatus::Idle);
        }
    }

    /// A transaction ended, committed or rolled back: its settings stay
    /// or are undone, and `pg_stat_database` counts it.
    fn transaction_ended(&mut self, committed: bool) {
        self.block_ended(committed);
        if let Some(activity) = &self.activity {
            activity.transaction_ended(committed);
        }
    }

    fn statement_ended(&self) {
        if let Some(activity) = &self.activity {
            activity.statement_ended(match self.status() {
                TxStatus::Idle => SessionState::Idle,
                TxStatus::InBlock => SessionState::IdleInTransaction,
                TxStatus::Failed => SessionState::IdleInTransactionAborted,
            });
        }
    }

    /// Runs a statement of the extended protocol with the values of its
    /// parameters (`$1` is `params[0]`), like [`Session::run`]. The
    /// lexer's notices were sent at Parse ([`Session::describe`]).
    pub async fn run_bound(
        &mut self,
        sql: &str,
        params: &[BindParam],
        sink: &mut dyn ResultSink,
    ) -> Result<(), SinkError> {
        self.statement_started(sql);
        let result = self.run_string(sql, params, sink, Protocol::Extended).await;
        self.statement_ended();
        result
    }

    /// [`Session::run`] and [`Session::run_bound`]. The simple protocol
    /// sends the notices of parsing `sql` first (the extended one sent them
    /// at Parse), and completes the last statement after the implicit
    /// transaction commits (the extended one commits at Sync, after it).
    async fn run_string(
        &mut self,
        sql: &str,
        params: &[BindParam],
        sink: &mut dyn ResultSink,
        protocol: Protocol,
    ) -> Result<(), SinkError> {
        if params.is_empty() {
            match databases::parse_database_statement(sql) {
                Ok(Some(statement)) => return self.run_database_statement(&statement, sink).await,
                Ok(None) => {}
                Err(error) => {
                    self.on_error();
                    return sink.error(&error).await;
                }
            }
        }
        let parsed = parse::parse_shared(sql).and_then(|shared| {
            if params.is_empty() {
                return Ok(shared);
            }
            let mut parsed = parse::Parsed::into_owned(shared);
            for statement in &mut parsed.statements {
                crate::session::params::substitute(statement, params)?;
            }
            Ok(Arc::new(parsed))
        });
        let parsed = match parsed {
            Ok(parsed) => {
                if protocol == Protocol::Simple {
                    for notice in &parsed.notices {
                        sink.notice(notice).await?;
                    }
                }
                parsed
            }
            Err(error) => {
                self.on_error();
                return sink.error(&error).await;
            }
        };
        let Some((last, first)) = parsed.statements.split_last() else {
            return Ok(());
        };
        // Several statements are one implicit transaction block (a new one
        // after a COMMIT among them), which a failure rolls back with the
        // settings it changed.
        let several = !first.is_empty();
        for statement in first {
            self.implicit_block(several);
            if !self.run_in_string(statement, sink).await? {
                return Ok(());
            }
        }
        self.implicit_block(several);
        match protocol {
            Protocol::Simple => {
                let mut held = HeldCompletion::new(sink);
                if !self.run_in_string(last, &mut held).await? {
                    return Ok(());
                }
                match self.commit_implicit().await {
                    Ok(()) => held.release().await,
                    Err(error) => held.fail(&error).await,
                }
            }
            Protocol::Extended => {
                if !self.run_in_string(last, sink).await? {
                    return Ok(());
                }
                if let Err(error) = self.commit_implicit().await {
                    sink.error(&error).await?;
                }
                Ok(())
            }
        }
    }

    /// Before a statement of a string of `several`: outside a transaction
    /// block, the string's implicit block begins.
    fn implicit_block(&mut self, several: bool) {
        if several && matches!(self.state, TxState::Idle) {
            self.settings.begin_block();
        }
    }

    /// Commits the implicit transaction of a query string, if any, under
    /// the statement timeout and interrupts.
    async fn commit_implicit(&mut self) -> Result<(), SqlError> {
        self.interrupt
            .start_statement(self.settings.duration("statement_timeout"));
        let finished = within(self.interrupt.clone(), self.finish_implicit()).await;
        self.interrupt.end_statement();
        finished
    }

    /// Runs one statement of a query string; `Ok(false)` when it failed
    /// (its error was sent), which ends the string.
    async fn run_in_string(
        &mut self,
        statement: &Statement,
        sink: &mut dyn ResultSink,
    ) -> Result<bool, SinkError> {
        let budget = MemoryBudget::new(self.memory_limit);
        self.interrupt
            .start_statement(self.settings.duration("statement_timeout"));
        // Waits below the engine (storage) hear the interrupt too.
        let interrupt = self.interrupt.clone();
        let outcome = within(interrupt, self.run_one(statement, &budget, sink)).await;
        self.interrupt.end_statement();
        match outcome {
            Ok(()) => Ok(true),
            Err(Failure::Statement(error)) => {
                self.on_error();
                sink.error(&error).await?;
                Ok(false)
            }
            Err(Failure::Connection(reason)) => {
                self.on_error();
                Err(SinkError::Connection(reason))
            }
        }
    }

    /// Runs a simple-query string and collects its results (for tests and
    /// tools; a COPY FROM STDIN in it gets no data).
    pub async fn execute(&mut self, sql: &str) -> BatchResult {
        let mut sink = CollectSink::new();
        match self.run(sql, &mut sink).await {
            Ok(()) => sink.into_results(),
            Err(e) => vec![Err(SqlError::internal(format!("{e:?}")))],
        }
    }

    /// Commits the implicit transaction of a finished query string, if any.
    async fn finish_implicit(&mut self) -> Result<(), SqlError> {
        match std::mem::replace(&mut self.state, TxState::Idle) {
            TxState::Implicit(ctx) => {
                if let Err(error) = self.notifications_fit() {
                    drop(ctx);
                    self.transaction_ended(false);
                    return Err(error);
                }
                let committed = ctx.txn.commit().await;
                self.transaction_ended(committed.is_ok());
                committed
            }
            TxState::Idle => {
                let fits = self.notifications_fit();
                self.block_ended(fits.is_ok());
                fits
            }
            other => {
                self.state = other;
                Ok(())
            }
        }
    }

    /// Runs one statement, sending its results to `sink`.
    async fn run_one(
        &mut self,
        stmt: &Statement,
        budget: &MemoryBudget,
        sink: &mut dyn ResultSink,
    ) -> Result<(), Failure> {
        self.sync_transaction_settings();
        self.settings.install_time_zone();
        if !matches!(self.state, TxState::Failed(_)) {
            if let Some(outcome) = self.run_role_statement(stmt).await {
                return send_output(outcome?, sink).await;
            }
        }
        let output = match stmt {
            Statement::StartTransaction { modes, .. } => self.begin(modes).await?,
            Statement::Commit { chain: false, .. } => self.commit().await?,
            Statement::Rollback {
                chain: false,
                savepoint: None,
            } => {
                self.savepoints.clear();
                match std::mem::replace(&mut self.state, TxState::Idle) {
                    TxState::Idle => {
                        // A query string's implicit block still ends.
                        self.block_ended(false);
                        no_transaction("ROLLBACK")
                    }
                    _ => {
                        self.transaction_ended(false);
                        QueryOutput::command("ROLLBACK")
                    }
                }
            }
            Statement::Rollback {
                chain: false,
                savepoint: Some(name),
            } => self.rollback_to_savepoint(&fold(name))?,
            _ if matches!(self.state, TxState::Failed(_)) => return Err(aborted().into()),
            Statement::Savepoint { name } => {
                self.in_block("SAVEPOINT")?;
                let mark = self
                    .notifications
                    .as_ref()
                    .map(|n| n.mark())
                    .unwrap_or_default();
                self.savepoints.set(fold(name), mark);
                QueryOutput::command("SAVEPOINT")
            }
            Statement::ReleaseSavepoint { name } => {
                self.in_block("RELEASE SAVEPOINT")?;
                self.savepoints.release(&fold(name))?;
                QueryOutput::command("RELEASE")
            }
            Statement::Discard { object_type } => self.discard(stmt, object_type)?,
            Statement::LISTEN { channel } => {
                let channel = notify::channel_name(channel)?;
                self.notifications_mut("LISTEN")?.listen(channel);
                QueryOutput::command("LISTEN")
            }
            Statement::UNLISTEN { channel } => {
                let all = channel.quote_style.is_none() && channel.value == "*";
                let channel = if all {
                    None
                } else {
                    Some(notify::channel_name(channel)?)
                };
                self.notifications_mut("UNLISTEN")?.unlisten(channel);
                QueryOutput::command("UNLISTEN")
            }
            Statement::NOTIFY { channel, payload } => {
                let channel = notify::channel_name(channel)?;
                let payload = payload.clone().unwrap_or_default();
                self.notifications_mut("NOTIFY")?.notify(channel, payload)?;
                QueryOutput::command("NOTIFY")
            }
            Statement::Deallocate { name, .. } => {
                let all = name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all");
                self.deallocations.push(if all {
                    Deallocate::All
                } else {
                    Deallocate::Named(fold(name))
                });
                QueryOutput::command(if all { "DEALLOCATE ALL" } else { "DEALLOCATE" })
            }
            Statement::Set(Set::SetTransaction {
                modes,
                snapshot,
                session,
            }) => {
                if snapshot.is_some() {
                    return Err(SqlError::unsupported("SET TRANSACTION SNAPSHOT").into());
                }
                if *session {
                    self.set_session_characteristics(modes)?
                } else {
                    self.set_transaction(modes, true)?
                }
            }
            Statement::Set(set) => match transaction::transaction_setting(set)? {
                Some(modes) => self.set_transaction(&modes, false)?,
                None => settings::set(&mut self.settings, set)?,
            },
            Statement::Reset(reset) => settings::reset(&mut self.settings, &reset.reset),
            Statement::ShowVariable { variable } => settings::show(&self.settings, variable)?,
            Statement::Call(function) if maintenance::parse_call(function)?.is_some() => {
                let command = maintenance::parse_call(function)?.expect("checked above");
                if !matches!(self.state, TxState::Idle) {
                    return Err(SqlError::new(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        format!("{stmt} cannot run inside a transaction block"),
                    )
                    .into());
                }
                if command.changes_lake() {
                    let roles = self.roles.current();
                    self.identity
                        .who(&roles, self.roles.enforced())
                        .check_database_owner(&self.database)?;
                }
                maintenance::run(self.storage.as_ref(), command).await?
            }
            _ => return self.run_statement(stmt, budget, sink).await,
        };
        send_output(output, sink).await
    }

    /// Runs a statement that reads or writes data in the transaction (an
    /// implicit one outside a block), refused in a read-only transaction
    /// when it writes; a statement that wrote leaves no way back to earlier
    /// savepoints.
    async fn run_statement(
        &mut self,
        stmt: &Statement,
        budget: &MemoryBudget,
        sink: &mut dyn ResultSink,
    ) -> Result<(), Failure> {
        let nothing_ran = matches!(
            &self.state,
            TxState::Block(ctx) | TxState::Implicit(ctx) if !ctx.queried
        );
        if let TxState::Idle = self.state {
            let ctx = self.begin_ctx(self.default_mode()).await?;
            self.state = TxState::Implicit(ctx);
        } else if nothing_ran {
            self.take_snapshot().await?;
        }
        let ctx = self
            .ctx_mut()
            .ok_or_else(|| SqlError::internal("no transaction"))?;
        if ctx.mode.read_only {
            if let Some(command) = transaction::write_command(stmt) {
                return Err(SqlError::read_only(&command).into());
            }
        }
        ctx.queried = true;
        let writes_before = ctx.writes.get();
        let result = self.run_in_txn(stmt, budget, sink).await;
        // A statement that wrote (also one that failed after it began
        // writing) leaves no way back to earlier savepoints.
        if self.ctx_mut().map(|c| c.writes.get()) != Some(writes_before) {
            self.savepoints.note_change();
        }
        if result.is_ok() {
            self.apply_setting_changes()?;
        }
        self.take_statement_notifications(result.is_ok())?;
        result
    }

    /// Gives a transaction block its snapshot at its first statement that
    /// reads or writes data, as PostgreSQL does, not at `BEGIN`: commits
    /// made between the two are visible to it, and the storage transaction
    /// begins with the characteristics set until then (`SET TRANSACTION
    /// READ WRITE` after a read-only `BEGIN`). So a DuckLake commit, which
    /// sends `BEGIN` and describes its first query before running it, reads
    /// the latest snapshot as late as on PostgreSQL, and a concurrent commit
    /// in between does not make it conflict. The block keeps its
    /// characteristics. Its `now()` becomes the snapshot's time (PostgreSQL
    /// keeps `BEGIN`'s): a commit's `now()` is then later than that of every
    /// commit its snapshot sees, so DuckLake's snapshot times grow with
    /// their ids, as they did when the snapshot was taken at `BEGIN`.
    async fn take_snapshot(&mut self) -> Result<(), SqlError> {
        let Some(ctx) = self.ctx_mut() else {
            return Ok(());
        };
        let mode = ctx.mode.clone();
        let fresh = self.begin_ctx(mode).await?;
        if let Some(ctx) = self.ctx_mut() {
            *ctx = fresh;
        }
        Ok(())
    }

    /// The prepared statements DEALLOCATE dropped since the last call.
    pub fn take_deallocations(&mut self) -> Vec<Deallocate> {
        std::mem::take(&mut self.deallocations)
    }

    async fn ensure_catalog(&mut self) -> Result<(), SqlError> {
        let generation = self.settings.generation();
        let role_view = self.role_view();
        let ctx = match &mut self.state {
            TxState::Implicit(c) | TxState::Block(c) => c,
            _ => return Err(SqlError::internal("no transaction")),
        };
        // Settings changed since the catalog was loaded (SET, SET
        // TRANSACTION in this transaction): `pg_settings` and
        // `current_setting()` show them.
        if ctx.settings_seen != generation {
            ctx.settings_seen = generation;
            if let Some(catalog) = ctx.catalog.as_mut() {
                catalog.settings = self.settings.snapshot();
            }
        }
        // So do roles changed since (SET ROLE, CREATE ROLE).
        if let Some(catalog) = ctx.catalog.as_mut() {
            if !Arc::ptr_eq(&catalog.roles, &role_view) {
                catalog.roles = role_view.clone();
            }
        }
        if ctx.catalog.is_none() {
            let settings = self.settings.snapshot();
            let database = self.database.clone();
            let (databases, generation) = match &self.databases {
                Some(dbs) => (dbs.names(), dbs.generation()),
                None => (vec![database.clone()], 0),
            };
            // Results kept for a version must not outlive a database created
            // or dropped since: the generation joins the version.
            let version = ctx
                .txn
                .catalog_version()
                .await?
                .map(|version| version + (generation << 40));
            let at_version = |lists: &CatalogLists| Some(lists.version) == version;
            let own = self.known_catalog.clone().filter(at_version);
            // The server's shared lists only when the session's own are not
            // of this version (a lock, taken once per new version).
            let shared = match own {
                Some(_) => None,
                None => self.catalog_results.lists(&self.database),
            };
            let known = own.or_else(|| shared.clone().filter(at_version));
            let (relations, schemas, indexes) = match known {
                Some(known) => {
                    let lists = (
                        known.relations.clone(),
                        known.schemas.clone(),
                        known.indexes.clone(),
                    );
                    self.known_catalog = Some(known);
                    lists
                }
                None => {
                    let relations = ctx.txn.relations().await?;
                    let schemas = Arc::new(ctx.txn.schemas().await?);
                    // A newer version, or the catalog after this
                    // transaction's own DDL, usually adds relations to the
                    // last list: its indexes are extended, not rebuilt.
                    let base = self
                        .last_indexes
                        .clone()
                        .or_else(|| shared.map(|lists| (lists.relations, lists.indexes)));
                    let indexes = Arc::new(match base {
                        Some((list, indexes)) => RelationIndexes::following(list, indexes),
                        None => RelationIndexes::default(),
                    });
                    if let Some(version) = version {
                        let lists = CatalogLists {
                            version,
                            relations: relations.clone(),
                            schemas: schemas.clone(),
                            indexes: indexes.clone(),
                        };
                        self.catalog_results
                            .keep_lists(&self.database, lists.clone());
                        self.known_catalog = Some(lists);
                    }
                    (relations, schemas, indexes)
                }
            };
            self.last_indexes = Some((relations.clone(), indexes.clone()));
            ctx.catalog = Some(Catalog {
                relations,
                schemas,
                database,
                databases,
                settings,
                setting_changes: Default::default(),
                notifications: Default::default(),
                listening: self.notifications.as_ref().map(|n| (n.mailbox(), n.hub())),
                inserted_snapshots: self.notifications.as_ref().and_then(|n| n.snapshot_sink()),
                indexes,
                roles: role_view,
                activity: self.board.clone(),
                backend_pid: self.pid,
            });
            ctx.catalog_version = version;
        }
        Ok(())
    }

    /// The session's LISTEN/NOTIFY side; `command` is refused on a hot
    /// standby, as PostgreSQL refuses it during recovery, and in a session
    /// of no server.
    fn notifications_mut(
        &mut self,
        command: &str,
    ) -> Result<&mut notify::SessionNotifications, SqlError> {
        if self.settings.get("in_hot_standby").map(|(_, value)| value) == Some("on".to_string()) {
            return Err(SqlError::new(
                SqlState::READ_ONLY_SQL_TRANSACTION,
                format!("cannot execute {command} during recovery"),
            ));
        }
        self.notifications
            .as_mut()
            .ok_or_else(|| SqlError::unsupported(format!("{command} outside a server")))
    }

    /// Moves what the last statement queued with `pg_notify()` and the
    /// DuckLake commit rows it inserted into the transaction (forgotten
    /// when it failed).
    fn take_statement_notifications(&mut self, succeeded: bool) -> Result<(), SqlError> {
        let queued = match &self.state {
            TxState::Implicit(c) | TxState::Block(c) => c.catalog.as_ref().map(|catalog| {
                std::mem::take(
                    &mut *catalog
                        .notifications
                        .lock()
                        .unwrap_or_else(|e| e.into_inner()),
                )
            }),
            _ => None,
        }
        .unwrap_or_default();
        let Some(notifications) = &mut self.notifications else {
            return Ok(());
        };
        if !succeeded {
            notifications.statement_failed();
            return Ok(());
        }
        notifications.statement_succeeded();
        for (channel, payload) in queued {
            notifications.notify(channel, payload)?;
        }
        Ok(())
    }

    /// Applies the settings the last statement changed with `set_config()`
    /// (for the rest of the session, also when asked for the transaction
    /// only).
    fn apply_setting_changes(&mut self) -> Result<(), SqlError> {
        let catalog = match &mut self.state {
            TxState::Implicit(c) | TxState::Block(c) => c.catalog.as_mut(),
            _ => None,
        };
        let Some(catalog) = catalog else {
            return Ok(());
        };
        let changes = std::mem::take(
            &mut *catalog
                .setting_changes
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        if changes.is_empty() {
            return Ok(());
        }
        for (name, value) in changes {
            self.settings.set(&name, value)?;
        }
        catalog.settings = self.settings.snapshot();
        Ok(())
    }

    /// Runs a statement that needs the transaction (queries, DML, DDL, COPY).
    async fn run_in_txn(
        &mut self,
        stmt: &Statement,
        budget: &MemoryBudget,
        sink: &mut dyn ResultSink,
    ) -> Result<(), Failure> {
        self.ensure_catalog().await?;
        let pid = self.pid;
        let interrupt = self.interrupt.clone();
        let ctx = match &mut self.state {
            TxState::Implicit(c) | TxState::Block(c) => c,
            _ => return Err(SqlError::internal("no transaction").into()),
        };
        let ddl_output = match stmt {
            Statement::CreateTable(ct) => {
                // Column defaults are evaluated against the catalog as it
                // was before the table exists.
                let def = {
                    let env = stmt_env(
                        &ctx.catalog,
                        (ctx.now, ctx.mode.read_only),
                        pid,
                        budget,
                        &interrupt,
                    )?;
                    ddl::relation_def(ct, Some(&env))?
                };
                ctx.catalog = None;
                Some(ddl::create_table(ctx.txn.as_mut(), def, ct.if_not_exists).await?)
            }
            Statement::CreateSchema {
                schema_name,
                if_not_exists,
                ..
            } => {
                ctx.catalog = None;
                Some(ddl::create_schema(ctx.txn.as_mut(), schema_name, *if_not_exists).await?)
            }
            Statement::Drop {
                object_type: ObjectType::Table,
                if_exists,
                names,
                cascade: false,
                ..
            } => {
                ctx.catalog = None;
                Some(ddl::drop_tables(ctx.txn.as_mut(), &self.database, names, *if_exists).await?)
            }
            Statement::Drop {
                object_type: ObjectType::Schema,
                if_exists,
                names,
                cascade,
                ..
            } => {
                ctx.catalog = None;
                Some(ddl::drop_schemas(ctx.txn.as_mut(), names, *if_exists, *cascade).await?)
            }
            _ => None,
        };
        if let Some(output) = ddl_output {
            return send_output(output, sink).await;
        }
        let env = stmt_env(
            &ctx.catalog,
            (ctx.now, ctx.mode.read_only),
            pid,
            budget,
            &interrupt,
        )?;
        let txn = ctx.txn.as_mut();
        // Catalog query results are shared for catalogs at a known version
        // (not one this transaction changed, nor one with temporary tables).
        let shared = ctx
            .catalog_version
            .map(|version| (version, &*self.catalog_results));
        let output = match stmt {
            Statement::Query(q) => match q.body.as_ref() {
                SetExpr::Update(Statement::Update(u)) => dml::update(txn, &env, u, Some(q)).await?,
                SetExpr::Insert(_)
                | SetExpr::Delete(_)
                | SetExpr::Update(_)
                | SetExpr::Merge(_) => {
                    return Err(
                        SqlError::unsupported(format!("statement not supported: {stmt}")).into(),
                    )
                }
                _ => return query::run(txn, &env, q, shared, sink, Destination::Rows).await,
            },
            Statement::Insert(i) => dml::insert(txn, &env, i).await?,
            Statement::Update(u) => dml::update(txn, &env, u, None).await?,
            Statement::Delete(d) => dml::delete(txn, &env, d).await?,
            Statement::AlterTable(at) => crate::write::alter::alter_table(txn, &env, at).await?,
            Statement::Copy { .. } => return copy_statement(txn, &env, stmt, shared, sink).await,
            Statement::Drop { .. } => {
                return Err(SqlError::unsupported(format!(
                    "DROP is not supported by RockLake: {stmt}"
                ))
                .into())
            }
            other => {
                return Err(
                    SqlError::unsupported(format!("statement not supported: {other}")).into(),
                )
            }
        };
        if matches!(stmt, Statement::AlterTable(_)) {
            ctx.catalog = None;
        }
        send_output(output, sink).await
    }
}

/// Sends a statement's finished output (commands, collected results).
async fn send_output(output: QueryOutput, sink: &mut dyn ResultSink) -> Result<(), Failure> {
    rocklake_types::output::send_results(vec![Ok(output)], sink).await?;
    Ok(())
}

/// The environment a statement of a transaction is bound and run in: the
/// transaction's catalog (loaded) and time, the backend, the limits.
fn stmt_env<'a>(
    catalog: &'a Option<Catalog>,
    (now, read_only): (i64, bool),
    pid: i32,
    budget: &'a MemoryBudget,
    interrupt: &'a Interrupt,
) -> Result<StmtEnv<'a>, SqlError> {
    let cat = catalog
        .as_ref()
        .ok_or_else(|| SqlError::internal("catalog not loaded"))?;
    Ok(StmtEnv {
        cat,
        now,
        pid,
        limits: Limits {
            budget,
            interrupt: Some(interrupt),
        },
        read_only,
    })
}
