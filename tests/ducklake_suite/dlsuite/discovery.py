"""Finding the DuckLake checkout and the test files to run."""

from __future__ import annotations

import fnmatch
import os
import pathlib


def find_root(tests_dir):
    """(checkout root, directory to search): `tests_dir` is a checkout or a directory below its test/sql."""
    p = pathlib.Path(tests_dir).resolve()
    if (p / "test" / "sql").is_dir():
        return p, p / "test" / "sql"
    parts = p.parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i - 1:i + 1] == ("test", "sql"):
            return pathlib.Path(*parts[:i - 1]), p
    raise SystemExit(f"{tests_dir}: not a DuckLake checkout (no test/sql) nor a directory under test/sql")


def discover(root, start, patterns, include_slow) -> list[str]:
    """Test files under `start` (relative to `root`, sorted) matching any of the glob `patterns`."""
    exts = (".test", ".test_slow") if include_slow else (".test",)
    files = []
    for dirpath, _dirs, names in os.walk(start):
        for n in names:
            if n.endswith(exts):
                rel = os.path.relpath(os.path.join(dirpath, n), root).replace(os.sep, "/")
                if not patterns or any(fnmatch.fnmatch(rel, pat) for pat in patterns):
                    files.append(rel)
    return sorted(files)
