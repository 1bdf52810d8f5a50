#!/usr/bin/env python3
"""Commit benchmark: DuckDB writers committing to RockLake and to a durable
PostgreSQL 15 (fsync=on, synchronous_commit=on), side by side in one run.

    .venv/bin/python bench/commits.py [--writers 1,4,8,16] [--seconds 20]
                                      [--lone 200] [--parquet 50] [--rounds 1]
                                      [--threads N] [--baseline-bin OLD_BINARY]

For each backend, on fresh catalogs:
  lone      one writer: LONE 1-row autocommit INSERTs (inlined in the
            catalog) and PARQUET autocommit INSERTs of 1,000 rows (a Parquet
            file each): median and p95 latency, the CPU the server and
            DuckDB spent per 1-row commit, and the server's context switches
            per 1-row commit (voluntary ones, by thread: its hand-offs);
  writers   for each count in WRITERS, that many writer processes (a DuckDB
            instance each, DuckLake's default retry settings, DuckDB's
            `threads` setting N when given) commit 1-row
            INSERTs for SECONDS, into one shared table and then into one table
            each: commits/s in all, commits DuckLake gave up on after its
            retries, the fewest commits any one writer made (every writer must
            make progress), p50 and p99 latency of acknowledged commits.
For RockLake it also counts the WAL objects the catalog wrote per commit: 1.0
means every commit made its own durable write; below 1, concurrent commits
shared writes (group commit). With --baseline-bin, an older release binary
runs every step too (backend "baseline", after RockLake), for goal 5 of #38:
nothing slower than the release before. Every round checks that the tables hold exactly
the acknowledged rows. Timings are reported, never asserted. RockLake is the
release binary (target/release/rocklake, or ROCKLAKE_BIN).
"""

from __future__ import annotations

import argparse
import pathlib
import resource
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (the shared helpers of bench/run.py)
import writers as writer_procs  # noqa: E402


def wal_objects(cat: bench.Catalog) -> int | None:
    """WAL objects of a RockLake catalog (None for other backends)."""
    if not isinstance(cat.backend, bench.RockLake):
        return None
    wal = cat.data_path.parent / "catalog" / "databases" / "lake" / "catalog" / "wal"
    return sum(1 for _ in wal.glob("*.sst")) if wal.is_dir() else 0


def client_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def lone_writer(duck: bench.Duck, cat: bench.Catalog, inserts: int, parquet: int,
                threads: int | None):
    """Latencies (s) of INSERTS 1-row commits and PARQUET 1,000-row commits,
    the server's and DuckDB's CPU ms per 1-row commit, and the server's
    voluntary and involuntary context switches per 1-row commit."""
    con = duck.connect()
    if threads:
        con.execute(f"SET threads = {threads}")
    con.execute(cat.attach_sql())
    con.execute("CREATE TABLE l.t (writer INTEGER, n INTEGER)")
    con.execute("CREATE TABLE l.p (writer INTEGER, n INTEGER)")
    con.execute("INSERT INTO l.t VALUES (0, -1)")  # the pooled connection is up
    one_row, files = [], []
    pids = bench.server_pids(cat.backend)
    server_before, client_before = bench.cpu_seconds(pids), client_cpu()
    switches_before = bench.context_switches(pids)
    for n in range(inserts):
        start = time.perf_counter()
        con.execute(f"INSERT INTO l.t VALUES (0, {n})")
        one_row.append(time.perf_counter() - start)
    cpu = (bench.ms((bench.cpu_seconds(pids) - server_before) / inserts),
           bench.ms((client_cpu() - client_before) / inserts))
    switches_after = bench.context_switches(pids)
    voluntary, involuntary = bench.switches_between(switches_before, switches_after)
    by_thread = bench.switches_by_thread(switches_before, switches_after, bench.thread_names(pids))
    cpu = cpu + (voluntary / inserts, involuntary / inserts,
                 {name: count / inserts for name, count in by_thread.items() if count})
    for n in range(parquet):
        start = time.perf_counter()
        con.execute(f"INSERT INTO l.p SELECT 0, i FROM range({n * 1000}, {(n + 1) * 1000}) r(i)")
        files.append(time.perf_counter() - start)
    assert con.execute("SELECT count(*) FROM l.p").fetchone()[0] == parquet * 1000
    con.close()
    return one_row, files, cpu


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


def print_lone(results):
    base = ("baseline", "cpu") in results
    extra = " RockLake before | now / before |" if base else ""
    print(f"\n| lone writer | RockLake | PostgreSQL | ratio |{extra}")
    print("|---|---|---|---|" + ("---|---|" if base else ""))

    def row(label, rl, pg, old, digits):
        line = f"| {label} | {rl:.{digits}f} | {pg:.{digits}f} | {ratio(rl, pg)} |"
        if base:
            line += f" {old:.{digits}f} | {ratio(rl, old)} |"
        print(line)

    def get(name, key):
        return results.get((name, key)) or (0.0,) * 5

    for kind, label in (("one_row", "1-row INSERT"), ("parquet", "1,000-row INSERT (Parquet file)")):
        rl, pg, old = get("rocklake", kind), get("postgres", kind), get("baseline", kind)
        for i, stat in enumerate(("median", "p95")):
            row(f"{label}, {stat} ms", rl[i], pg[i], old[i], 1)
    rl, pg, old = get("rocklake", "cpu"), get("postgres", "cpu"), get("baseline", "cpu")
    for i, whose in enumerate(("server", "DuckDB (client)")):
        row(f"1-row INSERT, {whose} CPU ms per commit", rl[i], pg[i], old[i], 2)
    for i, kind in ((2, "voluntary"), (3, "involuntary")):
        row(f"1-row INSERT, server {kind} context switches per commit", rl[i], pg[i], old[i], 1)
    named = [("RockLake", rl[4]), ("PostgreSQL", pg[4])] + ([("RockLake before", old[4])] if base else [])
    for name, per in named:
        top = sorted(per.items(), key=lambda item: -item[1])[:6]
        print(f"\n{name} voluntary switches per commit by thread: "
              + ", ".join(f"{thread} {count:.1f}" for thread, count in top))


def print_writers(results, table_modes, counts, rounds, baseline=False):
    print("\n| table | writers | round | RL commits/s | PG commits/s | ratio | failed (RL / PG) "
          "| fewest per writer (RL / PG) | p50 ms (RL / PG) | p99 ms (RL / PG) | RL WAL objects per commit |"
          + (" RL before commits/s (now / before) |" if baseline else ""))
    print("|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if baseline else ""))
    for own in table_modes:
        for count in counts:
            for round_no in range(rounds):
                r, wal = results[("rocklake", own, count, round_no)]
                p, _ = results[("postgres", own, count, round_no)]
                old = results.get(("baseline", own, count, round_no))
                print(f"| {'one each' if own else 'shared'} | {count} | {round_no + 1} | "
                      f"{r.commits_per_s:.1f} | {p.commits_per_s:.1f} | "
                      f"{ratio(r.commits_per_s, p.commits_per_s)} | {r.failed} / {p.failed} | "
                      f"{r.per_writer_min} / {p.per_writer_min} | {r.p50_ms:.1f} / {p.p50_ms:.1f} | "
                      f"{r.p99_ms:.1f} / {p.p99_ms:.1f} | "
                      f"{'-' if wal is None else f'{wal:.2f}'} |"
                      + (f" {old[0].commits_per_s:.1f} ({ratio(r.commits_per_s, old[0].commits_per_s)}) |"
                         if old else ""))
    errors = {(key[0], value[0].first_error) for key, value in results.items()
              if len(key) == 4 and value[0].first_error}
    for name, error in sorted(errors):
        print(f"\n{name}: first failed commit: {error}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--writers", default="1,4,8,16", help="comma-separated writer counts")
    ap.add_argument("--lone", type=int, default=200, help="1-row inserts of the lone writer")
    ap.add_argument("--parquet", type=int, default=50, help="1,000-row inserts of the lone writer")
    ap.add_argument("--rounds", type=int, default=1, help="rounds per writer count and backend")
    ap.add_argument("--warmup", type=int, default=100,
                    help="unmeasured 1-row inserts of a lone writer before the measured ones (0: none)")
    ap.add_argument("--no-own-tables", action="store_true", help="only the shared-table rounds")
    ap.add_argument("--threads", type=int, default=None,
                    help="DuckDB's threads setting in every writer (default: DuckDB's, one per core)")
    ap.add_argument("--baseline-bin",
                    help="an older rocklake release binary, run as backend 'baseline' in every step")
    args = ap.parse_args()
    counts = [int(c) for c in args.writers.split(",") if c]
    workdir, duck, backends = bench.rocklake_and_postgres("rocklake-commits-", args.baseline_bin)
    print(f"# {bench.machine_info()}")
    print(f"# git {bench.git_rev()}; DuckDB {duck.version}; writers {counts}, "
          f"{args.seconds:.0f} s per round; lone writer {args.lone} + {args.parquet} inserts; "
          f"DuckDB threads {args.threads or 'default'}")
    for backend in backends:
        print(f"# {backend.name}: {backend.describe()}")
    results = {}
    table_modes = (False,) if args.no_own_tables else (False, True)
    try:
        # The first lone writer of a run measured 20-40 % slower, whichever
        # server it was (DuckDB's own warm-up in this process): an
        # unmeasured one goes first.
        if args.warmup:
            cat = backends[0].new_catalog("warmup")
            lone_writer(duck, cat, args.warmup, 1, args.threads)
            cat.close()
        for backend in backends:
            cat = backend.new_catalog("lone")
            one_row, files, cpu = lone_writer(duck, cat, args.lone, args.parquet, args.threads)
            cat.close()
            results[(backend.name, "cpu")] = cpu
            for kind, samples in (("one_row", one_row), ("parquet", files)):
                results[(backend.name, kind)] = (
                    bench.ms(statistics.median(samples)), bench.ms(bench.percentile(samples, 95)))
        for own in table_modes:
            for count in counts:
                for round_no in range(args.rounds):
                    for backend in backends:
                        cat = backend.new_catalog(f"w{count}{'own' if own else ''}{round_no}")
                        before = wal_objects(cat)
                        res = writer_procs.run_writers(duck, cat, count, args.seconds, own,
                                                           args.threads)
                        after = wal_objects(cat)
                        wal = None if before is None or not res.commits else (after - before) / res.commits
                        results[(backend.name, own, count, round_no)] = (res, wal)
                        cat.close()
                        bench.log(f"{backend.name} {count} writers {'own' if own else 'shared'}: "
                                  f"{res.commits_per_s:.1f} commits/s, {res.failed} failed")
    finally:
        for backend in backends:
            backend.stop()
    print_lone(results)
    print_writers(results, table_modes, counts, args.rounds, bool(args.baseline_bin))


if __name__ == "__main__":
    main()
