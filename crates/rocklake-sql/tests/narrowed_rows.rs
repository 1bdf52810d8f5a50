//! Virtual catalog tables hand the executor only the columns a query reads,
//! and its column references are renumbered to match (`bind/pruning.rs`): the results must be the
//! ones of the same query where that does not apply. A no-op subquery in
//! WHERE (`AND (SELECT true)`) turns it off, so each query runs both ways.

mod support;

use rocklake_sql::MemoryStorage;
use support::{ok, session, text_rows};

/// Client catalog queries (DuckDB's attach and lookups, psql, JDBC shapes)
/// and joins reading columns in every clause the pruning looks at.
const QUERIES: &[&str] = &[
    "SELECT pg_namespace.oid AS namespace_id, relname, relpages, attname, pg_type.typname type_name, \
     atttypmod type_modifier, pg_attribute.attndims ndim, attnum, pg_attribute.attnotnull AS notnull, \
     type_ns.nspname AS type_schema, col_desc.description AS column_comment, tbl_desc.description AS table_comment \
     FROM pg_class JOIN pg_namespace ON relnamespace = pg_namespace.oid JOIN pg_attribute ON \
     pg_class.oid=pg_attribute.attrelid JOIN pg_type ON atttypid=pg_type.oid JOIN pg_namespace type_ns \
     ON pg_type.typnamespace = type_ns.oid LEFT JOIN pg_description col_desc ON \
     col_desc.objoid=pg_class.oid AND col_desc.objsubid=pg_attribute.attnum LEFT JOIN pg_description \
     tbl_desc ON tbl_desc.objoid=pg_class.oid AND tbl_desc.objsubid=0 WHERE attnum > 0 AND relkind IN \
     ('r', 'v', 'm', 'f', 'p') {EXTRA} ORDER BY namespace_id, relname, attnum",
    "SELECT n.oid, t.typrelid AS id, t.typname as type, pg_attribute.attname, sub_type.typname, \
     sub_type_ns.nspname AS sub_type_schema FROM pg_type t JOIN pg_catalog.pg_namespace n ON \
     n.oid = t.typnamespace JOIN pg_class ON pg_class.oid = t.typrelid JOIN pg_attribute ON \
     attrelid=t.typrelid JOIN pg_type sub_type ON (pg_attribute.atttypid=sub_type.oid) JOIN \
     pg_catalog.pg_namespace sub_type_ns ON sub_type_ns.oid = sub_type.typnamespace WHERE \
     pg_class.relkind IN ('c','r','v','m','f','p') AND t.typtype='c' AND pg_attribute.attnum > 0 \
     AND NOT pg_attribute.attisdropped {EXTRA} ORDER BY n.oid, t.oid, attrelid, attnum",
    "SELECT c.relname, con.conname, con.conkey, i.indexrelid FROM pg_class c JOIN pg_constraint con \
     ON con.conrelid = c.oid LEFT JOIN pg_index i ON i.indrelid = c.oid WHERE true {EXTRA} ORDER BY 1, 2",
    "SELECT a.attname || ':' || t.typname, c.relname FROM pg_attribute a, pg_class c, pg_type t \
     WHERE a.attrelid = c.oid AND t.oid = a.atttypid {EXTRA} ORDER BY c.relname, a.attnum",
    "SELECT DISTINCT c.relkind, n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
     WHERE true {EXTRA} ORDER BY 1, 2",
    "SELECT c.relname FROM pg_class c WHERE c.relname LIKE 'ducklake%' {EXTRA} ORDER BY c.reltuples, c.relname",
    "SELECT * FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE true {EXTRA} ORDER BY c.oid",
    "SELECT t.typname, t.typlen FROM pg_type t LEFT JOIN pg_type e ON e.oid = t.typelem \
     WHERE e.typname IS NULL {EXTRA} ORDER BY 1 LIMIT 20",
    "SELECT table_name, column_name, data_type FROM information_schema.columns \
     WHERE table_schema = 'public' {EXTRA} ORDER BY table_name, ordinal_position",
    // Stored tables (whole rows, with their hidden ctid) among virtual ones.
    "SELECT t.v, c.relname, c.relkind, t.ctid IS NOT NULL FROM t JOIN pg_class c ON c.relname = t.v \
     WHERE true {EXTRA} ORDER BY 1",
    "SELECT c.relname, t.id, a.attname, a.attnum FROM pg_class c, t, pg_attribute a \
     WHERE c.relname = t.v AND a.attrelid = c.oid AND a.attnum > 0 {EXTRA} ORDER BY 1, 2, 4",
    "SELECT c.relname, t.id FROM pg_class c LEFT JOIN t ON t.v = c.relname \
     WHERE (c.relname LIKE 'ducklake%' OR c.relname = 't') {EXTRA} ORDER BY 1, 2",
    "SELECT t.id, c.relkind FROM t JOIN pg_class c ON c.relname = t.v WHERE true {EXTRA} \
     ORDER BY 1 FOR UPDATE OF t",
    // Outer joins, a join nested on the right, a lookup join.
    "SELECT n.nspname, c.relname FROM pg_namespace n FULL JOIN pg_class c \
     ON c.relnamespace = n.oid AND c.relname = 't' WHERE true {EXTRA} ORDER BY 1, 2",
    "SELECT c.relname, n.nspname FROM pg_class c RIGHT JOIN pg_namespace n \
     ON c.relnamespace = n.oid AND c.relkind = 'r' WHERE true {EXTRA} ORDER BY 1, 2",
    "SELECT a.attname, x.relname, n.nspname FROM pg_attribute a JOIN (pg_class x JOIN pg_namespace n \
     ON n.oid = x.relnamespace AND n.nspname = 'lake') ON a.attrelid = x.oid \
     WHERE a.attnum > 0 {EXTRA} ORDER BY 1, 2",
    "SELECT c.relname, d.description, n.nspname FROM pg_class c LEFT JOIN pg_description d \
     ON d.objoid = c.oid JOIN pg_namespace n ON n.oid = c.relnamespace \
     WHERE c.relname IN ('t', 'ducklake_snapshot') {EXTRA} ORDER BY 1",
    "SELECT c.relname, a.attname, a.atttypid FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid \
     WHERE c.relname IN ('t', 'ducklake_snapshot') AND a.attnum > 0 {EXTRA} ORDER BY 1, 2",
];

#[tokio::test]
async fn queries_give_the_same_rows_whether_rows_are_narrowed_or_not() {
    let storage = MemoryStorage::new();
    let mut s = session(&storage);
    ok(
        &mut s,
        "CREATE TABLE ducklake_snapshot (snapshot_id bigint PRIMARY KEY, snapshot_time timestamptz, \
         schema_version bigint); \
         CREATE TABLE ducklake_inlined_data_1_1 (row_id bigint, begin_snapshot bigint, \
         end_snapshot bigint, a int, b varchar, c numeric(18, 3)); \
         CREATE TABLE t (id int PRIMARY KEY, v text); \
         INSERT INTO t VALUES (1, 't'), (2, 'ducklake_snapshot'), (3, 'none'); \
         CREATE SCHEMA lake; CREATE TABLE lake.t (x double precision)",
    )
    .await;
    for query in QUERIES {
        let pruned = text_rows(&mut s, &query.replace("{EXTRA}", "")).await;
        let whole = text_rows(&mut s, &query.replace("{EXTRA}", "AND (SELECT true)")).await;
        assert!(!pruned.is_empty(), "{query}");
        assert_eq!(pruned, whole, "{query}");
    }
}
