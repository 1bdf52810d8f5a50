//! Parse + Describe of a [`Session`]: a statement's result columns and
//! parameter types without running it.

use rocklake_types::datum::ColumnDef;
use rocklake_types::output::QueryOutput;
use rocklake_types::params::Described;
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::Statement;

use super::{aborted, Session, TxState};
use crate::parse;
use crate::plan::params::ParamTypes;
use crate::session::settings;
use crate::session::transaction::TxnMode;

impl Session {
    /// Parse + Describe: the result columns of a statement without running
    /// it, and the types of its parameters (`declared` by Parse, 0 where not
    /// given, the others inferred from their use). Statements without a
    /// result set describe as no columns.
    pub async fn describe(&mut self, sql: &str, declared: &[u32]) -> Result<Described, SqlError> {
        self.settings.install_time_zone();
        let parsed = parse::parse_with_notices(sql)?;
        let mut described = self.describe_parsed(parsed.statements, declared).await?;
        described.notices = parsed.notices;
        Ok(described)
    }

    /// [`Session::describe`] of the statements of a query string.
    async fn describe_parsed(
        &mut self,
        mut stmts: Vec<Statement>,
        declared: &[u32],
    ) -> Result<Described, SqlError> {
        if stmts.len() > 1 {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        let Some(stmt) = stmts.first_mut() else {
            return Ok(Described {
                params: declared.to_vec(),
                ..Described::default()
            });
        };
        if let Statement::ShowVariable { variable } = stmt {
            // SHOW returns a row: its column (and the error for an unknown
            // setting) as running it gives them.
            let columns = match settings::show(&self.settings, variable)? {
                QueryOutput::Returning { columns, .. } => columns,
                _ => Vec::new(),
            };
            return Ok(Described {
                params: declared.to_vec(),
                columns,
                ..Described::default()
            });
        }
        let mut params = ParamTypes::new(declared, crate::session::params::count(stmt)?);
        let binds = matches!(
            stmt,
            Statement::Query(_)
                | Statement::Insert(_)
                | Statement::Update(_)
                | Statement::Delete(_)
        );
        if !binds {
            return Ok(Described {
                params: params.resolved(),
                ..Described::default()
            });
        }
        let temp = match self.state {
            TxState::Failed(_) => return Err(aborted()),
            TxState::Idle => {
                let mode = TxnMode {
                    read_only: true,
                    ..self.default_mode()
                };
                self.state = TxState::Implicit(self.begin_ctx(mode).await?);
                true
            }
            _ => false,
        };
        let result = self.describe_statement(stmt, &mut params).await;
        if temp {
            self.state = TxState::Idle;
        }
        Ok(Described {
            columns: result?,
            params: params.resolved(),
            ..Described::default()
        })
    }

    async fn describe_statement(
        &mut self,
        stmt: &Statement,
        params: &mut ParamTypes,
    ) -> Result<Vec<ColumnDef>, SqlError> {
        self.ensure_catalog().await?;
        let ctx = match &self.state {
            TxState::Implicit(c) | TxState::Block(c) => c,
            _ => return Err(SqlError::internal("no transaction")),
        };
        let cat = ctx
            .catalog
            .as_ref()
            .ok_or_else(|| SqlError::internal("catalog not loaded"))?;
        crate::session::prepare::describe(cat, ctx.now, self.pid, stmt, params)
    }
}
