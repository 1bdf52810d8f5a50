#!/usr/bin/env python3
"""Per-statement latency of one DuckDB insert transaction, side by side.

    .venv/bin/python bench/statements.py [--transactions 2000] [--rounds 2]

Starts RockLake (release build, or ROCKLAKE_BIN) and a durable PostgreSQL 15 as
bench/run.py does, lets DuckDB create a DuckLake catalog with one table on
each, then runs `pgbench -r` with the statements DuckDB sends for a 1-row
inlined INSERT (the latest-snapshot query, the table statistics reads, an
insert into ducklake_snapshot, the statistics update, COMMIT) against both,
alternating, and prints the average latency of each statement in ms with the
ratio RockLake/PostgreSQL. The statements are sent with the simple protocol
and without COPY, so this measures the catalog server, not DuckDB.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run as bench  # noqa: E402

SCRIPT = """\\set id random(1000000, 1000000000000)
BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ;
SELECT 1;
SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM public.ducklake_snapshot WHERE snapshot_id = ( SELECT MAX(snapshot_id) FROM public.ducklake_snapshot);
SELECT "table_id", "record_count", "file_size_bytes", "next_row_id" FROM "public"."ducklake_table_stats" WHERE "table_id" = '1';
SELECT "table_id", "column_id", "contains_null", "contains_nan", "min_value", "max_value", "extra_stats" FROM "public"."ducklake_table_column_stats" WHERE "table_id" = '1';
INSERT INTO public.ducklake_snapshot VALUES (:id, NOW(), 1, 1, 1);
UPDATE public.ducklake_table_stats SET record_count = record_count + 1 WHERE table_id = 1;
COMMIT;
"""

LABELS = ["BEGIN", "SELECT 1", "latest snapshot", "table stats", "column stats",
          "INSERT snapshot", "UPDATE table stats", "COMMIT"]


def pgbench(port: int, user: str | None, db: str, script: pathlib.Path, transactions: int):
    """Average ms per statement of the script (without the \\set line)."""
    cmd = [shutil.which("pgbench") or "pgbench", "-n", "-h", "127.0.0.1", "-p", str(port),
           "-d", db, "-f", str(script), "-t", str(transactions), "-r"]
    if user:
        cmd[1:1] = ["-U", user]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    lines = out.split("statement latencies in milliseconds")[1].splitlines()[1:]
    values = [float(m.group(1)) for line in lines
              if "\\set" not in line and (m := re.match(r"\s+([0-9.]+)\s+\d+\s", line))]
    if len(values) != len(LABELS):
        raise SystemExit(f"unexpected pgbench output:\n{out}")
    return values


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--transactions", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    if not shutil.which("pgbench"):
        raise SystemExit("pgbench not found (Debian package postgresql-client)")
    binary = bench.rocklake_binary()
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="rocklake-statements-"))
    duck = bench.Duck(workdir, False, False)
    script = workdir / "insert-transaction.sql"
    script.write_text(SCRIPT)
    backends = []
    try:
        targets = {}
        for backend in (bench.RockLake(workdir, binary, duck),
                        bench.Postgres(workdir, duck, durable=True)):
            backends.append(backend)
            cat = backend.new_catalog("statements")
            con = bench.attached(backend, cat)
            con.execute("CREATE TABLE l.h (id BIGINT, v VARCHAR)")
            con.execute("INSERT INTO l.h VALUES (1, 'x')")
            con.close()
            fields = dict(kv.split("=", 1) for kv in cat.attach_target.split(":", 2)[2].split())
            targets[backend.name] = (int(fields["port"]), fields.get("user"), fields["dbname"])
        totals = {name: [0.0] * len(LABELS) for name in targets}
        for r in range(args.rounds):
            for name, (port, user, db) in targets.items():
                bench.log(f"round {r + 1}: {name}, {args.transactions} transactions")
                for i, v in enumerate(pgbench(port, user, db, script, args.transactions)):
                    totals[name][i] += v / args.rounds
        print("\n| statement | RockLake ms | PostgreSQL ms | RockLake/PG |")
        print("|---|---|---|---|")
        for i, label in enumerate(LABELS):
            rl, pg = totals["rocklake"][i], totals["postgres"][i]
            print(f"| {label} | {rl:.3f} | {pg:.3f} | {rl / pg:.2f}x |")
        rl, pg = sum(totals["rocklake"]), sum(totals["postgres"])
        print(f"| whole transaction | {rl:.3f} | {pg:.3f} | {rl / pg:.2f}x |")
    finally:
        for backend in backends:
            backend.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
