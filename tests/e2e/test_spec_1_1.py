"""DuckLake spec 1.1 (DuckDB 2.0) on the wire, replayed against RockLake and a
real PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1), with equal results.

DuckDB 2.0's DuckLake extension cannot be installed here, so its statements
are replayed as DuckDB 2.0 sends them (shapes from the DuckLake and
postgres_scanner sources, in the form DuckDB 1.5.5 sends the same generic
statements): DuckDB 1.5.5 makes a 1.0 catalog with inlined data and a view,
the 1.0 -> 1.1 migration renames the inlined tables' system columns and adds
the 1.1 columns and table, and 1.1-mode commits then write 17-column data
files, 14-column delete files, inlined tables whose user columns are named
`row_id` and `begin_snapshot`, inlined deletes and view column comments.
Every catalog table must then hold the same rows on both servers, and
RockLake must keep each of them under its own key tag.
"""

from __future__ import annotations

import os
import re
import subprocess

import psycopg
import pytest

from conftest import ROCKLAKE_BIN, PostgresBackend

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

MAKE_1_0 = [
    "CREATE TABLE l.t (id INTEGER, name VARCHAR)",
    "INSERT INTO l.t VALUES (1, 'one'), (2, 'two')",
    "INSERT INTO l.t SELECT i, 'row' || i FROM range(100, 200) r(i)",
    "CREATE VIEW l.v AS SELECT id FROM l.t",
    "DELETE FROM l.t WHERE id = 1",
]


def migration_1_0_to_1_1(inlined_tables: list[str]) -> list[str]:
    """The statements DuckDB 2.0 sends to migrate a 1.0 catalog (double spaces
    as postgres_scanner writes them)."""
    out = []
    for table in inlined_tables:
        for column in ("row_id", "begin_snapshot", "end_snapshot"):
            out.append(f'ALTER TABLE "public"."{table}" RENAME COLUMN  "{column}" '
                       f'TO "_ducklake_{column}"')
    out += [
        'ALTER TABLE "public"."ducklake_data_file" ADD COLUMN  "row_group_count" BIGINT',
        'ALTER TABLE "public"."ducklake_delete_file" ADD COLUMN  "row_group_count" BIGINT',
        # Added by the 1.1 release (ducklakepy's migration adds them too).
        'ALTER TABLE "public"."ducklake_file_column_stats" ADD COLUMN  "min_is_exact" BOOLEAN',
        'ALTER TABLE "public"."ducklake_file_column_stats" ADD COLUMN  "max_is_exact" BOOLEAN',
        'ALTER TABLE "public"."ducklake_table_column_stats" ADD COLUMN  "min_is_exact" BOOLEAN',
        'ALTER TABLE "public"."ducklake_table_column_stats" ADD COLUMN  "max_is_exact" BOOLEAN',
        'ALTER TABLE "public"."ducklake_schema" ADD COLUMN  "parent_schema_id" BIGINT',
        'CREATE TABLE "public"."ducklake_view_column_tag"("view_id" BIGINT, "column_name" '
        'VARCHAR, "begin_snapshot" BIGINT, "end_snapshot" BIGINT, "key" VARCHAR, "value" VARCHAR);',
        # A 1.1-dev1 catalog is migrated again with IF NOT EXISTS.
        'ALTER TABLE "public"."ducklake_data_file" ADD COLUMN  IF NOT EXISTS "row_group_count" BIGINT',
        'CREATE TABLE IF NOT EXISTS "public"."ducklake_view_column_tag"("view_id" BIGINT, '
        '"column_name" VARCHAR, "begin_snapshot" BIGINT, "end_snapshot" BIGINT, "key" VARCHAR, '
        '"value" VARCHAR);',
        "UPDATE \"public\".\"ducklake_metadata\" SET \"value\" = '1.1' WHERE \"key\" = 'version'",
    ]
    return out


def commits_1_1(n: int, view_id: int) -> list[str]:
    """1.1-mode commit batches after snapshot `n` (raw, as postgres_execute
    sends them)."""
    m = n + 1
    return [
        'CREATE TABLE IF NOT EXISTS "public".ducklake_inlined_data_99_1(_ducklake_row_id BIGINT, '
        "_ducklake_begin_snapshot BIGINT, _ducklake_end_snapshot BIGINT, row_id BIGINT, "
        "begin_snapshot BIGINT, note VARCHAR);"
        f'INSERT INTO "public".ducklake_inlined_data_99_1 VALUES (0, {n}, NULL, 7, 7, \'a\'), '
        f"(1, {n}, NULL, 7, 7, 'b'), (2, {n}, NULL, NULL, NULL, 'c');",
        f'INSERT INTO "public".ducklake_data_file VALUES (900, 99, {n}, NULL, NULL, '
        "'ducklake-x.parquet', true, 'parquet', 10, 1000, 100, 0, NULL, NULL, NULL, NULL, 3);"
        f'INSERT INTO "public".ducklake_delete_file VALUES (901, 99, {n}, NULL, 900, '
        "'ducklake-d.parquet', true, 'parquet', 1, 100, 10, NULL, NULL, 1);"
        'INSERT INTO "public".ducklake_file_column_stats VALUES (900, 99, 1, 10, 10, 0, '
        "'1', '9', NULL, NULL, true, false);"
        'INSERT INTO "public".ducklake_table_column_stats VALUES (99, 1, false, NULL, '
        "'1', '9', NULL, true, false);"
        f'INSERT INTO "public".ducklake_schema VALUES (77, \'6d7a1f3e-4f8c-4c55-9b1a-0d4f7b1e2c3a\', '
        f"{n}, NULL, 'child', 'child/', true, 0);",
        f"WITH deleted_row_list(deleted_row_id) AS (VALUES (0)) UPDATE "
        f'"public".ducklake_inlined_data_99_1 SET _ducklake_end_snapshot = {m} FROM '
        "deleted_row_list WHERE _ducklake_row_id=deleted_row_id AND _ducklake_end_snapshot IS "
        f"NULL AND _ducklake_begin_snapshot != {m};",
        f"WITH overwritten_tags(vid, col, k) AS (VALUES ({view_id}, 'id', 'comment')) UPDATE "
        f'"public".ducklake_view_column_tag SET end_snapshot = {n} FROM overwritten_tags WHERE '
        "view_id=vid AND ducklake_view_column_tag.column_name=overwritten_tags.col AND "
        "ducklake_view_column_tag.key=overwritten_tags.k AND end_snapshot IS NULL ;"
        f'INSERT INTO "public".ducklake_view_column_tag VALUES ({view_id}, \'id\', {n}, NULL, '
        "'comment', 'first');",
        f"WITH overwritten_tags(vid, col, k) AS (VALUES ({view_id}, 'id', 'comment')) UPDATE "
        f'"public".ducklake_view_column_tag SET end_snapshot = {m} FROM overwritten_tags WHERE '
        "view_id=vid AND ducklake_view_column_tag.column_name=overwritten_tags.col AND "
        "ducklake_view_column_tag.key=overwritten_tags.k AND end_snapshot IS NULL ;"
        f'INSERT INTO "public".ducklake_view_column_tag VALUES ({view_id}, \'id\', {m}, NULL, '
        "'comment', 'second');",
        f'UPDATE "public".ducklake_view_column_tag SET end_snapshot = {m + 1} WHERE '
        f"end_snapshot IS NULL AND view_id IN ({view_id});",
    ]


def reads_1_1(n: int) -> list[str]:
    return [
        "SELECT note, row_id, begin_snapshot FROM \"public\".ducklake_inlined_data_99_1 WHERE "
        f"{n} >= _ducklake_begin_snapshot AND ({n} < _ducklake_end_snapshot OR "
        "_ducklake_end_snapshot IS NULL) ORDER BY _ducklake_row_id",
        "SELECT note FROM \"public\".ducklake_inlined_data_99_1 WHERE "
        f"{n + 1} >= _ducklake_begin_snapshot AND ({n + 1} < _ducklake_end_snapshot OR "
        "_ducklake_end_snapshot IS NULL) ORDER BY _ducklake_row_id",
        'SELECT "view_id", "column_name", "begin_snapshot", "end_snapshot", "key", "value" FROM '
        f'"public"."ducklake_view_column_tag" WHERE "begin_snapshot" <= {n + 1} '
        "ORDER BY begin_snapshot",
        "SELECT data_file_id, row_group_count FROM ducklake_data_file ORDER BY data_file_id",
        "SELECT delete_file_id, row_group_count FROM ducklake_delete_file ORDER BY 1",
        "SELECT column_id, min_is_exact, max_is_exact FROM ducklake_table_column_stats "
        "WHERE table_id = 99",
        "SELECT schema_name, parent_schema_id FROM ducklake_schema WHERE parent_schema_id = 0",
        # A duplicate primary key fails the same way on both.
        'INSERT INTO "public".ducklake_data_file VALUES (900, 99, 1, NULL, NULL, \'y\', true, '
        "'parquet', 1, 1, 1, 0, NULL, NULL, NULL, NULL, 1)",
        f'DELETE FROM "public".ducklake_inlined_data_99_1 WHERE _ducklake_begin_snapshot <= {n}',
        "SELECT count(*) FROM ducklake_inlined_data_99_1",
    ]


def normalize(value):
    if value is None or isinstance(value, (bool, int)):
        return value
    return UUID.sub("<uuid>", str(value))


def run(dsn: str, statements: list[str]) -> list:
    """Each statement's rows (or its SQLSTATE), in autocommit."""
    out = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for sql in statements:
            try:
                cur = conn.execute(sql)
                rows = cur.fetchall() if cur.description else cur.statusmessage
                out.append(normalize(rows) if isinstance(rows, str)
                           else [[normalize(v) for v in r] for r in rows])
            except psycopg.Error as e:
                out.append(f"ERROR {e.sqlstate}")
    return out


def catalog_contents(dsn: str, data_path: str) -> dict:
    """Every row of every DuckLake table, without times, UUIDs and the data path."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
            "AND table_name LIKE 'ducklake%' ORDER BY 1").fetchall()]
        out = {}
        for table in tables:
            cur = conn.execute(f'SELECT * FROM "public"."{table}"')
            names = [d.name for d in cur.description]
            keep = [i for i, d in enumerate(cur.description)
                    if d.type_code not in (2950, 1184) and d.name != "snapshot_time"]
            rows = [[normalize(r[i]) for i in keep] for r in cur.fetchall()]
            rows = [[v.replace(data_path, "<data>/") if isinstance(v, str) else v for v in r]
                    for r in rows]
            out[table] = ([names[i] for i in keep], sorted(rows, key=repr))
        return out


@pytest.mark.rocklake
def test_spec_1_1_statements_give_what_postgresql_gives(pg_server, rocklake, duck, data_dir):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    dsns = {"postgres": pg_server.dsn(reference.db), "rocklake": rocklake.dsn()}
    results = {}
    for name, backend in (("postgres", reference), ("rocklake", rocklake)):
        con = duck()
        data = data_dir(name)
        con.execute(backend.attach_sql("l", data))
        for sql in MAKE_1_0:
            con.execute(sql)
        con.execute("DETACH l")
        dsn = dsns[name]
        with psycopg.connect(dsn, autocommit=True) as conn:
            inlined = [r[0] for r in conn.execute(
                "SELECT table_name FROM ducklake_inlined_data_tables ORDER BY 1").fetchall()]
            n = conn.execute("SELECT max(snapshot_id) FROM ducklake_snapshot").fetchone()[0] + 1
            view_id = conn.execute("SELECT max(view_id) FROM ducklake_view").fetchone()[0]
        assert inlined, "DuckDB 1.5.5 inlined the small insert"
        results[name] = (run(dsn, migration_1_0_to_1_1(inlined) + commits_1_1(n, view_id)
                             + reads_1_1(n)), catalog_contents(dsn, f"{data}/"))
    assert results["rocklake"][0] == results["postgres"][0]
    assert results["postgres"][0][-3] == "ERROR 23505"
    expected, actual = results["postgres"][1], results["rocklake"][1]
    assert sorted(actual) == sorted(expected)
    for table in expected:
        assert actual[table] == expected[table], table

    rocklake.stop()
    keys = subprocess.run([ROCKLAKE_BIN, "keys", str(rocklake.catalog_dir)],
                          capture_output=True, text=True, timeout=120)
    assert keys.returncode == 0, keys.stderr
    lines = keys.stdout.splitlines()
    assert not [line for line in lines if "-> generic_row" in line]
    assert any("-> view_column_tag view_id=" in line for line in lines)
    # The flush deleted table 99's inlined rows; its registry entry shows where
    # they lived: keyed by the system columns, not the user's row_id.
    assert any("table public.ducklake_inlined_data_99_1 (" in line and
               "rows at inlined_data(0x80) | 99 | 1 | _ducklake_row_id | "
               "_ducklake_begin_snapshot" in line for line in lines), \
        [line for line in lines if "inlined_data_99_1" in line]


def batch_outcomes(dsn: str) -> list:
    """A DuckLake commit batch through postgres_scanner main's two paths:
    prepared first (`postgres_execute` before duckdb-postgres#565), and run
    as one simple query (`prepare=FALSE`, what DuckLake sends since
    duckdb/ducklake#1430)."""
    batch = ("CREATE TABLE IF NOT EXISTS b (i INTEGER);"
             "INSERT INTO b VALUES (1);INSERT INTO b VALUES (2)")
    out = []
    with psycopg.connect(dsn, autocommit=True) as con:
        try:
            con.execute(batch, prepare=True)
            out.append("prepared: ok")
        except psycopg.Error as error:
            out.append(f"prepared: {error.sqlstate} {error.diag.message_primary}")
        result = con.pgconn.exec_(batch.encode())
        status = psycopg.pq.ExecStatus(result.status).name
        out.append(f"simple: {status} {result.command_status.decode()}")
        out.append(con.execute("SELECT count(*) FROM b").fetchall())
        con.execute("DROP TABLE b")
    return out


@pytest.mark.rocklake
def test_a_commit_batch_is_refused_at_parse_and_runs_as_a_simple_query(
        request, rocklake):
    """What the 2.0-line client met (docs/duckdb-2.0.md): a `;`-joined batch
    is refused when prepared, with PostgreSQL's 42601, and runs whole as a
    simple query."""
    rocklake.start()
    ours = batch_outcomes(rocklake.dsn())
    assert ours == ["prepared: 42601 cannot insert multiple commands into a prepared statement",
                    "simple: COMMAND_OK INSERT 0 1", [(2,)]], ours
    if os.environ.get("ROCKLAKE_PG_REFERENCE") == "1":
        pg = request.getfixturevalue("pg_server")
        assert batch_outcomes(pg.dsn(pg.new_database("batch"))) == ours
