"""Two connections taking turns, for differential tests against a real
PostgreSQL: each statement's outcome (rows, or SQLSTATE and message), with
statements that wait for the other connection run in a thread. Timeouts only
detect hangs: nothing asserts how long anything took."""

from __future__ import annotations

import threading
import time

import psycopg

from conftest import PostgresBackend

HANG = 60.0


def outcome(conn: psycopg.Connection, sql: str):
    """("ok", status, rows) or ("error", SQLSTATE, message) of one statement."""
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            rows = cur.fetchall() if cur.description else None
            return ("ok", cur.statusmessage, rows)
    except psycopg.Error as e:
        return ("error", e.sqlstate, e.diag.message_primary)


class Background:
    """One statement running in a thread."""

    def __init__(self, conn: psycopg.Connection, sql: str):
        self.result = None
        self.thread = threading.Thread(target=self._run, args=(conn, sql), daemon=True)
        self.thread.start()
        # Lets the statement reach the server (and start waiting) before the
        # other connection goes on; outcomes do not depend on how long.
        time.sleep(0.5)

    def _run(self, conn, sql):
        self.result = outcome(conn, sql)

    def join(self):
        self.thread.join(HANG)
        assert not self.thread.is_alive(), "statement hangs"
        return self.result


def run_scenario(dsn: str, setup_sql: list[str], steps: list[tuple[str, str]]) -> list:
    """Runs SETUP_SQL, then STEPS on two connections `a` and `b`: a name
    ending in `&` starts the statement in the background (it may wait for the
    other connection), `("wait", name)` collects that outcome. Returns every
    step's outcome."""
    with psycopg.connect(dsn, autocommit=True) as setup:
        for sql in setup_sql:
            setup.execute(sql)
    conns = {name: psycopg.connect(dsn, autocommit=True) for name in ("a", "b")}
    background: dict[str, Background] = {}
    out = []
    try:
        for who, sql in steps:
            if who == "wait":
                out.append((f"{sql} (waited)", background.pop(sql).join()))
            elif who.endswith("&"):
                background[who[:-1]] = Background(conns[who[:-1]], sql)
            else:
                out.append((who, sql, outcome(conns[who], sql)))
    finally:
        for conn in conns.values():
            conn.close()
    return out


def assert_same_as_postgresql(pg_server, rocklake, setup_sql: list[str], steps: list) -> None:
    """Runs the scenario on a fresh PostgreSQL database and on RockLake and
    asserts every step's outcome is the same."""
    rocklake.start()
    reference = PostgresBackend(pg_server)
    expected = run_scenario(pg_server.dsn(reference.db), setup_sql, steps)
    actual = run_scenario(rocklake.dsn(), setup_sql, steps)
    differences = [f"{e}\n  RockLake: {a}" for e, a in zip(expected, actual) if e != a]
    assert len(actual) == len(expected)
    assert not differences, "\n".join(differences)
