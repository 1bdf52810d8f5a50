"""RockLake on object storage: writer fencing and start-up errors, on the S3 emulator.

(The workload, conformance and crash tests also run on S3: see the `storages`
marker in conftest.py.)
"""

from __future__ import annotations

import subprocess
import time

import duckdb
import psycopg
import pytest

from conftest import ROCKLAKE_BIN, RockLakeS3Backend, duckdb_connect, free_port
from test_crash import Writer


@pytest.mark.rocklake
def test_second_server_fences_the_first(s3_server, duck, data_dir, tmp_path, monkeypatch):
    """Server B started with --take-over fences A: A's next commit fails
    cleanly, A ends its sessions and exits, B has every commit A
    acknowledged, and nothing A acknowledged is lost.

    DuckDB shows, for the statement that first met the fence (COMMIT, or an
    earlier one when A already saw the newer manifest): "ERROR:  this writer
    was fenced by a newer writer of the same catalog (epoch 1)"; the SQLSTATE,
    which DuckDB does not show, is 57P01 (admin_shutdown)."""
    monkeypatch.setenv("RUST_LOG", "rocklake_wire=info")  # the server logs failed statements
    a = RockLakeS3Backend(tmp_path / "a", s3_server)
    b = RockLakeS3Backend(tmp_path / "b", s3_server, bucket=a.bucket)
    b.command = lambda: [*RockLakeS3Backend.command(b), "--take-over"]
    try:
        a.start()
        data = data_dir("fenced")
        con_a = duck()
        con_a.execute(a.attach_sql("l", data))
        con_a.execute("CREATE TABLE l.t (i INTEGER)")
        acked = []
        for i in range(5):
            con_a.execute("INSERT INTO l.t VALUES (?)", [i])
            acked.append(i)
        con_a.execute("INSERT INTO l.t SELECT i::INTEGER FROM range(100, 1100) r(i)")  # Parquet
        acked.extend(range(100, 1100))

        b.start()  # opens the same catalog: bumps the writer epoch, fencing A
        # B listens before it opens the catalog and answers once it has:
        # wait for an answer, so the fence is in place before A's next
        # commits (regression: five quick commits of A could all land while
        # B was still opening, and the test saw no fence).
        with psycopg.connect(b.dsn(), connect_timeout=60) as probe:
            probe.execute("SELECT 1")
        # A learns of the fence when its SlateDB next reads the manifest (the
        # statement running then fails: BEGIN, a catalog read of the commit,
        # seen in runs) or when it commits (COMMIT fails); which comes first
        # is timing. A commit racing B's open may still land before the fence
        # does (seen about once in five runs): then it was acknowledged and B
        # must have it (checked below). Within a few commits A fails cleanly.
        message = None
        for attempt in range(1, 6):
            try:
                con_a.execute("INSERT INTO l.t VALUES (?)", [-attempt])
                acked.append(-attempt)
            except duckdb.Error as fenced:
                message = str(fenced)
                break
        assert message is not None, "A kept committing after B fenced it"
        # The statement meets SlateDB's fence, the lease (A learned at its
        # heartbeat that B took over, and acknowledges nothing after), or A
        # ending its sessions on the way out.
        assert ("this writer was fenced by a newer writer of the same catalog (epoch 1)" in message
                or "no longer holds the writer lease" in message
                or "terminating connection" in message or "onnection" in message
                or "Failed to execute query" in message), message
        # and it stays fenced: no later commit through A gets through either
        with pytest.raises(duckdb.Error):
            con_a.execute("INSERT INTO l.t VALUES (-2)")
        # A exits: it lost the writer lease (a server started with --standby
        # would serve as a standby instead).
        assert a.wait_exit(timeout=30) != 0
        log_a = a.log_path.read_text(errors="replace")
        assert "lost the writer lease: another server took over (term 2" in log_a, log_a

        # `rocklake keys` reads the catalog on S3 without fencing B
        keys = subprocess.run([ROCKLAKE_BIN, "keys", b.location, "--tag", "system"],
                              env=b.env(), capture_output=True, text=True, timeout=60)
        assert keys.returncode == 0 and "'writer-epoch'" in keys.stdout, keys.stderr

        con_b = duck()
        con_b.execute(b.attach_sql("l", data))
        rows = [r[0] for r in con_b.execute("SELECT i FROM l.t ORDER BY i").fetchall()]
        assert rows == sorted(acked), "B must have every commit A acknowledged, and only those"
        con_b.execute("INSERT INTO l.t VALUES (2000)")
        (count,) = con_b.execute("SELECT count(*) FROM l.t").fetchone()
        assert count == len(acked) + 1

        # B survives a restart with everything
        b.restart()
        con_b2 = duck()
        con_b2.execute(b.attach_sql("l", data))
        (count,) = con_b2.execute("SELECT count(*) FROM l.t").fetchone()
        assert count == len(acked) + 1
    finally:
        a.stop()
        b.stop()


@pytest.mark.rocklake
def test_fencing_while_writers_commit(s3_server, data_dir, tmp_path):
    """B opens the catalog while two DuckDB writers commit through A in a loop:
    they stop at their first error, and B has every commit A acknowledged."""
    a = RockLakeS3Backend(tmp_path / "a", s3_server)
    b = RockLakeS3Backend(tmp_path / "b", s3_server, bucket=a.bucket)
    b.command = lambda: [*RockLakeS3Backend.command(b), "--take-over"]
    tables = ["t0", "t1"]
    try:
        a.start()
        data = data_dir("fenced")
        con = duckdb_connect()
        con.execute(a.attach_sql("l", data))
        for table in tables:
            con.execute(f"CREATE TABLE l.{table} (writer INTEGER, v BIGINT)")
        con.close()
        writers = [Writer(a.attach_sql("l", data), who, 0, table)
                   for who, table in enumerate(tables)]
        for w in writers:
            w.start()
        deadline = time.monotonic() + 60
        while any(len(w.acked) < 3 and w.is_alive() for w in writers):
            assert time.monotonic() < deadline, "writers made no commit in 60 s"
            time.sleep(0.01)
        b.start()  # fences A while the writers commit
        for w in writers:
            w.join(60)
            assert not w.is_alive(), f"{w.name} still commits through the fenced server"
            error = w.error or ""
            # The fence, the lost lease, or the session A ended on its way
            # out (DuckDB then reports the query it could not send).
            assert ("fenced by a newer writer" in error or "no longer holds the writer lease" in error
                    or "onnection" in error or "Failed to execute query" in error), error

        con = duckdb_connect()
        con.execute(b.attach_sql("l", data))
        for w in writers:
            rows = [r[0] for r in con.execute(f"SELECT v FROM l.{w.table}").fetchall()]
            assert len(rows) == len(set(rows)), "duplicate rows"
            assert set(w.acked) <= set(rows), "B lost commits A acknowledged"
            assert set(rows) <= set(w.acked) | set(w.unknown), "rows nobody committed"
        con.close()
    finally:
        a.stop()
        b.stop()


def _serve_expecting_failure(env_overrides: dict[str, str], location: str, s3_server):
    env = {"RUST_BACKTRACE": "0", "RUST_LIB_BACKTRACE": "0", "PATH": "/usr/bin:/bin",
           **s3_server.server_env(), **env_overrides}
    return subprocess.run([ROCKLAKE_BIN, "serve", location, "--listen",
                           f"127.0.0.1:{free_port()}"],
                          env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.rocklake
@pytest.mark.parametrize("case", ["unreachable", "no_bucket", "bad_secret", "plain_http_remote"])
def test_serve_fails_fast_with_a_clear_error(s3_server, case):
    """Regression: an unreachable endpoint or a missing bucket made `serve` hang
    silently for minutes (SlateDB retrying the object store); now the location
    is probed once at start-up and `serve` exits at once with the reason."""
    bucket = s3_server.new_bucket()
    env, location, expected = {
        "unreachable": ({"AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}"},
                        f"s3://{bucket}/lake", "cannot list the bucket at http://127.0.0.1:"),
        "no_bucket": ({}, "s3://no-such-bucket/lake", "NoSuchBucket"),
        "bad_secret": ({"AWS_SECRET_ACCESS_KEY": "wrong"}, f"s3://{bucket}/lake",
                       "SignatureDoesNotMatch"),
        "plain_http_remote": ({"AWS_ENDPOINT_URL": "http://s3.example.com"},
                              f"s3://{bucket}/lake", "is plain HTTP"),
    }[case]
    res = _serve_expecting_failure(env, location, s3_server)
    assert res.returncode != 0
    assert f'invalid catalog location "{location}"' in res.stderr, res.stderr
    assert expected in res.stderr, res.stderr
    assert not any(s3_server.bucket_dir(bucket).iterdir()), "nothing may be written"
