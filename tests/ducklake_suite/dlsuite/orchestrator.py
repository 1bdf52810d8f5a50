"""Running the test files: each in its own worker process (`run.py --worker spec.json`)
with a fresh catalog from the backend, a scratch directory and a timeout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from .config import rewrite_dbname, settings_of
from .processes import kill_group, tail
from .report import progress_line

ENTRY_POINT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "run.py")
# libpq variables of the runner's own environment that must not reach a worker
PG_VARIABLES = ("PGHOST", "PGPORT", "PGUSER", "PGPASSWORD", "PGDATABASE", "PGSSLMODE", "PGSERVICE")


class Orchestrator:
    """Runs files (from several threads) and prints a progress line for each."""

    def __init__(self, args, backend, root, config, work_base):
        self.args = args
        self.backend = backend
        self.root = str(root)
        self.config = config
        self.work_base = work_base
        self.lock = threading.Lock()
        self.done = 0
        self.procs: dict[int, subprocess.Popen] = {}
        self.handles: dict[int, dict] = {}

    def run_file(self, index, test, total) -> dict:
        """Run one file (the index-th of `total`); its report entry."""
        t0 = time.monotonic()
        entry = {"file": test, "outcome": None, "line": None, "message": None, "seconds": None}
        reason = self.config["skips"].get(test)
        if reason is not None:
            entry.update(outcome="skip", message=f"config skip_tests: {reason}", seconds=0.0)
            self.progress(entry, total)
            return entry
        workdir = tempfile.mkdtemp(prefix=f"f{index}-", dir=self.work_base)
        test_dir = os.path.join(workdir, "test_dir")
        os.makedirs(test_dir)
        handle = None
        try:
            try:
                handle = self.backend.setup(index, workdir)
            except Exception as e:  # noqa: BLE001
                entry.update(outcome="error", message=f"backend setup failed: {e}")
                return entry
            self.handles[index] = handle
            self._run_worker(index, test, workdir, test_dir, handle, entry)
        finally:
            self._finish(index, handle, workdir, entry, t0, total)
        return entry

    def _worker_spec(self, test, workdir, test_dir, handle) -> dict:
        dbname = handle["dbname"]
        if dbname is None:      # duckdb control backend: no catalog server, no test_env override
            config_env, on_init = {}, ""
        else:
            config_env = {k: rewrite_dbname(v, dbname) for k, v in self.config["env"].items()}
            on_init = (rewrite_dbname(self.config["on_init"], dbname) if self.args.on_init
                       else settings_of(self.config["on_init"]))
        return {
            "test": test,
            "root": self.root,
            "test_dir": test_dir,
            "extension_dir": self.args.extension_dir,
            "static_extensions": self.config["static_extensions"],
            "on_init": on_init,
            "config_env": config_env,
            "skip_error_messages": self.config["skip_error_messages"],
            "result_file": os.path.join(workdir, "result.json"),
        }

    def _run_worker(self, index, test, workdir, test_dir, handle, entry):
        spec = self._worker_spec(test, workdir, test_dir, handle)
        spec_path = os.path.join(workdir, "spec.json")
        with open(spec_path, "w") as f:
            json.dump(spec, f)
        env = dict(os.environ)
        for var in PG_VARIABLES:
            env.pop(var, None)
        env.update(handle["env"])
        worker_log = os.path.join(workdir, "worker.log")
        with open(worker_log, "wb") as log:
            proc = subprocess.Popen([sys.executable, ENTRY_POINT, "--worker", spec_path],
                                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=env, cwd=self.root, start_new_session=True)
        self.procs[index] = proc
        try:
            proc.wait(timeout=self.args.timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(proc)
            proc.wait()
        self._collect_result(entry, spec["result_file"], proc, timed_out, handle, worker_log)

    def _collect_result(self, entry, result_file, proc, timed_out, handle, worker_log):
        server_note = self.backend.check(handle)
        note = f"; {server_note}" if server_note else ""
        if timed_out:
            entry.update(outcome="timeout", message=f"no result after {self.args.timeout:.0f}s" + note)
        elif not os.path.exists(result_file):
            entry.update(outcome="error", message=f"worker died (exit {proc.returncode}): "
                         f"{tail(worker_log, 5)}" + note)
        else:
            with open(result_file) as f:
                res = json.load(f)
            entry.update(outcome=res["outcome"], line=res.get("line"), message=res.get("message"))
            for key in ("sql", "traceback", "statements", "queries"):
                if res.get(key) is not None:
                    entry[key] = res[key]
            if server_note and entry["outcome"] == "fail":
                entry["message"] = f"{entry['message']}; {server_note}"

    def _finish(self, index, handle, workdir, entry, t0, total):
        self.procs.pop(index, None)
        if handle is not None:
            self.backend.teardown(handle)
            self.handles.pop(index, None)
        entry["seconds"] = round(time.monotonic() - t0, 2)
        keep = self.args.keep == "all" or (self.args.keep == "failed" and entry["outcome"] not in
                                            ("pass", "skip"))
        if keep:
            entry["workdir"] = workdir
        else:
            shutil.rmtree(workdir, ignore_errors=True)
        self.progress(entry, total)

    def progress(self, entry, total):
        """Print the progress line of a finished file."""
        with self.lock:
            self.done += 1
            print(progress_line(entry, self.done, total), flush=True)

    def abort(self):
        """Kill every running worker and tear down every catalog (on Ctrl-C)."""
        for proc in list(self.procs.values()):
            kill_group(proc)
        for handle in list(self.handles.values()):
            try:
                self.backend.teardown(handle)
            except Exception:  # noqa: BLE001
                pass
