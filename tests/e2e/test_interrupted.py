"""Lifecycle commands killed half way (`kill -9`) leave nothing that looks
complete, and their rerun works without deleting anything by hand.

A DuckLake catalog with 200,000 inlined rows (so copying it takes a while)
is built by stock DuckDB on SQLite, imported, backed up and cloned; each
command is killed at random points over several rounds:

* `rocklake import`: the database it was writing is not served (a
  connection names the interrupted import); the rerun imports it whole;
* `rocklake backup` / `rocklake clone`: `rocklake serve` refuses the
  destination with a one-line error naming the command; the rerun into
  the same destination completes and serves every row.

A kill that lands after the command finished leaves a complete result,
which must then hold every row.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time

import psycopg
import pytest

from conftest import ROCKLAKE_BIN, RockLakeBackend, duckdb_connect

pytestmark = pytest.mark.rocklake

ROUNDS = 3
ROWS = 200_000


def build_sqlite_catalog(path, data) -> None:
    con = duckdb_connect()
    con.execute("LOAD sqlite")
    con.execute(f"ATTACH 'ducklake:sqlite:{path}' AS s (DATA_PATH '{data}/', "
                f"DATA_INLINING_ROW_LIMIT {ROWS + 1})")
    con.execute("CREATE TABLE s.big (id BIGINT, pad VARCHAR)")
    con.execute(f"INSERT INTO s.big SELECT range, 'row ' || range FROM range({ROWS})")
    con.execute("CREATE TABLE s.small AS SELECT 1 AS a UNION ALL SELECT 2 UNION ALL SELECT 3")
    con.execute("DETACH s")
    con.close()


def catalog_counts(server: RockLakeBackend, dbname: str = "lake") -> dict[str, int]:
    """Rows of every table of a database's catalog."""
    with psycopg.connect(host=server.host, port=server.port, dbname=dbname,
                         connect_timeout=10, autocommit=True) as con:
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")]
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}


def run(*args, check=True):
    result = subprocess.run([ROCKLAKE_BIN, *args], capture_output=True, text=True, timeout=600)
    if check:
        assert result.returncode == 0, f"rocklake {' '.join(args)}: {result.stderr}"
    return result


def killed(args, after: float) -> bool:
    """Runs `rocklake ARGS`, killing it after `after` seconds; whether it was
    killed (else it finished first)."""
    proc = subprocess.Popen([ROCKLAKE_BIN, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        proc.wait(timeout=after)
        return False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return True


def timed(args) -> float:
    started = time.monotonic()
    run(*args)
    return time.monotonic() - started


def serve_outcome(tmp_path, name, root):
    """`rocklake serve ROOT`: ('refused', its output) when it does not start,
    ('database refused', the error) when database `lake` is not served,
    ('served', the catalog's counts) otherwise."""
    server = RockLakeBackend(tmp_path / name)
    log_path = tmp_path / f"{name}.log"
    command = [ROCKLAKE_BIN, "serve", str(root), "--no-default-database",
               "--listen", f"{server.host}:{server.port}"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    server.proc = proc
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                return ("refused", log_path.read_text().strip())
            try:
                with psycopg.connect(host=server.host, port=server.port, dbname="lake",
                                     connect_timeout=2):
                    break
            except psycopg.OperationalError as e:
                if "incomplete" in str(e):
                    return ("database refused", str(e))
                if "does not exist" in str(e):
                    return ("served", {})
                assert time.monotonic() < deadline, str(e)
                time.sleep(0.2)
        return ("served", catalog_counts(server))
    finally:
        server.stop()


def test_killed_lifecycle_commands_leave_nothing_complete_looking(tmp_path):
    rng = random.Random(os.environ.get("ROCKLAKE_TEST_SEED", "interrupted"))
    source = tmp_path / "source.sqlite"
    build_sqlite_catalog(source, tmp_path / "data")

    # The reference: an import that is not interrupted.
    reference_root = tmp_path / "reference"
    import_seconds = timed(["import", f"sqlite:{source}", str(reference_root)])
    outcome, expected = serve_outcome(tmp_path, "reference-serve", reference_root)
    assert outcome == "served"
    assert expected["ducklake_snapshot"] >= 2
    assert max(expected.values()) >= ROWS, expected

    for round_ in range(ROUNDS):
        root = tmp_path / f"import-{round_}"
        was_killed = killed(["import", f"sqlite:{source}", str(root)],
                            rng.uniform(0.05, import_seconds))
        outcome, detail = serve_outcome(tmp_path, f"import-serve-{round_}", root)
        if outcome == "served":
            # Finished before the kill (or nothing was written yet): whole.
            assert detail in (expected, {}), (was_killed, detail)
        else:
            assert outcome == "database refused", (outcome, detail)
            assert "rocklake import" in detail, detail
        rerun = run("import", f"sqlite:{source}", str(root), check=False)
        if outcome == "served" and detail == expected:
            assert rerun.returncode != 0, "a complete import is not done twice"
        else:
            assert rerun.returncode == 0, rerun.stderr
        assert serve_outcome(tmp_path, f"import-again-{round_}", root) == ("served", expected)

    # Backups and clones of the reference root, killed.
    server = RockLakeBackend(tmp_path / "server")
    server.catalog_dir = reference_root
    server.start()
    try:
        run("checkpoint", "create", "c1", "--dsn", server.dsn())
        backup_seconds = timed(["backup", str(reference_root), str(tmp_path / "backup-timing")])
        clone_seconds = timed(["clone", str(reference_root), str(tmp_path / "clone-timing"),
                               "--checkpoint", "c1", "--data-path",
                               str(tmp_path / "clone-timing-data")])
        for round_ in range(ROUNDS):
            for command, seconds in (("backup", backup_seconds), ("clone", clone_seconds)):
                dest = tmp_path / f"{command}-{round_}"
                args = [command, str(reference_root), str(dest)]
                if command == "clone":
                    args += ["--checkpoint", "c1", "--data-path", str(tmp_path / f"cd-{round_}")]
                else:
                    args += ["--checkpoint", "c1"]
                killed(args, rng.uniform(0.02, seconds))
                outcome, detail = serve_outcome(tmp_path, f"{command}-serve-{round_}", dest)
                if outcome == "served":
                    assert detail == expected, (command, detail)
                    continue
                assert outcome == "refused", (outcome, detail)
                assert f"rocklake {command}" in detail and "incomplete" in detail, detail
                assert len(detail.splitlines()) == 1 or "Error" in detail, detail
                run(*args)
                again = serve_outcome(tmp_path, f"{command}-again-{round_}", dest)
                assert again == ("served", expected), (command, again)
    finally:
        server.stop()
