"""Hostile names, compared with a real PostgreSQL 15.

Each statement runs on RockLake and on PostgreSQL and must end alike
(SQLSTATE, message, notices):

* empty quoted identifiers (`CREATE DATABASE ""`, `DROP DATABASE ""`,
  `CREATE SCHEMA ""`, a `ducklake_` table in schema `""`) are 42601; they
  used to map to the folder of every database and delete them all;
* identifiers over 63 bytes are cut to 63 (on a character boundary) with
  NOTICE 42622, and the cut name is the object's name; a connection naming
  a long database reaches the cut one;
* names qualified by another database are 0A000; the current database's
  name is accepted;
* DuckDB attached with a 10,000-character METADATA_SCHEMA works as on
  PostgreSQL (every identifier it sends is cut alike).

Every message a client gets is checked for the server's root path, and a
database created first must hold its rows after everything, across a
restart.
"""

from __future__ import annotations

import os

import psycopg
import pytest

from conftest import RockLakeBackend

pytestmark = pytest.mark.rocklake

LONG = "Ab" * 50                     # 100 bytes, mixed case
HUGE = "x" * 10_000
WIDE = "é" * 40                      # 80 bytes: cut to 31 characters (62 bytes)


def outcome(con, sql: str):
    """(SQLSTATE or 'ok', message, notices, rows) of `sql` on `con`."""
    notices: list[tuple[str, str]] = []
    con.add_notice_handler(lambda d: notices.append((d.sqlstate, d.message_primary)))
    try:
        cur = con.execute(sql)
        rows = cur.fetchall() if cur.description else None
        return ("ok", None, notices, rows)
    except psycopg.Error as e:
        return (e.sqlstate, e.diag.message_primary, notices, None)
    finally:
        con._notice_handlers.clear()


def scenario(connect, prefix: str):
    """The statements both servers run, with what each gave."""
    admin = connect("postgres_or_lake")
    results = []
    statements = [
        'CREATE DATABASE ""',
        'DROP DATABASE ""',
        'DROP DATABASE IF EXISTS ""',
        'CREATE SCHEMA ""',
        'CREATE TABLE "".ducklake_snapshot (snapshot_id bigint)',
        'SELECT 1 AS ""',
        f'CREATE DATABASE "{prefix}{LONG}"',
        f"SELECT datname FROM pg_database WHERE datname LIKE '{prefix}Ab%'",
        f'CREATE DATABASE {prefix}{LONG}',
        f"SELECT datname FROM pg_database WHERE datname LIKE '{prefix.lower()}ab%'",
        f'CREATE DATABASE "{prefix}{HUGE}"',
        f"SELECT length(datname) FROM pg_database WHERE datname LIKE '{prefix}xxx%'",
        f'CREATE DATABASE "{prefix}{WIDE}"',
        f"SELECT datname = '{prefix}{'é' * 30}' FROM pg_database WHERE datname LIKE '{prefix}é%'",
        f'CREATE SCHEMA "{HUGE}"',
        "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'xxx%'",
        f'CREATE TABLE "{HUGE}"."{LONG}" (a int)',
        f'INSERT INTO "{HUGE}"."{LONG}" VALUES (7)',
        f'SELECT a AS "{LONG}" FROM "{HUGE}"."{LONG}"',
        f'DROP TABLE "{HUGE}"."{LONG}"',
        f'DROP SCHEMA "{HUGE}"',
    ]
    for sql in statements:
        results.append((sql[:60], outcome(admin, sql)))
    admin.close()
    # A connection naming the long database reaches the cut one.
    long_db = connect(f"{prefix}{LONG}")
    results.append(("current_database()",
                    outcome(long_db, "SELECT current_database()")))
    long_db.close()
    admin = connect("postgres_or_lake")
    for sql in [f'DROP DATABASE "{prefix}{LONG}"', f'DROP DATABASE {prefix}{LONG}',
                f'DROP DATABASE "{prefix}{HUGE}"', f'DROP DATABASE "{prefix}{WIDE}"']:
        results.append((sql[:60], outcome(admin, sql)))
    admin.close()
    return results


def cross_database(connect):
    """Names qualified by another database, in every place a name goes."""
    con = connect("postgres_or_lake")
    con.execute("CREATE TABLE secret (a int)")
    con.execute("INSERT INTO secret VALUES (1)")
    database = con.execute("SELECT current_database()").fetchone()[0]
    results = []
    for sql in [
        "SELECT * FROM other_db.public.secret",
        "SELECT (SELECT count(*) FROM other_db.public.secret)",
        "SELECT * FROM secret WHERE a IN (SELECT a FROM other_db.public.secret)",
        "COPY (SELECT * FROM other_db.public.secret) TO STDOUT",
        "INSERT INTO other_db.public.secret VALUES (2)",
        "UPDATE other_db.public.secret SET a = 3",
        "DELETE FROM other_db.public.secret",
        "CREATE TABLE other_db.public.t2 (a int)",
        "DROP TABLE other_db.public.secret",
        "SELECT other_db.public.secret.a FROM secret",
        "SELECT a.b.c.d.e FROM secret",
        f"SELECT * FROM {database}.public.secret",
        f"SELECT {database}.public.secret.a FROM secret",
    ]:
        results.append((sql.replace(database, "<current>"),
                        outcome(con, sql.replace("{database}", database))))
    con.execute("DROP TABLE secret")
    con.close()
    return results


def no_root_path_in(results, root: str):
    for sql, (code, message, notices, _) in results:
        texts = [message or ""] + [n[1] for n in notices]
        assert not any(root in text for text in texts), f"{sql}: {texts}"


@pytest.fixture
def server(tmp_path):
    backend = RockLakeBackend(tmp_path / "rocklake")
    backend.start()
    yield backend
    backend.stop()


def rocklake_connect(server):
    def connect(dbname: str):
        name = "lake" if dbname == "postgres_or_lake" else dbname
        return psycopg.connect(host=server.host, port=server.port, dbname=name,
                               connect_timeout=10, autocommit=True)
    return connect


def pg_connect(pg, home: str):
    def connect(dbname: str):
        name = home if dbname == "postgres_or_lake" else dbname
        return psycopg.connect(pg.dsn(name), autocommit=True)
    return connect


def test_hostile_names_like_postgres(server, request, duck, data_dir):
    connect = rocklake_connect(server)
    # A database with data, which nothing below may touch.
    keep = connect("postgres_or_lake")
    keep.execute("CREATE DATABASE keepdb")
    keep.close()
    con = connect("keepdb")
    con.execute("CREATE TABLE kept (a int)")
    con.execute("INSERT INTO kept VALUES (1), (2), (3)")
    con.close()

    got = scenario(connect, "rl_")
    cross = cross_database(connect)
    no_root_path_in(got + cross, str(server.catalog_dir))
    codes = [(sql, r[0]) for sql, r in got]
    assert codes[0] == ('CREATE DATABASE ""', "42601"), codes
    assert got[0][1][1] == 'zero-length delimited identifier at or near """"'
    assert got[6][1][2] == [("42622", f'identifier "rl_{LONG}" will be truncated to '
                                      f'"{(f"rl_{LONG}")[:63]}"')]
    assert got[7][1][3] == [((f"rl_{LONG}")[:63],)]
    assert got[11][1][3] == [(63,)]
    assert got[13][1][3] == [(True,)], "cut on a character boundary"
    assert [c for _, (c, *_rest) in cross][:10] == ["0A000"] * 9 + ["0A000"]

    # Nothing outside the objects' own folders moved: keepdb and lake hold
    # their data across a restart.
    server.restart()
    con = connect("keepdb")
    assert con.execute("SELECT sum(a) FROM kept").fetchone() == (6,)
    con.close()
    names = sorted(r[0] for r in connect("postgres_or_lake").execute(
        "SELECT datname FROM pg_database"))
    assert names == ["keepdb", "lake"], names

    # DuckDB with a 10,000-character METADATA_SCHEMA.
    duck_con = duck()
    duck_con.execute(
        f"ATTACH 'ducklake:postgres:{server.dsn()}' AS l "
        f"(DATA_PATH '{data_dir()}/', METADATA_SCHEMA '{HUGE}')")
    duck_con.execute("CREATE TABLE l.t AS SELECT range AS id FROM range(5)")
    assert duck_con.execute("SELECT sum(id) FROM l.t").fetchone() == (10,)
    duck_con.execute("DETACH l")

    if os.environ.get("ROCKLAKE_PG_REFERENCE") == "1":
        pg = request.getfixturevalue("pg_server")
        home = pg.new_database("names")
        expected = scenario(pg_connect(pg, home), "rl_")
        for (sql, mine), (_, theirs) in zip(got, expected):
            assert mine == theirs, f"{sql}: RockLake {mine} vs PostgreSQL {theirs}"
        expected_cross = cross_database(pg_connect(pg, home))
        for (sql, mine), (_, theirs) in zip(cross, expected_cross):
            assert mine[:2] == theirs[:2], f"{sql}: RockLake {mine} vs PostgreSQL {theirs}"
            assert mine[3] == theirs[3], f"{sql}: RockLake {mine} vs PostgreSQL {theirs}"
        pg_duck = duck()
        pg_duck.execute(
            f"ATTACH 'ducklake:postgres:{pg.dsn(home)}' AS l "
            f"(DATA_PATH '{data_dir('pg')}/', METADATA_SCHEMA '{HUGE}')")
        pg_duck.execute("CREATE TABLE l.t AS SELECT range AS id FROM range(5)")
        assert pg_duck.execute("SELECT sum(id) FROM l.t").fetchone() == (10,)
        pg_duck.execute("DETACH l")
