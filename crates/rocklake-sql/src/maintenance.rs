//! Catalog maintenance statements: `CALL rocklake_retain_from('<spec>')` and
//! `CALL rocklake_excise()`, which `rocklake gc` and `rocklake excise` send
//! (an extra argument names the schema of a `METADATA_SCHEMA` lake, the
//! database's home lake without it); `CALL rocklake_checkpoint('<name>')`,
//! `rocklake_checkpoints()` and `rocklake_drop_checkpoint('<name>')`, which
//! `rocklake checkpoint` sends, act on every lake of the database;
//! `CALL rocklake_tag('<name>', <snapshot id>)`, `rocklake_untag('<name>')`
//! and `rocklake_tags()` keep snapshots readable whatever the retention
//! floor (an extra argument names a `METADATA_SCHEMA` lake).
//!
//! They are procedures in PostgreSQL's `CALL` syntax so any PostgreSQL client
//! can run them; each runs in its own catalog transaction and so, like
//! `VACUUM`, cannot run inside a transaction block.

use rocklake_types::datum::{ColumnDef, Datum, PgType};
use sqlparser::ast::{Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, Value};

use crate::storage::{Maintenance, Storage};
use rocklake_types::output::QueryOutput;
use rocklake_types::{SqlError, SqlState};

/// The maintenance command `function` names, `None` for any other procedure.
pub fn parse_call(function: &Function) -> Result<Option<Maintenance>, SqlError> {
    let name = function
        .name
        .0
        .last()
        .map(|part| part.to_string().trim_matches('"').to_lowercase())
        .unwrap_or_default();
    let args = match &function.args {
        FunctionArguments::None => Vec::new(),
        FunctionArguments::List(list) if list.clauses.is_empty() => list.args.clone(),
        _ => return Err(bad_call(function)),
    };
    let texts = args
        .iter()
        .map(|arg| match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(value))) => match &value.value {
                Value::SingleQuotedString(s) => Some(s.clone()),
                Value::Number(n, _) => Some(n.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect::<Option<Vec<String>>>();
    let command = match (name.as_str(), texts.as_deref()) {
        ("rocklake_retain_from", Some([spec])) => Maintenance::RetainFrom {
            spec: spec.clone(),
            schema: None,
        },
        ("rocklake_retain_from", Some([spec, schema])) => Maintenance::RetainFrom {
            spec: spec.clone(),
            schema: Some(schema.clone()),
        },
        ("rocklake_excise", Some([])) => Maintenance::Excise { schema: None },
        ("rocklake_excise", Some([schema])) => Maintenance::Excise {
            schema: Some(schema.clone()),
        },
        ("rocklake_checkpoint", Some([name])) => Maintenance::Checkpoint { name: name.clone() },
        ("rocklake_checkpoints", Some([])) => Maintenance::Checkpoints,
        ("rocklake_tag", Some([name, snapshot])) => Maintenance::Tag {
            name: name.clone(),
            snapshot: snapshot.clone(),
            schema: None,
        },
        ("rocklake_tag", Some([name, snapshot, schema])) => Maintenance::Tag {
            name: name.clone(),
            snapshot: snapshot.clone(),
            schema: Some(schema.clone()),
        },
        ("rocklake_untag", Some([name])) => Maintenance::Untag {
            name: name.clone(),
            schema: None,
        },
        ("rocklake_untag", Some([name, schema])) => Maintenance::Untag {
            name: name.clone(),
            schema: Some(schema.clone()),
        },
        ("rocklake_set_retention", Some([spec])) => Maintenance::SetRetention {
            spec: spec.clone(),
            schema: None,
        },
        ("rocklake_set_retention", Some([spec, schema])) => Maintenance::SetRetention {
            spec: spec.clone(),
            schema: Some(schema.clone()),
        },
        ("rocklake_tags", Some([])) => Maintenance::Tags { schema: None },
        ("rocklake_tags", Some([schema])) => Maintenance::Tags {
            schema: Some(schema.clone()),
        },
        ("rocklake_drop_checkpoint", Some([name])) => {
            Maintenance::DropCheckpoint { name: name.clone() }
        }
        (
            "rocklake_retain_from"
            | "rocklake_excise"
            | "rocklake_checkpoint"
            | "rocklake_checkpoints"
            | "rocklake_drop_checkpoint"
            | "rocklake_tag"
            | "rocklake_untag"
            | "rocklake_tags"
            | "rocklake_set_retention",
            _,
        ) => return Err(bad_call(function)),
        _ => return Ok(None),
    };
    Ok(Some(command))
}

fn bad_call(function: &Function) -> SqlError {
    SqlError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!(
            "procedure {function} does not exist: use rocklake_retain_from('<snapshot id or age such as 7d>' [, '<metadata schema>']), rocklake_excise(['<metadata schema>']), rocklake_checkpoint('<name>'), rocklake_checkpoints(), rocklake_drop_checkpoint('<name>'), rocklake_tag('<name>', <snapshot id> [, '<metadata schema>']), rocklake_untag('<name>' [, '<metadata schema>']), rocklake_tags(['<metadata schema>']) or rocklake_set_retention('<age such as 7d, off or default>' [, '<metadata schema>'])"
        ),
    )
}

/// Runs `command` on `storage` and shows what it did as `(item, value)` rows.
pub async fn run(storage: &dyn Storage, command: Maintenance) -> Result<QueryOutput, SqlError> {
    let rows = storage
        .maintain(command)
        .await?
        .into_iter()
        .map(|(item, value)| vec![Datum::text(item), Datum::text(value)])
        .collect::<Vec<_>>();
    Ok(QueryOutput::Rows {
        columns: vec![
            ColumnDef::new("item", PgType::Text),
            ColumnDef::new("value", PgType::Text),
        ],
        rows: rows.into(),
    })
}
