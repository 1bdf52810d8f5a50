"""Mixed fleets: DuckDB 1.5.5 and a DuckDB of the 2.0 line (DuckLake spec
1.1) on one lake, on RockLake and on a real PostgreSQL 15 (run with
ROCKLAKE_PG_REFERENCE=1), with equal outcomes at every step:

* a 1.0 catalog made by DuckDB 1.5.5 is opened by the 2.0-line client with
  and without AUTOMATIC_MIGRATION, migrated, read back at every snapshot and
  written to;
* DuckDB 1.5.5 then attaches the migrated lake (DuckLake refuses: a
  migration is one-way), and both clients writing before the migration.

The 2.0-line client is not on PyPI: it is built from the DuckDB, DuckLake
and postgres_scanner sources (docs/duckdb-2.0.md says which commits and how
it was run). Point ROCKLAKE_DUCKDB_DEV_VENV at a Python environment that
imports it (`duckdb` with the ducklake and postgres_scanner extensions
linked in); without it these tests are skipped. What they found is covered
without the build by the replayed statements of test_spec_1_1.py.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest

from conftest import PostgresBackend
from test_versions import OLD_CHILD, TABLES, migrating
from workload import EXTRAS, PART1, Step, StepResult, compare, run_steps

DEV_VENV = os.environ.get("ROCKLAKE_DUCKDB_DEV_VENV")
DEV_PYTHON = pathlib.Path(DEV_VENV or "/nonexistent") / "bin" / "python"

pytestmark = [
    pytest.mark.rocklake,
    pytest.mark.skipif(not DEV_VENV, reason="set ROCKLAKE_DUCKDB_DEV_VENV to a 2.0-line DuckDB"),
]

# DuckDB 1.5.5 makes a 1.0 catalog: the workload's first part, then the
# extras (macros, comments, partitions, inlining, maintenance).
CREATE_STEPS: list[Step] = (
    [s for s in PART1 if s.name != "detach"]
    + [Step("v1_" + s.name, s.sql, s.returns_rows, s.ordered)
       for s in EXTRAS if s.name not in ("attach", "detach", "reattach", "final_detach")]
    + [Step("v1_version", "SELECT value FROM l.options() WHERE option_name = 'version'"),
       Step("v1_detach", "DETACH l", returns_rows=False)]
)
LAST_V1_SNAPSHOT = 45


def run_dev(steps: list[Step], attach: str, out: pathlib.Path) -> list[StepResult]:
    """`steps` run by the 2.0-line DuckDB, in its own process."""
    payload = json.dumps([s.__dict__ for s in steps])
    proc = subprocess.run([str(DEV_PYTHON), "-c", OLD_CHILD, str(out.parent / "ext"), payload,
                           attach, str(out), str(pathlib.Path(__file__).parent)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"the 2.0-line run failed:\n{proc.stdout}\n{proc.stderr}"
    return [StepResult(**r) for r in json.loads(out.read_text())]


def dev_steps(plain_attach: str) -> list[Step]:
    """What the 2.0-line client does with a 1.0 catalog: attach without
    migrating, then with AUTOMATIC_MIGRATION (`{attach}`), read every
    snapshot back, write and maintain."""
    steps = [
        Step("attach_unmigrated", plain_attach, returns_rows=False),
        Step("detach_unmigrated", "DETACH DATABASE IF EXISTS l", returns_rows=False),
        Step("migrate", "{attach}", returns_rows=False),
        Step("version", "SELECT value FROM l.options() WHERE option_name = 'version'"),
        Step("snapshots", "SELECT snapshot_id, schema_version, changes FROM "
             "ducklake_snapshots('l') ORDER BY snapshot_id", ordered=True),
    ]
    for snapshot in range(LAST_V1_SNAPSHOT + 1):
        for table in TABLES[:2]:
            steps.append(Step(f"read_{table}_at_{snapshot}",
                              f"SELECT * FROM l.{table} AT (VERSION => {snapshot}) ORDER BY ALL",
                              ordered=True))
    steps += [
        Step("insert", "INSERT INTO l.s1.t2 SELECT i::INTEGER, 'new' || i, i % 2 = 0 "
             "FROM range(10000, 10500) r(i)"),
        Step("inline", "INSERT INTO l.s1.t2 VALUES (7001, 'z', true)"),
        Step("update", "UPDATE l.s1.t2 SET label = 'changed' WHERE id < 8"),
        Step("delete", "DELETE FROM l.s1.t2 WHERE id % 7 = 0"),
        Step("add_column", "ALTER TABLE l.s1.t2 ADD COLUMN note VARCHAR DEFAULT 'n/a'",
             returns_rows=False),
        Step("create", "CREATE TABLE l.s1.fresh AS SELECT 1 AS one", returns_rows=False),
        Step("read_t2", "SELECT * FROM l.s1.t2 ORDER BY ALL", ordered=True),
        Step("flush", "SELECT count(*) FROM ducklake_flush_inlined_data('l')"),
        Step("merge", "SELECT count(*) FROM ducklake_merge_adjacent_files('l')"),
        Step("expire", "SELECT count(*) FROM ducklake_expire_snapshots('l', "
             "older_than => now() + INTERVAL 1 DAY)"),
        Step("cleanup", "SELECT count(*) FROM ducklake_cleanup_old_files('l', cleanup_all => true)"),
        Step("read_t2_after_maintenance", "SELECT * FROM l.s1.t2 ORDER BY ALL", ordered=True),
        Step("final_snapshots", "SELECT snapshot_id, schema_version, changes FROM "
             "ducklake_snapshots('l') ORDER BY snapshot_id", ordered=True),
        Step("detach", "DETACH l", returns_rows=False),
    ]
    return steps


def assert_same(expected, actual, label):
    diffs = compare(expected, actual, max_report=8)
    assert not diffs, f"{label}: RockLake differs from PostgreSQL:\n" + "\n".join(diffs)


def test_a_1_0_lake_meets_the_2_0_line(request, rocklake, duck, data_dir, tmp_path):
    if os.environ.get("ROCKLAKE_PG_REFERENCE") != "1":
        pytest.skip("compares with PostgreSQL: set ROCKLAKE_PG_REFERENCE=1")
    reference = PostgresBackend(request.getfixturevalue("pg_server"))
    rocklake.start()
    backends = {"postgres": reference, "rocklake": rocklake}
    data = {name: data_dir(f"{name}-data") for name in backends}
    attach = {name: b.attach_sql("l", data[name]) for name, b in backends.items()}

    v1 = {name: run_steps(duck(), CREATE_STEPS, attach[name]) for name in backends}
    failed = [f"{r.name}: {r.error}" for r in v1["postgres"] if not r.ok]
    assert not failed, "DuckDB 1.5.5 fails on PostgreSQL:\n" + "\n".join(failed)
    assert v1["postgres"][-2].rows == [["1.0"]]
    assert_same(v1["postgres"], v1["rocklake"], "DuckDB 1.5.5 makes a 1.0 lake")

    # Before the migration: both clients on the 1.0 lake.
    before = [Step("attach", "{attach}", returns_rows=False),
              Step("read", "SELECT count(*) FROM l.s1.t2"),
              Step("write", "INSERT INTO l.s1.t2 VALUES (9001, 'dev', false)"),
              Step("detach", "DETACH l", returns_rows=False)]
    for name in backends:
        (tmp_path / f"dev-{name}").mkdir()
    unmigrated = {name: run_dev(before, attach[name], tmp_path / f"dev-{name}" / "before.json")
                  for name in backends}
    assert_same(unmigrated["postgres"], unmigrated["rocklake"], "the 2.0 line on a 1.0 lake")
    for r in unmigrated["rocklake"]:
        print(f"2.0 line on a 1.0 lake: {r.name}: {r.show()[:300]}")

    # The migration and what follows.
    dev = {name: run_dev(dev_steps(attach[name]), migrating(attach[name]),
                         tmp_path / f"dev-{name}" / "dev.json") for name in backends}
    assert_same(dev["postgres"], dev["rocklake"], "the 2.0 line migrates and goes on")
    version = {r.name: r for r in dev["postgres"]}["version"]
    assert version.ok and version.rows and version.rows[0][0].startswith("1.1"), version

    # DuckDB 1.5.5 on the migrated lake.
    after = [Step("attach", "{attach}", returns_rows=False),
             Step("read", "SELECT count(*) FROM l.s1.t2")]
    old = {name: run_steps(duck(), after, attach[name]) for name in backends}
    assert_same(old["postgres"], old["rocklake"], "DuckDB 1.5.5 on a migrated lake")
    for r in dev["rocklake"][:4] + old["rocklake"]:
        print(f"{r.name}: {r.show()[:300]}")
    assert not old["postgres"][0].ok, "DuckDB 1.5.5 attached a 1.1 lake"
