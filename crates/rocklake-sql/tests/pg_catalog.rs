//! The postgres_scanner catalog queries from the capture: exact result column
//! names and type OIDs, and plausible contents.

use std::sync::Arc;

use rocklake_sql::CatalogResults;
use rocklake_sql::{MemoryStorage, Session};
use rocklake_types::datum::{ColumnDef, Datum, Row};
use rocklake_types::output::QueryOutput;

const COLUMNS_QUERY: &str = "SELECT pg_namespace.oid AS namespace_id, relname, relpages, attname, pg_type.typname type_name, atttypmod type_modifier, pg_attribute.attndims ndim, attnum, pg_attribute.attnotnull AS notnull, NULL constraint_id, NULL constraint_type, NULL constraint_key, type_ns.nspname AS type_schema, col_desc.description AS column_comment, tbl_desc.description AS table_comment FROM pg_class JOIN pg_namespace ON relnamespace = pg_namespace.oid JOIN pg_attribute ON pg_class.oid=pg_attribute.attrelid JOIN pg_type ON atttypid=pg_type.oid JOIN pg_namespace type_ns ON pg_type.typnamespace = type_ns.oid LEFT JOIN pg_description col_desc ON col_desc.objoid=pg_class.oid AND col_desc.objsubid=pg_attribute.attnum LEFT JOIN pg_description tbl_desc ON tbl_desc.objoid=pg_class.oid AND tbl_desc.objsubid=0 WHERE attnum > 0 AND relkind IN ('r', 'v', 'm', 'f', 'p'){FILTER} UNION ALL SELECT pg_namespace.oid AS namespace_id, relname, NULL relpages, NULL attname, NULL type_name, NULL type_modifier, NULL ndim, NULL attnum, NULL AS notnull, pg_constraint.oid AS constraint_id, contype AS constraint_type, conkey AS constraint_key, NULL AS type_schema, NULL AS column_comment, NULL AS table_comment FROM pg_class JOIN pg_namespace ON relnamespace = pg_namespace.oid JOIN pg_constraint ON (pg_class.oid=pg_constraint.conrelid) WHERE relkind IN ('r', 'v', 'm', 'f', 'p') AND contype IN ('p', 'u'){FILTER} ORDER BY namespace_id, relname, attnum, constraint_id";

const COLUMNS_RESULT: &[(&str, u32)] = &[
    ("namespace_id", 26),
    ("relname", 19),
    ("relpages", 23),
    ("attname", 19),
    ("type_name", 19),
    ("type_modifier", 23),
    ("ndim", 23),
    ("attnum", 21),
    ("notnull", 16),
    ("constraint_id", 26),
    ("constraint_type", 18),
    ("constraint_key", 1005),
    ("type_schema", 19),
    ("column_comment", 25),
    ("table_comment", 25),
];

async fn setup() -> Session {
    let storage = MemoryStorage::new();
    let mut s = Session::new(Arc::new(storage));
    for sql in [
        "CREATE TABLE \"public\".\"ducklake_snapshot\"(\"snapshot_id\" BIGINT PRIMARY KEY, \"snapshot_time\" TIMESTAMP WITH TIME ZONE, \"schema_version\" BIGINT, \"next_catalog_id\" BIGINT, \"next_file_id\" BIGINT)",
        "CREATE TABLE \"public\".\"ducklake_metadata\"(\"key\" VARCHAR NOT NULL, \"value\" VARCHAR NOT NULL, \"scope\" VARCHAR, \"scope_id\" BIGINT)",
        "CREATE TABLE IF NOT EXISTS \"public\".ducklake_inlined_data_1_1(row_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, c DECIMAL(18,3))",
    ] {
        for r in s.execute(sql).await {
            r.unwrap();
        }
    }
    s
}

async fn query(s: &mut Session, sql: &str) -> (Vec<ColumnDef>, Vec<Row>) {
    let mut res = s.execute(sql).await;
    assert_eq!(res.len(), 1, "{sql}");
    match res.remove(0) {
        Ok(QueryOutput::Rows { columns, rows }) => (columns, rows.into_rows()),
        other => panic!("{sql}: {other:?}"),
    }
}

fn shape(cols: &[ColumnDef]) -> Vec<(String, u32)> {
    cols.iter()
        .map(|c| (c.name.clone(), c.pg_type.oid()))
        .collect()
}

fn expect(pairs: &[(&str, u32)]) -> Vec<(String, u32)> {
    pairs.iter().map(|(n, o)| (n.to_string(), *o)).collect()
}

#[tokio::test]
async fn version_probe_and_to_regclass() {
    let mut s = setup().await;
    let (cols, rows) = query(
        &mut s,
        "SELECT version(), (SELECT COUNT(*) FROM pg_settings WHERE name LIKE 'rds%')",
    )
    .await;
    assert_eq!(shape(&cols), expect(&[("version", 25), ("count", 20)]));
    let Datum::Text(v) = &rows[0][0] else {
        panic!()
    };
    assert!(
        v.starts_with("PostgreSQL 15.") && v.contains("RockLake"),
        "{v}"
    );
    assert_eq!(rows[0][1], Datum::Int8(0));
    let (cols, rows) = query(&mut s, "SELECT to_regclass('duckdb_secrets')").await;
    assert_eq!(shape(&cols), expect(&[("to_regclass", 2205)]));
    assert_eq!(rows, vec![vec![Datum::Null]]);
    let (_, rows) = query(&mut s, "SELECT to_regclass('\"public\".ducklake_snapshot')").await;
    assert!(
        matches!(&rows[0][0], Datum::Reg { oid, name } if *oid >= 16384 && &**name == "ducklake_snapshot"),
        "{:?}",
        rows[0][0]
    );
}

#[tokio::test]
async fn attach_batch() {
    let mut s = setup().await;
    let batch = format!(
        "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ;\nSELECT oid, nspname FROM pg_namespace ORDER BY oid;\n{};\nSELECT n.oid, enumtypid, typname, enumlabel FROM pg_enum e JOIN pg_type t ON e.enumtypid = t.oid JOIN pg_namespace AS n ON (typnamespace=n.oid) ORDER BY n.oid, enumtypid, enumsortorder;\nSELECT n.oid, t.typrelid AS id, t.typname as type, pg_attribute.attname, sub_type.typname, sub_type_ns.nspname AS sub_type_schema FROM pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace JOIN pg_class ON pg_class.oid = t.typrelid JOIN pg_attribute ON attrelid=t.typrelid JOIN pg_type sub_type ON (pg_attribute.atttypid=sub_type.oid) JOIN pg_catalog.pg_namespace sub_type_ns ON sub_type_ns.oid = sub_type.typnamespace WHERE pg_class.relkind IN ('c','r','v','m','f','p') AND t.typtype='c' AND pg_attribute.attnum > 0 AND NOT pg_attribute.attisdropped ORDER BY n.oid, t.oid, attrelid, attnum;\nSELECT pg_namespace.oid, tablename, indexname FROM pg_indexes JOIN pg_namespace ON (schemaname=nspname) ORDER BY pg_namespace.oid",
        COLUMNS_QUERY.replace("{FILTER}", "")
    );
    let res = s.execute(&batch).await;
    assert_eq!(res.len(), 6);
    let outs: Vec<QueryOutput> = res.into_iter().map(|r| r.unwrap()).collect();
    let get = |i: usize| match &outs[i] {
        QueryOutput::Rows { columns, rows } => (columns.clone(), rows.clone().into_rows()),
        other => panic!("{other:?}"),
    };
    let (cols, ns) = get(1);
    assert_eq!(shape(&cols), expect(&[("oid", 26), ("nspname", 19)]));
    assert_eq!(
        ns[0],
        vec![Datum::Oid(11), Datum::Text("pg_catalog".into())]
    );
    assert!(ns.contains(&vec![Datum::Oid(2200), Datum::Text("public".into())]));
    let (cols, rows) = get(2);
    assert_eq!(shape(&cols), expect(COLUMNS_RESULT));
    // 5 + 4 + 4 columns, plus one primary-key row.
    assert_eq!(rows.len(), 14);
    let pk: Vec<&Row> = rows
        .iter()
        .filter(|r| r[10] == Datum::Text("p".into()))
        .collect();
    assert_eq!(pk.len(), 1);
    assert_eq!(pk[0][1], Datum::Text("ducklake_snapshot".into()));
    assert_eq!(pk[0][11], Datum::array(vec![Datum::Int2(1)]));
    let dec = rows
        .iter()
        .find(|r| r[3] == Datum::Text("c".into()))
        .unwrap();
    assert_eq!(dec[4], Datum::Text("numeric".into()));
    assert_eq!(dec[5], Datum::Int4(1_179_655));
    assert_eq!(dec[7], Datum::Int2(4));
    assert_eq!(dec[12], Datum::Text("pg_catalog".into()));
    let key = rows
        .iter()
        .find(|r| r[3] == Datum::Text("key".into()))
        .unwrap();
    assert_eq!(key[4], Datum::Text("varchar".into()));
    assert_eq!(key[8], Datum::Bool(true));
    // Sorted by namespace, relname, attnum with the constraint row last per table (NULL attnum).
    let snap: Vec<&Row> = rows
        .iter()
        .filter(|r| r[1] == Datum::Text("ducklake_snapshot".into()))
        .collect();
    assert_eq!(snap.last().unwrap()[10], Datum::Text("p".into()));
    assert_eq!(snap[0][7], Datum::Int2(1));
    let (cols, rows) = get(3);
    assert_eq!(
        shape(&cols),
        expect(&[
            ("oid", 26),
            ("enumtypid", 26),
            ("typname", 19),
            ("enumlabel", 19)
        ])
    );
    assert!(rows.is_empty());
    let (cols, _) = get(4);
    assert_eq!(
        shape(&cols),
        expect(&[
            ("oid", 26),
            ("id", 26),
            ("type", 19),
            ("attname", 19),
            ("typname", 19),
            ("sub_type_schema", 19)
        ])
    );
    let (cols, rows) = get(5);
    assert_eq!(
        shape(&cols),
        expect(&[("oid", 26), ("tablename", 19), ("indexname", 19)])
    );
    assert_eq!(
        rows,
        vec![vec![
            Datum::Oid(2200),
            Datum::Text("ducklake_snapshot".into()),
            Datum::Text("ducklake_snapshot_pkey".into())
        ]]
    );
    let res = s.execute("COMMIT").await;
    assert!(res[0].is_ok());
}

#[tokio::test]
async fn filtered_column_query_and_stable_oids() {
    let mut s = setup().await;
    let filtered = COLUMNS_QUERY.replace(
        "{FILTER}",
        " AND pg_namespace.nspname IN ('public')AND relname='ducklake_metadata'",
    );
    let (cols, rows) = query(&mut s, &filtered).await;
    assert_eq!(shape(&cols), expect(COLUMNS_RESULT));
    assert_eq!(rows.len(), 4);
    assert!(rows
        .iter()
        .all(|r| r[1] == Datum::Text("ducklake_metadata".into())));
    let (_, a) = query(
        &mut s,
        "SELECT oid FROM pg_class WHERE relname = 'ducklake_metadata'",
    )
    .await;
    let mut other = Session::new(Arc::new(MemoryStorage::new()));
    for r in other
        .execute("CREATE TABLE ducklake_metadata(\"key\" VARCHAR NOT NULL)")
        .await
    {
        r.unwrap();
    }
    let (_, b) = query(
        &mut other,
        "SELECT oid FROM pg_class WHERE relname = 'ducklake_metadata'",
    )
    .await;
    assert_eq!(
        a, b,
        "OIDs derive from the relation's name, not the session"
    );
    let (cols, rows) = query(&mut s, "SELECT schema_name FROM information_schema.schemata WHERE schema_name NOT IN ('pg_catalog', 'information_schema') ORDER BY schema_name").await;
    assert_eq!(cols[0].name, "schema_name");
    assert_eq!(rows, vec![vec![Datum::Text("public".into())]]);
    let (_, rows) = query(&mut s, "SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = 'ducklake_metadata' ORDER BY ordinal_position").await;
    assert_eq!(
        rows[0],
        vec![
            Datum::Text("key".into()),
            Datum::Text("character varying".into()),
            Datum::Text("NO".into())
        ]
    );
}

#[tokio::test]
async fn information_schema_introspection_mode() {
    let mut s = setup().await;
    let (cols, rows) = query(&mut s, "SELECT NULL, NULL, NULL, NULL LIMIT 0").await;
    assert_eq!(cols.len(), 4);
    assert!(rows.is_empty());
    let sql = "SELECT table_schema AS namespace_id, table_name AS relname, 0 AS relpages, column_name AS attname, data_type AS type_name, -1 AS type_modifier, 0 AS ndim, ordinal_position AS attnum, CASE WHEN is_nullable = 'NO' THEN 't' ELSE 'f' END AS notnull, NULL AS constraint_id FROM information_schema.columns WHERE table_schema NOT IN ('information_schema', 'pg_catalog') AND table_schema IN ('public') AND table_name='ducklake_snapshot' ORDER BY namespace_id, relname, attnum";
    let (cols, rows) = query(&mut s, sql).await;
    assert_eq!(cols[2].pg_type.oid(), 23);
    assert_eq!(cols[8].pg_type.oid(), 25);
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[0][3], Datum::Text("snapshot_id".into()));
    assert_eq!(rows[0][4], Datum::Text("bigint".into()));
    assert_eq!(rows[0][8], Datum::Text("t".into()));
    assert_eq!(rows[1][8], Datum::Text("f".into()));
}

#[tokio::test]
async fn empty_statements_and_semicolons() {
    let mut s = setup().await;
    assert!(s.execute("").await.is_empty());
    let res = s.execute("SELECT 1;; SELECT 2;").await;
    assert_eq!(res.len(), 2);
    assert!(res.iter().all(|r| r.is_ok()));
    let res = s.execute("SELEC 1").await;
    assert_eq!(res[0].as_ref().unwrap_err().code, "42601");
}

/// Runs a statement that returns no rows.
async fn run(s: &mut Session, sql: &str) {
    for r in s.execute(sql).await {
        r.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// Relation names in the result of the columns query.
fn relnames(rows: &[Row]) -> Vec<String> {
    let mut names: Vec<String> = rows
        .iter()
        .filter_map(|r| match &r[1] {
            Datum::Text(name) => Some(name.to_string()),
            _ => None,
        })
        .collect();
    names.dedup();
    names
}

/// A new session takes the relation lists (and their indexes) that another
/// session of the server loaded for the same catalog version instead of
/// loading and indexing them again (DuckDB opens several sessions per
/// ATTACH); a catalog change gives every session the new lists.
#[tokio::test]
async fn new_sessions_take_the_relation_lists_of_their_version() {
    let storage = MemoryStorage::new();
    let shared = Arc::new(CatalogResults::default());
    let lookup = "SELECT oid, relname FROM pg_class WHERE relname = 'a'";
    let mut s = Session::sharing(Arc::new(storage.clone()), shared.clone());
    run(&mut s, "CREATE TABLE a (x BIGINT)").await;
    assert_eq!(relnames(&query(&mut s, lookup).await.1), vec!["a"]);
    let first = shared.lists("rocklake").expect("lists kept");

    let mut other = Session::sharing(Arc::new(storage.clone()), shared.clone());
    assert_eq!(relnames(&query(&mut other, lookup).await.1), vec!["a"]);
    let second = shared.lists("rocklake").expect("lists kept");
    assert_eq!(first.version, second.version);
    // A session that loaded its own lists would have replaced the kept ones.
    assert!(Arc::ptr_eq(&first.relations, &second.relations));
    assert!(Arc::ptr_eq(&first.indexes, &second.indexes));

    run(&mut other, "CREATE TABLE b (y BIGINT)").await;
    let both = "SELECT oid, relname FROM pg_class WHERE relname IN ('a', 'b') ORDER BY relname";
    assert_eq!(relnames(&query(&mut s, both).await.1), vec!["a", "b"]);
    let third = shared.lists("rocklake").expect("lists kept");
    assert!(third.version > first.version);
    let mut late = Session::sharing(Arc::new(storage), shared.clone());
    assert_eq!(relnames(&query(&mut late, both).await.1), vec!["a", "b"]);
    assert!(Arc::ptr_eq(
        &third.relations,
        &shared.lists("rocklake").unwrap().relations
    ));
}

/// Sessions share catalog query results while the catalog stays the same,
/// and never answer from them once it changed, in this session or another,
/// or inside a transaction that changed it.
#[tokio::test]
async fn catalog_query_results_follow_every_catalog_change() {
    let storage = MemoryStorage::new();
    let shared = Arc::new(CatalogResults::default());
    let mut s = Session::sharing(Arc::new(storage.clone()), shared.clone());
    let mut other = Session::sharing(Arc::new(storage), shared);
    let all = COLUMNS_QUERY.replace("{FILTER}", "");
    run(&mut s, "CREATE TABLE a (x BIGINT)").await;
    let (_, first) = query(&mut s, &all).await;
    assert_eq!(relnames(&first), vec!["a"]);
    assert_eq!(
        query(&mut s, &all).await.1,
        first,
        "the same catalog, the same rows"
    );
    assert_eq!(
        query(&mut other, &all).await.1,
        first,
        "shared with another session"
    );

    run(&mut other, "CREATE TABLE b (y BIGINT)").await;
    assert_eq!(
        relnames(&query(&mut s, &all).await.1),
        vec!["a", "b"],
        "another session's DDL"
    );

    run(&mut s, "BEGIN").await;
    run(&mut s, "CREATE TABLE c (z BIGINT)").await;
    assert_eq!(
        relnames(&query(&mut s, &all).await.1),
        vec!["a", "b", "c"],
        "its own DDL"
    );
    run(&mut s, "ROLLBACK").await;
    assert_eq!(
        relnames(&query(&mut s, &all).await.1),
        vec!["a", "b"],
        "after its rollback"
    );

    run(&mut s, "DROP TABLE a").await;
    assert_eq!(
        relnames(&query(&mut s, &all).await.1),
        vec!["b"],
        "after DROP"
    );
    assert_eq!(
        relnames(&query(&mut other, &all).await.1),
        vec!["b"],
        "in the other session"
    );

    // Each session sees its own database's name.
    other.set_database("other");
    let database = "SELECT datname FROM pg_database";
    assert_eq!(
        query(&mut s, database).await.1,
        vec![vec![Datum::text("rocklake")]]
    );
    assert_eq!(
        query(&mut other, database).await.1,
        vec![vec![Datum::text("other")]]
    );
}

/// Catalog queries that read the transaction's time or the session's
/// settings are computed each time.
#[tokio::test]
async fn catalog_queries_reading_time_or_settings_are_not_kept() {
    let mut s = setup().await;
    let now = "SELECT now() FROM pg_namespace WHERE nspname = 'public'";
    let (_, first) = query(&mut s, now).await;
    std::thread::sleep(std::time::Duration::from_millis(2));
    let (_, second) = query(&mut s, now).await;
    assert_ne!(first, second, "each transaction has its own now()");

    let setting = "SELECT setting FROM pg_settings WHERE name = 'TimeZone'";
    run(&mut s, "SET TimeZone = 'UTC'").await;
    assert_eq!(
        query(&mut s, setting).await.1,
        vec![vec![Datum::text("UTC")]]
    );
    run(&mut s, "SET TimeZone = 'Europe/Berlin'").await;
    assert_eq!(
        query(&mut s, setting).await.1,
        vec![vec![Datum::text("Europe/Berlin")]]
    );
}

/// psql's `\d TABLE` joins a table to its primary-key index through
/// `pg_class` (`relkind` `i`) and reads more `pg_class` columns, and casts
/// to schema-qualified built-in types (`::pg_catalog.text`).
#[tokio::test]
async fn primary_key_indexes_are_relations_and_qualified_types_resolve() {
    let mut s = setup().await;
    let (_, rows) = query(
        &mut s,
        "SELECT c.relname::text, c.relkind::text, am.amname::text, c.relhasrules, c.reltoastrelid \
         FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_am am ON c.relam = am.oid \
         WHERE c.relname LIKE 'ducklake_snapshot%' ORDER BY 1",
    )
    .await;
    assert_eq!(
        rows,
        vec![
            vec![
                Datum::text("ducklake_snapshot"),
                Datum::text("r"),
                Datum::text("heap"),
                Datum::Bool(false),
                Datum::Oid(0)
            ],
            vec![
                Datum::text("ducklake_snapshot_pkey"),
                Datum::text("i"),
                Datum::text("btree"),
                Datum::Bool(false),
                Datum::Oid(0)
            ],
        ]
    );
    let (_, rows) = query(
        &mut s,
        "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_constraint con \
         ON con.conindid = c.oid WHERE c.relkind = 'i'",
    )
    .await;
    assert_eq!(rows, vec![vec![Datum::Int8(1)]]);
    let (_, rows) = query(&mut s, "SELECT 'x'::pg_catalog.text, '1'::PG_CATALOG.int4").await;
    assert_eq!(rows, vec![vec![Datum::text("x"), Datum::Int4(1)]]);
}

/// psql 15's `\d TABLE` column query, verbatim: types with their modifiers,
/// defaults as pg_get_expr shows them, collations and identity columns.
#[tokio::test]
async fn psql_describe_column_query() {
    let mut s = setup().await;
    run(
        &mut s,
        "CREATE TABLE t1(a int PRIMARY KEY, b text DEFAULT 'x' NOT NULL, d numeric(10,2), \
         f boolean DEFAULT true)",
    )
    .await;
    let (_, rows) = query(
        &mut s,
        "SELECT a.attname,\n  pg_catalog.format_type(a.atttypid, a.atttypmod),\n  \
         (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid, true)\n   FROM pg_catalog.pg_attrdef d\n   \
         WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef),\n  a.attnotnull,\n  \
         (SELECT c.collname FROM pg_catalog.pg_collation c, pg_catalog.pg_type t\n   \
         WHERE c.oid = a.attcollation AND t.oid = a.atttypid AND a.attcollation <> t.typcollation) AS attcollation,\n  \
         a.attidentity,\n  a.attgenerated\nFROM pg_catalog.pg_attribute a\n\
         WHERE a.attrelid = 't1'::regclass AND a.attnum > 0 AND NOT a.attisdropped\nORDER BY a.attnum;",
    )
    .await;
    let row = |name: &str, ty: &str, default: Option<&str>, not_null: bool| {
        vec![
            Datum::text(name),
            Datum::text(ty),
            default.map_or(Datum::Null, Datum::text),
            Datum::Bool(not_null),
            Datum::Null,
            Datum::text(""),
            Datum::text(""),
        ]
    };
    assert_eq!(
        rows,
        vec![
            row("a", "integer", None, true),
            row("b", "text", Some("'x'::text"), true),
            row("d", "numeric(10,2)", None, false),
            row("f", "boolean", Some("true"), false),
        ]
    );
}

/// psql 15's `\d TABLE` index query, verbatim: comma-separated FROM items
/// followed by a LEFT JOIN, pg_get_indexdef and pg_get_constraintdef.
#[tokio::test]
async fn psql_describe_index_query() {
    let mut s = setup().await;
    let (_, rows) = query(
        &mut s,
        "SELECT c2.relname, i.indisprimary, i.indisunique, i.indisclustered, i.indisvalid, \
         pg_catalog.pg_get_indexdef(i.indexrelid, 0, true),\n  \
         pg_catalog.pg_get_constraintdef(con.oid, true), contype, condeferrable, condeferred, \
         i.indisreplident, c2.reltablespace\n\
         FROM pg_catalog.pg_class c, pg_catalog.pg_class c2, pg_catalog.pg_index i\n  \
         LEFT JOIN pg_catalog.pg_constraint con ON (conrelid = i.indrelid AND conindid = i.indexrelid \
         AND contype IN ('p','u','x'))\n\
         WHERE c.oid = 'ducklake_snapshot'::regclass AND c.oid = i.indrelid AND i.indexrelid = c2.oid\n\
         ORDER BY i.indisprimary DESC, c2.relname;",
    )
    .await;
    assert_eq!(
        rows,
        vec![vec![
            Datum::text("ducklake_snapshot_pkey"),
            Datum::Bool(true),
            Datum::Bool(true),
            Datum::Bool(false),
            Datum::Bool(true),
            Datum::text(
                "CREATE UNIQUE INDEX ducklake_snapshot_pkey ON ducklake_snapshot USING btree (snapshot_id)"
            ),
            Datum::text("PRIMARY KEY (snapshot_id)"),
            Datum::text("p"),
            Datum::Bool(false),
            Datum::Bool(false),
            Datum::Bool(false),
            Datum::Oid(0),
        ]]
    );
}

/// `a, b LEFT JOIN c ON (b, c)` keeps every (a, b) pair, as PostgreSQL does.
#[tokio::test]
async fn a_join_after_a_comma_item_joins_onto_the_items_before_it() {
    let mut s = setup().await;
    for sql in [
        "CREATE TABLE x(v int)",
        "CREATE TABLE y(k int)",
        "CREATE TABLE z(k int, w text)",
        "INSERT INTO x VALUES (1), (2)",
        "INSERT INTO y VALUES (10), (20)",
        "INSERT INTO z VALUES (10, 'ten')",
    ] {
        run(&mut s, sql).await;
    }
    let (_, rows) = query(
        &mut s,
        "SELECT x.v, y.k, z.w FROM x, y LEFT JOIN z ON y.k = z.k ORDER BY 1, 2",
    )
    .await;
    let row = |v: i32, k: i32, w: Option<&str>| {
        vec![
            Datum::Int4(v),
            Datum::Int4(k),
            w.map_or(Datum::Null, Datum::text),
        ]
    };
    assert_eq!(
        rows,
        vec![
            row(1, 10, Some("ten")),
            row(1, 20, None),
            row(2, 10, Some("ten")),
            row(2, 20, None),
        ]
    );
}
