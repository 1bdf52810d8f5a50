"""node-postgres (`pg`, npm) against RockLake, differential against a real
PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1): the steps in node/pg_steps.js
(parameters, RETURNING, ON CONFLICT, arrays, named prepared statements,
errors and recovery) print the same on both servers. scripts/test.sh
installs the package (tests/e2e/node/package.json).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import PostgresBackend

# ROCKLAKE_NODE_DIR: another copy with other node-postgres releases
# (scripts/test-latest-clients.sh installs the newest there).
NODE_DIR = pathlib.Path(os.environ.get("ROCKLAKE_NODE_DIR",
                                       pathlib.Path(__file__).resolve().parent / "node"))


def run_steps(host: str, port: int, database: str) -> list[str]:
    env = dict(os.environ, PGHOST=host, PGPORT=str(port), PGUSER="postgres",
               PGDATABASE=database)
    done = subprocess.run(["node", str(NODE_DIR / "pg_steps.js")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.rocklake
def test_node_postgres_sees_what_it_sees_on_postgresql(pg_server, rocklake):
    if shutil.which("node") is None or not (NODE_DIR / "node_modules" / "pg").is_dir():
        pytest.fail("node and tests/e2e/node/node_modules/pg are needed (scripts/test.sh installs them)")
    rocklake.start()
    reference = PostgresBackend(pg_server)
    expected = run_steps("127.0.0.1", pg_server.port, reference.db)
    actual = run_steps(rocklake.host, rocklake.port, "lake")
    assert len(expected) == 15, expected
    differences = [f"PostgreSQL {e}\nRockLake   {a}" for e, a in zip(expected, actual) if a != e]
    assert not differences and len(actual) == len(expected), "\n".join(differences)
