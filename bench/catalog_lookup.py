#!/usr/bin/env python3
"""Catalog lookups in a catalog of many relations: RockLake and a durable
PostgreSQL 15 side by side in one run, over psycopg (no DuckDB in the loop).

    .venv/bin/python bench/catalog_lookup.py [--relations 7000] [--reps 20]

DuckLake keeps an inlined data table per table and schema version, so a
lake with a long history holds thousands of relations in its catalog
database. DuckDB's postgres extension looks each table up with one join of
pg_class, pg_namespace, pg_attribute, pg_type and pg_description (and
pg_constraint), filtered by `relname`, the first time it touches the table
and again after every CREATE TABLE of an inlined table. This benchmark:

1. creates RELATIONS tables of 7 columns (100 per transaction), as inlined
   data tables are, on each server;
2. REPS times: a `CREATE TABLE` (autocommit), then DuckDB's lookup statement
   for one existing table (the first query after a DDL), for another table
   (same catalog version), and the first one again (same statement text).

Medians and p95 in ms with the ratio RockLake / PostgreSQL, and each
server's memory. Timings are reported, never asserted. RockLake is the
release binary (ROCKLAKE_BIN to override).
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import psycopg

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run as bench  # noqa: E402

# DuckDB 1.5.5's per-table lookup (postgres extension), as it sends it.
LOOKUP = (
    "SELECT pg_namespace.oid AS namespace_id, relname, relpages, attname, pg_type.typname type_name, "
    "atttypmod type_modifier, pg_attribute.attndims ndim, attnum, pg_attribute.attnotnull AS notnull, "
    "NULL constraint_id, NULL constraint_type, NULL constraint_key, type_ns.nspname AS type_schema, "
    "col_desc.description AS column_comment, tbl_desc.description AS table_comment FROM pg_class "
    "JOIN pg_namespace ON relnamespace = pg_namespace.oid JOIN pg_attribute ON "
    "pg_class.oid=pg_attribute.attrelid JOIN pg_type ON atttypid=pg_type.oid JOIN pg_namespace type_ns "
    "ON pg_type.typnamespace = type_ns.oid LEFT JOIN pg_description col_desc ON "
    "col_desc.objoid=pg_class.oid AND col_desc.objsubid=pg_attribute.attnum LEFT JOIN pg_description "
    "tbl_desc ON tbl_desc.objoid=pg_class.oid AND tbl_desc.objsubid=0 WHERE attnum > 0 AND relkind IN "
    "('r', 'v', 'm', 'f', 'p') AND pg_namespace.nspname IN ('public')AND relname='{name}' UNION ALL "
    "SELECT pg_namespace.oid AS namespace_id, relname, NULL relpages, NULL attname, NULL type_name, "
    "NULL type_modifier, NULL ndim, NULL attnum, NULL AS notnull, pg_constraint.oid AS constraint_id, "
    "contype AS constraint_type, conkey AS constraint_key, NULL AS type_schema, NULL AS column_comment, "
    "NULL AS table_comment FROM pg_class JOIN pg_namespace ON relnamespace = pg_namespace.oid JOIN "
    "pg_constraint ON (pg_class.oid=pg_constraint.conrelid) WHERE relkind IN ('r', 'v', 'm', 'f', 'p') "
    "AND contype IN ('p', 'u') AND pg_namespace.nspname IN ('public')AND relname='{name}' "
    "ORDER BY namespace_id, relname, attnum, constraint_id"
)

STEPS = {
    "create": "CREATE TABLE (autocommit)",
    "after_ddl": "lookup right after the CREATE TABLE",
    "other": "lookup of another table, same version",
    "again": "the first lookup again (same text)",
}


def create_relations(dsn: str, relations: int) -> float:
    with psycopg.connect(dsn, autocommit=True) as con:
        start = time.perf_counter()
        for first in range(0, relations, 100):
            with con.transaction():
                for i in range(first, min(first + 100, relations)):
                    con.execute(
                        f"CREATE TABLE ducklake_inlined_data_{i}_1 (row_id bigint, begin_snapshot bigint, "
                        "end_snapshot bigint, a int, b varchar, c double precision, d timestamp)")
        return time.perf_counter() - start


def measure(dsn: str, relations: int, reps: int) -> dict:
    samples = {key: [] for key in STEPS}
    with psycopg.connect(dsn, autocommit=True) as con:
        for rep in range(reps):
            first = LOOKUP.format(name=f"ducklake_inlined_data_{(rep * 37) % relations}_1")
            other = LOOKUP.format(name=f"ducklake_inlined_data_{(rep * 37 + 1) % relations}_1")
            for key, sql in (("create", f"CREATE TABLE extra_{rep} (a int)"), ("after_ddl", first),
                             ("other", other), ("again", first)):
                start = time.perf_counter()
                cur = con.execute(sql)
                if cur.description:
                    rows = cur.fetchall()
                    assert len(rows) == 7, f"{key}: {len(rows)} rows"
                samples[key].append(time.perf_counter() - start)
    return samples


def start_rocklake(workdir: pathlib.Path) -> tuple[subprocess.Popen, int]:
    binary = bench.rocklake_binary()
    port = bench.free_port()
    proc = subprocess.Popen([str(binary), "serve", str(workdir / "lake"), "--listen", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir,
                            start_new_session=True)
    if not bench.wait_for_port(port, 60, proc):
        raise RuntimeError("rocklake did not start")
    return proc, port


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--relations", type=int, default=7000)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="rocklake-bench-lookup-"))
    pg = bench.Postgres(workdir, duck=None, durable=True)
    proc, port = start_rocklake(workdir)
    try:
        pg.psql("CREATE DATABASE lookups")
        dsns = {"rocklake": f"host=127.0.0.1 port={port} dbname=lake user=postgres",
                "postgres": f"host=127.0.0.1 port={pg.port} dbname=lookups user=postgres"}
        results, created, rss = {}, {}, {}
        for name, dsn in dsns.items():
            created[name] = create_relations(dsn, args.relations)
            bench.log(f"{name}: {args.relations} relations in {created[name]:.1f} s")
            results[name] = measure(dsn, args.relations, args.reps)
        rss["rocklake"] = bench.rss_mib([proc.pid])
        rss["postgres"] = bench.rss_mib(bench.server_pids(pg))
        print(f"\n{args.relations} relations, {args.reps} reps; {pg.describe()}")
        print("\n| step | RockLake median (p95) ms | PostgreSQL median (p95) ms | ratio |")
        print("|---|---|---|---|")
        rl, ref = created["rocklake"], created["postgres"]
        print(f"| create {args.relations} relations (s) | {rl:.1f} | {ref:.1f} | {rl / ref:.2f} |")
        for key, label in STEPS.items():
            a, b = results["rocklake"][key], results["postgres"][key]
            ma, mb = statistics.median(a), statistics.median(b)
            print(f"| {label} | {bench.ms(ma):.1f} ({bench.ms(bench.percentile(a, 95)):.1f}) | "
                  f"{bench.ms(mb):.1f} ({bench.ms(bench.percentile(b, 95)):.1f}) | {ma / mb:.2f} |")
        print(f"| server memory (RSS, MiB) | {rss['rocklake']:.0f} | {rss['postgres']:.0f} | - |")
    finally:
        bench.stop_process(proc)
        pg.stop()


if __name__ == "__main__":
    main()
