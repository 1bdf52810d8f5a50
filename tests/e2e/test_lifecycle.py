"""Checkpoints, backups and clones of a live lake (`rocklake checkpoint`,
`rocklake backup`, `rocklake clone`), with stock DuckDB.

Covered: a checkpoint made through the running server while DuckDB writes;
a backup taken from it, and one taken from the latest state while four
DuckDB writers commit, each opening with `rocklake serve DEST` as a normal
catalog holding whole commits only (every snapshot's rows complete) and at
least every commit acknowledged before the backup started; a clone of a
checkpoint that diverges from its parent; DuckLake maintenance (expire +
cleanup + orphan deletion) on the clone never deletes a file its parent
reads, and on the parent is refused (SQLSTATE 55006) for the files it
shares, so both keep reading every row; a backup into an S3 bucket and a
clone inside that bucket (S3 emulator), each served and read; and the bad
inputs: an unknown checkpoint, a non-empty target, overlapping data paths.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

import psycopg
import pytest

from conftest import ROCKLAKE_BIN, RockLakeBackend, RockLakeS3Backend, duckdb_connect


def rocklake(*args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run([ROCKLAKE_BIN, *args], capture_output=True, text=True, timeout=300,
                            env=env)
    if check and result.returncode != 0:
        pytest.fail(f"rocklake {' '.join(args)} failed:\n{result.stderr}")
    return result


def checkpoint(server: RockLakeBackend, *args: str, check: bool = True):
    return rocklake("checkpoint", *args, "--dsn", server.dsn(), check=check)


def files_under(path) -> set[str]:
    return {os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs}


@pytest.fixture
def server(tmp_path):
    backend = RockLakeBackend(tmp_path / "server")
    backend.start()
    yield backend
    backend.stop()


def attach(backend: RockLakeBackend, alias: str, data) -> str:
    """ATTACH with data inlining off: every insert writes a Parquet file."""
    return backend.attach_sql(alias, data)[:-1] + ", DATA_INLINING_ROW_LIMIT 0)"


def serve(tmp_path, name: str, location) -> RockLakeBackend:
    backend = RockLakeBackend(tmp_path / name)
    backend.catalog_dir = location
    backend.start()
    return backend


def test_checkpoint_backup_and_bad_inputs(tmp_path, server):
    data = tmp_path / "data"
    con = duckdb_connect()
    con.execute(server.attach_sql("l", data))
    con.execute("CREATE TABLE l.t(a INT)")
    con.execute("INSERT INTO l.t VALUES (1), (2)")
    out = checkpoint(server, "create", "first").stdout
    assert "checkpoint first" in out
    con.execute("INSERT INTO l.t VALUES (3)")
    assert "checkpoint first" in checkpoint(server, "list").stdout
    again = checkpoint(server, "create", "first", check=False)
    assert again.returncode != 0 and "already exists" in again.stderr

    # A backup of the checkpoint holds what was committed before it.
    dest = tmp_path / "backup"
    rocklake("backup", server.location, str(dest), "--checkpoint", "first")
    copy = serve(tmp_path, "backup-server", dest)
    try:
        reader = duckdb_connect()
        reader.execute(copy.attach_sql("b", data))
        assert reader.execute("SELECT sum(a) FROM b.t").fetchone() == (3,)
        reader.close()
    finally:
        copy.stop()

    # Bad inputs: each a one-line error, a non-zero exit, nothing written.
    unknown = rocklake("backup", server.location, str(tmp_path / "b2"),
                       "--checkpoint", "nope", check=False)
    assert unknown.returncode != 0 and 'checkpoint "nope" does not exist' in unknown.stderr
    assert not (tmp_path / "b2" / "databases").exists() or not any(
        (tmp_path / "b2" / "databases").iterdir())
    taken = rocklake("backup", server.location, str(dest), check=False)
    assert taken.returncode != 0 and "already holds a catalog" in taken.stderr
    clone_taken = rocklake("clone", server.location, str(dest), "--checkpoint", "first",
                           "--data-path", str(tmp_path / "cdata"), check=False)
    assert clone_taken.returncode != 0 and "already holds a catalog" in clone_taken.stderr
    checkpoint(server, "delete", "first")
    assert "first" not in checkpoint(server, "list").stdout
    missing = checkpoint(server, "delete", "first", check=False)
    assert missing.returncode != 0 and "does not exist" in missing.stderr
    con.close()


def test_backup_while_four_writers_commit(tmp_path, server):
    data = tmp_path / "data"
    setup = duckdb_connect()
    setup.execute(server.attach_sql("l", data))
    setup.execute("CREATE TABLE l.t(writer INT, n INT, pad VARCHAR)")
    setup.close()
    stop = threading.Event()
    acknowledged: list[list[int]] = [[] for _ in range(4)]

    def write(writer: int):
        con = duckdb_connect()
        con.execute(server.attach_sql("l", data))
        n = 0
        while not stop.is_set():
            try:
                # One commit of 3 rows: a copy must hold all 3 or none.
                con.execute(f"INSERT INTO l.t VALUES ({writer}, {n}, 'a'), "
                            f"({writer}, {n}, 'b'), ({writer}, {n}, 'c')")
                acknowledged[writer].append(n)
            except Exception:
                pass  # DuckLake's retries exhausted: not acknowledged
            n += 1
        con.close()

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(3)
    before = [list(acks) for acks in acknowledged]
    dest = tmp_path / "backup"
    started = time.time()
    rocklake("backup", server.location, str(dest))
    took = time.time() - started
    time.sleep(1)
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    assert sum(map(len, before)) > 0

    copy = serve(tmp_path, "backup-server", dest)
    try:
        reader = duckdb_connect()
        reader.execute(copy.attach_sql("b", data))
        groups = reader.execute(
            "SELECT writer, n, count(*) FROM b.t GROUP BY ALL").fetchall()
        assert all(count == 3 for _, _, count in groups), "a partial commit in the backup"
        present = {(w, n) for w, n, _ in groups}
        for writer, acks in enumerate(before):
            for n in acks:
                assert (writer, n) in present, f"commit {writer}/{n} acknowledged before the backup is missing"
        # The copy takes writes of its own.
        reader.execute("INSERT INTO b.t VALUES (9, 0, 'x')")
        reader.close()
    finally:
        copy.stop()
    print(f"backup of a live catalog ({len(groups)} commits) took {took:.2f} s")


def test_clone_diverges_and_maintenance_keeps_both_readable(tmp_path, server):
    data = tmp_path / "data"
    clone_data = tmp_path / "clone-data"
    con = duckdb_connect()
    con.execute(attach(server, "l", data))
    con.execute("CREATE TABLE l.t(a INT)")
    for i in range(5):
        con.execute(f"INSERT INTO l.t VALUES ({i})")
    con.execute("DELETE FROM l.t WHERE a = 0")
    checkpoint(server, "create", "fork")

    overlap = rocklake("clone", server.location, str(tmp_path / "bad-clone"),
                       "--checkpoint", "fork", "--data-path", str(data / "inner"), check=False)
    assert overlap.returncode != 0 and "overlap" in overlap.stderr
    new = tmp_path / "clone"
    started = time.time()
    rocklake("clone", server.location, str(new), "--checkpoint", "fork",
             "--data-path", str(clone_data))
    took = time.time() - started
    size = sum(os.path.getsize(f) for f in files_under(new))
    print(f"clone took {took:.2f} s and holds {size} bytes")

    clone = serve(tmp_path, "clone-server", new)
    try:
        c = duckdb_connect()
        c.execute(attach(clone, "c", clone_data))
        assert c.execute("SELECT sum(a) FROM c.t").fetchone() == (10,)
        # Diverge: each side's writes stay its own.
        c.execute("INSERT INTO c.t VALUES (100)")
        con.execute("INSERT INTO l.t VALUES (1000)")
        assert c.execute("SELECT sum(a) FROM c.t").fetchone() == (110,)
        assert con.execute("SELECT sum(a) FROM l.t").fetchone() == (1010,)
        assert files_under(clone_data), "the clone's new files go to its data path"

        parent_files = files_under(data)
        # Maintenance on the clone: rewrite everything, expire, clean up.
        c.execute("CALL ducklake_merge_adjacent_files('c')")
        c.execute("CALL ducklake_expire_snapshots('c', older_than => now())")
        c.execute("CALL ducklake_cleanup_old_files('c', cleanup_all => true)")
        c.execute("CALL ducklake_delete_orphaned_files('c', cleanup_all => true)")
        assert files_under(data) >= parent_files, "the clone deleted a file of its parent"
        assert c.execute("SELECT sum(a) FROM c.t").fetchone() == (110,)
        assert con.execute("SELECT sum(a) FROM l.t").fetchone() == (1010,)
        assert con.execute("SELECT sum(a) FROM l.t AT (VERSION => 2)").fetchone() == (0,)

        # Maintenance on the parent: deleting a file it shares is refused,
        # cleanly (merging files deletes the merged ones at once).
        refused = 0
        for call in ["CALL ducklake_merge_adjacent_files('l')",
                     "CALL ducklake_expire_snapshots('l', older_than => now())"]:
            try:
                con.execute(call)
            except Exception as error:
                assert "shared with the clone" in str(error), error
                refused += 1
        assert refused >= 1
        con.execute("CALL ducklake_cleanup_old_files('l', cleanup_all => true)")
        con.execute("CALL ducklake_delete_orphaned_files('l', cleanup_all => true)")
        assert con.execute("SELECT sum(a) FROM l.t").fetchone() == (1010,)
        assert c.execute("SELECT sum(a) FROM c.t").fetchone() == (110,)
        c.close()
    finally:
        clone.stop()

    # Once the clone is gone, the parent may delete what it shared.
    rocklake("clone", server.location, str(new), "--release")
    con.execute("CALL ducklake_merge_adjacent_files('l')")
    con.execute("CALL ducklake_expire_snapshots('l', older_than => now())")
    con.execute("CALL ducklake_cleanup_old_files('l', cleanup_all => true)")
    assert con.execute("SELECT sum(a) FROM l.t").fetchone() == (1010,)
    con.close()


class RockLakeAt(RockLakeS3Backend):
    """A server of the catalog at `s3://BUCKET/<folder>`."""

    def __init__(self, workdir, s3, bucket: str, folder: str):
        super().__init__(workdir, s3, bucket=bucket)
        self.folder = folder

    @property
    def location(self) -> str:
        return f"s3://{self.bucket}/{self.folder}"


def test_backup_into_a_bucket_and_a_clone_inside_it(tmp_path, server, s3_server):
    data = tmp_path / "data"
    con = duckdb_connect()
    con.execute(attach(server, "l", data))
    con.execute("CREATE TABLE l.t(a INT)")
    con.execute("INSERT INTO l.t SELECT range FROM range(100)")
    checkpoint(server, "create", "to-s3")
    con.close()
    bucket = s3_server.new_bucket()
    s3_env = dict(os.environ, **s3_server.server_env())
    rocklake("backup", server.location, f"s3://{bucket}/backup", "--checkpoint", "to-s3",
             env=s3_env)
    backup = RockLakeAt(tmp_path / "backup-server", s3_server, bucket, "backup")
    backup.start()
    try:
        reader = duckdb_connect()
        reader.execute(f"ATTACH 'ducklake:postgres:{backup.dsn()}' AS b (DATA_PATH '{data}/')")
        assert reader.execute("SELECT sum(a) FROM b.t").fetchone() == (4950,)
        reader.close()
        # A clone inside the bucket, of a checkpoint of the backup.
        rocklake("checkpoint", "create", "fork", "--dsn", backup.dsn())
        clone_data = tmp_path / "clone-data"
        rocklake("clone", f"s3://{bucket}/backup", f"s3://{bucket}/clone", "--checkpoint", "fork",
                 "--data-path", str(clone_data), env=s3_env)
        elsewhere = rocklake("clone", f"s3://{bucket}/backup", str(tmp_path / "local-clone"),
                             "--checkpoint", "fork", "--data-path", str(clone_data),
                             check=False, env=s3_env)
        assert elsewhere.returncode != 0 and "different object stores" in elsewhere.stderr
    finally:
        backup.stop()
    clone = RockLakeAt(tmp_path / "clone-server", s3_server, bucket, "clone")
    clone.start()
    try:
        c = duckdb_connect()
        c.execute(f"ATTACH 'ducklake:postgres:{clone.dsn()}' AS c (DATA_PATH '{clone_data}/', "
                  "DATA_INLINING_ROW_LIMIT 0)")
        assert c.execute("SELECT sum(a) FROM c.t").fetchone() == (4950,)
        c.execute("INSERT INTO c.t VALUES (1000)")
        assert c.execute("SELECT sum(a) FROM c.t").fetchone() == (5950,)
        assert files_under(clone_data), "the clone's new file goes to its data path"
        c.close()
    finally:
        clone.stop()
