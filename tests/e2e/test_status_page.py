"""The status page at `/` of the metrics endpoint: after a DuckDB workload it
shows what the catalog holds (latest snapshot, commits per hour, tables with
their files and rows, inlined-data tables, tags, checkpoints, sessions),
checked from the HTML and in a real headless Chromium (Debian's package),
which also takes a screenshot for people to look at."""

from __future__ import annotations

import html.parser
import pathlib
import shutil
import subprocess
import urllib.request

import psycopg
import pytest

from conftest import RockLakeBackend, duckdb_connect, free_port

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class StatusBackend(RockLakeBackend):
    def __init__(self, workdir):
        super().__init__(workdir)
        self.metrics_port = free_port()

    def command(self):
        return [*super().command(), "--metrics-listen", f"127.0.0.1:{self.metrics_port}"]

    @property
    def url(self):
        return f"http://127.0.0.1:{self.metrics_port}/"


class Classes(html.parser.HTMLParser):
    """The text of every element by class (and id), and the tables' rows."""

    def __init__(self):
        super().__init__()
        self.by_class: dict[str, list[str]] = {}
        self.rows: list[list[str]] = []
        self._open: list[str | None] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        key = attrs.get("class") or attrs.get("id")
        self._open.append(key)
        if key:
            self.by_class.setdefault(key, []).append("")
        if tag == "tr":
            self._row = []
        if tag == "td":
            self._cell = []

    def handle_endtag(self, tag):
        if self._open:
            self._open.pop()
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        if tag == "tr" and self._row:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        for key in self._open:
            if key:
                self.by_class[key][-1] += data
        if self._cell is not None:
            self._cell.append(data)


def parse(page: str) -> Classes:
    parsed = Classes()
    parsed.feed(page)
    return parsed


@pytest.mark.rocklake
def test_the_status_page_shows_what_the_catalog_holds(tmp_path):
    server = StatusBackend(tmp_path / "rocklake")
    server.start()
    try:
        con = duckdb_connect()
        con.execute(server.attach_sql("l", tmp_path / "data"))
        con.execute("CREATE TABLE l.events (id INTEGER, note VARCHAR)")
        con.execute("CREATE TABLE l.small (i INTEGER)")
        con.execute("INSERT INTO l.events SELECT i, 'n' || i FROM range(5000) r(i)")
        con.execute("INSERT INTO l.events SELECT i, 'm' || i FROM range(5000, 8000) r(i)")
        for i in range(3):
            con.execute("INSERT INTO l.small VALUES (?)", [i])
        latest = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('l')").fetchone()[0]
        count = con.execute("SELECT count(*) FROM ducklake_snapshots('l')").fetchone()[0]
        files = con.execute("SELECT count(*) FROM ducklake_list_files('l', 'events')").fetchone()[0]
        with psycopg.connect(server.dsn(), autocommit=True) as admin:
            admin.execute(f"CALL rocklake_tag('release', {latest})")
            admin.execute("CALL rocklake_checkpoint('before-demo')")
            inlined = admin.execute(
                "SELECT count(*) FROM ducklake_inlined_data_tables").fetchone()[0]

        with urllib.request.urlopen(server.url, timeout=30) as response:
            assert response.headers["Content-Type"].startswith("text/html")
            page = response.read().decode()
        seen = parse(page)
        assert seen.by_class["role"] == ["writer"]
        lease = seen.by_class["lease"][0]
        assert lease.startswith("term 1 held by rocklake serve on 127.0.0.1:") and "heartbeat" in lease, lease
        assert seen.by_class["latest-snapshot"] == [str(latest)]
        assert seen.by_class["chart-total"] == [str(count)]
        assert seen.by_class["inlined-tables"] == [str(inlined)]
        assert int(seen.by_class["catalog-bytes"][0]) > 0
        assert "release" in seen.by_class["meta tags"][0], seen.by_class
        assert "before-demo" in seen.by_class["meta checkpoints"][0], seen.by_class
        tables = {(r[0], r[1]): r[2:] for r in seen.rows if len(r) == 5}
        assert tables[("main", "events")] == [str(files), "8000", tables[("main", "events")][2]]
        assert int(tables[("main", "events")][2]) > 0
        assert tables[("main", "small")][1] == "3"
        assert int(seen.by_class["session-count"][0]) >= 1  # DuckDB's connection
        assert "<script" not in page and "http://" not in page.replace(server.url, "")

        if CHROMIUM is None:
            pytest.skip("chromium is not installed (apt-get install chromium)")
        shot = tmp_path / "status-page.png"
        flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                 "--enable-logging=stderr", "--v=0", "--window-size=1280,1600"]
        dom = subprocess.run([*flags, "--dump-dom", server.url], capture_output=True,
                             text=True, timeout=120)
        assert dom.returncode == 0, dom.stderr[-2000:]
        rendered = parse(dom.stdout)
        assert rendered.by_class["latest-snapshot"] == [str(latest)]
        assert rendered.by_class["chart-total"] == [str(count)]
        console = [line for line in dom.stderr.splitlines() if ":CONSOLE(" in line]
        assert not console, console
        taken = subprocess.run([*flags, f"--screenshot={shot}", server.url],
                               capture_output=True, text=True, timeout=120)
        assert taken.returncode == 0 and shot.stat().st_size > 10_000, taken.stderr[-2000:]
        print(f"\nstatus page screenshot: {shot}")
        con.close()
    finally:
        server.stop()
