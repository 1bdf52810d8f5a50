#!/usr/bin/env python3
"""Whole-table metadata reads: DuckDB 2.0's kind of catalog traffic, RockLake
against a durable PostgreSQL 15 in one run (goal 4 of #38).

    .venv/bin/python bench/scans.py [--files 10000] [--stats-rows 1000000]
                                    [--reps 10] [--baseline-bin OLD_BINARY]

DuckDB 2.0's DuckLake turns the postgres scanner's filter pushdown off on its
metadata connection, so its catalog reads arrive as whole-table
`COPY (SELECT ...) TO STDOUT (FORMAT binary)` scans. DuckDB 1.5.5 does the
same with `SET pg_experimental_filter_pushdown = false`, which this script
sets. Per backend, on fresh catalogs:

  files    a table of FILES Parquet files of 10 rows with disjoint id ranges
           (as workload 4 of bench/run.py); timed: a fresh DuckDB's ATTACH
           plus the selective query `... WHERE id BETWEEN x AND x+9` that
           min/max pruning answers from one file (REPS times, fresh each);
  copy     STATS_ROWS rows put into `ducklake_file_column_stats` with
           INSERT ... SELECT FROM generate_series on the server; timed: the
           whole-table binary COPY DuckDB sends for that table, run by psql
           to /dev/null (REPS times after one warm-up): rows/s and MB/s;
           then REPS times a commit that adds one row followed by the same
           COPY (the first read of changed rows: RockLake cannot answer it
           from the COPY it kept encoded).

Timings are reported, never asserted. RockLake is the release binary
(target/release/rocklake, or ROCKLAKE_BIN).
"""

from __future__ import annotations

import argparse
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (the shared helpers of bench/run.py)

NO_PUSHDOWN = "SET pg_experimental_filter_pushdown = false"
# Statistics rows per INSERT while filling the table.
CHUNK = 200_000

# DuckLake's read of the column statistics: DuckDB sends it as
# COPY (STATS_SELECT) TO STDOUT (FORMAT binary) (bench/trace.py).
STATS_SELECT = (
    'SELECT "data_file_id", "table_id", "column_id", "column_size_bytes", '
    '"value_count", "null_count", "min_value", "max_value", "contains_nan" '
    'FROM "public"."ducklake_file_column_stats"'
)


def conninfo(cat: bench.Catalog) -> str:
    info = cat.attach_target.split("postgres:", 1)[1]
    return info if "user=" in info else info + " user=postgres"


def psql(cat: bench.Catalog, script: str) -> str:
    res = subprocess.run([str(bench.psql_binary()), conninfo(cat), "-v", "ON_ERROR_STOP=1", "-X", "-q"],
                         input=script, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"psql failed: {res.stderr}")
    return res.stdout


def fresh_attach_and_query(duck: bench.Duck, cat: bench.Catalog, files: int) -> float:
    """Seconds for a fresh DuckDB's ATTACH plus the selective query."""
    con = duck.connect()
    con.execute(NO_PUSHDOWN)
    mid = (files // 2) * 10
    start = time.perf_counter()
    con.execute(cat.attach_sql())
    got = con.execute(f"SELECT count(*), sum(v) FROM l.f WHERE id BETWEEN {mid} AND {mid + 9}").fetchone()
    elapsed = time.perf_counter() - start
    con.close()
    if got[0] != 10:
        raise RuntimeError(f"{cat.backend.name}: the selective query returned {got}")
    return elapsed


def fill_stats(duck: bench.Duck, cat: bench.Catalog, rows: int) -> float:
    """Creates the DuckLake catalog and puts `rows` statistics rows into it;
    seconds the server took for the INSERT."""
    con = duck.connect()
    con.execute(cat.attach_sql())
    con.execute("CREATE TABLE l.s (id BIGINT)")
    con.close()
    # In transactions of at most 200,000 rows: RockLake holds a transaction's
    # writes in memory, under --statement-memory-limit.
    script = "".join(
        "INSERT INTO ducklake_file_column_stats (data_file_id, table_id, column_id, "
        "column_size_bytes, value_count, null_count, min_value, max_value, contains_nan) "
        "SELECT g / 4, 1, g % 4, 1000 + g % 97, 10, 0, (g * 7)::text, (g * 7 + 9)::text, false "
        f"FROM generate_series({first}, {min(rows, first + CHUNK - 1)}) g;\n"
        for first in range(1, rows + 1, CHUNK))
    start = time.perf_counter()
    psql(cat, script)
    return time.perf_counter() - start


def copy_times(cat: bench.Catalog, reps: int) -> tuple[list[float], int]:
    """psql's \\timing of the statistics COPY (ms, after a warm-up) and its bytes."""
    with tempfile.NamedTemporaryFile(suffix=".bin") as out:
        psql(cat, f"\\copy ({STATS_SELECT}) TO '{out.name}' (FORMAT binary)\n")
        size = pathlib.Path(out.name).stat().st_size
    script = "\\timing on\n" + "".join(
        f"\\copy ({STATS_SELECT}) TO '/dev/null' (FORMAT binary)\n" for _ in range(reps + 1))
    times = [float(m) for m in re.findall(r"^Time: ([0-9.]+) ms", psql(cat, script), re.M)]
    return times[1:], size


def copy_after_commit_times(cat: bench.Catalog, reps: int) -> list[float]:
    """psql's \\timing of the statistics COPY right after a commit that
    added one statistics row (ms): the first read of changed rows, which
    nothing kept can answer."""
    steps = "".join(
        "INSERT INTO ducklake_file_column_stats (data_file_id, table_id, column_id, column_size_bytes, "
        f"value_count, null_count, min_value, max_value, contains_nan) VALUES ({10_000_000 + i}, 1, 0, "
        "1, 1, 0, '1', '2', false);\n"
        f"\\copy ({STATS_SELECT}) TO '/dev/null' (FORMAT binary)\n"
        for i in range(reps))
    times = [float(m) for m in re.findall(r"^Time: ([0-9.]+) ms", psql(cat, "\\timing on\n" + steps), re.M)]
    return times[1::2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--stats-rows", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--settle", type=float, default=30,
                    help="seconds to wait after filling before timing: RockLake's SlateDB compacts "
                         "the freshly written tables for about 20-30 s, on the core a COPY would use")
    ap.add_argument("--baseline-bin", help="an older rocklake release binary, run as backend 'baseline'")
    args = ap.parse_args()
    workdir, duck, backends = bench.rocklake_and_postgres("rocklake-scans-", args.baseline_bin)
    print(f"# {bench.machine_info()}")
    print(f"# git {bench.git_rev()}; DuckDB {duck.version}; {args.files} files, "
          f"{args.stats_rows} statistics rows, {args.reps} repetitions; {NO_PUSHDOWN}")
    for backend in backends:
        print(f"# {backend.name}: {backend.describe()}")
    results = {}
    try:
        for backend in backends:
            cat = backend.new_catalog("files")
            _, build_s = bench.build_many_files(backend, cat, args.files, 1_000)
            bench.log(f"{backend.name}: {args.files} files written in {build_s:.0f} s")
            fresh_attach_and_query(duck, cat, args.files)  # warm the server's caches
            results[(backend.name, "files")] = [
                fresh_attach_and_query(duck, cat, args.files) * 1000 for _ in range(args.reps)]
            cat.close()
            cat = backend.new_catalog("stats")
            fill_s = fill_stats(duck, cat, args.stats_rows)
            bench.log(f"{backend.name}: {args.stats_rows} statistics rows inserted in {fill_s:.1f} s")
            time.sleep(args.settle)
            times, size = copy_times(cat, args.reps)
            results[(backend.name, "copy")] = (times, size, fill_s)
            results[(backend.name, "copy after commit")] = copy_after_commit_times(cat, args.reps)
            cat.close()
    finally:
        for backend in backends:
            backend.stop()
    names = [b.name for b in backends]
    print("\n| what | " + " | ".join(names) + " | RockLake / PostgreSQL |")
    print("|---|" + "---|" * (len(names) + 1))
    med = {n: statistics.median(results[(n, "files")]) for n in names}
    print(f"| fresh ATTACH + selective query, {args.files} files, median ms | "
          + " | ".join(f"{med[n]:.1f}" for n in names) + f" | {med['rocklake'] / med['postgres']:.2f} |")
    p95 = {n: bench.percentile(results[(n, "files")], 95) for n in names}
    print("| same, p95 ms | " + " | ".join(f"{p95[n]:.1f}" for n in names)
          + f" | {p95['rocklake'] / p95['postgres']:.2f} |")
    copy_ms = {n: statistics.median(results[(n, "copy")][0]) for n in names}
    rows_s = {n: args.stats_rows / (copy_ms[n] / 1000) for n in names}
    print(f"| binary COPY of ducklake_file_column_stats, {args.stats_rows} rows, median ms | "
          + " | ".join(f"{copy_ms[n]:.0f}" for n in names) + f" | {copy_ms['rocklake'] / copy_ms['postgres']:.2f} |")
    print("| same, rows/s (higher is better) | " + " | ".join(f"{rows_s[n]:,.0f}" for n in names)
          + f" | {rows_s['rocklake'] / rows_s['postgres']:.2f} |")
    after = {n: statistics.median(results[(n, "copy after commit")]) for n in names}
    print("| same, first COPY after a commit that added a row, median ms | "
          + " | ".join(f"{after[n]:.0f}" for n in names) + f" | {after['rocklake'] / after['postgres']:.2f} |")
    print("| same, MB/s | " + " | ".join(
        f"{results[(n, 'copy')][1] / 1e6 / (copy_ms[n] / 1000):.0f}" for n in names) + " | |")
    print("| INSERT of the statistics rows, s (setup, not a goal) | "
          + " | ".join(f"{results[(n, 'copy')][2]:.1f}" for n in names) + " | |")


if __name__ == "__main__":
    main()
