"""`pg_stat_activity`, `pg_cancel_backend` and `pg_terminate_backend`,
differential against a real PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1): what an
operator sees of sessions (state, query, transaction start, application) and
what ending them does, plus DuckDB sessions seen while they work.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from conftest import PostgresBackend

WATCH = ("SELECT state, query, xact_start IS NOT NULL, query_start >= backend_start, "
         "state_change >= backend_start, usename = current_user, backend_type, wait_event_type, "
         "datname = current_database(), client_addr = inet_client_addr() "
         "FROM pg_stat_activity WHERE application_name = %s")


def connect(dsn: str, application: str) -> psycopg.Connection:
    return psycopg.connect(dsn, autocommit=True, application_name=application)


def seen(watcher: psycopg.Connection, application: str) -> list[tuple]:
    return watcher.execute(WATCH, [application]).fetchall()


def rows_within(conn: psycopg.Connection, sql: str, seconds: float = 10) -> list[tuple]:
    """The rows of `sql` once it has some, asked again until then (at most
    `seconds`: a hang shows as no rows)."""
    deadline = time.monotonic() + seconds
    rows = []
    while time.monotonic() < deadline and not rows:
        rows = conn.execute(sql).fetchall()
        time.sleep(0.02)
    return rows


def in_background(conn: psycopg.Connection, sql: str) -> tuple[threading.Thread, dict]:
    """Runs `sql` on `conn` in a thread of its own; the dict gets its
    outcome under "result": "finished", or the SQLSTATE it failed with."""
    outcome = {}

    def run():
        try:
            conn.execute(sql)
            outcome["result"] = "finished"
        except psycopg.Error as error:
            outcome["result"] = error.sqlstate

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def states_of_a_session(dsn: str) -> list:
    """What another session sees of one going through a transaction block."""
    observed = []
    with connect(dsn, "watcher") as watcher, connect(dsn, "watched") as watched:
        observed.append(seen(watcher, "watched"))
        watched.execute("BEGIN")
        watched.execute("SELECT 1")
        observed.append(seen(watcher, "watched"))
        with pytest.raises(psycopg.errors.DivisionByZero):
            watched.execute("SELECT 1/0")
        observed.append(seen(watcher, "watched"))
        watched.execute("ROLLBACK")
        observed.append(seen(watcher, "watched"))
    return observed


def wait_gone(watcher: psycopg.Connection, application: str) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        count = watcher.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
                                [application]).fetchone()[0]
        if count == 0:
            return True
        time.sleep(0.05)
    return False


def terminate_idle_in_transaction(dsn: str) -> list:
    """An operator ends a session left idle in a transaction."""
    observed = []
    with connect(dsn, "watcher") as watcher:
        victim = connect(dsn, "victim")
        victim.execute("BEGIN")
        victim.execute("SELECT 1")
        observed.append(watcher.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'victim' AND state = 'idle in transaction'").fetchall())
        observed.append(wait_gone(watcher, "victim"))
        try:
            victim.execute("SELECT 1")
            observed.append("still connected")
        except psycopg.Error as error:
            observed.append(("ended", type(error).__mro__[1].__name__ != "object"))
        victim.close()
        observed.append(watcher.execute("SELECT pg_terminate_backend(999999), "
                                        "pg_cancel_backend(999999)").fetchall())
        with pytest.raises(psycopg.errors.NumericValueOutOfRange) as negative:
            watcher.execute("SELECT pg_terminate_backend(pg_backend_pid(), -1)")
        observed.append(str(negative.value).splitlines()[0])
    return observed


def cancel_running_query(dsn: str) -> list:
    """An operator cancels a long query; the session goes on."""
    observed = []
    with connect(dsn, "watcher") as watcher, connect(dsn, "runner") as runner:
        thread, outcome = in_background(
            runner, "SELECT count(*) FROM generate_series(1, 2000000000)")
        observed.append(rows_within(watcher, "SELECT state, query FROM pg_stat_activity "
                                    "WHERE application_name = 'runner' AND state = 'active'"))
        observed.append(watcher.execute(
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'runner'").fetchall())
        thread.join(60)
        observed.append(outcome.get("result"))
        observed.append(runner.execute("SELECT 1").fetchall())
        observed.append(seen(watcher, "runner")[0][0])
    return observed


@pytest.mark.rocklake
@pytest.mark.parametrize("scenario", [states_of_a_session, terminate_idle_in_transaction,
                                      cancel_running_query])
def test_sessions_are_seen_and_ended_as_on_postgresql(pg_server, rocklake, scenario):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    expected = scenario(pg_server.dsn(reference.db))
    actual = scenario(rocklake.dsn())
    assert actual == expected


@pytest.mark.rocklake
def test_duckdb_sessions_are_seen_while_they_write(rocklake, tmp_path, duck):
    rocklake.start()
    data = tmp_path / "data"
    data.mkdir()
    con = duck()
    con.execute(rocklake.attach_sql("lake", data))
    con.execute("CREATE TABLE lake.t (i INTEGER)")
    stop = threading.Event()
    errors = []

    def write():
        try:
            n = 0
            while not stop.is_set():
                con.execute("INSERT INTO lake.t VALUES (?)", [n])
                n += 1
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        with connect(rocklake.dsn(), "watcher") as watcher:
            others = []
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not others:
                others = watcher.execute(
                    "SELECT datname, state FROM pg_stat_activity "
                    "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'").fetchall()
            assert others, "DuckDB's catalog sessions are not in pg_stat_activity"
            assert all(state in ("active", "idle", "idle in transaction") for _, state in others)
    finally:
        stop.set()
        writer.join(30)
    assert not errors
    assert con.execute("SELECT count(*) FROM lake.t").fetchone()[0] > 0


DATABASE_STATS = ("SELECT numbackends, xact_commit, xact_rollback, sessions, sessions_killed, "
                  "session_time, active_time, idle_in_transaction_time "
                  "FROM pg_stat_database WHERE datname = current_database()")


def stats_columns(dsn: str) -> list:
    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.execute("SELECT * FROM pg_stat_database WHERE datid = 0")
        shared = cur.fetchone()
        return [(c.name, c.type_code) for c in cur.description] + [
            shared[1], conn.execute("SELECT count(*) > 0 FROM pg_stat_database "
                                    "WHERE datname = current_database()").fetchone()]


@pytest.mark.rocklake
def test_pg_stat_database_counts_what_sessions_do(pg_server, rocklake):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    # PostgreSQL 15's columns and types, a row for shared objects.
    assert stats_columns(rocklake.dsn()) == stats_columns(pg_server.dsn(reference.db))
    dsn = rocklake.dsn()
    with connect(dsn, "stats-watcher") as watcher:
        before = watcher.execute(DATABASE_STATS).fetchone()
        with connect(dsn, "stats-worker") as worker:
            for _ in range(3):
                worker.execute("BEGIN")
                worker.execute("SELECT 1")
                time.sleep(0.05)
                worker.execute("COMMIT")
            worker.execute("BEGIN")
            worker.execute("SELECT pg_sleep(0.1)")
            worker.execute("ROLLBACK")
            with pytest.raises(psycopg.errors.DivisionByZero):
                worker.execute("SELECT 1/0")
            during = watcher.execute(DATABASE_STATS).fetchone()
        victim = connect(dsn, "stats-victim")
        victim.execute("BEGIN")
        watcher.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE application_name = 'stats-victim'")
        victim.close()
        after = watcher.execute(DATABASE_STATS).fetchone()
    assert during[0] == before[0] + 1, (before, during)
    assert during[1] >= before[1] + 3, (before, during)
    assert during[2] >= before[2] + 2, (before, during)
    assert during[3] == before[3] + 1, (before, during)
    assert after[3] == before[3] + 2 and after[4] == before[4] + 1, (before, after)
    # Times in milliseconds: the transactions' idle time, the sleep's active time.
    assert during[6] >= before[6] + 100, (before, during)
    assert during[7] >= before[7] + 150, (before, during)
    assert after[5] > before[5], (before, after)


def lock_wait_seen(dsn: str) -> list:
    """A session waiting for a row another transaction locked shows a
    `Lock`/`transactionid` wait, and no wait once it has the row."""
    observed = []
    with connect(dsn, "lock-setup") as setup:
        setup.execute("DROP TABLE IF EXISTS lock_wait_t")
        setup.execute("CREATE TABLE lock_wait_t (id int PRIMARY KEY, v int)")
        setup.execute("INSERT INTO lock_wait_t VALUES (1, 10)")
    with connect(dsn, "watcher") as watcher, connect(dsn, "holder") as holder, \
            connect(dsn, "waiter") as waiter:
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT v FROM lock_wait_t WHERE id = 1 FOR UPDATE")
        waiter.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        thread = threading.Thread(
            target=lambda: waiter.execute("SELECT v FROM lock_wait_t WHERE id = 1 FOR UPDATE"))
        thread.start()
        observed.append(rows_within(
            watcher, "SELECT state, wait_event_type, wait_event FROM pg_stat_activity "
                     "WHERE application_name = 'waiter' AND wait_event_type = 'Lock'"))
        # Who blocks whom, as monitoring queries ask it.
        observed.append(watcher.execute(
            "SELECT blocked.application_name, blocking.application_name "
            "FROM pg_stat_activity blocked JOIN pg_stat_activity blocking "
            "ON blocking.pid = ANY (pg_blocking_pids(blocked.pid))").fetchall())
        observed.append(watcher.execute(
            "SELECT wa.application_name, ho.application_name, w.locktype, w.mode, h.mode, "
            "w.waitstart IS NOT NULL, h.waitstart IS NULL, wa.backend_xid IS NULL, "
            "ho.backend_xid = h.transactionid "
            "FROM pg_locks w JOIN pg_locks h ON h.transactionid = w.transactionid "
            "AND h.granted AND h.pid <> w.pid "
            "JOIN pg_stat_activity wa ON wa.pid = w.pid JOIN pg_stat_activity ho ON ho.pid = h.pid "
            "WHERE NOT w.granted").fetchall())
        observed.append(watcher.execute(
            "SELECT locktype, mode, granted, fastpath, virtualxid = virtualtransaction "
            "FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'virtualxid'").fetchall())
        holder.execute("ROLLBACK")
        thread.join(30)
        observed.append(seen(watcher, "waiter")[0][:1] + seen(watcher, "waiter")[0][7:8])
        waiter.execute("ROLLBACK")
    return observed


@pytest.mark.rocklake
def test_lock_waits_are_seen_as_on_postgresql(pg_server, rocklake):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    assert lock_wait_seen(rocklake.dsn()) == lock_wait_seen(pg_server.dsn(reference.db))


def sleeps_ended(dsn: str) -> list:
    """`pg_sleep` waits, and ends like any statement: by statement_timeout
    and by a cancel from another session."""
    observed = []
    with connect(dsn, "sleeper") as sleeper, connect(dsn, "watcher") as watcher:
        started = time.monotonic()
        observed.append(sleeper.execute("SELECT pg_sleep(0.2)::text").fetchall())
        observed.append(time.monotonic() - started >= 0.2)
        sleeper.execute("SET statement_timeout = '100ms'")
        with pytest.raises(psycopg.errors.QueryCanceled) as timed_out:
            sleeper.execute("SELECT pg_sleep(30)")
        observed.append(str(timed_out.value).splitlines()[0])
        sleeper.execute("RESET statement_timeout")
        thread, outcome = in_background(sleeper, "SELECT pg_sleep_for('30 seconds')")
        rows_within(watcher, "SELECT 1 FROM pg_stat_activity "
                             "WHERE application_name = 'sleeper' AND state = 'active'")
        watcher.execute("SELECT pg_cancel_backend(pid) FROM pg_stat_activity "
                        "WHERE application_name = 'sleeper'")
        thread.join(20)
        observed.append(outcome.get("result"))
    return observed


@pytest.mark.rocklake
def test_sleeps_end_as_on_postgresql(pg_server, rocklake):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    assert sleeps_ended(rocklake.dsn()) == sleeps_ended(pg_server.dsn(reference.db))
