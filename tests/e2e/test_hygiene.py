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

from conftest import PostgresBackend, RockLakeBackend, duckdb_connect


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


def lake_workload(con):
    """Inlined rows updated and deleted, a Parquet file with deletes that a
    rewrite replaces; then every snapshot but the last two expired by
    DuckLake. Returns the snapshots kept."""
    for sql in [
        "CREATE TABLE l.t (i INTEGER, s VARCHAR)",
        "INSERT INTO l.t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
        "UPDATE l.t SET s = 'B' WHERE i = 2",
        "DELETE FROM l.t WHERE i = 3",
        "INSERT INTO l.t VALUES (4, 'd')",
        "UPDATE l.t SET s = 'A' WHERE i = 1",
        "CREATE TABLE l.big AS SELECT range AS i FROM range(1000)",
        "DELETE FROM l.big WHERE i < 10",
        "CALL ducklake_rewrite_data_files('l', 'big', delete_threshold => 0)",
        "INSERT INTO l.t VALUES (5, 'e')",
        "UPDATE l.t SET s = 'E' WHERE i = 5",
    ]:
        con.execute(sql)
    snapshots = [r[0] for r in con.execute(
        "SELECT snapshot_id FROM ducklake_snapshots('l') ORDER BY 1").fetchall()]
    expired = snapshots[:-2]
    con.execute(f"CALL ducklake_expire_snapshots('l', versions => {expired})")
    return snapshots[-2:]


DEAD_SPANS = """
    SELECT count(*) FROM {table} r WHERE r.end_snapshot IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM ducklake_snapshot s
        WHERE s.snapshot_id >= r.begin_snapshot AND s.snapshot_id < r.end_snapshot)"""


def dead_rows(dsn):
    """Rows of each inlined-data table that no snapshot left can read, and
    of each inlined-delete table whose data file is gone."""
    with psycopg.connect(dsn, autocommit=True) as con:
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM ducklake_inlined_data_tables ORDER BY 1")]
        dead = {t: con.execute(DEAD_SPANS.format(table=t)).fetchone()[0] for t in tables}
        for (t,) in con.execute("SELECT relname FROM pg_class WHERE relkind = 'r' "
                                "AND relname LIKE 'ducklake_inlined_delete_%'").fetchall():
            dead[t] = con.execute(f"SELECT count(*) FROM {t} WHERE file_id NOT IN "
                                  "(SELECT data_file_id FROM ducklake_data_file)").fetchone()[0]
        return dead


@pytest.mark.rocklake
def test_dead_inlined_rows_go_and_readable_snapshots_match_postgresql(tmp_path, request):
    """Rows of a live table's inlined data that only expired snapshots saw
    are deleted by the server (DuckLake leaves them until a flush);
    every snapshot left reads the same as before, and the same as the
    same workload on a PostgreSQL catalog."""
    server = RockLakeBackend(tmp_path / "rocklake")
    server.start()
    try:
        con = duckdb_connect()
        con.execute(server.attach_sql("l", tmp_path / "data"))
        kept = lake_workload(con)
        before = readable_view(con)
        dead = dead_rows(server.dsn())
        # The workload leaves dead rows: three ended versions of `t`'s rows,
        # and the deletes of `big`'s rewritten file.
        assert dead["ducklake_inlined_data_1_1"] == 3, dead
        assert dead["ducklake_inlined_delete_2"] == 10, dead
        con.close()

        server.stop()
        hygienic = HygieneBackend(tmp_path / "rocklake")
        hygienic.start()
        wait_until(lambda: sum(dead_rows(hygienic.dsn()).values()) == 0,
                   "hygiene did not delete the dead inlined rows")
        fresh = duckdb_connect()
        fresh.execute(hygienic.attach_sql("l", tmp_path / "data"))
        after = readable_view(fresh)
        assert after == before
        assert [k[0] for k in after] and {k[0] for k in after} == set(kept)
        assert fresh.execute("SELECT * FROM l.t ORDER BY 1").fetchall() == [
            (1, "A"), (2, "B"), (4, "d"), (5, "E")]
        assert fresh.execute("SELECT count(*), min(i) FROM l.big").fetchone() == (990, 10)
        fresh.execute("INSERT INTO l.t VALUES (6, 'f')")
        fresh.close()
        log = "".join(p.read_text(errors="replace") for p in hygienic.workdir.glob("server-*.log"))
        assert "hygiene: deleted inlined rows" in log, log[-3000:]
        hygienic.stop()
    finally:
        server.stop()

    if os.environ.get("ROCKLAKE_PG_REFERENCE") == "1":
        pg = request.getfixturevalue("pg_server")
        reference = PostgresBackend(pg)
        con = duckdb_connect()
        con.execute(reference.attach_sql("l", tmp_path / "pg-data"))
        assert lake_workload(con) == kept
        assert readable_view(con) == before
        con.close()
        # DuckLake's expiry leaves the same dead rows on PostgreSQL.
        assert dead_rows(pg.dsn(reference.db)) == dead
