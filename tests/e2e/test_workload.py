"""End-to-end: the same DuckLake workload against a reference catalog and RockLake.

Run with `.venv/bin/pytest tests/e2e -q` after `scripts/setup-python.sh`.
`-m "not rocklake"` runs only the reference (harness) tests.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from conftest import RockLakeS3Backend
from workload import EXTRAS, PART1, PART2, WORKLOAD, by_name, compare, run_steps

# Every RockLake test here runs twice: catalog in a local directory, and catalog
# plus data files in an S3 bucket (the session's S3 emulator).
pytestmark = pytest.mark.storages("local", "s3")

def dump(results, path: pathlib.Path):
    path.write_text("\n".join(json.dumps({"name": r.name, "sql": r.sql, "ok": r.ok,
                                          "rows": r.rows, "error": r.error,
                                          "seconds": round(r.seconds, 3)}, default=str)
                              for r in results) + "\n")
    return path


def errors_of(results):
    return [f"{r.name}: {r.sql}\n    -> {r.error}" for r in results if not r.ok]


def run_reference(reference, duck, data_dir, steps):
    return run_steps(duck(), steps, reference.attach_sql("l", data_dir("ref-data")))


def assert_same(expected, actual, backend, tmp_path, label):
    diffs = compare(expected, actual)
    if not diffs:
        return
    exp_file = dump(expected, tmp_path / f"{label}-reference.jsonl")
    act_file = dump(actual, tmp_path / f"{label}-{backend.name}.jsonl")
    failed_first = next((r for r in actual if not r.ok), None)
    msg = [f"{backend.describe()} differs from the reference in "
           f"{sum(1 for e, a in zip(expected, actual) if e.outcome() != a.outcome())} of "
           f"{len(expected)} steps of {label}."]
    if failed_first is not None:
        msg.append(f"First failing step on {backend.name}: {failed_first.name!r}: "
                   f"{(failed_first.error or '').splitlines()[0] if failed_first.error else ''}")
    msg.append("Differences:")
    msg.extend(diffs)
    if hasattr(backend, "log_tail"):
        msg.append(f"--- server output (last lines) ---\n{backend.log_tail()}")
    msg.append(f"full results: {exp_file} and {act_file}")
    pytest.fail("\n".join(msg), pytrace=False)


# ---------------------------------------------------------------------------
# The harness itself, on the reference backends only
# ---------------------------------------------------------------------------

@pytest.mark.reference
def test_reference_workload_values(reference, duck, data_dir):
    data = data_dir("ref-data")
    res = run_steps(duck(), WORKLOAD, reference.attach_sql("l", data))
    assert not errors_of(res), "\n".join(errors_of(res))
    r = {k: v.rows for k, v in by_name(res).items()}

    assert r["insert_small_inlined"] == [[3]]
    assert r["select_inlined"] == [[1, "one", 1.5], [2, "two", 2.5], [3, "three", None]]
    assert r["insert_large_parquet"] == [[5000]]
    assert r["count_after_inserts"] == [[5003, 17497506, 1, 5999, 5002]]
    assert r["select_filtered"][3] == [2000, "row2000", 1000.0]
    assert len(r["select_filtered"]) == 8
    assert r["select_view"] == [[1, "one"], [2, "two"], [3, "three"]]
    assert r["update"] == [[2]]
    assert r["select_updated"] == [[1, 1.5], [2, 25.0], [1500, 7500.0], [1501, 750.5]]
    assert r["delete"] == [[101]]
    assert r["count_after_delete"] == [[4902, 16902553, 5899, 8458051.5]]
    assert r["select_after_alter"] == [[1, "one", None], [2, "two", None], [7, "seven", False],
                                       [1000, "row1000", None]]
    assert r["describe_after_alter"] == [["id", "INTEGER"], ["label", "VARCHAR"],
                                         ["flag", "BOOLEAN"]]
    assert r["list_tables"] == [["s1", "t2"]]
    assert r["list_views"] == [["s1", "v"], ["s1", "v2"]]
    # time travel sees the table under its old name and the pre-update values
    assert r["time_travel_v4"] == r["select_inlined"]
    assert r["time_travel_v5"] == [[5003, 17497506, 8748754.0]]
    assert r["time_travel_dropped_table"] == [[42]]
    snaps = r["snapshots"]
    assert [s[0] for s in snaps] == list(range(16))
    assert snaps[0] == [0, 0, {"schemas_created": ["main"]}]
    assert snaps[2] == [2, 2, {"tables_created": ["s1.t"]}]
    assert snaps[5] == [5, 3, {"tables_inserted_into": ["2"]}]
    assert r["current_snapshot"] == [[15]]
    # after DETACH + ATTACH
    assert r["reattach_count"] == r["select_renamed"] == [[4903, 16902560, 1]]
    assert r["reattach_view"] == [[7, "seven"]]
    assert r["reattach_time_travel"] == [[5003]]
    assert r["reattach_count_after_insert"] == [[4904, 16902568]]
    assert [s[0] for s in r["reattach_snapshots"]] == [14, 15, 16]
    # the large insert went to Parquet in DATA_PATH
    assert list(data.rglob("*.parquet")), "no Parquet file written under DATA_PATH"


@pytest.mark.reference
def test_reference_extras_values(reference, duck, data_dir):
    res = run_steps(duck(), EXTRAS, reference.attach_sql("l", data_dir("ref-data")))
    assert not errors_of(res), "\n".join(errors_of(res))
    r = {k: v.rows for k, v in by_name(res).items()}
    assert r["read_comments"] == [["event log"]]
    assert r["use_scalar_macro"] == [[42]]
    assert r["use_table_macro"] == [[1], [3]]
    assert r["partitioned_filter"] == [["a", 502, 299504.0], ["b", 501, 300002.0],
                                       ["c", 1000, 2499500.0]]
    assert r["count_after_flush"] == r["count_after_merge"] == [[2003, 3099006]]
    assert r["merge_adjacent"] == [[1]]
    assert r["delete_some"] == [[200]]
    assert r["count_after_maintenance"] == [[1803, 2790006, 2790006.0]]
    assert r["tx_read_own_writes"] == [[9001, 11.0]]
    assert r["tx_result"] == [[9001, "tx", 11.0]]
    # the committed transaction is one snapshot; the rolled-back one left none
    assert r["tx_snapshots"] == [[15, {"inlined_insert": ["1"]}]]
    assert r["reattach_count"] == [["a", 402], ["b", 501], ["c", 900], ["tx", 1]]
    assert r["reattach_macro"] == [[2]]


@pytest.mark.reference
def test_reference_reattach_from_new_instance(reference, duck, data_dir):
    """Part 2 from a second DuckDB instance sees what part 1 wrote."""
    data = data_dir("ref-data")
    attach = reference.attach_sql("l", data)
    part1 = run_steps(duck(), PART1, attach)
    part2 = run_steps(duck(), PART2, attach)
    assert not errors_of(part1 + part2), "\n".join(errors_of(part1 + part2))
    assert by_name(part2)["reattach_count"].rows == [[4903, 16902560, 1]]


# ---------------------------------------------------------------------------
# RockLake against the reference
# ---------------------------------------------------------------------------

def assert_stored_in_bucket(backend: RockLakeS3Backend, local_data: pathlib.Path):
    """The SlateDB catalog and DuckDB's Parquet files are objects in the
    emulator's bucket (files under its root), and nothing went to local disk."""
    # The served root is s3://BUCKET/lake; database `lake` is a catalog under it.
    catalog = backend.bucket_dir / "lake" / "databases" / "lake" / "catalog"
    assert list((catalog / "manifest").glob("*.manifest")), f"no SlateDB manifest under {catalog}"
    assert list((catalog / "wal").glob("*.sst")), f"no SlateDB WAL under {catalog}"
    parquet = list((backend.bucket_dir / "data" / local_data.name).rglob("*.parquet"))
    assert parquet, f"no Parquet file under s3://{backend.bucket}/data/{local_data.name}/"
    assert not any(local_data.iterdir()), "data files were written to the local directory"
    assert not any(backend.catalog_dir.iterdir()), "catalog files were written locally"


@pytest.mark.rocklake
def test_rocklake_workload_matches_reference(reference, rocklake, duck, data_dir, tmp_path):
    expected = run_reference(reference, duck, data_dir, WORKLOAD)
    assert not errors_of(expected), "reference failed:\n" + "\n".join(errors_of(expected))
    rocklake.start()
    data = data_dir("rocklake-data")
    actual = rocklake.run(duck(), WORKLOAD, rocklake.attach_sql("l", data))
    assert_same(expected, actual, rocklake, tmp_path, "workload")
    if isinstance(rocklake, RockLakeS3Backend):
        assert_stored_in_bucket(rocklake, data)


@pytest.mark.rocklake
def test_rocklake_extras_match_reference(reference, rocklake, duck, data_dir, tmp_path):
    expected = run_reference(reference, duck, data_dir, EXTRAS)
    assert not errors_of(expected), "reference failed:\n" + "\n".join(errors_of(expected))
    rocklake.start()
    actual = rocklake.run(duck(), EXTRAS, rocklake.attach_sql("l", data_dir("rocklake-data")))
    assert_same(expected, actual, rocklake, tmp_path, "extras")


@pytest.mark.rocklake
def test_rocklake_restart_keeps_catalog(reference, rocklake, duck, data_dir, tmp_path):
    """Part 1, restart the server on the same directory, part 2 from a new DuckDB."""
    ref_data = data_dir("ref-data")
    ref_attach = reference.attach_sql("l", ref_data)
    expected = run_steps(duck(), PART1, ref_attach) + run_steps(duck(), PART2, ref_attach)
    assert not errors_of(expected), "reference failed:\n" + "\n".join(errors_of(expected))

    rocklake.start()
    attach = rocklake.attach_sql("l", data_dir("rocklake-data"))
    con1 = duck()
    part1 = rocklake.run(con1, PART1, attach)
    con1.close()
    assert_same(expected[:len(PART1)], part1, rocklake, tmp_path, "restart-part1")

    rocklake.restart()
    part2 = rocklake.run(duck(), PART2, attach)
    assert_same(expected[len(PART1):], part2, rocklake, tmp_path, "restart-part2")
    assert by_name(part2)["reattach_count"].rows == [[4903, 16902560, 1]]
