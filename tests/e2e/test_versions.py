"""A lake's life across DuckDB versions: DuckDB 1.4 LTS creates a DuckLake 0.3
catalog and works on it, DuckDB 1.5.5 migrates it (AUTOMATIC_MIGRATION) to
1.0 and goes on, on RockLake and on the reference catalogs (a DuckDB file and,
with ROCKLAKE_PG_REFERENCE=1, a real PostgreSQL 15), with equal results at
every step: every snapshot read back by time travel, writes and maintenance
after the migration. Against PostgreSQL the migrated catalog tables must also
have the same columns, and RockLake must keep every catalog table under its
own key tag (none in generic rows).

DuckDB 1.4.4 runs in its own Python environment (.venv-duckdb-1.4.4, made by
scripts/setup-python.sh), since one process loads one DuckDB version.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO_ROOT, PostgresBackend, RockLakeBackend, ROCKLAKE_BIN
from workload import EXTRAS, PART1, Step, StepResult, compare, run_steps

OLD_VENV = pathlib.Path(os.environ.get("ROCKLAKE_DUCKDB_1_4_VENV",
                                       REPO_ROOT / ".venv-duckdb-1.4.4"))
OLD_PYTHON = OLD_VENV / "bin" / "python"
OLD_EXTENSIONS = OLD_VENV / "duckdb-ext"

# DuckDB 1.4.4 creates the catalog and runs the workload's first part and the
# catalog extras (comments, partitioning, inlining, maintenance, transactions)
# on it, without detaching at the end of the first part.
OLD_STEPS: list[Step] = (
    [s for s in PART1 if s.name != "detach"]
    + [Step("old_" + s.name, s.sql, s.returns_rows, s.ordered)
       for s in EXTRAS if s.name not in ("attach", "detach", "reattach", "final_detach")
       and "macro" not in s.name]  # DuckLake 0.3 has no macros
    + [Step("old_version", "SELECT value FROM l.options() WHERE option_name = 'version'"),
       Step("old_detach", "DETACH l", returns_rows=False)]
)

TABLES = ["s1.t", "s1.t2", "s1.gone", "events"]
LAST_OLD_SNAPSHOT = 40  # beyond the last snapshot the old steps make

# Runs steps with DuckDB 1.4.4. argv: extension dir, steps JSON, attach SQL, output file.
OLD_CHILD = textwrap.dedent(
    """
    import json, pathlib, sys
    sys.path.insert(0, sys.argv[5])
    import duckdb
    from workload import Step, run_steps
    ext_dir, steps_json, attach, out = sys.argv[1:5]
    con = duckdb.connect(config={"extension_directory": ext_dir,
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": True})
    con.execute("LOAD ducklake; LOAD postgres_scanner;")
    steps = [Step(**s) for s in json.loads(steps_json)]
    results = run_steps(con, steps, attach)
    pathlib.Path(out).write_text(json.dumps([r.__dict__ for r in results], default=str))
    """
)


def run_old(attach: str, out: pathlib.Path) -> list[StepResult]:
    steps = json.dumps([s.__dict__ for s in OLD_STEPS])
    proc = subprocess.run([str(OLD_PYTHON), "-c", OLD_CHILD, str(OLD_EXTENSIONS), steps,
                           attach, str(out), str(pathlib.Path(__file__).parent)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"DuckDB 1.4.4 run failed:\n{proc.stdout}\n{proc.stderr}"
    return [StepResult(**r) for r in json.loads(out.read_text())]


def migrating(attach: str) -> str:
    """The backend's ATTACH with AUTOMATIC_MIGRATION."""
    assert attach.rstrip().endswith(")"), attach
    return attach.rstrip()[:-1] + ", AUTOMATIC_MIGRATION TRUE)"


def new_steps() -> list[Step]:
    """What DuckDB 1.5.5 does after migrating: read every snapshot of every
    table back, write, maintain, and read again."""
    steps = [
        Step("migrate", "{attach}", returns_rows=False),
        Step("new_version", "SELECT value FROM l.options() WHERE option_name = 'version'"),
        Step("new_snapshots",
             "SELECT snapshot_id, schema_version, changes FROM ducklake_snapshots('l') "
             "ORDER BY snapshot_id", ordered=True),
    ]
    for snapshot in range(LAST_OLD_SNAPSHOT + 1):
        for table in TABLES:
            steps.append(Step(f"read_{table}_at_{snapshot}",
                              f"SELECT * FROM l.{table} AT (VERSION => {snapshot}) ORDER BY ALL",
                              ordered=True))
    steps += [
        Step("insert_after_migration",
             "INSERT INTO l.s1.t2 SELECT i::INTEGER, 'new' || i, i % 2 = 0 "
             "FROM range(10000, 10500) r(i)"),
        Step("inline_after_migration", "INSERT INTO l.events VALUES (7001, 'z', 0.5)"),
        Step("update_after_migration", "UPDATE l.s1.t2 SET label = 'changed' WHERE id < 8"),
        Step("delete_after_migration", "DELETE FROM l.events WHERE kind = 'a'"),
        Step("add_column_after_migration",
             "ALTER TABLE l.events ADD COLUMN note VARCHAR DEFAULT 'n/a'", returns_rows=False),
        Step("create_after_migration", "CREATE TABLE l.s1.fresh AS SELECT 1 AS one",
             returns_rows=False),
        Step("macro_after_migration", "CREATE MACRO l.twice(x) AS 2 * x", returns_rows=False),
        Step("use_macro", "SELECT l.twice(21)"),
        Step("read_t2", "SELECT * FROM l.s1.t2 ORDER BY ALL", ordered=True),
        Step("read_events", "SELECT * FROM l.events ORDER BY ALL", ordered=True),
        Step("flush_after_migration", "SELECT count(*) FROM ducklake_flush_inlined_data('l')"),
        Step("merge_after_migration", "SELECT count(*) FROM ducklake_merge_adjacent_files('l')"),
        Step("expire_after_migration",
             "SELECT count(*) FROM ducklake_expire_snapshots('l', "
             "older_than => now() + INTERVAL 1 DAY)"),
        Step("cleanup_after_migration",
             "SELECT count(*) FROM ducklake_cleanup_old_files('l', cleanup_all => true)"),
        # Not `SELECT *`: DuckLake 1.5.5 fails reading t2's old inlined rows
        # under the renamed column after these maintenance calls, on every
        # catalog (an internal error on PostgreSQL and RockLake alike, a
        # binder error on a DuckDB file), so only the unrenamed columns are read.
        Step("read_t2_after_maintenance", "SELECT count(*), sum(id), count(flag) FROM l.s1.t2"),
        Step("read_events_after_maintenance", "SELECT * FROM l.events ORDER BY ALL",
             ordered=True),
        Step("final_snapshots",
             "SELECT snapshot_id, schema_version, changes FROM ducklake_snapshots('l') "
             "ORDER BY snapshot_id", ordered=True),
        Step("final_detach", "DETACH l", returns_rows=False),
        Step("reattach", "{attach}", returns_rows=False),
        Step("reattach_events", "SELECT * FROM l.events ORDER BY ALL", ordered=True),
        Step("reattach_detach", "DETACH l", returns_rows=False),
    ]
    return steps


def catalog_columns(dsn: str) -> list[tuple]:
    """Every DuckLake catalog table's columns, as information_schema lists them."""
    import psycopg
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(
            "SELECT table_name, column_name, data_type, column_default, is_nullable "
            "FROM information_schema.columns WHERE table_schema = 'public' "
            "AND table_name LIKE 'ducklake%' AND table_name NOT LIKE 'ducklake_inlined%' "
            "ORDER BY table_name, ordinal_position").fetchall()


def assert_same(expected, actual, label):
    diffs = compare(expected, actual, max_report=8)
    assert not diffs, f"{label}: RockLake differs from the reference:\n" + "\n".join(diffs)


@pytest.mark.rocklake
def test_a_duckdb_1_4_catalog_migrates_with_duckdb_1_5_and_goes_on(
        reference, rocklake, duck, data_dir, tmp_path):
    if not OLD_PYTHON.exists():
        pytest.fail(f"{OLD_PYTHON} is missing: run scripts/setup-python.sh", pytrace=False)
    rocklake.start()
    backends = {"reference": reference, "rocklake": rocklake}
    data = {name: data_dir(f"{name}-data") for name in backends}
    old = {name: run_old(b.attach_sql("l", data[name]), tmp_path / f"old-{name}.json")
           for name, b in backends.items()}
    failed = [f"{r.name}: {r.error}" for r in old["reference"] if not r.ok]
    assert not failed, "DuckDB 1.4.4 steps fail on the reference:\n" + "\n".join(failed)
    assert old["reference"][-2].rows == [["0.3"]]
    assert_same(old["reference"], old["rocklake"], "DuckDB 1.4.4 on a new catalog")

    steps = new_steps()
    new = {name: run_steps(duck(), steps, migrating(b.attach_sql("l", data[name])))
           for name, b in backends.items()}
    failed = [f"{r.name}: {r.error}" for r in new["reference"]
              if not r.ok and not r.name.startswith("read_")]
    assert not failed, "DuckDB 1.5.5 steps fail on the reference:\n" + "\n".join(failed)
    assert new["reference"][1].rows == [["1.0"]]
    assert_same(new["reference"], new["rocklake"], "DuckDB 1.5.5 after the migration")

    if isinstance(reference, PostgresBackend):
        assert catalog_columns(rocklake.dsn()) == catalog_columns(
            reference.server.dsn(reference.db))

    rocklake.stop()
    keys = subprocess.run([ROCKLAKE_BIN, "keys", str(rocklake.catalog_dir),
                           "--tag", "generic_row"], capture_output=True, text=True, timeout=120)
    assert keys.returncode == 0, keys.stderr
    assert keys.stdout == "", f"catalog rows stored as generic rows:\n{keys.stdout[:2000]}"
