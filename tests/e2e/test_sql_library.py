"""PostgreSQL's library of functions and operators, differential against a
real PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1).

The corpus is `sql_library/<family>.sql`: one table-free statement per line
(`--` lines are comments), written for this project from the function and
operator tables of PostgreSQL's documentation (each function, its edge cases
and its errors). Every statement runs on both servers with text and with
binary results; what is compared is exactly what a client receives: each
value's bytes and each result column's type OID, or for an error its
SQLSTATE and primary message.

`sql_library/known_differences.txt` lists the statements that still differ,
each with its reason (`family | statement | reason`). The test fails when a
statement differs without being listed, and when a listed one no longer
differs (so the list stays true). It prints the coverage per family (the
share of statements identical to PostgreSQL); with
ROCKLAKE_SQL_LIBRARY_REPORT=FILE it also writes that table as Markdown.
"""

from __future__ import annotations

import os
import pathlib

import psycopg
import pytest

from conftest import PostgresBackend

CORPUS = pathlib.Path(__file__).parent / "sql_library"


def corpus() -> dict[str, list[str]]:
    """The statements of each family, in file order."""
    families = {}
    for path in sorted(CORPUS.glob("*.sql")):
        lines = [line.strip() for line in path.read_text().splitlines()]
        families[path.stem] = [line for line in lines if line and not line.startswith("--")]
    return families


def known_differences() -> dict[tuple[str, str], str]:
    """(family, statement) -> why it differs."""
    known = {}
    path = CORPUS / "known_differences.txt"
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        family, statement, reason = (part.strip() for part in line.split(" | ", 2))
        known[(family, statement)] = reason
    return known


def outcome(conn: psycopg.Connection, sql: str, binary: bool):
    """What a client receives for `sql`: the type OIDs and raw values, or
    the error's SQLSTATE and message."""
    try:
        with conn.cursor(binary=binary) as cur:
            cur.execute(sql)
            res = cur.pgresult
            if res is None or res.nfields == 0:
                return ("ok", cur.statusmessage)
            types = [res.ftype(i) for i in range(res.nfields)]
            rows = [[res.get_value(r, c) for c in range(res.nfields)]
                    for r in range(res.ntuples)]
            return ("rows", types, rows)
    except psycopg.Error as e:
        return ("error", e.sqlstate, e.diag.message_primary)


def run_corpus(dsn: str, families: dict[str, list[str]]) -> dict[tuple[str, str], tuple]:
    results = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET TimeZone = 'Etc/UTC'")
        for family, statements in families.items():
            for sql in statements:
                results[(family, sql)] = (outcome(conn, sql, False), outcome(conn, sql, True))
    return results


@pytest.mark.rocklake
def test_the_sql_library_gives_what_postgresql_gives(pg_server, rocklake):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    families = corpus()
    expected = run_corpus(pg_server.dsn(reference.db), families)
    actual = run_corpus(rocklake.dsn(), families)
    known = known_differences()

    unexplained, stale, report = [], [], []
    for family, statements in families.items():
        same = 0
        for sql in statements:
            key = (family, sql)
            identical = expected[key] == actual[key]
            same += identical
            if not identical and key not in known:
                unexplained.append(
                    f"[{family}] {sql}\n    PostgreSQL: {expected[key]!r}\n    RockLake:   {actual[key]!r}")
            if identical and key in known:
                stale.append(f"[{family}] {sql} (listed: {known[key]})")
        report.append((family, same, len(statements)))

    total_same = sum(s for _, s, _ in report)
    total = sum(n for _, _, n in report)
    lines = ["| family | identical | statements | coverage |", "|---|---|---|---|"]
    lines += [f"| {f} | {s} | {n} | {100 * s / n:.1f}% |" for f, s, n in report]
    lines.append(f"| all | {total_same} | {total} | {100 * total_same / total:.1f}% |")
    print("\n" + "\n".join(lines))
    if os.environ.get("ROCKLAKE_SQL_LIBRARY_REPORT"):
        pathlib.Path(os.environ["ROCKLAKE_SQL_LIBRARY_REPORT"]).write_text("\n".join(lines) + "\n")

    missing = [key for key in known if key[1] not in families.get(key[0], [])]
    assert not missing, f"known differences not in the corpus: {missing}"
    assert not unexplained, "differences from PostgreSQL:\n" + "\n".join(unexplained)
    assert not stale, "listed as different but now identical:\n" + "\n".join(stale)
