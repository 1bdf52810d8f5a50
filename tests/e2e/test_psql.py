"""psql's describe commands against RockLake, differential against a real
PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1) holding the same schemas and tables:
the output must be identical, as a user debugging a lake would see it.
"""

from __future__ import annotations

import pathlib
import subprocess

import pytest

from conftest import PostgresBackend

SETUP = ("CREATE SCHEMA s1; CREATE TABLE t1 (a int PRIMARY KEY, b text); "
         "CREATE TABLE s1.t2 (x bigint); CREATE TABLE s1.other (y int)")
COMMANDS = [r"\dt", r"\dn", r"\dv", r"\dt s1.*", r"\dt *.t2", r"\dt t*", r"\dt s1.o*"]


def psql(dsn: str, command: str) -> subprocess.CompletedProcess:
    binary = sorted(pathlib.Path("/usr/lib/postgresql").glob("*/bin/psql"))[-1]
    return subprocess.run([str(binary), "-X", "-d", dsn, "-c", command],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.rocklake
def test_psql_describe_commands_print_what_postgresql_prints(pg_server, rocklake):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    dsns = {"postgres": pg_server.dsn(reference.db), "rocklake": rocklake.dsn()}
    for dsn in dsns.values():
        done = psql(dsn, SETUP)
        assert done.returncode == 0, done.stderr
    for command in COMMANDS:
        expected = psql(dsns["postgres"], command)
        actual = psql(dsns["rocklake"], command)
        assert (actual.returncode, actual.stdout, actual.stderr) == (
            expected.returncode, expected.stdout, expected.stderr), command


@pytest.mark.rocklake
def test_psql_lists_the_database(rocklake):
    rocklake.start()
    listed = psql(rocklake.dsn(), r"\l")
    assert listed.returncode == 0, listed.stderr
    rows = [line for line in listed.stdout.splitlines() if line.startswith(" lake ")]
    assert rows and "| postgres | UTF8" in rows[0], listed.stdout
