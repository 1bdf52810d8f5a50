"""Read replicas: `rocklake serve --read-only` follows a writer's catalog.

Two replicas serve the catalog one writer commits to: they catch up with each
commit, time travel works on them, a write through them fails with SQLSTATE
25006 (as on a PostgreSQL hot standby), and they never fence the writer.
"""

from __future__ import annotations

import time

import duckdb
import pytest

from conftest import RockLakeBackend


class ReplicaBackend(RockLakeBackend):
    """`rocklake serve --read-only` on another server's catalog."""
    name = "rocklake-replica"

    def __init__(self, workdir, writer: RockLakeBackend):
        super().__init__(workdir)
        self.writer = writer

    @property
    def location(self) -> str:
        return self.writer.location

    def command(self) -> list[str]:
        return [self.binary, "serve", self.location, "--read-only", "--poll-ms", "50",
                "--listen", f"{self.host}:{self.port}"]


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
