"""The queries operators and dashboards run at a DuckLake catalog made by
stock DuckDB, differential against a real PostgreSQL 15 catalog
(ROCKLAKE_PG_REFERENCE=1): time windows over `ducklake_snapshot`, files per
table per day, the text of each snapshot's changes taken apart with string
and regular expression functions, and series of days. The same DuckDB steps
make both catalogs; every query is written so that its answer does not
depend on when it ran (times are compared with `now()`, not printed).
"""

from __future__ import annotations

import psycopg
import pytest

from conftest import PostgresBackend

DUCKDB_STEPS = [
    "CREATE SCHEMA lake.sales",
    "CREATE TABLE lake.sales.orders (id INTEGER, amount DECIMAL(10, 2), note VARCHAR)",
    "CREATE TABLE lake.main.events (id INTEGER, kind VARCHAR)",
    "INSERT INTO lake.sales.orders VALUES (1, 10.50, 'first'), (2, 20.00, NULL)",
    "INSERT INTO lake.sales.orders VALUES (3, 7.25, 'third')",
    "INSERT INTO lake.main.events SELECT i, 'k' || (i % 3) FROM range(100) t(i)",
    "DELETE FROM lake.sales.orders WHERE id = 2",
    "ALTER TABLE lake.main.events ADD COLUMN seen TIMESTAMP",
]

QUERIES = [
    # Time windows over snapshots.
    "SELECT count(*) FROM ducklake_snapshot WHERE snapshot_time > now() - interval '7 days'",
    "SELECT count(*) FROM ducklake_snapshot "
    "WHERE snapshot_time >= date_trunc('day', now()) - INTERVAL '1' DAY",
    "SELECT snapshot_id, extract(year FROM snapshot_time) = extract(year FROM now()), "
    "age(now(), snapshot_time) < interval '1 hour', "
    "now() - snapshot_time BETWEEN interval '0' AND interval '1 hour' "
    "FROM ducklake_snapshot ORDER BY snapshot_id",
    "SELECT max(snapshot_id) FILTER (WHERE snapshot_time <= now()), "
    "bool_and(snapshot_time::date = current_date OR snapshot_time::date = current_date - 1) "
    "FROM ducklake_snapshot",
    # Files per table per day.
    "SELECT t.table_name, date_trunc('day', s.snapshot_time) = date_trunc('day', now()) AS today, "
    "count(*) AS files, sum(f.record_count) AS records "
    "FROM ducklake_data_file f JOIN ducklake_table t ON t.table_id = f.table_id "
    "JOIN ducklake_snapshot s ON s.snapshot_id = f.begin_snapshot "
    "GROUP BY 1, 2 ORDER BY 1, 2",
    "SELECT d - date_trunc('day', now()) AS day, count(s.snapshot_id) "
    "FROM generate_series(date_trunc('day', now()) - interval '2 days', date_trunc('day', now()), "
    "interval '1 day') d LEFT JOIN ducklake_snapshot s ON date_trunc('day', s.snapshot_time) = d "
    "GROUP BY d ORDER BY d",
    # The text of each snapshot's changes.
    "SELECT snapshot_id, changes_made, split_part(changes_made, ':', 1), "
    "regexp_replace(changes_made, '[0-9]+', 'N', 'g'), "
    "(regexp_match(changes_made, '^([a-z_]+):'))[1], length(changes_made) "
    "FROM ducklake_snapshot_changes ORDER BY snapshot_id",
    "SELECT snapshot_id, m[1] FROM ducklake_snapshot_changes, "
    "regexp_matches(changes_made, '([a-z_]+):', 'g') AS m ORDER BY 1, 2",
    "SELECT json_build_object('snapshot', snapshot_id, 'kinds', "
    "string_to_array(regexp_replace(changes_made, ':[^,]*', '', 'g'), ',')) "
    "FROM ducklake_snapshot_changes ORDER BY snapshot_id",
    # The changes of each snapshot as JSON documents (jsonb and json).
    "SELECT s.snapshot_id, jsonb_build_object('id', s.snapshot_id, 'schema_version', "
    "s.schema_version, 'changes', c.changes_made) FROM ducklake_snapshot s "
    "JOIN ducklake_snapshot_changes c USING (snapshot_id) ORDER BY 1",
    "SELECT jsonb_agg(jsonb_build_object('id', snapshot_id, 'changes', changes_made) "
    "ORDER BY snapshot_id) -> -1 ->> 'changes', json_agg(c ORDER BY snapshot_id)::text "
    "LIKE '[{\"snapshot_id\":0%' FROM ducklake_snapshot_changes c",
    "SELECT row_to_json(t), to_jsonb(t) - 'table_uuid' FROM (SELECT table_id, table_name "
    "FROM ducklake_table WHERE end_snapshot IS NULL) t ORDER BY table_id",
    "SELECT e.key, e.value FROM (SELECT jsonb_object_agg(table_name, table_id) AS j "
    "FROM ducklake_table) t, jsonb_each(t.j) e ORDER BY 1",
    "SELECT count(*) FILTER (WHERE d ? 'kind'), count(*) FILTER (WHERE d @> '{\"schema\": 1}') "
    "FROM (SELECT jsonb_build_object('schema', schema_id, 'kind', 'table') AS d "
    "FROM ducklake_table) t",
    # Names, formatted as an operator would.
    "SELECT string_agg(format('%I.%I', s.schema_name, t.table_name), ', ' "
    "ORDER BY s.schema_name, t.table_name) FROM ducklake_table t "
    "JOIN ducklake_schema s ON s.schema_id = t.schema_id "
    "WHERE t.end_snapshot IS NULL AND s.end_snapshot IS NULL",
    "SELECT upper(schema_name), initcap(schema_name), lpad(schema_id::text, 4, '0'), "
    "schema_name ~ '^[a-z]+$', md5(schema_name), concat_ws('/', 'lake', schema_name) "
    "FROM ducklake_schema ORDER BY schema_id",
    "SELECT column_name, column_type, position('int' IN lower(column_type)) > 0, "
    "left(column_type, 3), replace(column_type, 'int', 'INT') "
    "FROM ducklake_column WHERE end_snapshot IS NULL ORDER BY table_id, column_order",
]


def make_lake(con, attach_sql: str):
    con.execute(attach_sql)
    for step in DUCKDB_STEPS:
        con.execute(step)
    con.execute("DETACH lake")


def answers(dsn: str) -> list:
    out = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for sql in QUERIES:
            try:
                out.append(("rows", conn.execute(sql).fetchall()))
            except psycopg.Error as error:
                out.append(("error", error.sqlstate, str(error).splitlines()[0]))
    return out


@pytest.mark.rocklake
def test_operator_queries_answer_as_on_postgresql(pg_server, rocklake, duck, data_dir):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    make_lake(duck(), reference.attach_sql("lake", data_dir("pg")))
    make_lake(duck(), rocklake.attach_sql("lake", data_dir("rl")))
    expected = answers(pg_server.dsn(reference.db))
    actual = answers(rocklake.dsn())
    for sql, want, got in zip(QUERIES, expected, actual):
        assert got == want, sql
    assert all(kind == "rows" for kind, *_ in expected), expected
