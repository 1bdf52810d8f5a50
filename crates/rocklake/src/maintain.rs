//! `rocklake gc`, `rocklake excise` and `rocklake checkpoint`: maintenance
//! through the running server.
//!
//! The catalog has a single writer (a second one would fence the server), so
//! these commands do not open the catalog themselves: they connect to the
//! server like any PostgreSQL client and call its maintenance procedures
//! (`CALL rocklake_retain_from(...)`, `CALL rocklake_excise()`), which any
//! PostgreSQL client such as psql can also call. Each database (the one the
//! connection names) and each schema lake is maintained on its own; a
//! checkpoint is made in every lake of the database at once. Only the
//! writer can make a checkpoint that holds every acknowledged commit (it
//! flushes them first), which is why checkpoints are made by the server.

use clap::Args;
use tokio_postgres::{NoTls, SimpleQueryMessage};

/// Where the running server is, and the lake to maintain.
#[derive(Args, Debug)]
pub struct ServerArgs {
    #[command(flatten)]
    pub server: Server,
    /// Maintain the lake of this METADATA_SCHEMA instead of the database's
    /// home lake (the database is the one `dbname` names).
    #[arg(long)]
    pub schema: Option<String>,
}

/// Where the running server is.
#[derive(Args, Debug)]
pub struct Server {
    /// Connection string of the running server (libpq key=value form). A
    /// password may be given in it or in ROCKLAKE_PASSWORD; the connection is
    /// not encrypted, so over TLS-only listeners use psql with the same CALL.
    #[arg(
        long,
        default_value = "host=127.0.0.1 port=5432 user=rocklake dbname=lake"
    )]
    pub dsn: String,
}

impl ServerArgs {
    /// The extra procedure argument that names the schema lake, if any.
    fn schema_argument(&self) -> String {
        match &self.schema {
            Some(schema) => format!("'{}'", schema.replace('\'', "''")),
            None => String::new(),
        }
    }
}

/// Arguments of `rocklake gc`.
#[derive(Args, Debug)]
pub struct GcArgs {
    /// Oldest snapshot to keep readable: a snapshot id (e.g. 120) or an age
    /// (e.g. 30m, 12h, 7d: keep what was current that long ago and since).
    #[arg(long)]
    pub retain_from: String,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `rocklake gc --retain-from SPEC`: advances the retention floor.
pub async fn gc(args: GcArgs) -> anyhow::Result<()> {
    let spec = args.retain_from.replace('\'', "''");
    let rows = call(
        &args.server.server,
        &match args.server.schema_argument() {
            schema if schema.is_empty() => format!("CALL rocklake_retain_from('{spec}')"),
            schema => format!("CALL rocklake_retain_from('{spec}', {schema})"),
        },
    )
    .await?;
    print_rows(&rows);
    Ok(())
}

/// `rocklake excise`: deletes what the retention floor gave up.
pub async fn excise(args: ServerArgs) -> anyhow::Result<()> {
    let statement = format!("CALL rocklake_excise({})", args.schema_argument());
    let rows = call(&args.server, &statement).await?;
    print_rows(&rows);
    Ok(())
}

/// What `rocklake checkpoint` does.
#[derive(clap::Subcommand, Debug)]
pub enum CheckpointCommand {
    /// Pin the current state of every lake of the database under NAME
    /// (kept from SlateDB's garbage collection and `excise` until deleted).
    Create {
        /// The checkpoint's name (letters, digits, `_`, `-`, `.`).
        name: String,
        #[command(flatten)]
        server: Server,
    },
    /// List the checkpoints of every lake of the database.
    List {
        #[command(flatten)]
        server: Server,
    },
    /// Delete the checkpoint NAME from every lake of the database.
    Delete {
        /// The checkpoint's name.
        name: String,
        #[command(flatten)]
        server: Server,
    },
}

/// `rocklake checkpoint create|list|delete`.
pub async fn checkpoint(command: CheckpointCommand) -> anyhow::Result<()> {
    let quoted = |name: &str| format!("'{}'", name.replace('\'', "''"));
    let (server, statement) = match &command {
        CheckpointCommand::Create { name, server } => (
            server,
            format!("CALL rocklake_checkpoint({})", quoted(name)),
        ),
        CheckpointCommand::List { server } => (server, "CALL rocklake_checkpoints()".to_string()),
        CheckpointCommand::Delete { name, server } => (
            server,
            format!("CALL rocklake_drop_checkpoint({})", quoted(name)),
        ),
    };
    print_rows(&call(server, &statement).await?);
    Ok(())
}

/// Runs one statement on the server and returns its (item, value) rows.
async fn call(server: &Server, statement: &str) -> anyhow::Result<Vec<(String, String)>> {
    let mut config: tokio_postgres::Config = server
        .dsn
        .parse()
        .map_err(|e| anyhow::anyhow!("invalid --dsn {:?}: {e}", server.dsn))?;
    if config.get_user().is_none() {
        // libpq's default: the operating-system user name.
        config.user(std::env::var("USER").unwrap_or_else(|_| "rocklake".to_string()));
    }
    if config.get_password().is_none() {
        if let Ok(password) = std::env::var("ROCKLAKE_PASSWORD") {
            config.password(password);
        }
    }
    let (client, connection) = config.connect(NoTls).await.map_err(|e| {
        anyhow::anyhow!("cannot reach the RockLake server at {:?}: {e}", server.dsn)
    })?;
    let driver = tokio::spawn(connection);
    let messages = client
        .simple_query(statement)
        .await
        .map_err(|e| match e.as_db_error() {
            Some(db) => anyhow::anyhow!(
                "{statement} failed: {} (SQLSTATE {})",
                db.message(),
                db.code().code()
            ),
            None => anyhow::anyhow!("{statement} failed: {e}"),
        })?;
    drop(client);
    let _ = driver.await;
    Ok(messages
        .into_iter()
        .filter_map(|message| match message {
            SimpleQueryMessage::Row(row) => Some((
                row.get(0).unwrap_or_default().to_string(),
                row.get(1).unwrap_or_default().to_string(),
            )),
            _ => None,
        })
        .collect())
}

fn print_rows(rows: &[(String, String)]) {
    let width = rows.iter().map(|(item, _)| item.len()).max().unwrap_or(0);
    for (item, value) in rows {
        println!("{item:<width$}  {value}");
    }
}
