"""Hygiene: the writer drops DuckLake's inlined-data tables that no
snapshot can read any more (a dropped table whose snapshots were excised),
with their registrations, on its schedule; everything a readable snapshot
sees is identical before and after, and a kill -9 in between loses nothing."""

from __future__ import annotations

import os
import signal
import time

import psycopg
import pytest

from conftest import RockLakeBackend, duckdb_connect


class HygieneBackend(RockLakeBackend):
    def command(self):
        return [*super().command(), "--retention-every", "300ms"]


def inlined_tables(server):
    with psycopg.connect(server.dsn(), autocommit=True) as con:
        tables = {r[0] for r in con.execute(
            "SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE 'ducklake_inlined_%'")}
        registered = {r[0] for r in con.execute(
            "SELECT table_name FROM ducklake_inlined_data_tables")}
    return tables, registered


def readable_view(con):
    """Every readable snapshot's rows of every table alive then."""
    view = {}
    for (snapshot,) in con.execute(
            "SELECT snapshot_id FROM ducklake_snapshots('l') ORDER BY 1").fetchall():
        for (table,) in con.execute(
                f"SELECT table_name FROM ducklake_table_info('l') ORDER BY 1").fetchall():
            try:
                rows = con.execute(f"SELECT * FROM l.{table} AT (VERSION => {snapshot}) "
                                   "ORDER BY ALL").fetchall()
            except Exception as error:  # not alive at that snapshot
                rows = type(error).__name__
            view[(snapshot, table)] = rows
    return view


def wait_until(predicate, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


@pytest.mark.rocklake
def test_inlined_tables_no_snapshot_reads_are_dropped(tmp_path):
    server = HygieneBackend(tmp_path / "rocklake")
    server.start()
    try:
        con = duckdb_connect()
        con.execute(server.attach_sql("l", tmp_path / "data"))
        con.execute("CREATE TABLE l.keep (i INTEGER)")
        con.execute("INSERT INTO l.keep VALUES (1), (2)")
        con.execute("CREATE TABLE l.gone (i INTEGER)")
        con.execute("INSERT INTO l.gone VALUES (3)")
        gone_id = con.execute("SELECT table_id FROM ducklake_table_info('l') "
                              "WHERE table_name = 'gone'").fetchone()[0]
        con.execute("DROP TABLE l.gone")
        con.execute("INSERT INTO l.keep VALUES (4)")
        tables, registered = inlined_tables(server)
        gone = {t for t in tables if t.startswith(f"ducklake_inlined_data_{gone_id}_")}
        assert gone and gone <= registered, (tables, registered)

        # While a snapshot that sees `gone` is readable, nothing is dropped.
        time.sleep(1.5)
        assert inlined_tables(server) == (tables, registered)
        before = readable_view(con)

        # Leftovers: an unregistered inlined table of a table that never
        # lived is dropped; one of a live table is left alone.
        keep_id = con.execute("SELECT table_id FROM ducklake_table_info('l') "
                              "WHERE table_name = 'keep'").fetchone()[0]
        with psycopg.connect(server.dsn(), autocommit=True) as admin:
            admin.execute("CREATE TABLE ducklake_inlined_data_999_1 (a int)")
            admin.execute(f"CREATE TABLE ducklake_inlined_data_{keep_id}_99 (a int)")
            latest = admin.execute("SELECT max(snapshot_id) FROM ducklake_snapshot").fetchone()[0]
            # Every snapshot that saw `gone` is given up ...
            admin.execute(f"CALL rocklake_retain_from('{latest}')")
            admin.execute("CALL rocklake_excise()")
        # ... and a kill -9 may come before or during the pass.
        os.killpg(server.proc.pid, signal.SIGKILL)
        server.wait_exit()
        server.start()
        wait_until(lambda: not (inlined_tables(server)[0] & (gone | {"ducklake_inlined_data_999_1"})),
                   "hygiene did not drop the unreadable inlined tables")
        tables_after, registered_after = inlined_tables(server)
        assert not (registered_after & gone)
        assert f"ducklake_inlined_data_{keep_id}_99" in tables_after
        assert registered - gone == registered_after

        # What readable snapshots see is unchanged, in this connection and a
        # fresh one (which loads the catalog anew).
        con.close()
        fresh = duckdb_connect()
        fresh.execute(server.attach_sql("l", tmp_path / "data"))
        after = readable_view(fresh)
        assert after == {key: rows for key, rows in before.items() if key in after}
        assert fresh.execute("SELECT * FROM l.keep ORDER BY 1").fetchall() == [(1,), (2,), (4,)]
        fresh.execute("INSERT INTO l.keep VALUES (5)")
        log = "".join(p.read_text(errors="replace") for p in server.workdir.glob("server-*.log"))
        assert "hygiene: dropped an inlined table" in log, log[-3000:]
        fresh.close()
    finally:
        server.stop()
