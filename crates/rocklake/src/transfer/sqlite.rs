//! Reading and writing a DuckLake catalog held in a SQLite file (DuckLake's
//! `sqlite:FILE` metadata string), with rusqlite.
//!
//! DuckLake on SQLite declares every column BIGINT, VARCHAR or BLOB (DuckDB's
//! SQLite scanner keeps booleans as 0/1 and timestamps, decimals and doubles
//! as text); on PostgreSQL the same tables have typed columns. [`read`] gives
//! each column the type DuckLake gives it on PostgreSQL (catalog tables: the
//! registry of [`CatalogTable`]s; inlined-data tables: their DuckLake column
//! types, mapped as DuckLake 1.5 maps them for PostgreSQL) and each value
//! PostgreSQL's text form; [`write`] does the reverse.

use std::collections::HashMap;

use anyhow::{bail, Context};
use rocklake_codec::tables::{CatalogTable, CatalogType};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OpenFlags};

use super::{progress_bar, SourceCatalog, SourceTable};

/// Prefix of DuckLake's inlined-data tables.
const INLINED_DATA: &str = "ducklake_inlined_data_";

/// Reads every DuckLake table of the SQLite catalog `file` in one read
/// transaction.
pub fn read(file: &str) -> anyhow::Result<SourceCatalog> {
    if !std::path::Path::new(file).is_file() {
        bail!("SQLite catalog {file:?} does not exist");
    }
    let db = Connection::open_with_flags(file, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .with_context(|| format!("opening SQLite catalog {file:?}"))?;
    // One read transaction: every table from the same state of the file.
    db.execute_batch("BEGIN")?;
    let mut names: Vec<String> = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'ducklake\\_%' ESCAPE '\\'")?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    if names.is_empty() {
        bail!("{file:?} holds no DuckLake catalog (no ducklake_ tables)");
    }
    // Catalog tables first (inlined tables' types come from them), with
    // ducklake_metadata leading as DuckLake creates it.
    names.sort_by_key(|name| {
        (
            name.starts_with(INLINED_DATA),
            name != "ducklake_metadata",
            name.clone(),
        )
    });
    let mut tables: Vec<SourceTable> = Vec::new();
    let mut inlined: Option<InlinedTypes> = None;
    for name in names {
        let types = if name.starts_with(INLINED_DATA) {
            let inlined = inlined.get_or_insert_with(|| InlinedTypes::new(&tables));
            Some(inlined.columns(&name))
        } else {
            None
        };
        tables.push(read_table(&db, &name, types.as_ref())?);
    }
    db.execute_batch("COMMIT")?;
    Ok(SourceCatalog {
        description: format!("sqlite:{file}"),
        tables,
    })
}

/// One table: its columns with PostgreSQL types and its rows.
fn read_table(
    db: &Connection,
    name: &str,
    inlined: Option<&HashMap<String, String>>,
) -> anyhow::Result<SourceTable> {
    let quoted = super::ident(name);
    let mut info = db.prepare(&format!("PRAGMA table_info({quoted})"))?;
    let declared: Vec<(String, String, Option<String>, i64)> = info
        .query_map([], |row| {
            Ok((row.get(1)?, row.get(2)?, row.get(4)?, row.get(5)?))
        })?
        .collect::<Result<_, _>>()?;
    let catalog = CatalogTable::by_name(name);
    let columns: Vec<(String, String, Option<String>)> = declared
        .iter()
        .map(|(column, sqlite_type, default, _)| {
            let pg_type = catalog
                .and_then(|table| table.columns.iter().find(|c| c.name == column))
                .map(|c| catalog_pg_type(c.ty).to_string())
                .or_else(|| inlined.and_then(|types| types.get(column).cloned()))
                .unwrap_or_else(|| declared_pg_type(sqlite_type).to_string());
            (column.clone(), pg_type, default.clone())
        })
        .collect();
    let mut keyed: Vec<(i64, String)> = declared
        .iter()
        .filter(|(_, _, _, pk)| *pk > 0)
        .map(|(column, _, _, pk)| (*pk, column.clone()))
        .collect();
    keyed.sort();
    let mut primary_key: Vec<String> = keyed.into_iter().map(|(_, column)| column).collect();
    if primary_key.is_empty() {
        // A copy made without the DDL (see scripts/duckdb-catalog-to-sqlite.py)
        // has no keys: a catalog table gets DuckLake's.
        if let Some(table) = catalog {
            primary_key = table
                .primary_key
                .iter()
                .map(|&index| table.columns[index].name.to_string())
                .filter(|name| columns.iter().any(|c| &c.0 == name))
                .collect();
        }
    }
    let mut rows = Vec::new();
    let mut select = db.prepare(&format!("SELECT * FROM {quoted}"))?;
    let mut result = select.query([])?;
    while let Some(row) = result.next()? {
        let mut values = Vec::with_capacity(columns.len());
        for (index, (_, pg_type, _)) in columns.iter().enumerate() {
            values.push(pg_text(row.get_ref(index)?, pg_type));
        }
        rows.push(values);
    }
    Ok(SourceTable {
        name: name.to_string(),
        columns,
        primary_key,
        rows,
    })
}

/// The PostgreSQL type of a catalog column of kind `ty`.
fn catalog_pg_type(ty: CatalogType) -> &'static str {
    match ty {
        CatalogType::Int8 => "bigint",
        CatalogType::Varchar => "character varying",
        CatalogType::Bool => "boolean",
        CatalogType::Uuid => "uuid",
        CatalogType::TimestampTz => "timestamp with time zone",
    }
}

/// The PostgreSQL type of a column known only by its SQLite declaration.
fn declared_pg_type(sqlite_type: &str) -> &'static str {
    match sqlite_type.to_ascii_uppercase().as_str() {
        "BIGINT" | "INTEGER" | "INT" => "bigint",
        "BLOB" => "bytea",
        "DOUBLE" | "REAL" => "double precision",
        _ => "character varying",
    }
}

/// A SQLite value in PostgreSQL's text form for a column of `pg_type`.
fn pg_text(value: ValueRef<'_>, pg_type: &str) -> Option<String> {
    let bytea = |bytes: &[u8]| {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        format!("\\x{hex}")
    };
    match value {
        ValueRef::Null => None,
        ValueRef::Integer(i) if pg_type == "boolean" => Some(if i != 0 { "t" } else { "f" }.into()),
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) if pg_type == "bytea" => Some(bytea(bytes)),
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => {
            Some(String::from_utf8_lossy(bytes).into_owned())
        }
    }
}

/// The DuckLake column types of inlined-data tables, from the catalog
/// tables read before them.
struct InlinedTypes {
    /// `table_name` of `ducklake_inlined_data_tables` → (table id, schema
    /// version).
    tables: HashMap<String, (String, i64)>,
    /// Latest snapshot of each schema version.
    version_snapshots: Vec<(i64, i64)>,
    /// Top-level columns: (table id, name, type, begin snapshot).
    columns: Vec<(String, String, String, i64)>,
}

impl InlinedTypes {
    fn new(tables: &[SourceTable]) -> InlinedTypes {
        let rows = |name: &str, wanted: &[&str]| -> Vec<Vec<Option<String>>> {
            let Some(table) = tables.iter().find(|t| t.name == name) else {
                return Vec::new();
            };
            let positions: Vec<Option<usize>> = wanted
                .iter()
                .map(|w| table.columns.iter().position(|c| c.0 == *w))
                .collect();
            table
                .rows
                .iter()
                .map(|row| {
                    positions
                        .iter()
                        .map(|p| p.and_then(|p| row[p].clone()))
                        .collect()
                })
                .collect()
        };
        let number = |v: &Option<String>| v.as_deref().and_then(|v| v.parse().ok()).unwrap_or(0);
        let tables_map = rows(
            "ducklake_inlined_data_tables",
            &["table_name", "table_id", "schema_version"],
        )
        .into_iter()
        .map(|r| {
            (
                r[0].clone().unwrap_or_default(),
                (r[1].clone().unwrap_or_default(), number(&r[2])),
            )
        })
        .collect();
        let version_snapshots = rows("ducklake_snapshot", &["snapshot_id", "schema_version"])
            .iter()
            .map(|r| (number(&r[1]), number(&r[0])))
            .collect();
        let columns = rows(
            "ducklake_column",
            &[
                "table_id",
                "column_name",
                "column_type",
                "begin_snapshot",
                "parent_column",
            ],
        )
        .into_iter()
        .filter(|r| r[4].is_none())
        .map(|r| {
            (
                r[0].clone().unwrap_or_default(),
                r[1].clone().unwrap_or_default(),
                r[2].clone().unwrap_or_default(),
                number(&r[3]),
            )
        })
        .collect();
        InlinedTypes {
            tables: tables_map,
            version_snapshots,
            columns,
        }
    }

    /// The DuckLake type of each user column of inlined table `name`.
    fn ducklake_types(&self, name: &str) -> HashMap<String, String> {
        let Some((table_id, version)) = self.tables.get(name) else {
            return HashMap::new();
        };
        // The columns as of the last snapshot of that schema version.
        let at = self
            .version_snapshots
            .iter()
            .filter(|(v, _)| v <= version)
            .map(|(_, snapshot)| *snapshot)
            .max()
            .unwrap_or(i64::MAX);
        let mut types: HashMap<String, (i64, String)> = HashMap::new();
        for (table, column, ty, begin) in &self.columns {
            if table == table_id && *begin <= at {
                let entry = types.entry(column.clone()).or_insert((*begin, ty.clone()));
                if *begin >= entry.0 {
                    *entry = (*begin, ty.clone());
                }
            }
        }
        types.into_iter().map(|(c, (_, ty))| (c, ty)).collect()
    }

    /// The PostgreSQL type DuckLake gives each user column of `name`.
    fn columns(&self, name: &str) -> HashMap<String, String> {
        self.ducklake_types(name)
            .into_iter()
            .map(|(column, ty)| (column, inlined_pg_type(&ty).to_string()))
            .collect()
    }
}

/// The PostgreSQL type DuckLake 1.5 gives an inlined column of DuckLake type
/// `ty` (strings and blobs as BYTEA; dates, timestamps and integers wider
/// than BIGINT as text).
fn inlined_pg_type(ty: &str) -> String {
    let ty = ty.to_ascii_lowercase();
    if let Some(args) = ty.strip_prefix("decimal") {
        return format!("numeric{args}");
    }
    match ty.as_str() {
        "int8" | "int16" => "smallint",
        "int32" | "uint8" | "uint16" => "integer",
        "int64" | "uint32" => "bigint",
        "float32" => "real",
        "float64" => "double precision",
        "boolean" => "boolean",
        "varchar" | "blob" => "bytea",
        "time" => "time without time zone",
        "timetz" => "time with time zone",
        "uuid" => "uuid",
        "interval" => "interval",
        "json" => "json",
        _ => "character varying",
    }
    .to_string()
}

/// The SQLite declaration DuckDB's SQLite scanner gives a column of
/// PostgreSQL type `pg_type` (integers and booleans BIGINT, byte strings
/// BLOB, everything else text).
fn sqlite_type(pg_type: &str, ducklake_type: Option<&str>) -> &'static str {
    match pg_type {
        "smallint" | "integer" | "bigint" | "boolean" => "BIGINT",
        "bytea" if ducklake_type == Some("varchar") => "VARCHAR",
        "bytea" => "BLOB",
        _ => "VARCHAR",
    }
}

/// A value in PostgreSQL's text form as SQLite stores it in a column of
/// `pg_type` declared `declared`.
fn sqlite_value(text: &Option<String>, pg_type: &str, declared: &str) -> anyhow::Result<Value> {
    let Some(text) = text else {
        return Ok(Value::Null);
    };
    Ok(match (pg_type, declared) {
        ("boolean", _) => Value::Integer(i64::from(text == "t" || text == "true")),
        (_, "BIGINT") => Value::Integer(
            text.parse()
                .with_context(|| format!("{text:?} is not an integer"))?,
        ),
        ("bytea", declared) => {
            let hex = text.strip_prefix("\\x").unwrap_or(text);
            let bytes = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
                .with_context(|| format!("{text:?} is not a bytea value"))?;
            if declared == "VARCHAR" {
                Value::Text(String::from_utf8_lossy(&bytes).into_owned())
            } else {
                Value::Blob(bytes)
            }
        }
        _ => Value::Text(text.clone()),
    })
}

/// Writes every table into the SQLite file `file` (new, or without tables)
/// in one transaction; returns the rows per table.
pub fn write(file: &str, source: &SourceCatalog) -> anyhow::Result<Vec<(String, usize)>> {
    let mut db =
        Connection::open(file).with_context(|| format!("opening SQLite catalog {file:?}"))?;
    let existing: i64 = db.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
        [],
        |row| row.get(0),
    )?;
    if existing > 0 {
        bail!("{file:?} holds {existing} tables: export needs an empty target");
    }
    let inlined = InlinedTypes::new(&source.tables);
    let txn = db.transaction()?;
    let total: usize = source.tables.iter().map(|t| t.rows.len()).sum();
    let progress = progress_bar(total);
    let mut counts = Vec::new();
    for table in &source.tables {
        progress.set_message(table.name.clone());
        let ducklake_types = if table.name.starts_with(INLINED_DATA) {
            inlined.ducklake_types(&table.name)
        } else {
            HashMap::new()
        };
        let declared: Vec<&str> = table
            .columns
            .iter()
            .map(|(name, pg_type, _)| {
                sqlite_type(pg_type, ducklake_types.get(name).map(String::as_str))
            })
            .collect();
        let mut parts: Vec<String> = table
            .columns
            .iter()
            .zip(&declared)
            .map(|((name, _, _), ty)| format!("{} {ty}", super::ident(name)))
            .collect();
        if !table.primary_key.is_empty() {
            let key: Vec<String> = table.primary_key.iter().map(|c| super::ident(c)).collect();
            parts.push(format!("PRIMARY KEY ({})", key.join(", ")));
        }
        txn.execute_batch(&format!(
            "CREATE TABLE {} ({})",
            super::ident(&table.name),
            parts.join(", ")
        ))?;
        let placeholders = vec!["?"; table.columns.len()].join(", ");
        let mut insert = txn.prepare(&format!(
            "INSERT INTO {} VALUES ({placeholders})",
            super::ident(&table.name)
        ))?;
        for row in &table.rows {
            let values = row
                .iter()
                .zip(&table.columns)
                .zip(&declared)
                .map(|((value, (_, pg_type, _)), declared)| sqlite_value(value, pg_type, declared))
                .collect::<anyhow::Result<Vec<Value>>>()
                .with_context(|| format!("a row of {}", table.name))?;
            insert.execute(rusqlite::params_from_iter(values))?;
            progress.inc(1);
        }
        counts.push((table.name.clone(), table.rows.len()));
    }
    progress.finish_and_clear();
    txn.commit()?;
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_convert_both_ways() {
        assert_eq!(
            pg_text(ValueRef::Integer(1), "boolean").as_deref(),
            Some("t")
        );
        assert_eq!(
            pg_text(ValueRef::Text(b"ab"), "bytea").as_deref(),
            Some("\\x6162")
        );
        assert_eq!(
            sqlite_value(&Some("\\x6162".into()), "bytea", "VARCHAR").unwrap(),
            Value::Text("ab".into())
        );
        assert_eq!(
            sqlite_value(&Some("f".into()), "boolean", "BIGINT").unwrap(),
            Value::Integer(0)
        );
        assert_eq!(inlined_pg_type("decimal(10,2)"), "numeric(10,2)");
        assert_eq!(inlined_pg_type("timestamptz"), "character varying");
    }
}
