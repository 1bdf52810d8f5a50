"""SQLAlchemy 2 and pandas against RockLake, differential against a real
PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1) on the same catalog contents: a
DuckLake catalog stock DuckDB made, plus a table of the client's own.

With the psycopg (3) and psycopg2 drivers: the inspector's reflection of
schemas, tables, views, columns (types, defaults, nullability), primary keys,
indexes, foreign keys, unique and check constraints and comments, of every
DuckLake table; `Table(..., autoload_with=...)`; Core selects with bound
parameters; and pandas `read_sql` / `read_sql_table` / `read_sql_query`.
"""

from __future__ import annotations

import pytest

from conftest import PostgresBackend

sqlalchemy = pytest.importorskip("sqlalchemy")
pandas = pytest.importorskip("pandas")

DUCKDB_STEPS = [
    "CREATE TABLE l.events (id BIGINT, name VARCHAR, amount DECIMAL(10, 2))",
    "INSERT INTO l.events VALUES (1, 'one', 1.50), (2, 'two', NULL)",
    "INSERT INTO l.events SELECT i, 'row' || i, i / 4 FROM range(10, 40) r(i)",
    "DELETE FROM l.events WHERE id = 2",
    "CREATE VIEW l.big AS SELECT * FROM l.events WHERE id > 20",
]

OWN_TABLE = [
    "DROP TABLE IF EXISTS report",
    "CREATE TABLE report (id bigint PRIMARY KEY, title varchar, score numeric(10,2), "
    "ok boolean DEFAULT true, n int NOT NULL DEFAULT 3, at timestamptz)",
    "INSERT INTO report VALUES (1, 'a', 1.5, true, 1, '2024-01-02 03:04:05+00'), "
    "(2, 'b', NULL, false, 2, NULL)",
]


def sqlalchemy_url(backend, driver: str) -> str:
    if isinstance(backend, PostgresBackend):
        return (f"postgresql+{driver}://postgres@127.0.0.1:{backend.server.port}/"
                f"{backend.db}")
    return f"postgresql+{driver}://postgres@{backend.host}:{backend.port}/lake"


def records(frame) -> str:
    """A data frame's rows, as text (so NaN equals NaN)."""
    return repr(frame.to_dict("records"))


def reflect(url: str) -> dict:
    """What SQLAlchemy's inspector and pandas see (errors as their class)."""
    engine = sqlalchemy.create_engine(url)
    with engine.begin() as conn:
        for sql in OWN_TABLE:
            conn.exec_driver_sql(sql)
    out = {}

    def see(label, f):
        try:
            out[label] = f()
        except Exception as e:  # noqa: BLE001 - the class is the answer
            out[label] = f"{type(e).__name__}: {str(e).splitlines()[0]}"

    inspector = sqlalchemy.inspect(engine)
    see("schemas", inspector.get_schema_names)
    tables = inspector.get_table_names()
    out["tables"] = tables
    see("views", inspector.get_view_names)
    for table in tables:
        see(f"{table} columns", lambda: [
            {**c, "type": repr(c["type"])} for c in inspector.get_columns(table)])
        see(f"{table} pk", lambda: inspector.get_pk_constraint(table))
        see(f"{table} indexes", lambda: inspector.get_indexes(table))
        see(f"{table} fks", lambda: inspector.get_foreign_keys(table))
        see(f"{table} unique", lambda: inspector.get_unique_constraints(table))
        see(f"{table} checks", lambda: inspector.get_check_constraints(table))
        see(f"{table} comment", lambda: inspector.get_table_comment(table))
    see("has report", lambda: inspector.has_table("report"))
    see("has nothing", lambda: inspector.has_table("no_such_table"))
    see("autoload", lambda: [
        (c.name, repr(c.type), c.nullable, c.primary_key)
        for c in sqlalchemy.Table("ducklake_snapshot", sqlalchemy.MetaData(),
                                  autoload_with=engine).columns])
    snapshot = sqlalchemy.Table("ducklake_snapshot", sqlalchemy.MetaData(), autoload_with=engine)
    with engine.connect() as conn:
        see("core select", lambda: [
            tuple(r) for r in conn.execute(
                sqlalchemy.select(snapshot.c.snapshot_id, snapshot.c.schema_version)
                .where(snapshot.c.snapshot_id >= sqlalchemy.bindparam("low"))
                .order_by(snapshot.c.snapshot_id), {"low": 1})])
    see("read_sql", lambda: records(pandas.read_sql(
        "SELECT snapshot_id, schema_version, next_catalog_id FROM ducklake_snapshot "
        "ORDER BY snapshot_id", engine)))
    see("read_sql params", lambda: records(pandas.read_sql(
        sqlalchemy.text("SELECT table_name, begin_snapshot FROM ducklake_table "
                        "WHERE begin_snapshot >= :s ORDER BY table_id"),
        engine, params={"s": 1})))
    see("read_sql_table", lambda: records(pandas.read_sql_table("report", engine)))
    see("read_sql_query", lambda: records(pandas.read_sql_query(
        "SELECT c.column_name, c.column_type FROM ducklake_column c "
        "JOIN ducklake_table t USING (table_id) WHERE t.table_name = 'events' "
        "ORDER BY c.column_order", engine)))
    engine.dispose()
    return out


@pytest.mark.rocklake
@pytest.mark.parametrize("driver", ["psycopg", "psycopg2"])
def test_sqlalchemy_reflection_and_pandas_see_what_they_see_on_postgresql(
        pg_server, rocklake, duck, data_dir, driver):
    pytest.importorskip(driver)
    rocklake.start()
    reference = PostgresBackend(pg_server)
    seen = {}
    for backend in (reference, rocklake):
        con = duck()
        con.execute(backend.attach_sql("l", data_dir()))
        for sql in DUCKDB_STEPS:
            con.execute(sql)
        con.close()
        seen[backend.name] = reflect(sqlalchemy_url(backend, driver))
    expected, actual = seen["postgres"], seen["rocklake"]
    assert "ducklake_snapshot" in expected["tables"] and "report" in expected["tables"]
    assert expected["report pk"]["constrained_columns"] == ["id"]
    differences = [f"{key}: PostgreSQL {expected.get(key)!r}, RockLake {actual.get(key)!r}"
                   for key in sorted(set(expected) | set(actual))
                   if expected.get(key) != actual.get(key)]
    assert not differences, "\n".join(differences)
