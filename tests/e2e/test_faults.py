"""Storage faults are errors, never hangs.

* A full disk (a small tmpfs holds the root): commits fail with PostgreSQL's
  53100 within the storage timeout, say so in the server's log, and leave
  the catalog as it was; reads go on; a statement timeout and a
  CancelRequest end a commit waiting for storage; once space returns,
  commits resume and every acknowledged commit is there, across a restart.
* An object store that stops answering (the S3 emulator stopped): commits
  fail with 58030 within the storage timeout; SIGTERM exits within the
  shutdown grace plus the storage timeout, saying which catalogs it could
  not flush; every commit acknowledged before is there once the store is
  back.

Bounds in these tests are generous: they only tell a hang from an answer.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import signal
import subprocess
import threading
import time

import psycopg
import pytest

from conftest import RockLakeBackend, RockLakeS3Backend, S3Emulator

pytestmark = pytest.mark.rocklake

# A commit that waits for storage longer than this is a hang.
HANG = 40.0
ROW = "x" * 100_000


class ArgsRockLake(RockLakeBackend):
    """RockLake with extra `serve` arguments."""

    def __init__(self, workdir, extra, root=None):
        super().__init__(workdir)
        self.extra = list(extra)
        if root is not None:
            self.catalog_dir = pathlib.Path(root)

    def command(self):
        return [*super().command(), *self.extra]


@contextlib.contextmanager
def tmpfs(path: pathlib.Path, megabytes: int):
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs",
                              str(path)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(path: pathlib.Path) -> pathlib.Path:
    """Fills the file system of `path` to the last byte."""
    filler = path / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for chunk in (1 << 20, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def timed(con, sql):
    """(seconds, SQLSTATE or 'ok', message) of `sql`."""
    start = time.monotonic()
    try:
        con.execute(sql)
        return time.monotonic() - start, "ok", None
    except psycopg.Error as e:
        return time.monotonic() - start, e.sqlstate, e.diag.message_primary


def connect(server):
    return psycopg.connect(host=server.host, port=server.port, dbname="lake",
                           connect_timeout=10, autocommit=True)


def commits_until_refused(con, acknowledged, limit=200):
    """Inserts rows of 100 kB until one is refused; its outcome."""
    for i in range(limit):
        seconds, code, message = timed(con, f"INSERT INTO big VALUES ({i}, '{ROW}')")
        assert seconds < HANG, f"commit {i} took {seconds:.0f}s"
        if code == "ok":
            acknowledged.append(i)
            continue
        return seconds, code, message
    pytest.fail("the disk never filled")


def test_a_full_disk_fails_commits_and_they_resume(tmp_path):
    with tmpfs(tmp_path / "small", 24) as small:
        server = ArgsRockLake(tmp_path / "rocklake", ["--storage-timeout", "3s"],
                              root=small / "root")
        server.start()
        acknowledged: list[int] = []
        try:
            con = connect(server)
            con.execute("CREATE TABLE big (i int, pad text)")
            filler = fill(small)
            seconds, code, message = commits_until_refused(con, acknowledged)
            assert code == "53100", (code, message)
            assert "No space left on device" in message, message
            assert seconds < 3 + 10, seconds
            # Reads answer; the refused commit changed nothing.
            count = con.execute("SELECT count(*) FROM big").fetchone()[0]
            assert count == len(acknowledged)
            # Refused again, quickly, while the disk stays full.
            seconds, code, _ = timed(con, "INSERT INTO big VALUES (-1, 'y')")
            assert code == "53100" and seconds < HANG
            assert "catalog storage failed" in server.log_path.read_text(errors="replace")

            # Room again: commits resume by themselves.
            filler.unlink()
            deadline = time.monotonic() + 60
            while True:
                seconds, code, message = timed(con, "INSERT INTO big VALUES (1000, 'z')")
                if code == "ok":
                    acknowledged.append(1000)
                    break
                assert time.monotonic() < deadline, f"commits did not resume: {code} {message}"
                time.sleep(1)
            con.close()
            server.restart()
            con = connect(server)
            rows = sorted(r[0] for r in con.execute("SELECT i FROM big"))
            assert rows == sorted(acknowledged)
            con.close()
        finally:
            server.stop()


def test_cancel_and_statement_timeout_end_a_commit_waiting_for_storage(tmp_path):
    with tmpfs(tmp_path / "small", 24) as small:
        # Storage is waited for long: only the interrupts end the wait.
        server = ArgsRockLake(tmp_path / "rocklake", ["--storage-timeout", "120s"],
                              root=small / "root")
        server.start()
        try:
            con = connect(server)
            con.execute("CREATE TABLE big (i int, pad text)")
            fill(small)
            con.execute("SET statement_timeout = '2s'")
            codes = []
            for i in range(200):
                seconds, code, message = timed(con, f"INSERT INTO big VALUES ({i}, '{ROW}')")
                assert seconds < HANG, f"commit {i} took {seconds:.0f}s"
                if code != "ok":
                    codes.append((code, message, seconds))
                    break
            # The first refusal is the statement timeout while the commit
            # waited for room; later ones may be the fault itself.
            assert codes and codes[0][0] in ("57014", "53100"), codes
            con.execute("SET statement_timeout = 0")
            before = con.execute("SELECT count(*) FROM big").fetchone()[0]

            # A CancelRequest from another thread ends a waiting commit.
            other = connect(server)
            other.execute("BEGIN")
            other.execute(f"INSERT INTO big VALUES (-5, '{ROW}')")
            canceller = threading.Timer(1.0, other.cancel)
            canceller.start()
            seconds, code, message = timed(other, "COMMIT")
            canceller.join()
            assert seconds < HANG, seconds
            assert code in ("57014", "53100"), (code, message)
            assert con.execute("SELECT count(*) FROM big").fetchone()[0] == before
            other.close()
            con.close()
        finally:
            server.stop()


def test_an_object_store_outage_fails_commits_and_shutdown_ends(tmp_path):
    s3 = S3Emulator(tmp_path / "s3")
    s3.start()
    server = RockLakeS3Backend(tmp_path / "rocklake", s3)
    server.command = lambda: [*RockLakeS3Backend.command(server), "--storage-timeout", "3s",
                              "--shutdown-grace", "2s"]
    server.start()
    acknowledged = []
    try:
        con = connect(server)
        con.execute("CREATE TABLE t (i int)")
        for i in range(5):
            con.execute(f"INSERT INTO t VALUES ({i})")
            acknowledged.append(i)
        s3.stop()
        seconds, code, message = timed(con, "INSERT INTO t VALUES (99)")
        assert code == "58030", (code, message)
        assert seconds < 3 + 20, seconds
        seconds, code, _ = timed(con, "INSERT INTO t VALUES (98)")
        assert code == "58030" and seconds < HANG
        con.close()
        # SIGTERM: exits after the grace and the storage timeout, saying so.
        started = time.monotonic()
        os.killpg(server.proc.pid, signal.SIGTERM)
        exit_code = server.proc.wait(timeout=60)
        took = time.monotonic() - started
        assert took < 2 + 3 * 4 + 15, took
        log = server.log_path.read_text(errors="replace")
        assert "could not be flushed" in log, log[-2000:]
        assert exit_code != 0
        server.proc = None
        # The store is back: every acknowledged commit is there.
        s3.start()
        server.start()
        con = connect(server)
        rows = sorted(r[0] for r in con.execute("SELECT i FROM t") if r[0] < 90)
        assert rows == acknowledged
        con.close()
    finally:
        server.stop()
        s3.stop()
