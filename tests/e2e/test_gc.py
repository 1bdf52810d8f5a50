"""Retention: `rocklake gc --retain-from` and `rocklake excise` on a live server.

gc moves the retention floor and deletes nothing: time travel below it fails
cleanly, current reads and writes go on, the floor survives a restart.
excise then deletes what no kept snapshot sees and schedules the removed
Parquet files, which DuckLake's own `ducklake_cleanup_old_files` deletes.
"""

from __future__ import annotations

import pathlib
import subprocess

import duckdb
import pytest

from conftest import RockLakeBackend


def rocklake_cli(server: RockLakeBackend, *args: str) -> str:
    """Runs `rocklake ARGS --dsn <server>` and returns its output."""
    done = subprocess.run([server.binary, *args, "--dsn", server.dsn()],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"rocklake {args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def parquet_files(root: pathlib.Path, table: str) -> list[pathlib.Path]:
    return sorted(p for p in root.rglob("*.parquet") if f"/{table}/" in p.as_posix())


@pytest.mark.rocklake
def test_gc_floor_then_excise_and_cleanup(duck, data_dir, tmp_path):
    server = RockLakeBackend(tmp_path / "server")
    data = data_dir("lake")
    try:
        server.start()
        con = duck()
        con.execute(server.attach_sql("l", data))
        con.execute("CREATE TABLE l.keep (id INTEGER)")
        con.execute("INSERT INTO l.keep SELECT i::INTEGER FROM range(2000) r(i)")
        old = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('l')").fetchone()[0]
        con.execute("CREATE TABLE l.gone (id INTEGER)")
        con.execute("INSERT INTO l.gone SELECT i::INTEGER FROM range(2000) r(i)")
        con.execute("INSERT INTO l.keep VALUES (-1)")
        con.execute("DROP TABLE l.gone")
        latest = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('l')").fetchone()[0]
        gone_files = parquet_files(pathlib.Path(data), "gone")
        assert gone_files, "the dropped table's Parquet file exists before excise"
        assert con.execute(f"SELECT count(*) FROM l.keep AT (VERSION => {old})").fetchone() == (2000,)

        out = rocklake_cli(server, "gc", "--retain-from", str(latest))
        floor_line = [line.split() for line in out.splitlines() if line.startswith("retain_from")]
        assert floor_line == [["retain_from", str(latest)]], out

        # A fresh client: time travel below the floor fails with a clear error.
        reader = duck()
        reader.execute(server.attach_sql("l", data))
        with pytest.raises(duckdb.Error) as refused:
            reader.execute(f"SELECT count(*) FROM l.keep AT (VERSION => {old})").fetchall()
        assert "retention floor" in str(refused.value), refused.value
        snapshots = reader.execute("SELECT snapshot_id FROM ducklake_snapshots('l')").fetchall()
        assert snapshots == [(latest,)], snapshots
        assert reader.execute("SELECT count(*) FROM l.keep").fetchone() == (2001,)
        assert reader.execute(
            f"SELECT count(*) FROM l.keep AT (VERSION => {latest})").fetchone() == (2001,)
        # gc deleted nothing.
        assert all(p.exists() for p in gone_files)

        # Writes go on; the floor survives a restart.
        reader.execute("INSERT INTO l.keep VALUES (-2)")
        server.stop()
        server.start()
        after = duck()
        after.execute(server.attach_sql("l", data))
        assert after.execute("SELECT count(*) FROM l.keep").fetchone() == (2002,)
        with pytest.raises(duckdb.Error) as still:
            after.execute(f"SELECT count(*) FROM l.keep AT (VERSION => {old})").fetchall()
        assert "retention floor" in str(still.value), still.value

        # excise deletes the given-up rows and schedules the dropped table's file.
        report = rocklake_cli(server, "excise")
        assert "rows removed from ducklake_snapshot " in report, report
        assert "rows removed from ducklake_data_file" in report, report
        assert "files scheduled for deletion" in report, report
        log = server.log_path.read_text(errors="replace")
        assert "excision committed" in log, log
        assert all(p.exists() for p in gone_files), "excise itself deletes no data file"
        assert after.execute("SELECT count(*) FROM l.keep").fetchone() == (2002,)

        # DuckLake's own cleanup finds the scheduled files where they are.
        cleaner = duck()
        cleaner.execute(server.attach_sql("l", data))
        cleaner.execute("CALL ducklake_cleanup_old_files('l', cleanup_all => true)")
        assert not any(p.exists() for p in gone_files), gone_files
        assert parquet_files(pathlib.Path(data), "keep"), "the kept table's files stay"
        assert cleaner.execute("SELECT count(*), min(id) FROM l.keep").fetchone() == (2002, -2)
    finally:
        server.stop()
