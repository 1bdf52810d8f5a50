"""When a REPEATABLE READ transaction takes its snapshot, differential against a
real PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1): at its first statement that reads
or writes data, not at BEGIN, and not at SET, SHOW or SAVEPOINT. DuckLake's
commits depend on it: they send BEGIN, then describe their first query before
running it, and a commit made in between must not make them conflict.
"""

from __future__ import annotations

import pytest

from two_sessions import assert_same_as_postgresql

BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ"
SETUP = [
    "DROP TABLE IF EXISTS s",
    "CREATE TABLE s (id int PRIMARY KEY)",
    "INSERT INTO s VALUES (1)",
]
COUNT = "SELECT count(*) FROM s"

SCENARIOS: dict[str, list[tuple[str, str]]] = {
    "a commit between BEGIN and the first query is visible, a later one is not": [
        ("a", BEGIN), ("b", "INSERT INTO s VALUES (2)"), ("a", COUNT),
        ("b", "INSERT INTO s VALUES (3)"), ("a", COUNT), ("a", "COMMIT"), ("a", COUNT),
    ],
    "SET, SHOW and SAVEPOINT do not take the snapshot": [
        ("a", BEGIN), ("a", "SHOW transaction_isolation"), ("a", "SET application_name = 'x'"),
        ("a", "SAVEPOINT p"), ("b", "INSERT INTO s VALUES (2)"), ("a", COUNT),
        ("b", "INSERT INTO s VALUES (3)"), ("a", COUNT), ("a", "ROLLBACK"),
    ],
    "a query without tables takes it": [
        ("a", BEGIN), ("a", "SELECT 1"), ("b", "INSERT INTO s VALUES (2)"), ("a", COUNT),
        ("a", "COMMIT"),
    ],
    "a key committed before the first statement is a duplicate at once": [
        ("a", BEGIN), ("b", BEGIN), ("b", COUNT), ("b", "INSERT INTO s VALUES (2)"),
        ("b", "COMMIT"), ("a", "INSERT INTO s VALUES (2)"), ("a", "ROLLBACK"),
        ("a", BEGIN), ("b", "INSERT INTO s VALUES (3)"),
        ("a", "INSERT INTO s VALUES (4)"), ("a", COUNT), ("a", "COMMIT"), ("a", COUNT),
    ],
}


@pytest.mark.rocklake
@pytest.mark.parametrize("name", SCENARIOS)
def test_snapshots_are_taken_as_on_postgresql(pg_server, rocklake, name):
    assert_same_as_postgresql(pg_server, rocklake, SETUP, SCENARIOS[name])
