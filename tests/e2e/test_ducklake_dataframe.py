"""ducklake-dataframe (PyPI, a pure-Python DuckLake implementation with
Polars/pandas front ends; it reads and writes PostgreSQL catalogs through
psycopg2) against RockLake and a real PostgreSQL 15
(ROCKLAKE_PG_REFERENCE=1), through its pandas front end:

- stock DuckDB 1.5.5 makes a catalog (inserts, a delete, an update);
- ducklake-dataframe lists its snapshots and reads the table at every
  snapshot by time travel, which equals what DuckDB sees there;
- after DuckDB flushes the inlined rows to Parquet, ducklake-dataframe reads
  the latest snapshot, appends rows, and DuckDB reads them back;

and every result is the same on RockLake as on PostgreSQL.
"""

from __future__ import annotations

import pytest

from conftest import PostgresBackend
from test_import import snapshot_view

pytest.importorskip("ducklake_pandas")
import pandas as pd  # noqa: E402
from ducklake_pandas import DuckLakeCatalog, read_ducklake, write_ducklake  # noqa: E402

DUCKDB_STEPS = [
    "CREATE TABLE l.t (id BIGINT, name VARCHAR)",
    "INSERT INTO l.t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
    "INSERT INTO l.t SELECT i, 'row' || i FROM range(100, 400) r(i)",
    "DELETE FROM l.t WHERE id = 2",
    "UPDATE l.t SET name = 'THREE' WHERE id = 3",
]


def dsn_of(backend) -> str:
    """The libpq connection string ducklake-dataframe takes as its path."""
    if isinstance(backend, PostgresBackend):
        return backend.server.dsn(backend.db)
    return backend.dsn()


def rows_of(frame: pd.DataFrame) -> list[str]:
    return sorted(repr(tuple(r)) for r in frame[["id", "name"]].itertuples(index=False))


def history(dsn: str) -> list:
    """The snapshots (id, schema version) and the table's rows at each."""
    snapshots = DuckLakeCatalog(dsn).snapshots()
    out = [[(int(s), int(v)) for s, v in zip(snapshots["snapshot_id"],
                                              snapshots["schema_version"])]]
    for snapshot in snapshots["snapshot_id"]:
        try:
            out.append((int(snapshot), rows_of(read_ducklake(dsn, "t",
                                                             snapshot_version=int(snapshot)))))
        except Exception as e:  # the table did not exist yet
            out.append((int(snapshot), type(e).__name__))
    return out


def duckdb_then_dataframe(duck, backend, data) -> list:
    con = duck()
    con.execute(backend.attach_sql("l", data))
    for sql in DUCKDB_STEPS:
        con.execute(sql)
    duckdb_view = snapshot_view(con, "l")
    dsn = dsn_of(backend)
    # Read before the flush: ducklake-dataframe 1.0.0 reads the Parquet file
    # a flush writes without the rows' own snapshot ranges, so time travel to
    # snapshots before a flush sees later versions of updated rows too (on
    # PostgreSQL as on RockLake).
    before = history(dsn)
    con.execute("CALL ducklake_flush_inlined_data('l')")
    flushed = sorted(repr(r) for r in con.execute("SELECT id, name FROM l.t").fetchall())
    con.close()
    latest = rows_of(read_ducklake(dsn, "t"))
    write_ducklake(pd.DataFrame({"id": [7001, 7002], "name": ["from", "dataframe"]}),
                   dsn, "t", mode="append")
    con = duck()
    con.execute(backend.attach_sql("l", data))
    read_back = con.execute("SELECT id, name FROM l.t WHERE id > 7000 ORDER BY id").fetchall()
    after = snapshot_view(con, "l")
    con.close()
    return [duckdb_view, before, flushed, latest, read_back, after,
            rows_of(read_ducklake(dsn, "t"))]


@pytest.mark.rocklake
def test_ducklake_dataframe_reads_and_appends_a_duckdb_catalog_as_on_postgresql(
        pg_server, rocklake, duck, tmp_path):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    expected = duckdb_then_dataframe(duck, reference, tmp_path / "pg")
    actual = duckdb_then_dataframe(duck, rocklake, tmp_path / "rl")
    duckdb_view, before, flushed, latest, read_back, *_ = expected
    assert read_back == [(7001, "from"), (7002, "dataframe")]
    assert latest == flushed and len(latest) == 302
    # Time travel sees what DuckDB saw at each snapshot, up to the flush.
    duckdb_rows = {snapshot: rows for (snapshot, schema, table, rows) in duckdb_view[1:]
                   if (schema, table) == ("main", "t") and isinstance(rows, list)}
    dataframe_rows = {snapshot: rows for (snapshot, rows) in before[1:]
                      if isinstance(rows, list) and snapshot in duckdb_rows}
    assert len(duckdb_rows) == len(DUCKDB_STEPS)
    assert dataframe_rows == duckdb_rows
    for label, want, got in zip(
            ["DuckDB's view", "ducklake-dataframe's history", "DuckDB after the flush",
             "ducklake-dataframe's latest", "DuckDB reads the append",
             "DuckDB's view after the append", "ducklake-dataframe after the append"],
            expected, actual):
        assert got == want, label
