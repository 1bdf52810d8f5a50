"""Observability: `rocklake serve --metrics-listen ADDR`.

A real Prometheus (Debian's `prometheus` package) scrapes the server every
second while stock DuckDB writes through DuckLake; the test then asks
Prometheus' query API and checks that the counters moved as the workload
says they should (commits, statements by command, errors by SQLSTATE,
sessions, SlateDB's own WAL/request statistics). /healthz and /readyz are
checked directly, including /readyz turning 503 when the writer is fenced
by a second writer of the same catalog.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import psycopg
import pytest

from conftest import RockLakeBackend, duckdb_connect, free_port, wait_for_port

PROMETHEUS = shutil.which("prometheus")


class MetricsBackend(RockLakeBackend):
    """A server with its metrics endpoint on a free port."""

    def __init__(self, workdir, **kwargs):
        super().__init__(workdir, **kwargs)
        self.metrics_port = free_port()

    def command(self):
        return [*super().command(), "--metrics-listen", f"127.0.0.1:{self.metrics_port}"]

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}{path}",
                                        timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()


def sample(text: str, name: str) -> float:
    """The value of the sample `name` (with its labels, as exposed; 0 when absent)."""
    for line in text.splitlines():
        if line.rsplit(" ", 1)[0] == name:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.fixture
def server(tmp_path):
    backend = MetricsBackend(tmp_path / "server")
    backend.start()
    yield backend
    backend.stop()


def test_health_and_exposition(server):
    assert server.get("/healthz") == (200, "ok\n")
    status, body = server.get("/readyz")
    assert (status, body) == (200, "ready\n")
    # By role, for a load balancer's health check: this server is the writer.
    assert server.get("/readyz?role=writer") == (200, "ready\n")
    assert server.get("/readyz?role=replica") == (503, "not a replica: this server is a writer\n")
    assert server.get("/readyz?role=primary")[0] == 400
    status, body = server.get("/nope")
    assert status == 404
    with psycopg.connect(server.dsn(), autocommit=True) as con:
        with pytest.raises(psycopg.errors.UndefinedTable):
            con.execute("SELECT * FROM no_such_table")
        con.execute("SELECT 1")
        status, text = server.get("/metrics")
        assert status == 200
        assert text.endswith("# EOF\n")
        assert sample(text, "rocklake_active_sessions") >= 1
        assert sample(text, 'rocklake_role{role="writer"}') == 1
        assert sample(text, 'rocklake_role{role="replica"}') == 0
        assert sample(text, 'rocklake_errors_total{sqlstate="42P01"}') >= 1
        assert sample(text, 'rocklake_statements_total{command="SELECT"}') >= 1
        # SlateDB's statistics of the default lake.
        assert 'rocklake_slatedb_db_request_count_total{lake="lake",op="get"}' in text


class TakeOverBackend(MetricsBackend):
    """`rocklake serve --take-over`: a planned switchover that fences the
    writer serving the same root."""

    def command(self) -> list[str]:
        return [*super().command(), "--take-over"]


def test_readyz_follows_a_switchover(tmp_path, server):
    # A second writer of the same root is refused while the first lives ...
    refused = subprocess.run([*RockLakeBackend(tmp_path / "refused").command()[:1], "serve",
                              str(server.catalog_dir), "--listen", f"127.0.0.1:{free_port()}"],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0, refused.stderr
    assert "has a live writer" in refused.stderr and "--standby" in refused.stderr, refused.stderr
    status, body = server.get("/readyz?role=writer")
    assert status == 200, body
    # ... and --take-over fences it: the first server learns it lost the
    # writer lease at its next heartbeat, ends its sessions and exits.
    second = TakeOverBackend(tmp_path / "second")
    second.catalog_dir = server.catalog_dir
    second.start()
    try:
        with psycopg.connect(second.dsn(), autocommit=True) as con:
            con.execute("CREATE TABLE fence_me(a int)")
        assert server.wait_exit(timeout=30) != 0
        log = server.log_path.read_text(errors="replace")
        assert "lost the writer lease: another server took over (term 2" in log, log
        status, body = second.get("/readyz?role=writer")
        assert status == 200, body
        metrics = second.get("/metrics")[1]
        assert sample(metrics, "rocklake_lease_term") == 2
        assert 'rocklake_role{role="writer"} 1' in metrics
    finally:
        second.stop()


@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus is not installed (apt-get install prometheus)")
def test_prometheus_scrapes_a_duckdb_workload(tmp_path, server):
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: rocklake\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{server.metrics_port}']\n"
    )
    log = open(tmp_path / "prometheus.log", "wb")
    prometheus = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        assert wait_for_port("127.0.0.1", port, 60, prometheus) is None

        def query(expr: str) -> float | None:
            url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    result = json.load(response)["data"]["result"]
            except urllib.error.HTTPError as e:
                # Prometheus answers 503 while it starts (its port is open
                # before its storage is ready): no value yet.
                if e.code == 503:
                    return None
                raise
            return float(result[0]["value"][1]) if result else None

        def wait_for(expr: str, check, timeout: float = 60) -> float | None:
            deadline = time.time() + timeout
            value = None
            while time.time() < deadline:
                value = query(expr)
                if value is not None and check(value):
                    return value
                time.sleep(0.5)
            pytest.fail(f"{expr} = {value} after {timeout} s\n"
                        + (tmp_path / "prometheus.log").read_text()[-2000:])

        wait_for('up{job="rocklake"}', lambda v: v == 1)
        before = wait_for("rocklake_commits_total", lambda v: True)
        inserts_before = query('rocklake_statements_total{command="INSERT"}') or 0

        con = duckdb_connect()
        con.execute(server.attach_sql("l", tmp_path / "data"))
        con.execute("CREATE TABLE l.t(a INT)")
        for i in range(10):
            con.execute(f"INSERT INTO l.t VALUES ({i})")
        assert con.execute("SELECT count(*) FROM l.t").fetchone() == (10,)
        with pytest.raises(Exception):
            con.execute("SELECT * FROM l.no_such_table")
        con.close()

        # Each DuckLake commit (CREATE + 10 INSERTs) is one catalog commit.
        wait_for("rocklake_commits_total", lambda v: v >= before + 11)
        wait_for('rocklake_statements_total{command="INSERT"}',
                 lambda v: v >= inserts_before + 11)
        wait_for("rocklake_commit_duration_seconds_count", lambda v: v >= 11)
        wait_for("rocklake_sessions_total", lambda v: v >= 1)
        # Each commit one after the other was acknowledged by its own sync of
        # the commit journal; SlateDB writes them in the background.
        wait_for("rocklake_journal_syncs_total", lambda v: v >= 11)
        wait_for('sum(rocklake_slatedb_db_request_count_total{lake="lake",op="flush"})',
                 lambda v: v >= 1)
        wait_for('sum(rocklake_scan_cache_lookups_total)', lambda v: v > 0)
        # SlateDB's object-store requests (WAL and manifest objects).
        wait_for('sum(rocklake_slatedb_object_store_request_count_total{lake="lake",api="put"})',
                 lambda v: v >= 1)
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=30)
        log.close()
