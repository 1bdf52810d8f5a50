#!/usr/bin/env python3
"""Run DuckLake's own SQL logic tests (test/sql/**/*.test of duckdb/ducklake) with
stock DuckDB from Python against a DuckLake catalog on a real PostgreSQL or on a
RockLake server, one fresh catalog per test file.

The interpreter follows DuckDB's C++ sqllogictest runner (test/sqlite/ in the
duckdb repository, v1.5.5): the same record parsing, keyword and loop-variable
substitution, result rendering (values cast to VARCHAR, booleans as 1/0, NULL,
"(empty)"), sort modes, hashing, numeric tolerance and error matching.  The test
configuration (test/configs/postgres.json by default) supplies the skipped files,
the statically loaded extensions and the test environment (DUCKLAKE_CONNECTION).

Each file runs in its own worker process (so a timeout can kill it); see
README.md next to this file for usage and dlsuite/__init__.py for the modules.
Only duckdb and psycopg are needed.

This file is the entry point only: the runner is the `dlsuite` package next to it.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from dlsuite.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
