#!/usr/bin/env python3
"""Where a DuckLake commit's time goes when the catalog is on object storage.

    .venv/bin/python bench/s3_commit_breakdown.py [--delay-ms 25] [--commits 60]
        [--writers 4] [--seconds 8]

RockLake serves a catalog in the S3 emulator behind bench/latency_proxy.py
(every request held DELAY ms, each request logged), and DuckDB reaches RockLake
through bench/trace.py's protocol proxy (each request timed to its
ReadyForQuery). Two parts:

  lone     one writer, COMMITS 1-row autocommit INSERTs: the commit's time split
           into DuckDB's own time (between requests), each statement's server
           time, and, for COMMIT, the time before the WAL PUT left RockLake, the
           PUT (to its first response bytes) and the time after it;
  writers  WRITERS threads, each its own DuckDB and table, for SECONDS: commits/s,
           how many commits failed with 23505 at their snapshot insert (DuckLake
           then sleeps and retries), the window from a commit's first catalog
           query (its snapshot) to its insert batch, and COMMIT's time. Two
           commits conflict when one is applied inside the other's window, so
           commits/s stay below 1 / window however many writers run.

Timings are reported, never asserted. Needs the release binary and
.tools/bin/s3s-fs (scripts/test.sh installs it).
"""

from __future__ import annotations

import argparse
import collections
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run as bench  # noqa: E402
import s3_latency  # noqa: E402
import trace  # noqa: E402

SNAPSHOT_INSERT = 'INSERT INTO "public".ducklake_snapshot'


def wal_puts(log: pathlib.Path, clock_offset: float) -> list[tuple[float, float]]:
    """(start on the perf_counter clock, ms to first response bytes) of each
    WAL PUT in the latency proxy's log."""
    puts = []
    for line in log.read_text().splitlines():
        started, took, request = line.split(" ", 2)
        if request.startswith("PUT") and "/wal/" in request:
            puts.append((float(started) - clock_offset, float(took)))
    return puts


def p50_p90(values) -> str:
    values = sorted(values)
    return f"{statistics.median(values):.2f} / {values[int(len(values) * 0.9)]:.2f}"


def lone(duck, cat, proxy, log: pathlib.Path, commits: int, clock_offset: float):
    con = duck.connect()
    con.execute(cat.attach_sql())
    con.execute("CREATE TABLE l.t (n INTEGER)")
    for n in range(5):
        con.execute(f"INSERT INTO l.t VALUES ({n})")
    proxy.take_timeline()
    log.write_text("")
    totals, client, per_statement, commit_parts = [], [], collections.defaultdict(list), []
    for n in range(commits):
        started = time.perf_counter()
        con.execute(f"INSERT INTO l.t VALUES ({n})")
        totals.append((time.perf_counter() - started) * 1e3)
        timeline = proxy.take_timeline()
        server = sum(end - start for _, _, start, end, _ in timeline) * 1e3
        client.append(totals[-1] - server)
        for _, label, start, end, _ in timeline:
            per_statement[trace.normalize(label)[:60]].append((end - start) * 1e3)
        commit_parts.extend((start, end) for _, label, start, end, _ in timeline
                            if label == "COMMIT")
    con.close()
    puts = wal_puts(log, clock_offset)
    before, put, after = [], [], []
    for start, end in commit_parts:
        inside = [p for p in puts if start <= p[0] <= end]
        if len(inside) == 1:
            put_start, took = inside[0]
            before.append((put_start - start) * 1e3)
            put.append(took)
            after.append((end - put_start) * 1e3 - took)
    print(f"\n## One writer, {commits} 1-row INSERTs (p50 / p90 ms)\n")
    print("| part | ms |\n|---|---|")
    print(f"| whole INSERT (DuckDB's execute) | {p50_p90(totals)} |")
    print(f"| DuckDB between requests | {p50_p90(client)} |")
    for label, values in sorted(per_statement.items(), key=lambda kv: -statistics.median(kv[1])):
        print(f"| server: `{label}` | {p50_p90(values)} |")
    if put:
        print(f"| COMMIT: before the WAL PUT leaves | {p50_p90(before)} |")
        print(f"| COMMIT: the WAL PUT ({len(put)} of {len(commit_parts)} commits had one) "
              f"| {p50_p90(put)} |")
        print(f"| COMMIT: after the PUT's answer | {p50_p90(after)} |")


def writers(duck, cat, proxy, count: int, seconds: float):
    setup = duck.connect()
    setup.execute(cat.attach_sql())
    for w in range(count):
        setup.execute(f"CREATE TABLE l.w{w} (n INTEGER)")
    done = [0] * count

    def write(w):
        con = duck.connect()
        con.execute(cat.attach_sql())
        con.execute(f"INSERT INTO l.w{w} VALUES (0)")
        until = time.time() + seconds
        while time.time() < until:
            try:
                con.execute(f"INSERT INTO l.w{w} VALUES (1)")
                done[w] += 1
            except Exception as e:  # noqa: BLE001 - reported, the run goes on
                print(f"writer {w}: {e}", file=sys.stderr)

    proxy.take_timeline()
    threads = [threading.Thread(target=write, args=(w,)) for w in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    by_connection = collections.defaultdict(list)
    for conn, label, start, end, error in proxy.take_timeline():
        by_connection[conn].append((start, end, label, error))
    windows = {"committed": [], "23505": []}
    commit_ms = []
    for requests in by_connection.values():
        requests.sort()
        first_query = None
        for start, end, label, error in requests:
            if label.startswith("BEGIN"):
                first_query = None
            elif label.startswith(SNAPSHOT_INSERT) and first_query is not None:
                windows["23505" if error == "23505" else "committed"].append(
                    (start - first_query) * 1e3)
            elif label == "COMMIT" and not error:
                commit_ms.append((end - start) * 1e3)
            elif first_query is None and label.startswith("COPY"):
                first_query = start
    print(f"\n## {count} writers, one table each, {seconds:g} s\n")
    print(f"- commits/s {sum(done) / seconds:.1f} (per writer {done})")
    print(f"- snapshot inserts that failed with 23505: {len(windows['23505'])} "
          f"of {len(windows['23505']) + len(windows['committed'])}")
    for kind, values in windows.items():
        if values:
            print(f"- window from the first catalog query to the insert batch, {kind}: "
                  f"p50 / p90 {p50_p90(values)} ms")
    if commit_ms:
        print(f"- COMMIT: p50 / p90 {p50_p90(commit_ms)} ms")
    setup.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delay-ms", type=float, default=25)
    ap.add_argument("--commits", type=int, default=60)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=8)
    args = ap.parse_args()
    binary = bench.rocklake_binary()
    for needed in (binary, s3_latency.S3S_FS):
        if not needed.is_file():
            sys.exit(f"{needed} missing (cargo build --release -p rocklake; scripts/test.sh installs s3s-fs)")
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="rocklake-s3commit-"))
    log = workdir / "requests.log"
    log.write_text("")
    # The latency proxy logs time.time(); the protocol proxy perf_counter().
    clock_offset = time.time() - time.perf_counter()
    os.environ["LATENCY_PROXY_LOG"] = str(log)
    duck = bench.Duck(workdir, want_sqlite=False, may_install=False)
    s3 = s3_latency.SlowS3(workdir / "s3", args.delay_ms)
    print(f"# {bench.machine_info()}")
    print(f"# git {bench.git_rev()}; DuckDB {duck.version}; every object-store request "
          f"held {args.delay_ms:g} ms")
    try:
        for part in ("lone", "writers"):
            bucket = s3.new_bucket()
            server = s3_latency.S3Server(binary, s3, bucket, workdir)
            proxy = trace.Proxy(server.port, timeline=True)
            data = workdir / f"data-{part}"
            data.mkdir()
            cat = bench.Catalog(server, f"ducklake:postgres:host=127.0.0.1 port={proxy.port} "
                                "dbname=lake", data, server.stop)
            if part == "lone":
                lone(duck, cat, proxy, log, args.commits, clock_offset)
            elif args.writers:
                writers(duck, cat, proxy, args.writers, args.seconds)
            server.stop()
    finally:
        s3.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
