"""Command line of the runner (`run.py`): options, selecting the files and the
backend, running them in parallel, the summary and the report."""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import pathlib
import shutil
import sys
import tempfile
import time

from .backends import make_backend
from .config import DEFAULT_CONFIG, load_config
from .discovery import discover, find_root
from .execute import run_worker
from .orchestrator import Orchestrator
from .report import count_outcomes, print_summary, write_report

DESCRIPTION = """Run DuckLake's own SQL logic tests (test/sql/**/*.test of duckdb/ducklake) with
stock DuckDB from Python against a DuckLake catalog on a real PostgreSQL or on a
RockLake server, one fresh catalog per test file."""

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent.parent.parent
DEFAULT_EXT_DIR = os.environ.get("DUCKDB_EXTENSION_DIR", str(REPO_ROOT / ".venv" / "duckdb-ext"))


def build_parser() -> argparse.ArgumentParser:
    """The command-line options."""
    ap = argparse.ArgumentParser(description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tests", required=True,
                    help="DuckLake checkout (containing test/sql) or a directory below its test/sql")
    ap.add_argument("--backend", choices=("postgres", "rocklake", "duckdb"), default="postgres",
                    help="catalog: a fresh database per file on PostgreSQL, a fresh RockLake server per "
                         "file, or (a control run) the DuckDB-file catalog each test defaults to")
    ap.add_argument("--pg-dsn", default=os.environ.get("DLSUITE_PG_DSN",
                                                       "host=127.0.0.1 port=5432 user=postgres dbname=postgres"),
                    help="libpq string of the reference PostgreSQL, used to create/drop one database per "
                         "file (env DLSUITE_PG_DSN)")
    ap.add_argument("--pg-db-prefix", default="t_", help="name prefix of the per-file databases (t_N)")
    ap.add_argument("--rocklake-bin", default=os.environ.get("ROCKLAKE_BIN",
                                                             str(REPO_ROOT / "target" / "debug" / "rocklake")),
                    help="RockLake server binary (env ROCKLAKE_BIN, default <repo>/target/debug/rocklake)")
    ap.add_argument("--rocklake-args", default=os.environ.get("ROCKLAKE_SERVE_ARGS",
                                                              "serve {catalog_dir} --listen {host}:{port}"),
                    help="server argument template ({catalog_dir}, {host}, {port})")
    ap.add_argument("--rocklake-dbname", default="lake",
                    help="dbname that replaces the config's in DUCKLAKE_CONNECTION for RockLake")
    ap.add_argument("--host", default="127.0.0.1", help="address RockLake servers listen on")
    ap.add_argument("--ports", default="56440-56499", help="port range for RockLake servers (LO-HI)")
    ap.add_argument("--start-timeout", type=float, default=30, help="seconds to wait for a server's port")
    ap.add_argument("--config", default=None,
                    help=f"DuckDB test config (default: <checkout>/{DEFAULT_CONFIG})")
    ap.add_argument("--on-init", action="store_true",
                    help="also run the config's on_init SQL (with the per-file dbname); off by default since "
                         "every file gets a fresh catalog database anyway")
    ap.add_argument("--extension-dir", default=DEFAULT_EXT_DIR, help="DuckDB extension directory "
                    "(env DUCKDB_EXTENSION_DIR, default <repo>/.venv/duckdb-ext)")
    ap.add_argument("--jobs", type=int, default=1, help="files run at the same time")
    ap.add_argument("--filter", action="append", default=[],
                    help="glob on the file name relative to the checkout, e.g. 'test/sql/compaction/*' "
                         "(repeatable)")
    ap.add_argument("--include-slow", action="store_true", help="also run *.test_slow files")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per file")
    ap.add_argument("--report", help="write the JSON report here")
    ap.add_argument("--work-dir", default=None, help="where per-file scratch directories go (default: a temp dir)")
    ap.add_argument("--keep", choices=("none", "failed", "all"), default="none",
                    help="keep per-file scratch directories (server log, worker log)")
    return ap


def select_tests(args):
    """(checkout root, config path, config, files to run) for the options."""
    root, start = find_root(args.tests)
    config_path = args.config or str(root / DEFAULT_CONFIG)
    config = load_config(config_path)
    if config["autoloading"] not in ("none", "default"):
        print(f"warning: config autoloading={config['autoloading']!r} is not mirrored (autoloading is off)",
              file=sys.stderr)
    if config["unsupported_keys"]:
        print(f"warning: config keys not mirrored: {', '.join(config['unsupported_keys'])}", file=sys.stderr)
    files = discover(root, start, args.filter, args.include_slow)
    if not files:
        raise SystemExit("no test files matched")
    if args.backend == "duckdb" and not args.config:
        # the default configuration: nothing skipped, no test_env override
        config["skips"], config["env"], config["on_init"] = {}, {}, ""
        config_path += " (statically loaded extensions only)"
    return root, config_path, config, files


def run_files(orch: Orchestrator, files: list[str], jobs: int):
    """Run every file, `jobs` at a time; the entries in file order, or None if interrupted."""
    results = []
    futures = []
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        futures = [pool.submit(orch.run_file, i, f, len(files)) for i, f in enumerate(files)]
        for fut in futures:
            results.append(fut.result())
    except KeyboardInterrupt:
        print("interrupted: stopping workers and servers", file=sys.stderr)
        for fut in futures:
            fut.cancel()
        orch.abort()
        pool.shutdown(wait=False, cancel_futures=True)
        return None
    pool.shutdown(wait=True)
    return results


def main(argv=None) -> int:
    """Run the suite (or, with `--worker SPEC`, one file in a worker process); the exit status."""
    if argv is None:
        argv = sys.argv[1:]
    if len(argv) == 2 and argv[0] == "--worker":
        return run_worker(argv[1])
    args = build_parser().parse_args(argv)
    root, config_path, config, files = select_tests(args)
    backend = make_backend(args)
    if args.work_dir:
        os.makedirs(args.work_dir, exist_ok=True)
    work_base = tempfile.mkdtemp(prefix="dlsuite-", dir=args.work_dir)
    print(f"{len(files)} files from {root} ({config_path}); backend {backend.describe()}; "
          f"jobs {args.jobs}; timeout {args.timeout:.0f}s; scratch {work_base}", flush=True)

    orch = Orchestrator(args, backend, root, config, work_base)
    t0 = time.monotonic()
    results = run_files(orch, files, args.jobs)
    if results is None:
        return 130
    wall = time.monotonic() - t0
    if args.keep == "none":
        shutil.rmtree(work_base, ignore_errors=True)

    counts = count_outcomes(results)
    bad = print_summary(args.backend, results, counts, wall)
    if args.report:
        write_report(args.report, backend=args.backend, backend_description=backend.describe(),
                     tests=str(root), config=config_path, jobs=args.jobs, timeout=args.timeout, wall=wall,
                     counts=counts, results=results)
    return 0 if not bad else 1
