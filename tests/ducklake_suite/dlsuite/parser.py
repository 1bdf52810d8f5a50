"""Reading a test file: the line-level parser of DuckDB's SQLLogicParser and the
syntax of each record (statement, query, loop, ... directives), as parsed by
SQLLogicTestRunner::ExecuteFile.  What needs the database or the current
variables (substitution, `require`, `test-env`, ...) is left to the caller."""

from __future__ import annotations

import dataclasses

from .errors import TestFailure, TestUnsupported
from .render import SORT_STYLES
from .substitution import expand_foreach_token

# directives that must be followed by an empty line
SINGLE_LINE_DIRECTIVES = {"hash-threshold", "halt", "mode", "set", "reset", "loop", "foreach", "concurrentloop",
                          "concurrentforeach", "endloop", "require", "require-env", "test-env", "load",
                          "restart", "reconnect", "sleep", "unzip", "tags", "continue"}
KNOWN_TOKENS = SINGLE_LINE_DIRECTIVES | {"skipif", "onlyif", "statement", "query"}
SLEEP_UNITS = {"second": 1.0, "seconds": 1.0, "sec": 1.0,
               "millisecond": 1e-3, "milliseconds": 1e-3, "milli": 1e-3,
               "microsecond": 1e-6, "microseconds": 1e-6, "micro": 1e-6,
               "nanosecond": 1e-9, "nanoseconds": 1e-9, "nano": 1e-9}


class LineParser:
    """Line-level parser, as DuckDB's SQLLogicParser."""

    def __init__(self, path: str, name: str):
        self.name = name
        with open(path, encoding="utf-8") as f:
            self.lines = [ln.replace("\r", "") for ln in f.read().split("\n")]
        # std::getline does not produce a last empty line for a trailing newline
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self.current = 0
        self.seen_statement = False

    @staticmethod
    def empty_or_comment(line: str) -> bool:
        """True for a line that separates records."""
        return line == "" or line.startswith("#")

    def fail(self, msg: str):
        """Raise a test file error at the current line."""
        raise TestFailure(self.current + 1, f"test file error: {msg}")

    def next_line_empty_or_comment(self) -> bool:
        """True if the line after the current one ends the record."""
        if self.current + 1 >= len(self.lines):
            return True
        return self.empty_or_comment(self.lines[self.current + 1])

    def next_statement(self) -> bool:
        """Move to the first line of the next record; False at the end of the file."""
        if self.seen_statement:
            while self.current < len(self.lines) and not self.empty_or_comment(self.lines[self.current]):
                self.current += 1
        self.seen_statement = True
        while self.current < len(self.lines) and self.empty_or_comment(self.lines[self.current]):
            self.current += 1
        return self.current < len(self.lines)

    def next_line(self):
        """Move to the next line."""
        self.current += 1

    def extract_statement(self) -> str:
        """The SQL lines up to `----` or the end of the record."""
        out = []
        while self.current < len(self.lines) and not self.empty_or_comment(self.lines[self.current]):
            if self.lines[self.current] == "----":
                break
            out.append(self.lines[self.current])
            self.current += 1
        return "\n".join(out)

    def extract_expected_result(self) -> list[str]:
        """The expected result lines after `----`."""
        if self.current < len(self.lines) and self.lines[self.current] == "----":
            self.current += 1
        out = []
        while self.current < len(self.lines) and self.lines[self.current] != "":
            out.append(self.lines[self.current])
            self.current += 1
        return out

    def extract_expected_error(self, expected: str) -> str:
        """The expected error message after `----` of a `statement error|maybe`."""
        expect_message = expected in ("error", "maybe")
        if self.current >= len(self.lines) or self.lines[self.current] != "----":
            if expect_message:
                self.fail("statement error and maybe needs to have an expected error message")
            return ""
        if not expect_message:
            self.fail("only statement error or maybe can have an expected error message, not statement ok")
        self.current += 1
        out = []
        while self.current < len(self.lines) and self.lines[self.current] != "":
            out.append(self.lines[self.current])
            self.current += 1
        return "\n".join(out)

    def tokenize(self):
        """The directive and parameters of the current line: (kind, params)."""
        if self.current >= len(self.lines):
            return None, []
        parts = self.lines[self.current].split()
        if not parts:
            self.fail("Empty line!?")
        if parts[0] not in KNOWN_TOKENS:
            self.fail(f"Unrecognized parameter {parts[0]}")
        return parts[0], parts[1:]


@dataclasses.dataclass
class Condition:
    """`skipif`/`onlyif` on a loop variable: `keyword op value`."""
    keyword: str
    value: str
    op: str
    skip_if: bool


def parse_conditions(parser: LineParser, text: str, conditions: list[Condition], skip_if: bool) -> bool:
    """Add the loop-variable conditions of `text` (`i=1&&j<3`); False if it names a system."""
    if not any(c in text for c in "=<>"):
        return False
    for cond in text.split("&&"):
        for op in ("<>", ">=", ">", "<=", "<", "="):
            if op in cond:
                parts = cond.split(op)
                break
        else:
            parts = []
        if len(parts) != 2:
            parser.fail("skipif/onlyif must be in the form of x=y or x>y, potentially separated by &&")
        conditions.append(Condition(parts[0].strip(), parts[1].strip(), op, skip_if))
    return True


@dataclasses.dataclass
class Record:
    """One record of a test file: its directive, first line, parameters and conditions."""
    kind: str
    line: int
    params: list[str]
    conditions: list[Condition]


@dataclasses.dataclass
class StatementRecord(Record):
    """`statement ok|error|maybe [connection]`."""
    expected: str = "ok"
    sql: str = ""
    expected_error: str = ""
    connection: str = ""


@dataclasses.dataclass
class QueryRecord(Record):
    """`query <types> [sort mode|connection] [label]` with its expected values."""
    expected_columns: int = 0
    sql: str = ""
    values: list[str] = dataclasses.field(default_factory=list)
    sort_style: str = "none"
    connection: str = ""
    label: str | None = None


@dataclasses.dataclass
class LoopRecord(Record):
    """`loop`/`foreach` (or their concurrent forms): the variable and its range or tokens."""
    name: str = ""
    start: int = 0
    end: int = 0
    parallel: bool = False
    tokens: list[str] = dataclasses.field(default_factory=list)


class RecordReader:
    """The records of one test file in order.  skipif/onlyif and `mode skip` are
    handled here; `read` returns None for a record that does not run."""

    def __init__(self, path: str, name: str):
        self.lines = LineParser(path, name)
        self.skip_level = 0
        self._parsers = {
            "statement": self._statement, "query": self._query, "hash-threshold": self._hash_threshold,
            "mode": self._mode, "set": self._set, "reset": self._reset,
            "loop": self._loop, "concurrentloop": self._loop,
            "foreach": self._foreach, "concurrentforeach": self._foreach,
            "load": self._load, "sleep": self._sleep, "unzip": self._unzip, "tags": self._nothing,
        }

    def advance(self) -> bool:
        """Move to the next record; False at the end of the file."""
        return self.lines.next_statement()

    def fail(self, msg: str):
        """Raise a test file error at the current line."""
        self.lines.fail(msg)

    def read(self) -> Record | None:
        """Parse the current record (after `advance`)."""
        p = self.lines
        kind, params = p.tokenize()
        if kind in SINGLE_LINE_DIRECTIVES and not p.next_line_empty_or_comment():
            p.fail("all test statements need to be separated by an empty line")
        conditions: list[Condition] = []
        while kind in ("skipif", "onlyif"):
            skip_if = kind == "skipif"
            if not params:
                p.fail("skipif/onlyif requires a single parameter (e.g. skipif duckdb)")
            system = params[0].lower()
            if not parse_conditions(p, system, conditions, skip_if):
                if (system == "duckdb") == skip_if:
                    return None
            p.next_line()
            kind, params = p.tokenize()
        if kind is None or (self.skip_level > 0 and kind != "mode"):
            return None
        record = Record(kind, p.current + 1, params, conditions)
        parse = self._parsers.get(kind)
        return parse(record) if parse else record

    def _statement(self, r: Record) -> StatementRecord:
        p, params = self.lines, r.params
        if not params:
            p.fail("statement requires at least one parameter (statement ok/error)")
        rec = StatementRecord(**vars(r))
        if params[0] in ("ok", "error", "maybe"):
            rec.expected = params[0]
        elif params[0] in ("debug", "debug_skip"):
            raise TestUnsupported(r.line, f"statement {params[0]}")
        else:
            p.fail("statement argument should be 'ok' or 'error")
        p.next_line()
        rec.sql = p.extract_statement()
        if rec.sql == "":
            p.fail("Unexpected empty statement text")
        rec.expected_error = p.extract_expected_error(rec.expected)
        if len(params) >= 2:
            rec.connection = params[1]
        return rec

    def _query(self, r: Record) -> QueryRecord:
        p, params = self.lines, r.params
        if not params:
            p.fail("query requires at least one parameter (query III)")
        rec = QueryRecord(**vars(r))
        for ch in params[0]:
            if ch not in "TIR":
                p.fail(f"unknown type character '{ch}' in string, expected T, I or R only")
        rec.expected_columns = len(params[0])
        if rec.expected_columns == 0:
            p.fail("query requires at least a single column in the result")
        p.next_line()
        rec.sql = p.extract_statement()
        rec.values = p.extract_expected_result()
        if len(params) > 1:
            if params[1] in SORT_STYLES:
                rec.sort_style = SORT_STYLES[params[1]]
            else:
                rec.connection = params[1]
        if len(params) > 2:
            rec.label = params[2]
        return rec

    def _hash_threshold(self, r: Record) -> Record:
        if len(r.params) != 1 or not r.params[0].lstrip("-").isdigit():
            self.fail("hash-threshold requires a number")
        return r

    def _mode(self, r: Record) -> None:
        if len(r.params) != 1:
            self.fail("mode requires one parameter")
        mode = r.params[0]
        if mode == "skip":
            self.skip_level += 1
        elif mode == "unskip":
            self.skip_level -= 1
        elif mode not in ("output_result", "no_output", "debug"):   # these only change printing
            raise TestUnsupported(r.line, f"mode {mode}")
        return None

    def _set(self, r: Record) -> Record:
        params = r.params
        if not params:
            self.fail("set requires at least 1 parameter")
        if params[0] == "seed":
            if len(params) != 2:
                self.fail("set seed requires a single seed value")
        elif params[0] not in ("ignore_error_messages", "always_fail_error_messages"):
            self.fail(f"unrecognized set parameter: {params[0]}")
        return r

    def _reset(self, r: Record) -> Record:
        if len(r.params) != 2:
            self.fail("Expected reset [type] [name] (e.g reset label my_label)")
        if r.params[0].lower() != "label":
            self.fail(f"unrecognized reset parameter: {r.params[0]}")
        return r

    def _loop(self, r: Record) -> LoopRecord:
        params = r.params
        if len(params) != 3:
            self.fail("Expected loop [iterator_name] [start] [end] (e.g. loop i 1 300)")
        try:
            start, end = int(params[1]), int(params[2])
        except ValueError:
            self.fail("loop_start and loop_end must be a number")
        return LoopRecord(**vars(r), name=params[0], start=start, end=end, parallel=r.kind == "concurrentloop")

    def _foreach(self, r: Record) -> LoopRecord:
        params = r.params
        if len(params) < 2:
            self.fail("expected foreach [iterator_name] [m1] [m2] [etc...]")
        tokens: list[str] = []
        for param in params[1:]:
            try:
                if not expand_foreach_token(param, tokens):
                    tokens.append(param)
            except TestUnsupported as u:
                u.line = r.line
                raise
        return LoopRecord(**vars(r), name=params[0], start=0, end=len(tokens),
                          parallel=r.kind == "concurrentforeach", tokens=tokens)

    def _load(self, r: Record) -> Record:
        params = r.params
        if len(params) > 1 and params[1].lower() not in ("readonly", "readwrite"):
            self.fail(f"parameter to 'load' is invalid, received '{params[1]}'")
        if len(params) > 2:
            raise TestUnsupported(r.line, "load with a storage version")
        return r

    def _sleep(self, r: Record) -> Record:
        if len(r.params) != 2:
            self.fail("sleep requires two parameter (e.g. sleep 1 second)")
        if r.params[1] not in SLEEP_UNITS:
            self.fail("Unrecognized sleep mode")
        return r

    def _unzip(self, r: Record) -> Record:
        if len(r.params) not in (1, 2):
            self.fail("unzip requires 1 argument: <path/to/file.db.gz> [<path/to/unzipped_file.db>]")
        return r

    @staticmethod
    def _nothing(r: Record) -> None:
        return None
