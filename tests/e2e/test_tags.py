"""Tags: `CALL rocklake_tag('name', snapshot_id)` keeps a snapshot readable
whatever the retention floor; DuckDB's `ducklake_expire_snapshots` on it
fails clearly; backups carry tags; `rocklake_untag` gives it up."""

from __future__ import annotations

import subprocess
import time

import duckdb
import psycopg
import pytest

from conftest import ROCKLAKE_BIN, RockLakeBackend, duckdb_connect


def call(server, sql):
    with psycopg.connect(server.dsn(), autocommit=True) as con:
        return con.execute(sql).fetchall()


def call_error(server, sql):
    with psycopg.connect(server.dsn(), autocommit=True) as con:
        with pytest.raises(psycopg.Error) as failed:
            con.execute(sql)
    return failed.value.sqlstate, str(failed.value).splitlines()[0]


@pytest.mark.rocklake
def test_a_tagged_snapshot_outlives_retention_and_expiry(tmp_path):
    server = RockLakeBackend(tmp_path / "rocklake")
    server.start()
    data = tmp_path / "data"
    try:
        con = duckdb_connect()
        con.execute(server.attach_sql("l", data))
        con.execute("CREATE TABLE l.t (i INTEGER)")
        for i in range(5):
            con.execute("INSERT INTO l.t VALUES (?)", [i])
        snapshots = [r[0] for r in con.execute(
            "SELECT snapshot_id FROM ducklake_snapshots('l') ORDER BY 1").fetchall()]
        tagged = snapshots[3]
        at_tag = con.execute(f"SELECT count(*) FROM l.t AT (VERSION => {tagged})").fetchone()
        assert call(server, f"CALL rocklake_tag('release-1', {tagged})") == \
            [(f"tag release-1", f"snapshot {tagged}")]
        assert call(server, "CALL rocklake_tags()") == [("tag release-1", f"snapshot {tagged}")]

        # The floor stops at the tag; excision keeps what it sees.
        rows = dict(call(server, f"CALL rocklake_retain_from('{snapshots[-1]}')"))
        assert rows["retain_from"] == str(tagged), rows
        call(server, "CALL rocklake_excise()")
        assert con.execute(
            f"SELECT count(*) FROM l.t AT (VERSION => {tagged})").fetchone() == at_tag

        # DuckDB's own expiry of the tagged snapshot fails clearly.
        with pytest.raises(duckdb.Error) as refused:
            con.execute(f"CALL ducklake_expire_snapshots('l', versions => [{tagged}])")
        assert f'snapshot {tagged} is tagged "release-1"' in str(refused.value), refused.value
        assert con.execute(
            f"SELECT count(*) FROM l.t AT (VERSION => {tagged})").fetchone() == at_tag

        # Mistakes, as PostgreSQL words its own.
        assert call_error(server, f"CALL rocklake_tag('release-1', {tagged})")[0] == "22023"
        assert call_error(server, "CALL rocklake_tag('old', 1)")[0] == "22023"
        assert call_error(server, "CALL rocklake_tag('nope', 999999)")[0] == "22023"
        assert call_error(server, "CALL rocklake_untag('nope')") == \
            ("42704", 'tag "nope" does not exist')

        # A backup carries the tag.
        backup = tmp_path / "backup"
        subprocess.run([ROCKLAKE_BIN, "backup", server.location, str(backup)], check=True,
                       capture_output=True, timeout=120)
        copy = RockLakeBackend(tmp_path / "copy")
        copy.catalog_dir = backup
        copy.start()
        try:
            assert call(copy, "CALL rocklake_tags()") == [("tag release-1", f"snapshot {tagged}")]
        finally:
            copy.stop()

        # Untagged, the floor moves on and the snapshot is gone.
        assert call(server, "CALL rocklake_untag('release-1')") == [("tag removed", "release-1")]
        assert call(server, "CALL rocklake_tags()") == []
        rows = dict(call(server, f"CALL rocklake_retain_from('{snapshots[-1]}')"))
        assert rows["retain_from"] == str(snapshots[-1]), rows
        with pytest.raises(duckdb.Error):
            con.execute(f"SELECT count(*) FROM l.t AT (VERSION => {tagged})").fetchone()
        con.close()
    finally:
        server.stop()


class RetainingBackend(RockLakeBackend):
    """`rocklake serve --retain 2s`, applied every 200 ms."""

    def command(self):
        return [*super().command(), "--retain", "2s", "--retention-every", "200ms"]


def oldest_snapshot(server):
    return call(server, "SELECT min(snapshot_id), count(*) FROM ducklake_snapshot")[0]


@pytest.mark.rocklake
def test_serve_retain_keeps_catalogs_bounded_by_itself(tmp_path):
    server = RetainingBackend(tmp_path / "rocklake")
    server.start()
    try:
        con = duckdb_connect()
        con.execute(server.attach_sql("l", tmp_path / "data"))
        con.execute("CREATE TABLE l.t (i INTEGER)")
        for i in range(5):
            con.execute("INSERT INTO l.t VALUES (?)", [i])
        tagged = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('l')").fetchone()[0]
        call(server, f"CALL rocklake_tag('keep', {tagged})")
        for i in range(5, 10):
            con.execute("INSERT INTO l.t VALUES (?)", [i])
        # The floor follows the clock up to the tag, never past it.
        deadline = time.monotonic() + 30
        while oldest_snapshot(server)[0] != tagged:
            assert time.monotonic() < deadline, oldest_snapshot(server)
            time.sleep(0.2)
        time.sleep(2.5)
        assert oldest_snapshot(server)[0] == tagged
        assert con.execute(f"SELECT count(*) FROM l.t AT (VERSION => {tagged})").fetchone() == (5,)
        # Untagged, history before the last 2 s goes (rows excised).
        call(server, "CALL rocklake_untag('keep')")
        con.execute("INSERT INTO l.t VALUES (10)")
        deadline = time.monotonic() + 30
        while oldest_snapshot(server)[0] <= tagged:
            assert time.monotonic() < deadline, oldest_snapshot(server)
            time.sleep(0.2)
        assert con.execute("SELECT count(*) FROM l.t").fetchone() == (11,)
        # A lake may turn it off.
        assert call(server, "CALL rocklake_set_retention('off')") == [("retention", "off")]
        floor, _ = oldest_snapshot(server)
        for i in range(3):
            con.execute("INSERT INTO l.t VALUES (?)", [100 + i])
        time.sleep(3)
        assert oldest_snapshot(server)[0] == floor
        assert call_error(server, "CALL rocklake_set_retention('42')")[0] == "22023"
        log = server.log_path.read_text(errors="replace")
        assert "retention applied" in log or "excision committed" in log, log[-2000:]
        con.close()
    finally:
        server.stop()
