#!/usr/bin/env python3
"""Catalog benchmark: the same DuckDB workloads against three DuckLake catalogs.

    .venv/bin/python bench/run.py [--quick] [--backends rocklake,postgres,sqlite]
                                  [--baseline-bin OLD_RELEASE_BINARY]

Backends, all in one run:
  rocklake  the RockLake server (release binary, target/release/rocklake; set
            ROCKLAKE_BIN to override), catalog in a temporary local directory,
            one server per catalog;
  postgres  DuckLake on a real PostgreSQL 15 on loopback, started with
            scripts/start-postgres.sh and stopped at the end, one database per
            catalog. By default it runs durable (fsync=on, synchronous_commit=on)
            like RockLake's commits; --pg-nondurable keeps the script's fast
            settings (fsync=off, synchronous_commit=off);
  sqlite    DuckLake with a SQLite catalog file (`ducklake:sqlite:PATH`); needs
            the sqlite_scanner extension, taken from the PyPI wheel
            duckdb-extension-sqlite-scanner (installed into .venv on first use
            unless --no-install); skipped with a message when unavailable.

Workloads (each on its own fresh catalog, backends interleaved per workload):
  1  ATTACH of an existing catalog (10 tables, 100 snapshots), fresh DuckDB each
     time; plus the first query after ATTACH (loads the catalog);
  2  1-row autocommit INSERT (inlined) commit latency, on a young catalog and
     again after the catalog has N snapshots (the inserts that build the history
     of workloads 5 and 6 are the measurement);
  3  1000-row INSERT commit (writes one Parquet file);
  4  selective query on a table with F data files (min/max pruning to one file);
  5  SELECT count(*) FROM ducklake_snapshots('l') with N snapshots;
  6  ATTACH (and first query) with 10 vs N snapshots of history.

Sizes: full run F = N = 10,000; --quick F = N = 500. Repetitions are fixed and
printed with the results; the table shows medians and p95 in milliseconds and the
ratio of RockLake's median to PostgreSQL's. Timings are reported, never asserted.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import platform
import re
import shutil
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
VENV_EXT = REPO_ROOT / ".venv" / "duckdb-ext"

FULL = dict(attach_reps=30, insert1_reps=200, insert1000_reps=40, files=10_000,
            file_batch=1_000, query_reps=30, snapshots=10_000, snap_reps=20,
            growth_reps=20)
QUICK = dict(attach_reps=10, insert1_reps=60, insert1000_reps=15, files=500,
             file_batch=250, query_reps=15, snapshots=500, snap_reps=10,
             growth_reps=10)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def log(msg: str):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float, proc=None) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def percentile(values, p):
    """Nearest-rank percentile."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def ms(seconds: float) -> float:
    return seconds * 1000.0


def q(s: str) -> str:
    return s.replace("'", "''")


# ---------------------------------------------------------------------------
# DuckDB
# ---------------------------------------------------------------------------

class Duck:
    """Builds a private extension directory (links to .venv/duckdb-ext plus the
    sqlite_scanner extension when available) and opens DuckDB connections."""

    def __init__(self, workdir: pathlib.Path, want_sqlite: bool, may_install: bool):
        import duckdb
        self.duckdb = duckdb
        self.version = duckdb.__version__
        self.ext_dir = workdir / "duckdb-ext"
        plat = "linux_amd64"
        target = self.ext_dir / f"v{self.version}" / plat
        target.mkdir(parents=True, exist_ok=True)
        src = VENV_EXT / f"v{self.version}" / plat
        if not src.is_dir():
            sys.exit(f"missing {src}: run scripts/setup-python.sh")
        for f in src.glob("*.duckdb_extension"):
            (target / f.name).symlink_to(f)
        self.sqlite_error = None
        if want_sqlite:
            sqlite_ext = self._sqlite_extension(may_install)
            if isinstance(sqlite_ext, pathlib.Path):
                (target / "sqlite_scanner.duckdb_extension").symlink_to(sqlite_ext)
            else:
                self.sqlite_error = sqlite_ext

    def _sqlite_extension(self, may_install: bool):
        pkg = "duckdb-extension-sqlite-scanner"
        spec = importlib.util.find_spec("duckdb_extension_sqlite_scanner")
        if spec is None and may_install:
            log(f"installing {pkg}=={self.version} (sqlite_scanner extension)")
            res = subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                                  "--disable-pip-version-check", f"{pkg}=={self.version}"],
                                 capture_output=True, text=True)
            if res.returncode != 0:
                return f"pip install {pkg}=={self.version} failed: {res.stderr.strip()[-300:]}"
            importlib.invalidate_caches()
            spec = importlib.util.find_spec("duckdb_extension_sqlite_scanner")
        if spec is None or not spec.submodule_search_locations:
            return f"{pkg} not installed (run without --no-install)"
        pkg_dir = pathlib.Path(list(spec.submodule_search_locations)[0])
        found = sorted(pkg_dir.rglob("*.duckdb_extension"))
        if not found:
            return f"no .duckdb_extension in {pkg}"
        return found[0]

    def connect(self, extensions=("ducklake", "postgres_scanner")):
        con = self.duckdb.connect(":memory:", config={
            "extension_directory": str(self.ext_dir),
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": True,
        })
        for e in extensions:
            con.execute(f"LOAD {e}")
        return con


# ---------------------------------------------------------------------------
# Backends: each makes fresh catalogs; a catalog gives an ATTACH statement.
# ---------------------------------------------------------------------------

class Catalog:
    def __init__(self, backend, attach_target: str, data_path: pathlib.Path, closer=None):
        self.backend = backend
        self.attach_target = attach_target
        self.data_path = data_path
        self._closer = closer

    def attach_sql(self, alias="l") -> str:
        return (f"ATTACH '{q(self.attach_target)}' AS {alias} "
                f"(DATA_PATH '{q(str(self.data_path))}/')")

    def close(self):
        if self._closer:
            self._closer()
            self._closer = None


class RockLake:
    name = "rocklake"

    def __init__(self, workdir: pathlib.Path, binary: pathlib.Path, duck: Duck,
                 name: str = "rocklake"):
        self.name = name
        self.workdir = workdir / name
        self.workdir.mkdir()
        self.binary = binary
        self.duck = duck
        self.extensions = ("ducklake", "postgres_scanner")
        self.n = 0
        self.procs = []
        # Further `rocklake serve` arguments (bench/soak.py raises --max-sessions;
        # ROCKLAKE_SERVE_ARGS, e.g. "--no-commit-journal", for A/B runs).
        self.serve_args: list[str] = shlex.split(os.environ.get("ROCKLAKE_SERVE_ARGS", ""))

    def describe(self):
        extra = f" (serve {' '.join(self.serve_args)})" if self.serve_args else ""
        return f"RockLake server {self.binary}{extra}, catalog in a local temp dir"

    def new_catalog(self, label: str) -> Catalog:
        self.n += 1
        root = self.workdir / f"{self.n}-{label}"
        (root / "catalog").mkdir(parents=True)
        (root / "data").mkdir()
        port = free_port()
        logf = open(root / "server.log", "wb")
        env = dict(os.environ)
        proc = subprocess.Popen([str(self.binary), "serve", str(root / "catalog"),
                                 "--listen", f"127.0.0.1:{port}", *self.serve_args],
                                stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=root, start_new_session=True, env=env)
        self.procs.append(proc)
        if not wait_for_port(port, 30, proc):
            raise RuntimeError(f"rocklake did not start; see {root / 'server.log'}")

        def close():
            stop_process(proc)
            logf.close()

        return Catalog(self, f"ducklake:postgres:host=127.0.0.1 port={port} dbname=lake",
                       root / "data", close)

    def stop(self):
        for p in self.procs:
            stop_process(p)


def stop_process(proc):
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


class Postgres:
    name = "postgres"

    def __init__(self, workdir: pathlib.Path, duck: Duck, durable: bool):
        # Not under a 0700 dir: the server may run as the "postgres" OS user.
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="rocklake-bench-pg-"))
        self.root.chmod(0o755)
        self.datadir = self.root / "pgdata"
        self.port = free_port()
        self.durable = durable
        self.duck = duck
        self.extensions = ("ducklake", "postgres_scanner")
        self.data_root = workdir / "postgres"
        self.data_root.mkdir()
        self.n = 0
        opts = []
        if durable:
            # later -c options win over the script's fsync=off defaults
            opts = ["-c", "fsync=on", "-c", "synchronous_commit=on", "-c", "full_page_writes=on"]
        env = dict(os.environ, PG_CREATE_DBS="")
        res = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "start-postgres.sh"),
                              str(self.datadir), str(self.port), *opts],
                             env=env, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"start-postgres.sh failed:\n{res.stdout}\n{res.stderr}")
        self.version = self.psql("SHOW server_version").strip()
        self.settings = {k: self.psql(f"SHOW {k}").strip()
                         for k in ("fsync", "synchronous_commit", "shared_buffers")}

    def psql(self, sql: str, db: str = "postgres") -> str:
        res = subprocess.run([str(psql_binary()), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                              "-d", db, "-v", "ON_ERROR_STOP=1", "-tAc", sql],
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"psql {sql!r} failed: {res.stderr}")
        return res.stdout

    def describe(self):
        return (f"PostgreSQL {self.version} on loopback "
                f"(fsync={self.settings['fsync']}, synchronous_commit={self.settings['synchronous_commit']}, "
                f"shared_buffers={self.settings['shared_buffers']})")

    def new_catalog(self, label: str) -> Catalog:
        self.n += 1
        db = f"bench_{self.n}_{label}"
        self.psql(f'CREATE DATABASE "{db}"')
        data = self.data_root / f"{self.n}-{label}"
        data.mkdir()
        return Catalog(self, f"ducklake:postgres:host=127.0.0.1 port={self.port} "
                             f"user=postgres dbname={db}", data)

    def stop(self):
        subprocess.run(["bash", str(REPO_ROOT / "scripts" / "stop-postgres.sh"),
                        str(self.datadir), "--remove"], capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)


class SQLite:
    name = "sqlite"

    def __init__(self, workdir: pathlib.Path, duck: Duck):
        self.root = workdir / "sqlite"
        self.root.mkdir()
        self.duck = duck
        self.extensions = ("ducklake", "sqlite_scanner")
        self.n = 0

    def describe(self):
        return "SQLite catalog file (DuckDB sqlite_scanner), local disk"

    def new_catalog(self, label: str) -> Catalog:
        self.n += 1
        d = self.root / f"{self.n}-{label}"
        (d / "data").mkdir(parents=True)
        return Catalog(self, f"ducklake:sqlite:{d / 'meta.sqlite'}", d / "data")

    def stop(self):
        pass


# ---------------------------------------------------------------------------
# Workloads
# ---------------------------------------------------------------------------

class Results:
    def __init__(self):
        self.rows = []          # (key, label, {backend: [ms...]})
        self.notes = []

    def add(self, key: str, label: str, backend: str, samples_ms):
        for row in self.rows:
            if row[0] == key:
                row[2][backend] = list(samples_ms)
                return
        self.rows.append((key, label, {backend: list(samples_ms)}))


def attached(backend, cat: Catalog):
    con = backend.duck.connect(backend.extensions)
    con.execute(cat.attach_sql("l"))
    return con


def timed(con, sql: str) -> float:
    t = time.perf_counter()
    con.execute(sql).fetchall()
    return time.perf_counter() - t


def measure_attach(backend, cat: Catalog, reps: int, first_query: str):
    """Fresh DuckDB per repetition (extensions loaded outside the timing):
    time ATTACH, then the first query (catalog load)."""
    att, first = [], []
    for _ in range(reps):
        con = backend.duck.connect(backend.extensions)
        t = time.perf_counter()
        con.execute(cat.attach_sql("l"))
        att.append(ms(time.perf_counter() - t))
        first.append(ms(timed(con, first_query)))
        con.close()
    return att, first


def build_attach_catalog(backend, cat: Catalog, tables=10, snapshots=100):
    """10 tables with 5 columns each, then inserts until `snapshots` commits."""
    con = attached(backend, cat)
    for i in range(tables):
        con.execute(f"CREATE TABLE l.t{i} (id BIGINT, a INTEGER, b VARCHAR, c DOUBLE, d DATE)")
    n = tables
    i = 0
    while n < snapshots:
        con.execute(f"INSERT INTO l.t{i % tables} VALUES ({i}, {i}, 'x{i}', {i}.5, DATE '2024-01-01')")
        n += 1
        i += 1
    con.close()


def run_history(backend, cat: Catalog, total: int, head: int, tail: int):
    """Creates a table and grows the catalog to about `total` snapshots with
    1-row autocommit INSERTs (inlined); returns the latencies of the first
    `head` and the last `tail` inserts."""
    con = attached(backend, cat)
    con.execute("CREATE TABLE l.h (id BIGINT, v VARCHAR)")
    lat = []
    n = total - 2  # snapshot 0 (catalog creation) and the CREATE TABLE
    t_start = time.perf_counter()
    for i in range(n):
        lat.append(ms(timed(con, f"INSERT INTO l.h VALUES ({i}, 'v{i}')")))
        if (i + 1) % 2000 == 0:
            log(f"  {backend.name}: {i + 1}/{n} inserts, {time.perf_counter() - t_start:.0f}s")
    con.close()
    return lat[:head], lat[-tail:]


def run_insert1000(backend, cat: Catalog, reps: int):
    con = attached(backend, cat)
    con.execute("CREATE TABLE l.p (id BIGINT, a INTEGER, b VARCHAR, c DOUBLE)")
    out = []
    for r in range(reps):
        out.append(ms(timed(con, f"INSERT INTO l.p SELECT range + {r * 1000}, range::INTEGER, "
                                 f"'row ' || range, range * 0.5 FROM range(1000)")))
    con.close()
    return out


def build_many_files(backend, cat: Catalog, files: int, batch: int):
    """`files` Parquet files of 10 rows each with disjoint id ranges (file k holds
    ids 10k..10k+9), written with inlining off, committed `batch` per transaction."""
    con = attached(backend, cat)
    con.execute("CALL ducklake_set_option('l', 'data_inlining_row_limit', 0)")
    con.execute("CREATE TABLE l.f (id BIGINT, v DOUBLE)")
    t0 = time.perf_counter()
    for start in range(0, files, batch):
        con.execute("BEGIN")
        for k in range(start, min(files, start + batch)):
            con.execute(f"INSERT INTO l.f SELECT {k * 10} + range, range * 1.5 FROM range(10)")
        con.execute("COMMIT")
    build_s = time.perf_counter() - t0
    nfiles = con.execute("SELECT count(*) FROM ducklake_list_files('l', 'f')").fetchone()[0]
    con.close()
    return nfiles, build_s


def run_file_query(backend, cat: Catalog, files: int, reps: int):
    con = attached(backend, cat)
    mid = (files // 2) * 10
    sql = f"SELECT count(*), sum(v) FROM l.f WHERE id BETWEEN {mid} AND {mid + 9}"
    got = con.execute(sql).fetchone()
    if got[0] != 10:
        raise RuntimeError(f"{backend.name}: file query returned {got}")
    out = [ms(timed(con, sql)) for _ in range(reps)]
    con.close()
    return out


def run_snapshot_count(backend, cat: Catalog, reps: int):
    con = attached(backend, cat)
    sql = "SELECT count(*) FROM ducklake_snapshots('l')"
    n = con.execute(sql).fetchone()[0]
    out = [ms(timed(con, sql)) for _ in range(reps)]
    con.close()
    return n, out


# The two catalog reads DuckDB sends for workload 5 (bench/trace.py lists them).
SNAPSHOT_READS = [
    'SELECT "snapshot_id", "snapshot_time", "schema_version", "next_file_id" '
    'FROM "public"."ducklake_snapshot"',
    'SELECT "snapshot_id", "changes_made", "author", "commit_message", "commit_extra_info" '
    'FROM "public"."ducklake_snapshot_changes"',
]


def psql_binary() -> pathlib.Path:
    found = sorted(pathlib.Path("/usr/lib/postgresql").glob("*/bin/psql"))
    if not found:
        raise RuntimeError("psql not found under /usr/lib/postgresql (apt-get install postgresql)")
    return found[-1]


def run_snapshot_reads_server(cat: Catalog, reps: int):
    """Server time of workload 5's catalog reads without DuckDB: psql runs each
    as a binary COPY to /dev/null with \\timing; one sample is the sum of the two."""
    conninfo = cat.attach_target.split("postgres:", 1)[1]
    if "user=" not in conninfo:
        conninfo += " user=postgres"
    script = "\\timing on\n" + "".join(
        f"\\copy ({sql}) TO '/dev/null' (FORMAT binary)\n" for _ in range(reps + 1) for sql in SNAPSHOT_READS)
    res = subprocess.run([str(psql_binary()), conninfo, "-v", "ON_ERROR_STOP=1", "-X", "-q"],
                         input=script, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"psql failed: {res.stderr}")
    times = [float(m) for m in re.findall(r"^Time: ([0-9.]+) ms", res.stdout, re.M)]
    if len(times) != 2 * (reps + 1):
        raise RuntimeError(f"psql printed {len(times)} timings, expected {2 * (reps + 1)}:\n{res.stdout}")
    pairs = [times[i] + times[i + 1] for i in range(0, len(times), 2)]
    return pairs[1:]  # the first pair warms the server's caches, as in workload 5


def build_small_history(backend, cat: Catalog, snapshots=10):
    con = attached(backend, cat)
    con.execute("CREATE TABLE l.h (id BIGINT, v VARCHAR)")
    for i in range(snapshots - 2):
        con.execute(f"INSERT INTO l.h VALUES ({i}, 'v{i}')")
    n = con.execute("SELECT count(*) FROM ducklake_snapshots('l')").fetchone()[0]
    con.close()
    return n


# ---------------------------------------------------------------------------
# Server processes: memory and CPU
# ---------------------------------------------------------------------------

def server_pids(backend) -> list[int]:
    """The processes of a backend's server (PostgreSQL: postmaster and children)."""
    if isinstance(backend, RockLake):
        return [p.pid for p in backend.procs if p.poll() is None]
    out = subprocess.run(["pgrep", "-f", f"postgres.*{backend.datadir}"], capture_output=True, text=True)
    parents = [int(p) for p in out.stdout.split()]
    if not parents:
        return []
    children = subprocess.run(["pgrep", "-P", ",".join(map(str, parents))],
                              capture_output=True, text=True).stdout.split()
    return parents + [int(c) for c in children]


def rss_mib(pids) -> float:
    """Resident memory of PIDS in MiB."""
    total = 0
    for pid in pids:
        try:
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def cpu_seconds(pids) -> float:
    """User + system CPU seconds PIDS have used (processes that ended are not counted)."""
    total = 0
    for pid in pids:
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total / os.sysconf("SC_CLK_TCK")


def thread_files(pids, name: str):
    """(pid, thread id) and the text of /proc/PID/task/TID/NAME for every
    thread of PIDS (threads that end meanwhile are left out)."""
    for pid in pids:
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in threads:
            try:
                yield (pid, int(tid)), open(f"/proc/{pid}/task/{tid}/{name}").read()
            except OSError:
                continue


def context_switches(pids) -> dict[tuple[int, int], tuple[int, int]]:
    """Voluntary and involuntary context switches of every thread of PIDS,
    by (pid, thread id): a voluntary switch is a thread going to sleep, so
    its count is the number of hand-offs (waits for another thread, the
    kernel or the network) a workload caused."""
    out = {}
    for thread, status in thread_files(pids, "status"):
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        out[thread] = (int(fields["voluntary_ctxt_switches"]),
                       int(fields["nonvoluntary_ctxt_switches"]))
    return out


def thread_names(pids) -> dict[tuple[int, int], str]:
    """The name of every thread of PIDS (`session-7`, `tokio-runtime-w`,
    ...), with digits dropped so that threads of one kind add up."""
    names = {}
    for thread, comm in thread_files(pids, "comm"):
        name = comm.strip()
        names[thread] = name.rstrip("0123456789-") or name
    return names


def switches_by_thread(before: dict, after: dict, names: dict) -> dict[str, int]:
    """Voluntary context switches between the samples, by thread name."""
    out: dict[str, int] = {}
    for thread, (v, _) in after.items():
        name = names.get(thread, "?")
        out[name] = out.get(name, 0) + v - before.get(thread, (0, 0))[0]
    return out


def switches_between(before: dict, after: dict) -> tuple[int, int]:
    """Context switches (voluntary, involuntary) of the threads alive at
    both samples, between them."""
    voluntary = involuntary = 0
    for thread, (v, i) in after.items():
        v0, i0 = before.get(thread, (0, 0))
        voluntary += v - v0
        involuntary += i - i0
    return voluntary, involuntary


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

def rocklake_binary() -> pathlib.Path:
    """The server binary the benchmarks run: ROCKLAKE_BIN (relative to the
    repository when not absolute) or the release build."""
    binary = pathlib.Path(os.environ.get("ROCKLAKE_BIN", REPO_ROOT / "target" / "release" / "rocklake"))
    return binary if binary.is_absolute() else REPO_ROOT / binary


def rocklake_and_postgres(prefix: str, baseline_bin: str | None = None):
    """The working directory, DuckDB and the backends of a RockLake-against-
    PostgreSQL run: the release binary, a durable PostgreSQL 15 and, with
    `baseline_bin`, an older release binary as backend "baseline"."""
    binary = rocklake_binary()
    if not binary.is_file():
        sys.exit(f"{binary} missing: cargo build --release -p rocklake")
    workdir = pathlib.Path(tempfile.mkdtemp(prefix=prefix))
    duck = Duck(workdir, want_sqlite=False, may_install=False)
    backends = [RockLake(workdir, binary, duck), Postgres(workdir, duck, durable=True)]
    if baseline_bin:
        backends.append(RockLake(workdir, pathlib.Path(baseline_bin).resolve(), duck, name="baseline"))
    return workdir, duck, backends


def machine_info():
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    return {"cores": os.cpu_count(), "cpu": cpu, "memory": mem,
            "kernel": platform.release(), "python": platform.python_version()}


def git_rev():
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT,
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=REPO_ROOT, capture_output=True, text=True).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    except OSError:
        return "?"


def fmt(v):
    if v != v:  # nan
        return "-"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def render(results: Results, backends, settings_lines):
    names = [b.name for b in backends]
    header = ["workload", "n"] + [f"{n} median (p95) ms" for n in names]
    if "rocklake" in names and "postgres" in names:
        header.append("RockLake/PG")
    if "baseline" in names:
        header.append("RockLake/baseline")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for key, label, per in results.rows:
        reps = {len(v) for v in per.values()}
        cells = [f"{key} {label}", "/".join(str(r) for r in sorted(reps))]
        for n in names:
            s = per.get(n)
            cells.append(f"{fmt(statistics.median(s))} ({fmt(percentile(s, 95))})" if s else "-")
        if "rocklake" in names and "postgres" in names:
            a, b = per.get("rocklake"), per.get("postgres")
            cells.append(f"{statistics.median(a) / statistics.median(b):.2f}x" if a and b else "-")
        if "baseline" in names:
            a, b = per.get("rocklake"), per.get("baseline")
            cells.append(f"{statistics.median(a) / statistics.median(b):.2f}x" if a and b else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(settings_lines + [""] + lines + [""] + results.notes)


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def _exit_on_signal(signum, _frame):
    raise SystemExit(128 + signum)


def main():
    # SIGTERM/SIGHUP unwind like Ctrl-C, so the servers are stopped and temp dirs removed.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    signal.signal(signal.SIGHUP, _exit_on_signal)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (~500 files/snapshots)")
    ap.add_argument("--backends", default="rocklake,postgres,sqlite")
    ap.add_argument("--pg-nondurable", action="store_true",
                    help="PostgreSQL with fsync=off, synchronous_commit=off")
    ap.add_argument("--no-install", action="store_true",
                    help="do not pip install the sqlite_scanner extension wheel")
    ap.add_argument("--workloads", default="1,2,3,4,5,6", help="subset, e.g. 1,3")
    ap.add_argument("--snapshots", type=int, help="override N (snapshots of history)")
    ap.add_argument("--files", type=int, help="override F (data files of workload 4)")
    ap.add_argument("--json", help="also write the raw samples (ms) to this file")
    ap.add_argument("--keep", action="store_true", help="keep the temp directory")
    ap.add_argument("--baseline-bin",
                    help="also run this RockLake binary (e.g. the previous commit's release "
                         "build) as backend 'baseline', interleaved with the others")
    args = ap.parse_args()
    cfg = dict(QUICK if args.quick else FULL)
    if args.snapshots:
        cfg["snapshots"] = args.snapshots
    if args.files:
        cfg["files"] = args.files
    wanted = [b.strip() for b in args.backends.split(",") if b.strip()]
    workloads = {w.strip() for w in args.workloads.split(",")}

    binary = rocklake_binary()
    if "rocklake" in wanted and not binary.is_file():
        sys.exit(f"{binary} missing: build it with `cargo build --release -p rocklake`")

    workdir = pathlib.Path(tempfile.mkdtemp(prefix="rocklake-bench-"))
    duck = Duck(workdir, "sqlite" in wanted, not args.no_install)
    results = Results()
    backends = []
    t_begin = time.perf_counter()
    try:
        for name in wanted:
            if name == "rocklake":
                backends.append(RockLake(workdir, binary, duck))
            elif name == "postgres":
                backends.append(Postgres(workdir, duck, durable=not args.pg_nondurable))
            elif name == "sqlite":
                if duck.sqlite_error:
                    results.notes.append(f"SQLite catalog skipped: {duck.sqlite_error}")
                    log(results.notes[-1])
                else:
                    backends.append(SQLite(workdir, duck))
            else:
                sys.exit(f"unknown backend {name}")
        if args.baseline_bin:
            backends.append(RockLake(workdir, pathlib.Path(args.baseline_bin).resolve(), duck,
                                     name="baseline"))

        n_snap, n_files = cfg["snapshots"], cfg["files"]

        if "1" in workloads:
            log("workload 1: ATTACH of a catalog with 10 tables, 100 snapshots")
            for b in backends:
                cat = b.new_catalog("attach")
                build_attach_catalog(b, cat)
                att, first = measure_attach(b, cat, cfg["attach_reps"], "SELECT count(*) FROM l.t3")
                results.add("1a", "ATTACH (10 tables, 100 snapshots), fresh DuckDB", b.name, att)
                results.add("1b", "first query after that ATTACH", b.name, first)
                cat.close()

        hist = {}
        if workloads & {"2", "5", "6"}:
            log(f"workload 2: 1-row autocommit INSERTs, growing the catalog to {n_snap} snapshots")
            for b in backends:
                cat = b.new_catalog("history")
                t = time.perf_counter()
                head, tail = run_history(b, cat, n_snap, cfg["insert1_reps"], cfg["insert1_reps"])
                log(f"  {b.name}: {n_snap} snapshots in {time.perf_counter() - t:.0f}s")
                results.add("2a", "1-row INSERT commit (inlined), first inserts", b.name, head)
                results.add("2b", f"1-row INSERT commit, last inserts (~{n_snap} snapshots)", b.name, tail)
                hist[b.name] = cat

        if "3" in workloads:
            log("workload 3: 1000-row INSERT (Parquet)")
            for b in backends:
                cat = b.new_catalog("insert1000")
                results.add("3", "1000-row INSERT commit (1 Parquet file)", b.name,
                            run_insert1000(b, cat, cfg["insert1000_reps"]))
                cat.close()

        if "4" in workloads:
            log(f"workload 4: selective query over {n_files} data files")
            for b in backends:
                cat = b.new_catalog("files")
                nfiles, build_s = build_many_files(b, cat, n_files, cfg["file_batch"])
                log(f"  {b.name}: {nfiles} files written and committed in {build_s:.0f}s")
                results.notes.append(f"{b.name}: workload 4 setup wrote {nfiles} files in "
                                     f"{build_s:.1f}s ({cfg['file_batch']} INSERTs per commit)")
                results.add("4", f"selective query, {nfiles} files, prunes to 1", b.name,
                            run_file_query(b, cat, n_files, cfg["query_reps"]))
                cat.close()

        if "5" in workloads:
            log(f"workload 5: count(*) over ducklake_snapshots with {n_snap} snapshots")
            for b in backends:
                n, samples = run_snapshot_count(b, hist[b.name], cfg["snap_reps"])
                results.add("5", f"count(*) FROM ducklake_snapshots ({n} snapshots)", b.name, samples)
            for b in backends:
                if b.name in ("rocklake", "baseline", "postgres"):
                    results.add("5s", "server time of 5's two catalog reads (psql, no DuckDB)", b.name,
                                run_snapshot_reads_server(hist[b.name], cfg["snap_reps"]))

        if "6" in workloads:
            log(f"workload 6: ATTACH with 10 vs {n_snap} snapshots")
            for b in backends:
                small = b.new_catalog("small")
                n = build_small_history(b, small, 10)
                att, first = measure_attach(b, small, cfg["growth_reps"], "SELECT count(*) FROM l.h")
                results.add("6a", f"ATTACH, {n} snapshots", b.name, att)
                results.add("6b", f"first query after ATTACH, {n} snapshots", b.name, first)
                small.close()
                att, first = measure_attach(b, hist[b.name], cfg["growth_reps"], "SELECT count(*) FROM l.h")
                results.add("6c", f"ATTACH, {n_snap} snapshots", b.name, att)
                results.add("6d", f"first query after ATTACH, {n_snap} snapshots", b.name, first)

        for cat in hist.values():
            cat.close()
    finally:
        for b in backends:
            b.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    total = time.perf_counter() - t_begin
    m = machine_info()
    reps = ", ".join(f"{k}={v}" for k, v in cfg.items())
    settings = [
        f"RockLake catalog benchmark ({'quick' if args.quick else 'full'} run, {total:.0f}s)",
        f"machine: {m['cores']} cores ({m['cpu']}), {m['memory']} RAM, Linux {m['kernel']}",
        f"build: rocklake release, "
        f"{'binary from ROCKLAKE_BIN' if 'ROCKLAKE_BIN' in os.environ else 'work tree ' + git_rev()}; DuckDB {duck.version}; Python {m['python']}",
        f"sizes/repetitions: {reps}",
    ] + [f"backend {b.name}: {b.describe()}" for b in backends]
    report = render(results, backends, settings)
    print(report)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"settings": settings, "notes": results.notes,
                       "rows": [{"key": k, "label": l, "samples_ms": s} for k, l, s in results.rows]},
                      f, indent=1)


if __name__ == "__main__":
    main()
