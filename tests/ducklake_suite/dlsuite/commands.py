"""Executable records (SQLLogicTestRunner's Command classes): statements, queries,
loops (sequential and concurrent), restart/reconnect/load, sleep, unzip, ...

Each command runs against a `FileRunner` (see execute.py) that holds the state of
the file: its database, variables, result checker and error-message policy."""

from __future__ import annotations

import gzip
import os
import shutil
import threading
import time

from .database import run_query, run_statement
from .errors import TestFailure, TestUnsupported, error_text, truncate
from .render import matches_regex
from .substitution import LoopState, loop_conditions_hold


class ExecContext:
    """Where a command runs: the running loops and, in a concurrent loop, its own connection."""

    def __init__(self, con=None, running_loops=None, parallel=False):
        self.con = con
        self.running_loops = running_loops if running_loops is not None else []
        self.parallel = parallel
        self.sql = None
        self.failure = None


class Command:
    """A record that executes; subclasses implement `execute_internal`."""
    supports_concurrent = False

    def __init__(self, runner, line, conditions=None):
        self.runner = runner
        self.line = line
        self.conditions = conditions or []
        self.connection_name = ""
        self.base_sql = None

    def execute(self, ctx: ExecContext):
        """Run the command unless the file is finished or a loop condition excludes it."""
        r = self.runner
        if r.finished:
            return
        if not loop_conditions_hold(ctx.running_loops, self.conditions):
            return
        if self.base_sql is not None:
            ctx.sql = (self.base_sql if not ctx.running_loops
                       else r.keywords.loop_replacement(self.base_sql, ctx.running_loops))
        self.execute_internal(ctx)

    def execute_internal(self, ctx: ExecContext):
        """Do the work of the command (`ctx.sql` holds its substituted SQL, if any)."""
        raise NotImplementedError

    def connection(self, ctx):
        """The connection the record names (main, `con1`..., or the concurrent loop's)."""
        if not self.connection_name:
            if ctx.parallel:
                return ctx.con
            return self.runner.database.con
        if ctx.parallel:
            raise RuntimeError("Named connections not supported in parallel loop")
        return self.runner.database.named_connection(self.connection_name)

    def failed(self, ctx, message):
        """A check failed: abort the file (or, in a concurrent loop, record it)."""
        loops = ", ".join(f"{lp.name}={lp.value()}" for lp in ctx.running_loops)
        if loops:
            message = f"{message} [loop {loops}]"
        failure = TestFailure(self.line, message, ctx.sql)
        if ctx.parallel:
            self.runner.finished = True
            if ctx.failure is None:
                ctx.failure = failure
            return
        raise failure


class Statement(Command):
    """`statement ok|error|maybe`: run the SQL, check success or the error message."""
    supports_concurrent = True

    def __init__(self, runner, record):
        super().__init__(runner, record.line, record.conditions)
        self.expected = record.expected
        self.expected_error = record.expected_error
        self.connection_name = record.connection
        self.base_sql = runner.keywords.replace(record.sql)

    def execute_internal(self, ctx):
        r = self.runner
        err = run_statement(self.connection(ctx), ctx.sql)
        r.statements_run += 1
        if self.expected != "ok":
            return self._check_error(ctx, err)
        if err is None:
            return None
        if r.errors.is_ignored(err):
            r.finished = True
            return None
        return self.failed(ctx, f"statement failed: {truncate(err)}")

    def _check_error(self, ctx, err):
        if err is not None and self.runner.errors.always_fails(err):
            return self.failed(ctx, f"internal error (never expected): {truncate(err)}")
        if err is not None and self.expected_error:
            if not self._error_matches(err) and not self.runner.errors.is_ignored(err):
                return self.failed(ctx, f"wrong error: expected {truncate(self.expected_error)!r}, "
                                        f"got {truncate(err)!r}")
            return None
        if err is None and self.expected == "error":
            return self.failed(ctx, "statement succeeded but an error was expected"
                               + (f" ({truncate(self.expected_error)!r})" if self.expected_error else ""))
        return None

    def _error_matches(self, err) -> bool:
        exp = self.expected_error
        if exp in err or self.runner.keywords.replace(exp) in err:
            return True
        return (exp.startswith("<REGEX>:") or exp.startswith("<!REGEX>:")) and matches_regex(err + "\n", exp)


class Query(Command):
    """`query`: run the SQL once and compare its rendered result."""
    supports_concurrent = True

    def __init__(self, runner, record):
        super().__init__(runner, record.line, record.conditions)
        self.base_sql = runner.keywords.replace(record.sql)
        self.expected_columns = record.expected_columns
        self.values = record.values
        self.sort_style = record.sort_style
        self.connection_name = record.connection
        self.label = record.label

    def execute_internal(self, ctx):
        r = self.runner
        res = run_query(self.connection(ctx), ctx.sql, r.caster)
        r.queries_run += 1
        if res.error is not None:
            if r.errors.is_ignored(res.error):
                r.finished = True
                return
            self.failed(ctx, f"query failed: {truncate(res.error)}")
            return
        msg = r.checker.check(self, ctx.running_loops, res)
        if msg is not None:
            self.failed(ctx, msg)


class ResetLabel(Command):
    """`reset label X`."""
    supports_concurrent = True

    def __init__(self, runner, line, label):
        super().__init__(runner, line)
        self.label = label

    def execute_internal(self, ctx):
        if not self.runner.checker.reset_label(self.label):
            self.failed(ctx, f"reset label: unknown label {self.label}")


class Restart(Command):
    """`restart [no_extension_load]`."""

    def __init__(self, runner, line, load_extensions):
        super().__init__(runner, line)
        self.load_extensions = load_extensions

    def execute_internal(self, ctx):
        if ctx.parallel:
            raise RuntimeError("Cannot restart database in parallel")
        self.runner.database.restart(self.load_extensions)


class Reconnect(Command):
    """`reconnect`."""

    def execute_internal(self, ctx):
        if ctx.parallel:
            raise RuntimeError("Cannot reconnect in parallel")
        self.runner.database.reconnect()


class Sleep(Command):
    """`sleep N unit`."""

    def __init__(self, runner, line, seconds):
        super().__init__(runner, line)
        self.seconds = seconds

    def execute_internal(self, ctx):
        time.sleep(self.seconds)


class Unzip(Command):
    """`unzip src.gz [dst]`."""

    def __init__(self, runner, line, src, dst):
        super().__init__(runner, line)
        self.src, self.dst = src, dst

    def execute_internal(self, ctx):
        try:
            with gzip.open(self.src, "rb") as fin, open(self.dst, "wb") as fout:
                shutil.copyfileobj(fin, fout, 1 << 20)
        except OSError as e:
            raise TestFailure(self.line, f"unzip {self.src} -> {self.dst} failed: {e}")


class Load(Command):
    """`load [path] [readonly]`: (re)open the database from a file."""

    def __init__(self, runner, line, dbpath, readonly):
        super().__init__(runner, line)
        self.dbpath, self.readonly = dbpath, readonly

    def execute_internal(self, ctx):
        keywords, database = self.runner.keywords, self.runner.database
        path = keywords.loop_replacement(self.dbpath, ctx.running_loops) if ctx.running_loops else self.dbpath
        if not self.readonly and path:
            for p in (path, path + ".wal"):
                try:
                    os.remove(p)
                except OSError:
                    pass
        database.path = path
        database.read_only = self.readonly
        database.load(path, True)


class Continue(Command):
    """`continue`: skip the rest of the current loop iteration."""

    def execute_internal(self, ctx):
        ctx.running_loops[-1].skipped = True


class Loop(Command):
    """`loop`/`foreach` and their concurrent forms, with the commands up to `endloop`."""

    def __init__(self, runner, line, definition: LoopState):
        super().__init__(runner, line)
        self.definition = definition
        self.commands: list[Command] = []

    @property
    def supports_concurrent(self):
        """A loop can run in a concurrent loop if all its commands can."""
        return all(c.supports_concurrent for c in self.commands)

    def execute_internal(self, ctx):
        d = self.definition.copy()
        d.idx = d.start
        if d.parallel:
            self._run_concurrently(ctx, d)
        else:
            self._run_sequentially(ctx, d)

    def _run_sequentially(self, ctx, d: LoopState):
        while not self.runner.finished:
            pos = len(ctx.running_loops)
            ctx.running_loops.append(d.copy())
            for c in self.commands:
                c.execute(ctx)
                if ctx.running_loops[pos].skipped:
                    break
            ctx.running_loops.pop()
            d.idx += 1
            if d.idx >= d.end:
                break

    def _run_concurrently(self, ctx, d: LoopState):
        """One thread and one new connection per iteration, as DuckDB's runner."""
        if any(lp.parallel for lp in ctx.running_loops):
            raise RuntimeError("Nested parallel loop commands not allowed")
        for c in self.commands:
            if not c.supports_concurrent:
                raise TestUnsupported(c.line, "concurrent loop over a command that cannot run concurrently")
        indexes = []
        while True:
            indexes.append(d.idx)
            d.idx += 1
            if d.idx >= d.end:
                break
        contexts = []
        for i in indexes:
            ld = d.copy()
            ld.idx = i
            contexts.append(ExecContext(None, [lp.copy() for lp in ctx.running_loops] + [ld], parallel=True))
        threads = []
        for ectx in contexts:
            t = threading.Thread(target=self._run_iteration, args=(ectx,), daemon=True)
            threads.append(t)
            t.start()
        for t in threads:
            t.join()
        for ectx in contexts:
            if ectx.failure is not None:
                raise ectx.failure

    def _run_iteration(self, ectx: ExecContext):
        try:
            ectx.con = self.runner.database.con.cursor()
            try:
                for c in self.commands:
                    c.execute(ectx)
            finally:
                try:
                    ectx.con.close()
                except Exception:  # noqa: BLE001
                    pass
        except TestFailure as f:
            ectx.failure = ectx.failure or f
        except Exception as e:  # noqa: BLE001
            ectx.failure = ectx.failure or TestFailure(self.line, f"concurrent loop: {error_text(e)}")
