"""Several DuckDB processes committing to one RockLake catalog at once.

DuckLake detects concurrent commits through the catalog: a second insert of the
same ducklake_snapshot id must fail the way PostgreSQL fails it (23505, unique
constraint message), and DuckLake then retries. Every commit must land exactly
once, and readers must only ever see committed snapshots. Runs with the
catalog in a local directory and with catalog and data in an S3 bucket.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap

import pytest

from conftest import EXTENSION_DIR

WRITERS = 4
COMMITS = 50

# One writer or reader process. argv: role, attach SQL, writer id, commit count, out file.
CHILD = textwrap.dedent(
    """
    import json, pathlib, sys, time
    import duckdb
    role, attach, ext_dir, who, count, out, table = sys.argv[1:8]
    who, count = int(who), int(count)
    con = duckdb.connect(config={"extension_directory": ext_dir,
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": True})
    con.execute("LOAD ducklake; LOAD postgres_scanner;")
    con.execute(attach)
    # DuckLake's retries wait 100 ms x 1.5^n; with four writers colliding on
    # every snapshot id, allow more attempts than the default 10.
    con.execute("SET ducklake_max_retry_count = 100")
    result = {"role": role, "who": who}
    if role == "writer":
        for i in range(count):
            con.execute(f"INSERT INTO l.{table} VALUES (?, ?)", [who, i])
        result["done"] = count
    else:
        seen = []
        deadline = time.time() + 120
        while time.time() < deadline:
            n = con.execute("SELECT count(*) FROM l.all_rows").fetchone()[0]
            snap = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('l')").fetchone()[0]
            seen.append([n, snap])
            if n >= count:
                break
            time.sleep(0.05)
        result["seen"] = seen
    pathlib.Path(out).write_text(json.dumps(result))
    """
)


def _spawn(tmp_path: pathlib.Path, role: str, attach: str, who: int, count: int, table: str):
    out = tmp_path / f"{role}-{who}.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, role, attach, EXTENSION_DIR, str(who), str(count), str(out),
         table],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    return proc, out


@pytest.mark.rocklake
@pytest.mark.storages("local", "s3")
@pytest.mark.parametrize("tables", ["same_table", "own_table"])
def test_four_writers_fifty_commits_each(rocklake, duck, data_dir, tmp_path, monkeypatch, tables):
    """Four writers commit 50 times each, all into one table or each into its own
    (snapshot ids are global, so writers of different tables collide too)."""
    monkeypatch.setenv("RUST_LOG", "rocklake_wire=info")  # the server logs failed statements
    rocklake.start()
    data = data_dir("concurrent")
    attach = rocklake.attach_sql("l", data)
    con = duck()
    con.execute(attach)
    names = ["t"] * WRITERS if tables == "same_table" else [f"t{w}" for w in range(WRITERS)]
    for name in sorted(set(names)):
        con.execute(f"CREATE TABLE l.{name} (writer INTEGER, i INTEGER)")
    con.execute("CREATE VIEW l.all_rows AS " + " UNION ALL ".join(
        f"SELECT * FROM l.{name}" for name in sorted(set(names))))
    base_snapshot = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('l')").fetchone()[0]
    con.execute("DETACH l")

    total = WRITERS * COMMITS
    procs = [_spawn(tmp_path, "writer", attach, w, COMMITS, names[w]) for w in range(WRITERS)]
    procs.append(_spawn(tmp_path, "reader", attach, 99, total, "all_rows"))
    for proc, out in procs:
        try:
            output, _ = proc.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
            pytest.fail(f"a client hung:\n{output}\n{rocklake.log_tail()}")
        assert proc.returncode == 0, f"client failed:\n{output}\n--- server ---\n{rocklake.log_tail()}"
        assert out.exists(), output

    con = duck()
    con.execute(attach)
    rows = con.execute("SELECT writer, i FROM l.all_rows ORDER BY ALL").fetchall()
    assert rows == sorted((w, i) for w in range(WRITERS) for i in range(COMMITS)), \
        "every committed row exactly once"
    snapshots = con.execute(
        "SELECT snapshot_id FROM ducklake_snapshots('l') WHERE snapshot_id > ? ORDER BY 1",
        [base_snapshot]).fetchall()
    assert [s[0] for s in snapshots] == list(range(base_snapshot + 1, base_snapshot + 1 + total)), \
        "exactly one snapshot per commit, no gaps"

    # The writers really collided and DuckLake retried on PostgreSQL's error.
    log = rocklake.log_path.read_text(errors="replace")
    assert 'code=23505 error=duplicate key value violates unique constraint' in log, \
        "no concurrent commit collided: the test did not exercise DuckLake's retries"

    # Readers only ever saw committed states: the row count never goes down, it
    # is never more than the commits made so far, and the count at each
    # snapshot version equals the number of commits up to it.
    seen = json.loads((tmp_path / "reader-99.json").read_text())["seen"]
    counts = [n for n, _ in seen]
    assert counts == sorted(counts), f"a reader saw the row count go down: {counts}"
    for n, snap in seen:
        assert n <= snap - base_snapshot, (n, snap)
    for version in (base_snapshot + 1, base_snapshot + total // 2, base_snapshot + total):
        n = sum(con.execute(f"SELECT count(*) FROM l.{name} AT (VERSION => {version})").fetchone()[0]
                for name in sorted(set(names)))
        assert n == version - base_snapshot


def _duplicate_in_flight(dsn: str) -> list:
    """Two transactions insert the same ducklake_snapshot id; what the second
    one sees: whether its INSERT waited for the first transaction, and how it
    ended once the first committed (then, with another id, rolled back)."""
    import threading
    import time

    import psycopg

    steps = []
    for first_ends in ("commit", "rollback"):
        with psycopg.connect(dsn) as first, psycopg.connect(dsn) as second:
            snapshot_id = first.execute("SELECT max(snapshot_id) + 1 FROM ducklake_snapshot").fetchone()[0]
            insert = f"INSERT INTO ducklake_snapshot VALUES ({snapshot_id}, NOW(), 0, 1, 0)"
            first.execute(insert)
            outcome = {}

            def second_inserts():
                try:
                    second.execute(insert)
                    outcome["insert"] = "ok"
                except psycopg.Error as error:
                    outcome["insert"] = error.sqlstate

            waiting = threading.Thread(target=second_inserts)
            waiting.start()
            time.sleep(0.5)
            waited = waiting.is_alive()
            getattr(first, first_ends)()
            waiting.join(timeout=30)
            assert not waiting.is_alive(), "the second INSERT never returned"
            second.rollback() if outcome["insert"] != "ok" else second.commit()
            count = first.execute(
                f"SELECT count(*) FROM ducklake_snapshot WHERE snapshot_id = {snapshot_id}").fetchone()[0]
            steps.append((first_ends, waited, outcome["insert"], count))
    return steps


@pytest.mark.rocklake
def test_a_duplicate_of_a_transaction_in_flight_waits_and_fails_at_the_insert(rocklake, duck, data_dir, request):
    """As a unique index of PostgreSQL: the second INSERT of a key another
    transaction in flight inserted waits for it, then fails with 23505 if it
    committed (DuckLake's commit retry expects the failure in its commit
    batch, not at COMMIT) or goes on if it rolled back."""
    import os

    from conftest import PostgresBackend

    rocklake.start()
    con = duck()
    con.execute(rocklake.attach_sql("l", data_dir()))
    con.execute("DETACH l")
    ours = _duplicate_in_flight(rocklake.dsn())
    assert ours == [("commit", True, "23505", 1), ("rollback", True, "ok", 1)], ours
    if os.environ.get("ROCKLAKE_PG_REFERENCE") == "1":
        pg = PostgresBackend(request.getfixturevalue("pg_server"))
        con.execute(pg.attach_sql("p", data_dir()))
        con.execute("DETACH p")
        assert _duplicate_in_flight(pg.server.dsn(pg.db)) == ours
