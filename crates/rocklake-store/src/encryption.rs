//! Catalog encryption at rest: every block SlateDB writes for a catalog (WAL
//! tables, L0 and compacted tables: data, index and filter blocks) is sealed
//! with AES-256-GCM through SlateDB's block-transformation hook, so the
//! bucket holds no catalog value in plaintext: not DuckLake's per-file
//! encryption keys, paths, column names, statistics or inlined rows.
//!
//! What stays readable in the bucket: SlateDB's manifests (table ids, the
//! first and last key of each table: tag bytes and numeric ids, no values),
//! the table footers' offsets, object names and sizes, and the
//! `encryption` marker next to each catalog, which names the cipher and the
//! ids of the keys in use (an id is a hash of the key, never the key).
//!
//! A sealed block is `version (1) | key id (8) | nonce (12) | ciphertext |
//! tag (16)`; the key id and version are authenticated with it. Keys are 32
//! random bytes, written as 64 hex digits or in base64, one per line of a
//! key file (or in `ROCKLAKE_CATALOG_KEY`): the first seals new blocks, all
//! of them open blocks, which is how a key is rotated (see
//! docs/encryption.md).

use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine;
use bytes::Bytes;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};
use slatedb::object_store::path::Path as ObjectPath;
use slatedb::object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use slatedb::BlockTransformer;

use crate::error::{StoreError, StoreResult};
use crate::location::StoreLocation;

/// Version byte of a sealed block.
const SEALED_VERSION: u8 = 1;
/// Bytes of a key id.
const KEY_ID_LEN: usize = 8;
/// Bytes of an AES-256-GCM tag.
const TAG_LEN: usize = 16;
/// What sealing adds to a block.
const OVERHEAD: usize = 1 + KEY_ID_LEN + NONCE_LEN + TAG_LEN;
/// Name of the marker object next to a catalog's SlateDB folder.
const MARKER: &str = "encryption";
/// The cipher the marker names.
const CIPHER: &str = "AES-256-GCM";

/// The id of a key: the first bytes of SHA-256 over a fixed label and the
/// key (the key cannot be recovered from it).
pub type KeyId = [u8; KEY_ID_LEN];

/// One catalog key.
struct CatalogKey {
    id: KeyId,
    cipher: LessSafeKey,
}

/// The keys a server or tool was given: the first seals, all open.
pub struct CatalogKeys {
    keys: Vec<CatalogKey>,
    random: SystemRandom,
    /// Why the last block that failed to open did (SlateDB reports only
    /// that a block could not be transformed).
    last_failure: std::sync::Mutex<Option<String>>,
}

impl std::fmt::Debug for CatalogKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogKeys")
            .field("ids", &hex_ids(&self.ids()))
            .finish()
    }
}

/// A key id as 16 hex digits.
pub fn hex_id(id: &KeyId) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// Key ids as a comma-separated list.
fn hex_ids(ids: &[KeyId]) -> String {
    ids.iter().map(hex_id).collect::<Vec<_>>().join(", ")
}

fn key_id(key: &[u8]) -> KeyId {
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    context.update(b"rocklake catalog key id\0");
    context.update(key);
    let digest = context.finish();
    let mut id = [0u8; KEY_ID_LEN];
    id.copy_from_slice(&digest.as_ref()[..KEY_ID_LEN]);
    id
}

/// One key from its text form: 64 hex digits or base64 of 32 bytes.
fn parse_key(text: &str) -> Result<Vec<u8>, String> {
    let bytes = if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        (0..32)
            .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("hex digits"))
            .collect()
    } else {
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|_| "a key is 64 hex digits or the base64 of 32 bytes".to_string())?
    };
    if bytes.len() != 32 {
        return Err(format!(
            "a key is 32 bytes (AES-256); this one has {}",
            bytes.len()
        ));
    }
    Ok(bytes)
}

impl CatalogKeys {
    /// Keys from the text of a key file or of `ROCKLAKE_CATALOG_KEY`: one
    /// key per line (or separated by commas), `#` comments; the first seals.
    pub fn parse(text: &str) -> Result<CatalogKeys, String> {
        let raw = text
            .lines()
            .map(|line| line.split('#').next().unwrap_or(""))
            .flat_map(|line| line.split(','))
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(parse_key)
            .collect::<Result<Vec<_>, _>>()?;
        if raw.is_empty() {
            return Err("no key found (one key per line: 64 hex digits or base64)".to_string());
        }
        Self::from_raw(&raw)
    }

    /// Keys from the bytes of a key file: its text (see
    /// [`CatalogKeys::parse`]), or exactly 32 raw bytes (one key, as
    /// `head -c 32 /dev/urandom > FILE` makes).
    pub fn from_file(bytes: &[u8]) -> Result<CatalogKeys, String> {
        let text = std::str::from_utf8(bytes).ok();
        match text.map(Self::parse) {
            Some(Ok(keys)) => Ok(keys),
            _ if bytes.len() == 32 => Self::from_raw(&[bytes.to_vec()]),
            Some(Err(error)) => Err(error),
            None => Err(format!(
                "a catalog key file holds keys as text, one per line (64 hex digits, or the \
                 base64 of 32 bytes), or exactly 32 raw bytes; this one holds {} bytes that are \
                 neither",
                bytes.len()
            )),
        }
    }

    /// Keys from their 32 raw bytes each; the first seals.
    fn from_raw(raw: &[Vec<u8>]) -> Result<CatalogKeys, String> {
        let mut keys = Vec::new();
        for bytes in raw {
            let unbound = UnboundKey::new(&AES_256_GCM, bytes).map_err(|_| "invalid key")?;
            keys.push(CatalogKey {
                id: key_id(bytes),
                cipher: LessSafeKey::new(unbound),
            });
        }
        Ok(CatalogKeys {
            keys,
            random: SystemRandom::new(),
            last_failure: std::sync::Mutex::new(None),
        })
    }

    /// A new random key in its text form (hex).
    pub fn generate() -> String {
        let mut bytes = [0u8; 32];
        SystemRandom::new()
            .fill(&mut bytes)
            .expect("the system's random source");
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Why the last block that failed to open did, if one did.
    pub fn last_failure(&self) -> Option<String> {
        self.last_failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The ids of the keys, the sealing key first.
    pub fn ids(&self) -> Vec<KeyId> {
        self.keys.iter().map(|key| key.id).collect()
    }

    /// Seals one block with the first key.
    fn seal(&self, data: &[u8]) -> Result<Vec<u8>, String> {
        let key = &self.keys[0];
        let mut nonce = [0u8; NONCE_LEN];
        self.random
            .fill(&mut nonce)
            .map_err(|_| "the system's random source failed".to_string())?;
        let mut out = Vec::with_capacity(data.len() + OVERHEAD);
        out.push(SEALED_VERSION);
        out.extend_from_slice(&key.id);
        out.extend_from_slice(&nonce);
        let header_len = out.len();
        out.extend_from_slice(data);
        let (header, body) = out.split_at_mut(header_len);
        let tag = key
            .cipher
            .seal_in_place_separate_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(&header[..1 + KEY_ID_LEN]),
                body,
            )
            .map_err(|_| "sealing a block failed".to_string())?;
        out.extend_from_slice(tag.as_ref());
        Ok(out)
    }

    /// Opens a block sealed with any of the keys.
    fn open(&self, sealed: &[u8]) -> Result<Vec<u8>, String> {
        if sealed.len() < OVERHEAD || sealed[0] != SEALED_VERSION {
            return Err("a catalog block is not sealed by RockLake".to_string());
        }
        let id: KeyId = sealed[1..1 + KEY_ID_LEN]
            .try_into()
            .expect("length checked");
        let key = self.keys.iter().find(|key| key.id == id).ok_or_else(|| {
            format!(
                "a catalog block is sealed with key {}, which was not given",
                hex_id(&id)
            )
        })?;
        let nonce: [u8; NONCE_LEN] = sealed[1 + KEY_ID_LEN..1 + KEY_ID_LEN + NONCE_LEN]
            .try_into()
            .expect("length checked");
        let mut body = sealed[1 + KEY_ID_LEN + NONCE_LEN..].to_vec();
        let plain = key
            .cipher
            .open_in_place(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(&sealed[..1 + KEY_ID_LEN]),
                &mut body,
            )
            .map_err(|_| "a catalog block failed authentication (altered or corrupt)")?;
        let len = plain.len();
        body.truncate(len);
        Ok(body)
    }
}

/// The keys as SlateDB's block transformer.
struct BlockCipher(Arc<CatalogKeys>);

fn transform_error(message: String) -> slatedb::Error {
    slatedb::Error::data(message)
}

#[async_trait]
impl BlockTransformer for BlockCipher {
    async fn encode(&self, data: Bytes) -> Result<Bytes, slatedb::Error> {
        self.0.seal(&data).map(Bytes::from).map_err(transform_error)
    }

    async fn decode(&self, data: Bytes) -> Result<Bytes, slatedb::Error> {
        self.0.open(&data).map(Bytes::from).map_err(|reason| {
            *self
                .0
                .last_failure
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(reason.clone());
            transform_error(reason)
        })
    }

    fn encoded_overhead(&self) -> usize {
        OVERHEAD
    }
}

/// What the marker next to a catalog says.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Marker {
    key_ids: Vec<KeyId>,
}

impl Marker {
    fn render(&self) -> String {
        let ids: Vec<String> = self.key_ids.iter().map(hex_id).collect();
        format!("cipher={CIPHER}\nkeys={}\n", ids.join(","))
    }

    fn parse(text: &str) -> Option<Marker> {
        let mut cipher = None;
        let mut key_ids = Vec::new();
        for line in text.lines() {
            match line.split_once('=') {
                Some(("cipher", value)) => cipher = Some(value.trim().to_string()),
                Some(("keys", value)) => {
                    for id in value.split(',').filter(|id| !id.is_empty()) {
                        let bytes: Vec<u8> = (0..id.len() / 2)
                            .map(|i| u8::from_str_radix(id.get(2 * i..2 * i + 2)?, 16).ok())
                            .collect::<Option<_>>()?;
                        key_ids.push(bytes.try_into().ok()?);
                    }
                }
                _ => {}
            }
        }
        (cipher.as_deref() == Some(CIPHER)).then_some(Marker { key_ids })
    }
}

/// How a catalog is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// By its writer, which may create it.
    Writer,
    /// Read-only (replicas, `rocklake keys`): changes nothing.
    Reader,
}

/// The block transformer to open the catalog at `location` with, after
/// checking the keys against its `encryption` marker before anything is
/// read or written:
/// - an encrypted catalog needs one of its keys (none, or only foreign
///   keys, fail at once);
/// - a catalog created with keys is encrypted (its writer writes the marker
///   before the catalog's first object);
/// - an existing unencrypted catalog refuses keys (it would hold blocks of
///   both kinds), and opens without.
///
/// A writer given a new first key adds its id to the marker (key rotation).
pub async fn prepare(
    location: &StoreLocation,
    keys: Option<&Arc<CatalogKeys>>,
    opening: Opening,
) -> StoreResult<Option<Arc<dyn BlockTransformer>>> {
    let (objects, catalog) = location.open_object_store()?;
    let marker_path = marker_path(&catalog);
    let marker = read_marker(location, objects.as_ref(), &marker_path).await?;
    let error = |reason: String| StoreError::CatalogKey {
        location: location.to_string(),
        reason,
    };
    match (marker, keys) {
        (None, None) => Ok(None),
        (Some(marker), None) => Err(error(format!(
            "the catalog is encrypted (keys {}): give its key with --catalog-key-file or \
             ROCKLAKE_CATALOG_KEY",
            hex_ids(&marker.key_ids)
        ))),
        (None, Some(keys)) => {
            if location.holds_catalog().await? {
                return Err(error(
                    "the catalog is not encrypted, and a catalog key was given: open it \
                     without a key (an existing catalog cannot be encrypted in place)"
                        .to_string(),
                ));
            }
            if opening == Opening::Writer {
                let marker = Marker {
                    key_ids: keys.ids(),
                };
                write_marker(location, objects.as_ref(), &marker_path, &marker).await?;
            }
            Ok(Some(Arc::new(BlockCipher(keys.clone()))))
        }
        (Some(mut marker), Some(keys)) => {
            let known: Vec<KeyId> = keys
                .ids()
                .into_iter()
                .filter(|id| marker.key_ids.contains(id))
                .collect();
            if known.is_empty() {
                return Err(error(format!(
                    "none of the catalog keys given (ids {}) is a key of this catalog (ids {})",
                    hex_ids(&keys.ids()),
                    hex_ids(&marker.key_ids)
                )));
            }
            let sealing = keys.ids()[0];
            if opening == Opening::Writer && marker.key_ids.first() != Some(&sealing) {
                marker.key_ids.retain(|id| *id != sealing);
                marker.key_ids.insert(0, sealing);
                write_marker(location, objects.as_ref(), &marker_path, &marker).await?;
                tracing::info!(%location, key = hex_id(&sealing), "new blocks are sealed with a new catalog key");
            }
            Ok(Some(Arc::new(BlockCipher(keys.clone()))))
        }
    }
}

/// The marker's path: next to the SlateDB folder `catalog`.
fn marker_path(catalog: &ObjectPath) -> ObjectPath {
    let mut parts: Vec<_> = catalog.parts().collect();
    parts.pop();
    ObjectPath::from_iter(parts).join(MARKER)
}

async fn read_marker(
    location: &StoreLocation,
    objects: &dyn ObjectStore,
    path: &ObjectPath,
) -> StoreResult<Option<Marker>> {
    let error = |reason: String| StoreError::Location {
        location: location.to_string(),
        reason,
    };
    let bytes = match objects.get(path).await {
        Ok(result) => result
            .bytes()
            .await
            .map_err(|e| error(format!("cannot read {path}: {e}")))?,
        Err(slatedb::object_store::Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(error(format!("cannot read {path}: {e}"))),
    };
    let text = String::from_utf8_lossy(&bytes);
    Marker::parse(&text)
        .map(Some)
        .ok_or_else(|| error(format!("{path} is not a RockLake encryption marker")))
}

async fn write_marker(
    location: &StoreLocation,
    objects: &dyn ObjectStore,
    path: &ObjectPath,
    marker: &Marker,
) -> StoreResult<()> {
    objects
        .put(path, PutPayload::from(marker.render()))
        .await
        .map_err(|e| StoreError::Location {
            location: location.to_string(),
            reason: format!("cannot write {path}: {e}"),
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Arc<CatalogKeys> {
        Arc::new(CatalogKeys::parse(text).unwrap())
    }

    #[test]
    fn blocks_round_trip_and_detect_tampering() {
        let one = keys(&CatalogKeys::generate());
        let sealed = one.seal(b"ducklake_data_file.encryption_key").unwrap();
        assert_eq!(sealed.len(), 33 + OVERHEAD);
        assert!(!sealed
            .windows(b"encryption_key".len())
            .any(|w| w == b"encryption_key"));
        assert_eq!(
            one.open(&sealed).unwrap(),
            b"ducklake_data_file.encryption_key"
        );
        let mut altered = sealed.clone();
        altered[OVERHEAD] ^= 1;
        assert!(one.open(&altered).unwrap_err().contains("authentication"));
        let other = keys(&CatalogKeys::generate());
        assert!(other.open(&sealed).unwrap_err().contains("was not given"));
        // Two nonces: the same block seals differently.
        assert_ne!(one.seal(b"x").unwrap(), one.seal(b"x").unwrap());
    }

    #[test]
    fn rotation_opens_old_blocks_and_seals_with_the_first_key() {
        let old = CatalogKeys::generate();
        let new = CatalogKeys::generate();
        let sealed_old = keys(&old).seal(b"old").unwrap();
        let both = keys(&format!("{new}\n{old}\n"));
        assert_eq!(both.open(&sealed_old).unwrap(), b"old");
        let sealed_new = both.seal(b"new").unwrap();
        assert_eq!(keys(&new).open(&sealed_new).unwrap(), b"new");
        assert!(keys(&old).open(&sealed_new).is_err());
    }

    #[test]
    fn keys_read_as_hex_or_base64() {
        let hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        let base64 = base64::engine::general_purpose::STANDARD.encode(parse_key(hex).unwrap());
        assert_eq!(keys(hex).ids(), keys(&base64).ids());
        assert_eq!(
            keys(&format!("# comment\n{hex}, {base64}\n")).ids().len(),
            2
        );
        assert!(CatalogKeys::parse("").is_err());
        assert!(CatalogKeys::parse("abcd").is_err());
        let marker = Marker {
            key_ids: keys(hex).ids(),
        };
        assert_eq!(Marker::parse(&marker.render()), Some(marker));
    }

    #[test]
    fn a_key_file_holds_text_or_32_raw_bytes() {
        let hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        let raw = parse_key(hex).unwrap();
        // Raw bytes that are not valid UTF-8 (the reported failure) and
        // raw bytes that happen to be text but no key text.
        let from_raw = CatalogKeys::from_file(&raw).unwrap();
        assert_eq!(from_raw.ids(), keys(hex).ids());
        let printable = [b'k'; 32];
        assert!(CatalogKeys::from_file(&printable).is_ok());
        assert_eq!(
            CatalogKeys::from_file(format!("{hex}\n").as_bytes())
                .unwrap()
                .ids(),
            keys(hex).ids()
        );
        let error = CatalogKeys::from_file(&[0xff; 31]).err().unwrap();
        assert!(error.contains("exactly 32 raw bytes"), "{error}");
    }
}
