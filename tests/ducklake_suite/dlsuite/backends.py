"""Catalog backends: each test file gets a fresh DuckLake catalog.

Every backend has `describe()`, `setup(index, workdir)` -> handle (with the `dbname`
to put into DUCKLAKE_CONNECTION, None for none, and the worker's extra `env`),
`check(handle)` (a note if the server died) and `teardown(handle)`."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import threading

from .processes import kill_group, tail, wait_for_port


class PostgresBackend:
    """One fresh database per file on a reference PostgreSQL server."""
    name = "postgres"

    def __init__(self, dsn, db_prefix):
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
        self.psycopg = psycopg
        self.params = conninfo_to_dict(dsn)
        self.admin_dsn = dsn
        self.prefix = db_prefix
        with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as c:
            self.version = c.execute("SHOW server_version").fetchone()[0]

    def describe(self):
        """One line naming the server."""
        p = self.params
        return f"PostgreSQL {self.version} at {p.get('host', '')}:{p.get('port', '5432')}"

    def setup(self, index, workdir):
        """(Re)create database PREFIX<index>; the worker reaches it through PG* variables."""
        dbname = f"{self.prefix}{index}"
        with self.psycopg.connect(self.admin_dsn, autocommit=True, connect_timeout=10) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
            c.execute(f'CREATE DATABASE "{dbname}"')
        env = {}
        for key, var in (("host", "PGHOST"), ("port", "PGPORT"), ("user", "PGUSER"),
                         ("password", "PGPASSWORD"), ("sslmode", "PGSSLMODE")):
            if self.params.get(key):
                env[var] = str(self.params[key])
        return {"dbname": dbname, "env": env}

    def check(self, handle):
        """Nothing to check: the server is not ours."""
        return None

    def teardown(self, handle):
        """Drop the file's database."""
        try:
            with self.psycopg.connect(self.admin_dsn, autocommit=True, connect_timeout=10) as c:
                c.execute(f'DROP DATABASE IF EXISTS "{handle["dbname"]}" WITH (FORCE)')
        except Exception as e:  # noqa: BLE001
            print(f"warning: could not drop {handle['dbname']}: {e}", file=sys.stderr)


class DuckDBFileBackend:
    """Control run: no catalog server; DUCKLAKE_CONNECTION keeps each file's default
    (a DuckDB file under __TEST_DIR__), as DuckLake's default test configuration."""
    name = "duckdb"

    def describe(self):
        """One line naming the backend."""
        return "DuckDB-file catalogs (each file's test-env default)"

    def setup(self, index, workdir):
        """Nothing to set up (dbname None: no test_env override)."""
        return {"dbname": None, "env": {}}

    def check(self, handle):
        """Nothing to check."""
        return None

    def teardown(self, handle):
        """Nothing to tear down."""


class RockLakeBackend:
    """One fresh RockLake server (and catalog directory) per file."""
    name = "rocklake"

    def __init__(self, binary, serve_args, host, port_lo, port_hi, dbname, start_timeout):
        if not os.path.isfile(binary):
            raise SystemExit(f"RockLake binary not found: {binary} (use --rocklake-bin or ROCKLAKE_BIN)")
        self.binary = binary
        self.serve_args = serve_args
        self.host = host
        self.lo, self.hi = port_lo, port_hi
        self.dbname = dbname
        self.start_timeout = start_timeout
        self.ports_taken: set[int] = set()
        self.lock = threading.Lock()
        self.next_port = port_lo

    def describe(self):
        """One line naming the server binary."""
        return f"RockLake {self.binary}"

    def _pick_port(self):
        with self.lock:
            # rotate through the range so a just-closed port is not reused at once
            span = self.hi - self.lo + 1
            for k in range(span):
                port = self.lo + (self.next_port - self.lo + k) % span
                if port in self.ports_taken:
                    continue
                with socket.socket() as s:
                    try:
                        s.bind((self.host, port))
                    except OSError:
                        continue
                self.ports_taken.add(port)
                self.next_port = port + 1 if port < self.hi else self.lo
                return port
        raise RuntimeError(f"no free port in {self.lo}-{self.hi}")

    def setup(self, index, workdir):
        """Start a server on a free port with its catalog under `workdir`; wait for its port."""
        port = self._pick_port()
        catalog = os.path.join(workdir, "catalog")
        log_path = os.path.join(workdir, "server.log")
        args = [a.format(catalog_dir=catalog, host=self.host, port=port) for a in shlex.split(self.serve_args)]
        cmd = [self.binary, *args]
        handle = {"port": port, "log": log_path, "proc": None, "dbname": self.dbname}
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    cwd=workdir, start_new_session=True)
        handle["proc"] = proc
        err = wait_for_port(self.host, port, self.start_timeout, proc)
        if err:
            self.teardown(handle)
            raise RuntimeError(f"RockLake did not start ({shlex.join(cmd)}): {err}: {tail(log_path)}")
        handle["env"] = {"PGHOST": self.host, "PGPORT": str(port)}
        return handle

    def check(self, handle):
        """A note if the server exited while the file ran."""
        proc = handle.get("proc")
        if proc is not None and proc.poll() is not None:
            return f"RockLake server exited with code {proc.returncode}: {tail(handle['log'], 5)}"
        return None

    def teardown(self, handle):
        """Stop the server (SIGTERM, then SIGKILL) and free its port."""
        proc = handle.get("proc")
        if proc is not None and proc.poll() is None:
            kill_group(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                kill_group(proc, signal.SIGKILL)
                proc.wait(timeout=10)
        with self.lock:
            self.ports_taken.discard(handle["port"])


def make_backend(args):
    """The backend selected on the command line."""
    if args.backend == "postgres":
        return PostgresBackend(args.pg_dsn, args.pg_db_prefix)
    if args.backend == "duckdb":
        return DuckDBFileBackend()
    lo, hi = (int(x) for x in args.ports.split("-"))
    return RockLakeBackend(args.rocklake_bin, args.rocklake_args, args.host, lo, hi,
                           args.rocklake_dbname, args.start_timeout)
