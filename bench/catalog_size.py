#!/usr/bin/env python3
"""Large-catalog benchmark: RockLake and a durable PostgreSQL 15 with many
tables and a long history, side by side in one run.

    .venv/bin/python bench/catalog_size.py [--tables 5000] [--snapshots 80000]
                                           [--alter-every 40] [--reps 5]

1. TABLES tables (4 columns, 100 per transaction) are created by DuckDB on a
   fresh catalog of each backend: the time it takes.
2. On those catalogs: one CREATE TABLE commit, a fresh DuckDB's ATTACH,
   SHOW ALL TABLES, the first query of a table, information_schema.tables
   (median of REPS, a fresh DuckDB each), and the servers' memory.
3. History: DuckDB adds commits on the PostgreSQL catalog until it holds
   SNAPSHOTS snapshots: 1-row inserts spread over the tables, every
   ALTER_EVERY-th commit an ADD COLUMN or DROP COLUMN (superseded column
   versions, as in long-lived lakes). `rocklake import` copies that catalog
   into a new RockLake lake, so both serve the same history; step 2 runs again.
Timings are reported, never asserted. RockLake is the release binary.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run as bench  # noqa: E402


def create_tables(duck, cat, tables: int) -> float:
    con = duck.connect()
    con.execute(cat.attach_sql())
    start = time.perf_counter()
    for first in range(0, tables, 100):
        con.execute("BEGIN")
        for i in range(first, min(first + 100, tables)):
            con.execute(f"CREATE TABLE l.t{i} (id BIGINT, name VARCHAR, v DOUBLE, d DATE)")
        con.execute("COMMIT")
    took = time.perf_counter() - start
    con.close()
    return took


def add_history(duck, cat, tables: int, snapshots: int, alter_every: int):
    """Commits until the catalog holds SNAPSHOTS snapshots."""
    con = duck.connect()
    con.execute(cat.attach_sql())
    have = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('l')").fetchone()[0]
    added = {}
    n = have
    last_log = time.monotonic()
    while n < snapshots:
        n += 1
        table = (n * 7919) % tables
        if n % alter_every == 0:
            if table in added:
                con.execute(f"ALTER TABLE l.t{table} DROP COLUMN {added.pop(table)}")
            else:
                added[table] = f"c{n}"
                con.execute(f"ALTER TABLE l.t{table} ADD COLUMN c{n} INTEGER")
        else:
            con.execute(f"INSERT INTO l.t{table} (id, name, v, d) VALUES ({n}, 'r{n}', {n}.5, DATE '2024-01-01')")
        if time.monotonic() - last_log > 60:
            bench.log(f"history: {n} / {snapshots} snapshots")
            last_log = time.monotonic()
    con.close()


def measure(duck, cat, tables: int, reps: int, label: str) -> dict:
    """Median ms of each step (a fresh DuckDB per rep) and one CREATE TABLE commit."""
    steps = {"attach": [], "show": [], "first": [], "info": [], "create": []}
    for rep in range(reps):
        con = duck.connect()
        t0 = time.perf_counter()
        con.execute(cat.attach_sql())
        t1 = time.perf_counter()
        con.execute("SHOW ALL TABLES").fetchall()
        t2 = time.perf_counter()
        con.execute(f"SELECT count(*) FROM l.t{(rep * 31) % tables}").fetchall()
        t3 = time.perf_counter()
        con.execute("SELECT count(*) FROM information_schema.tables").fetchall()
        t4 = time.perf_counter()
        con.execute(f"CREATE TABLE l.{label}_{rep} (id BIGINT)")
        t5 = time.perf_counter()
        con.close()
        for key, took in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            steps[key].append(took)
    return {k: bench.ms(statistics.median(v)) for k, v in steps.items()}


def imported_rocklake(rocklake: bench.RockLake, pg: bench.Postgres, pg_cat) -> bench.Catalog:
    """A RockLake server on a lake imported from the PostgreSQL catalog."""
    db = pg_cat.attach_target.split("dbname=")[1]
    root = rocklake.workdir / "imported"
    (root / "data").mkdir(parents=True)
    source = f"postgres:host=127.0.0.1 port={pg.port} user=postgres dbname={db}"
    start = time.perf_counter()
    subprocess.run([str(rocklake.binary), "import", source, str(root / "catalog")], check=True,
                   capture_output=True)
    bench.log(f"rocklake import took {time.perf_counter() - start:.1f} s")
    port = bench.free_port()
    proc = subprocess.Popen([str(rocklake.binary), "serve", str(root / "catalog"), "--listen",
                             f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=root, start_new_session=True)
    rocklake.procs.append(proc)
    if not bench.wait_for_port(port, 60, proc):
        raise RuntimeError("rocklake did not start on the imported lake")
    # DuckDB's data files stay where DuckDB wrote them for PostgreSQL.
    return bench.Catalog(rocklake, f"ducklake:postgres:host=127.0.0.1 port={port} dbname=lake",
                         pg_cat.data_path, lambda: bench.stop_process(proc))


def print_table(title: str, rl: dict, pg: dict):
    names = {"attach": "fresh ATTACH", "show": "SHOW ALL TABLES", "first": "first query of a table",
             "info": "information_schema.tables", "create": "CREATE TABLE commit"}
    print(f"\n| {title} | RockLake ms | PostgreSQL ms | ratio |")
    print("|---|---|---|---|")
    for key, name in names.items():
        print(f"| {name} | {rl[key]:.1f} | {pg[key]:.1f} | {rl[key] / pg[key]:.2f} |")
    print(f"| server memory (RSS, MiB) | {rl['rss']:.0f} | {pg['rss']:.0f} | - |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=5000)
    ap.add_argument("--snapshots", type=int, default=80000)
    ap.add_argument("--alter-every", type=int, default=40)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    _, duck, (rocklake, pg) = bench.rocklake_and_postgres("rocklake-catsize-")
    print(f"# {bench.machine_info()}")
    print(f"# git {bench.git_rev()}; DuckDB {duck.version}; {args.tables} tables, "
          f"{args.snapshots} snapshots, ALTER every {args.alter_every}; median of {args.reps}")
    try:
        cats, created, fresh = {}, {}, {}
        for backend in (rocklake, pg):
            cats[backend.name] = backend.new_catalog("tables")
            created[backend.name] = create_tables(duck, cats[backend.name], args.tables)
            bench.log(f"{backend.name}: {args.tables} tables in {created[backend.name]:.1f} s")
            fresh[backend.name] = measure(duck, cats[backend.name], args.tables, args.reps, "a")
            fresh[backend.name]["rss"] = bench.rss_mib(bench.server_pids(backend))
        print(f"\n| creating {args.tables} tables, 100 per commit | RockLake s | PostgreSQL s | ratio |")
        print("|---|---|---|---|")
        print(f"| total | {created['rocklake']:.1f} | {created['postgres']:.1f} | "
              f"{created['rocklake'] / created['postgres']:.2f} |")
        print_table(f"{args.tables} tables, few snapshots", fresh["rocklake"], fresh["postgres"])
        sys.stdout.flush()
        cats["rocklake"].close()
        start = time.perf_counter()
        add_history(duck, cats["postgres"], args.tables, args.snapshots, args.alter_every)
        bench.log(f"history built on PostgreSQL in {time.perf_counter() - start:.0f} s")
        imported = imported_rocklake(rocklake, pg, cats["postgres"])
        old = {}
        for name, cat in (("rocklake", imported), ("postgres", cats["postgres"])):
            old[name] = measure(duck, cat, args.tables, args.reps, "b")
            old[name]["rss"] = bench.rss_mib(bench.server_pids(rocklake if name == "rocklake" else pg))
        print_table(f"{args.tables} tables, {args.snapshots} snapshots", old["rocklake"], old["postgres"])
    finally:
        rocklake.stop()
        pg.stop()


if __name__ == "__main__":
    main()
