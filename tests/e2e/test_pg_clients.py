"""PostgreSQL drivers against RockLake, differential against a real
PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1): psycopg 3 with server-side bind
parameters (text and binary, typed and untyped, executemany, prepared
statements and DEALLOCATE), savepoints as drivers use them, and the
statements SQLAlchemy's PostgreSQL dialect sends when it connects.
"""

from __future__ import annotations

import datetime
import decimal

import psycopg
import pytest

from conftest import PostgresBackend

UTC = datetime.timezone.utc


def session_steps(conn: psycopg.Connection) -> list:
    """Runs the same steps on a connection; returns what each gave (rows,
    status or SQLSTATE)."""
    out = []

    def step(sql, params=None, binary=False, prepare=None):
        try:
            with conn.cursor(binary=binary) as cur:
                cur.execute(sql, params, prepare=prepare)
                out.append(cur.fetchall() if cur.description else cur.statusmessage)
        except psycopg.Error as e:
            out.append(f"ERROR {e.sqlstate}")

    step("DROP TABLE IF EXISTS pt")
    step("CREATE TABLE pt (id bigint PRIMARY KEY, small int, name varchar, "
         "amount numeric(10,2), at timestamptz, ok boolean)")
    step("INSERT INTO pt VALUES (%s, %s, %s, %s, %s, %s)",
         (1, 10, "one", decimal.Decimal("1.50"), datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
          True))
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO pt (id, small, name) VALUES (%s, %s, %s)",
                        [(i, i * 10, f"n{i}") for i in range(2, 8)])
    for sql, params in [
        ("SELECT id, name FROM pt WHERE id = %s", (3,)),
        ("SELECT id FROM pt WHERE name = %s OR id > %s ORDER BY id", ("one", 5)),
        ("SELECT %s::int + 1, %s", (41, "x")),
        ("SELECT count(*) FROM pt WHERE id IN (%s, %s, %s)", (1, 2, 99)),
        ("SELECT id FROM pt ORDER BY id LIMIT %s OFFSET %s", (2, 1)),
        ("SELECT name FROM pt WHERE at < %s", (datetime.datetime(2030, 1, 1, tzinfo=UTC),)),
        ("SELECT id FROM pt WHERE ok = %s", (True,)),
        ("SELECT id FROM pt WHERE small = ANY (ARRAY[%s, %s]) ORDER BY id", (20, 30)),
        ("SELECT id FROM pt WHERE small <> ALL (ARRAY[%s, %s]) ORDER BY id", (20, 30)),
        ("SELECT id FROM pt WHERE small > ANY (ARRAY[%s, %s]) ORDER BY id", (50, 60)),
        ("UPDATE pt SET name = %s WHERE id = %s", ("three", 3)),
        ("DELETE FROM pt WHERE id = %s", (7,)),
        ("SELECT * FROM pt ORDER BY id", None),
        ("SELECT id FROM pt WHERE id = %s", ("2",)),
        ("SELECT $1", None),
    ]:
        step(sql, params)
    step("SELECT id, name, amount, at FROM pt WHERE id = %s", (1,), binary=True)
    step("SELECT %b::bigint, %b", (7, "bin"), binary=True)
    # Named prepared statements, reused, then dropped by DEALLOCATE ALL.
    for value in (2, 4, 2):
        step("SELECT name FROM pt WHERE id = %s", (value,), prepare=True)
    step("DEALLOCATE ALL")
    step("SELECT name FROM pt WHERE id = %s", (4,), prepare=True)
    # What SQLAlchemy's dialect and psycopg's type lookups send.
    for sql in ["show transaction isolation level", "show standard_conforming_strings",
                "select current_schema()", "SHOW TIME ZONE"]:
        step(sql)
    step("SELECT typname AS name, oid, typarray AS array_oid, oid::regtype::text AS regtype, "
         "typdelim AS delimiter FROM pg_type t WHERE t.oid = to_regtype(%(name)s) ORDER BY t.oid",
         {"name": "int4"})
    step("SELECT oid FROM pg_type WHERE oid = to_regtype(%s)", ("hstore",))
    step("SELECT 'bigint'::regtype::text, 'character varying'::regtype::text")
    step("SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class JOIN "
         "pg_catalog.pg_namespace ON pg_catalog.pg_namespace.oid = pg_catalog.pg_class.relnamespace "
         "WHERE pg_catalog.pg_class.relname = %(table_name)s::VARCHAR AND "
         "pg_catalog.pg_class.relkind = ANY (ARRAY[%(param_1)s::VARCHAR, %(param_2)s::VARCHAR]) "
         "AND pg_catalog.pg_table_is_visible(pg_catalog.pg_class.oid) AND "
         "pg_catalog.pg_namespace.nspname != %(nspname_1)s::VARCHAR",
         {"table_name": "pt", "param_1": "r", "param_2": "p", "nspname_1": "pg_catalog"})
    # JOIN ... USING and NATURAL JOIN: merged columns shown once, first.
    for sql in [
        "DROP TABLE IF EXISTS ja", "DROP TABLE IF EXISTS jb", "DROP TABLE IF EXISTS jc",
        "CREATE TABLE ja (x int, id bigint, name text)",
        "CREATE TABLE jb (id bigint, v int, name text)",
        "CREATE TABLE jc (id bigint, w int)",
        "INSERT INTO ja VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c')",
        "INSERT INTO jb VALUES (1, 10, 'a'), (2, 20, 'x'), (4, 40, 'd')",
        "INSERT INTO jc VALUES (1, 100), (4, 400)",
        "SELECT * FROM ja JOIN jb USING (id) ORDER BY id",
        "SELECT id, ja.id, jb.id, v FROM ja JOIN jb USING (id) ORDER BY 1",
        "SELECT id, ja.id, jb.id, v FROM ja JOIN jb USING (id) ORDER BY id",
        "SELECT * FROM ja LEFT JOIN jb USING (id) ORDER BY id",
        "SELECT * FROM ja JOIN jb USING (id, name) ORDER BY id",
        "SELECT * FROM ja NATURAL JOIN jb ORDER BY 1",
        "SELECT * FROM ja JOIN jb USING (id) JOIN jc USING (id)",
        "SELECT ja.*, v FROM ja JOIN jb USING (id) ORDER BY 1",
        "SELECT count(*) FROM ja JOIN jb USING (nope)",
        "SELECT * FROM ja NATURAL LEFT JOIN jc ORDER BY id",
    ]:
        step(sql)
    # Regular-expression operators, and what psql's describe queries use.
    step("SELECT 'abc' ~ '^a', 'ABC' ~* 'b', 'abc' !~ 'z', 'abc' !~* 'B', NULL ~ 'a'")
    step("SELECT 'a' ~ '('")
    step("SELECT relname FROM pg_class WHERE relname OPERATOR(pg_catalog.~) '^(pt)$' "
         "COLLATE pg_catalog.default")
    step("SELECT pg_catalog.pg_get_userbyid(10), amname FROM pg_am WHERE amname = 'heap'")
    # Window functions with the default frame.
    for sql in [
        "DROP TABLE IF EXISTS w",
        "CREATE TABLE w (g text, id bigint, v int)",
        "INSERT INTO w VALUES ('a', 1, 10), ('a', 2, 20), ('a', 3, 20), ('b', 4, 5), "
        "('b', 5, NULL), ('c', 6, 7)",
        "SELECT g, id, row_number() OVER (PARTITION BY g ORDER BY id) FROM w ORDER BY id",
        "SELECT id, v, rank() OVER (ORDER BY v), dense_rank() OVER (ORDER BY v DESC) "
        "FROM w ORDER BY id",
        "SELECT id, lag(v) OVER (ORDER BY id), lead(v, 2, -1) OVER (ORDER BY id) FROM w "
        "ORDER BY id",
        "SELECT id, sum(v) OVER (PARTITION BY g), count(*) OVER (), "
        "avg(v) OVER (PARTITION BY g ORDER BY id) FROM w ORDER BY id",
        "SELECT id, sum(v) OVER (ORDER BY v), "
        "max(v) OVER (PARTITION BY g ORDER BY v DESC NULLS LAST) FROM w ORDER BY id",
        "SELECT id, first_value(v) OVER (PARTITION BY g ORDER BY id DESC), "
        "last_value(v) OVER (PARTITION BY g ORDER BY v) FROM w ORDER BY id",
        "SELECT id FROM w ORDER BY row_number() OVER (ORDER BY id DESC)",
        "SELECT g, count(*) OVER (PARTITION BY g) AS n FROM w WHERE v IS NOT NULL "
        "ORDER BY g, n",
        "SELECT id FROM w WHERE row_number() OVER () > 1",
    ]:
        step(sql)
    # COPY TO STDOUT in text and CSV, with their options.
    def copy_out(sql):
        try:
            with conn.cursor() as cur:
                with cur.copy(sql) as copy:
                    out.append(b"".join(bytes(chunk) for chunk in copy).decode())
        except psycopg.Error as e:
            out.append(f"ERROR {e.sqlstate}")

    step("DROP TABLE IF EXISTS cp")
    step("CREATE TABLE cp (id int, name text, note varchar, ok boolean, at date)")
    step("INSERT INTO cp VALUES (1, 'plain', NULL, true, '2024-01-02'), "
         "(2, 'comma, \"quote\"', '', false, NULL), (3, E'tab\there\nline\\back', 'x', NULL, "
         "'2025-12-31')")
    for sql in [
        "COPY cp TO STDOUT",
        "COPY (SELECT * FROM cp ORDER BY id) TO STDOUT",
        "COPY (SELECT * FROM cp ORDER BY id) TO STDOUT WITH (FORMAT csv)",
        "COPY (SELECT * FROM cp ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)",
        "COPY (SELECT * FROM cp ORDER BY id) TO STDOUT WITH (FORMAT csv, DELIMITER ';', "
        "NULL 'NULL', QUOTE '''', FORCE_QUOTE (name))",
        "COPY (SELECT id, name FROM cp ORDER BY id) TO STDOUT WITH (DELIMITER '|', NULL '-')",
        "COPY (SELECT * FROM cp ORDER BY id) TO STDOUT WITH CSV HEADER",
        "COPY cp (name, id) TO STDOUT WITH (FORMAT csv)",
        "COPY (SELECT 1) TO STDOUT WITH (HEADER)",
    ]:
        copy_out(sql)
    # COPY FROM STDIN in CSV and text, then read back.
    def copy_in(sql, data):
        try:
            with conn.cursor() as cur:
                with cur.copy(sql) as copy:
                    copy.write(data)
                out.append(cur.statusmessage)
        except psycopg.Error as e:
            out.append(f"ERROR {e.sqlstate}")

    step("DROP TABLE IF EXISTS ci")
    step("CREATE TABLE ci (id int, name text, note text)")
    copy_in("COPY ci FROM STDIN WITH (FORMAT csv, HEADER)",
            'id,name,note\n1,"a,b",\n2,"say ""hi""",""\n3,"two\nlines",x\n')
    copy_in("COPY ci (id, name) FROM STDIN WITH (FORMAT csv, DELIMITER ';', NULL 'NULL')",
            "4;NULL\n5;plain\n")
    copy_in("COPY ci FROM STDIN WITH (FORMAT csv)", "6,too,many,fields\n")
    copy_in("COPY ci FROM STDIN WITH CSV QUOTE '|'", "7,|x,y|,|z|\n")
    copy_in("COPY ci FROM STDIN", "8\ttab\t\\N\n")
    step("SELECT * FROM ci ORDER BY id")
    # Size functions (the catalog's real stored size on RockLake).
    step("SELECT size, pg_size_pretty(size) FROM (VALUES (10::bigint), (10239::bigint), "
         "(10240::bigint), (1000000::bigint), (10485247::bigint), (10485248::bigint), "
         "(1000000000000000::bigint), (-1000000::bigint), (9223372036854775807::bigint)) x(size)")
    step("SELECT pg_database_size(current_database()) > 0, pg_relation_size('pt') > 0, "
         "pg_total_relation_size('pt') >= pg_relation_size('pt'), "
         "pg_table_size('public.pt') >= pg_relation_size('pt'), pg_indexes_size('pt') >= 0")
    step("SELECT pg_database_size('no_such_database')")
    step("SELECT pg_relation_size('no_such_table')")
    # Savepoints: around reads, and recovering from an error.
    step("BEGIN")
    step("SAVEPOINT a")
    step("SELECT count(*) FROM pt")
    step("RELEASE a")
    step("SAVEPOINT b")
    step("SELECT * FROM no_such_table")
    step("SELECT 1")
    step("ROLLBACK TO SAVEPOINT b")
    step("SELECT count(*) FROM pt")
    step("RELEASE SAVEPOINT b")
    step("RELEASE b")
    step("ROLLBACK TO nope")
    step("ROLLBACK")
    step("SAVEPOINT outside")
    return out


@pytest.mark.rocklake
def test_psycopg_parameters_savepoints_and_dialect_statements_match_postgresql(
        pg_server, rocklake):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    results = {}
    for name, dsn in (("postgres", pg_server.dsn(reference.db)), ("rocklake", rocklake.dsn())):
        with psycopg.connect(dsn, autocommit=True) as conn:
            results[name] = session_steps(conn)
    expected, actual = results["postgres"], results["rocklake"]
    assert len(actual) == len(expected)
    for i, (e, a) in enumerate(zip(expected, actual)):
        assert a == e, f"step {i}: PostgreSQL gave {e!r}, RockLake {a!r}"


@pytest.mark.rocklake
def test_a_rollback_to_a_savepoint_over_changes_is_refused_not_half_done(rocklake):
    rocklake.start()
    with psycopg.connect(rocklake.dsn(), autocommit=True) as conn:
        conn.execute("CREATE TABLE sp (x int)")
        conn.execute("BEGIN")
        conn.execute("INSERT INTO sp VALUES (1)")
        conn.execute("SAVEPOINT s")
        conn.execute("INSERT INTO sp VALUES (2)")
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            conn.execute("ROLLBACK TO SAVEPOINT s")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.execute("ROLLBACK")
        assert conn.execute("SELECT count(*) FROM sp").fetchone() == (0,)
