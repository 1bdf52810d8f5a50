"""Row locks (`SELECT ... FOR UPDATE / FOR SHARE [OF t] [NOWAIT | SKIP
LOCKED]`), differential against a real PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1):
the same two-connection scenarios in REPEATABLE READ transactions on both
servers, comparing each statement's outcome (rows, or SQLSTATE and message).

A statement expected to wait runs in a thread while the other connection
goes on; its outcome is collected afterwards. Timeouts only detect hangs:
nothing asserts how long anything took.
"""

from __future__ import annotations

import psycopg
import pytest

from conftest import PostgresBackend
from two_sessions import Background, assert_same_as_postgresql, outcome

BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ"
SETUP = [
    "DROP TABLE IF EXISTS t",
    "CREATE TABLE t (id int PRIMARY KEY, v int)",
    "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)",
    "DROP TABLE IF EXISTS u",
    "CREATE TABLE u (id int PRIMARY KEY, w int)",
    "INSERT INTO u VALUES (1, 100), (2, 200)",
]
LOCK_ONE = "SELECT id, v FROM t WHERE id = 1 FOR UPDATE"

# Steps: (connection, statement) run in order; a connection name ending in
# "&" starts the statement in the background (it may wait for the other
# connection), "wait a" collects that connection's background outcome.
SCENARIOS: dict[str, list[tuple[str, str]]] = {
    "second locker fails once the first updated and committed": [
        ("a", BEGIN), ("a", LOCK_ONE), ("b", BEGIN), ("b", "SELECT count(*) FROM t"),
        ("a", "UPDATE t SET v = 11 WHERE id = 1"), ("b&", LOCK_ONE),
        ("a", "COMMIT"), ("wait", "b"), ("b", "ROLLBACK"), ("b", LOCK_ONE),
    ],
    "second locker fails once the first deleted and committed": [
        ("a", BEGIN), ("b", BEGIN), ("b", "SELECT count(*) FROM t"), ("a", LOCK_ONE),
        ("a", "DELETE FROM t WHERE id = 1"), ("b&", LOCK_ONE),
        ("a", "COMMIT"), ("wait", "b"), ("b", "ROLLBACK"),
    ],
    "second locker goes on once the first only locked": [
        ("a", BEGIN), ("a", LOCK_ONE), ("b", BEGIN), ("b", "SELECT count(*) FROM t"),
        ("b&", LOCK_ONE), ("a", "COMMIT"), ("wait", "b"), ("b", "COMMIT"),
    ],
    "second locker goes on once the first rolled back": [
        ("a", BEGIN), ("a", LOCK_ONE), ("a", "UPDATE t SET v = 12 WHERE id = 1"),
        ("b", BEGIN), ("b", "SELECT count(*) FROM t"),
        ("b&", "SELECT id, v FROM t WHERE id = 1 FOR SHARE"), ("a", "ROLLBACK"),
        ("wait", "b"), ("b", "COMMIT"),
    ],
    "an update committed after the locker's snapshot fails the lock": [
        ("a", BEGIN), ("a", "SELECT count(*) FROM t"),
        ("b", "UPDATE t SET v = 13 WHERE id = 1"),
        ("a", "SELECT id, v FROM t WHERE id = 2 FOR UPDATE"), ("a", LOCK_ONE),
        ("a", "ROLLBACK"),
    ],
    "limit locks the rows pulled through it, offset ones too": [
        ("a", BEGIN), ("a", "SELECT id, v FROM t ORDER BY id LIMIT 1 OFFSET 1 FOR UPDATE"),
        ("b", "SELECT id FROM t WHERE id = 3 FOR UPDATE NOWAIT"),
        ("b", "SELECT id FROM t WHERE id = 2 FOR UPDATE NOWAIT"),
        ("b", "SELECT id FROM t WHERE id = 1 FOR UPDATE NOWAIT"),
        ("b", "SELECT id, v FROM t ORDER BY id FOR UPDATE SKIP LOCKED"),
        ("b", "SELECT id FROM t ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"),
        ("a", "COMMIT"),
    ],
    "of restricts the locked tables": [
        ("a", BEGIN),
        ("a", "SELECT t.id, u.w FROM t JOIN u ON u.id = t.id ORDER BY t.id FOR UPDATE OF u"),
        ("b", "SELECT id FROM t WHERE id = 1 FOR UPDATE NOWAIT"),
        ("b", "SELECT id FROM u WHERE id = 1 FOR UPDATE NOWAIT"),
        ("b", "SELECT id FROM u ORDER BY id FOR SHARE OF u SKIP LOCKED"),
        ("a", "COMMIT"),
    ],
    "refusals": [
        ("a", "SELECT count(*) FROM t FOR UPDATE"),
        ("a", "SELECT v FROM t GROUP BY v FOR UPDATE"),
        ("a", "SELECT DISTINCT v FROM t FOR SHARE"),
        ("a", "SELECT sum(v) FROM t HAVING sum(v) > 0 FOR UPDATE"),
        ("a", "SELECT row_number() OVER () FROM t FOR UPDATE"),
        ("a", "SELECT id FROM t UNION SELECT id FROM u FOR UPDATE"),
        ("a", "SELECT * FROM t FOR UPDATE OF x"),
        ("a", "SELECT * FROM t FOR SHARE OF x"),
        ("a", "SELECT * FROM t LEFT JOIN u ON u.id = t.id FOR UPDATE"),
        ("a", "SELECT * FROM t LEFT JOIN u ON u.id = t.id ORDER BY t.id FOR UPDATE OF t"),
        ("a", "VALUES (1) FOR UPDATE"),
        ("a", "BEGIN READ ONLY"), ("a", LOCK_ONE), ("a", "ROLLBACK"),
        ("a", "BEGIN READ ONLY"), ("a", "SELECT * FROM t FOR SHARE"), ("a", "ROLLBACK"),
        ("a", "BEGIN READ ONLY"), ("a", "SELECT relname FROM pg_class WHERE false FOR UPDATE"),
        ("a", "ROLLBACK"),
    ],
}


@pytest.mark.rocklake
@pytest.mark.parametrize("name", SCENARIOS)
def test_row_locks_behave_as_on_postgresql(pg_server, rocklake, name):
    assert_same_as_postgresql(pg_server, rocklake, SETUP, SCENARIOS[name])


def deadlock(dsn: str) -> list:
    with psycopg.connect(dsn, autocommit=True) as setup:
        for sql in SETUP:
            setup.execute(sql)
    a = psycopg.connect(dsn, autocommit=True)
    b = psycopg.connect(dsn, autocommit=True)
    try:
        for conn in (a, b):
            conn.execute(BEGIN)
        a.execute(LOCK_ONE)
        b.execute("SELECT id FROM t WHERE id = 2 FOR UPDATE")
        first = Background(a, "SELECT id FROM t WHERE id = 2 FOR UPDATE")
        second = Background(b, LOCK_ONE)
        results = [first.join(), second.join()]
        # The victim's transaction has failed; the other one got its row
        # (which row depends on the victim, so only the outcomes compare).
        return sorted(repr(result[:2] if result[0] == "ok" else result) for result in results)
    finally:
        a.close()
        b.close()


@pytest.mark.rocklake
def test_two_lockers_waiting_for_each_other_deadlock(pg_server, rocklake):
    """One of the two gets 40P01 and the other its row. Which one differs:
    PostgreSQL's check runs after deadlock_timeout in the first waiter,
    RockLake's when the second wait would close the cycle."""
    rocklake.start()
    reference = PostgresBackend(pg_server)
    expected = deadlock(pg_server.dsn(reference.db))
    assert deadlock(rocklake.dsn()) == expected


@pytest.mark.rocklake
def test_an_update_while_the_lock_is_held_fails_the_lockers_commit(rocklake):
    """A documented deviation: PostgreSQL's UPDATE waits for the locker;
    RockLake's writers take no row locks, and the locker's COMMIT fails."""
    rocklake.start()
    dsn = rocklake.dsn()
    with psycopg.connect(dsn, autocommit=True) as setup:
        for sql in SETUP:
            setup.execute(sql)
    with psycopg.connect(dsn, autocommit=True) as a, \
            psycopg.connect(dsn, autocommit=True) as b:
        a.execute(BEGIN)
        assert outcome(a, LOCK_ONE)[2] == [(1, 10)]
        assert outcome(b, "UPDATE t SET v = 15 WHERE id = 1")[:2] == ("ok", "UPDATE 1")
        assert outcome(a, "COMMIT") == (
            "error", "40001", "could not serialize access due to concurrent update")
