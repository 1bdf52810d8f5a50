"""DuckLake feature conformance: RockLake against the reference catalogs.

Every group of conformance.GROUPS runs on a fresh catalog on each backend: a
DuckDB-file reference, a real PostgreSQL reference (with
ROCKLAKE_PG_REFERENCE=1) and RockLake.  RockLake must give the same outcome as
every reference at every step (rows, or the class of the error).

The DuckDB-file catalog is not always the same as PostgreSQL: the steps in
FILE_CATALOG_DIFFERS give a different outcome there for reasons of DuckDB's
own catalog (documented in docs/conformance.md).  For them RockLake is held to
PostgreSQL's outcome only.

RockLake runs each group once, whatever the number of references.
"""

from __future__ import annotations

import os

import pytest

from conformance import GROUPS
from conftest import DuckDBFileBackend, PostgresBackend
from test_workload import assert_same, errors_of
from workload import compare, run_steps

# Every RockLake test here runs twice: catalog in a local directory, and catalog
# plus data files in an S3 bucket (the session's S3 emulator).
pytestmark = pytest.mark.storages("local", "s3")

# (group, step) -> why the DuckDB-file catalog differs from PostgreSQL there.
FILE_CATALOG_DIFFERS: dict[tuple[str, str], str] = {
    ("types", "time_ns_fails"):
        "a DuckDB file accepts a TIME_NS column in the inlined-data table; "
        "PostgreSQL has no type time_ns, so the commit fails there",
}

# Steps expected to fail on every backend (stock DuckDB/DuckLake behaviour).
def _expected_failures(steps) -> set[str]:
    return {s.name for s in steps if s.name.endswith("_fails")}


def _references(tmp_path, request):
    refs = [DuckDBFileBackend(tmp_path / "ref-file")]
    if os.environ.get("ROCKLAKE_PG_REFERENCE") == "1":
        refs.append(PostgresBackend(request.getfixturevalue("pg_server")))
    return refs


def _without(results, group, skip):
    return [r for r in results if (group, r.name) not in skip]


@pytest.mark.rocklake
@pytest.mark.parametrize("group", list(GROUPS))
def test_conformance(group, rocklake, duck, data_dir, tmp_path, request):
    steps = GROUPS[group]
    expected_fail = _expected_failures(steps)
    refs = _references(tmp_path, request)
    runs = {}
    for ref in refs:
        res = run_steps(duck(), steps, ref.attach_sql("l", data_dir(f"{ref.name}-data")))
        differs = {step for g, step in FILE_CATALOG_DIFFERS if g == group
                   and ref.name == "duckdb-file"}
        unexpected = [r for r in res if not r.ok and r.name not in expected_fail | differs]
        missing = [r.name for r in res if r.ok and r.name in expected_fail - differs]
        assert not unexpected and not missing, (
            f"reference {ref.name} of group {group}: unexpected errors:\n"
            + "\n".join(errors_of(unexpected)) + f"\nsteps that should fail but passed: {missing}")
        runs[ref.name] = res
    rocklake.start()
    actual = rocklake.run(duck(), steps, rocklake.attach_sql("l", data_dir("rocklake-data")),
                          max_consecutive_errors=None)

    if "postgres" in runs:
        # the file catalog may differ only where documented
        file_vs_pg = compare(_without(runs["duckdb-file"], group, FILE_CATALOG_DIFFERS),
                             _without(runs["postgres"], group, FILE_CATALOG_DIFFERS))
        assert not file_vs_pg, ("the DuckDB-file and PostgreSQL references differ in "
                                f"undocumented steps of {group}:\n" + "\n".join(file_vs_pg))
    for name, res in runs.items():
        skip = FILE_CATALOG_DIFFERS if name == "duckdb-file" else {}
        exp = _without(res, group, skip)
        act = _without(actual, group, skip)
        backend_label = f"{group}-vs-{name}"
        assert_same(exp, act, rocklake, tmp_path, backend_label)
