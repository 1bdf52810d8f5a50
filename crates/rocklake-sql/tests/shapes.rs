#![allow(clippy::result_large_err)]

//! Every SQL shape DuckDB 1.5.5 + ducklake + postgres_scanner sent in the
//! capture (`fixtures/duckdb-sql-shapes.txt`) must parse and execute against
//! `MemoryStorage`, after the catalog tables are created with the CREATE TABLE
//! shapes from the same file. Placeholders are replaced with plausible literals
//! chosen from the target column types.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rocklake_sql::storage::{RelationDef, Storage};
use rocklake_sql::{MemoryStorage, Session};
use rocklake_types::datum::{Datum, PgType, Row};
use rocklake_types::output::{CollectSink, QueryOutput};

const SHAPES: &str = include_str!("fixtures/duckdb-sql-shapes.txt");
const INLINED: &str = "ducklake_inlined_data_{T}_{V}";

#[derive(Debug)]
struct Shape {
    line: usize,
    via_parse: bool,
    sql: String,
}

fn load() -> Vec<Shape> {
    let mut out = Vec::new();
    let mut via_parse = false;
    for (i, line) in SHAPES.lines().enumerate() {
        if line.starts_with('[') || line.starts_with("count=") {
            via_parse = line.contains("via=Parse");
            continue;
        }
        let Some(sql) = line.strip_prefix("  ") else {
            continue;
        };
        if sql.starts_with("features:")
            || sql.starts_with("steps:")
            || sql.starts_with("result columns")
        {
            continue;
        }
        out.push(Shape {
            line: i + 1,
            via_parse,
            sql: sql.to_string(),
        });
    }
    out
}

struct Gen {
    counter: i64,
}

impl Gen {
    fn next(&mut self) -> i64 {
        self.counter += 1;
        self.counter
    }

    /// A SQL literal for a column of type `t`.
    fn literal(&mut self, t: &PgType) -> String {
        let c = self.next();
        match t {
            PgType::Int2 => (c % 30_000).to_string(),
            PgType::Int4 | PgType::Int8 => c.to_string(),
            PgType::Varchar | PgType::Text => format!("'v{c}'"),
            PgType::Bool => "true".into(),
            PgType::Uuid => format!("'00000000-0000-0000-0000-{c:012}'"),
            PgType::TimestampTz => "'2026-12-02 11:09:58.766649+00'".into(),
            PgType::Bytea => "'\\x6f6e65'".into(),
            PgType::Float4 | PgType::Float8 => "1.5".into(),
            PgType::Numeric(_) => "12.5".into(),
            PgType::Time => "'10:00:00'".into(),
            PgType::TimeTz => "'10:00:00+02'".into(),
            PgType::Interval => "'1 day'".into(),
            _ => "NULL".into(),
        }
    }

    /// Text for a pushed-down filter constant on a column of type `t`.
    fn filter_text(&mut self, t: Option<&PgType>) -> String {
        match t {
            Some(PgType::Int2 | PgType::Int4 | PgType::Int8) => "1".into(),
            Some(PgType::TimestampTz) => "2026-12-02 11:09:58.766649+00".into(),
            Some(PgType::Bool) => "true".into(),
            _ => "x".into(),
        }
    }

    /// A datum for COPY FROM STDIN rows.
    fn datum(&mut self, t: &PgType) -> Datum {
        let c = self.next();
        match t {
            PgType::Int8 => Datum::Int8(c),
            PgType::Int4 => Datum::Int4(c as i32),
            PgType::Bool => Datum::Bool(true),
            PgType::Uuid => Datum::Uuid([c as u8; 16]),
            PgType::TimestampTz => Datum::TimestampTz(c),
            _ => Datum::text(format!("v{c}")),
        }
    }
}

fn cast_text(t: &str) -> &'static str {
    match t {
        "REAL" => "nan",
        "DOUBLE PRECISION" => "-inf",
        "TIME" => "10:00:00",
        "TIME WITH TIME ZONE" => "10:00:00+02",
        "INTERVAL" => "14 months 3 days 14706789000 microseconds",
        "UUID" => "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        _ => "2024-06-01 10:00:00+00",
    }
}

/// Splits a parenthesised tuple body at top-level commas.
fn split_items(body: &str) -> Vec<String> {
    let mut items = Vec::new();
    let (mut depth, mut cur, mut quoted) = (0, String::new(), false);
    for ch in body.chars() {
        match ch {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                items.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        items.push(cur.trim().to_string());
    }
    items
}

/// Index of the parenthesis closing the one at `open`.
fn closing(s: &str, open: usize) -> usize {
    let mut depth = 0;
    let mut quoted = false;
    for (i, ch) in s.char_indices().skip_while(|(i, _)| *i < open) {
        match ch {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced parentheses in {s}");
}

fn cast_type(item: &str) -> Option<&str> {
    item.strip_prefix("CAST('?' AS ")
        .and_then(|x| x.strip_suffix(')'))
}

fn insert_tuple(items: &[String], def: &RelationDef, g: &mut Gen) -> String {
    let vals: Vec<String> = items
        .iter()
        .zip(&def.columns)
        .map(|(item, col)| match cast_type(item) {
            Some(t) => format!("CAST('{}' AS {t})", cast_text(t)),
            None if item == "?" => g.literal(&col.pg_type),
            None => item.clone(),
        })
        .collect();
    format!("({})", vals.join(", "))
}

fn cte_tuple(items: &[String], names: &[String], g: &mut Gen) -> String {
    let vals: Vec<String> = items
        .iter()
        .zip(names)
        .map(|(_, n)| match n.as_str() {
            "tid" | "cid" | "deleted_row_id" => g.next().to_string(),
            n if n.starts_with("new_contains") => "NULL".into(),
            "key" => "'comment'".into(),
            _ => format!("'{}'", g.next()),
        })
        .collect();
    format!("({})", vals.join(", "))
}

/// The identifier just before byte `at` (skipping spaces, an operator, quotes and a qualifier).
fn ident_before(s: &str, at: usize) -> String {
    let head = s[..at].trim_end();
    let head = head
        .trim_end_matches(|c: char| "=<>!".contains(c))
        .trim_end()
        .trim_end_matches(" LIKE")
        .trim_end_matches(" IN")
        .trim_end();
    let head = head.trim_end_matches(['"', '(']);
    let start = head
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map(|i| i + 1)
        .unwrap_or(0);
    head[start..].to_string()
}

fn col_type<'a>(def: Option<&'a RelationDef>, name: &str) -> Option<&'a PgType> {
    def.and_then(|d| d.columns.iter().find(|c| c.name == name))
        .map(|c| &c.pg_type)
}

fn fill(sql: &str, def: Option<&RelationDef>, g: &mut Gen) -> String {
    let mut s = sql.to_string();
    // VALUES tuples (INSERT targets or CTE columns); ", ..." means more tuples.
    if let Some(v) = s.find("VALUES (").or_else(|| s.find("values(")) {
        let open = s[v..].find('(').unwrap() + v;
        let close = closing(&s, open);
        let items = split_items(&s[open + 1..close]);
        let more = s[close + 1..].starts_with(", ...");
        let make = |g: &mut Gen| -> String {
            if s.starts_with("INSERT") {
                insert_tuple(&items, def.expect("insert target"), g)
            } else {
                let lp = s.find('(').unwrap();
                let names: Vec<String> = s[lp + 1..closing(&s, lp)]
                    .split(',')
                    .map(|x| x.trim().to_string())
                    .collect();
                cte_tuple(&items, &names, g)
            }
        };
        let mut tuples = make(g);
        if more {
            tuples = format!("{tuples}, {}", make(g));
        }
        let rest_start = if more {
            close + 1 + ", ...".len()
        } else {
            close + 1
        };
        s = format!("{}{}{}", &s[..open], tuples, &s[rest_start..]);
    }
    while let Some(i) = s.find("(?list)") {
        let col = ident_before(&s, i);
        let list = match col.as_str() {
            "ctid" => "('(0,1)', '(0,2)')".to_string(),
            "relkind" => "('c', 'r', 'v', 'm', 'f', 'p')".to_string(),
            "contype" => "('p', 'u')".to_string(),
            "nspname" => "('public')".to_string(),
            c => match col_type(def, c) {
                Some(PgType::Varchar) => "('a', 'b')".to_string(),
                _ => "(1, 2)".to_string(),
            },
        };
        s.replace_range(i..i + "(?list)".len(), &list);
    }
    let mut tid_bounds = ["(0,0)", "(4294967295,0)"].into_iter();
    while let Some(i) = s.find("'?'") {
        let col = ident_before(&s, i);
        let text = if s[i..].starts_with("'?'::tid") {
            tid_bounds.next().unwrap_or("(0,0)").to_string()
        } else {
            match col.as_str() {
                "typtype" => "c".to_string(),
                "relname" => "ducklake_snapshot".to_string(),
                "name" => "rds%".to_string(),
                "to_regclass" => "duckdb_secrets".to_string(),
                c => g.filter_text(col_type(def, c)),
            }
        };
        s.replace_range(i..i + 3, &format!("'{text}'"));
    }
    // Bare numeric placeholders.
    let bytes: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut quoted = false;
    for (i, &ch) in bytes.iter().enumerate() {
        if ch == '\'' {
            quoted = !quoted;
        }
        let word = |c: Option<&char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_');
        if ch == 'N'
            && !quoted
            && !word(i.checked_sub(1).and_then(|j| bytes.get(j)))
            && !word(bytes.get(i + 1))
        {
            // Catalog queries compare attnum/objsubid with 0; everything else gets 1.
            out.push(
                if out.ends_with("attnum > ") || out.ends_with("objsubid=") {
                    '0'
                } else {
                    '1'
                },
            );
        } else {
            out.push(ch);
        }
    }
    out
}

/// Whether an inlined-data table can serve a shape written for some inlined table.
fn compatible(sql: &str, def: &RelationDef, exact: bool) -> bool {
    let mut rest = sql;
    while let Some(a) = rest.find('"') {
        let Some(b) = rest[a + 1..].find('"') else {
            break;
        };
        let name = &rest[a + 1..a + 1 + b];
        rest = &rest[a + b + 2..];
        if ["public", "binary", "C"].contains(&name) || name.starts_with("ducklake_") {
            continue;
        }
        if def.column_index(name).is_none() {
            return false;
        }
    }
    if sql.starts_with("INSERT") {
        let open = sql.find("VALUES (").map(|v| v + 7).unwrap();
        let items = split_items(&sql[open + 1..closing(sql, open)]);
        if items.len() != def.columns.len() {
            return false;
        }
        for (item, col) in items.iter().zip(&def.columns) {
            if let Some(t) = cast_type(item) {
                let want = PgType::from_sql_name(t).unwrap();
                if col.pg_type != want && (exact || col.pg_type != PgType::Varchar) {
                    return false;
                }
            }
        }
    }
    true
}

async fn run(s: &mut Session, sql: &str, line: usize) -> QueryOutput {
    let res = s.execute(sql).await;
    assert_eq!(res.len(), 1, "line {line}: {sql}: {res:?}");
    res.into_iter()
        .next()
        .unwrap()
        .unwrap_or_else(|e| panic!("line {line}: {sql}\n  -> {e}"))
}

#[tokio::test]
async fn every_captured_shape_executes() {
    let storage = MemoryStorage::new();
    let mut s = Session::new(Arc::new(storage.clone()));
    let shapes = load();
    assert!(
        shapes.len() > 280,
        "fixture parsed into {} shapes",
        shapes.len()
    );
    let mut g = Gen { counter: 100 };
    let mut inlined_tables = Vec::new();
    let mut executed = 0;
    // 1. DDL first: schemas, catalog tables, inlined-data tables.
    for sh in shapes.iter().filter(|sh| sh.sql.starts_with("CREATE")) {
        let mut sql = sh
            .sql
            .replace("{schema}", "\"public\"")
            .replace("DECIMAL(N,N)", "DECIMAL(18,3)");
        if sql.contains(INLINED) {
            let name = format!("ducklake_inlined_data_{}_1", inlined_tables.len() + 1);
            sql = sql.replace(INLINED, &name);
            if sql.contains("TIME_NS") {
                let e = s.execute(&sql).await.remove(0).unwrap_err();
                assert_eq!(
                    (e.code.as_str(), e.message.as_str()),
                    ("42704", "type \"time_ns\" does not exist")
                );
                executed += 1;
                continue;
            }
            inlined_tables.push(name);
        }
        let sql = sql.replace("ducklake_inlined_delete_{T}", "ducklake_inlined_delete_1");
        match run(&mut s, &sql, sh.line).await {
            QueryOutput::Command { tag, .. } => assert!(tag.starts_with("CREATE"), "{tag}"),
            other => panic!("{other:?}"),
        }
        executed += 1;
    }
    let relations: BTreeMap<String, RelationDef> = {
        let mut txn = storage.begin(true).await.unwrap();
        txn.relations()
            .await
            .unwrap()
            .iter()
            .map(|r| (r.name.clone(), RelationDef::clone(r)))
            .collect()
    };
    assert!(relations.len() >= 28 + 20, "{} relations", relations.len());
    // 2. Everything else, in file order.
    for sh in shapes.iter().filter(|sh| !sh.sql.starts_with("CREATE")) {
        let mut sql = sh
            .sql
            .replace("{schema}", "\"public\"")
            .replace("ducklake_inlined_delete_{T}", "ducklake_inlined_delete_1");
        if sql.contains(INLINED) {
            let fits = |exact: bool| {
                inlined_tables
                    .iter()
                    .find(|n| compatible(&sql.replace(INLINED, n), &relations[*n], exact))
            };
            let name = fits(true)
                .or_else(|| fits(false))
                .unwrap_or_else(|| panic!("line {}: no inlined table fits {sql}", sh.line));
            sql = sql.replace(INLINED, name);
        }
        let mut target: Option<&RelationDef> = None;
        for (name, def) in relations.iter().rev() {
            if sql.contains(&format!(".{name}")) || sql.contains(&format!(".\"{name}\"")) {
                target = Some(def);
                break;
            }
        }
        let sql = fill(&sql, target, &mut g);
        if sh.via_parse {
            let cols = s
                .describe(&sql, &[])
                .await
                .map(|d| d.columns)
                .unwrap_or_else(|e| panic!("line {}: describe {sql}: {e}", sh.line));
            assert!(!cols.is_empty());
        }
        if sql.contains("FROM STDIN") {
            // The client's data: two rows of whatever columns the COPY asks for.
            let generator = Arc::new(Mutex::new(std::mem::replace(&mut g, Gen { counter: 0 })));
            let source = generator.clone();
            let mut sink = CollectSink::new().with_copy_source(Box::new(move |columns, _| {
                let mut g = source.lock().unwrap();
                Ok((0..2)
                    .map(|_| columns.iter().map(|c| g.datum(&c.pg_type)).collect())
                    .collect::<Vec<Row>>())
            }));
            s.run(&sql, &mut sink).await.unwrap();
            let done = sink.results.pop().unwrap();
            drop(sink);
            g = Arc::try_unwrap(generator)
                .ok()
                .unwrap()
                .into_inner()
                .unwrap();
            let done = done.unwrap_or_else(|e| panic!("line {}: {sql}: {e}", sh.line));
            assert_eq!(
                done,
                QueryOutput::Command {
                    tag: "COPY 2".into(),
                    notices: Vec::new()
                }
            );
            executed += 1;
            continue;
        }
        let out = run(&mut s, &sql, sh.line).await;
        if std::env::var("SHAPES_VERBOSE").is_ok() {
            let summary = match &out {
                QueryOutput::Rows { rows, .. } | QueryOutput::CopyOut { rows, .. } => {
                    format!("{} rows", rows.len())
                }
                QueryOutput::Command { tag, .. } | QueryOutput::Returning { tag, .. } => {
                    tag.clone()
                }
            };
            eprintln!("{}: {sql}\n    => {summary}", sh.line);
        }
        match out {
            QueryOutput::Command { tag, .. } => {
                let kind = sql.split_whitespace().next().unwrap_or_default();
                let expected = match kind {
                    "WITH" => "UPDATE",
                    "values(" => "INSERT",
                    k => k,
                };
                assert!(
                    tag.starts_with(expected),
                    "line {}: tag {tag} for {sql}",
                    sh.line
                );
            }
            QueryOutput::Rows { .. }
            | QueryOutput::CopyOut { .. }
            | QueryOutput::Returning { .. } => {}
        }
        executed += 1;
    }
    assert_eq!(executed, shapes.len());
}
