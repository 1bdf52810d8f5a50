"""Sanity checks of the PostgreSQL capture fixtures (tests/fixtures/pg15-capture)."""

from __future__ import annotations

import json
import pathlib

import pytest

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "pg15-capture"
SCENARIOS = ["workload", "extras", "concurrent"]


def load(name: str) -> list[dict]:
    path = FIXTURES / name
    assert path.is_file(), f"missing fixture {path} (regenerate with scripts/capture-pg.py)"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_statements_well_formed(scenario):
    rows = load(f"{scenario}.jsonl")
    assert rows, "no statements captured"
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    for r in rows:
        assert r["scenario"] == scenario
        assert r["kind"] in ("simple", "parse"), r
        assert r["sql"].strip()
        assert "/tmp/" not in r["sql"], "machine path leaked into a fixture"
    # every scenario attaches (version probe) and commits DuckLake snapshots
    assert any(r["sql"].startswith("SELECT version()") for r in rows)
    assert any("INSERT INTO \"public\".ducklake_snapshot VALUES" in r["sql"] for r in rows)


def test_concurrent_conflicts_recorded():
    errors = load("concurrent.errors.jsonl")
    pk = [e for e in errors if e["sqlstate"] == "23505"]
    assert pk, "the concurrent capture recorded no 23505 conflict"
    for e in pk:
        assert e["message"] == 'duplicate key value violates unique constraint "ducklake_snapshot_pkey"'
        assert e["detail"].startswith("Key (snapshot_id)=(")
        assert e["statement"].startswith('INSERT INTO "public".ducklake_snapshot VALUES')
    stmts = load("concurrent.jsonl")
    by_seq = {s["seq"]: s for s in stmts}
    for e in pk:
        # the failing statement is in the same session, and ROLLBACK follows
        assert by_seq[e["seq"]]["sql"] == e["statement"]
        later = [s for s in stmts if s["seq"] > e["seq"] and s["session"] == e["session"]]
        assert later and later[0]["sql"] == "ROLLBACK"
    results = load("concurrent.results.jsonl")
    commits = [r for r in results if r["step"].startswith("concurrent-")]
    assert len(commits) == 40 and all(r["ok"] for r in commits)


def test_workload_results_match_reference_values():
    results = {r["step"]: r for r in load("workload.results.jsonl")}
    assert all(r["ok"] for r in results.values())
    assert results["count_after_inserts"]["rows"] == [[5003, 17497506, 1, 5999, 5002]]
    assert results["reattach_count"]["rows"] == [[4903, 16902560, 1]]


# ---------------------------------------------------------------------------
# Replay the captured statements (no DuckDB involved)
# ---------------------------------------------------------------------------

def _replay_module():
    import importlib.util
    path = FIXTURES.parent.parent.parent / "scripts" / "replay-capture.py"
    spec = importlib.util.spec_from_file_location("replay_capture", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.reference
@pytest.mark.parametrize("scenario", ["workload", "extras"])
def test_replay_on_postgres(pg_server, scenario):
    """The capture replays cleanly on real PostgreSQL (ROCKLAKE_PG_REFERENCE=1)."""
    replay = _replay_module()
    db = pg_server.new_database("replay")
    report = replay.replay(scenario, pg_server.dsn(db))
    assert not report["unexpected"], replay.format_report(report)


@pytest.mark.rocklake
@pytest.mark.parametrize("scenario", ["workload", "extras"])
def test_rocklake_accepts_captured_statements(rocklake, scenario):
    """Every message DuckDB sent to PostgreSQL 15, replayed in order on a fresh RockLake."""
    replay = _replay_module()
    rocklake.start()
    report = replay.replay(scenario, rocklake.dsn())
    if report["unexpected"]:
        pytest.fail(f"{rocklake.describe()}\n{replay.format_report(report)}\n"
                    f"--- server output (last lines) ---\n{rocklake.log_tail()}", pytrace=False)
