//! [`Session`]: one client connection's SQL state — its transaction block
//! and settings — and statement dispatch, following PostgreSQL's rules for
//! simple-query strings, implicit transactions and failed blocks. Results go
//! to a [`ResultSink`] statement by statement, rows as they are produced.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rocklake_types::datum::{timestamptz_micros, ColumnDef};
use rocklake_types::output::{BatchResult, CollectSink, Notice, QueryOutput, ResultSink, TxStatus};
use rocklake_types::params::{BindParam, Deallocate, Described};
use rocklake_types::settings::SessionIdentity;
use rocklake_types::{Interrupt, SinkError, SqlError, SqlState};
use sqlparser::ast::{
    CopySource, CopyTarget, DiscardObject, ObjectType, SetExpr, Statement, TransactionAccessMode,
    TransactionMode,
};

use crate::bind::fold;
use crate::catalog::Catalog;
use crate::copy;
use crate::databases::{self, Databases};
use crate::ddl;
use crate::depth;
use crate::dml::{self, complete_rows, copy_targets, resolve_target};
use crate::exec::memory::{MemoryBudget, DEFAULT_STATEMENT_MEMORY_LIMIT};
use crate::exec::{Limits, StmtEnv};
use crate::maintenance;
use crate::params::ParamTypes;
use crate::query::shared_results::CatalogResults;
use crate::query::{self, Destination, Failure};
use crate::savepoints::Savepoints;
use crate::settings::{self, SessionSettings};
use crate::storage::temp::TempOverlay;
use crate::storage::{RelationDef, Storage, StorageTxn};

static NEXT_PID: AtomicI32 = AtomicI32::new(10_000);

struct TxnCtx {
    txn: Box<dyn StorageTxn>,
    now: i64,
    catalog: Option<Catalog>,
    /// The storage's catalog version of `catalog` (see
    /// [`StorageTxn::catalog_version`]); `None` when this transaction changed
    /// the catalog or has temporary tables. Catalog query results are shared
    /// under it.
    catalog_version: Option<u64>,
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
    storage: Arc<dyn Storage>,
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
    known_catalog: Option<KnownCatalog>,
    /// Results of catalog queries, shared with the other sessions of a server.
    catalog_results: Arc<CatalogResults>,
}

/// Relation and schema lists kept across transactions.
struct KnownCatalog {
    version: u64,
    relations: Arc<Vec<RelationDef>>,
    schemas: Arc<Vec<String>>,
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
    /// A new idle session over `storage`.
    pub fn new(storage: Arc<dyn Storage>) -> Self {
        Self::sharing(storage, Arc::default())
    }

    /// A new idle session over `storage` that shares the results of catalog
    /// queries with the other sessions given the same `catalog_results`
    /// (those of one server, over the same storage).
    pub fn sharing(storage: Arc<dyn Storage>, catalog_results: Arc<CatalogResults>) -> Self {
        Session {
            storage,
            state: TxState::Idle,
            savepoints: Savepoints::default(),
            deallocations: Vec::new(),
            settings: SessionSettings::default(),
            database: "rocklake".into(),
            pid: NEXT_PID.fetch_add(1, Ordering::Relaxed),
            interrupt: Arc::default(),
            memory_limit: DEFAULT_STATEMENT_MEMORY_LIMIT,
            known_catalog: None,
            catalog_results,
            databases: None,
        }
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
    pub fn set_identity(&mut self, identity: SessionIdentity) {
        self.settings.set_identity(identity);
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

    /// After an error: a block becomes Failed, an implicit transaction is rolled back.
    fn on_error(&mut self) {
        self.state = match std::mem::replace(&mut self.state, TxState::Idle) {
            TxState::Block(ctx) if !self.savepoints.is_empty() => TxState::Failed(Some(ctx)),
            TxState::Block(_) => TxState::Failed(None),
            TxState::Failed(ctx) => TxState::Failed(ctx),
            TxState::Implicit(_) | TxState::Idle => {
                self.savepoints.clear();
                TxState::Idle
            }
        };
    }

    fn begin_ctx(
        &self,
        read_only: bool,
    ) -> impl std::future::Future<Output = Result<TxnCtx, SqlError>> + Send + 'static {
        let storage = self.storage.clone();
        async move {
            Ok(TxnCtx {
                txn: Box::new(TempOverlay::new(storage.begin(read_only).await?)),
                now: now_micros(),
                catalog: None,
                catalog_version: None,
            })
        }
    }

    /// Runs a simple-query string, sending each statement's results to
    /// `sink` as they are produced: statements run in order, stopping after
    /// the first error; outside BEGIN the whole string is one implicit
    /// transaction. Fails only when the client connection is gone.
    pub async fn run(&mut self, sql: &str, sink: &mut dyn ResultSink) -> Result<(), SinkError> {
        self.run_bound(sql, &[], sink).await
    }

    /// Runs a statement of the extended protocol with the values of its
    /// parameters (`$1` is `params[0]`), like [`Session::run`].
    pub async fn run_bound(
        &mut self,
        sql: &str,
        params: &[BindParam],
        sink: &mut dyn ResultSink,
    ) -> Result<(), SinkError> {
        if params.is_empty() {
            match databases::parse_drop_database(sql) {
                Ok(Some(drop)) => return self.run_drop_database(&drop, sink).await,
                Ok(None) => {}
                Err(error) => {
                    self.on_error();
                    return sink.error(&error).await;
                }
            }
        }
        let parsed = depth::parse(sql).and_then(|mut statements| {
            if !params.is_empty() {
                for statement in &mut statements {
                    crate::params::substitute(statement, params)?;
                }
            }
            Ok(statements)
        });
        let statements = match parsed {
            Ok(statements) => statements,
            Err(error) => {
                self.on_error();
                return sink.error(&error).await;
            }
        };
        for statement in &statements {
            let budget = MemoryBudget::new(self.memory_limit);
            self.interrupt
                .start_statement(self.settings.duration("statement_timeout"));
            let outcome = self.run_one(statement, &budget, sink).await;
            self.interrupt.end_statement();
            match outcome {
                Ok(()) => {}
                Err(Failure::Statement(error)) => {
                    self.on_error();
                    return sink.error(&error).await;
                }
                Err(Failure::Connection(reason)) => {
                    self.on_error();
                    return Err(SinkError::Connection(reason));
                }
            }
        }
        if let Err(error) = self.finish_implicit().await {
            sink.error(&error).await?;
        }
        Ok(())
    }

    /// Runs a `DROP DATABASE` query string.
    async fn run_drop_database(
        &mut self,
        drop: &databases::DropDatabase,
        sink: &mut dyn ResultSink,
    ) -> Result<(), SinkError> {
        let outcome = match (&self.state, &self.databases) {
            (TxState::Idle, Some(dbs)) => databases::drop(dbs.as_ref(), drop, &self.database).await,
            (TxState::Idle, None) => Err(SqlError::unsupported(
                "DROP DATABASE: this server has one database",
            )),
            (TxState::Failed(_), _) => Err(aborted()),
            _ => Err(databases::outside_block("DROP DATABASE")),
        };
        match outcome {
            Ok(output) => rocklake_types::output::send_results(vec![Ok(output)], sink).await,
            Err(error) => {
                self.on_error();
                sink.error(&error).await
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
            TxState::Implicit(ctx) => ctx.txn.commit().await,
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
        let output = match stmt {
            Statement::StartTransaction { modes, .. } => self.begin(modes).await?,
            Statement::Commit { chain: false, .. } => self.commit().await?,
            Statement::Rollback {
                chain: false,
                savepoint: None,
            } => {
                self.savepoints.clear();
                match std::mem::replace(&mut self.state, TxState::Idle) {
                    TxState::Idle => no_transaction("ROLLBACK"),
                    _ => QueryOutput::command("ROLLBACK"),
                }
            }
            Statement::Rollback {
                chain: false,
                savepoint: Some(name),
            } => self.rollback_to_savepoint(&fold(name))?,
            _ if matches!(self.state, TxState::Failed(_)) => return Err(aborted().into()),
            Statement::Savepoint { name } => {
                self.in_block("SAVEPOINT")?;
                self.savepoints.set(fold(name));
                QueryOutput::command("SAVEPOINT")
            }
            Statement::ReleaseSavepoint { name } => {
                self.in_block("RELEASE SAVEPOINT")?;
                self.savepoints.release(&fold(name))?;
                QueryOutput::command("RELEASE")
            }
            Statement::Discard { object_type } => self.discard(stmt, object_type)?,
            Statement::Deallocate { name, .. } => {
                let all = name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all");
                self.deallocations.push(if all {
                    Deallocate::All
                } else {
                    Deallocate::Named(fold(name))
                });
                QueryOutput::command(if all { "DEALLOCATE ALL" } else { "DEALLOCATE" })
            }
            Statement::CreateDatabase {
                db_name,
                if_not_exists,
                ..
            } => {
                if *if_not_exists {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        "syntax error at or near \"NOT\"",
                    )
                    .into());
                }
                if !matches!(self.state, TxState::Idle) {
                    return Err(databases::outside_block("CREATE DATABASE").into());
                }
                let Some(dbs) = &self.databases else {
                    return Err(SqlError::unsupported(
                        "CREATE DATABASE: this server has one database",
                    )
                    .into());
                };
                let name = match db_name.0.as_slice() {
                    [part] => match part.as_ident() {
                        Some(ident) => fold(ident),
                        None => {
                            return Err(
                                SqlError::unsupported(format!("database name {db_name}")).into()
                            )
                        }
                    },
                    _ => {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            format!("syntax error at or near \"{db_name}\""),
                        )
                        .into())
                    }
                };
                databases::create(dbs.as_ref(), &name).await?
            }
            Statement::Set(set) => settings::set(&mut self.settings, set)?,
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
                maintenance::run(self.storage.as_ref(), command).await?
            }
            _ => {
                if let TxState::Idle = self.state {
                    let ctx = self.begin_ctx(false).await?;
                    self.state = TxState::Implicit(ctx);
                }
                if !reads_only(stmt) {
                    self.savepoints.note_change();
                }
                let result = self.run_in_txn(stmt, budget, sink).await;
                if result.is_ok() {
                    self.apply_setting_changes()?;
                }
                return result;
            }
        };
        send_output(output, sink).await
    }

    /// The prepared statements DEALLOCATE dropped since the last call.
    pub fn take_deallocations(&mut self) -> Vec<Deallocate> {
        std::mem::take(&mut self.deallocations)
    }

    /// Fails unless inside BEGIN ... COMMIT (as PostgreSQL does for `what`).
    fn in_block(&self, what: &str) -> Result<(), SqlError> {
        match self.state {
            TxState::Block(_) => Ok(()),
            _ => Err(SqlError::new(
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                format!("{what} can only be used in transaction blocks"),
            )),
        }
    }

    /// `ROLLBACK TO SAVEPOINT name`: the transaction goes on from the
    /// savepoint, also after an error (see [`crate::savepoints`]).
    fn rollback_to_savepoint(&mut self, name: &str) -> Result<QueryOutput, SqlError> {
        match std::mem::replace(&mut self.state, TxState::Idle) {
            TxState::Block(ctx) => {
                self.state = TxState::Block(ctx);
                self.savepoints.rollback_to(name)?;
            }
            TxState::Failed(Some(ctx)) => {
                self.state = TxState::Failed(Some(ctx));
                self.savepoints.rollback_to(name)?;
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
    fn discard(
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

    async fn begin(&mut self, modes: &[TransactionMode]) -> Result<QueryOutput, SqlError> {
        let read_only = modes.iter().any(|m| {
            matches!(
                m,
                TransactionMode::AccessMode(TransactionAccessMode::ReadOnly)
            )
        });
        match std::mem::replace(&mut self.state, TxState::Idle) {
            TxState::Idle => {
                self.state = TxState::Block(self.begin_ctx(read_only).await?);
                Ok(QueryOutput::command("BEGIN"))
            }
            TxState::Implicit(ctx) => {
                self.state = TxState::Block(ctx);
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

    async fn commit(&mut self) -> Result<QueryOutput, SqlError> {
        self.savepoints.clear();
        match std::mem::replace(&mut self.state, TxState::Idle) {
            TxState::Idle => Ok(no_transaction("COMMIT")),
            TxState::Failed(_) => Ok(QueryOutput::command("ROLLBACK")),
            TxState::Block(ctx) | TxState::Implicit(ctx) => {
                ctx.txn.commit().await?;
                Ok(QueryOutput::command("COMMIT"))
            }
        }
    }

    async fn ensure_catalog(&mut self) -> Result<(), SqlError> {
        let ctx = match &mut self.state {
            TxState::Implicit(c) | TxState::Block(c) => c,
            _ => return Err(SqlError::internal("no transaction")),
        };
        if ctx.catalog.is_none() {
            let settings = self.settings.all();
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
            let (relations, schemas) = match (&self.known_catalog, version) {
                (Some(known), Some(version)) if known.version == version => {
                    (known.relations.clone(), known.schemas.clone())
                }
                _ => {
                    let relations = Arc::new(ctx.txn.relations().await?);
                    let schemas = Arc::new(ctx.txn.schemas().await?);
                    if let Some(version) = version {
                        self.known_catalog = Some(KnownCatalog {
                            version,
                            relations: relations.clone(),
                            schemas: schemas.clone(),
                        });
                    }
                    (relations, schemas)
                }
            };
            ctx.catalog = Some(Catalog {
                relations,
                schemas,
                database,
                databases,
                settings,
                setting_changes: Default::default(),
                oid_index: Default::default(),
            });
            ctx.catalog_version = version;
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
        catalog.settings = self.settings.all();
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
                    let env = stmt_env(&ctx.catalog, ctx.now, pid, budget, &interrupt)?;
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
                Some(ddl::drop_tables(ctx.txn.as_mut(), names, *if_exists).await?)
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
        let env = stmt_env(&ctx.catalog, ctx.now, pid, budget, &interrupt)?;
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
            Statement::AlterTable(at) => crate::alter::alter_table(txn, &env, at).await?,
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

    /// Parse + Describe: the result columns of a statement without running
    /// it, and the types of its parameters (`declared` by Parse, 0 where not
    /// given, the others inferred from their use). Statements without a
    /// result set describe as no columns.
    pub async fn describe(&mut self, sql: &str, declared: &[u32]) -> Result<Described, SqlError> {
        let mut stmts = depth::parse(sql)?;
        if stmts.len() > 1 {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        let Some(stmt) = stmts.first_mut() else {
            return Ok(Described {
                params: declared.to_vec(),
                columns: Vec::new(),
            });
        };
        let mut params = ParamTypes::new(declared, crate::params::count(stmt)?);
        let binds = matches!(
            stmt,
            Statement::Query(_)
                | Statement::Insert(_)
                | Statement::Update(_)
                | Statement::Delete(_)
        );
        if !binds {
            return Ok(Described {
                params: params.resolved(),
                columns: Vec::new(),
            });
        }
        let temp = match self.state {
            TxState::Failed(_) => return Err(aborted()),
            TxState::Idle => {
                self.state = TxState::Implicit(self.begin_ctx(true).await?);
                true
            }
            _ => false,
        };
        let result = self.describe_statement(stmt, &mut params).await;
        if temp {
            self.state = TxState::Idle;
        }
        Ok(Described {
            columns: result?,
            params: params.resolved(),
        })
    }

    async fn describe_statement(
        &mut self,
        stmt: &Statement,
        params: &mut ParamTypes,
    ) -> Result<Vec<ColumnDef>, SqlError> {
        self.ensure_catalog().await?;
        let ctx = match &self.state {
            TxState::Implicit(c) | TxState::Block(c) => c,
            _ => return Err(SqlError::internal("no transaction")),
        };
        let cat = ctx
            .catalog
            .as_ref()
            .ok_or_else(|| SqlError::internal("catalog not loaded"))?;
        crate::prepare::describe(cat, ctx.now, self.pid, stmt, params)
    }
}

/// Sends a statement's finished output (commands, collected results).
async fn send_output(output: QueryOutput, sink: &mut dyn ResultSink) -> Result<(), Failure> {
    rocklake_types::output::send_results(vec![Ok(output)], sink).await?;
    Ok(())
}

/// Runs a COPY statement: `COPY (query) TO STDOUT` sends the query's rows
/// as binary COPY data; `COPY table FROM STDIN` asks the client for its rows
/// and inserts them.
async fn copy_statement(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    stmt: &Statement,
    shared: Option<(u64, &CatalogResults)>,
    sink: &mut dyn ResultSink,
) -> Result<(), Failure> {
    let Statement::Copy {
        source,
        to,
        target,
        options,
        legacy_options,
        ..
    } = stmt
    else {
        return Err(SqlError::internal("not a COPY statement").into());
    };
    if *to {
        let format = copy::copy_format(options, legacy_options)?;
        return match (target, source) {
            (CopyTarget::Stdout, CopySource::Query(q)) => {
                query::run(txn, env, q, shared, sink, Destination::CopyOut(&format)).await
            }
            (
                CopyTarget::Stdout,
                CopySource::Table {
                    table_name,
                    columns,
                },
            ) => {
                let q = table_query(table_name, columns)?;
                query::run(txn, env, &q, shared, sink, Destination::CopyOut(&format)).await
            }
            _ => Err(SqlError::unsupported(format!("COPY form not supported: {stmt}")).into()),
        };
    }
    let format = copy::copy_format(options, legacy_options)?;
    match (to, target, source) {
        (
            false,
            CopyTarget::Stdin,
            CopySource::Table {
                table_name,
                columns,
            },
        ) => {
            let def: RelationDef = resolve_target(env.cat, table_name)?;
            let targets = copy_targets(&def, columns)?;
            let cols: Vec<ColumnDef> = targets.iter().map(|&i| def.columns[i].clone()).collect();
            let rows = sink.copy_in(&cols, &format).await??;
            let full = complete_rows(&def, &targets, rows)?;
            let n = full.len();
            env.limits.unless_stopped(txn.insert(&def, full)).await?;
            sink.complete(&format!("COPY {n}"), &[]).await?;
            Ok(())
        }
        _ => Err(SqlError::unsupported(format!("COPY form not supported: {stmt}")).into()),
    }
}

/// `COPY table [(columns)] TO STDOUT` as the query it stands for.
fn table_query(
    table: &sqlparser::ast::ObjectName,
    columns: &[sqlparser::ast::Ident],
) -> Result<sqlparser::ast::Query, SqlError> {
    let list = match columns {
        [] => "*".to_string(),
        columns => columns
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    };
    match depth::parse(&format!("SELECT {list} FROM {table}"))?.pop() {
        Some(Statement::Query(q)) => Ok(*q),
        _ => Err(SqlError::internal("COPY table did not make a query")),
    }
}

/// Whether a statement only reads (queries, SHOW): statements that may
/// change data make earlier savepoints unrecoverable.
fn reads_only(stmt: &Statement) -> bool {
    match stmt {
        Statement::Query(q) => !matches!(
            q.body.as_ref(),
            SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Merge(_)
        ),
        Statement::ShowVariable { .. } | Statement::Explain { .. } => true,
        _ => false,
    }
}

/// The environment a statement of a transaction is bound and run in: the
/// transaction's catalog (loaded) and time, the backend, the limits.
fn stmt_env<'a>(
    catalog: &'a Option<Catalog>,
    now: i64,
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
    })
}
