"""Password authentication (SCRAM-SHA-256) and TLS with real DuckDB.

The server runs with a password file and a certificate made here with the
`openssl` command, requiring TLS; DuckDB attaches through libpq with
`sslmode=require` and a password, then creates, fills and reads a table. A
wrong password and a plaintext connection must fail with PostgreSQL's
messages, and the server must keep serving.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest

from conftest import RockLakeBackend

USER = "lake_user"
PASSWORD = "s3cret-Pw_42"

pytestmark = pytest.mark.rocklake


def make_certificate(directory: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """A self-signed P-256 certificate for 127.0.0.1 / localhost."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    cert, key = directory / "server.crt", directory / "server.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True)
    return cert, key


class SecureRockLake(RockLakeBackend):
    """RockLake with --password-file, --tls-cert/--tls-key and --require-tls;
    attaches with a user, a password and an sslmode."""

    def __init__(self, workdir: pathlib.Path):
        super().__init__(workdir)
        self.cert, self.key = make_certificate(self.workdir)
        self.password_file = self.workdir / "passwords"
        self.password_file.write_text(f"# users of the test server\n{USER}:{PASSWORD}\nother:x\n")
        self.password_file.chmod(0o600)
        self.password = PASSWORD
        self.sslmode = "require"

    def command(self) -> list[str]:
        return [*super().command(), "--password-file", str(self.password_file),
                "--tls-cert", str(self.cert), "--tls-key", str(self.key), "--require-tls"]

    def dsn(self) -> str:
        return (f"{super().dsn()} user={USER} password={self.password} "
                f"sslmode={self.sslmode}")


@pytest.fixture
def secure(tmp_path):
    server = SecureRockLake(tmp_path / "rocklake")
    server.start()
    yield server
    server.stop()


def test_duckdb_over_tls_with_password(secure, duck, data_dir):
    data = data_dir()
    con = duck()
    con.execute(secure.attach_sql("l", data))
    con.execute("CREATE TABLE l.t (id BIGINT, name VARCHAR)")
    con.execute("INSERT INTO l.t VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    assert con.execute("SELECT id, name FROM l.t ORDER BY id").fetchall() == [
        (1, "one"), (2, "two"), (3, "three")]
    con.execute("DETACH l")

    # A second client, attached afresh, sees the committed data.
    other = duck()
    other.execute(secure.attach_sql("l", data))
    assert other.execute("SELECT sum(id) FROM l.t").fetchone() == (6,)


def test_wrong_password_and_plaintext_fail_cleanly(secure, duck, data_dir):
    data = data_dir()
    secure.password = "wrong"
    with pytest.raises(Exception, match=f'password authentication failed for user "{USER}"'):
        duck().execute(secure.attach_sql("l", data))

    secure.password, secure.sslmode = PASSWORD, "disable"
    with pytest.raises(Exception, match="no pg_hba.conf entry .* no encryption"):
        duck().execute(secure.attach_sql("l", data))

    # The server is unharmed: the right password over TLS still works.
    secure.sslmode = "require"
    con = duck()
    con.execute(secure.attach_sql("l", data))
    con.execute("CREATE TABLE l.ok AS SELECT 42 AS answer")
    assert con.execute("SELECT answer FROM l.ok").fetchone() == (42,)
    assert secure.alive()
