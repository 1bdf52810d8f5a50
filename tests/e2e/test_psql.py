"""psql's describe commands against RockLake, differential against a real
PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1) holding the same schemas and tables:
the output must be identical, as a user debugging a lake would see it.
"""

from __future__ import annotations

import pathlib
import subprocess

import pytest

from conftest import PostgresBackend

SETUP = ("CREATE SCHEMA s1; CREATE TABLE t1 (a int PRIMARY KEY, b text DEFAULT 'x' NOT NULL, "
         "c numeric(10,2), d boolean DEFAULT true, e timestamptz); "
         "INSERT INTO t1 VALUES (1, 'one', 1.5, true, '2024-01-02 03:04:05+00'), "
         "(2, 'a \"quoted\", comma', NULL, NULL, NULL); "
         "CREATE TABLE s1.t2 (x bigint); CREATE TABLE s1.other (y int)")
COMMANDS = [
    r"\dt", r"\dn", r"\dv", r"\dt s1.*", r"\dt *.t2", r"\dt t*", r"\dt s1.o*",
    # Describing tables, indexes, schemas, roles, functions, types, privileges.
    r"\d", r"\d t1", r"\d+ t1", r"\d s1.t2", r"\d t1_pkey", r"\di", r"\dn+", r"\du",
    r"\dg", r"\df", r"\dT", r"\dp", r"\db", r"\dD", r"\ds",
    # Expanded output, and \copy out in text and CSV.
    r"\x \dt", r"\x \d t1",
    r"\copy t1 to stdout", r"\copy (SELECT a, b FROM t1 ORDER BY a) to stdout with csv header",
]


def psql(dsn: str, command: str) -> subprocess.CompletedProcess:
    binary = sorted(pathlib.Path("/usr/lib/postgresql").glob("*/bin/psql"))[-1]
    return subprocess.run([str(binary), "-X", "-d", dsn, "-c", command],
                          capture_output=True, text=True, timeout=60)


def assert_same_output(pg_server, rocklake, setup: str, commands: list[str]) -> None:
    """psql prints the same for each of `commands` on RockLake and on a real
    PostgreSQL 15, both set up with `setup`."""
    rocklake.start()
    reference = PostgresBackend(pg_server)
    dsns = {"postgres": pg_server.dsn(reference.db), "rocklake": rocklake.dsn()}
    for dsn in dsns.values():
        done = psql(dsn, setup)
        assert done.returncode == 0, done.stderr
    for command in commands:
        expected = psql(dsns["postgres"], command)
        assert expected.returncode == 0, (command, expected.stderr)
        actual = psql(dsns["rocklake"], command)
        assert (actual.returncode, actual.stdout, actual.stderr) == (
            expected.returncode, expected.stdout, expected.stderr), command


@pytest.mark.rocklake
def test_psql_describe_commands_print_what_postgresql_prints(pg_server, rocklake):
    assert_same_output(pg_server, rocklake, SETUP, COMMANDS)


@pytest.mark.rocklake
def test_psql_lists_the_database(rocklake):
    rocklake.start()
    listed = psql(rocklake.dsn(), r"\l")
    assert listed.returncode == 0, listed.stderr
    rows = [line for line in listed.stdout.splitlines() if line.startswith(" lake ")]
    assert rows and "| postgres | UTF8" in rows[0], listed.stdout


# psql 15's own queries of `\d TABLE` that RockLake answers (see the README's
# status for the ones it does not yet), run on both servers.
DESCRIBE_SETUP = ("CREATE TABLE d1 (a int PRIMARY KEY, b text DEFAULT 'x' NOT NULL, "
                  "f boolean DEFAULT true, n bigint DEFAULT 7, t timestamptz)")
DESCRIBE_QUERIES = [
    # the columns, with types, defaults, collations
    """SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
  (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid, true) FROM pg_catalog.pg_attrdef d
   WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef),
  a.attnotnull,
  (SELECT c.collname FROM pg_catalog.pg_collation c, pg_catalog.pg_type t
   WHERE c.oid = a.attcollation AND t.oid = a.atttypid AND a.attcollation <> t.typcollation) AS attcollation,
  a.attidentity, a.attgenerated
FROM pg_catalog.pg_attribute a
WHERE a.attrelid = 'd1'::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum""",
    # the indexes
    """SELECT c2.relname, i.indisprimary, i.indisunique, i.indisclustered, i.indisvalid,
  pg_catalog.pg_get_indexdef(i.indexrelid, 0, true), pg_catalog.pg_get_constraintdef(con.oid, true),
  contype, condeferrable, condeferred, i.indisreplident, c2.reltablespace
FROM pg_catalog.pg_class c, pg_catalog.pg_class c2, pg_catalog.pg_index i
  LEFT JOIN pg_catalog.pg_constraint con ON (conrelid = i.indrelid AND conindid = i.indexrelid
  AND contype IN ('p','u','x'))
WHERE c.oid = 'd1'::regclass AND c.oid = i.indrelid AND i.indexrelid = c2.oid
ORDER BY i.indisprimary DESC, c2.relname""",
    # the relation's flags
    """SELECT c.relchecks, c.relkind, c.relhasindex, c.relhasrules, c.relhastriggers,
  c.relrowsecurity, c.relforcerowsecurity, false AS relhasoids, c.relispartition, '',
  c.reltablespace, CASE WHEN c.reloftype = 0 THEN '' ELSE
  c.reloftype::pg_catalog.regtype::pg_catalog.text END, c.relpersistence, c.relreplident, am.amname
FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_class tc ON (c.reltoastrelid = tc.oid)
LEFT JOIN pg_catalog.pg_am am ON (c.relam = am.oid) WHERE c.oid = 'd1'::regclass""",
]


@pytest.mark.rocklake
def test_psql_describe_table_queries_answer_what_postgresql_answers(pg_server, rocklake):
    assert_same_output(pg_server, rocklake, DESCRIBE_SETUP, DESCRIBE_QUERIES)
