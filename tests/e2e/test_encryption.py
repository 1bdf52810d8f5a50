"""Catalog encryption at rest (`rocklake serve --catalog-key-file`).

An ENCRYPTED DuckLake lake keeps a key per Parquet file in the catalog; with
a catalog key no such key, path, column name or inlined value is readable in
any object under the served root. Without the key, or with a wrong one, the
server stops at once and changes nothing; an unencrypted catalog refuses a
key; `rocklake keys` and read replicas take the key the same way; a new key
put first (the old one after it) seals new blocks while old ones still open.
"""

from __future__ import annotations

import base64
import pathlib
import subprocess

import psycopg
import pytest

from conftest import ROCKLAKE_BIN, RockLakeBackend
from test_replicas import ReplicaBackend


def new_key() -> str:
    out = subprocess.run([ROCKLAKE_BIN, "new-catalog-key"], capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


class KeyedBackend(RockLakeBackend):
    """The server with the catalog keys in a file (or none)."""

    def __init__(self, workdir, key_file: pathlib.Path | None, **kwargs):
        super().__init__(workdir, **kwargs)
        self.key_file = key_file

    def command(self) -> list[str]:
        extra = ["--catalog-key-file", str(self.key_file)] if self.key_file else []
        return [*super().command(), *extra]


def object_bytes(root: pathlib.Path) -> list[tuple[pathlib.Path, bytes]]:
    return [(p, p.read_bytes()) for p in root.rglob("*") if p.is_file()]


def fails_to_start(backend: RockLakeBackend) -> str:
    with pytest.raises(BaseException):
        backend.start()
    return backend.log_path.read_text(errors="replace")


@pytest.mark.rocklake
def test_an_encrypted_catalog_holds_no_secret_in_plaintext(tmp_path, duck, data_dir):
    key_file = tmp_path / "catalog.key"
    key_file.write_text(new_key() + "\n")
    server = KeyedBackend(tmp_path / "srv", key_file)
    data = data_dir("lake")
    server.start()
    try:
        con = duck()
        con.execute(f"ATTACH 'ducklake:postgres:{server.dsn()}' AS l "
                    f"(DATA_PATH '{data}/', ENCRYPTED)")
        con.execute("CREATE TABLE l.secret_payroll (employee VARCHAR, salary INTEGER)")
        con.execute("INSERT INTO l.secret_payroll VALUES ('inlined-alice', 1)")
        con.execute("INSERT INTO l.secret_payroll SELECT 'bulk-' || range, range "
                    "FROM range(5000)")
        # Enough commits for the memtable (256 KiB) to be flushed to L0
        # tables, so that WAL and L0/compacted tables are both checked.
        for n in range(400):
            con.execute(f"INSERT INTO l.secret_payroll VALUES ('inlined-{n}', {n})")
        with psycopg.connect(server.dsn(), autocommit=True) as pg:
            keys = [r[0] for r in pg.execute(
                "SELECT encryption_key FROM ducklake_data_file WHERE encryption_key IS NOT NULL")]
            paths = [r[0] for r in pg.execute("SELECT path FROM ducklake_data_file")]
        assert keys, "DuckLake stored no file key"
        # The background flush runs every 100 ms; stop makes everything durable.
        server.stop()
        needles = [k.encode() for k in keys] + [base64.b64decode(k) for k in keys]
        needles += [p.encode() for p in paths] + [b"secret_payroll", b"inlined-alice",
                                                   b"ducklake_data_file"]
        objects = object_bytes(server.catalog_dir)
        assert any("wal" in p.parts for p, _ in objects)
        assert any("compacted" in p.parts for p, _ in objects), "no L0/compacted table written"
        for path, content in objects:
            for needle in needles:
                assert needle not in content, f"{needle!r} in plaintext in {path}"

        # The same catalog opens with its key and shows everything.
        server.start()
        con = duck()
        con.execute(f"ATTACH 'ducklake:postgres:{server.dsn()}' AS l (DATA_PATH '{data}/')")
        assert con.execute("SELECT count(*) FROM l.secret_payroll").fetchone() == (5401,)
        server.stop()

        listing = subprocess.run([ROCKLAKE_BIN, "keys", str(server.catalog_dir), "--tag",
                                  "ducklake_table", "--catalog-key-file", str(key_file)],
                                 capture_output=True, text=True)
        assert listing.returncode == 0 and "secret_payroll" in listing.stdout, listing.stderr
        listing = subprocess.run([ROCKLAKE_BIN, "keys", str(server.catalog_dir)],
                                 capture_output=True, text=True)
        assert listing.returncode != 0 and "is encrypted" in listing.stderr, listing.stderr
    finally:
        server.stop()


@pytest.mark.rocklake
def test_missing_or_wrong_keys_stop_the_server_and_change_nothing(tmp_path, duck, data_dir):
    key_file = tmp_path / "catalog.key"
    key_file.write_text(new_key())
    server = KeyedBackend(tmp_path / "srv", key_file)
    server.start()
    con = duck()
    con.execute(server.attach_sql("l", data_dir("lake")))
    con.execute("CREATE TABLE l.t AS SELECT 1 AS x")
    con.close()
    server.stop()
    before = sorted((p, c) for p, c in object_bytes(server.catalog_dir))

    server.key_file = None
    log = fails_to_start(server)
    assert "the catalog is encrypted" in log and "--catalog-key-file" in log, log
    wrong = tmp_path / "wrong.key"
    wrong.write_text(new_key())
    server.key_file = wrong
    log = fails_to_start(server)
    assert "is a key of this catalog" in log, log
    assert sorted((p, c) for p, c in object_bytes(server.catalog_dir)) == before

    # An unencrypted catalog refuses a key, and opens without one.
    plain = KeyedBackend(tmp_path / "plain", None)
    plain.start()
    con = duck()
    con.execute(plain.attach_sql("l", data_dir("plain")))
    con.close()
    plain.stop()
    # The control of the plaintext check above: without a key, it is there.
    assert any(b"ducklake_data_file" in c for _, c in object_bytes(plain.catalog_dir))
    plain.key_file = key_file
    log = fails_to_start(plain)
    assert "is not encrypted" in log, log
    plain.key_file = None
    plain.start()
    plain.stop()


@pytest.mark.rocklake
def test_key_rotation_and_replicas(tmp_path, duck, data_dir):
    old_key, new = new_key(), new_key()
    key_file = tmp_path / "catalog.key"
    key_file.write_text(old_key + "\n")
    server = KeyedBackend(tmp_path / "srv", key_file)
    data = data_dir("lake")
    server.start()
    con = duck()
    con.execute(server.attach_sql("l", data))
    con.execute("CREATE TABLE l.t AS SELECT range AS x FROM range(10)")
    con.close()
    server.stop()

    # Rotation: the new key first seals new blocks; the old one still opens.
    key_file.write_text(f"{new}\n{old_key}\n")
    server.start()
    replica = ReplicaBackend(tmp_path / "replica", server)
    replica_keys = tmp_path / "replica.key"
    replica_keys.write_text(f"{new}\n{old_key}\n")
    replica.command = lambda: [*ReplicaBackend.command(replica), "--catalog-key-file",
                               str(replica_keys)]
    try:
        con = duck()
        con.execute(server.attach_sql("l", data))
        con.execute("INSERT INTO l.t VALUES (100)")
        assert con.execute("SELECT count(*) FROM l.t").fetchone() == (11,)
        replica.start()
        with psycopg.connect(replica.dsn(), autocommit=True) as pg:
            assert pg.execute("SELECT count(*) FROM ducklake_table").fetchone() == (1,)
        marker = (server.catalog_dir / "databases" / "lake" / "encryption").read_text()
        ids = marker.split("keys=")[1].strip().split(",")
        assert len(ids) == 2, marker
        # Blocks sealed with the old key remain: reading with the new key
        # alone says so (the check docs/encryption.md gives for rotation).
        only_new = tmp_path / "new.key"
        only_new.write_text(new)
        listing = subprocess.run([ROCKLAKE_BIN, "keys", str(server.catalog_dir),
                                  "--catalog-key-file", str(only_new)],
                                 capture_output=True, text=True)
        assert listing.returncode != 0, listing.stdout[-500:]
        assert f"sealed with key {ids[1]}" in listing.stderr, listing.stderr
    finally:
        replica.stop()
        server.stop()
