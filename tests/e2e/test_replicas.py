"""Read replicas: `rocklake serve --read-only` follows a writer's catalog.

Two replicas serve the catalog one writer commits to: they catch up with each
commit, time travel works on them, a write through them fails with SQLSTATE
25006 (as on a PostgreSQL hot standby), and they never fence the writer.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request

import duckdb
import pytest

from conftest import RockLakeBackend, free_port


class ReplicaBackend(RockLakeBackend):
    """`rocklake serve --read-only` on another server's catalog."""
    name = "rocklake-replica"

    def __init__(self, workdir, writer: RockLakeBackend):
        super().__init__(workdir)
        self.writer = writer

    @property
    def location(self) -> str:
        return self.writer.location

    extra_args: list[str] = []

    def command(self) -> list[str]:
        return [self.binary, "serve", self.location, "--read-only", "--poll-ms", "50",
                "--listen", f"{self.host}:{self.port}", *self.extra_args]


def wait_for(con, sql, expected, timeout=15.0):
    """Polls `sql` on a replica until it returns `expected` (replicas lag the
    writer by about one poll interval)."""
    deadline = time.monotonic() + timeout
    got = None
    while time.monotonic() < deadline:
        got = con.execute(sql).fetchall()
        if got == expected:
            return
        time.sleep(0.05)
    pytest.fail(f"replica still returns {got} for {sql!r}, expected {expected}")


@pytest.mark.rocklake
def test_replicas_follow_the_writer_and_refuse_writes(duck, data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("RUST_LOG", "rocklake_wire=info")  # failed statements are logged
    writer = RockLakeBackend(tmp_path / "writer")
    replicas = [ReplicaBackend(tmp_path / f"replica{i}", writer) for i in range(2)]
    data = data_dir("lake")
    try:
        writer.start()
        w = duck()
        w.execute(writer.attach_sql("l", data))
        w.execute("CREATE TABLE l.t (id INTEGER, v VARCHAR)")
        w.execute("INSERT INTO l.t VALUES (1, 'one'), (2, 'two')")
        first = w.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('l')").fetchone()[0]

        for r in replicas:
            r.start()
        readers = []
        for r in replicas:
            con = duck()
            # Each reader attaches as DuckDB users do; ATTACH itself only reads.
            con.execute(r.attach_sql("l", data))
            readers.append(con)
        for con in readers:
            wait_for(con, "SELECT count(*) FROM l.t", [(2,)])

        # Inlined and Parquet commits on the writer reach every replica.
        w.execute("INSERT INTO l.t VALUES (3, 'three')")
        w.execute("INSERT INTO l.t SELECT i::INTEGER, 'p' || i FROM range(100, 1100) r(i)")
        w.execute("UPDATE l.t SET v = 'ONE' WHERE id = 1")
        latest = w.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('l')").fetchone()[0]
        expected = w.execute("SELECT id, v FROM l.t ORDER BY id").fetchall()
        for con in readers:
            wait_for(con, "SELECT max(snapshot_id) FROM ducklake_snapshots('l')", [(latest,)])
            assert con.execute("SELECT id, v FROM l.t ORDER BY id").fetchall() == expected
            # time travel on a replica
            assert con.execute(
                f"SELECT id, v FROM l.t AT (VERSION => {first}) ORDER BY id"
            ).fetchall() == [(1, "one"), (2, "two")]

        # Writes through a replica fail cleanly; the replica keeps serving.
        with pytest.raises(duckdb.Error) as refused:
            readers[0].execute("INSERT INTO l.t VALUES (-1, 'nope')")
        assert "read-only" in str(refused.value), refused.value
        assert readers[0].execute("SELECT count(*) FROM l.t").fetchone()[0] == len(expected)
        log = replicas[0].log_path.read_text(errors="replace")
        assert "code=25006" in log, log

        # The replicas never fenced the writer: it still commits.
        w.execute("INSERT INTO l.t VALUES (4, 'four')")
        assert w.execute("SELECT count(*) FROM l.t").fetchone()[0] == len(expected) + 1
        for con in readers:
            wait_for(con, "SELECT count(*) FROM l.t", [(len(expected) + 1,)])
    finally:
        for r in replicas:
            r.stop()
        writer.stop()


@pytest.mark.rocklake
def test_a_replica_of_a_missing_catalog_refuses_to_start(tmp_path):
    writer = RockLakeBackend(tmp_path / "nothing")  # never started: no catalog yet
    replica = ReplicaBackend(tmp_path / "replica", writer)
    with pytest.raises(BaseException):
        replica.start()
    log = replica.log_path.read_text(errors="replace")
    assert "no catalog here yet" in log, log


@pytest.mark.rocklake
def test_multi_host_connection_strings_find_the_writer_or_a_replica(duck, data_dir, tmp_path):
    """libpq's `target_session_attrs` tells the writer from a replica by what
    PostgreSQL reports: `in_hot_standby` (ParameterStatus and SHOW),
    `transaction_read_only` and `pg_is_in_recovery()`. Stock DuckDB passes
    such a string through to libpq."""
    psycopg = pytest.importorskip("psycopg")
    writer = RockLakeBackend(tmp_path / "writer")
    replica = ReplicaBackend(tmp_path / "replica", writer)
    replica.metrics_port = free_port()
    replica.extra_args = ["--metrics-listen", f"127.0.0.1:{replica.metrics_port}"]
    data = data_dir("lake")
    try:
        writer.start()
        w = duck()
        w.execute(writer.attach_sql("l", data))
        w.execute("CREATE TABLE l.t (id INTEGER)")
        w.execute("INSERT INTO l.t VALUES (1)")
        replica.start()

        def attrs(port):
            with psycopg.connect(f"host=127.0.0.1 port={port} user=postgres dbname=lake",
                                 autocommit=True) as con:
                row = con.execute("SELECT current_setting('in_hot_standby'), "
                                  "current_setting('transaction_read_only'), "
                                  "current_setting('default_transaction_read_only'), "
                                  "pg_is_in_recovery()").fetchone()
                return con.info.parameter_status("in_hot_standby"), row

        # As a PostgreSQL primary and a hot standby report themselves.
        assert attrs(writer.port) == ("off", ("off", "off", "off", False))
        assert attrs(replica.port) == ("on", ("on", "on", "off", True))
        # The replica's health check by role (the writer's: test_metrics.py).
        health = f"http://127.0.0.1:{replica.metrics_port}/readyz"
        with urllib.request.urlopen(f"{health}?role=replica", timeout=10) as response:
            assert (response.status, response.read()) == (200, b"ready\n")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{health}?role=writer", timeout=10)
        assert refused.value.code == 503
        assert refused.value.read() == b"not a writer: this server is a replica\n"
        metrics_url = f"http://127.0.0.1:{replica.metrics_port}/metrics"
        with urllib.request.urlopen(metrics_url, timeout=10) as response:
            exposed = response.read().decode()
        assert 'rocklake_role{role="replica"} 1' in exposed.splitlines(), exposed
        with psycopg.connect(f"host=127.0.0.1 port={replica.port} user=postgres dbname=lake",
                             autocommit=True) as con:
            with pytest.raises(psycopg.errors.CantChangeRuntimeParam):
                con.execute("SET in_hot_standby = off")

        # Each target finds the server it names, whichever host comes first.
        ports = {"writer": writer.port, "replica": replica.port}
        for order in (("replica", "writer"), ("writer", "replica")):
            hosts = ",".join("127.0.0.1" for _ in order)
            listed = ",".join(str(ports[name]) for name in order)
            for target, expected in (("read-write", "writer"), ("primary", "writer"),
                                     ("read-only", "replica"), ("standby", "replica"),
                                     ("prefer-standby", "replica"), ("any", order[0])):
                dsn = (f"host={hosts} port={listed} user=postgres dbname=lake "
                       f"target_session_attrs={target}")
                with psycopg.connect(dsn, autocommit=True) as con:
                    assert con.info.port == ports[expected], (order, target)

        # Stock DuckDB attaches to the writer through such a string and commits.
        d = duck()
        d.execute(f"ATTACH 'ducklake:postgres:host=127.0.0.1,127.0.0.1 "
                  f"port={replica.port},{writer.port} user=postgres dbname=lake "
                  f"target_session_attrs=read-write' AS m (DATA_PATH '{data}')")
        d.execute("INSERT INTO m.t VALUES (2)")
        assert w.execute("SELECT count(*) FROM l.t").fetchone()[0] == 2
    finally:
        replica.stop()
        writer.stop()
