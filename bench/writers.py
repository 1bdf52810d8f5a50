"""DuckDB writer processes for the commit benchmarks (bench/commits.py,
bench/s3_latency.py): each writer is its own OS process with its own DuckDB
instance, attached to one catalog with DuckLake's default retry settings, and
commits 1-row autocommit INSERTs until a shared deadline.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import statistics
import time

import run as bench


@dataclasses.dataclass
class WriterResult:
    """What one writer did: latencies (s) of its acknowledged commits, and the
    commits DuckLake gave up on after its retries."""
    who: int
    latencies: list[float]
    failed: int
    first_error: str | None


def _writer(ext_dir: str, attach_sql: str, table: str, who: int, threads: int | None,
            barrier, deadline, out):
    """Body of one writer process (spawned: imports nothing of the parent)."""
    import duckdb
    con = duckdb.connect(":memory:", config={
        "extension_directory": ext_dir,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": True,
    })
    con.execute("LOAD ducklake")
    con.execute("LOAD postgres_scanner")
    if threads:
        con.execute(f"SET threads = {threads}")
    con.execute(attach_sql)
    latencies: list[float] = []
    failed = 0
    first_error = None
    barrier.wait()
    n = 0
    while time.time() < deadline.value:
        n += 1
        start = time.perf_counter()
        try:
            con.execute(f"INSERT INTO {table} VALUES ({who}, {n})")
            latencies.append(time.perf_counter() - start)
        except Exception as error:  # a commit DuckLake gave up on after its retries
            failed += 1
            first_error = first_error or str(error).splitlines()[0][:200]
    con.close()
    out.put(WriterResult(who, latencies, failed, first_error))


@dataclasses.dataclass
class RoundResult:
    """A round of WRITERS writers for SECONDS: totals and per-writer spread."""
    writers: int
    seconds: float
    commits: int
    failed: int
    per_writer_min: int
    p50_ms: float
    p99_ms: float
    first_error: str | None

    @property
    def commits_per_s(self) -> float:
        return self.commits / self.seconds


def run_writers(duck: bench.Duck, cat: bench.Catalog, writers: int, seconds: float,
                own_tables: bool, threads: int | None = None) -> RoundResult:
    """WRITERS processes insert for SECONDS into one shared table (or one
    table each), with DuckDB's `threads` setting THREADS (its default when
    None); checks afterwards that the tables hold exactly the rows of the
    acknowledged commits."""
    tables = [f"l.t{w}" for w in range(writers)] if own_tables else ["l.t0"]
    setup = duck.connect()
    setup.execute(cat.attach_sql())
    for table in tables:
        setup.execute(f"CREATE TABLE {table} (writer INTEGER, n INTEGER)")
    setup.close()
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(writers + 1)
    deadline = ctx.Value("d", 0.0)
    out = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(
        str(duck.ext_dir), cat.attach_sql(), tables[w if own_tables else 0], w, threads,
        barrier, deadline, out)) for w in range(writers)]
    for p in procs:
        p.start()
    deadline.value = time.time() + 3600  # set for real once all writers attached
    barrier.wait(timeout=300)
    began = time.time()
    deadline.value = began + seconds
    results = [out.get(timeout=seconds + 600) for _ in procs]
    elapsed = time.time() - began
    for p in procs:
        p.join(timeout=60)
    commits = sum(len(r.latencies) for r in results)
    check = duck.connect()
    check.execute(cat.attach_sql())
    rows = sum(check.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables)
    check.close()
    assert rows == commits, f"{rows} rows for {commits} acknowledged commits"
    latencies = [x for r in results for x in r.latencies]
    return RoundResult(
        writers=writers,
        seconds=elapsed,
        commits=commits,
        failed=sum(r.failed for r in results),
        per_writer_min=min(len(r.latencies) for r in results),
        p50_ms=bench.ms(statistics.median(latencies)) if latencies else float("nan"),
        p99_ms=bench.ms(bench.percentile(latencies, 99)) if latencies else float("nan"),
        first_error=next((r.first_error for r in results if r.first_error), None),
    )
