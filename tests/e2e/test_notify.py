"""LISTEN/NOTIFY: PostgreSQL's notifications between sessions, and the
notification RockLake sends on channel `ducklake_snapshot` after each
DuckLake commit.

The same psycopg script runs against RockLake and (with
ROCKLAKE_PG_REFERENCE=1) a real PostgreSQL 15: what each listener receives
(channel, payload, the notifier's pid) and each error must be the same.
asyncpg listens while stock DuckDB commits; a listener that reads nothing
does not hold commits up.
"""

from __future__ import annotations

import asyncio
import json
import os
import time

import psycopg
import pytest

from conftest import PostgresServer, RockLakeBackend, duckdb_connect


def received(con, timeout=2.0, stop_after=None):
    """(channel, payload, pid) of each notification `con` gets within
    `timeout` s."""
    return [(n.channel, n.payload, n.pid)
            for n in con.notifies(timeout=timeout, stop_after=stop_after)]


def script(dsn: str):
    """A LISTEN/NOTIFY walk-through; returns what was seen, with pids
    replaced by who sent."""
    out = []
    listener = psycopg.connect(dsn, autocommit=True)
    sender = psycopg.connect(dsn, autocommit=True)
    who = {listener.info.backend_pid: "listener", sender.info.backend_pid: "sender"}

    def seen(con, **kw):
        return [(c, p, who.get(pid, pid)) for c, p, pid in received(con, **kw)]

    def attempt(con, sql):
        try:
            con.execute(sql)
            return "ok"
        except psycopg.Error as error:
            return (error.sqlstate, str(error).splitlines()[0])

    listener.execute("LISTEN jobs")
    listener.execute('LISTEN "Mixed Case"')
    out.append(("channels", listener.execute(
        "SELECT count(*), bool_or(c = 'jobs'), bool_or(c = 'Mixed Case') "
        "FROM pg_listening_channels() AS c").fetchall()))
    sender.execute("NOTIFY jobs, 'one'")
    sender.execute("NOTIFY jobs")
    sender.execute("""NOTIFY "Mixed Case", 'two'""")
    sender.execute("SELECT pg_notify('jobs', 'three')")
    sender.execute("NOTIFY other, 'not listened'")
    out.append(("autocommit", seen(listener, stop_after=4)))
    # Sent at commit only, each distinct one once, in order; a rollback
    # sends nothing.
    with sender.transaction():
        sender.execute("NOTIFY jobs, 'a'")
        sender.execute("NOTIFY jobs, 'a'")
        sender.execute("SELECT pg_notify('jobs', 'b')")
        out.append(("before commit", seen(listener, timeout=0.5)))
    out.append(("after commit", seen(listener, stop_after=2)))
    sender.execute("BEGIN")
    sender.execute("NOTIFY jobs, 'rolled back'")
    sender.execute("ROLLBACK")
    sender.execute("BEGIN")
    sender.execute("NOTIFY jobs, 'failed'")
    out.append(("error in block", attempt(sender, "SELECT 1/0")))
    sender.execute("COMMIT")
    out.append(("after rollbacks", seen(listener, timeout=0.5)))
    # A session hears itself; a listener inside a transaction block hears
    # at its end.
    listener.execute("NOTIFY jobs, 'self'")
    out.append(("self", seen(listener, stop_after=1)))
    # LISTEN in a rolled-back block does not listen.
    sender.execute("BEGIN")
    sender.execute("LISTEN sender_channel")
    # Listening starts at commit: not listed inside the block.
    out.append(("channels in block", sender.execute(
        "SELECT pg_listening_channels()").fetchall()))
    sender.execute("ROLLBACK")
    listener.execute("NOTIFY sender_channel, 'x'")
    out.append(("rolled-back listen", seen(sender, timeout=0.5)))
    # A rollback to a savepoint forgets what was queued after it.
    sender.execute("BEGIN")
    sender.execute("NOTIFY jobs, 'kept'")
    sender.execute("SAVEPOINT s")
    sender.execute("NOTIFY jobs, 'undone'")
    sender.execute("ROLLBACK TO SAVEPOINT s")
    sender.execute("COMMIT")
    out.append(("savepoint", seen(listener, timeout=0.5)))
    # UNLISTEN * stops everything.
    out.append(("queue usage", sender.execute(
        "SELECT pg_notification_queue_usage() < 0.01").fetchall()))
    listener.execute("UNLISTEN *")
    sender.execute("NOTIFY jobs, 'after unlisten'")
    out.append(("unlisten", seen(listener, timeout=0.5)))
    out.append(("channels after unlisten", listener.execute(
        "SELECT count(*) FROM pg_listening_channels()").fetchall()))
    # Errors.
    for sql in ["SELECT pg_notify('', 'x')", "SELECT pg_notify(NULL, 'x')",
                f"SELECT pg_notify('c', '{'x' * 8000}')",
                f"SELECT pg_notify('{'c' * 64}', 'x')", 'NOTIFY ""',
                f"NOTIFY c, '{'x' * 7999}'"]:
        out.append((sql[:40], attempt(sender, sql)))
    # NOTIFY in a read-only transaction is allowed, as in PostgreSQL.
    sender.execute("BEGIN READ ONLY")
    out.append(("read-only", attempt(sender, "NOTIFY c, 'ro'")))
    sender.execute("COMMIT")
    listener.close()
    sender.close()
    return out


@pytest.mark.rocklake
def test_listen_notify_as_postgresql(tmp_path):
    server = RockLakeBackend(tmp_path / "rocklake")
    server.start()
    try:
        ours = script(server.dsn())
    finally:
        server.stop()
    expected_autocommit = [("jobs", "one", "sender"), ("jobs", "", "sender"),
                           ("Mixed Case", "two", "sender"), ("jobs", "three", "sender")]
    assert ours[0] == ("channels", [(2, True, True)]), ours[0]
    assert ours[1] == ("autocommit", expected_autocommit), ours[1]
    assert ("channels in block", []) in ours
    assert ("channels after unlisten", [(0,)]) in ours
    assert ("after commit", [("jobs", "a", "sender"), ("jobs", "b", "sender")]) in ours
    if os.environ.get("ROCKLAKE_PG_REFERENCE") != "1":
        return
    pg = PostgresServer()
    pg.start()
    try:
        theirs = script(pg.dsn(pg.new_database("notify")))
    finally:
        pg.stop(remove=True)
    for mine, reference in zip(ours, theirs):
        assert mine == reference, (mine, reference)
    assert len(ours) == len(theirs)


@pytest.mark.rocklake
def test_duckdb_commits_notify_listeners(tmp_path, data_dir):
    asyncpg = pytest.importorskip("asyncpg")
    server = RockLakeBackend(tmp_path / "rocklake")
    server.start()
    try:
        async def scenario():
            listener = await asyncpg.connect(host="127.0.0.1", port=server.port,
                                             user="postgres", database="lake")
            # A second listener that never reads its socket: commits go on.
            sluggish = psycopg.connect(server.dsn(), autocommit=True)
            sluggish.execute("LISTEN ducklake_snapshot")
            got: asyncio.Queue = asyncio.Queue()
            await listener.add_listener("ducklake_snapshot",
                                        lambda *args: got.put_nowait(args[3]))

            def commits():
                con = duckdb_connect()
                con.execute(server.attach_sql("l", data_dir("lake")))
                con.execute("CREATE TABLE l.t (i INTEGER)")
                for i in range(20):
                    con.execute("INSERT INTO l.t VALUES (?)", [i])
                con.execute("DELETE FROM l.t WHERE i < 5")
                rows = con.execute(
                    "SELECT snapshot_id, schema_version, changes "
                    "FROM ducklake_snapshots('l') ORDER BY snapshot_id").fetchall()
                con.close()
                return rows

            started = time.monotonic()
            snapshots = await asyncio.get_running_loop().run_in_executor(None, commits)
            took = time.monotonic() - started
            payloads = []
            deadline = time.monotonic() + 30
            while len(payloads) < len(snapshots) and time.monotonic() < deadline:
                try:
                    payloads.append(json.loads(await asyncio.wait_for(got.get(), 1)))
                except asyncio.TimeoutError:
                    pass
            await listener.close()
            late = received(sluggish, timeout=1)
            sluggish.close()
            return snapshots, payloads, late, took

        snapshots, payloads, late, took = asyncio.run(scenario())
        with psycopg.connect(server.dsn(), autocommit=True) as con:
            made = dict(con.execute(
                "SELECT snapshot_id, changes_made FROM ducklake_snapshot_changes").fetchall())
    finally:
        server.stop()
    # Every snapshot is notified once, in commit order (the lake's first,
    # which ATTACH writes with COPY, too), with what the catalog holds.
    ids = [p["snapshot_id"] for p in payloads]
    assert ids == [s[0] for s in snapshots], ids
    by_id = {s[0]: s for s in snapshots}
    for p in payloads:
        assert p["database"] == "lake" and p["schema"] == "public", p
        snapshot_id, schema_version, _ = by_id[p["snapshot_id"]]
        assert p["schema_version"] == schema_version, p
        assert p["snapshot_time"], p
    # changes_made is the catalog's text for that snapshot.
    for p in payloads:
        assert p["changes_made"] == made[p["snapshot_id"]], p
    assert sum(p["changes_made"].startswith("inlined_insert") for p in payloads) == 20
    assert any("created_table" in p["changes_made"] for p in payloads)
    # The listener that read nothing gets every notification once it reads.
    assert [json.loads(payload)["snapshot_id"] for _, payload, _ in late] == ids
    print(f"\n{len(payloads)} DuckDB commits notified in {took:.2f} s "
          f"with a listener that read nothing until the end")
