//! `rocklake keys`: dumps a catalog's keys in hex with every field decoded,
//! and each value decoded as the row, registry entry, counter or system
//! value it holds.

use std::collections::HashMap;
use std::io::Write;

use rocklake_codec::keys::{decode_key, hex_key, DecodedKey, SystemKey};
use rocklake_codec::relations::catalog::CatalogLayout;
use rocklake_codec::relations::Relation;
use rocklake_codec::tables::{CatalogTable, KeyField};
use rocklake_codec::tags::Tag;
use rocklake_codec::values::{decode_hot_key, decode_namespace};
use rocklake_store::{CatalogStore, LakeRoot, StoreLocation};
use rocklake_types::value::text::format_text;
use rocklake_types::{ColumnDef, Datum};

/// Prints one line per key: hex (fields separated by `|`), then the decoded
/// key and value, e.g. `06 | 0000000000000005 | ... -> column table_id=5
/// column_id=1 begin_snapshot=3 = {column_name: 'a', ...}`. With `tag`,
/// only keys of that tag are printed: a tag name (`column`), a catalog
/// table's name (`ducklake_column`) or a tag byte (`0x06`). The catalog is
/// opened read-only, so this is safe while a server runs on it.
/// Which lake of a root to read: a database's home catalog, or one of its
/// schema lakes.
#[derive(clap::Args, Debug)]
pub struct LakeChoice {
    /// Root of the databases: a local directory or s3://bucket/prefix.
    pub location: String,
    /// The database.
    #[arg(long, default_value = rocklake_store::served::DEFAULT_DATABASE)]
    pub database: String,
    /// The lake of this METADATA_SCHEMA instead of the database's home
    /// catalog.
    #[arg(long)]
    pub schema: Option<String>,
}

impl LakeChoice {
    /// Where the chosen lake's catalog is; an error names the databases
    /// (or schema lakes) there are when the one asked for is missing.
    pub async fn location(&self) -> anyhow::Result<StoreLocation> {
        let location = StoreLocation::parse(&self.location)?;
        location.check_reachable().await?;
        let root = LakeRoot::open(location.clone())?;
        if root.has_single_catalog().await? {
            anyhow::bail!(
                "{location} holds the single catalog of an earlier release: start `rocklake serve` \
                 on it once to make it database {}",
                self.database
            );
        }
        let databases = root.databases().await?;
        if !databases.contains(&self.database) {
            anyhow::bail!(
                "database {:?} does not exist under {location} (databases: {})",
                self.database,
                databases.join(", ")
            );
        }
        let Some(schema) = &self.schema else {
            return Ok(root.database_location(&self.database)?);
        };
        let lakes = root.lake_schemas(&self.database).await?;
        if !lakes.contains(schema) {
            anyhow::bail!(
                "database {:?} has no lake in schema {schema:?} (schema lakes: {})",
                self.database,
                lakes.join(", ")
            );
        }
        Ok(root.lake_location(&self.database, schema)?)
    }
}

pub async fn dump_keys(
    lake: &LakeChoice,
    keys: Option<&std::sync::Arc<rocklake_store::CatalogKeys>>,
    tag: Option<&str>,
    out: &mut impl Write,
) -> anyhow::Result<usize> {
    let wanted = tag.map(parse_tag).transpose()?;
    let location = lake.location().await?;
    let entries = CatalogStore::dump_read_only(&location, keys).await?;
    let relations = Relations::from_registry(&entries);
    let mut printed = 0;
    for (key, value) in &entries {
        if let Some(tag) = wanted {
            if key.first() != Some(&tag.byte()) {
                continue;
            }
        }
        let line = match decode_key(key) {
            Ok(decoded) => format!(
                "{}  -> {decoded} = {}",
                hex_key(key),
                relations.describe_value(&decoded, key, value)
            ),
            Err(e) => format!(
                "{}  -> <undecodable key: {e}> ({} value bytes)",
                hex_key(key),
                value.len()
            ),
        };
        match writeln!(out, "{line}") {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => break,
            other => other?,
        }
        printed += 1;
    }
    Ok(printed)
}

/// A tag by its name, its catalog table's name, or its byte (`0x06`).
fn parse_tag(text: &str) -> anyhow::Result<Tag> {
    let by_byte = text
        .strip_prefix("0x")
        .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        .and_then(Tag::from_byte);
    by_byte
        .or_else(|| Tag::ALL.iter().copied().find(|t| t.name() == text))
        .or_else(|| CatalogTable::by_name(text).map(|table| table.tag))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "unknown tag {text:?}: give a tag name ({}), a catalog table name (ducklake_...) or a tag byte (0x06)",
                Tag::ALL
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// The relations the registry of the dump holds, by what their rows' keys
/// start with, so rows stored under the shared tags (inlined data, inlined
/// deletes, other tables) can be decoded with their columns.
struct Relations {
    by_prefix: HashMap<(Tag, Vec<u64>), Relation>,
}

impl Relations {
    fn from_registry(entries: &[(bytes::Bytes, bytes::Bytes)]) -> Self {
        let mut by_prefix = HashMap::new();
        for (key, value) in entries {
            if let Ok(DecodedKey::Fields {
                tag: Tag::Relation,
                fields,
            }) = decode_key(key)
            {
                if let Ok(relation) = Relation::decode(fields[0], value) {
                    by_prefix.insert(relation.row_prefix(), relation);
                }
            }
        }
        Relations { by_prefix }
    }

    /// The value of `key` in readable form.
    fn describe_value(&self, key: &DecodedKey, raw_key: &[u8], value: &[u8]) -> String {
        let described = match key {
            DecodedKey::Counter(_) => u64_value(value).map(|v| v.to_string()),
            DecodedKey::System(SystemKey::HotKey) => decode_hot_key(value)
                .map(|hot| format!("{hot:?}"))
                .map_err(|e| e.to_string()),
            DecodedKey::System(_) => u64_value(value).map(|v| v.to_string()),
            DecodedKey::Fields {
                tag: Tag::Namespace,
                ..
            } => decode_namespace(raw_key, value)
                .map(|name| format!("schema {name:?}"))
                .map_err(|e| e.to_string()),
            DecodedKey::Fields {
                tag: Tag::Relation,
                fields,
            } => Relation::decode(fields[0], value)
                .map(|r| describe_relation(&r))
                .map_err(|e| e.to_string()),
            DecodedKey::Fields { tag, fields } => self.describe_row(*tag, fields, raw_key, value),
        };
        described.unwrap_or_else(|e| format!("<undecodable value ({} bytes): {e}>", value.len()))
    }

    fn describe_row(
        &self,
        tag: Tag,
        fields: &[u64],
        key: &[u8],
        value: &[u8],
    ) -> Result<String, String> {
        let prefix_len = match tag {
            Tag::InlinedData => 2,
            Tag::InlinedDelete | Tag::GenericRow => 1,
            _ if CatalogTable::by_tag(tag).is_some() => 0,
            _ => return Err(format!("no row layout for tag {}", tag.name())),
        };
        let prefix = (tag, fields[..prefix_len].to_vec());
        let Some(relation) = self.by_prefix.get(&prefix) else {
            // A catalog table's rows without its registry entry: read them as
            // DuckLake 1.0 declares the table.
            let table = CatalogTable::by_tag(tag)
                .ok_or_else(|| "no relation in the registry owns this key".to_string())?;
            let decoded = CatalogLayout::of(table)
                .decode(key, value, None)
                .map_err(|e| e.to_string())?;
            return Ok(describe_columns(
                &table.column_defs(),
                &decoded.row,
                decoded.row_seq,
            ));
        };
        let decoded = relation.decode_row(key, value).map_err(|e| e.to_string())?;
        let columns = describe_columns(&relation.columns, &decoded.row, decoded.row_seq);
        if relation.layout().catalog().is_some() {
            return Ok(columns);
        }
        Ok(format!("{}.{} {columns}", relation.schema, relation.name))
    }
}

/// `{name: value, ...} row_seq=N`, values in PostgreSQL's text form.
fn describe_columns(columns: &[ColumnDef], row: &[Datum], row_seq: u64) -> String {
    let cells: Vec<String> = columns
        .iter()
        .zip(row)
        .map(|(column, value)| match format_text(value) {
            None => format!("{}: NULL", column.name),
            Some(text) => format!("{}: {text:?}", column.name),
        })
        .collect();
    format!("{{{}}} row_seq={row_seq}", cells.join(", "))
}

fn describe_relation(relation: &Relation) -> String {
    let columns: Vec<String> = relation
        .stored_columns()
        .iter()
        .map(|c| {
            let mut text = format!("{} {}", c.def.name, c.def.pg_type);
            if c.def.not_null {
                text.push_str(" NOT NULL");
            }
            if let Some(default) = &c.def.default {
                text.push_str(&format!(" DEFAULT {default:?}"));
            }
            if c.field != 0 {
                text.push_str(&format!(" [field {}]", c.field));
            }
            if c.missing.is_some() {
                text.push_str(" [older rows: default]");
            }
            if c.dropped {
                text.push_str(" [dropped]");
            }
            text
        })
        .collect();
    let placement = relation.placement();
    let key: Vec<String> = placement
        .key
        .iter()
        .map(|field| match field {
            KeyField::Column(i) => relation.stored_columns()[*i].def.name.clone(),
            KeyField::RowSeq => "row_seq".to_string(),
        })
        .collect();
    let prefix: Vec<String> = placement.prefix.iter().map(u64::to_string).collect();
    format!(
        "table {}.{} ({}) rows at {}{} | {}{}",
        relation.schema,
        relation.name,
        columns.join(", "),
        placement.tag,
        if prefix.is_empty() {
            String::new()
        } else {
            format!(" | {}", prefix.join(" | "))
        },
        key.join(" | "),
        if relation.is_legacy() {
            " (format 1 entry)"
        } else {
            ""
        }
    )
}

fn u64_value(value: &[u8]) -> Result<u64, String> {
    let raw: [u8; 8] = value
        .try_into()
        .map_err(|_| format!("{} bytes, expected 8", value.len()))?;
    Ok(u64::from_be_bytes(raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_named_by_tag_table_or_byte() {
        assert_eq!(parse_tag("column").unwrap(), Tag::Column);
        assert_eq!(parse_tag("ducklake_data_file").unwrap(), Tag::DataFile);
        assert_eq!(parse_tag("0x61").unwrap(), Tag::Relation);
        let error = parse_tag("ducklake_nonsense").unwrap_err().to_string();
        assert!(error.contains("catalog table name"), "{error}");
    }

    #[test]
    fn rows_print_their_columns_as_text() {
        let columns = vec![
            ColumnDef::new("id", rocklake_types::PgType::Int8),
            ColumnDef::new("name", rocklake_types::PgType::Varchar),
        ];
        assert_eq!(
            describe_columns(&columns, &[Datum::Int8(5), Datum::Null], 7),
            "{id: \"5\", name: NULL} row_seq=7"
        );
    }
}
