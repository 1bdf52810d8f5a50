//! Reading and changing a database's DuckLake tables from inside the server
//! (the status page, hygiene) through an engine session, with the same SQL
//! a PostgreSQL client would send, so the server sees what clients see.

use rocklake_sql::Session;
use rocklake_store::ServedDatabase;
use rocklake_types::output::QueryOutput;
use rocklake_types::value::text::format_text;
use rocklake_types::SqlError;

/// A session of `database` (named `name`) for the server's own statements.
pub fn session(name: &str, database: &ServedDatabase) -> Session {
    let mut session = Session::for_database(database.storage(), database.catalog_results());
    session.set_database(name);
    session
}

/// Rows of `sql` as text cells (`None` for NULL); `None` when it failed.
pub async fn query(session: &mut Session, sql: &str) -> Option<Vec<Vec<Option<String>>>> {
    let mut results = session.execute(sql).await;
    match results.pop()? {
        Ok(QueryOutput::Rows { rows, .. }) | Ok(QueryOutput::Returning { rows, .. }) => Some(
            rows.into_rows()
                .iter()
                .map(|row| row.iter().map(format_text).collect())
                .collect(),
        ),
        _ => None,
    }
}

/// Runs a query string (several statements, one implicit transaction
/// unless it holds BEGIN/COMMIT); the first error.
pub async fn run(session: &mut Session, sql: &str) -> Result<(), SqlError> {
    for result in session.execute(sql).await {
        result?;
    }
    Ok(())
}

/// Runs one statement that changes rows; how many it changed (the count of
/// its command tag: `DELETE 3` is 3).
pub async fn run_counting(session: &mut Session, sql: &str) -> Result<u64, SqlError> {
    let mut changed = 0;
    for result in session.execute(sql).await {
        if let QueryOutput::Command { tag, .. } = result? {
            changed += tag
                .rsplit(' ')
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Ok(changed)
}

/// `name` as a quoted SQL identifier.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `text` as a quoted SQL string literal.
pub fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}
