"""Fixtures for the end-to-end tests: DuckDB connections and catalog backends.

Backends (all expose `attach_sql(alias, data_path)`):
  * DuckDBFileBackend  - reference: `ducklake:<dir>/meta.ducklake`, needs no server;
  * PostgresBackend    - reference on a real PostgreSQL (only with ROCKLAKE_PG_REFERENCE=1);
  * RockLakeBackend    - the server under test, started from ROCKLAKE_BIN;
  * RockLakeS3Backend  - the same server with its catalog at s3://BUCKET/lake and
                         DuckDB's DATA_PATH at s3://BUCKET/data/..., both in an S3
                         emulator (s3s-fs) started once per session.

Tests marked `@pytest.mark.storages("local", "s3")` run once per storage: the
`rocklake` fixture is then a RockLakeBackend or a RockLakeS3Backend.

Environment:
  ROCKLAKE_BIN            server binary (default: <repo>/target/debug/rocklake)
  ROCKLAKE_SERVE_ARGS     override the server's argument template (see SERVE_ARGS)
  ROCKLAKE_DSN            override the libpq connection string template (see ROCKLAKE_DSN)
  ROCKLAKE_START_TIMEOUT  seconds to wait for the server's port (default 30)
  ROCKLAKE_STEP_TIMEOUT   seconds one statement may take before the server is killed (120)
  ROCKLAKE_PG_REFERENCE=1 also use a real PostgreSQL catalog as a reference
  DUCKDB_EXTENSION_DIR    extension directory (default: <repo>/.venv/duckdb-ext)
  ROCKLAKE_S3S_FS         S3 emulator binary (default: <repo>/.tools/bin/s3s-fs, which
                          scripts/test.sh installs)
"""

from __future__ import annotations

import os
import pathlib
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

# ---------------------------------------------------------------------------
# The RockLake command line and connection string: the one place to adjust.
# Placeholders: {catalog_dir}, {host}, {port}.
# ---------------------------------------------------------------------------
# {catalog_dir} is the catalog location: a directory, or s3://bucket/prefix.
SERVE_ARGS = os.environ.get("ROCKLAKE_SERVE_ARGS",
                            "serve {catalog_dir} --listen {host}:{port}")
ROCKLAKE_DSN = os.environ.get("ROCKLAKE_DSN",
                              "host={host} port={port} dbname=lake connect_timeout=10")


def _resolve_bin(path: str) -> str:
    """Relative ROCKLAKE_BIN: relative to the current directory, else to the repo root."""
    p = pathlib.Path(path)
    if p.is_absolute():
        return str(p)
    return str((pathlib.Path.cwd() / p) if (pathlib.Path.cwd() / p).exists() else REPO_ROOT / p)


ROCKLAKE_BIN = _resolve_bin(os.environ.get("ROCKLAKE_BIN", "target/debug/rocklake"))
START_TIMEOUT = float(os.environ.get("ROCKLAKE_START_TIMEOUT", "30"))
# A statement running longer than this against RockLake kills the server
# (libpq has no query timeout, so a server that never answers would hang the run).
STEP_TIMEOUT = float(os.environ.get("ROCKLAKE_STEP_TIMEOUT", "120"))

EXTENSION_DIR = os.environ.get("DUCKDB_EXTENSION_DIR", str(REPO_ROOT / ".venv" / "duckdb-ext"))
S3S_FS_BIN = _resolve_bin(os.environ.get("ROCKLAKE_S3S_FS", ".tools/bin/s3s-fs"))


def pytest_configure(config):
    config.addinivalue_line("markers", "rocklake: needs the RockLake server binary")
    config.addinivalue_line("markers", "reference: runs only against reference backends")
    config.addinivalue_line("markers", "storages(*names): run the test once per RockLake "
                            "storage ('local', 's3'); the rocklake fixture follows")


def pytest_generate_tests(metafunc):
    marker = metafunc.definition.get_closest_marker("storages")
    if marker is not None and "rocklake" in metafunc.fixturenames:
        metafunc.parametrize("rocklake", list(marker.args), indirect=True)


# ---------------------------------------------------------------------------
# DuckDB
# ---------------------------------------------------------------------------

def duckdb_connect(database: str = ":memory:"):
    import duckdb

    ext_dir = pathlib.Path(EXTENSION_DIR)
    if not (ext_dir / f"v{duckdb.__version__}").is_dir():
        pytest.fail(f"DuckDB extension dir {ext_dir}/v{duckdb.__version__} missing: "
                    "run scripts/setup-python.sh", pytrace=False)
    con = duckdb.connect(database, config={
        "extension_directory": str(ext_dir),
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": True,
    })
    con.execute("LOAD ducklake; LOAD postgres_scanner;")
    return con


@pytest.fixture
def duck():
    """Factory: duck() -> a new in-memory DuckDB connection with the extensions loaded.
    All connections are closed at teardown."""
    cons = []

    def make():
        con = duckdb_connect()
        cons.append(con)
        return con

    yield make
    for con in cons:
        try:
            con.close()
        except Exception:
            pass


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_for_port(host: str, port: int, timeout: float, proc: subprocess.Popen | None = None):
    """Wait until host:port accepts TCP connections. Returns None or an error text."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return f"process exited with code {proc.returncode} before listening"
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return None
        except OSError:
            time.sleep(0.1)
    return f"port {host}:{port} not accepting connections after {timeout:.0f}s"


# ---------------------------------------------------------------------------
# Backends
# ---------------------------------------------------------------------------

class Backend:
    name = "backend"

    def attach_sql(self, alias: str, data_path: str | os.PathLike) -> str:
        raise NotImplementedError

    def describe(self) -> str:
        return self.name

    def stop(self):
        pass


def _data_path_literal(data_path) -> str:
    p = str(data_path)
    if not p.endswith("/"):
        p += "/"
    return p.replace("'", "''")


class DuckDBFileBackend(Backend):
    """Reference catalog stored in a DuckDB database file."""
    name = "duckdb-file"

    def __init__(self, workdir: pathlib.Path):
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.meta = self.workdir / "meta.ducklake"

    def attach_sql(self, alias, data_path):
        meta = str(self.meta).replace("'", "''")
        return f"ATTACH 'ducklake:{meta}' AS {alias} (DATA_PATH '{_data_path_literal(data_path)}')"


class PostgresServer:
    """A throw-away PostgreSQL started with scripts/start-postgres.sh."""

    def __init__(self, extra_opts: list[str] | None = None, port: int | None = None):
        # Not under pytest's tmp dir: that is mode 0700 and the server may run
        # as the unprivileged "postgres" user.
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="rocklake-pg-"))
        self.root.chmod(0o755)
        self.datadir = self.root / "pgdata"
        self.port = port or free_port()
        self.extra_opts = extra_opts or []
        self._dbs = 0

    def start(self):
        env = dict(os.environ, PG_CREATE_DBS="")
        cmd = ["bash", str(REPO_ROOT / "scripts" / "start-postgres.sh"), str(self.datadir),
               str(self.port), *self.extra_opts]
        res = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"start-postgres.sh failed:\n{res.stdout}\n{res.stderr}")

    def stop(self, remove: bool = True):
        subprocess.run(["bash", str(REPO_ROOT / "scripts" / "stop-postgres.sh"), str(self.datadir)]
                       + (["--remove"] if remove else []), capture_output=True)
        if remove:
            shutil.rmtree(self.root, ignore_errors=True)

    def psql(self, sql: str, db: str = "postgres") -> str:
        pgbin = sorted(pathlib.Path("/usr/lib/postgresql").glob("*/bin/psql"))[-1]
        res = subprocess.run([str(pgbin), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                              "-d", db, "-v", "ON_ERROR_STOP=1", "-tAc", sql],
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"psql {sql!r} failed: {res.stderr}")
        return res.stdout

    def new_database(self, prefix: str = "lake") -> str:
        self._dbs += 1
        name = f"{prefix}_{os.getpid()}_{self._dbs}"
        self.psql(f'CREATE DATABASE "{name}"')
        return name

    def dsn(self, db: str) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={db}"


class PostgresBackend(Backend):
    """Reference catalog in a fresh database of a real PostgreSQL."""
    name = "postgres"

    def __init__(self, server: PostgresServer):
        self.server = server
        self.db = server.new_database()

    def attach_sql(self, alias, data_path):
        return (f"ATTACH 'ducklake:postgres:{self.server.dsn(self.db)}' AS {alias} "
                f"(DATA_PATH '{_data_path_literal(data_path)}')")


class RockLakeBackend(Backend):
    """The server under test.  start() / stop() / restart() on the same catalog dir."""
    name = "rocklake"

    def __init__(self, workdir: pathlib.Path, binary: str = ROCKLAKE_BIN,
                 host: str = "127.0.0.1", port: int | None = None):
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.catalog_dir = self.workdir / "catalog"
        # created up front: object_store's LocalFileSystem wants an existing directory
        self.catalog_dir.mkdir(exist_ok=True)
        self.binary = binary
        self.host = host
        self.port = port or free_port(host)
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.log_path: pathlib.Path | None = None
        self.kill_reason: str | None = None

    @property
    def location(self) -> str:
        """The catalog location given to `rocklake serve`."""
        return str(self.catalog_dir)

    def env(self) -> dict[str, str]:
        """The server's environment."""
        return dict(os.environ)

    def command(self) -> list[str]:
        args = [a.format(catalog_dir=self.location, host=self.host, port=self.port)
                for a in shlex.split(SERVE_ARGS)]
        return [self.binary, *args]

    def dsn(self) -> str:
        return ROCKLAKE_DSN.format(host=self.host, port=self.port)

    def attach_sql(self, alias, data_path):
        return (f"ATTACH 'ducklake:postgres:{self.dsn()}' AS {alias} "
                f"(DATA_PATH '{_data_path_literal(data_path)}')")

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path or not self.log_path.exists():
            return "(no server output)"
        text = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:]) or "(server output empty)"

    def start(self):
        """Start the server; pytest.fail with a clear message if it cannot."""
        if not pathlib.Path(self.binary).is_file():
            pytest.fail(f"RockLake binary not found: {self.binary}\n"
                        "Build it (cargo build -p rocklake) or set ROCKLAKE_BIN.", pytrace=False)
        self.starts += 1
        self.log_path = self.workdir / f"server-{self.starts}.log"
        cmd = self.command()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self.workdir,
                                         env=self.env(), start_new_session=True)
        err = wait_for_port(self.host, self.port, START_TIMEOUT, self.proc)
        if err:
            self.stop()
            pytest.fail(f"RockLake server did not start: {err}\n"
                        f"command: {shlex.join(cmd)}\n"
                        f"--- server output ({self.log_path.name}) ---\n{self.log_tail()}",
                        pytrace=False)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self, reason: str):
        """Kill the server at once (used by the per-step watchdog)."""
        self.kill_reason = reason
        proc = self.proc
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def run(self, con, steps, attach: str, max_consecutive_errors: int | None = 4):
        """run_steps() with the watchdog that kills a hanging server."""
        from workload import run_steps
        return run_steps(con, steps, attach, max_consecutive_errors=max_consecutive_errors,
                         step_timeout=STEP_TIMEOUT,
                         on_timeout=lambda step: self.kill(
                             f"statement of step {step.name!r} ran over {STEP_TIMEOUT:.0f}s "
                             "(ROCKLAKE_STEP_TIMEOUT); server killed"))

    def stop(self, timeout: float = 10):
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        # The server runs in its own session: signal its whole process group.
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=timeout)

    def wait_exit(self, timeout: float = 10) -> int | None:
        """Wait for the server process to end (after kill()); its exit code."""
        if self.proc is None:
            return None
        return self.proc.wait(timeout=timeout)

    def restart(self):
        self.stop()
        # The port is reused so attach strings stay valid; wait until it is free.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.socket() as s:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    s.bind((self.host, self.port))
                break
            except OSError:
                time.sleep(0.2)
        self.start()

    def describe(self):
        state = "running" if self.alive() else "not running"
        if self.kill_reason:
            state += f"; {self.kill_reason}"
        return f"rocklake ({state}; {shlex.join(self.command())})"


class S3Emulator:
    """An S3-compatible server (s3s-fs) on a loopback port.  Buckets are the
    directories of `root` and objects are files under them, so tests can check
    what landed in the bucket directly on disk."""
    access_key = "test"
    secret_key = "test"
    region = "us-east-1"

    def __init__(self, root: pathlib.Path, binary: str = S3S_FS_BIN, host: str = "127.0.0.1"):
        self.root = pathlib.Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.binary = binary
        self.host = host
        self.port = free_port(host)
        self.proc: subprocess.Popen | None = None
        self.log_path = self.root.parent / f"{self.root.name}-s3s-fs.log"
        self._buckets = 0

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self):
        if not pathlib.Path(self.binary).is_file():
            pytest.fail(f"S3 emulator not found: {self.binary}\n"
                        "Install it with scripts/test.sh (cargo install --locked --root .tools "
                        "s3s-fs@0.14.1 --features binary) or set ROCKLAKE_S3S_FS.", pytrace=False)
        cmd = [self.binary, "--host", self.host, "--port", str(self.port),
               "--access-key", self.access_key, "--secret-key", self.secret_key, str(self.root)]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        err = wait_for_port(self.host, self.port, START_TIMEOUT, self.proc)
        if err:
            self.stop()
            pytest.fail(f"S3 emulator did not start: {err}\ncommand: {shlex.join(cmd)}\n"
                        f"{self.log_path.read_text(errors='replace')}", pytrace=False)

    def stop(self):
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def new_bucket(self, prefix: str = "lake") -> str:
        """A fresh, empty bucket (a new directory of the root)."""
        self._buckets += 1
        name = f"{prefix}-{self._buckets}"
        (self.root / name).mkdir()
        return name

    def bucket_dir(self, bucket: str) -> pathlib.Path:
        return self.root / bucket

    def server_env(self) -> dict[str, str]:
        """The AWS_* variables that point RockLake at this emulator."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": self.region,
        }

    def duckdb_secret_sql(self, name: str = "rocklake_s3") -> str:
        """The DuckDB secret through which httpfs reaches this emulator."""
        return (f"CREATE OR REPLACE SECRET {name} (TYPE s3, KEY_ID '{self.access_key}', "
                f"SECRET '{self.secret_key}', REGION '{self.region}', "
                f"ENDPOINT '{self.host}:{self.port}', URL_STYLE 'path', USE_SSL false)")


class RockLakeS3Backend(RockLakeBackend):
    """RockLake with its catalog at s3://BUCKET/lake in the S3 emulator; DuckDB
    writes the data files to s3://BUCKET/data/<name of the local data dir>/."""
    name = "rocklake-s3"

    def __init__(self, workdir: pathlib.Path, s3: S3Emulator, bucket: str | None = None,
                 **kwargs):
        """A new bucket, or `bucket` to serve the same catalog as another backend."""
        super().__init__(workdir, **kwargs)
        self.s3 = s3
        self.bucket = bucket or s3.new_bucket()

    @property
    def location(self) -> str:
        return f"s3://{self.bucket}/lake"

    @property
    def bucket_dir(self) -> pathlib.Path:
        return self.s3.bucket_dir(self.bucket)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(self.s3.server_env())
        return env

    def data_url(self, data_path) -> str:
        """The S3 DATA_PATH standing in for a local data directory."""
        return f"s3://{self.bucket}/data/{pathlib.PurePath(str(data_path)).name}/"

    def attach_sql(self, alias, data_path):
        return (f"{self.s3.duckdb_secret_sql()}; "
                f"ATTACH 'ducklake:postgres:{self.dsn()}' AS {alias} "
                f"(DATA_PATH '{self.data_url(data_path)}')")


# ---------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------

@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """One S3 emulator for the whole session; each S3 backend gets its own bucket."""
    server = S3Emulator(tmp_path_factory.mktemp("s3") / "root")
    server.start()
    yield server
    server.stop()

@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL for the reference, only when ROCKLAKE_PG_REFERENCE=1."""
    if os.environ.get("ROCKLAKE_PG_REFERENCE") != "1":
        pytest.skip("set ROCKLAKE_PG_REFERENCE=1 to use a real PostgreSQL reference")
    server = PostgresServer()
    server.start()
    yield server
    server.stop(remove=True)


def _reference_params():
    params = ["duckdb-file"]
    if os.environ.get("ROCKLAKE_PG_REFERENCE") == "1":
        params.append("postgres")
    return params


@pytest.fixture(params=_reference_params())
def reference(request, tmp_path):
    """A reference catalog backend: DuckDB file, and real PostgreSQL when enabled."""
    if request.param == "duckdb-file":
        return DuckDBFileBackend(tmp_path / "ref")
    return PostgresBackend(request.getfixturevalue("pg_server"))


@pytest.fixture
def rocklake(request, tmp_path):
    """A RockLake backend, not started yet: call .start() in the test (so a
    server that cannot start shows as a test failure with its output).
    Local by default; parametrized by the `storages` marker."""
    storage = getattr(request, "param", "local")
    if storage == "s3":
        backend = RockLakeS3Backend(tmp_path / "rocklake", request.getfixturevalue("s3_server"))
    elif storage == "local":
        backend = RockLakeBackend(tmp_path / "rocklake")
    else:
        raise ValueError(f"unknown RockLake storage {storage!r}")
    yield backend
    backend.stop()


@pytest.fixture
def data_dir(tmp_path):
    """Factory for fresh DATA_PATH directories."""
    n = [0]

    def make(label: str = "data") -> pathlib.Path:
        n[0] += 1
        p = tmp_path / f"{label}-{n[0]}"
        p.mkdir()
        return p

    return make
