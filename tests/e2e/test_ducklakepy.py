"""ducklakepy, a DuckLake implementation in pure Python over SQLAlchemy and
psycopg (so over SQLAlchemy's PostgreSQL reflection), against RockLake and a
real PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1), with equal results:

- it creates a spec 1.1 catalog, writes (appends, a delete, a schema change)
  and reads every snapshot back by time travel;
- it reads a catalog stock DuckDB 1.5.5 made (spec 1.0) at every snapshot,
  appends to it, and DuckDB reads the appended rows back;
- it migrates that DuckDB-made 1.0 catalog to 1.1 in place and goes on.

Every catalog table then holds the same rows on both servers.
"""

from __future__ import annotations

import re

import pyarrow as pa
import pytest

from conftest import PostgresBackend
from test_import import snapshot_view
from test_spec_1_1 import catalog_contents

ducklakepy = pytest.importorskip("ducklakepy")
from ducklakepy import DuckLakeCatalog  # noqa: E402
from ducklakepy.expressions import col  # noqa: E402
from ducklakepy.schema import Column, Schema  # noqa: E402
from ducklakepy.types import Int64Type, VarcharType  # noqa: E402

# ducklakepy marks its commits with a random transaction id.
TRANSACTION_ID = re.compile(r"transaction=[0-9a-f]{32}")


def url_of(backend) -> str:
    """SQLAlchemy's URL of a backend's catalog database."""
    if isinstance(backend, PostgresBackend):
        return f"postgresql+psycopg://postgres@127.0.0.1:{backend.server.port}/{backend.db}"
    return f"postgresql+psycopg://postgres@{backend.host}:{backend.port}/lake"


def dsn_of(backend) -> str:
    if isinstance(backend, PostgresBackend):
        return backend.server.dsn(backend.db)
    return backend.dsn()


# A delete file holds the paths of the data files it deletes from, and those
# paths carry random UUIDs: its compressed size differs from run to run by a
# few bytes, whatever the catalog server.
RANDOM_SIZES = {"ducklake_delete_file": ("file_size_bytes", "footer_size")}


def contents(backend, data_path: str) -> dict:
    """The catalog's rows, without what differs between two runs (times,
    UUIDs, ducklakepy's transaction ids, the data path, the sizes of files
    that hold UUIDs)."""
    out = {}
    for table, (names, rows) in catalog_contents(dsn_of(backend), data_path).items():
        masked = [names.index(n) for n in RANDOM_SIZES.get(table, ()) if n in names]
        out[table] = (names, sorted(
            [["<size>" if i in masked
              else TRANSACTION_ID.sub("transaction=<id>", v) if isinstance(v, str) else v
              for i, v in enumerate(r)]
             for r in rows], key=repr))
    return out


def table_history(catalog, name: str) -> list:
    """The table's rows at every snapshot (or the error type where it did
    not exist), and the snapshot list."""
    snapshots = catalog.snapshots()
    out = [[(s.snapshot_id, s.schema_version) for s in snapshots]]
    for s in snapshots:
        try:
            rows = catalog.load_table(name, snapshot=s).to_arrow().to_pylist()
            out.append((s.snapshot_id, sorted(repr(tuple(r.values())) for r in rows)))
        except Exception as e:  # the table did not exist then
            out.append((s.snapshot_id, type(e).__name__))
    return out


def write_with_ducklakepy(backend, data) -> list:
    """A new 1.1 catalog written and read by ducklakepy alone."""
    data_path = f"{data}/"
    with DuckLakeCatalog("lake", url=url_of(backend), data_path=data_path) as catalog:
        catalog.initialize()
        version = str(catalog.spec_version())
        events = catalog.create_table("main.events", schema=Schema(
            Column("id", Int64Type(), required=True), Column("name", VarcharType())))
        events.append(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]}))
        catalog.load_table("main.events").append(pa.table(
            {"id": list(range(10, 1010)), "name": [f"n{i}" for i in range(10, 1010)]}))
        catalog.load_table("main.events").delete(col("id") < 3)
        with catalog.load_table("main.events").update_schema() as update:
            update.add_column("note", VarcharType())
        catalog.load_table("main.events").append(pa.table(
            {"id": [5000], "name": ["late"], "note": ["added after the schema change"]}))
        tables = [str(t) for t in catalog.list_tables("main")]
        return [version, tables, table_history(catalog, "main.events")]


@pytest.mark.rocklake
def test_ducklakepy_writes_and_time_travels_a_1_1_catalog_as_on_postgresql(
        pg_server, rocklake, tmp_path):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    expected = write_with_ducklakepy(reference, tmp_path / "pg")
    actual = write_with_ducklakepy(rocklake, tmp_path / "rl")
    assert expected[0] == "1.1"
    assert actual == expected
    assert contents(rocklake, f"{tmp_path}/rl/") == contents(reference, f"{tmp_path}/pg/")


DUCKDB_STEPS = [
    "CREATE TABLE l.t (id BIGINT, name VARCHAR)",
    "INSERT INTO l.t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
    "INSERT INTO l.t SELECT i, 'row' || i FROM range(100, 400) r(i)",
    "DELETE FROM l.t WHERE id = 2",
    "UPDATE l.t SET name = 'THREE' WHERE id = 3",
    "CALL ducklake_flush_inlined_data('l')",
]


def duckdb_then_ducklakepy(duck, backend, data) -> list:
    """DuckDB 1.5.5 makes a 1.0 catalog; ducklakepy reads every snapshot of
    it and appends; DuckDB reads the result back; ducklakepy then migrates
    the catalog to 1.1 and appends again."""
    con = duck()
    con.execute(backend.attach_sql("l", data))
    for sql in DUCKDB_STEPS:
        con.execute(sql)
    duckdb_view = snapshot_view(con, "l")
    con.close()
    data_path = f"{data}/"
    with DuckLakeCatalog("lake", url=url_of(backend), data_path=data_path) as catalog:
        opened_as = str(catalog.spec_version())
        history = table_history(catalog, "main.t")
        catalog.load_table("main.t").append(pa.table(
            {"id": [7001, 7002], "name": ["from", "ducklakepy"]}))
    con = duck()
    con.execute(backend.attach_sql("l", data))
    read_back = sorted(con.execute("SELECT id, name FROM l.t WHERE id > 7000").fetchall())
    after_append = snapshot_view(con, "l")
    con.close()
    with DuckLakeCatalog("lake", url=url_of(backend), data_path=data_path,
                         automatic_migration=True, spec_version="1.1") as catalog:
        migrated_to = str(catalog.spec_version())
        catalog.load_table("main.t").append(pa.table({"id": [8001], "name": ["on 1.1"]}))
        migrated_history = table_history(catalog, "main.t")
    return [duckdb_view, opened_as, history, read_back, after_append, migrated_to,
            migrated_history]


@pytest.mark.rocklake
def test_ducklakepy_reads_appends_and_migrates_a_duckdb_catalog_as_on_postgresql(
        pg_server, rocklake, duck, tmp_path):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    expected = duckdb_then_ducklakepy(duck, reference, tmp_path / "pg")
    actual = duckdb_then_ducklakepy(duck, rocklake, tmp_path / "rl")
    duckdb_view, opened_as, history, read_back, *_ = expected
    assert opened_as == "1.0"
    assert read_back == [(7001, "from"), (7002, "ducklakepy")]
    # ducklakepy's time travel sees what DuckDB saw at each snapshot where
    # the table exists.
    duckdb_rows = {snapshot: rows for (snapshot, schema, table, rows) in duckdb_view[1:]
                   if (schema, table) == ("main", "t") and isinstance(rows, list)}
    ducklakepy_rows = {snapshot: rows for (snapshot, rows) in history[1:]
                       if isinstance(rows, list)}
    assert len(duckdb_rows) == len(DUCKDB_STEPS)
    assert ducklakepy_rows == duckdb_rows
    for label, want, got in zip(
            ["DuckDB's view", "opened as", "ducklakepy's history", "DuckDB reads the append",
             "DuckDB's view after the append", "migrated to", "history after the migration"],
            expected, actual):
        assert got == want, label
    assert contents(rocklake, f"{tmp_path}/rl/") == contents(reference, f"{tmp_path}/pg/")
