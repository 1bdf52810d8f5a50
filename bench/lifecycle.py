#!/usr/bin/env python3
"""Speed of moving a large catalog in and out, and of backups and clones.

Builds a DuckLake catalog with stock DuckDB on a real PostgreSQL 15, then
grows it with plain SQL to N snapshots and N data files (the shape of a lake
that committed N times), and times, with the release `rocklake` binary:

- `rocklake import postgres:...` and `rocklake export ... postgres:...`;
- `rocklake export ... sqlite:FILE` and `rocklake import sqlite:FILE`;
- `rocklake backup` of the imported root, and its size;
- `rocklake checkpoint create` + `rocklake clone`, and the clone's size
  right after cloning (what it adds to the parent's storage).

Usage: bench/lifecycle.py [--rows 10000] [--bin target/release/rocklake]
(run `cargo build --release -p rocklake` and scripts/setup-python.sh first).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "e2e"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def size_of(path: pathlib.Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def timed(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    took = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stderr}")
    return took, result.stdout


def rows_of(stdout: str) -> int:
    return sum(int(line.split("\t")[1]) for line in stdout.splitlines() if "\t" in line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000, help="snapshots and data files")
    parser.add_argument("--bin", default=str(REPO / "target" / "release" / "rocklake"))
    args = parser.parse_args()
    import psycopg
    from conftest import duckdb_connect

    work = pathlib.Path(tempfile.mkdtemp(prefix="rocklake-lifecycle-"))
    work.chmod(0o755)  # PostgreSQL runs as its own user
    pg_dir, pg_port = work / "pg", free_port()
    env = dict(os.environ, PG_CREATE_DBS="source target")
    subprocess.run([str(REPO / "scripts" / "start-postgres.sh"), str(pg_dir), str(pg_port)],
                   check=True, env=env, capture_output=True)
    dsn = lambda db: f"host=127.0.0.1 port={pg_port} user=postgres dbname={db}"  # noqa: E731
    server = None
    try:
        con = duckdb_connect()
        con.execute(f"ATTACH 'ducklake:postgres:{dsn('source')}' AS l (DATA_PATH '{work}/data/')")
        con.execute("CREATE TABLE l.t(a INT)")
        con.execute("INSERT INTO l.t SELECT range FROM range(10)")
        con.close()
        n = args.rows
        with psycopg.connect(dsn("source"), autocommit=True) as pg:
            first = pg.execute("SELECT max(snapshot_id) + 1 FROM ducklake_snapshot").fetchone()[0]
            pg.execute(
                "INSERT INTO ducklake_snapshot SELECT s, now(), 1, 2, s FROM "
                "generate_series(%s::bigint, %s::bigint) s", (first, first + n - 1))
            pg.execute(
                "INSERT INTO ducklake_snapshot_changes SELECT s, 'inserted_into_table:1', "
                "NULL, NULL, NULL FROM generate_series(%s::bigint, %s::bigint) s", (first, first + n - 1))
            pg.execute(
                "INSERT INTO ducklake_data_file (data_file_id, table_id, begin_snapshot, "
                "path, path_is_relative, file_format, record_count, file_size_bytes, "
                "footer_size, row_id_start) SELECT 1000 + s, 1, s, 'f' || s || '.parquet', "
                "true, 'parquet', 1, 400, 200, s FROM generate_series(%s::bigint, %s::bigint) s",
                (first, first + n - 1))
        root = work / "root"
        took, out = timed([args.bin, "import", f"postgres:{dsn('source')}", str(root)])
        rows = rows_of(out)
        print(f"catalog: {n} snapshots + {n} data files = {rows} rows")
        print(f"import from PostgreSQL: {took:.2f} s ({rows / took:,.0f} rows/s)")
        took, _ = timed([args.bin, "export", str(root), f"postgres:{dsn('target')}"])
        print(f"export to PostgreSQL:   {took:.2f} s ({rows / took:,.0f} rows/s)")
        sqlite = work / "catalog.sqlite"
        took, _ = timed([args.bin, "export", str(root), f"sqlite:{sqlite}"])
        print(f"export to SQLite:       {took:.2f} s ({rows / took:,.0f} rows/s)")
        took, _ = timed([args.bin, "import", f"sqlite:{sqlite}", str(work / "root2")])
        print(f"import from SQLite:     {took:.2f} s ({rows / took:,.0f} rows/s)")

        took, _ = timed([args.bin, "backup", str(root), str(work / "backup")])
        print(f"backup (latest state):  {took:.2f} s; {size_of(work / 'backup') / 1e6:.2f} MB "
              f"(source root {size_of(root) / 1e6:.2f} MB)")
        port = free_port()
        server = subprocess.Popen([args.bin, "serve", str(root), "--listen", f"127.0.0.1:{port}"],
                                  stderr=subprocess.DEVNULL)
        time.sleep(1.5)
        server_dsn = f"host=127.0.0.1 port={port} user=bench dbname=lake"
        timed([args.bin, "checkpoint", "create", "bench", "--dsn", server_dsn])
        took, _ = timed([args.bin, "backup", str(root), str(work / "backup2"),
                         "--checkpoint", "bench"])
        print(f"backup (checkpoint, server running): {took:.2f} s")
        took, _ = timed([args.bin, "clone", str(root), str(work / "clone"), "--checkpoint",
                         "bench", "--data-path", str(work / "clone-data")])
        print(f"clone: {took:.2f} s; {size_of(work / 'clone') / 1e3:.1f} kB right after cloning "
              f"(parent {size_of(root) / 1e6:.2f} MB)")
        catalog = work / "clone" / "databases" / "lake" / "catalog"
        parts = {d.name: size_of(d) for d in catalog.iterdir() if d.is_dir()}
        print("  of which: " + ", ".join(f"{k} {v / 1e3:.1f} kB" for k, v in sorted(parts.items()))
              + " (the WAL holds the clone's one commit that gives its files absolute paths)")
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        subprocess.run([str(REPO / "scripts" / "stop-postgres.sh"), str(pg_dir)],
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
