"""asyncpg against RockLake, differential against a real PostgreSQL 15
(ROCKLAKE_PG_REFERENCE=1). asyncpg speaks the extended protocol with binary
formats only, introspects types it has no codec for with a recursive query
over pg_type (and turns JIT off around it with set_config()), and copies
rows in with binary COPY: each step must give what PostgreSQL gives.
"""

from __future__ import annotations

import asyncio
import datetime
import decimal

import pytest

from conftest import PostgresBackend

asyncpg = pytest.importorskip("asyncpg")

UTC = datetime.timezone.utc


async def steps(host: str, port: int, database: str) -> list:
    conn = await asyncpg.connect(host=host, port=port, user="postgres", database=database)
    out = []

    async def step(coro):
        try:
            out.append(await coro)
        except asyncpg.PostgresError as e:
            out.append(f"ERROR {e.sqlstate}")

    def records(rows):
        return [tuple(r.items()) for r in rows]

    await step(conn.execute("DROP TABLE IF EXISTS ap; CREATE TABLE ap (id bigint PRIMARY KEY, "
                            "name text, amount numeric(10,2), at timestamptz, ok boolean, "
                            "tags text[], small int2)"))
    await step(conn.execute("INSERT INTO ap VALUES ($1, $2, $3, $4, $5, $6, $7)", 1, "one",
                            decimal.Decimal("1.50"), datetime.datetime(2024, 1, 2, tzinfo=UTC),
                            True, ["a", "b c"], 7))
    await step(conn.executemany("INSERT INTO ap (id, name) VALUES ($1, $2)",
                                [(i, f"n{i}") for i in range(2, 6)]))
    await step(conn.fetch("SELECT * FROM ap WHERE id >= $1 ORDER BY id", 1))
    out[-1] = records(out[-1]) if isinstance(out[-1], list) else out[-1]
    for sql in [
        "SELECT count(*), max(id), array_agg(id ORDER BY id), array_agg(small) FROM ap",
        "SELECT ARRAY[1, 2], ARRAY[1.5, NULL]::numeric[], '{x,y}'::varchar[], ARRAY[true]",
        "SELECT 'ap'::regclass::text, 'int4'::regtype::text, json_build_object('a', 1)",
        "SELECT generate_series(1, 3) AS g, unnest(ARRAY['p', 'q']) AS u",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 4) "
        "SELECT array_agg(n) FROM r",
        "SELECT current_setting('jit'), current_setting('nope', true)",
        "SELECT indkey, indclass FROM pg_index WHERE indrelid = 'ap'::regclass",
    ]:
        await step(conn.fetch(sql))
        out[-1] = records(out[-1]) if isinstance(out[-1], list) else out[-1]
    async with conn.transaction():
        await step(conn.fetchval("SELECT count(*) FROM ap"))
    await step(conn.copy_records_to_table(
        "ap", records=[(10, "copied", decimal.Decimal("2.25"), None, False, ["z"], None)]))
    await step(conn.fetch("SELECT * FROM ap WHERE id = 10"))
    out[-1] = records(out[-1]) if isinstance(out[-1], list) else out[-1]
    statement = await conn.prepare("SELECT name FROM ap WHERE id = $1")
    await step(statement.fetchval(3))
    await step(statement.fetchval(4))
    await step(conn.fetchval("SELECT nope FROM ap"))
    await step(conn.fetchval("SELECT 1"))
    await conn.close()
    return out


@pytest.mark.rocklake
def test_asyncpg_sees_what_it_sees_on_postgresql(pg_server, rocklake):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    expected = asyncio.run(steps("127.0.0.1", pg_server.port, reference.db))
    actual = asyncio.run(steps(rocklake.host, rocklake.port, "lake"))
    assert len(actual) == len(expected)
    differences = [f"step {i}: PostgreSQL {e!r}, RockLake {a!r}"
                   for i, (e, a) in enumerate(zip(expected, actual)) if a != e]
    assert not differences, "\n".join(differences)
