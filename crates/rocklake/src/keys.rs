//! `rocklake keys`: dumps a catalog's keys in hex with every field decoded.

use std::io::Write;

use rocklake_codec::keys::{decode_key, hex_key};
use rocklake_codec::tags::Tag;
use rocklake_store::{CatalogStore, StoreLocation};

/// Prints one line per key: hex (fields separated by `|`), then the decoded
/// form, e.g. `06 | 0000000000000005 | ... -> column table_id=5 column_id=1 begin_snapshot=3`.
/// With `tag`, only keys of that tag (by name, e.g. `column`) are printed. The
/// catalog is opened read-only, so this is safe while a server runs on it.
pub async fn dump_keys(
    location: &str,
    tag: Option<&str>,
    out: &mut impl Write,
) -> anyhow::Result<usize> {
    let wanted = match tag {
        Some(name) => Some(
            Tag::ALL
                .iter()
                .copied()
                .find(|t| t.name() == name)
                .ok_or_else(|| anyhow::anyhow!("unknown tag {name:?}; tags: {}", tag_names()))?,
        ),
        None => None,
    };
    let location = StoreLocation::parse(location)?;
    location.check_reachable().await?;
    let entries = CatalogStore::dump_read_only(&location).await?;
    let mut printed = 0;
    for (key, value) in &entries {
        if let Some(tag) = wanted {
            if key.first() != Some(&tag.byte()) {
                continue;
            }
        }
        let decoded = match decode_key(key) {
            Ok(decoded) => decoded.to_string(),
            Err(e) => format!("<undecodable: {e}>"),
        };
        let line = writeln!(
            out,
            "{}  -> {decoded}  ({} value bytes)",
            hex_key(key),
            value.len()
        );
        match line {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => break,
            other => other?,
        }
        printed += 1;
    }
    Ok(printed)
}

fn tag_names() -> String {
    Tag::ALL
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(", ")
}
