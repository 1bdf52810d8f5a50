"""Running one test file inside a worker process: records are read and executed in
order (loops are collected up to `endloop`, then run), and the first failing
record ends the file.  `run_worker` writes the outcome for the orchestrator."""

from __future__ import annotations

import json
import os
import sys
import traceback

from . import commands as cmd
from .database import Database
from .errors import ErrorMessagePolicy, TestFailure, TestSkip, TestUnsupported, error_text, truncate
from .parser import SLEEP_UNITS, Record, RecordReader
from .render import ResultChecker, ValueCaster
from .require import check_require
from .substitution import Keywords, LoopState


class FileRunner:
    """The state of one test file while it runs, and the execution of its records."""

    def __init__(self, spec: dict):
        self.spec = spec
        self.file_name = spec["test"]                  # e.g. test/sql/general/x.test
        self.root = spec["root"]
        self.test_dir = spec["test_dir"]
        self.keywords = Keywords(self.root, self.file_name, self.test_dir, spec["config_env"])
        self.database = Database(spec["extension_dir"], spec["static_extensions"], spec.get("on_init") or "",
                                 self.test_dir, self.keywords, self.log)
        self.caster = ValueCaster()
        self.checker = ResultChecker(self.keywords, self.caster)
        self.errors = ErrorMessagePolicy(spec.get("skip_error_messages"))
        self.finished = False
        self.statements_run = 0
        self.queries_run = 0
        self.active_loops: list[cmd.Loop] = []
        self.top_loop: cmd.Loop | None = None
        self.reader: RecordReader | None = None
        self._handlers = {
            "statement": self._statement, "query": self._query, "hash-threshold": self._hash_threshold,
            "set": self._set, "reset": self._reset,
            "loop": self._loop, "concurrentloop": self._loop, "foreach": self._loop, "concurrentforeach": self._loop,
            "endloop": self._endloop, "require": self._require, "test-env": self._test_env,
            "require-env": self._require_env, "load": self._load, "restart": self._restart,
            "reconnect": self._reconnect, "sleep": self._sleep, "unzip": self._unzip, "continue": self._continue,
        }

    @property
    def skip_reason(self):
        """Why the file was skipped on an ignored error message (or None)."""
        return self.errors.skip_reason

    def log(self, msg):
        """A line in the worker log."""
        print(f"[{self.file_name}] {msg}", file=sys.stderr, flush=True)

    def run(self):
        """Run the file; raises TestFailure, TestSkip or TestUnsupported if it does not pass."""
        reader = self.reader = RecordReader(os.path.join(self.root, self.file_name), self.file_name)
        self.database.load(self.database.path, True)
        while reader.advance():
            if self.finished:
                break
            record = reader.read()
            if record is None:
                continue
            if record.kind == "halt":
                break
            self._handlers[record.kind](record)
        if self.active_loops:
            reader.fail("Missing endloop!")

    # -- commands: run now, or collected into the innermost open loop ------
    def _schedule(self, command: cmd.Command):
        if self.active_loops:
            self.active_loops[-1].commands.append(command)
        else:
            command.execute(cmd.ExecContext())

    def _statement(self, rec):
        self._schedule(cmd.Statement(self, rec))

    def _query(self, rec):
        self._schedule(cmd.Query(self, rec))

    def _reset(self, rec: Record):
        self._schedule(cmd.ResetLabel(self, rec.line, rec.params[1]))

    def _load(self, rec: Record):
        readonly = len(rec.params) > 1 and rec.params[1].lower() == "readonly"
        path = self.keywords.replace(rec.params[0]) if rec.params else ""
        self._schedule(cmd.Load(self, rec.line, path, readonly))

    def _restart(self, rec: Record):
        load_extensions = not (len(rec.params) == 1 and rec.params[0] == "no_extension_load")
        self._schedule(cmd.Restart(self, rec.line, load_extensions))

    def _reconnect(self, rec: Record):
        self._schedule(cmd.Reconnect(self, rec.line))

    def _sleep(self, rec: Record):
        self._schedule(cmd.Sleep(self, rec.line, int(rec.params[0]) * SLEEP_UNITS[rec.params[1]]))

    def _unzip(self, rec: Record):
        src = self.keywords.replace(rec.params[0])
        if not src.endswith(".gz"):
            self.reader.fail("unzip: input has not a GZIP extension")
        filename = src[src.rfind("/") + 1:-3]
        default = self.keywords.replace("__TEST_DIR__/" + filename)
        dst = self.keywords.replace(rec.params[1]) if len(rec.params) == 2 else default
        if dst == "NULL":
            dst = default
        self._schedule(cmd.Unzip(self, rec.line, src, dst))

    def _continue(self, rec: Record):
        if not self.active_loops:
            self.reader.fail("continue cannot be called outside of a loop")
        self._schedule(cmd.Continue(self, rec.line, rec.conditions))

    # -- loops -----------------------------------------------------------------
    def _loop(self, rec):
        loop = cmd.Loop(self, rec.line, LoopState(rec.name, rec.start, rec.start, rec.end, rec.parallel,
                                                  rec.tokens))
        if self.active_loops:
            self.active_loops[-1].commands.append(loop)
        else:
            self.top_loop = loop
        self.active_loops.append(loop)

    def _endloop(self, rec: Record):
        if not self.active_loops:
            self.reader.fail("endloop without active loop!")
        self.active_loops.pop()
        if not self.active_loops:
            loop, self.top_loop = self.top_loop, None
            loop.execute(cmd.ExecContext())

    # -- directives that take effect while the file is read ---------------------
    def _hash_threshold(self, rec: Record):
        self.checker.hash_threshold = int(rec.params[0])

    def _set(self, rec: Record):
        option = rec.params[0]
        if option == "seed":
            self.database.con.execute(f"SELECT SETSEED({float(rec.params[1])})")
        else:
            self.errors.set_messages(option, rec.params[1:])

    def _require(self, rec: Record):
        if not check_require(rec.params, self.database, self.reader.fail):
            raise TestSkip("require " + rec.params[0])

    def _test_env(self, rec: Record):
        if self.active_loops:
            self.reader.fail("test-env cannot be called in a loop")
        if len(rec.params) != 2:
            self.reader.fail("test-env requires 2 arguments: <env name> <default env val>")
        self.keywords.define_test_env(rec.params[0], rec.params[1])

    def _require_env(self, rec: Record):
        if self.active_loops:
            self.reader.fail("require-env cannot be called in a loop")
        if len(rec.params) not in (1, 2):
            self.reader.fail("require-env requires 1 argument: <env name> [optional: <expected env val>]")
        self.keywords.require_env(rec.params, self.reader.fail)


def run_worker(spec_path: str):
    """Worker process: run the file described by the JSON spec, write its result file
    and exit (without closing DuckDB, which could hang on a dead catalog server)."""
    with open(spec_path) as f:
        spec = json.load(f)
    os.chdir(spec["root"])
    result = {"outcome": "pass", "line": None, "message": None, "sql": None}
    runner = FileRunner(spec)
    try:
        runner.run()
        if runner.skip_reason:
            result.update(outcome="skip", message=runner.skip_reason)
    except TestSkip as s:
        result.update(outcome="skip", message=str(s))
    except TestUnsupported as u:
        result.update(outcome="unsupported", line=u.line, message=f"unsupported: {u.message}")
    except TestFailure as f:
        result.update(outcome="fail", line=f.line, message=f.message,
                      sql=truncate(f.sql, 2000) if f.sql else None)
    except Exception as e:  # noqa: BLE001
        result.update(outcome="fail", message=f"runner exception: {error_text(e)}",
                      traceback=traceback.format_exc(limit=8))
    result["statements"] = runner.statements_run
    result["queries"] = runner.queries_run
    with open(spec["result_file"], "w") as f:
        json.dump(result, f)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
