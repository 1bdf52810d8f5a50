"""`to_char` of numbers and `to_number` on random templates and values,
differential against a real PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1): the
template keywords, literal text and quoting mixed at random over every
number type, each call's result or error compared. The seed is fixed so a
run repeats; ROCKLAKE_FORMAT_SEED and ROCKLAKE_FORMAT_CALLS change it.
"""

from __future__ import annotations

import os
import random
from decimal import Decimal

import psycopg
import pytest

from conftest import PostgresBackend

PIECES = ["9"] * 6 + ["0"] * 3 + [
    ".", "D", ",", "G", "S", "MI", "PL", "SG", "PR", "L", "V", "FM", "TH", "th", "RN", "rn",
    "EEEE", "B", "C", "SP", " ", "x", '"ab"', "-", '\\"']


def template(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 9)))


def value(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["integer", "bigint", "numeric", "numeric", "double precision", "real"])
    digits = rng.choice([0, 0, 1, 2, 3, 5, 8, 12, 17])
    n = rng.randint(0, 10 ** digits) * rng.choice([1, -1])
    if kind == "integer":
        return kind, str(max(min(n, 2 ** 31 - 1), -2 ** 31))
    if kind == "bigint":
        return kind, str(n)
    number = Decimal(n).scaleb(-rng.choice([0, 1, 2, 3, 5]))
    if kind == "numeric":
        return kind, str(number)
    if rng.random() < 0.03:
        return kind, "NaN"
    return kind, repr(float(number))


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def calls(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        if rng.random() < 0.7:
            kind, text = value(rng)
            out.append(f"SELECT to_char({literal(text)}::{kind}, {literal(template(rng))})")
        else:
            fmt = template(rng)
            _, text = value(rng)
            shown = rng.choice([text, text.replace("-", "") + "-", f"<{text}>", f" {text}",
                                f"{text}x", "1,234.5", "12th"])
            out.append(f"SELECT to_number({literal(shown)}, {literal(fmt)})")
    return out


def answers(dsn: str, statements: list[str]) -> list:
    out = []
    conn = psycopg.connect(dsn, autocommit=True)
    for sql in statements:
        try:
            out.append(("rows", conn.execute(sql).fetchall()))
        except psycopg.Error as error:
            out.append(("error", error.sqlstate, str(error).splitlines()[0]))
            if conn.closed:
                conn = psycopg.connect(dsn, autocommit=True)
    conn.close()
    return out


@pytest.mark.rocklake
def test_random_number_templates_answer_as_on_postgresql(pg_server, rocklake):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    seed = int(os.environ.get("ROCKLAKE_FORMAT_SEED", "37"))
    statements = calls(seed, int(os.environ.get("ROCKLAKE_FORMAT_CALLS", "1500")))
    expected = answers(pg_server.dsn(reference.db), statements)
    actual = answers(rocklake.dsn(), statements)
    differing = [(sql, want, got) for sql, want, got in zip(statements, expected, actual)
                 if want != got]
    assert not differing, differing[:10]
