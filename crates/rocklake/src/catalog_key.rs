//! How every command that opens a catalog takes its keys (see
//! `rocklake_store::encryption` and docs/encryption.md).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use rocklake_store::CatalogKeys;

/// Catalog encryption keys.
#[derive(clap::Args, Debug, Default)]
pub struct CatalogKeyArgs {
    /// Encrypt the catalogs with the key in FILE: text, one key per line
    /// (64 hex digits or base64 of 32 bytes; `rocklake new-catalog-key`
    /// makes one), or exactly 32 raw bytes. Several keys (text): the first
    /// seals new blocks, all open existing ones (key rotation). A new catalog is then always encrypted; an encrypted one
    /// cannot be opened without one of its keys.
    #[arg(long, value_name = "FILE", conflicts_with = "catalog_key")]
    catalog_key_file: Option<PathBuf>,
    /// The keys themselves (same form, comma-separated), e.g. from a secret
    /// manager; prefer the environment variable to the command line.
    #[arg(long, env = "ROCKLAKE_CATALOG_KEY", hide_env_values = true)]
    catalog_key: Option<String>,
}

impl CatalogKeyArgs {
    /// The keys given, if any.
    pub fn keys(&self) -> anyhow::Result<Option<Arc<CatalogKeys>>> {
        let keys = match (&self.catalog_key_file, &self.catalog_key) {
            (Some(path), _) => {
                let bytes = std::fs::read(path)
                    .with_context(|| format!("reading the catalog key file {}", path.display()))?;
                CatalogKeys::from_file(&bytes)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
            }
            (None, Some(text)) => CatalogKeys::parse(text)
                .map_err(|e| anyhow::anyhow!("ROCKLAKE_CATALOG_KEY: {e}"))?,
            (None, None) => return Ok(None),
        };
        Ok(Some(Arc::new(keys)))
    }
}
