#!/usr/bin/env python3
"""Soak test: DuckDB writers against one RockLake server for a long time,
watching what must stay bounded.

    .venv/bin/python bench/soak.py [--minutes 20] [--writers 4] [--every 30]
                                   [--retain-minutes 5] [--server-retain | --no-retention]
                                   [--backend rocklake|postgres]

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
    by itself; with --no-retention nothing expires (the catalog keeps all
    history: the curve to compare with).

`--backend postgres` runs the same writers and reader against a durable
PostgreSQL 15 catalog (scripts/start-postgres.sh), with DuckLake's
`ducklake_expire_snapshots` as its only retention: whether a trend is the
workload's or RockLake's. Its catalog size is `pg_database_size`, its RSS
the sum of its processes' and its sessions the database's backends.

Every --every seconds it prints: commits/s over the interval (and failed
commits: DuckLake gave up after its retries), reads/s, the snapshots in the
catalog, the catalog's size on
disk and file count (on disk: SlateDB deletes obsolete files 5 to 15 minutes
later, so the snapshots column, the history the catalog holds, shows what
retention bounds first), the server's RSS and its open sessions, and the CPU the
server and the DuckDB clients (this process) spent per operation (commit or
read) over the interval: which side's cost grows. At the end: the peak RSS, the
RSS, catalog size, throughput and CPU per operation of the last quarter
against the first, and the server's exit after SIGTERM. Nothing is asserted: the figures are for a person to read
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
import resource
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


def postgres_usage(pg, db: str):
    """Catalog bytes, RSS (MiB, every process of the server) and sessions."""
    size = int(pg.psql(f"SELECT pg_database_size('{db}')").strip())
    rss = sum(rss_mib(pid) for pid in bench.server_pids(pg))
    sessions = int(pg.psql(f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{db}'").strip())
    return size, 0, rss, sessions


def client_cpu() -> float:
    """CPU seconds of this process: the DuckDB writers and reader."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


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
            if binary is None:  # PostgreSQL: DuckLake's expiry is all there is
                log("ducklake_expire_snapshots done")
                continue
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
    ap.add_argument("--no-retention", action="store_true",
                    help="nothing expires: the catalog keeps its whole history")
    ap.add_argument("--backend", choices=["rocklake", "postgres"], default="rocklake")
    args = ap.parse_args()
    if args.backend == "postgres" and args.server_retain:
        sys.exit("--server-retain is RockLake's")

    work = pathlib.Path(tempfile.mkdtemp(prefix="rocklake-soak-"))
    duck = bench.Duck(work, want_sqlite=False, may_install=False)
    if args.backend == "postgres":
        binary = None
        server = bench.Postgres(work, duck, durable=True)
        cat = server.new_catalog("soak")
        database = cat.attach_target.split("dbname=")[1].split()[0]

        def usage():
            return postgres_usage(server, database)
    else:
        binary = bench.rocklake_binary()
        if not binary.exists():
            sys.exit(f"missing {binary}: cargo build --release -p rocklake")
        server = bench.RockLake(work, binary, duck)
        # Room for many writers; the sessions column shows what DuckDB holds
        # (one connection per DuckDB instance, see docs/benchmarks.md).
        server.serve_args = ["--max-sessions", str(args.max_sessions)]
        if args.server_retain:
            server.serve_args += ["--retain", f"{args.retain_minutes}min",
                                  "--retention-every", "30s"]
        cat = server.new_catalog("soak")
        proc = server.procs[-1]
        catalog_dir = server.workdir / "1-soak" / "catalog"

        def usage():
            size, files = dir_usage(catalog_dir)
            return size, files, rss_mib(proc.pid), session_threads(proc.pid)
    port = int(cat.attach_target.split("port=")[1].split()[0])

    def log(msg):
        print(msg, flush=True)

    retention = ("none" if args.no_retention else "server --retain" if args.server_retain
                 else f"every {args.retain_minutes} min from outside")
    log(f"soak: {args.writers} writers, {args.minutes} min, {server.describe()}, "
        f"retention {retention}")
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
    if not args.server_retain and not args.no_retention:
        threads.append(threading.Thread(target=housekeeping, args=(
            duck, cat, binary, port, args.retain_minutes, stop, counters, log)))
    for t in threads:
        t.start()

    dsn = cat.attach_target.removeprefix("ducklake:postgres:")

    def history():
        """Snapshots in the catalog: what retention keeps bounded."""
        import psycopg
        try:
            with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as con:
                return con.execute("SELECT count(*) FROM ducklake_snapshot").fetchone()[0]
        except psycopg.Error:
            return -1

    log(f"{'t (s)':>6} {'commits/s':>9} {'failed':>6} {'reads/s':>7} {'snapshots':>9} "
        f"{'catalog MiB':>11} {'files':>6} {'RSS MiB':>8} {'sessions':>8} {'srv ms/op':>9} "
        f"{'client ms/op':>12}")
    started = time.monotonic()
    samples = []
    last = (0, 0, 0)
    last_t = started
    # CPU of the server's processes and of this process (the DuckDB
    # clients), per commit or read: which side's cost grows.
    last_cpu = (bench.cpu_seconds(bench.server_pids(server)), client_cpu())
    try:
        while time.monotonic() - started < args.minutes * 60:
            time.sleep(args.every)
            now = time.monotonic()
            cur = counters.snapshot()
            size, files, rss, sessions = usage()
            dt = now - last_t
            cpu = (bench.cpu_seconds(bench.server_pids(server)), client_cpu())
            ops = max(1, (cur[0] - last[0]) + (cur[2] - last[2]))
            row = (now - started, (cur[0] - last[0]) / dt, cur[1] - last[1],
                   (cur[2] - last[2]) / dt, size / 2**20, files, rss, sessions,
                   (cpu[0] - last_cpu[0]) * 1000 / ops, (cpu[1] - last_cpu[1]) * 1000 / ops)
            samples.append(row)
            log(f"{row[0]:6.0f} {row[1]:9.1f} {row[2]:6d} {row[3]:7.1f} {history():9d} "
                f"{row[4]:11.1f} {row[5]:6d} {row[6]:8.1f} {row[7]:8d} {row[8]:9.2f} "
                f"{row[9]:12.2f}")
            last_cpu = cpu
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
        f"{mean(first, 1):.1f}/{mean(tail, 1):.1f}, server/client CPU ms per operation "
        f"{mean(first, 8):.2f}/{mean(tail, 8):.2f} and {mean(first, 9):.2f}/{mean(tail, 9):.2f}")
    t0 = time.monotonic()
    cat.close()
    if args.backend == "postgres":
        server.stop()
    else:
        log(f"server exit code {proc.returncode} {time.monotonic() - t0:.2f} s after SIGTERM")


if __name__ == "__main__":
    main()
