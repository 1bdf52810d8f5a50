//! Binary keys: `tag | u64 | u64 | ...` with every field big-endian and fixed
//! width, so byte order equals semantic order and every key of a tag has one
//! length; plus counters under `0xFE` and readable system keys under `0xFF`.

use std::fmt;

use crate::tables::CatalogTable;
use crate::tags::Tag;

/// Why a byte string is not a valid RockLake key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The key is empty.
    #[error("empty key")]
    Empty,
    /// The first byte is not an allocated tag.
    #[error("unknown tag byte 0x{0:02X}")]
    UnknownTag(u8),
    /// The key's length does not match its tag's fixed layout.
    #[error("key for tag {tag} has {actual} bytes, expected {expected}")]
    BadLength {
        /// The key's tag.
        tag: Tag,
        /// Bytes found.
        actual: usize,
        /// Bytes the tag's layout requires.
        expected: usize,
    },
    /// A counter key names no known counter.
    #[error("unknown counter id {0}")]
    UnknownCounter(u64),
    /// A system key has an unknown suffix.
    #[error("unknown system key {0:?}")]
    UnknownSystemKey(String),
}

/// A counter kept under tag `0xFE`; its value is a big-endian u64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Counter {
    /// One past the highest `ducklake_snapshot.snapshot_id` committed.
    NextSnapshotId = 1,
    /// `next_catalog_id` of the latest snapshot.
    NextCatalogId = 2,
    /// `next_file_id` of the latest snapshot.
    NextFileId = 3,
    /// Next hidden row sequence number (row identity, `ctid`).
    NextRowSeq = 4,
    /// Next relation id in the relation registry.
    NextRelationId = 5,
    /// Next namespace id in the namespace registry.
    NextNamespaceId = 6,
    /// Bumped by every commit that changes the relation or namespace registry,
    /// so a cached copy of the registry is known current by one point read.
    RegistryVersion = 7,
}

impl Counter {
    /// Every counter.
    pub const ALL: [Counter; 7] = [
        Counter::NextSnapshotId,
        Counter::NextCatalogId,
        Counter::NextFileId,
        Counter::NextRowSeq,
        Counter::NextRelationId,
        Counter::NextNamespaceId,
        Counter::RegistryVersion,
    ];

    /// The counter's id, its key field.
    pub fn id(self) -> u64 {
        self as u64
    }

    /// Readable name.
    pub fn name(self) -> &'static str {
        match self {
            Counter::NextSnapshotId => "next_snapshot_id",
            Counter::NextCatalogId => "next_catalog_id",
            Counter::NextFileId => "next_file_id",
            Counter::NextRowSeq => "next_row_seq",
            Counter::NextRelationId => "next_relation_id",
            Counter::NextNamespaceId => "next_namespace_id",
            Counter::RegistryVersion => "registry_version",
        }
    }

    /// The counter with this id.
    pub fn from_id(id: u64) -> Option<Counter> {
        Counter::ALL.iter().copied().find(|c| c.id() == id)
    }

    /// The counter's key: `0xFE | id`.
    pub fn key(self) -> Vec<u8> {
        encode_key(Tag::Counter, &[self.id()])
    }
}

/// A system key under tag `0xFF`, suffixed by a readable ASCII name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SystemKey {
    /// Epoch of the current writer; bumped by every writer that opens the store.
    WriterEpoch,
    /// Oldest snapshot that may still be read; older ones are gone.
    RetainFrom,
    /// Version of RockLake's on-disk format.
    FormatVersion,
    /// The latest snapshot's id and counters in one value, for cold start.
    HotKey,
    /// Sequence number of the last commit of the local commit journal this
    /// state holds (journaled commits above it are replayed when opening).
    JournalApplied,
    /// The lake's own retention (`CALL rocklake_set_retention('7d')`): an
    /// age as text, or `off`; absent, the server's `--retain` applies.
    Retention,
}

/// The readable suffix under which snapshot tags are kept: the system key
/// `0xFF "snapshot-tag/" NAME` holds the tagged snapshot id (u64, big-endian).
pub const SNAPSHOT_TAG_PREFIX: &str = "snapshot-tag/";

/// The key of the snapshot tag `name` (see [`SNAPSHOT_TAG_PREFIX`]).
pub fn snapshot_tag_key(name: &str) -> Vec<u8> {
    let mut key = snapshot_tags_prefix();
    key.extend_from_slice(name.as_bytes());
    key
}

/// The prefix of every snapshot tag's key.
pub fn snapshot_tags_prefix() -> Vec<u8> {
    let mut key = vec![Tag::System.byte()];
    key.extend_from_slice(SNAPSHOT_TAG_PREFIX.as_bytes());
    key
}

impl SystemKey {
    /// Every system key.
    pub const ALL: [SystemKey; 6] = [
        SystemKey::WriterEpoch,
        SystemKey::RetainFrom,
        SystemKey::FormatVersion,
        SystemKey::HotKey,
        SystemKey::JournalApplied,
        SystemKey::Retention,
    ];

    /// The readable suffix, e.g. `writer-epoch`.
    pub fn suffix(self) -> &'static str {
        match self {
            SystemKey::WriterEpoch => "writer-epoch",
            SystemKey::RetainFrom => "retain-from",
            SystemKey::FormatVersion => "format-version",
            SystemKey::HotKey => "hot-key",
            SystemKey::JournalApplied => "journal-applied",
            SystemKey::Retention => "retention",
        }
    }

    /// The key bytes: `0xFF` followed by the suffix.
    pub fn key(self) -> Vec<u8> {
        let mut key = vec![Tag::System.byte()];
        key.extend_from_slice(self.suffix().as_bytes());
        key
    }
}

/// Names of the u64 fields after the tag for every tag with a fixed layout.
/// `None` for the system tag, whose keys are strings.
pub fn field_names(tag: Tag) -> Option<Vec<&'static str>> {
    if let Some(table) = CatalogTable::by_tag(tag) {
        return Some(table.key_field_names());
    }
    match tag {
        Tag::Relation => Some(vec!["relation_id"]),
        Tag::Namespace => Some(vec!["namespace_id"]),
        Tag::InlinedData => Some(vec![
            "table_id",
            "schema_version",
            "row_id",
            "begin_snapshot",
        ]),
        Tag::InlinedDelete => Some(vec!["table_id", "file_id", "row_id", "begin_snapshot"]),
        Tag::GenericRow => Some(vec!["relation_id", "row_seq"]),
        Tag::Counter => Some(vec!["counter_id"]),
        _ => None,
    }
}

/// Encodes `tag | fields...` with each field as 8 big-endian bytes. Also builds
/// prefixes: pass fewer fields than the tag's layout has.
pub fn encode_key(tag: Tag, fields: &[u64]) -> Vec<u8> {
    let mut key = Vec::with_capacity(1 + 8 * fields.len());
    key.push(tag.byte());
    for field in fields {
        key.extend_from_slice(&field.to_be_bytes());
    }
    key
}

/// The u64 field at position `index` (0-based, after the tag) of a key.
pub fn field_at(key: &[u8], index: usize) -> Option<u64> {
    let start = 1 + 8 * index;
    let bytes = key.get(start..start + 8)?;
    Some(u64::from_be_bytes(bytes.try_into().ok()?))
}

/// A key decoded into its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodedKey {
    /// A fixed-layout key: tag and its u64 fields.
    Fields {
        /// The tag.
        tag: Tag,
        /// The fields, in key order.
        fields: Vec<u64>,
    },
    /// A counter key.
    Counter(Counter),
    /// A system key.
    System(SystemKey),
}

impl DecodedKey {
    /// Re-encodes the key.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            DecodedKey::Fields { tag, fields } => encode_key(*tag, fields),
            DecodedKey::Counter(counter) => counter.key(),
            DecodedKey::System(system) => system.key(),
        }
    }
}

impl fmt::Display for DecodedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodedKey::Fields { tag, fields } => {
                write!(f, "{}", tag.name())?;
                let names = field_names(*tag).unwrap_or_default();
                for (name, value) in names.iter().zip(fields) {
                    write!(f, " {name}={value}")?;
                }
                Ok(())
            }
            DecodedKey::Counter(counter) => write!(f, "counter {}", counter.name()),
            DecodedKey::System(system) => write!(f, "system '{}'", system.suffix()),
        }
    }
}

/// Decodes a full key, checking its length against the tag's layout.
pub fn decode_key(key: &[u8]) -> Result<DecodedKey, KeyError> {
    let (&first, rest) = key.split_first().ok_or(KeyError::Empty)?;
    let tag = Tag::from_byte(first).ok_or(KeyError::UnknownTag(first))?;
    if tag == Tag::System {
        let suffix = String::from_utf8_lossy(rest).into_owned();
        return SystemKey::ALL
            .iter()
            .copied()
            .find(|s| s.suffix() == suffix)
            .map(DecodedKey::System)
            .ok_or(KeyError::UnknownSystemKey(suffix));
    }
    let field_count = field_names(tag).map(|n| n.len()).unwrap_or(0);
    let expected = 1 + 8 * field_count;
    if key.len() != expected {
        return Err(KeyError::BadLength {
            tag,
            actual: key.len(),
            expected,
        });
    }
    let fields: Vec<u64> = (0..field_count)
        .map(|i| field_at(key, i).expect("length checked"))
        .collect();
    if tag == Tag::Counter {
        return Counter::from_id(fields[0])
            .map(DecodedKey::Counter)
            .ok_or(KeyError::UnknownCounter(fields[0]));
    }
    Ok(DecodedKey::Fields { tag, fields })
}

/// The smallest key strictly greater than every key starting with `prefix`,
/// or `None` when no such key exists (the prefix is all `0xFF`).
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last != 0xFF {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Hex rendering of a key with its fields separated, e.g. `06 | 0000000000000005 | ...`;
/// system keys show their ASCII suffix.
pub fn hex_key(key: &[u8]) -> String {
    let Some((first, rest)) = key.split_first() else {
        return String::new();
    };
    let mut out = format!("{first:02X}");
    if *first == Tag::System.byte() {
        for b in rest {
            out.push_str(&format!(" {b:02X}"));
        }
        return out;
    }
    for chunk in rest.chunks(8) {
        out.push_str(" | ");
        for b in chunk {
            out.push_str(&format!("{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::CATALOG_TABLES;
    use proptest::prelude::*;

    #[test]
    fn seed_example_column_key() {
        let key = encode_key(Tag::Column, &[0x42, 7, 500]);
        assert_eq!(key.len(), 25);
        assert_eq!(key[0], 0x06);
        assert_eq!(field_at(&key, 0), Some(0x42));
        assert_eq!(
            hex_key(&key),
            "06 | 0000000000000042 | 0000000000000007 | 00000000000001F4"
        );
        assert_eq!(
            decode_key(&key).unwrap().to_string(),
            "column table_id=66 column_id=7 begin_snapshot=500"
        );
    }

    #[test]
    fn system_keys_are_readable() {
        let key = SystemKey::WriterEpoch.key();
        assert_eq!(&key[1..], b"writer-epoch");
        assert_eq!(key[0], 0xFF);
        assert_eq!(hex_key(&key), "FF 77 72 69 74 65 72 2D 65 70 6F 63 68");
        for system in SystemKey::ALL {
            assert_eq!(decode_key(&system.key()), Ok(DecodedKey::System(system)));
        }
        assert!(matches!(
            decode_key(b"\xFFnope"),
            Err(KeyError::UnknownSystemKey(_))
        ));
    }

    #[test]
    fn counters_sort_before_system_keys() {
        for counter in Counter::ALL {
            let key = counter.key();
            assert_eq!(key.len(), 9);
            assert_eq!(decode_key(&key), Ok(DecodedKey::Counter(counter)));
            assert!(key < SystemKey::FormatVersion.key());
        }
    }

    #[test]
    fn wrong_length_is_rejected() {
        let mut key = encode_key(Tag::Snapshot, &[1]);
        key.push(0);
        assert!(matches!(
            decode_key(&key),
            Err(KeyError::BadLength { expected: 9, .. })
        ));
        assert_eq!(decode_key(&[0x7F]), Err(KeyError::UnknownTag(0x7F)));
        assert_eq!(decode_key(&[]), Err(KeyError::Empty));
    }

    #[test]
    fn prefix_end_bounds_a_prefix() {
        assert_eq!(prefix_end(&[0x06, 0x01]), Some(vec![0x06, 0x02]));
        assert_eq!(prefix_end(&[0x06, 0xFF]), Some(vec![0x07]));
        assert_eq!(prefix_end(&[0xFF, 0xFF]), None);
    }

    fn fixed_layout_tag() -> impl Strategy<Value = Tag> {
        proptest::sample::select(
            Tag::ALL
                .iter()
                .copied()
                .filter(|t| *t != Tag::System && *t != Tag::Counter)
                .collect::<Vec<_>>(),
        )
    }

    proptest! {
        #[test]
        fn decode_inverts_encode(tag in fixed_layout_tag(), raw in proptest::collection::vec(any::<u64>(), 5)) {
            let n = field_names(tag).unwrap().len();
            let fields = raw[..n].to_vec();
            let key = encode_key(tag, &fields);
            prop_assert_eq!(key.len(), 1 + 8 * n);
            let decoded = decode_key(&key).unwrap();
            prop_assert_eq!(&decoded, &DecodedKey::Fields { tag, fields });
            prop_assert_eq!(decoded.encode(), key);
        }

        #[test]
        fn byte_order_equals_semantic_order(
            tag_a in fixed_layout_tag(), tag_b in fixed_layout_tag(),
            a in proptest::collection::vec(any::<u64>(), 5),
            b in proptest::collection::vec(any::<u64>(), 5),
        ) {
            let fields_a = a[..field_names(tag_a).unwrap().len()].to_vec();
            let fields_b = b[..field_names(tag_b).unwrap().len()].to_vec();
            let semantic = (tag_a.byte(), fields_a.clone()).cmp(&(tag_b.byte(), fields_b.clone()));
            let bytes = encode_key(tag_a, &fields_a).cmp(&encode_key(tag_b, &fields_b));
            prop_assert_eq!(semantic, bytes);
        }

        #[test]
        fn versions_of_one_entity_sort_by_begin_snapshot(id in any::<u64>(), s1 in any::<u64>(), s2 in any::<u64>()) {
            let k1 = encode_key(Tag::Table, &[id, s1]);
            let k2 = encode_key(Tag::Table, &[id, s2]);
            prop_assert_eq!(k1.cmp(&k2), s1.cmp(&s2));
            let prefix = encode_key(Tag::Table, &[id]);
            prop_assert!(k1.starts_with(&prefix));
            prop_assert!(k1 < prefix_end(&prefix).unwrap());
        }
    }

    #[test]
    fn every_catalog_table_has_a_fixed_key_length() {
        for table in CATALOG_TABLES {
            let fields = vec![u64::MAX; table.key.len()];
            let key = encode_key(table.tag, &fields);
            assert_eq!(key.len(), table.key_len(), "{}", table.name);
            assert!(decode_key(&key).is_ok(), "{}", table.name);
        }
    }
}
