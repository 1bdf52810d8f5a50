//! Reads shared by read-only and write transactions: point gets, prefix scans,
//! the relation and namespace registries, and MVCC-filtered catalog scans.

use std::time::Duration;

use bytes::Bytes;
use rocklake_codec::keys::{encode_key, field_at, hex_key, SystemKey};
use rocklake_codec::relations::Relation;
use rocklake_codec::tables::CatalogTable;
use rocklake_codec::tags::Tag;
use rocklake_codec::values::decode_namespace;
use rocklake_types::datum::Row;
use slatedb::config::ScanOptions;
use slatedb::{DbReadOps, IterationOrder};

use std::sync::Arc;

use crate::error::{ObjectKind, StoreError, StoreResult};
use crate::location::StoreLocation;

/// A row read from the store, with the key it lives under and its identity.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyedRow {
    /// The row's key.
    pub key: Vec<u8>,
    /// The hidden row sequence: the row's stable identity within the catalog.
    pub row_seq: u64,
    /// The row's values, in the relation's column order.
    pub row: Row,
}

/// The rows of one scan, shared by the scan cache and the transactions that
/// read them. Each row sits behind its own `Arc`, so a commit that updates a
/// cached scan (see [`crate::scan_cache`]) copies pointers, not rows: a long
/// history of snapshots, or a large inlined table, costs each commit that
/// writes under it a pointer per row instead of a deep copy of every value.
pub type SharedKeyedRows = Arc<Vec<Arc<KeyedRow>>>;

/// Read access over anything SlateDB can read from (a snapshot, a transaction,
/// a read-only replica), tagged with the writer epoch for error mapping.
pub(crate) struct Reads<'a, R: DbReadOps + Sync> {
    pub(crate) source: &'a R,
    pub(crate) epoch: u64,
}

impl<'a, R: DbReadOps + Sync> Reads<'a, R> {
    /// Point get.
    pub(crate) async fn get(&self, key: &[u8]) -> StoreResult<Option<Bytes>> {
        self.source.get(key).await.map_err(|e| {
            StoreError::storage(format!("reading key {}", hex_key(key)), e, self.epoch)
        })
    }

    /// A big-endian u64 value (counters, numeric system keys), `None` if the key
    /// is absent; a value that is not 8 bytes is reported as corrupt.
    pub(crate) async fn get_u64(&self, key: &[u8]) -> StoreResult<Option<u64>> {
        let Some(bytes) = self.get(key).await? else {
            return Ok(None);
        };
        let raw: [u8; 8] = bytes.as_ref().try_into().map_err(|_| {
            StoreError::Value(rocklake_codec::values::ValueError::Corrupt {
                table: format!("key {}", hex_key(key)),
                reason: format!("{} value bytes, expected 8", bytes.len()),
            })
        })?;
        Ok(Some(u64::from_be_bytes(raw)))
    }

    /// Every (key, value) whose key starts with `prefix`, in key order.
    pub(crate) async fn scan_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<(Bytes, Bytes)>> {
        let context = || format!("scanning prefix {}", hex_key(prefix));
        let mut iter = self
            .source
            .scan_prefix_with_options(prefix, .., &full_scan_options())
            .await
            .map_err(|e| StoreError::storage(context(), e, self.epoch))?;
        let mut out = Vec::new();
        while let Some(kv) = iter
            .next()
            .await
            .map_err(|e| StoreError::storage(context(), e, self.epoch))?
        {
            out.push((kv.key, kv.value));
        }
        Ok(out)
    }

    /// The first (`Ascending`) or last (`Descending`) entry whose key starts with
    /// `prefix`: one seek, however many keys share the prefix.
    pub(crate) async fn scan_prefix_edge(
        &self,
        prefix: &[u8],
        order: IterationOrder,
    ) -> StoreResult<Option<(Bytes, Bytes)>> {
        let context = || format!("seeking the {order:?} end of prefix {}", hex_key(prefix));
        let mut iter = self
            .source
            .scan_prefix_with_options(prefix, .., &scan_options(order))
            .await
            .map_err(|e| StoreError::storage(context(), e, self.epoch))?;
        Ok(iter
            .next()
            .await
            .map_err(|e| StoreError::storage(context(), e, self.epoch))?
            .map(|kv| (kv.key, kv.value)))
    }

    /// Whether any key starts with `prefix` (a point probe when `prefix` is a
    /// whole key).
    pub(crate) async fn scan_prefix_first(&self, prefix: &[u8]) -> StoreResult<bool> {
        Ok(self
            .scan_prefix_edge(prefix, IterationOrder::Ascending)
            .await?
            .is_some())
    }

    /// Every relation in the registry, in id order.
    pub(crate) async fn relations(&self) -> StoreResult<Vec<Relation>> {
        let entries = self.scan_prefix(&[Tag::Relation.byte()]).await?;
        entries
            .iter()
            .map(|(key, value)| {
                let id = field_at(key, 0).ok_or_else(|| StoreError::Key {
                    context: "relation registry".to_string(),
                    source: rocklake_codec::keys::KeyError::BadLength {
                        tag: Tag::Relation,
                        actual: key.len(),
                        expected: 9,
                    },
                })?;
                Ok(Relation::decode(id, value)?)
            })
            .collect()
    }

    /// The relation `schema.name`, if it exists.
    pub(crate) async fn relation(&self, schema: &str, name: &str) -> StoreResult<Option<Relation>> {
        Ok(self
            .relations()
            .await?
            .into_iter()
            .find(|r| r.schema == schema && r.name == name))
    }

    /// Names of the schemas created with CREATE SCHEMA, plus `public`.
    pub(crate) async fn namespaces(&self) -> StoreResult<Vec<String>> {
        let entries = self.scan_prefix(&[Tag::Namespace.byte()]).await?;
        let mut names = vec!["public".to_string()];
        for (key, value) in entries {
            names.push(decode_namespace(&key, &value)?);
        }
        Ok(names)
    }

    /// Rows of `relation` whose key starts with `prefix` (the relation's own
    /// key prefix and more fields), decoded.
    pub(crate) async fn rows_under(
        &self,
        relation: &Relation,
        prefix: &[u8],
    ) -> StoreResult<Vec<KeyedRow>> {
        let entries = self.scan_prefix(prefix).await?;
        entries
            .into_iter()
            .map(|(key, value)| {
                let decoded = relation.decode_row(&key, &value)?;
                Ok(KeyedRow {
                    key: key.to_vec(),
                    row_seq: decoded.row_seq,
                    row: decoded.row,
                })
            })
            .collect()
    }

    /// The first or last row of `relation` in key order among those whose key
    /// fields after the relation's own prefix start with `prefix_fields`.
    pub(crate) async fn edge_row(
        &self,
        relation: &Relation,
        prefix_fields: &[u64],
        order: IterationOrder,
    ) -> StoreResult<Option<KeyedRow>> {
        let prefix = rows_prefix(relation, prefix_fields);
        let Some((key, value)) = self.scan_prefix_edge(&prefix, order).await? else {
            return Ok(None);
        };
        let decoded = relation.decode_row(&key, &value)?;
        Ok(Some(KeyedRow {
            key: key.to_vec(),
            row_seq: decoded.row_seq,
            row: decoded.row,
        }))
    }

    /// Rows of a versioned catalog table visible at `snapshot`:
    /// `begin_snapshot <= snapshot AND (end_snapshot IS NULL OR end_snapshot > snapshot)`.
    /// `begin_snapshot` is read from the key, so versions begun after the snapshot
    /// are skipped without decoding their values.
    pub(crate) async fn visible_rows(
        &self,
        relation: &Relation,
        prefix_fields: &[u64],
        snapshot: u64,
    ) -> StoreResult<Vec<KeyedRow>> {
        let Some(layout) = relation.layout().catalog() else {
            return Err(not_versioned(&relation.name));
        };
        if !layout.versioned() {
            return Err(not_versioned(&relation.name));
        }
        let prefix = encode_key(layout.table.tag, prefix_fields);
        let begin_position = layout.key().len() - 1;
        let mut out = Vec::new();
        for (key, value) in self.scan_prefix(&prefix).await? {
            let begin = field_at(&key, begin_position).expect("catalog key length is fixed");
            if begin > snapshot {
                continue;
            }
            if let Some(end) = layout.decode_end_snapshot(&value)? {
                if end <= snapshot as i64 {
                    continue;
                }
            }
            let decoded = relation.decode_row(&key, &value)?;
            out.push(KeyedRow {
                key: key.to_vec(),
                row_seq: decoded.row_seq,
                row: decoded.row,
            });
        }
        Ok(out)
    }
}

/// The key prefix of the rows of `relation` whose key fields after the
/// relation's own prefix start with `prefix_fields`; its first byte is the tag.
pub(crate) fn rows_prefix(relation: &Relation, prefix_fields: &[u64]) -> Vec<u8> {
    let (tag, mut fields) = relation.row_prefix();
    fields.extend_from_slice(prefix_fields);
    encode_key(tag, &fields)
}

/// Scan settings of a one-row (edge) read: blocks read from SSTs stay in the
/// block cache (the catalog is small and read over and over).
fn scan_options(order: IterationOrder) -> ScanOptions {
    ScanOptions {
        cache_blocks: true,
        order,
        ..ScanOptions::default()
    }
}

/// Blocks fetched together by a scan that reads every row under a prefix.
/// SlateDB runs each fetch as a task, cached block or not; one block (4 KiB)
/// per fetch made a 10,000-row scan spend most of its time waking threads.
/// Fetches never go past the blocks of the scanned range.
const SCAN_READ_AHEAD_BYTES: usize = 256 * 1024;

/// Scan settings of a read of every row under a prefix.
fn full_scan_options() -> ScanOptions {
    ScanOptions {
        read_ahead_bytes: SCAN_READ_AHEAD_BYTES,
        ..scan_options(IterationOrder::Ascending)
    }
}

fn not_versioned(name: &str) -> StoreError {
    StoreError::NotFound {
        kind: ObjectKind::VersionedCatalogTable,
        name: name.to_string(),
    }
}

/// The catalog table with this name, as a relation in `public` (for callers
/// that address catalog tables directly rather than through SQL).
pub fn catalog_relation(table: &'static CatalogTable) -> Relation {
    Relation::new(
        0,
        "public".to_string(),
        table.name.to_string(),
        table.column_defs(),
        table.primary_key.to_vec(),
    )
}
/// A catalog's readiness (for `/readyz`): not closed (or fenced), and a
/// read of it answers within [`READY_READ_TIMEOUT`].
pub(crate) async fn ready<R: slatedb::DbReadOps + Sync>(
    location: &StoreLocation,
    close_reason: Option<slatedb::CloseReason>,
    reads: Reads<'_, R>,
) -> Result<(), String> {
    if let Some(reason) = close_reason {
        return Err(format!("{location}: closed ({reason:?})"));
    }
    let key = SystemKey::FormatVersion.key();
    match tokio::time::timeout(READY_READ_TIMEOUT, reads.get_u64(&key)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(format!("{location}: {error}")),
        Err(_) => Err(format!(
            "{location}: a read did not answer within {} s",
            READY_READ_TIMEOUT.as_secs()
        )),
    }
}

/// How long a readiness probe's read may take.
const READY_READ_TIMEOUT: Duration = Duration::from_secs(5);
