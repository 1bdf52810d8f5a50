//! The `rocklake` command line: serve a catalog, inspect its keys, benchmark it.

mod bench;
mod catalog_key;
mod catalog_sql;
mod hygiene;
mod keys;
mod lifecycle;
mod maintain;
mod observe;
mod security;
mod serve;
mod status_page;
mod transfer;

use clap::{Parser, Subcommand};

/// RockLake: a DuckLake catalog on SlateDB, served over the PostgreSQL wire protocol.
#[derive(Parser)]
#[command(name = "rocklake", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once at start-up: the size of the serve arguments does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Serve a catalog over the PostgreSQL wire protocol.
    Serve(serve::ServeArgs),
    /// Dump every key of a catalog as hex, with its fields and its value
    /// decoded.
    Keys {
        #[command(flatten)]
        lake: keys::LakeChoice,
        #[command(flatten)]
        keys: catalog_key::CatalogKeyArgs,
        /// Only keys of this tag: a tag name (`snapshot`, `column`,
        /// `system`), a catalog table name (`ducklake_data_file`) or a tag
        /// byte (`0x06`).
        #[arg(long)]
        tag: Option<String>,
    },
    /// Copy a whole DuckLake catalog from another backend (PostgreSQL or
    /// SQLite) into a new RockLake lake.
    Import(transfer::ImportArgs),
    /// Copy a RockLake lake into an empty PostgreSQL database or a new
    /// SQLite file (works while a server runs).
    Export(transfer::ExportArgs),
    /// Copy every lake under a root, consistently, into a new root (from a
    /// checkpoint, or the latest state); `rocklake serve DEST` opens it.
    Backup(lifecycle::BackupArgs),
    /// Make a writable zero-copy clone of every lake under a root as of a
    /// checkpoint; it shares the parent's files and never deletes them.
    Clone(lifecycle::CloneArgs),
    /// Print a new random catalog encryption key (for --catalog-key-file).
    NewCatalogKey,
    /// Benchmark the catalog store: commit latency and scan throughput.
    BenchStore(bench::BenchArgs),
    /// Advance the retention floor of a running server: snapshots before it
    /// can no longer be read (nothing is deleted; see `excise`).
    Gc(maintain::GcArgs),
    /// Create, list or delete named checkpoints of a running server's
    /// database (the consistent states `backup` and `clone` copy).
    #[command(subcommand)]
    Checkpoint(maintain::CheckpointCommand),
    /// Physically delete, on a running server, every catalog row the
    /// retention floor gave up, and schedule the removed files for deletion.
    Excise(maintain::ServerArgs),
}

fn main() -> anyhow::Result<()> {
    // Sessions run on their own threads (see rocklake_wire::serve_until);
    // the runtime's workers get room for the store's and the server's work.
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(8 * 1024 * 1024)
        .build()?
        .block_on(run())
}

async fn run() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new(
                    "warn,rocklake_store::retention=info,rocklake::hygiene=info,rocklake::serve=info",
                )
            }),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match Cli::parse().command {
        Command::Keys { lake, keys, tag } => {
            let stdout = std::io::stdout();
            let keys = keys.keys()?;
            let count =
                keys::dump_keys(&lake, keys.as_ref(), tag.as_deref(), &mut stdout.lock()).await?;
            eprintln!("{count} keys");
        }
        Command::Import(args) => transfer::import(args).await?,
        Command::Export(args) => transfer::export(args).await?,
        Command::Backup(args) => lifecycle::backup(args).await?,
        Command::Clone(args) => lifecycle::clone(args).await?,
        Command::NewCatalogKey => println!("{}", rocklake_store::CatalogKeys::generate()),
        Command::BenchStore(args) => bench::run(args).await?,
        Command::Serve(args) => serve::run(args).await?,
        Command::Gc(args) => maintain::gc(args).await?,
        Command::Excise(args) => maintain::excise(args).await?,
        Command::Checkpoint(command) => maintain::checkpoint(command).await?,
    }
    Ok(())
}
