"""The DuckDB side of one test file: its database (a file or in-memory), the main
and the named connections, (re)loading extensions, and running a statement or a
query so that it executes exactly once."""

from __future__ import annotations

import os
import re

from .errors import TestFailure, error_text
from .render import Result, ValueCaster

RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)


class Database:
    """The DuckDB database of one test file and its connections."""

    def __init__(self, extension_dir: str, static_extensions: list[str], on_init: str, test_dir: str,
                 keywords, log):
        self.extension_dir = extension_dir
        self.static_extensions = static_extensions
        self.on_init = on_init
        self.test_dir = test_dir
        self.keywords = keywords
        self.log = log
        self.db = None
        self.con = None
        self.named = {}
        self.path = ""
        self.read_only = False
        self.extensions: list[str] = []       # loaded with `require`, reloaded on restart

    def _connect(self, path):
        import duckdb
        config = {
            "extension_directory": self.extension_dir,
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "allow_unsigned_extensions": True,
            "allow_unredacted_secrets": True,
        }
        if self.read_only:
            config["access_mode"] = "READ_ONLY"
        return duckdb.connect(path or ":memory:", config=config)

    def load(self, path, load_extensions: bool):
        """(Re)open the database at `path` ("" = in-memory) with the static extensions,
        and the `require`d ones if `load_extensions`."""
        self.close()
        self.db = self._connect(path)
        for ext in self.static_extensions:
            try:
                self.db.execute(f"LOAD {ext}")
            except Exception as e:  # noqa: BLE001 - as the C++ runner, ignore
                self.log(f"LOAD {ext} failed: {error_text(e)}")
        self.reconnect()
        if load_extensions:
            for ext in self.extensions:
                try:
                    self.db.execute(f"LOAD {ext}")
                except Exception:  # noqa: BLE001
                    pass

    def reconnect(self):
        """A new main connection (secret directory of the file, the config's on_init)."""
        self.con = self.db.cursor()
        secret_dir = os.path.join(self.test_dir, "test_secret_dir")
        self.con.execute(f"SET secret_directory='{secret_dir}'")
        if self.on_init:
            try:
                self.con.execute(self.keywords.replace(self.on_init))
            except Exception as e:  # noqa: BLE001
                raise TestFailure(None, f"Startup queries provided via on_init failed: {error_text(e)}")

    def restart(self, load_extensions: bool):
        """`restart`: reopen the database, keeping the search path."""
        search_path = None
        try:
            search_path = self.con.execute("SELECT current_setting('search_path')").fetchone()[0]
        except Exception:  # noqa: BLE001
            pass
        self.load(self.path, load_extensions)
        if search_path:
            try:
                self.con.execute(f"SET search_path = '{search_path}'")
            except Exception:  # noqa: BLE001
                pass

    def load_extension(self, name: str) -> bool:
        """`require <extension>`: LOAD it; False if it is not available."""
        try:
            self.db.execute(f"LOAD {name}")
        except Exception:  # noqa: BLE001
            return False
        if name not in self.extensions:
            self.extensions.append(name)
        return True

    def named_connection(self, name: str):
        """The extra connection `name` (con1, ...), created on first use."""
        con = self.named.get(name)
        if con is None:
            con = self.db.cursor()
            self.named[name] = con
        return con

    def close(self):
        """Close every connection and the database."""
        for c in list(self.named.values()) + [self.con, self.db]:
            if c is not None:
                try:
                    c.close()
                except Exception:  # noqa: BLE001
                    pass
        self.named = {}
        self.con = None
        self.db = None


def run_statement(con, sql: str) -> str | None:
    """Execute `sql`; the error message, or None on success."""
    try:
        con.execute(sql)
        return None
    except Exception as e:  # noqa: BLE001 - every DuckDB error is a statement error
        return error_text(e)


def _statement_kind(con, sql: str) -> str | None:
    """The type of the last statement (SELECT, CALL, ...; RETURNING if it has one)."""
    try:
        stmts = con.extract_statements(sql)
        if stmts:
            last = stmts[-1]
            kind = last.type.name
            if RETURNING.search(last.query or ""):
                kind = "RETURNING"
            return kind
    except Exception:  # noqa: BLE001 - let execution report the error
        return None
    return None


def run_query(con, sql: str, caster: ValueCaster) -> Result:
    """Execute `sql` once and render every value as the C++ runner does
    (Value::CastAs(VARCHAR)), i.e. cast by DuckDB itself:
      * the last statement a SELECT: a lazy relation, wrapped by a projection that
        casts each column to VARCHAR (executed once, as that projection);
      * CALL / EXPLAIN / ... RETURNING: the statement runs at once, its result is a
        materialized relation, projected the same way (no re-execution);
      * anything else (INSERT/UPDATE/DELETE/MERGE/COPY/CREATE/EXECUTE/...): executed
        with execute(), whose result (a row count, or nothing) comes back as Python
        values; those are rendered by casting them back in DuckDB."""
    try:
        kind = _statement_kind(con, sql)
        if kind in ("SELECT", "CALL", "EXPLAIN", "RETURNING"):
            rel = con.sql(sql)
            if rel is None:
                return Result(names=["Success"], types=["BOOLEAN"], rows=[])
            types = [str(t) for t in rel.types]
            names = list(rel.columns)
            proj = rel.project(", ".join(f"CAST(#{i + 1} AS VARCHAR)" for i in range(len(types))))
            rows = proj.fetchall()
            return Result(names=names, types=types, rows=rows)
        con.execute(sql)
        desc = con.description or [("Success", "BOOLEAN")]
        names = [d[0] for d in desc]
        types = [str(d[1]) for d in desc]
        rows = [tuple(caster.to_varchar(v, types[i]) for i, v in enumerate(row)) for row in con.fetchall()]
        return Result(names=names, types=types, rows=rows)
    except Exception as e:  # noqa: BLE001
        return Result(error=error_text(e))
