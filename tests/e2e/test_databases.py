"""Many lakes on one server: every database, and every METADATA_SCHEMA of a
database, is a catalog of its own.

Covered: a connection to an unknown database is refused (FATAL 3D000);
CREATE / DROP DATABASE with PostgreSQL's errors (compared with a real
PostgreSQL 15 when ROCKLAKE_PG_REFERENCE=1), DROP ... WITH (FORCE) ending
the sessions; two DuckDB clients on two databases, and on two
METADATA_SCHEMA lakes of one database, concurrently, each seeing only its
own tables and snapshots, time travel per lake, across a restart; DROP
SCHEMA ... CASCADE removing a lake; a read replica following two lakes
(created after it started); the upgrade of a location an earlier release
wrote (one catalog at its top); users limited to databases.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time

import psycopg
import pytest

from conftest import ROCKLAKE_BIN, RockLakeBackend
from test_replicas import ReplicaBackend


def connect(backend: RockLakeBackend, dbname: str, **kwargs):
    return psycopg.connect(host=backend.host, port=backend.port, dbname=dbname,
                           connect_timeout=10, autocommit=True, **kwargs)


def attach(backend: RockLakeBackend, alias: str, data, dbname: str = "lake",
           schema: str | None = None) -> str:
    options = f"DATA_PATH '{data}/'"
    if schema:
        options += f", METADATA_SCHEMA '{schema}'"
    return (f"ATTACH 'ducklake:postgres:host={backend.host} port={backend.port} "
            f"dbname={dbname}' AS {alias} ({options})")


def error_of(run) -> tuple[str | None, str]:
    """(SQLSTATE, primary message) of the error `run()` raises."""
    try:
        run()
    except psycopg.Error as e:
        return e.sqlstate, e.diag.message_primary
    pytest.fail("no error")


def in_block(con, sql: str) -> tuple[str | None, str]:
    """The error of `sql` inside a transaction block."""
    con.execute("BEGIN")
    try:
        return error_of(lambda: con.execute(sql))
    finally:
        con.execute("ROLLBACK")


def database_errors(con, other_con_db: str) -> list[tuple[str | None, str]]:
    """The errors of the database statements both servers must refuse alike."""
    return [
        error_of(lambda: con.execute("CREATE DATABASE tenant_x")),
        error_of(lambda: con.execute(f"DROP DATABASE {other_con_db}")),
        error_of(lambda: con.execute("DROP DATABASE nowhere")),
        error_of(lambda: con.execute("DROP DATABASE lake_self")),
        in_block(con, "CREATE DATABASE in_block"),
        error_of(lambda: con.execute("DROP DATABASE tenant_x WITH (QUICK)")),
    ]


@pytest.mark.rocklake
def test_databases_like_postgres(rocklake, request):
    rocklake.start()
    with pytest.raises(psycopg.OperationalError) as refused:
        connect(rocklake, "nonexistent_db")
    assert 'database "nonexistent_db" does not exist' in str(refused.value)

    def run(server_connect):
        admin = server_connect("admin_db")
        admin.execute("CREATE DATABASE tenant_x")
        admin.execute("CREATE DATABASE lake_self")
        names = sorted(r[0] for r in admin.execute(
            "SELECT datname FROM pg_database WHERE datname IN ('tenant_x', 'lake_self', 'admin_db')"))
        user = server_connect("tenant_x")
        self_con = server_connect("lake_self")
        errors = database_errors(self_con, "tenant_x")
        self_con.close()
        errors_detail = None
        try:
            admin.execute("DROP DATABASE tenant_x")
        except psycopg.Error as e:
            errors_detail = e.diag.message_detail
        admin.execute("DROP DATABASE tenant_x WITH (FORCE)")
        with pytest.raises(psycopg.OperationalError) as ended:
            user.execute("SELECT 1")
        admin.execute("DROP DATABASE IF EXISTS tenant_x")
        admin.execute("DROP DATABASE lake_self")
        left = sorted(r[0] for r in admin.execute(
            "SELECT datname FROM pg_database WHERE datname IN ('tenant_x', 'lake_self')"))
        admin.close()
        return names, errors, errors_detail, type(ended.value).__name__, left

    admin = connect(rocklake, "lake")
    admin.execute("CREATE DATABASE admin_db")
    admin.close()
    got = run(lambda db: connect(rocklake, db))
    assert got[0] == ["admin_db", "lake_self", "tenant_x"]
    assert [code for code, _ in got[1]] == ["42P04", "55006", "3D000", "55006", "25001", "42601"]
    assert got[2] == "There is 1 other session using the database."
    assert got[3] == "AdminShutdown"
    assert got[4] == []

    if os.environ.get("ROCKLAKE_PG_REFERENCE") == "1":
        pg = request.getfixturevalue("pg_server")
        pg.psql("CREATE DATABASE admin_db")
        expected = run(lambda db: psycopg.connect(pg.dsn(db), autocommit=True))
        assert got == expected


@pytest.mark.rocklake
def test_two_databases_and_two_metadata_schemas_concurrently(rocklake, duck, data_dir):
    rocklake.start()
    admin = connect(rocklake, "lake")
    admin.execute("CREATE DATABASE sales")
    admin.execute("CREATE DATABASE marketing")
    admin.close()
    lakes = [("sales", None), ("marketing", None), ("lake", "team_a"), ("lake", "team_b")]
    data = {lake: data_dir(f"{lake[0]}-{lake[1]}") for lake in lakes}
    failures = []

    def work(index, lake):
        dbname, schema = lake
        try:
            con = duck()
            con.execute(attach(rocklake, "l", data[lake], dbname, schema))
            con.execute(f"CREATE TABLE l.t{index} (id INTEGER, who VARCHAR)")
            for n in range(8):
                con.execute(f"INSERT INTO l.t{index} VALUES ({n}, '{dbname}.{schema}')")
        except Exception as e:  # reported below
            failures.append((lake, repr(e)))

    threads = [threading.Thread(target=work, args=(i, lake)) for i, lake in enumerate(lakes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not failures, failures

    def check(con):
        for index, lake in enumerate(lakes):
            dbname, schema = lake
            con.execute(attach(rocklake, f"c{index}", data[lake], dbname, schema))
            tables = sorted(r[0] for r in con.execute(
                f"SELECT table_name FROM duckdb_tables() WHERE database_name = 'c{index}'").fetchall())
            assert tables == [f"t{index}"], (lake, tables)
            snapshots = [r[0] for r in con.execute(
                f"SELECT snapshot_id FROM ducklake_snapshots('c{index}') ORDER BY 1").fetchall()]
            # Its own history only: schema creation, table creation, 8 inserts.
            assert snapshots == list(range(10)), (lake, snapshots)
            assert con.execute(f"SELECT count(*), min(who) FROM c{index}.t{index}").fetchone() == \
                (8, f"{dbname}.{schema}")
            assert con.execute(
                f"SELECT count(*) FROM c{index}.t{index} AT (VERSION => 4)").fetchone() == (3,)
            con.execute(f"DETACH c{index}")

    check(duck())
    rocklake.restart()
    check(duck())

    # Each lake has its own retention floor: gc of team_a leaves team_b whole.
    gc = subprocess.run([ROCKLAKE_BIN, "gc", "--retain-from", "6", "--schema", "team_a", "--dsn",
                         f"host={rocklake.host} port={rocklake.port} dbname=lake"],
                        capture_output=True, text=True)
    assert gc.returncode == 0, gc.stderr
    con = duck()
    con.execute(attach(rocklake, "a", data[("lake", "team_a")], "lake", "team_a"))
    con.execute(attach(rocklake, "b", data[("lake", "team_b")], "lake", "team_b"))
    with pytest.raises(Exception, match="retention|72000|no longer"):
        con.execute("SELECT count(*) FROM a.t2 AT (VERSION => 4)").fetchall()
    assert con.execute("SELECT count(*) FROM b.t3 AT (VERSION => 4)").fetchone() == (3,)
    con.close()

    with connect(rocklake, "lake") as psql:
        schemas = sorted(r[0] for r in psql.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'team%'"))
        assert schemas == ["team_a", "team_b"]
        code, _ = error_of(lambda: psql.execute("DROP SCHEMA team_b"))
        assert code == "2BP01"
        psql.execute("DROP SCHEMA team_b CASCADE")
        assert psql.execute("SELECT count(*) FROM information_schema.tables "
                            "WHERE table_schema = 'team_b'").fetchone() == (0,)
        # team_a's floor (6) hides its snapshots 0-5.
        assert psql.execute("SELECT count(*) FROM team_a.ducklake_snapshot").fetchone() == (4,)
    lake_dir = rocklake.catalog_dir / "databases" / "lake" / "schemas"
    assert sorted(p.name for p in lake_dir.iterdir()) == ["team_a"]


def eventually(check, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            return check()
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.rocklake
def test_a_replica_follows_every_lake_of_its_root(rocklake, duck, data_dir, tmp_path):
    rocklake.start()
    replica = ReplicaBackend(tmp_path / "replica", rocklake)
    replica.start()
    try:
        with connect(rocklake, "lake") as admin:
            admin.execute("CREATE DATABASE sales")
        writer = duck()
        writer.execute(attach(rocklake, "s", data_dir("sales"), "sales"))
        writer.execute("CREATE TABLE s.t AS SELECT 1 AS x")
        writer.execute(attach(rocklake, "a", data_dir("a"), "lake", "team_a"))
        writer.execute("CREATE TABLE a.u AS SELECT 2 AS y UNION ALL SELECT 3")

        def replica_sees(dbname, sql, expected):
            def check():
                with connect(replica, dbname) as con:
                    got = con.execute(sql).fetchall()
                    assert got == expected, got
            eventually(check)

        replica_sees("sales", "SELECT count(*) FROM public.ducklake_table", [(1,)])
        replica_sees("lake", "SELECT count(*) FROM team_a.ducklake_table", [(1,)])
        with connect(replica, "sales") as con:
            code, _ = error_of(lambda: con.execute("CREATE DATABASE nope"))
            assert code == "25006"
    finally:
        replica.stop()


@pytest.mark.rocklake
def test_a_single_catalog_location_of_an_earlier_release_is_upgraded(rocklake, duck, data_dir):
    data = data_dir("lake")
    rocklake.start()
    con = duck()
    con.execute(rocklake.attach_sql("l", data))
    con.execute("CREATE TABLE l.t AS SELECT range AS x FROM range(5)")
    con.execute("INSERT INTO l.t VALUES (99)")
    before = con.execute("SELECT snapshot_id, changes FROM ducklake_snapshots('l') ORDER BY 1").fetchall()
    con.close()
    rocklake.stop()
    # An earlier release kept its one catalog at LOCATION/catalog.
    root = rocklake.catalog_dir
    shutil.move(str(root / "databases" / "lake" / "catalog"), str(root / "catalog"))
    shutil.rmtree(root / "databases")
    listing = subprocess.run([ROCKLAKE_BIN, "keys", str(root)], capture_output=True, text=True)
    assert listing.returncode != 0 and "earlier release" in listing.stderr, listing.stderr
    rocklake.start()
    # The server listens before it opens (and here upgrades) its catalogs,
    # and answers once they are open: look at the folders after an answer
    # (regression: looking right after the port opened raced the removal).
    con = duck()
    con.execute(rocklake.attach_sql("l", data))
    after = con.execute("SELECT snapshot_id, changes FROM ducklake_snapshots('l') ORDER BY 1").fetchall()
    assert after == before
    assert (root / "databases" / "lake" / "catalog" / "manifest").is_dir()
    assert not (root / "catalog").exists()
    assert con.execute("SELECT count(*) FROM l.t AT (VERSION => 1)").fetchone() == (5,)
    con.execute("INSERT INTO l.t VALUES (100)")
    assert con.execute("SELECT count(*) FROM l.t").fetchone() == (7,)


@pytest.mark.rocklake
def test_users_limited_to_databases(rocklake, tmp_path):
    rules = tmp_path / "access"
    rules.write_text("# database user\nlake,sales alice\nall admin\n")
    command = rocklake.command

    def with_rules():
        return [*command(), "--database-access", str(rules)]

    rocklake.command = with_rules
    rocklake.start()
    connect(rocklake, "lake", user="alice").close()
    connect(rocklake, "lake", user="admin").execute("CREATE DATABASE sales")
    connect(rocklake, "sales", user="alice").close()
    with pytest.raises(psycopg.OperationalError) as refused:
        connect(rocklake, "lake", user="bob")
    assert 'no pg_hba.conf entry for host "127.0.0.1", user "bob", database "lake"' \
        in str(refused.value)


@pytest.mark.rocklake
def test_a_broken_database_leaves_the_others_served(rocklake, duck, data_dir):
    data = data_dir("lake")
    rocklake.start()
    with connect(rocklake, "lake") as admin:
        admin.execute("CREATE DATABASE sales")
    con = duck()
    con.execute(rocklake.attach_sql("l", data))
    con.execute("CREATE TABLE l.t AS SELECT 1 AS x")
    con.close()
    rocklake.stop()
    manifests = rocklake.catalog_dir / "databases" / "sales" / "catalog" / "manifest"
    for manifest in manifests.iterdir():
        manifest.write_bytes(b"not a manifest")
    rocklake.start()
    with pytest.raises(psycopg.OperationalError) as refused:
        connect(rocklake, "sales")
    assert 'database "sales" cannot be opened' in str(refused.value)
    con = duck()
    con.execute(rocklake.attach_sql("l", data))
    con.execute("INSERT INTO l.t VALUES (2)")
    assert con.execute("SELECT count(*) FROM l.t").fetchone() == (2,)
