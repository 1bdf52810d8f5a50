//! Object names by oid, as the object-identifier types print them
//! (`regclass`, `regtype`, `regnamespace`, `regproc`) and read them back.

use std::sync::Arc;

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::{SqlError, SqlState};

use super::{Catalog, OidTarget, VirtualTable};
use crate::ident::quote_ident;

/// Which object-identifier type a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegKind {
    /// `regclass`: a relation.
    Class,
    /// `regtype`: a type.
    Type,
    /// `regnamespace`: a schema.
    Namespace,
    /// `regproc`: a function.
    Proc,
}

impl RegKind {
    /// The kind of an object-identifier type.
    pub fn of(t: &PgType) -> Option<RegKind> {
        match t {
            PgType::RegClass => Some(RegKind::Class),
            PgType::RegType => Some(RegKind::Type),
            PgType::RegNamespace => Some(RegKind::Namespace),
            PgType::RegProc => Some(RegKind::Proc),
            _ => None,
        }
    }
}

impl Catalog {
    /// What `regclass` prints for a relation's (or a primary-key index's)
    /// oid: its name, schema-qualified when the search path does not find
    /// it; `None` for an oid that names no relation.
    pub fn relation_name(&self, oid: u32) -> Option<String> {
        if let Some((target, def)) = self.by_oid(oid) {
            let name = match target {
                OidTarget::Table(_) => def.name.clone(),
                OidTarget::PrimaryKeyIndex(_) => def.primary_key_name(),
                OidTarget::PrimaryKey(_) => return None,
            };
            let visible = self.find_in_path(&def.name) == Some(def);
            return Some(match visible {
                true => quote_ident(&name),
                false => format!("{}.{}", quote_ident(&def.schema), quote_ident(&name)),
            });
        }
        VirtualTable::by_oid(oid).map(|table| match table.schema() {
            "pg_catalog" => table.def().name.to_string(),
            schema => format!("{schema}.{}", table.def().name),
        })
    }

    /// `obj_description` / `col_description`: the comment on an object (a
    /// column when `subid` is not 0) of the catalog `class`, from
    /// `pg_description`.
    pub fn description(&self, objoid: u32, class: &str, subid: i32) -> Option<String> {
        let classoid = VirtualTable::lookup(Some("pg_catalog"), class)?.oid();
        VirtualTable::Description
            .rows(self)
            .into_iter()
            .find(|row| {
                row[0].as_i64() == Some(i64::from(objoid))
                    && row[1].as_i64() == Some(i64::from(classoid))
                    && row[2].as_i64() == Some(i64::from(subid))
            })
            .and_then(|row| row[3].as_str().map(str::to_string))
    }

    /// What `regnamespace` prints for a schema's oid.
    pub fn namespace_name(&self, oid: u32) -> Option<String> {
        ["pg_catalog", "information_schema", "public"]
            .into_iter()
            .map(str::to_string)
            .chain(self.schemas.iter().cloned())
            .find(|s| Self::schema_oid(s) == oid)
            .map(|s| quote_ident(&s))
    }

    /// A value of an object-identifier type from an oid: named when the
    /// object exists, the bare number otherwise (as PostgreSQL prints it).
    pub fn reg_from_oid(&self, kind: RegKind, oid: u32) -> Datum {
        let name = match kind {
            // The invalid oid prints as `-`.
            _ if oid == 0 => Some("-".to_string()),
            RegKind::Class => self.relation_name(oid),
            RegKind::Type => PgType::from_oid(oid).map(|t| t.display_name().to_string()),
            RegKind::Namespace => self.namespace_name(oid),
            RegKind::Proc => super::procs::name(oid).map(str::to_string),
        };
        match name {
            Some(name) => Datum::Reg {
                oid,
                name: Arc::from(name),
            },
            None => Datum::Oid(oid),
        }
    }

    /// A value of an object-identifier type from a name, as its input
    /// function reads it (a number is an oid); an error when there is no
    /// such object.
    pub fn reg_from_name(&self, kind: RegKind, text: &str) -> Result<Datum, SqlError> {
        if let Ok(oid) = text.trim().parse::<u32>() {
            return Ok(self.reg_from_oid(kind, oid));
        }
        let oid = match kind {
            RegKind::Class => self.regclass(text).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("relation \"{text}\" does not exist"),
                )
            })?,
            RegKind::Type => PgType::from_sql_name(text)
                .map(|t| t.oid())
                .ok_or_else(|| {
                    SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("type \"{text}\" does not exist"),
                    )
                })?,
            RegKind::Proc => super::procs::oid(text).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function \"{}\" does not exist", text.trim()),
                )
            })?,
            RegKind::Namespace => {
                let name = text.trim().trim_matches('"');
                let oid = Self::schema_oid(name);
                self.namespace_name(oid).ok_or_else(|| {
                    SqlError::new(
                        SqlState::INVALID_SCHEMA_NAME,
                        format!("schema \"{name}\" does not exist"),
                    )
                })?;
                oid
            }
        };
        Ok(self.reg_from_oid(kind, oid))
    }
}
