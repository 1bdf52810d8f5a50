"""Value formats against a real PostgreSQL 15: the text a result column shows
(`SELECT x`) and the text a cast to text gives (`x::text`, `x::text || ''`)
must be PostgreSQL's for every type, and the two must agree with each other.

RockLake once printed values with two formatters that disagreed (interval
`-1 year` against PostgreSQL's `-1 years`, a missing `+` before the time of
an interval after a negative part, `BC` before the time, no `infinity` in
casts); these cases are the regression test. Both servers get the same
statements through psql (unaligned, tuples only), so the bytes compared are
exactly what a client receives in text format.
"""

from __future__ import annotations

import pathlib
import subprocess

import pytest

# Each expression is shown three ways: as a result column, cast to text, and
# concatenated (which goes through the cast's text form).
EXPRESSIONS = [
    "'-1 year'::interval",
    "'-14 months -3 days'::interval",
    "'1 year -3 days 04:05:06'::interval",
    "'-1 mons 3 days -00:00:01'::interval",
    "'1 day'::interval",
    "'00:00:00'::interval",
    "'100 hours'::interval",
    "'1 year 2 mons 3 days 04:05:06.789'::interval",
    "'0044-03-15 12:00:00 BC'::timestamp",
    "'0044-03-15 12:00:00 BC'::timestamptz",
    "'0044-03-15 BC'::date",
    "'0001-01-01'::date",
    "'2026-12-03 18:31:29.5'::timestamp",
    "'2026-12-03 18:31:29.123456+02'::timestamptz",
    "'infinity'::timestamp",
    "'-infinity'::timestamptz",
    "'infinity'::date",
    "'-infinity'::date",
    "'13:00:05.00001'::time",
    "'0.1'::float8",
    "'1e20'::float8",
    "'0.00001'::float8",
    "'0.1'::float4",
    "'1e6'::float4",
    "'-12.340'::numeric",
    "'1.5e-3'::numeric",
    "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
    "'\\x6f6e65'::bytea",
    "true",
    "false",
    "12::int2",
    "'-2147483648'::int4",
    "9223372036854775807::int8",
]


def _psql() -> str:
    found = sorted(pathlib.Path("/usr/lib/postgresql").glob("*/bin/psql"))
    if not found:
        pytest.skip("psql is not installed")
    return str(found[-1])


def run_psql(host: str, port: int, db: str, sql: str) -> str:
    res = subprocess.run([_psql(), "-h", host, "-p", str(port), "-U", "postgres", "-d", db,
                          "-X", "-v", "ON_ERROR_STOP=1", "-tA", "-F", "|", "-c", sql],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, f"{sql!r} failed on port {port}: {res.stderr}"
    return res.stdout


def shown(host: str, port: int, db: str) -> dict[str, str]:
    out = {}
    for expr in EXPRESSIONS:
        sql = f"SELECT {expr}, ({expr})::text, ({expr})::text || ''"
        out[expr] = run_psql(host, port, db, sql).rstrip("\n")
    return out


@pytest.mark.rocklake
def test_casts_to_text_and_result_columns_print_alike(rocklake):
    rocklake.start()
    got = shown(rocklake.host, rocklake.port, "lake")
    for expr, line in got.items():
        column, cast, concatenated = line.split("|")
        assert cast == concatenated, expr
        # Booleans are the one type whose cast to text (`true`) differs from
        # its output function (`t`), in PostgreSQL as here.
        if expr not in ("true", "false"):
            assert column == cast, expr


@pytest.mark.rocklake
@pytest.mark.reference
def test_value_formats_equal_postgres(rocklake, pg_server):
    rocklake.start()
    db = pg_server.new_database("formats")
    expected = shown("127.0.0.1", pg_server.port, db)
    got = shown(rocklake.host, rocklake.port, "lake")
    mismatches = {e: (got[e], expected[e]) for e in EXPRESSIONS if got[e] != expected[e]}
    assert not mismatches, mismatches
