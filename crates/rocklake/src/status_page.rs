//! The status page the metrics endpoint serves at `/`: one HTML page,
//! rendered on the server with no script and no external asset (it works
//! offline), of what the server holds: its role and lease, each database
//! and lake with its latest snapshot, a chart of commits per hour over the
//! last three days, its tables (data files, rows, bytes), inlined-data
//! tables, catalog size, oldest readable snapshot, retention, tags and
//! checkpoints, the sessions (as `pg_stat_activity` lists them), and the
//! commit conflicts and errors counted since start.
//!
//! The catalog is read through an engine session of each database, with the
//! same SQL a PostgreSQL client would send, so the page shows exactly what
//! clients see.

use std::fmt::Write;
use std::sync::Arc;

use rocklake_sql::Session;
use rocklake_store::ServedRoot;
use rocklake_types::activity::ActivityBoard;

use crate::catalog_sql::{query, quote_ident, quote_literal};

use crate::observe::ServerRole;

/// Hours the commits chart covers.
const CHART_HOURS: usize = 72;

/// The page, as HTML.
pub async fn render(
    role: ServerRole,
    root: Option<Arc<ServedRoot>>,
    board: Option<Arc<ActivityBoard>>,
) -> String {
    let mut page = String::new();
    page.push_str(HEAD);
    let _ = write!(
        page,
        "<h1>RockLake</h1><p class=\"meta\">role <b id=\"role\">{}</b>",
        role.name()
    );
    let metrics = rocklake_metrics::metrics();
    let _ = write!(
        page,
        " · commits {} · commit conflicts {} · snapshot conflicts (DuckLake retries) {} · errors {}</p>",
        metrics.commit_count(),
        metrics.commit_conflict_count(),
        metrics.snapshot_conflict_count(),
        metrics.error_count()
    );
    match root {
        None => page.push_str("<p>shutting down</p>"),
        Some(root) => {
            lease_line(&mut page, &root).await;
            for name in root.names() {
                if let Some(database) = root.database(&name) {
                    let schemas = root.root().lake_schemas(&name).await.unwrap_or_default();
                    database_section(&mut page, &name, &database, &schemas).await;
                }
            }
        }
    }
    if let Some(board) = board {
        sessions_section(&mut page, &board);
    }
    page.push_str("</body></html>\n");
    page
}

/// Who holds the root's writer lease and how fresh its heartbeat is.
async fn lease_line(page: &mut String, root: &ServedRoot) {
    let line = match rocklake_store::lease::current(root.root()).await {
        Err(error) => format!("could not be read: {error}"),
        Ok(state) if state.term == 0 => "never claimed".to_string(),
        Ok(state) => match &state.holder {
            None => format!("term {}, claimed; no heartbeat yet", state.term),
            Some(holder) => {
                let age = state.heartbeat_age().unwrap_or_default().as_secs_f64();
                format!(
                    "term {} held by {} (host {}, pid {}){}, heartbeat {} {age:.1} s ago",
                    state.term,
                    holder.address,
                    holder.host,
                    holder.pid,
                    if holder.released { ", released" } else { "" },
                    holder.beat,
                )
            }
        },
    };
    let _ = write!(
        page,
        "<p class=\"meta\">writer lease <span id=\"lease\">{}</span></p>",
        escape(&line)
    );
}

async fn database_section(
    page: &mut String,
    name: &str,
    database: &rocklake_store::ServedDatabase,
    schemas: &[String],
) {
    let mut session = crate::catalog_sql::session(name, database);
    let _ = write!(
        page,
        "<section class=\"database\"><h2>database {}</h2>",
        escape(name)
    );
    if let Some(rows) = query(&mut session, "SELECT pg_database_size(current_database())").await {
        let bytes = rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .unwrap_or_default();
        let _ = write!(
            page,
            "<p class=\"meta\">catalog size on storage <span class=\"catalog-bytes\">{}</span> bytes</p>",
            escape(&bytes)
        );
    }
    if let Some(rows) = query(&mut session, "CALL rocklake_checkpoints()").await {
        list_pairs(page, "checkpoints", &rows);
    }
    for lake in std::iter::once("public").chain(schemas.iter().map(String::as_str)) {
        lake_section(page, &mut session, lake).await;
    }
    page.push_str("</section>");
}

async fn lake_section(page: &mut String, session: &mut Session, schema: &str) {
    let s = quote_ident(schema);
    let latest = query(
        session,
        &format!(
            "SELECT snapshot_id, snapshot_time::text, schema_version FROM {s}.ducklake_snapshot \
             ORDER BY snapshot_id DESC LIMIT 1"
        ),
    )
    .await;
    let Some(latest) = latest.and_then(|rows| rows.into_iter().next()) else {
        if schema == "public" {
            page.push_str("<p>no DuckLake catalog yet</p>");
        }
        return;
    };
    let cell = |row: &[Option<String>], i: usize| row.get(i).cloned().flatten().unwrap_or_default();
    let _ = write!(
        page,
        "<div class=\"lake\" data-schema=\"{}\"><h3>lake {}</h3>\
         <p class=\"meta\">latest snapshot <b class=\"latest-snapshot\">{}</b> at {} · schema version {}",
        escape(schema),
        escape(schema),
        escape(&cell(&latest, 0)),
        escape(&cell(&latest, 1)),
        escape(&cell(&latest, 2)),
    );
    if let Some(rows) = query(
        session,
        &format!("SELECT min(snapshot_id), count(*) FROM {s}.ducklake_snapshot"),
    )
    .await
    {
        if let Some(row) = rows.first() {
            let _ = write!(
                page,
                " · oldest readable snapshot <span class=\"oldest-snapshot\">{}</span> · snapshots {}",
                escape(&cell(row, 0)),
                escape(&cell(row, 1))
            );
        }
    }
    if let Some(rows) = query(
        session,
        &format!("SELECT count(*) FROM {s}.ducklake_inlined_data_tables"),
    )
    .await
    {
        if let Some(row) = rows.first() {
            let _ = write!(
                page,
                " · inlined-data tables <span class=\"inlined-tables\">{}</span>",
                escape(&cell(row, 0))
            );
        }
    }
    page.push_str("</p>");
    let lake_arg = if schema == "public" {
        String::new()
    } else {
        quote_literal(schema)
    };
    if let Some(rows) = query(session, &format!("CALL rocklake_tags({lake_arg})")).await {
        list_pairs(page, "tags", &rows);
    }
    commits_chart(page, session, &s).await;
    tables(page, session, &s).await;
    page.push_str("</div>");
}

async fn commits_chart(page: &mut String, session: &mut Session, s: &str) {
    let Some(rows) = query(
        session,
        &format!(
            "SELECT floor(extract(epoch FROM now() - snapshot_time) / 3600)::int AS hours_ago, \
             count(*) FROM {s}.ducklake_snapshot \
             WHERE snapshot_time > now() - interval '{CHART_HOURS} hours' GROUP BY 1"
        ),
    )
    .await
    else {
        return;
    };
    let mut per_hour = [0u64; CHART_HOURS];
    for row in &rows {
        let ago = row
            .first()
            .cloned()
            .flatten()
            .and_then(|v| v.parse::<usize>().ok());
        let count = row
            .get(1)
            .cloned()
            .flatten()
            .and_then(|v| v.parse::<u64>().ok());
        if let (Some(ago), Some(count)) = (ago, count) {
            if ago < CHART_HOURS {
                per_hour[CHART_HOURS - 1 - ago] += count;
            }
        }
    }
    let total: u64 = per_hour.iter().sum();
    let max = per_hour.iter().copied().max().unwrap_or(0).max(1);
    let (width, height, bar) = (CHART_HOURS * 10, 120usize, 8usize);
    let _ = write!(
        page,
        "<figure><figcaption>commits per hour, last {CHART_HOURS} hours \
         (<span class=\"chart-total\">{total}</span> in all, most {max} in an hour)</figcaption>\
         <svg class=\"chart\" width=\"{width}\" height=\"{}\" role=\"img\" \
         aria-label=\"commits per hour\">",
        height + 16
    );
    for (i, &count) in per_hour.iter().enumerate() {
        let h = (count as usize * height) / max as usize;
        let _ = write!(
            page,
            "<rect x=\"{}\" y=\"{}\" width=\"{bar}\" height=\"{h}\" data-count=\"{count}\"><title>{} h ago: {count}</title></rect>",
            i * 10,
            height - h,
            CHART_HOURS - 1 - i
        );
    }
    let _ = write!(
        page,
        "<text x=\"0\" y=\"{}\">{CHART_HOURS} h ago</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">now</text></svg></figure>",
        height + 14,
        width,
        height + 14
    );
}

async fn tables(page: &mut String, session: &mut Session, s: &str) {
    let Some(rows) = query(
        session,
        &format!(
            "SELECT sc.schema_name, t.table_name, coalesce(f.files, 0), \
             coalesce(st.record_count, 0), coalesce(st.file_size_bytes, 0) \
             FROM {s}.ducklake_table t \
             JOIN {s}.ducklake_schema sc ON sc.schema_id = t.schema_id AND sc.end_snapshot IS NULL \
             LEFT JOIN {s}.ducklake_table_stats st ON st.table_id = t.table_id \
             LEFT JOIN (SELECT table_id, count(*) AS files FROM {s}.ducklake_data_file \
                        WHERE end_snapshot IS NULL GROUP BY table_id) f ON f.table_id = t.table_id \
             WHERE t.end_snapshot IS NULL ORDER BY 1, 2"
        ),
    )
    .await
    else {
        return;
    };
    page.push_str(
        "<table class=\"tables\"><thead><tr><th>schema</th><th>table</th><th>data files</th>\
         <th>rows</th><th>bytes</th></tr></thead><tbody>",
    );
    for row in &rows {
        page.push_str("<tr>");
        for (i, value) in row.iter().enumerate() {
            let class = if i >= 2 { " class=\"n\"" } else { "" };
            let _ = write!(
                page,
                "<td{class}>{}</td>",
                escape(value.as_deref().unwrap_or(""))
            );
        }
        page.push_str("</tr>");
    }
    page.push_str("</tbody></table>");
}

fn list_pairs(page: &mut String, title: &str, rows: &[Vec<Option<String>>]) {
    let _ = write!(page, "<p class=\"meta {title}\">{title}: ");
    if rows.is_empty() {
        page.push_str("none");
    }
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            page.push_str(" · ");
        }
        let item = row.first().cloned().flatten().unwrap_or_default();
        let value = row.get(1).cloned().flatten().unwrap_or_default();
        let _ = write!(page, "{} ({})", escape(&item), escape(&value));
    }
    page.push_str("</p>");
}

fn sessions_section(page: &mut String, board: &ActivityBoard) {
    let sessions = board.list();
    let _ = write!(
        page,
        "<section><h2>sessions (<span id=\"session-count\">{}</span>)</h2>\
         <table class=\"sessions\"><thead><tr><th>pid</th><th>database</th><th>user</th>\
         <th>application</th><th>client</th><th>state</th><th>query</th></tr></thead><tbody>",
        sessions.len()
    );
    for session in sessions {
        let state = session.snapshot();
        let client = session.client.map(|c| c.to_string()).unwrap_or_default();
        let _ = write!(
            page,
            "<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
            session.pid,
            escape(&session.database),
            escape(&session.user),
            escape(&session.application_name),
            escape(&client),
            state.state.as_str(),
            escape(&state.query.chars().take(200).collect::<String>())
        );
    }
    page.push_str("</tbody></table></section>");
}

/// `text` with HTML's special characters escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const HEAD: &str = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"refresh\" content=\"30\"><title>RockLake status</title><style>\
body{font:14px system-ui,sans-serif;margin:24px;color:#1d2330}\
h1{margin:0 0 4px}h2{margin:24px 0 4px}h3{margin:16px 0 4px}\
.meta{color:#4a5263;margin:4px 0}table{border-collapse:collapse;margin:8px 0}\
th,td{border-bottom:1px solid #dde1ea;padding:3px 10px;text-align:left}td.n{text-align:right}\
.chart rect{fill:#3b6fd8}.chart text{font-size:10px;fill:#4a5263}\
figure{margin:8px 0}figcaption{color:#4a5263}code{font-size:12px}\
</style></head><body>";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
