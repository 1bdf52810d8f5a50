"""`rocklake import` and `rocklake export`: a DuckLake catalog that stock
DuckDB built on a real PostgreSQL 15 is copied into RockLake; DuckDB attached
to the copy sees at every snapshot what it sees on the source, and writes on;
exported back (while the server runs) into an empty PostgreSQL database, it
is the same again. Bad inputs fail with one clear error and leave nothing
behind.

Needs the PostgreSQL reference (ROCKLAKE_PG_REFERENCE=1, the default of
scripts/test.sh).
"""

from __future__ import annotations

import pathlib
import sqlite3
import subprocess
import sys

import pytest

from conftest import ROCKLAKE_BIN, DuckDBFileBackend, PostgresBackend, RockLakeBackend
from workload import WORKLOAD, run_steps


def snapshot_view(con, alias: str) -> list:
    """Every table's rows at every snapshot, and the snapshot list itself."""
    view = [con.execute(f"SELECT snapshot_id, schema_version, changes FROM "
                        f"ducklake_snapshots('{alias}') ORDER BY 1").fetchall()]
    snapshots = [row[0] for row in view[0]]
    # Every table that ever existed, under every name it had.
    meta = f"__ducklake_metadata_{alias}"
    tables = con.execute(
        f"SELECT DISTINCT s.schema_name, t.table_name FROM {meta}.ducklake_table t "
        f"JOIN {meta}.ducklake_schema s USING (schema_id) ORDER BY ALL").fetchall()
    for snapshot in snapshots:
        for schema, table in tables:
            name = f'{alias}."{schema}"."{table}"'
            try:
                rows = con.execute(f"SELECT * FROM {name} AT (VERSION => {snapshot})").fetchall()
                view.append((snapshot, schema, table, sorted(map(repr, rows))))
            except Exception as e:  # the table did not exist then
                view.append((snapshot, schema, table, type(e).__name__))
    return view


def import_into(root, source_dsn: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([ROCKLAKE_BIN, "import", f"postgres:{source_dsn}", str(root), *extra],
                          capture_output=True, text=True, timeout=300)


def build_with_workload(duck, attach: str) -> None:
    """Stock DuckDB runs the e2e workload on a source catalog."""
    con = duck()
    results = run_steps(con, WORKLOAD, attach)
    failed = [r for r in results if r.error and not r.name.endswith("_fails")]
    assert not failed, failed
    con.close()


def import_source(source: str, root) -> dict[str, str]:
    """`rocklake import SOURCE ROOT`, which must succeed; rows per table."""
    imported = subprocess.run([ROCKLAKE_BIN, "import", source, str(root)],
                              capture_output=True, text=True, timeout=300)
    assert imported.returncode == 0, imported.stderr
    counts = dict(line.split("\t") for line in imported.stdout.splitlines())
    assert int(counts["ducklake_snapshot"]) > 10, counts
    return counts


def assert_same_history(duck, source_attach: str, rocklake: RockLakeBackend, data):
    """DuckDB sees on RockLake what it sees on the source, at every
    snapshot; returns the connection to RockLake (alias `l`)."""
    on_source, on_rl = duck(), duck()
    on_source.execute(source_attach)
    on_rl.execute(rocklake.attach_sql("l", data))
    expected, actual = snapshot_view(on_source, "l"), snapshot_view(on_rl, "l")
    assert len(expected) > 50, expected[:3]
    assert actual == expected
    # The copy is a lake of its own: it writes on.
    on_rl.execute("CREATE TABLE l.after_import AS SELECT 1 AS x")
    assert on_rl.execute("SELECT x FROM l.after_import").fetchall() == [(1,)]
    return on_rl


@pytest.mark.rocklake
def test_a_postgres_catalog_imports_with_its_whole_history(pg_server, duck, data_dir, tmp_path):
    source = PostgresBackend(pg_server)
    data = data_dir("lake")
    build_with_workload(duck, source.attach_sql("l", data))
    rocklake = RockLakeBackend(tmp_path / "rocklake")
    import_source(f"postgres:{pg_server.dsn(source.db)}", rocklake.catalog_dir)
    rocklake.start()
    try:
        on_rl = assert_same_history(duck, source.attach_sql("l", data), rocklake, data)

        # The target must be empty: a second import into it is refused.
        again = import_into(rocklake.catalog_dir, pg_server.dsn(source.db))
        assert again.returncode != 0 and "empty target" in again.stderr, again.stderr

        # Out again, while the server runs: an empty PostgreSQL database.
        target_db = pg_server.new_database("exported")
        exported = subprocess.run([ROCKLAKE_BIN, "export", str(rocklake.catalog_dir),
                                   f"postgres:{pg_server.dsn(target_db)}"],
                                  capture_output=True, text=True, timeout=300)
        assert exported.returncode == 0, exported.stderr
        on_export = duck()
        on_export.execute(f"ATTACH 'ducklake:postgres:{pg_server.dsn(target_db)}' AS l "
                          f"(DATA_PATH '{data}/')")
        assert snapshot_view(on_export, "l") == snapshot_view(on_rl, "l")
        # ... which must be empty: a second export is refused.
        again = subprocess.run([ROCKLAKE_BIN, "export", str(rocklake.catalog_dir),
                                f"postgres:{pg_server.dsn(target_db)}"],
                               capture_output=True, text=True, timeout=300)
        assert again.returncode != 0 and "empty target" in again.stderr, again.stderr
    finally:
        rocklake.stop()


@pytest.mark.rocklake
def test_bad_sources_fail_cleanly(pg_server, tmp_path):
    root = tmp_path / "root"
    cases = [
        ("postgres:host=127.0.0.1 port=1 user=postgres dbname=x connect_timeout=3",
         "cannot connect"),
        (f"postgres:{pg_server.dsn('postgres')}", "holds no"),
        ("mysql:db=x", "unsupported source"),
        ("nothing", "metadata string"),
    ]
    for source, message in cases:
        result = subprocess.run([ROCKLAKE_BIN, "import", source, str(root)],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode != 0, source
        assert message in result.stderr, (source, result.stderr)
        databases = root / "databases"
        assert not databases.exists() or not any(databases.iterdir()), source


def sqlite_attach(path, alias: str, data) -> str:
    return f"ATTACH 'ducklake:sqlite:{path}' AS {alias} (DATA_PATH '{data}/')"


@pytest.mark.rocklake
def test_a_sqlite_catalog_imports_and_exports_with_its_whole_history(duck, data_dir, tmp_path):
    """The same workload on DuckLake's SQLite catalog (sqlite:FILE): imported,
    every snapshot equal; exported into a new SQLite file while the server
    runs, equal again; bad SQLite sources and targets fail cleanly."""
    source = tmp_path / "source.sqlite"
    data = data_dir("lake")
    build_with_workload(duck, sqlite_attach(source, "l", data))
    rocklake = RockLakeBackend(tmp_path / "rocklake")
    import_source(f"sqlite:{source}", rocklake.catalog_dir)
    rocklake.start()
    try:
        on_rl = assert_same_history(duck, sqlite_attach(source, "l", data), rocklake, data)

        target = tmp_path / "exported.sqlite"
        exported = subprocess.run([ROCKLAKE_BIN, "export", str(rocklake.catalog_dir),
                                   f"sqlite:{target}"],
                                  capture_output=True, text=True, timeout=300)
        assert exported.returncode == 0, exported.stderr
        on_export = duck()
        on_export.execute(sqlite_attach(target, "e", data))
        assert snapshot_view(on_export, "e") == snapshot_view(on_rl, "l")
        # The exported catalog takes writes from DuckDB.
        on_export.execute("INSERT INTO e.after_import VALUES (2)")
        assert on_export.execute("SELECT sum(x) FROM e.after_import").fetchall() == [(3,)]

        again = subprocess.run([ROCKLAKE_BIN, "export", str(rocklake.catalog_dir),
                                f"sqlite:{target}"], capture_output=True, text=True, timeout=300)
        assert again.returncode != 0 and "empty target" in again.stderr, again.stderr

        # An import into the root the server writes would fence the server:
        # refused while it holds the writer lease, and it goes on serving.
        refused = subprocess.run([ROCKLAKE_BIN, "import", f"sqlite:{source}",
                                  str(rocklake.catalog_dir), "--database", "second"],
                                 capture_output=True, text=True, timeout=120)
        assert refused.returncode != 0, refused.stderr
        assert "has a live writer" in refused.stderr, refused.stderr
        on_rl.execute("INSERT INTO l.after_import VALUES (3)")
    finally:
        rocklake.stop()

    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    future = tmp_path / "future.sqlite"
    with sqlite3.connect(future) as db:
        db.execute("CREATE TABLE ducklake_metadata(key VARCHAR, value VARCHAR, scope VARCHAR, "
                   "scope_id BIGINT)")
        db.execute("INSERT INTO ducklake_metadata VALUES ('version', '9.9', NULL, NULL)")
    for bad, message in [(tmp_path / "missing.sqlite", "does not exist"),
                         (empty, "holds no DuckLake catalog"),
                         (future, "spec version 9.9")]:
        result = subprocess.run([ROCKLAKE_BIN, "import", f"sqlite:{bad}", str(tmp_path / "r2")],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode != 0 and message in result.stderr, result.stderr
        databases = tmp_path / "r2" / "databases"
        assert not databases.exists() or not any(databases.iterdir())


@pytest.mark.rocklake
def test_a_duckdb_file_catalog_moves_in_through_sqlite(duck, data_dir, tmp_path):
    """A DuckDB-file catalog (ducklake:FILE) moves in through DuckDB: the
    documented script copies it into SQLite, `rocklake import` reads that;
    every snapshot equals the DuckDB file's."""
    source = DuckDBFileBackend(tmp_path / "duckdb-file")
    data = data_dir("lake")
    build_with_workload(duck, source.attach_sql("l", data))

    converted = tmp_path / "converted.sqlite"
    script = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "duckdb-catalog-to-sqlite.py"
    copied = subprocess.run([sys.executable, str(script), str(source.meta), str(converted)],
                            capture_output=True, text=True, timeout=300)
    assert copied.returncode == 0, copied.stderr
    rocklake = RockLakeBackend(tmp_path / "rocklake")
    import_source(f"sqlite:{converted}", rocklake.catalog_dir)
    rocklake.start()
    try:
        assert_same_history(duck, source.attach_sql("l", data), rocklake, data)
    finally:
        rocklake.stop()
