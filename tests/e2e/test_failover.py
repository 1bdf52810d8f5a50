"""A standby that takes over: `rocklake serve ROOT --standby`.

Two servers started with --standby on one root: the first becomes the writer
(it claims the root's writer lease), the other serves reads as a hot standby
and becomes the writer when the writer is gone. Stock DuckDB writers commit
through a libpq multi-host string with `target_session_attrs=read-write`,
so they find whichever server writes.

- `kill -9` of the writer, over several rounds (the servers swap roles each
  round, the killed one restarted as the standby): every commit
  acknowledged before a kill is there afterwards, the writers go on, and the
  failover time (kill to the first commit acknowledged after it) is printed.
- `SIGSTOP` of the writer: the standby takes over once the writer's
  heartbeat stops for --takeover-after; after `SIGCONT` the old writer
  acknowledges no commit (a COMMIT it was sent fails), serves as a standby,
  and the snapshot history has no fork.
- The same on an S3 root (the emulator), where two standbys race for the
  lease and exactly one wins.
"""

from __future__ import annotations

import os
import signal
import statistics
import threading
import time
import urllib.request

import duckdb
import psycopg
import pytest

from conftest import RockLakeBackend, RockLakeS3Backend, duckdb_connect, free_port

TAKEOVER_AFTER = "1s"


class StandbyBackend(RockLakeBackend):
    """`rocklake serve ROOT --standby` on the root of `first` (or its own)."""

    def __init__(self, workdir, first: RockLakeBackend | None = None, takeover_after=TAKEOVER_AFTER):
        super().__init__(workdir)
        if first is not None:
            self.catalog_dir = first.catalog_dir
        self.takeover_after = takeover_after
        self.metrics_port = free_port()

    def command(self):
        return [*super().command(), "--standby", "--takeover-after", self.takeover_after,
                "--poll-ms", "50", "--metrics-listen", f"127.0.0.1:{self.metrics_port}"]

    def role(self) -> str | None:
        """`writer` or `standby`, as the rocklake_role metric says."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics",
                                        timeout=5) as response:
                text = response.read().decode()
        except OSError:
            return None
        for role in ("writer", "standby"):
            if f'rocklake_role{{role="{role}"}} 1' in text:
                return role
        return None

    def wait_role(self, role: str, timeout: float = 30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.role() == role:
                return
            time.sleep(0.05)
        pytest.fail(f"server on {self.port} is not the {role} after {timeout} s "
                    f"(it is {self.role()}):\n{self.log_tail()}")


class S3StandbyBackend(RockLakeS3Backend):
    """`--standby` on an S3 root (the emulator)."""

    def __init__(self, workdir, s3, bucket=None):
        super().__init__(workdir, s3, bucket=bucket)
        self.metrics_port = free_port()

    def command(self):
        return [*super().command(), "--standby", "--takeover-after", TAKEOVER_AFTER,
                "--poll-ms", "50", "--metrics-listen", f"127.0.0.1:{self.metrics_port}"]

    role = StandbyBackend.role
    wait_role = StandbyBackend.wait_role


def writer_and_standby(tmp_path):
    """Two servers started with --standby on one root: the first writes."""
    a = StandbyBackend(tmp_path / "a")
    b = StandbyBackend(tmp_path / "b", a)
    try:
        a.start()
        a.wait_role("writer")
        b.start()
        b.wait_role("standby")
    except BaseException:
        a.stop()
        b.stop()
        raise
    return a, b


def multi_host(servers, attrs="read-write") -> str:
    hosts = ",".join(s.host for s in servers)
    ports = ",".join(str(s.port) for s in servers)
    # connect_timeout: a host that accepts but does not answer (a paused
    # process) is skipped after 2 s, as with PostgreSQL.
    return (f"host={hosts} port={ports} user=postgres dbname=lake "
            f"target_session_attrs={attrs} connect_timeout=2")


class DuckWriter(threading.Thread):
    """A stock DuckDB client inserting (writer, seq) rows one commit at a time
    through a multi-host string; records what was acknowledged and when."""

    def __init__(self, attach: str, who: int):
        super().__init__(name=f"duckdb-writer-{who}", daemon=True)
        self.attach, self.who = attach, who
        self.acked: list[int] = []
        self.acked_at: list[float] = []
        self.failures: list[str] = []
        self.stop = threading.Event()

    def connect(self):
        con = duckdb_connect()
        con.execute(self.attach)
        return con

    def run(self):
        con, seq = None, 0
        while not self.stop.is_set():
            seq += 1
            try:
                if con is None:
                    con = self.connect()
                con.execute("INSERT INTO l.t VALUES (?, ?)", [self.who, seq])
                self.acked.append(seq)
                self.acked_at.append(time.monotonic())
                # Four writers committing back to back on one lake conflict
                # on every snapshot id, and one can starve for a minute
                # after DuckLake's 10 retries (on PostgreSQL catalogs too:
                # bench/commits.py's "fewest per writer"). This test is about
                # failover, so the writers pace themselves.
                time.sleep(0.05)
            except duckdb.Error as error:
                # The statement in flight when the writer died (or a
                # reconnect before the standby took over): open a new
                # connection and go on.
                self.failures.append(str(error).splitlines()[0])
                try:
                    if con is not None:
                        con.close()
                except duckdb.Error:
                    pass
                con = None
                time.sleep(0.2)
        if con is not None:
            con.close()


def acked_rows(writers) -> set[tuple[int, int]]:
    return {(w.who, seq) for w in writers for seq in w.acked}


def check_history(con):
    """Snapshot ids 0..n without gaps, times never going back: no fork."""
    rows = con.execute("SELECT snapshot_id, snapshot_time FROM ducklake_snapshot "
                       "ORDER BY snapshot_id").fetchall()
    ids = [r[0] for r in rows]
    assert ids == list(range(len(ids))), ids[:20]
    times = [r[1] for r in rows]
    assert times == sorted(times), "snapshot times go back"


def failover_rounds(servers, make_restart, data, rounds: int, writers_count: int = 4,
                    before_attach: str = ""):
    """Kills the writer `rounds` times while DuckDB writers commit; returns
    the failover times (kill to the first commit acknowledged after it).
    `before_attach` runs first on each DuckDB connection (an S3 secret)."""
    attach = (f"{before_attach}ATTACH 'ducklake:postgres:{multi_host(servers)}' AS l "
              f"(DATA_PATH '{data}')")
    setup = duckdb_connect()
    setup.execute(attach)
    setup.execute("CREATE TABLE l.t (writer INTEGER, seq INTEGER)")
    setup.close()
    writers = [DuckWriter(attach, who) for who in range(writers_count)]
    for w in writers:
        w.start()
    times = []
    try:
        for round_ in range(rounds):
            # Every writer commits a few times before the kill.
            deadline = time.monotonic() + 60
            while any(len(w.acked) < 3 * (round_ + 1) for w in writers):
                assert time.monotonic() < deadline, \
                    f"writers do not commit: {[(len(w.acked), w.failures[-1:]) for w in writers]}"
                time.sleep(0.05)
            writer = next(s for s in servers if s.role() == "writer")
            standby = next(s for s in servers if s is not writer)
            before = {w.who: len(w.acked) for w in writers}
            acked_before_kill = acked_rows(writers)
            killed_at = time.monotonic()
            os.killpg(writer.proc.pid, signal.SIGKILL)
            writer.wait_exit()
            standby.wait_role("writer")
            deadline = time.monotonic() + 60
            while not any(t > killed_at for w in writers for t in w.acked_at):
                assert time.monotonic() < deadline, "no commit in 60 s after the kill"
                time.sleep(0.01)
            first = min(t for w in writers for t in w.acked_at if t > killed_at)
            times.append(first - killed_at)
            # The killed server comes back as the standby.
            make_restart(writer)
            writer.wait_role("standby")
            # Every writer makes progress after the failover.
            deadline = time.monotonic() + 60
            while any(len(w.acked) <= before[w.who] for w in writers):
                assert time.monotonic() < deadline, \
                    f"a writer made no commit after round {round_}: " \
                    f"{[(w.who, len(w.acked), w.failures[-1:]) for w in writers]}"
                time.sleep(0.05)
            assert acked_before_kill <= acked_rows(writers)
    finally:
        for w in writers:
            w.stop.set()
        for w in writers:
            w.join(60)
    check = duckdb_connect()
    check.execute(attach)
    present = set(check.execute("SELECT writer, seq FROM l.t").fetchall())
    missing = acked_rows(writers) - present
    assert not missing, f"{len(missing)} acknowledged commits lost, e.g. {sorted(missing)[:5]}"
    (count,) = check.execute("SELECT count(*) FROM l.t").fetchone()
    assert count == len(present), "duplicate rows"
    check.close()
    failures = sum(len(w.failures) for w in writers)
    print(f"\nfailover over {rounds} rounds, {writers_count} DuckDB writers: "
          f"kill to first commit p50 {statistics.median(times) * 1000:.0f} ms, "
          f"max {max(times) * 1000:.0f} ms; {len(present)} rows, "
          f"{failures} statements failed in all (in flight or reconnecting)")
    return times


@pytest.mark.rocklake
def test_kill_9_of_the_writer_loses_no_acknowledged_commit(data_dir, tmp_path):
    a, b = writer_and_standby(tmp_path)
    try:

        def restart(server):
            server.start()

        failover_rounds([a, b], restart, data_dir("lake"), rounds=4)
        log = (b.log_path.read_text(errors="replace") + a.log_path.read_text(errors="replace"))
        assert "took over as the writer" in log
        writer = next(s for s in (a, b) if s.role() == "writer")
        with psycopg.connect(f"host=127.0.0.1 port={writer.port} user=postgres dbname=lake",
                             autocommit=True) as con:
            check_history(con)
    finally:
        a.stop()
        b.stop()


@pytest.mark.rocklake
def test_a_paused_writer_acknowledges_nothing_after_the_standby_took_over(data_dir, tmp_path):
    a, b = writer_and_standby(tmp_path)
    data = data_dir("lake")
    try:
        con = duckdb_connect()
        con.execute(f"ATTACH 'ducklake:postgres:{multi_host([a, b])}' AS l (DATA_PATH '{data}')")
        con.execute("CREATE TABLE l.t (i INTEGER)")
        con.execute("INSERT INTO l.t VALUES (1)")
        # A psycopg session on the writer with a transaction to commit.
        old = psycopg.connect(f"host=127.0.0.1 port={a.port} user=postgres dbname=lake")
        old.execute("CREATE TABLE IF NOT EXISTS notes (n int)")
        old.commit()
        old.execute("INSERT INTO notes VALUES (1)")

        os.kill(a.proc.pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        try:
            b.wait_role("writer", timeout=30)
            took = time.monotonic() - stopped_at
            # The writers go on through the standby (the paused host is
            # skipped after connect_timeout).
            con.close()
            con = duckdb_connect()
            con.execute(f"ATTACH 'ducklake:postgres:{multi_host([a, b])}' AS l "
                        f"(DATA_PATH '{data}')")
            con.execute("INSERT INTO l.t VALUES (2)")
            outcome = {}

            def commit_on_the_old_writer():
                try:
                    old.commit()
                    outcome["committed"] = True
                except psycopg.Error as error:
                    outcome["error"] = (error.sqlstate, str(error))

            committing = threading.Thread(target=commit_on_the_old_writer)
            committing.start()
            time.sleep(0.3)
        finally:
            os.kill(a.proc.pid, signal.SIGCONT)
        committing.join(30)
        assert "committed" not in outcome, "the old writer acknowledged a commit after the takeover"
        assert outcome["error"][0] in ("57P01", None) or "lease" in outcome["error"][1], outcome
        # The old writer serves as a standby now.
        a.wait_role("standby")
        con.execute("INSERT INTO l.t VALUES (3)")
        assert con.execute("SELECT i FROM l.t ORDER BY i").fetchall() == [(1,), (2,), (3,)]
        with psycopg.connect(f"host=127.0.0.1 port={b.port} user=postgres dbname=lake",
                             autocommit=True) as check:
            assert check.execute("SELECT count(*) FROM notes").fetchone() == (0,)
            check_history(check)
        log = a.log_path.read_text(errors="replace")
        assert "lost the writer lease" in log and "serving as a standby" in log, log
        print(f"\nSIGSTOP of the writer to the standby taking writes: {took * 1000:.0f} ms "
              f"(--takeover-after {TAKEOVER_AFTER})")
        old.close()
    finally:
        a.stop()
        b.stop()


@pytest.mark.rocklake
def test_multi_host_strings_follow_the_takeover(tmp_path):
    """psycopg with each target_session_attrs value finds the writer and the
    standby as it does a PostgreSQL primary and hot standby, before and after
    the standby took over."""
    a, b = writer_and_standby(tmp_path)
    try:

        def found(servers, attrs):
            with psycopg.connect(multi_host(servers, attrs), autocommit=True) as con:
                port = con.info.port
                standby = con.info.parameter_status("in_hot_standby")
                recovery = con.execute("SELECT pg_is_in_recovery()").fetchone()[0]
            assert (standby == "on") == recovery
            return port

        for order in ([a, b], [b, a]):
            for attrs, expected in (("read-write", a), ("primary", a), ("read-only", b),
                                    ("standby", b), ("prefer-standby", b), ("any", order[0])):
                assert found(order, attrs) == expected.port, (attrs, [s.port for s in order])
        os.killpg(a.proc.pid, signal.SIGKILL)
        a.wait_exit()
        b.wait_role("writer")
        a.start()
        a.wait_role("standby")
        for order in ([a, b], [b, a]):
            for attrs, expected in (("read-write", b), ("primary", b), ("read-only", a),
                                    ("standby", a), ("prefer-standby", a)):
                assert found(order, attrs) == expected.port, (attrs, [s.port for s in order])
        # A session on the standby that took over was ended (57P01) and a new
        # one writes; one on the new standby refuses writes with 25006.
        with psycopg.connect(f"host=127.0.0.1 port={a.port} user=postgres dbname=lake",
                             autocommit=True) as con:
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                con.execute("CREATE TABLE refused (i int)")
    finally:
        a.stop()
        b.stop()


@pytest.mark.rocklake
def test_kill_9_rounds_on_s3(s3_server, data_dir, tmp_path):
    """The rounds of the local test on an S3 root: each server opens the
    catalogs from the emulator, and a takeover replays nothing (no journal:
    SlateDB's WAL objects hold every acknowledged commit)."""
    a = S3StandbyBackend(tmp_path / "a", s3_server)
    b = S3StandbyBackend(tmp_path / "b", s3_server, bucket=a.bucket)
    try:
        a.start()
        a.wait_role("writer")
        b.start()
        b.wait_role("standby")
        failover_rounds([a, b], lambda server: server.start(), a.data_url(data_dir("lake")),
                        rounds=3, before_attach=f"{s3_server.duckdb_secret_sql()}; ")
    finally:
        a.stop()
        b.stop()


@pytest.mark.rocklake
def test_failover_on_s3(s3_server, data_dir, tmp_path):
    """Writer and two standbys on one S3 root: one standby wins each
    takeover, and nothing acknowledged is lost."""
    a = S3StandbyBackend(tmp_path / "a", s3_server)
    b = S3StandbyBackend(tmp_path / "b", s3_server, bucket=a.bucket)
    c = S3StandbyBackend(tmp_path / "c", s3_server, bucket=a.bucket)
    servers = [a, b, c]
    try:
        a.start()
        a.wait_role("writer")
        b.start()
        c.start()
        b.wait_role("standby")
        c.wait_role("standby")
        attach = (f"{s3_server.duckdb_secret_sql()}; "
                  f"ATTACH 'ducklake:postgres:{multi_host(servers)}' AS l "
                  f"(DATA_PATH '{a.data_url(data_dir('lake'))}')")
        con = duckdb_connect()
        con.execute(attach)
        con.execute("CREATE TABLE l.t (i INTEGER)")
        acked = []
        for i in range(5):
            con.execute("INSERT INTO l.t VALUES (?)", [i])
            acked.append(i)
        con.close()
        os.killpg(a.proc.pid, signal.SIGKILL)
        a.wait_exit()
        deadline = time.monotonic() + 30
        while sum(s.role() == "writer" for s in (b, c)) != 1:
            assert time.monotonic() < deadline, "no standby took over"
            time.sleep(0.05)
        time.sleep(2)  # the loser stays a standby
        roles = sorted(s.role() for s in (b, c))
        assert roles == ["standby", "writer"], roles
        con = duckdb_connect()
        con.execute(attach)
        con.execute("INSERT INTO l.t VALUES (5)")
        acked.append(5)
        assert [r[0] for r in con.execute("SELECT i FROM l.t ORDER BY i").fetchall()] == acked
        con.close()
    finally:
        for s in servers:
            s.stop()
