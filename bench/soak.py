#!/usr/bin/env python3
"""Soak test: DuckDB writers against one RockLake server for a long time,
watching what must stay bounded.

    .venv/bin/python bench/soak.py [--minutes 20] [--writers 4] [--every 30]
                                   [--retain-minutes 5] [--server-retain]

Starts the release server (target/release/rocklake; ROCKLAKE_BIN overrides) on
a fresh catalog in a temporary directory and runs, until the time is up:
  * WRITERS DuckDB processes' worth of writers (one DuckDB instance per
    thread), each committing 1-row inserts (inlined rows) in a loop, and every
    50th commit a 1,000-row insert (a Parquet file);
  * one reader running `SELECT count(*) FROM ducklake_snapshots('l')` and a
    table count in a loop;
  * every --retain-minutes, DuckLake's `ducklake_expire_snapshots` for
    snapshots older than that, then `rocklake gc` (retention floor) and
    `rocklake excise` (physical deletion of the expired catalog rows); with
    --server-retain none of that: the server runs with `--retain
    RETAIN-MINUTES min --retention-every 30s` and keeps the catalog bounded
    by itself.

Every --every seconds it prints: commits/s over the interval (and failed
commits: DuckLake gave up after its retries), reads/s, the catalog's size on
disk and file count, the server's RSS and its open sessions. At the end: the peak RSS, the
RSS and catalog size of the last quarter against the first, and the server's
exit after SIGTERM. Nothing is asserted: the figures are for a person to read
(docs/benchmarks.md records a run).

SlateDB housekeeping in the server (see docs/execution.md): the compactor
runs in-process (polls every 5 s); the garbage collector deletes WAL,
manifest and compacted objects older than 5 minutes, every 10 minutes. So the
catalog directory grows for the first ~15 minutes of a soak and should then
level off; a run shorter than that shows growth only.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (shared helpers: Duck, RockLake server start)

REPO_ROOT = bench.REPO_ROOT


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.commits = 0
        self.failed = 0
        self.reads = 0
        self.errors: dict[str, int] = {}

    def add(self, field: str, n: int = 1):
        with self.lock:
            setattr(self, field, getattr(self, field) + n)

    def error(self, e: Exception):
        text = " ".join(str(e).split())[:400]
        with self.lock:
            self.errors[text] = self.errors.get(text, 0) + 1
            self.failed += 1

    def snapshot(self):
        with self.lock:
            return self.commits, self.failed, self.reads


def dir_usage(path: pathlib.Path):
    size = files = 0
    for root, _, names in os.walk(path):
        for n in names:
            try:
                size += os.stat(os.path.join(root, n)).st_size
                files += 1
            except FileNotFoundError:
                pass
    return size, files


def rss_mib(pid: int) -> float:
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except FileNotFoundError:
        pass
    return float("nan")


def session_threads(pid: int) -> int:
    """Sessions the server is running (one `session-<pid>` thread each)."""
    count = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/comm") as comm:
                    count += comm.read().startswith("session-")
            except FileNotFoundError:
                pass
    except FileNotFoundError:
        pass
    return count


def writer(duck, cat, table: str, stop: threading.Event, counters: Counters):
    con = duck.connect()
    con.execute(cat.attach_sql())
    n = 0
    while not stop.is_set():
        n += 1
        try:
            if n % 50 == 0:
                con.execute(f"INSERT INTO l.{table} SELECT range, 'bulk' FROM range(1000)")
            else:
                con.execute(f"INSERT INTO l.{table} VALUES ({n}, 'row')")
            counters.add("commits")
        except Exception as e:  # DuckLake gave up after its retries
            counters.error(e)
    con.close()


def reader(duck, cat, stop: threading.Event, counters: Counters):
    con = duck.connect()
    con.execute(cat.attach_sql())
    while not stop.is_set():
        try:
            con.execute("SELECT count(*) FROM ducklake_snapshots('l')").fetchall()
            con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'l'").fetchall()
            counters.add("reads")
        except Exception as e:
            counters.error(e)
    con.close()


def housekeeping(duck, cat, binary, port, retain_minutes, stop, counters, log):
    con = duck.connect()
    con.execute(cat.attach_sql())
    dsn = f"host=127.0.0.1 port={port} user=rocklake dbname=lake"
    while not stop.wait(retain_minutes * 60):
        try:
            con.execute(f"CALL ducklake_expire_snapshots('l', older_than => "
                        f"now() - INTERVAL '{retain_minutes} minutes')")
            for args in (["gc", "--retain-from", f"{retain_minutes}m"], ["excise"]):
                res = subprocess.run([str(binary), *args, "--dsn", dsn],
                                     capture_output=True, text=True, timeout=300,
                                     env={**os.environ, "RUST_BACKTRACE": "0"})
                output = res.stdout if res.returncode == 0 else res.stderr
                log(f"rocklake {args[0]}: exit {res.returncode}: "
                    + "; ".join(" ".join(line.split()) for line in output.strip().splitlines()))
        except Exception as e:
            counters.error(e)
    con.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=20)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--every", type=float, default=30, help="report interval, seconds")
    ap.add_argument("--retain-minutes", type=int, default=5)
    ap.add_argument("--max-sessions", type=int, default=1000)
    ap.add_argument("--server-retain", action="store_true",
                    help="the server applies retention itself (serve --retain)")
    args = ap.parse_args()

    binary = bench.rocklake_binary()
    if not binary.exists():
        sys.exit(f"missing {binary}: cargo build --release -p rocklake")
    work = pathlib.Path(tempfile.mkdtemp(prefix="rocklake-soak-"))
    duck = bench.Duck(work, want_sqlite=False, may_install=False)
    server = bench.RockLake(work, binary, duck)
    # Room for many writers; the sessions column shows what DuckDB holds
    # (one connection per DuckDB instance, see docs/benchmarks.md).
    server.serve_args = ["--max-sessions", str(args.max_sessions)]
    if args.server_retain:
        server.serve_args += ["--retain", f"{args.retain_minutes}min",
                              "--retention-every", "30s"]
    cat = server.new_catalog("soak")
    proc = server.procs[-1]
    port = int(cat.attach_target.split("port=")[1].split()[0])
    catalog_dir = server.workdir / "1-soak" / "catalog"

    def log(msg):
        print(msg, flush=True)

    log(f"soak: {args.writers} writers, {args.minutes} min, binary {binary}")
    log(f"machine: {bench.machine_info()}")
    setup = duck.connect()
    setup.execute(cat.attach_sql())
    for w in range(args.writers):
        setup.execute(f"CREATE TABLE l.t{w} (id BIGINT, note VARCHAR)")
    setup.close()

    counters = Counters()
    stop = threading.Event()
    threads = [threading.Thread(target=writer, args=(duck, cat, f"t{w}", stop, counters))
               for w in range(args.writers)]
    threads.append(threading.Thread(target=reader, args=(duck, cat, stop, counters)))
    if not args.server_retain:
        threads.append(threading.Thread(target=housekeeping, args=(
            duck, cat, binary, port, args.retain_minutes, stop, counters, log)))
    for t in threads:
        t.start()

    log(f"{'t (s)':>6} {'commits/s':>9} {'failed':>6} {'reads/s':>7} "
        f"{'catalog MiB':>11} {'files':>6} {'RSS MiB':>8} {'sessions':>8}")
    started = time.monotonic()
    samples = []
    last = (0, 0, 0)
    last_t = started
    try:
        while time.monotonic() - started < args.minutes * 60:
            time.sleep(args.every)
            now = time.monotonic()
            cur = counters.snapshot()
            size, files = dir_usage(catalog_dir)
            rss = rss_mib(proc.pid)
            dt = now - last_t
            row = (now - started, (cur[0] - last[0]) / dt, cur[1] - last[1],
                   (cur[2] - last[2]) / dt, size / 2**20, files, rss,
                   session_threads(proc.pid))
            samples.append(row)
            log(f"{row[0]:6.0f} {row[1]:9.1f} {row[2]:6d} {row[3]:7.1f} "
                f"{row[4]:11.1f} {row[5]:6d} {row[6]:8.1f} {row[7]:8d}")
            last, last_t = cur, now
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    quarter = max(1, len(samples) // 4)
    first, tail = samples[:quarter], samples[-quarter:]

    def mean(rows, i):
        return sum(r[i] for r in rows) / len(rows)

    log(f"total commits {counters.commits}, failed {counters.failed}, reads {counters.reads}")
    for text, n in sorted(counters.errors.items(), key=lambda kv: -kv[1])[:5]:
        log(f"  {n} x {text}")
    log(f"peak RSS {max(r[6] for r in samples):.1f} MiB; first/last quarter: "
        f"RSS {mean(first, 6):.1f}/{mean(tail, 6):.1f} MiB, catalog "
        f"{mean(first, 4):.1f}/{mean(tail, 4):.1f} MiB, files "
        f"{mean(first, 5):.0f}/{mean(tail, 5):.0f}, commits/s "
        f"{mean(first, 1):.1f}/{mean(tail, 1):.1f}")
    t0 = time.monotonic()
    cat.close()
    log(f"server exit code {proc.returncode} {time.monotonic() - t0:.2f} s after SIGTERM")


if __name__ == "__main__":
    main()
