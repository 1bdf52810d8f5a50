"""Writes as other DuckLake implementations and ORMs send them,
differential against a real PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1):
`INSERT/UPDATE/DELETE ... RETURNING` and `INSERT ... ON CONFLICT DO NOTHING /
DO UPDATE SET ... [WHERE ...]` (with `excluded`, aliases, constraint names,
the errors PostgreSQL gives), through psycopg with bound parameters, with
text and binary results, and through SQLAlchemy Core's PostgreSQL dialect
(`insert().returning()`, `on_conflict_do_nothing/do_update`).
"""

from __future__ import annotations

import psycopg
import pytest

from conftest import PostgresBackend

SETUP = [
    "DROP TABLE IF EXISTS w",
    "CREATE TABLE w (id int PRIMARY KEY, v text, n int DEFAULT 5)",
    "DROP TABLE IF EXISTS w2",
    "CREATE TABLE w2 (a bigint, b bigint, note varchar, PRIMARY KEY (a, b))",
    "DROP TABLE IF EXISTS nokey",
    "CREATE TABLE nokey (x int)",
]

STEPS: list[tuple[str, tuple | None]] = [
    ("INSERT INTO w VALUES (1, 'a') RETURNING *", None),
    ("INSERT INTO w (id, v) VALUES (%s, %s), (%s, %s) RETURNING id, v || '!' AS shout, n",
     (2, "b", 3, "c")),
    ("INSERT INTO w VALUES (4, 'd') RETURNING w.id, w.*", None),
    ("INSERT INTO w AS t VALUES (5, 'e') RETURNING t.n + 1", None),
    ("INSERT INTO w VALUES (1, 'x') ON CONFLICT DO NOTHING RETURNING id", None),
    ("INSERT INTO w VALUES (1, 'x'), (6, 'f'), (6, 'g') ON CONFLICT (id) DO NOTHING "
     "RETURNING id, v", None),
    ("INSERT INTO w VALUES (%s, %s) ON CONFLICT (id) DO UPDATE SET v = excluded.v || w.v "
     "RETURNING *", (1, "y")),
    ("INSERT INTO w VALUES (2, 'z') ON CONFLICT ON CONSTRAINT w_pkey DO UPDATE "
     "SET n = w.n + 10, v = excluded.v WHERE w.v <> 'b' RETURNING *", None),
    ("INSERT INTO w VALUES (3, 'z') ON CONFLICT (id) DO UPDATE SET n = w.n + 10 "
     "WHERE w.v = 'c' RETURNING id, n", None),
    ("INSERT INTO w AS t VALUES (4, 'q') ON CONFLICT (id) DO UPDATE SET v = t.v || excluded.v",
     None),
    ("INSERT INTO w VALUES (7, 'h'), (7, 'i') ON CONFLICT (id) DO UPDATE SET v = excluded.v",
     None),
    ("INSERT INTO w VALUES (8, 'x') ON CONFLICT (id) DO UPDATE SET v = excluded.v || v", None),
    ("INSERT INTO w VALUES (8, 'x') ON CONFLICT (v) DO NOTHING", None),
    ("INSERT INTO w VALUES (8, 'x') ON CONFLICT DO UPDATE SET v = 'y'", None),
    ("INSERT INTO w VALUES (8, 'x') ON CONFLICT ON CONSTRAINT nope DO NOTHING", None),
    ("INSERT INTO w VALUES (9, NULL) ON CONFLICT (id) DO UPDATE SET nope = 1", None),
    ("INSERT INTO w2 VALUES (1, 1, 'one'), (1, 2, 'two') ON CONFLICT (b, a) DO NOTHING", None),
    ("INSERT INTO w2 VALUES (1, 2, 'deux'), (2, 2, 'new') ON CONFLICT (a, b) "
     "DO UPDATE SET note = excluded.note RETURNING a, b, note", None),
    ("INSERT INTO w2 VALUES (1, 1, 'x') ON CONFLICT (a) DO NOTHING", None),
    ("INSERT INTO nokey VALUES (1), (1) ON CONFLICT DO NOTHING RETURNING x", None),
    ("INSERT INTO nokey VALUES (1) ON CONFLICT (x) DO NOTHING", None),
    ("UPDATE w SET n = n * 2 WHERE id <= %s RETURNING id, n, n > 10 AS big", (3,)),
    ("UPDATE w AS t SET v = upper(t.v) WHERE t.id = 5 RETURNING t.*", None),
    ("UPDATE w SET n = 0 WHERE false RETURNING *", None),
    ("DELETE FROM w WHERE id = %s RETURNING *", (6,)),
    ("DELETE FROM w WHERE id > 100 RETURNING id", None),
    ("INSERT INTO w VALUES (20, 'r') RETURNING count(*)", None),
    ("INSERT INTO w VALUES (21, 'r') RETURNING nope", None),
    ("SELECT * FROM w ORDER BY id", None),
    ("SELECT * FROM w2 ORDER BY a, b", None),
    ("SELECT * FROM nokey", None),
]


def run_steps(conn: psycopg.Connection, binary: bool) -> list:
    out = []
    for sql in SETUP:
        conn.execute(sql)
    for sql, params in STEPS:
        try:
            with conn.cursor(binary=binary) as cur:
                cur.execute(sql, params)
                rows = cur.fetchall() if cur.description else None
                out.append((sql, cur.statusmessage, rows,
                            [(d.name, d.type_code) for d in cur.description or []]))
        except psycopg.Error as e:
            out.append((sql, f"ERROR {e.sqlstate}"))
    return out


def sqlalchemy_steps(url: str) -> list:
    """SQLAlchemy Core's PostgreSQL dialect: RETURNING and upserts."""
    sqlalchemy = pytest.importorskip("sqlalchemy")
    from sqlalchemy.dialects.postgresql import insert

    engine = sqlalchemy.create_engine(url)
    out = []
    with engine.begin() as conn:
        table = sqlalchemy.Table("w", sqlalchemy.MetaData(), autoload_with=conn)
        result = conn.execute(table.insert().returning(table.c.id, table.c.n),
                              [{"id": 30, "v": "core"}, {"id": 31, "v": "core"}])
        out.append(sorted(map(tuple, result)))
        upsert = insert(table).values(id=30, v="upserted")
        upsert = upsert.on_conflict_do_update(index_elements=["id"],
                                              set_={"v": upsert.excluded.v})
        out.append(list(map(tuple, conn.execute(upsert.returning(table.c.v)))))
        ignore = insert(table).values(id=31, v="ignored").on_conflict_do_nothing()
        out.append(conn.execute(ignore).rowcount)
        out.append(list(map(tuple, conn.execute(
            table.update().where(table.c.id == 31).values(n=table.c.n + 1)
            .returning(table.c.n)))))
        out.append(list(map(tuple, conn.execute(
            table.delete().where(table.c.id >= 30).returning(table.c.id)))))
    engine.dispose()
    return out


@pytest.mark.rocklake
def test_returning_and_on_conflict_do_what_they_do_on_postgresql(pg_server, rocklake):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    dsns = {"postgres": pg_server.dsn(reference.db), "rocklake": rocklake.dsn()}
    results = {}
    for name, dsn in dsns.items():
        seen = []
        for binary in (False, True):
            with psycopg.connect(dsn, autocommit=True) as conn:
                seen.append(run_steps(conn, binary))
        results[name] = seen
    for expected, actual in zip(results["postgres"], results["rocklake"]):
        assert len(actual) == len(expected)
        differences = [f"{e[0]}: PostgreSQL {e[1:]!r}, RockLake {a[1:]!r}"
                       for e, a in zip(expected, actual) if a != e]
        assert not differences, "\n".join(differences)
    urls = {
        "postgres": f"postgresql+psycopg://postgres@127.0.0.1:{pg_server.port}/{reference.db}",
        "rocklake": f"postgresql+psycopg://postgres@{rocklake.host}:{rocklake.port}/lake",
    }
    assert sqlalchemy_steps(urls["rocklake"]) == sqlalchemy_steps(urls["postgres"])


def delete_then_insert(conn: psycopg.Connection) -> list:
    """A row deleted and inserted again under its primary key in one
    transaction, in a table DuckLake keys by an id (RockLake stores it
    under that key) and in a plain table; then a real duplicate."""
    out = []
    for table in ("ducklake_snapshot_changes", "plain_changes"):
        conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute(f"CREATE TABLE {table} (snapshot_id bigint PRIMARY KEY, changes_made varchar, "
                     "author varchar, commit_message varchar, commit_extra_info varchar)")
        conn.execute(f"INSERT INTO {table} (snapshot_id, changes_made) VALUES (1, 'a'), (2, 'b')")
        with conn.transaction():
            conn.execute(f"DELETE FROM {table} WHERE snapshot_id = 2")
            conn.execute(f"INSERT INTO {table} (snapshot_id, changes_made) VALUES (2, 'c')")
        try:
            conn.execute(f"INSERT INTO {table} (snapshot_id) VALUES (1)")
            out.append("no error")
        except psycopg.Error as e:
            out.append(e.sqlstate)
        out.append(conn.execute(f"SELECT snapshot_id, changes_made FROM {table} ORDER BY 1").fetchall())
        conn.execute(f"DROP TABLE {table}")
    return out


@pytest.mark.rocklake
def test_a_key_deleted_and_inserted_again_in_one_transaction_as_on_postgresql(pg_server, rocklake):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    with psycopg.connect(pg_server.dsn(reference.db), autocommit=True) as conn:
        expected = delete_then_insert(conn)
    with psycopg.connect(rocklake.dsn(), autocommit=True) as conn:
        assert delete_then_insert(conn) == expected
    assert expected[0] == "23505" and expected[1] == [(1, "a"), (2, "c")]
