//! The catalog's on-disk format versions, and which of them a catalog may
//! have (the `format-version` system key).

use rocklake_codec::keys::SystemKey;
use slatedb::DbReadOps;

use crate::error::{StoreError, StoreResult};
use crate::reader::Reads;

/// On-disk format version this build writes. It also opens format 1
/// catalogs, which its writer upgrades (see [`crate::upgrade`]).
pub const FORMAT_VERSION: u64 = 2;

/// The format version before placements were recorded.
pub const FORMAT_WITHOUT_PLACEMENTS: u64 = 1;

/// Fails unless this build reads catalogs of `format`.
pub fn check_readable(format: u64) -> StoreResult<()> {
    if format != FORMAT_VERSION && format != FORMAT_WITHOUT_PLACEMENTS {
        return Err(StoreError::FormatVersion {
            found: format,
            supported: FORMAT_VERSION,
        });
    }
    Ok(())
}

/// The catalog's format version (a new catalog takes this build's),
/// refused unless this build reads it.
pub(crate) async fn stored_format<R: DbReadOps + Sync>(reads: &Reads<'_, R>) -> StoreResult<u64> {
    let format = reads
        .get_u64(&SystemKey::FormatVersion.key())
        .await?
        .unwrap_or(FORMAT_VERSION);
    check_readable(format)?;
    Ok(format)
}
