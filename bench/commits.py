#!/usr/bin/env python3
"""Commit benchmark: DuckDB writers committing 1-row INSERTs, side by side on
RockLake and on a durable PostgreSQL 15, in one run.

    .venv/bin/python bench/commits.py [--seconds 20] [--writers 4] [--lone 200]
                                      [--rounds 2]

For each backend, on a fresh catalog:
  lone      one writer, LONE autocommit 1-row INSERTs: median and p95 latency;
  parallel  WRITERS writers (a DuckDB instance each, DuckLake's default retry
            settings) inserting 1-row autocommits into one shared table for
            SECONDS: commits/s in all, commits that failed after DuckLake's
            retries, median and p95 latency of the commits that succeeded.
For RockLake it also counts the WAL objects the catalog wrote per commit: 1.0
means every commit made its own durable write; below 1, concurrent commits
shared writes (group commit). ROUNDS repeats the parallel phase (fresh
catalogs) and prints every round. Timings are reported, never asserted.
RockLake is the release binary (target/release/rocklake, or ROCKLAKE_BIN).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (the shared helpers of bench/run.py)


def wal_objects(cat: bench.Catalog) -> int | None:
    """WAL objects of a RockLake catalog (None for other backends)."""
    if not isinstance(cat.backend, bench.RockLake):
        return None
    wal = cat.data_path.parent / "catalog" / "databases" / "lake" / "catalog" / "wal"
    return sum(1 for _ in wal.glob("*.sst")) if wal.is_dir() else 0


def lone_writer(duck: bench.Duck, cat: bench.Catalog, count: int) -> list[float]:
    con = duck.connect()
    con.execute(cat.attach_sql())
    con.execute("CREATE TABLE l.t (writer INTEGER, n INTEGER)")
    samples = []
    for n in range(count):
        start = time.perf_counter()
        con.execute(f"INSERT INTO l.t VALUES (0, {n})")
        samples.append(time.perf_counter() - start)
    con.close()
    return samples


def parallel_writers(duck: bench.Duck, cat: bench.Catalog, writers: int, seconds: float):
    setup = duck.connect()
    setup.execute(cat.attach_sql())
    setup.execute("CREATE TABLE l.t (writer INTEGER, n INTEGER)")
    setup.close()
    latencies: list[list[float]] = [[] for _ in range(writers)]
    failures = [0] * writers
    start_line = threading.Barrier(writers + 1)
    stop_at = [0.0]

    def work(who: int):
        con = duck.connect()
        con.execute(cat.attach_sql())
        start_line.wait()
        n = 0
        while time.monotonic() < stop_at[0]:
            n += 1
            start = time.perf_counter()
            try:
                con.execute(f"INSERT INTO l.t VALUES ({who}, {n})")
                latencies[who].append(time.perf_counter() - start)
            except Exception:  # a commit DuckLake gave up on after its retries
                failures[who] += 1
        con.close()

    threads = [threading.Thread(target=work, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    wal_before = wal_objects(cat)
    stop_at[0] = time.monotonic() + seconds
    start_line.wait()
    began = time.monotonic()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - began
    wal_after = wal_objects(cat)
    commits = sum(len(x) for x in latencies)
    all_latencies = [x for per in latencies for x in per]
    check = duck.connect()
    check.execute(cat.attach_sql())
    rows = check.execute("SELECT count(*) FROM l.t").fetchone()[0]
    check.close()
    assert rows == commits, f"{rows} rows for {commits} acknowledged commits"
    wal_per_commit = None
    if wal_before is not None and commits:
        wal_per_commit = (wal_after - wal_before) / commits
    return {
        "commits_per_s": commits / elapsed,
        "commits": commits,
        "failed": sum(failures),
        "p50_ms": bench.ms(statistics.median(all_latencies)) if all_latencies else float("nan"),
        "p95_ms": bench.ms(bench.percentile(all_latencies, 95)) if all_latencies else float("nan"),
        "wal_per_commit": wal_per_commit,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--lone", type=int, default=200, help="inserts of the lone writer")
    ap.add_argument("--rounds", type=int, default=2, help="parallel rounds per backend")
    args = ap.parse_args()
    binary = pathlib.Path(os.environ.get("ROCKLAKE_BIN", bench.REPO_ROOT / "target" / "release" / "rocklake"))
    if not binary.is_file():
        sys.exit(f"{binary} missing: cargo build --release -p rocklake")
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="rocklake-commits-"))
    duck = bench.Duck(workdir, want_sqlite=False, may_install=False)
    backends = [bench.RockLake(workdir, binary, duck), bench.Postgres(workdir, duck, durable=True)]
    print(f"# {bench.machine_info()}")
    print(f"# git {bench.git_rev()}; DuckDB {duck.version}; {args.writers} writers, "
          f"{args.seconds:.0f} s per round, lone writer {args.lone} inserts")
    for backend in backends:
        print(f"# {backend.name}: {backend.describe()}")
    results = {}
    try:
        for backend in backends:
            cat = backend.new_catalog("lone")
            samples = lone_writer(duck, cat, args.lone)
            cat.close()
            results[(backend.name, "lone")] = (
                bench.ms(statistics.median(samples)), bench.ms(bench.percentile(samples, 95)))
        for round_no in range(args.rounds):
            for backend in backends:
                cat = backend.new_catalog(f"parallel{round_no}")
                results[(backend.name, round_no)] = parallel_writers(
                    duck, cat, args.writers, args.seconds)
                cat.close()
    finally:
        for backend in backends:
            backend.stop()
    rl, pg = results[("rocklake", "lone")], results[("postgres", "lone")]
    print("\n| lone writer, 1-row INSERT | RockLake | PostgreSQL | ratio |")
    print("|---|---|---|---|")
    print(f"| median ms | {rl[0]:.1f} | {pg[0]:.1f} | {rl[0] / pg[0]:.2f} |")
    print(f"| p95 ms | {rl[1]:.1f} | {pg[1]:.1f} | {rl[1] / pg[1]:.2f} |")
    print(f"\n| {args.writers} writers, round | RockLake commits/s | PostgreSQL commits/s | "
          "ratio | failed (RL / PG) | p50 ms (RL / PG) | p95 ms (RL / PG) | RL WAL objects per commit |")
    print("|---|---|---|---|---|---|---|---|")
    for round_no in range(args.rounds):
        r, p = results[("rocklake", round_no)], results[("postgres", round_no)]
        print(f"| {round_no + 1} | {r['commits_per_s']:.1f} | {p['commits_per_s']:.1f} | "
              f"{r['commits_per_s'] / p['commits_per_s']:.2f} | {r['failed']} / {p['failed']} | "
              f"{r['p50_ms']:.1f} / {p['p50_ms']:.1f} | {r['p95_ms']:.1f} / {p['p95_ms']:.1f} | "
              f"{r['wal_per_commit']:.2f} |")


if __name__ == "__main__":
    main()
