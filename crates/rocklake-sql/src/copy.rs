//! `COPY`: the options of a COPY statement. The stream formats themselves
//! are codecs in [`rocklake_types::copy`].

use rocklake_types::copy::csv::{CsvCopyFormat, ForceQuote};
use rocklake_types::copy::text::TextCopyFormat;
use rocklake_types::copy::CopyFormat;
use rocklake_types::datum::ColumnDef;
use rocklake_types::output::ResultSink;
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{
    CopyLegacyCsvOption, CopyLegacyOption, CopyOption, CopySource, CopyTarget, Statement,
};

use crate::exec::StmtEnv;
use crate::parse;
use crate::query::shared_results::CatalogResults;
use crate::query::{self, Destination, Failure};
use crate::storage::{RelationDef, StorageTxn};
use crate::write::dml::{complete_rows, copy_targets, resolve_target};

/// The format of a COPY in either direction: binary, text or CSV with their
/// options (`FORMAT`, `DELIMITER`, `NULL`, `HEADER`, `QUOTE`, `ESCAPE`,
/// `FORCE_QUOTE`, and the pre-9.0 forms); 0A000 for other options.
pub(crate) fn copy_format(
    options: &[CopyOption],
    legacy: &[CopyLegacyOption],
) -> Result<CopyFormat, SqlError> {
    let mut kind = "text";
    let mut delimiter = None;
    let mut null = None;
    let mut csv = CsvCopyFormat::default();
    let mut csv_only = Vec::new();
    let unsupported = |o: &dyn std::fmt::Display| {
        SqlError::unsupported(format!("COPY option {o} is not supported"))
    };
    for o in options {
        match o {
            CopyOption::Format(f) => {
                kind = match f.value.to_ascii_lowercase().as_str() {
                    "binary" => "binary",
                    "text" => "text",
                    "csv" => "csv",
                    other => {
                        return Err(SqlError::new(
                            SqlState::INVALID_PARAMETER_VALUE,
                            format!("COPY format \"{other}\" not recognized"),
                        ))
                    }
                }
            }
            CopyOption::Delimiter(d) if d.is_ascii() => delimiter = Some(*d as u8),
            CopyOption::Null(n) => null = Some(n.clone()),
            CopyOption::Header(h) => csv.header = *h,
            CopyOption::Quote(q) if q.is_ascii() => {
                csv.quote = *q as u8;
                csv_only.push("QUOTE");
            }
            CopyOption::Escape(e) if e.is_ascii() => {
                csv.escape = *e as u8;
                csv_only.push("ESCAPE");
            }
            CopyOption::ForceQuote(columns) => {
                csv.force_quote = force_quote(columns);
                csv_only.push("FORCE_QUOTE");
            }
            other => return Err(unsupported(other)),
        }
    }
    for o in legacy {
        match o {
            CopyLegacyOption::Binary => kind = "binary",
            CopyLegacyOption::Delimiter(d) if d.is_ascii() => delimiter = Some(*d as u8),
            CopyLegacyOption::Null(n) => null = Some(n.clone()),
            CopyLegacyOption::Csv(csv_options) => {
                kind = "csv";
                for c in csv_options {
                    match c {
                        CopyLegacyCsvOption::Header => csv.header = true,
                        CopyLegacyCsvOption::Quote(q) if q.is_ascii() => csv.quote = *q as u8,
                        CopyLegacyCsvOption::Escape(e) if e.is_ascii() => csv.escape = *e as u8,
                        CopyLegacyCsvOption::ForceQuote(columns) => {
                            csv.force_quote = force_quote(columns)
                        }
                        other => return Err(unsupported(other)),
                    }
                }
            }
            other => return Err(unsupported(other)),
        }
    }
    if kind != "csv" {
        if let Some(option) = csv_only.first() {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("COPY {option} available only in CSV mode"),
            ));
        }
    }
    Ok(match kind {
        "binary" => CopyFormat::Binary,
        "csv" => {
            if let Some(d) = delimiter {
                csv.delimiter = d;
            }
            if let Some(n) = null {
                csv.null = n;
            }
            if csv.escape == b'"' && csv.quote != b'"' {
                csv.escape = csv.quote;
            }
            CopyFormat::Csv(csv)
        }
        _ => {
            let mut text = TextCopyFormat {
                header: csv.header,
                ..TextCopyFormat::default()
            };
            if let Some(d) = delimiter {
                text.delimiter = d;
            }
            if let Some(n) = null {
                text.null = n;
            }
            CopyFormat::Text(text)
        }
    })
}

fn force_quote(columns: &[sqlparser::ast::Ident]) -> ForceQuote {
    match columns {
        [star] if star.value == "*" => ForceQuote::All,
        _ => ForceQuote::Columns(columns.iter().map(crate::ident::fold).collect()),
    }
}

/// Runs a COPY statement: `COPY (query) TO STDOUT` sends the query's rows
/// as binary COPY data; `COPY table FROM STDIN` asks the client for its rows
/// and inserts them.
pub(crate) async fn copy_statement(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    stmt: &Statement,
    shared: Option<(u64, &CatalogResults)>,
    sink: &mut dyn ResultSink,
) -> Result<(), Failure> {
    let Statement::Copy {
        source,
        to,
        target,
        options,
        legacy_options,
        ..
    } = stmt
    else {
        return Err(SqlError::internal("not a COPY statement").into());
    };
    if *to {
        let format = copy_format(options, legacy_options)?;
        return match (target, source) {
            (CopyTarget::Stdout, CopySource::Query(q)) => {
                query::run(txn, env, q, shared, sink, Destination::CopyOut(&format)).await
            }
            (
                CopyTarget::Stdout,
                CopySource::Table {
                    table_name,
                    columns,
                },
            ) => {
                let q = table_query(table_name, columns)?;
                query::run(txn, env, &q, shared, sink, Destination::CopyOut(&format)).await
            }
            _ => Err(SqlError::unsupported(format!("COPY form not supported: {stmt}")).into()),
        };
    }
    let format = copy_format(options, legacy_options)?;
    match (to, target, source) {
        (
            false,
            CopyTarget::Stdin,
            CopySource::Table {
                table_name,
                columns,
            },
        ) => {
            let def: RelationDef = resolve_target(env.cat, table_name)?;
            let targets = copy_targets(&def, columns)?;
            let cols: Vec<ColumnDef> = targets.iter().map(|&i| def.columns[i].clone()).collect();
            let rows = sink.copy_in(&cols, &format).await??;
            let full = complete_rows(&def, &targets, rows)?;
            let n = full.len();
            crate::write::dml::keys::check_inserts(txn, &def, &full).await?;
            if let Some(inserted) = &env.cat.inserted_snapshots {
                inserted.offer(&def, &full);
            }
            env.limits.unless_stopped(txn.insert(&def, full)).await?;
            sink.complete(&format!("COPY {n}"), &[]).await?;
            Ok(())
        }
        _ => Err(SqlError::unsupported(format!("COPY form not supported: {stmt}")).into()),
    }
}

/// `COPY table [(columns)] TO STDOUT` as the query it stands for.
fn table_query(
    table: &sqlparser::ast::ObjectName,
    columns: &[sqlparser::ast::Ident],
) -> Result<sqlparser::ast::Query, SqlError> {
    let list = match columns {
        [] => "*".to_string(),
        columns => columns
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    };
    match parse::parse(&format!("SELECT {list} FROM {table}"))?.pop() {
        Some(Statement::Query(q)) => Ok(*q),
        _ => Err(SqlError::internal("COPY table did not make a query")),
    }
}
