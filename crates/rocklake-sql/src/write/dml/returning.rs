//! `RETURNING` of INSERT, UPDATE and DELETE, and the expressions of
//! `ON CONFLICT DO UPDATE`: expressions over rows of the target table (and
//! of `excluded`), bound as the select list of a query over those rows given
//! as VALUES, so they have PostgreSQL's name resolution (an unqualified name
//! both rows have is ambiguous) and every expression the engine has.

use rocklake_types::datum::{ColumnDef, Row};
use rocklake_types::output::QueryOutput;
use rocklake_types::rows::ResultRows;
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{SelectItem, Statement};

use crate::bind::Binder;
use crate::catalog::Catalog;
use crate::exec::eval::eval;
use crate::exec::fetch::prefetch;
use crate::exec::scan_data::ScanData;
use crate::exec::{ExecCtx, Scope, StmtEnv};
use crate::ident::quote_ident;
use crate::plan::{BExpr, FromPlan, OutCol, ScanReq, SetPlan};
use crate::query::out_columns;
use crate::storage::{RelationDef, StorageTxn};

/// Expressions bound over rows of one or more relations (each row given as
/// the concatenation of their values).
pub(crate) struct RowExpressions {
    /// The expressions, over the concatenated row.
    exprs: Vec<BExpr>,
    /// Their output columns (names and types).
    pub columns: Vec<OutCol>,
    /// Scans their subqueries read.
    scans: Vec<ScanReq>,
}

/// `(VALUES (NULL::type, ...)) AS alias(column, ...)`: a FROM item with the
/// relation's columns and no rows, under `alias`.
fn typed_source(def: &RelationDef, alias: &str) -> String {
    let nulls: Vec<String> = def
        .columns
        .iter()
        .map(|c| format!("NULL::{}", c.pg_type.sql_name()))
        .collect();
    let names: Vec<String> = def.columns.iter().map(|c| quote_ident(&c.name)).collect();
    format!(
        "(VALUES ({})) AS {}({})",
        nulls.join(", "),
        quote_ident(alias),
        names.join(", ")
    )
}

impl RowExpressions {
    /// Binds `items` (a RETURNING list, or SET values) over rows of the
    /// `sources`: (relation, the name it goes by).
    pub(crate) fn bind(
        cat: &Catalog,
        now: i64,
        pid: i32,
        sources: &[(&RelationDef, &str)],
        items: &[String],
    ) -> Result<RowExpressions, SqlError> {
        let from: Vec<String> = sources
            .iter()
            .map(|(def, alias)| typed_source(def, alias))
            .collect();
        let sql = format!("SELECT {} FROM {}", items.join(", "), from.join(", "));
        let statements = crate::parse::parse(&sql)?;
        let Some(Statement::Query(query)) = statements.first() else {
            return Err(SqlError::internal(format!("not a query: {sql}")));
        };
        let mut binder = Binder::new(cat, now, pid);
        for (def, alias) in sources {
            let oid = Catalog::rel_oid(def);
            let origins = (1..=def.columns.len())
                .map(|n| i16::try_from(n).ok().map(|n| (oid, n)))
                .collect();
            // `typed_source` quotes the alias as needed: it binds as given.
            binder.derived_origins.insert(alias.to_string(), origins);
        }
        let plan = binder.bind_query(query)?;
        let SetPlan::Select(select) = plan.body else {
            return Err(SqlError::internal("RETURNING did not bind to a SELECT"));
        };
        if select.agg.is_some() {
            return Err(SqlError::new(
                SqlState::GROUPING_ERROR,
                "aggregate functions are not allowed in RETURNING",
            ));
        }
        if !select.windows.is_empty() {
            return Err(SqlError::new(
                SqlState::WINDOWING_ERROR,
                "window functions are not allowed in RETURNING",
            ));
        }
        if !select.set_calls.is_empty() {
            return Err(SqlError::unsupported(
                "set-returning functions in RETURNING are not supported",
            ));
        }
        debug_assert!(matches!(
            select.from,
            FromPlan::Join { .. } | FromPlan::Derived(_)
        ));
        Ok(RowExpressions {
            exprs: select.projection,
            columns: plan.columns,
            scans: binder.scans,
        })
    }

    /// Binds a statement's RETURNING list over the target's rows.
    pub(crate) fn returning(
        env: &StmtEnv<'_>,
        def: &RelationDef,
        alias: &str,
        items: &[SelectItem],
    ) -> Result<RowExpressions, SqlError> {
        let items: Vec<String> = items.iter().map(ToString::to_string).collect();
        Self::bind(env.cat, env.now, env.pid, &[(def, alias)], &items)
    }

    /// The values of the expressions for each row.
    pub(crate) async fn evaluate(
        &self,
        txn: &mut dyn StorageTxn,
        env: &StmtEnv<'_>,
        rows: &[Row],
    ) -> Result<Vec<Row>, SqlError> {
        let data = self.prefetch(txn, env).await?;
        self.evaluate_over(&data, env, rows)
    }

    /// Reads what the expressions' subqueries read (once per statement: they
    /// see the statement's snapshot, as in PostgreSQL).
    pub(crate) async fn prefetch(
        &self,
        txn: &mut dyn StorageTxn,
        env: &StmtEnv<'_>,
    ) -> Result<Vec<ScanData>, SqlError> {
        prefetch(txn, env.cat, &self.scans, false, env.limits).await
    }

    /// The values of the expressions for each row, over prefetched `data`.
    pub(crate) fn evaluate_over(
        &self,
        data: &[ScanData],
        env: &StmtEnv<'_>,
        rows: &[Row],
    ) -> Result<Vec<Row>, SqlError> {
        let ctx = ExecCtx::new(data, env.cat, env.limits);
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            ctx.tick()?;
            let mut values = Vec::with_capacity(self.exprs.len());
            for e in &self.exprs {
                values.push(eval(e, &ctx, Scope::top(row))?);
            }
            out.push(values);
        }
        Ok(out)
    }

    /// The result of a statement with RETURNING: the rows, completed by the
    /// statement's own tag.
    pub(crate) fn output(&self, rows: Vec<Row>, tag: String) -> QueryOutput {
        QueryOutput::Returning {
            columns: self.result_columns(),
            rows: ResultRows::Owned(rows),
            tag,
        }
    }

    /// The result's columns.
    pub(crate) fn result_columns(&self) -> Vec<ColumnDef> {
        out_columns(&self.columns)
    }
}

/// The name a DML target goes by: its alias, else its table name.
pub(crate) fn target_alias(def: &RelationDef, alias: Option<&sqlparser::ast::Ident>) -> String {
    alias.map_or_else(|| def.name.clone(), crate::ident::fold)
}

/// The command tag and, with RETURNING, the rows of a DML statement.
pub(crate) async fn finish(
    txn: &mut dyn StorageTxn,
    env: &StmtEnv<'_>,
    returning: Option<&RowExpressions>,
    changed: &[Row],
    tag: String,
) -> Result<QueryOutput, SqlError> {
    Ok(match returning {
        Some(returning) => {
            let rows = returning.evaluate(txn, env, changed).await?;
            returning.output(rows, tag)
        }
        None => QueryOutput::Command {
            tag,
            notices: Vec::new(),
        },
    })
}
