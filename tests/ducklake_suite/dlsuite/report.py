"""What the run prints and writes: a progress line per file, the summary of the
files that did not pass, and the JSON report."""

from __future__ import annotations

import json

from .errors import truncate

OUTCOMES = ("pass", "fail", "skip", "unsupported", "timeout", "error")
NOT_PASSED = ("fail", "timeout", "error", "unsupported")


def progress_line(entry: dict, done: int, total: int) -> str:
    """`[done/total] OUTCOME file:line (seconds) - message` for a finished file."""
    where = f":{entry['line']}" if entry.get("line") else ""
    msg = f" - {truncate(entry['message'], 160)}" if entry["outcome"] not in ("pass",) and \
        entry.get("message") else ""
    return (f"[{done}/{total}] {entry['outcome'].upper():<11} {entry['file']}{where} "
            f"({entry['seconds']:.1f}s){msg}")


def count_outcomes(results: list[dict]) -> dict:
    """Number of files per outcome."""
    counts = {o: 0 for o in OUTCOMES}
    for r in results:
        counts[r["outcome"]] += 1
    return counts


def print_summary(backend_name: str, results: list[dict], counts: dict, wall: float) -> list[dict]:
    """Print the counts and every file that did not pass; returns those files."""
    print()
    print(f"backend {backend_name}: {len(results)} files in {wall:.0f}s: "
          + ", ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts[o] or o != "error"))
    bad = [r for r in results if r["outcome"] in NOT_PASSED]
    for r in bad:
        where = f":{r['line']}" if r.get("line") else ""
        print(f"  {r['outcome'].upper():<11} {r['file']}{where}: {truncate(r.get('message') or '', 300)}")
    return bad


def write_report(path, *, backend, backend_description, tests, config, jobs, timeout, wall, counts, results):
    """The JSON report: run parameters, counts and one entry per file."""
    report = {
        "backend": backend,
        "backend_description": backend_description,
        "tests": tests,
        "config": config,
        "jobs": jobs,
        "timeout": timeout,
        "wall_seconds": round(wall, 1),
        "counts": counts,
        "files": results,
    }
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
    print(f"report: {path}")
