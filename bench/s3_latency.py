#!/usr/bin/env python3
"""Object-storage latency benchmark: RockLake with its catalog in an S3
emulator (s3s-fs) behind a loopback proxy that adds DELAY ms to every request
(bench/latency_proxy.py), as real S3 does.

    .venv/bin/python bench/s3_latency.py [--delays 0,25] [--writers 1,4,8,16]
        [--seconds 15] [--commits 100] [--tables 500] [--lag-commits 40]

For each DELAY:
  commit    one writer, COMMITS 1-row autocommit INSERTs: p50/p99 latency,
            also in object-store round trips (p50 / DELAY);
  writers   WRITERS DuckDB writer processes (default retries), one table each
            and one shared table, for SECONDS: commits/s and its multiple of
            the single writer's, failed commits, fewest per writer, p50/p99;
  attach    a catalog of TABLES tables (10 per commit, then 1-row inserts),
            the server restarted before each of 3 rounds (cold caches): fresh
            DuckDB ATTACH, SHOW ALL TABLES, first query of one table;
  lag       a read replica (`serve --read-only --poll-ms 100`) of the same
            bucket: time from a writer's acknowledged commit until the replica
            answers it, over LAG_COMMITS commits.
DuckDB's data files stay in a local directory: only the catalog's storage is
measured. Timings are reported, never asserted. Needs the release binary and
.tools/bin/s3s-fs (scripts/test.sh installs it).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run as bench  # noqa: E402
import writers as writer_procs  # noqa: E402

S3S_FS = bench.REPO_ROOT / ".tools" / "bin" / "s3s-fs"
HERE = pathlib.Path(__file__).resolve().parent


class SlowS3:
    """s3s-fs on loopback, and the latency proxy in front of it."""

    def __init__(self, root: pathlib.Path, delay_ms: float):
        self.root = root
        root.mkdir(parents=True)
        self.s3_port = bench.free_port()
        self.s3 = subprocess.Popen(
            [str(S3S_FS), "--host", "127.0.0.1", "--port", str(self.s3_port),
             "--access-key", "test", "--secret-key", "test", str(root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        if not bench.wait_for_port(self.s3_port, 30, self.s3):
            raise RuntimeError("s3s-fs did not start")
        self.proxy = subprocess.Popen(
            [sys.executable, str(HERE / "latency_proxy.py"), "--upstream",
             f"127.0.0.1:{self.s3_port}", "--delay-ms", str(delay_ms)],
            stdout=subprocess.PIPE, text=True, start_new_session=True)
        self.port = int(self.proxy.stdout.readline().split()[1])
        self.buckets = 0

    def new_bucket(self) -> str:
        self.buckets += 1
        name = f"lake{self.buckets}"
        (self.root / name).mkdir()
        return name

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(AWS_ENDPOINT_URL=f"http://127.0.0.1:{self.port}", AWS_ACCESS_KEY_ID="test",
                   AWS_SECRET_ACCESS_KEY="test", AWS_REGION="us-east-1")
        return env

    def stop(self):
        for proc in (self.proxy, self.s3):
            bench.stop_process(proc)


class S3Server:
    """`rocklake serve s3://BUCKET/catalog` (or a read replica of it)."""

    def __init__(self, binary: pathlib.Path, s3: SlowS3, bucket: str, workdir: pathlib.Path,
                 read_only: bool = False):
        self.port = bench.free_port()
        args = ["--read-only", "--poll-ms", "100"] if read_only else []
        self.log = open(workdir / f"server-{bucket}-{self.port}.log", "wb")
        self.proc = subprocess.Popen(
            [str(binary), "serve", f"s3://{bucket}/catalog", "--listen", f"127.0.0.1:{self.port}",
             *args], env=s3.env(), stdout=self.log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, cwd=workdir, start_new_session=True)
        if not bench.wait_for_port(self.port, 120, self.proc):
            raise RuntimeError(f"rocklake did not start on s3://{bucket}: see {self.log.name}")

    def catalog(self, data_path: pathlib.Path) -> bench.Catalog:
        return bench.Catalog(self, f"ducklake:postgres:host=127.0.0.1 port={self.port} dbname=lake",
                             data_path, self.stop)

    def stop(self):
        bench.stop_process(self.proc)
        self.log.close()


def pctl(samples: list[float]) -> tuple[float, float]:
    return bench.ms(statistics.median(samples)), bench.ms(bench.percentile(samples, 99))


def lone_commits(duck, cat, commits: int) -> list[float]:
    con = duck.connect()
    con.execute(cat.attach_sql())
    con.execute("CREATE TABLE l.t (writer INTEGER, n INTEGER)")
    samples = []
    for n in range(commits):
        start = time.perf_counter()
        con.execute(f"INSERT INTO l.t VALUES (0, {n})")
        samples.append(time.perf_counter() - start)
    con.close()
    return samples


def build_tables(duck, cat, tables: int):
    con = duck.connect()
    con.execute(cat.attach_sql())
    for first in range(0, tables, 10):
        con.execute("BEGIN")
        for i in range(first, min(first + 10, tables)):
            con.execute(f"CREATE TABLE l.t{i} (id INTEGER, name VARCHAR, v DOUBLE, d DATE)")
        con.execute("COMMIT")
    for i in range(0, tables, max(1, tables // 50)):
        con.execute(f"INSERT INTO l.t{i} VALUES ({i}, 'x', {i}.5, DATE '2024-01-01')")
    con.close()


def cold_attach(duck, cat) -> tuple[float, float, float]:
    con = duck.connect()
    t0 = time.perf_counter()
    con.execute(cat.attach_sql())
    t1 = time.perf_counter()
    con.execute("SHOW ALL TABLES").fetchall()
    t2 = time.perf_counter()
    con.execute("SELECT count(*) FROM l.t0").fetchall()
    t3 = time.perf_counter()
    con.close()
    return t1 - t0, t2 - t1, t3 - t2


def replica_lag(duck, cat, start_replica, writer_port: int, commits: int) -> list[float]:
    """Seconds from each acknowledged commit until the replica (started by
    START_REPLICA once the writer's catalog holds a commit) answers it."""
    import psycopg
    con = duck.connect()
    con.execute(cat.attach_sql())
    con.execute("CREATE TABLE l.lag (n INTEGER)")
    replica_port = start_replica()
    writer = psycopg.connect(host="127.0.0.1", port=writer_port, dbname="lake", autocommit=True)
    replica = psycopg.connect(host="127.0.0.1", port=replica_port, dbname="lake", autocommit=True)
    latest = "SELECT max(snapshot_id) FROM ducklake_snapshot"
    lags = []
    for n in range(commits):
        con.execute(f"INSERT INTO l.lag VALUES ({n})")
        acked = time.perf_counter()
        snapshot = writer.execute(latest).fetchone()[0]
        while replica.execute(latest).fetchone()[0] < snapshot:
            if time.perf_counter() - acked > 60:
                raise RuntimeError(f"replica did not reach snapshot {snapshot} in 60 s")
            time.sleep(0.002)
        lags.append(time.perf_counter() - acked)
        time.sleep(0.05)
    writer.close()
    replica.close()
    con.close()
    return lags


def run_delay(args, binary, duck, workdir: pathlib.Path, delay: float, counts: list[int]):
    s3 = SlowS3(workdir / f"s3-{delay:g}", delay)
    out = {"delay": delay}
    data = workdir / f"data-{delay:g}"
    try:
        def fresh(label):
            bucket = s3.new_bucket()
            path = data / label
            path.mkdir(parents=True)
            return bucket, S3Server(binary, s3, bucket, workdir)

        bucket, server = fresh("lone")
        out["lone"] = pctl(lone_commits(duck, server.catalog(data / "lone"), args.commits))
        server.stop()
        for own in (True, False):
            for count in counts:
                label = f"w{count}{'own' if own else ''}"
                bucket, server = fresh(label)
                out[(own, count)] = writer_procs.run_writers(
                    duck, server.catalog(data / label), count, args.seconds, own)
                server.stop()
                bench.log(f"delay {delay:g} ms, {count} writers ({label}): "
                          f"{out[(own, count)].commits_per_s:.1f} commits/s")
        bucket, server = fresh("attach")
        build_tables(duck, server.catalog(data / "attach"), args.tables)
        server.stop()
        rounds = []
        for _ in range(3):
            server = S3Server(binary, s3, bucket, workdir)
            rounds.append(cold_attach(duck, server.catalog(data / "attach")))
            server.stop()
        out["attach"] = [bench.ms(statistics.median(x)) for x in zip(*rounds)]
        bucket, server = fresh("lag")
        replicas = []

        def start_replica() -> int:
            replicas.append(S3Server(binary, s3, bucket, workdir, read_only=True))
            return replicas[0].port

        try:
            out["lag"] = pctl(replica_lag(duck, server.catalog(data / "lag"), start_replica,
                                          server.port, args.lag_commits))
        finally:
            for replica in replicas:
                replica.stop()
            server.stop()
    finally:
        s3.stop()
    return out


def report(results, counts, tables):
    print("\n| per-request delay | commit p50 ms | p99 ms | p50 in round trips |")
    print("|---|---|---|---|")
    for r in results:
        p50, p99 = r["lone"]
        trips = f"{p50 / r['delay']:.2f}" if r["delay"] else "-"
        print(f"| {r['delay']:g} ms | {p50:.1f} | {p99:.1f} | {trips} |")
    print("\n| delay | table | writers | commits/s | x one writer | failed | fewest per writer "
          "| p50 ms | p99 ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        for own in (True, False):
            base = r[(own, counts[0])].commits_per_s
            for count in counts:
                w = r[(own, count)]
                print(f"| {r['delay']:g} ms | {'one each' if own else 'shared'} | {count} | "
                      f"{w.commits_per_s:.1f} | {w.commits_per_s / base:.1f} | {w.failed} | "
                      f"{w.per_writer_min} | {w.p50_ms:.1f} | {w.p99_ms:.1f} |")
    print(f"\n| delay | cold ATTACH ms ({tables} tables) | SHOW ALL TABLES ms | first query ms "
          "| replica lag p50 ms | p99 ms |")
    print("|---|---|---|---|---|---|")
    for r in results:
        a, s, f = r["attach"]
        print(f"| {r['delay']:g} ms | {a:.0f} | {s:.0f} | {f:.0f} | {r['lag'][0]:.0f} | "
              f"{r['lag'][1]:.0f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delays", default="0,25", help="per-request delays in ms, comma-separated")
    ap.add_argument("--writers", default="1,4,8,16")
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--commits", type=int, default=100)
    ap.add_argument("--tables", type=int, default=500)
    ap.add_argument("--lag-commits", type=int, default=40)
    args = ap.parse_args()
    counts = [int(c) for c in args.writers.split(",") if c]
    binary = bench.rocklake_binary()
    for needed in (binary, S3S_FS):
        if not needed.is_file():
            sys.exit(f"{needed} missing (cargo build --release -p rocklake; scripts/test.sh installs s3s-fs)")
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="rocklake-s3lat-"))
    duck = bench.Duck(workdir, want_sqlite=False, may_install=False)
    print(f"# {bench.machine_info()}")
    print(f"# git {bench.git_rev()}; DuckDB {duck.version}; s3s-fs behind bench/latency_proxy.py; "
          f"writers {counts}, {args.seconds:.0f} s per round")
    results = [run_delay(args, binary, duck, workdir, float(d), counts)
               for d in args.delays.split(",") if d]
    report(results, counts, args.tables)
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
