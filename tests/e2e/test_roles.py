"""Roles and privileges, compared with a real PostgreSQL 15.

RockLake runs with a password file that declares only the bootstrap
superuser `postgres`; every other role is created in SQL, with a password
(`CREATE ROLE ... PASSWORD`), and logs in with it. PostgreSQL runs the
same statements (with trust authentication, so passwords are not checked
there). Each step must end alike: SQLSTATE, message, rows.

Covered: who may create, drop and hand over databases (CREATEDB,
ownership, membership in the owner role), DROP DATABASE ... WITH (FORCE)
by a user that does not own it (refused, and the sessions on it live on),
terminating a superuser's session, SET ROLE and SET SESSION AUTHORIZATION,
CREATE/ALTER/DROP ROLE and GRANT/REVOKE by ordinary and CREATEROLE roles,
a role's own password, pg_authid for superusers only, a role made
read-only by default (ALTER ROLE ... SET default_transaction_read_only),
NOLOGIN roles, current_user/session_user, pg_roles, pg_auth_members and
pg_database.datdba; then DuckDB attached as the read-only role reads a lake
and cannot write to it.
"""

from __future__ import annotations

import os

import psycopg
import pytest

from conftest import RockLakeBackend

pytestmark = pytest.mark.rocklake

PASSWORDS = {"postgres": "pw-admin", "alice": "pw-alice", "bob": "pw-bob",
             "carol": "pw-carol", "reader": "pw-reader", "readers": "pw-readers"}


class RoleServer(RockLakeBackend):
    """RockLake with a password file declaring only `postgres`."""

    def __init__(self, workdir):
        super().__init__(workdir)
        self.password_file = self.workdir / "passwords"
        self.password_file.write_text(f"postgres:{PASSWORDS['postgres']}\n")
        self.password_file.chmod(0o600)

    def command(self):
        return [*super().command(), "--password-file", str(self.password_file)]


def outcome(run):
    try:
        cur = run()
        rows = cur.fetchall() if cur is not None and cur.description else None
        return ("ok", rows)
    except psycopg.Error as e:
        return (e.sqlstate, e.diag.message_primary, e.diag.message_detail)


def scenario(connect, home: str):
    """The steps, run through `connect(user, dbname)`; what each gave."""
    results = []

    def step(label, con, sql):
        results.append((label, sql, outcome(lambda: con.execute(sql))))

    admin = connect("postgres", home)
    for sql in [
        "CREATE ROLE alice LOGIN PASSWORD 'pw-alice'",
        "CREATE USER bob WITH PASSWORD 'pw-bob' CREATEDB",
        "CREATE ROLE carol LOGIN CREATEROLE PASSWORD 'pw-carol'",
        "CREATE ROLE readers NOLOGIN PASSWORD 'pw-readers'",
        "CREATE ROLE reader LOGIN PASSWORD 'pw-reader' IN ROLE readers",
        "CREATE ROLE alice",
        "CREATE ROLE pg_mine",
        "CREATE DATABASE db_a OWNER alice",
        "CREATE DATABASE db_b",
        "ALTER ROLE reader SET default_transaction_read_only = on",
    ]:
        step("admin", admin, sql)
    # A session of the administrator on db_b, which nobody else may end.
    admin_b = connect("postgres", "db_b")
    admin_b.execute("CREATE TABLE kept (a int)")
    admin_b.execute("INSERT INTO kept VALUES (1)")

    alice = connect("alice", "db_a")
    for sql in [
        "SELECT current_user, session_user",
        "CREATE DATABASE nope",
        "DROP DATABASE db_b WITH (FORCE)",
        "DROP DATABASE db_b",
        "ALTER DATABASE db_b OWNER TO alice",
        "SET ROLE postgres",
        "SET ROLE bob",
        "SET SESSION AUTHORIZATION bob",
        "SELECT count(*) FROM pg_authid",
        "CREATE ROLE mallory",
        "ALTER ROLE alice CREATEDB",
        "ALTER ROLE alice SUPERUSER",
        "ALTER ROLE bob PASSWORD 'x'",
        "ALTER ROLE alice PASSWORD 'pw-alice'",
        "DROP ROLE bob",
        "GRANT readers TO alice",
        "SHOW is_superuser",
        "SELECT rolname FROM pg_roles WHERE rolname = current_user",
    ]:
        step("alice", alice, sql)
    alice.close()
    step("admin on db_b", admin_b, "SELECT sum(a) FROM kept")

    bob = connect("bob", home)
    for sql in [
        "CREATE DATABASE db_bob",
        "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'db_bob'",
        "ALTER DATABASE db_a OWNER TO bob",
        "ALTER DATABASE db_bob OWNER TO alice",
    ]:
        step("bob", bob, sql)
    admin_bob = connect("postgres", "db_bob")
    step("bob", bob, "DROP DATABASE db_bob WITH (FORCE)")
    admin_bob.close()
    step("bob", bob, "DROP DATABASE db_bob")

    carol = connect("carol", home)
    for sql in [
        "CREATE ROLE dave LOGIN",
        "CREATE ROLE eve SUPERUSER",
        "GRANT readers TO dave",
        "GRANT dave TO readers",
        "GRANT readers TO dave",
        "REVOKE readers FROM alice",
        "ALTER ROLE postgres CREATEDB",
        "DROP ROLE postgres",
        "ALTER ROLE dave RENAME TO david",
        "DROP ROLE david",
        "DROP ROLE IF EXISTS david",
    ]:
        step("carol", carol, sql)
    carol.close()

    step("admin", admin, "GRANT alice TO bob")
    bob.execute("SET ROLE alice")
    step("bob as alice", bob, "SELECT current_user, session_user")
    step("bob as alice", bob, "CREATE DATABASE from_alice")
    step("bob as alice", bob, "RESET ROLE")
    step("bob", bob, "SELECT current_user")
    bob.close()

    # (Object privileges, GRANT SELECT ON ..., are not modelled: a role
    # that may connect reads every table; so no SELECT of `kept` here.)
    reader = connect("reader", "db_b")
    for sql in [
        "SHOW default_transaction_read_only",
        "INSERT INTO kept VALUES (2)",
        "CREATE TABLE t (a int)",
    ]:
        step("reader", reader, sql)
    reader.close()
    try:
        connect("readers", home).close()
        results.append(("readers", "connect", ("ok", None)))
    except psycopg.OperationalError as e:
        results.append(("readers", "connect", ("fatal", str(e).split("FATAL:")[-1].strip())))

    for sql in [
        "SELECT r.rolname, r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolcanlogin, r.rolconfig "
        "FROM pg_roles r WHERE r.rolname IN ('alice', 'bob', 'carol', 'reader', 'readers') "
        "ORDER BY 1",
        "SELECT g.rolname, m.rolname, a.admin_option FROM pg_auth_members a "
        "JOIN pg_roles g ON g.oid = a.roleid JOIN pg_roles m ON m.oid = a.member "
        "WHERE m.rolname IN ('alice', 'bob', 'reader') ORDER BY 1, 2",
        "SELECT d.datname, pg_get_userbyid(d.datdba) FROM pg_database d "
        "WHERE d.datname IN ('db_a', 'db_b') ORDER BY 1",
        "DROP ROLE alice",
        "DROP DATABASE db_a",
        "DROP ROLE alice, bob, carol, reader, readers",
    ]:
        step("admin", admin, sql)
    admin_b.close()
    step("admin", admin, "DROP DATABASE db_b")
    admin.close()
    return results


def rocklake_connect(server):
    def connect(user, dbname):
        return psycopg.connect(host=server.host, port=server.port, dbname=dbname, user=user,
                               password=PASSWORDS.get(user, "x"), connect_timeout=10,
                               autocommit=True)
    return connect


def pg_connect(pg):
    def connect(user, dbname):
        return psycopg.connect(pg.dsn(dbname).replace("user=postgres", f"user={user}"),
                               autocommit=True)
    return connect


def test_roles_and_privileges_like_postgres(tmp_path, request, duck, data_dir):
    server = RoleServer(tmp_path / "rocklake")
    server.start()
    try:
        got = scenario(rocklake_connect(server), "lake")
        # The checks that matter most, whatever the reference says.
        by_sql = {(who, sql): result for who, sql, result in got}
        assert by_sql[("alice", "CREATE DATABASE nope")][:2] == (
            "42501", "permission denied to create database")
        assert by_sql[("alice", "DROP DATABASE db_b WITH (FORCE)")][:2] == (
            "42501", "must be owner of database db_b")
        assert by_sql[("admin on db_b", "SELECT sum(a) FROM kept")] == ("ok", [(1,)])
        assert by_sql[("alice", "SET ROLE postgres")][0] == "42501"
        assert by_sql[("alice", "SELECT current_user, session_user")] == (
            "ok", [("alice", "alice")])
        assert by_sql[("reader", "INSERT INTO kept VALUES (2)")][0] == "25006"
        assert by_sql[("readers", "connect")][0] == "fatal"

        # DuckDB as the read-only role: reads a lake, cannot write to it.
        admin = rocklake_connect(server)("postgres", "lake")
        admin.execute("CREATE ROLE lake_reader LOGIN PASSWORD 'pw-reader'")
        admin.execute("ALTER ROLE lake_reader SET default_transaction_read_only = on")
        admin.close()
        data = data_dir()
        writer = duck()
        writer.execute(f"ATTACH 'ducklake:postgres:{server.dsn()} user=postgres "
                       f"password={PASSWORDS['postgres']}' AS l (DATA_PATH '{data}/')")
        writer.execute("CREATE TABLE l.t AS SELECT range AS id FROM range(10)")
        writer.execute("DETACH l")
        reading = duck()
        reading.execute(f"ATTACH 'ducklake:postgres:{server.dsn()} user=lake_reader "
                        f"password=pw-reader' AS l (DATA_PATH '{data}/')")
        assert reading.execute("SELECT sum(id) FROM l.t").fetchone() == (45,)
        with pytest.raises(Exception, match="read-only transaction"):
            reading.execute("INSERT INTO l.t VALUES (10)")
    finally:
        server.stop()

    if os.environ.get("ROCKLAKE_PG_REFERENCE") == "1":
        pg = request.getfixturevalue("pg_server")
        home = pg.new_database("roles")
        expected = scenario(pg_connect(pg), home)
        differences = [f"{who}: {sql}: RockLake {mine} vs PostgreSQL {theirs}"
                       for (who, sql, mine), (_, _, theirs) in zip(got, expected)
                       if mine != theirs]
        assert not differences, "\n".join(differences)


def test_maintenance_procedures_need_the_database_owner(tmp_path, duck, data_dir):
    """CALL rocklake_tag/untag/set_retention/retain_from/excise/checkpoint
    change a lake: only its database's owner (or a role with the owner's
    privileges, or a superuser) may run them, like VACUUM or ALTER
    DATABASE; listing tags and checkpoints is for anyone who may connect."""
    server = RoleServer(tmp_path / "rocklake")
    server.start()
    try:
        connect = rocklake_connect(server)
        admin = connect("postgres", "lake")
        admin.execute("CREATE ROLE alice LOGIN PASSWORD 'pw-alice'")
        admin.execute("CREATE ROLE bob LOGIN PASSWORD 'pw-bob'")
        admin.execute("CREATE DATABASE db_a OWNER alice")
        admin.close()
        writer = duck()
        writer.execute(f"ATTACH 'ducklake:postgres:host={server.host} port={server.port} "
                       f"dbname=db_a user=alice password=pw-alice' AS l "
                       f"(DATA_PATH '{data_dir()}/')")
        writer.execute("CREATE TABLE l.t AS SELECT range AS id FROM range(3)")
        writer.execute("DETACH l")

        changing = ["CALL rocklake_tag('keep', 1)", "CALL rocklake_untag('keep')",
                    "CALL rocklake_set_retention('7d')", "CALL rocklake_retain_from('1')",
                    "CALL rocklake_excise()", "CALL rocklake_checkpoint('c1')",
                    "CALL rocklake_drop_checkpoint('c1')"]
        bob = connect("bob", "db_a")
        for sql in changing:
            assert outcome(lambda: bob.execute(sql))[:2] == (
                "42501", "must be owner of database db_a"), sql
        assert outcome(lambda: bob.execute("CALL rocklake_tags()")) == ("ok", [])
        assert outcome(lambda: bob.execute("CALL rocklake_checkpoints()"))[0] == "ok"

        alice = connect("alice", "db_a")
        for sql in changing:
            assert outcome(lambda: alice.execute(sql))[0] == "ok", sql
        alice.execute("CALL rocklake_tag('kept', 1)")
        tags = bob.execute("CALL rocklake_tags()").fetchall()
        assert [row[0] for row in tags] == ["tag kept"]
        # A member of the owner role has its privileges.
        connect("postgres", "lake").execute("GRANT alice TO bob")
        assert outcome(lambda: bob.execute("CALL rocklake_untag('kept')"))[0] == "ok"
        bob.close()
        alice.close()
    finally:
        server.stop()
