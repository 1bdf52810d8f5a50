#!/usr/bin/env bash
# Idempotent Python environment for the end-to-end tests.
#
# Creates <repo>/.venv, installs the pinned DuckDB wheels (DuckDB cannot
# download extensions at run time, so the extensions come from PyPI wheels),
# the SQLite scanner, pytest, pytz and the PostgreSQL clients the tests
# drive (psycopg, psycopg2, SQLAlchemy, pandas, ducklakepy, asyncpg,
# ducklake-dataframe), then lays the
# extensions out as a DuckDB extension directory at
# <repo>/.venv/duckdb-ext/v1.5.5/linux_amd64/.
#
# Also creates <repo>/.venv-duckdb-1.4.4 with DuckDB 1.4.4 (the LTS release,
# which creates DuckLake 0.3 catalogs) and its extensions, for the tests of the
# catalog migrations between DuckDB versions (one Python process loads one
# DuckDB version, so the old one lives in its own environment).
#
# Usage: scripts/setup-python.sh            (PYTHON=python3.11 to choose an interpreter)
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"

# setup_venv VENV DUCKDB_VERSION EXTRA_PINS...
setup_venv() {
VENV="$1"
DUCKDB_VERSION="$2"
shift 2
PINNED=(
  "duckdb==${DUCKDB_VERSION}"
  "duckdb-extension-ducklake==${DUCKDB_VERSION}"
  "duckdb-extension-postgres==${DUCKDB_VERSION}"
  "duckdb-extension-httpfs==${DUCKDB_VERSION}"
  # DuckLake's SQLite catalogs (sqlite:FILE), which `rocklake import` reads.
  "duckdb-extension-sqlite-scanner==${DUCKDB_VERSION}"
  # DuckDB returns TIMESTAMP WITH TIME ZONE values (ducklake_snapshots(), ...)
  # to Python as tz-aware datetimes, which needs pytz.
  "pytz==2026.6"
  "$@"
)

if [ ! -x "${VENV}/bin/python" ]; then
  echo "setup-python: creating ${VENV}"
  if ! "${PYTHON}" -m venv "${VENV}"; then
    echo "setup-python: 'python3 -m venv' failed; on Debian install python3-venv (apt-get install -y python3-venv)" >&2
    exit 1
  fi
fi

# Only talk to the package index when a pinned version is missing.
if ! "${VENV}/bin/python" - "${PINNED[@]}" <<'PY' 2>/dev/null
import re, sys, importlib.metadata as md
for pin in sys.argv[1:]:
    name, version = pin.split("==")
    if md.version(re.sub(r"\[.*\]", "", name)) != version:
        sys.exit(1)
PY
then
  echo "setup-python: installing ${PINNED[*]}"
  "${VENV}/bin/python" -m pip install --disable-pip-version-check -q "${PINNED[@]}"
else
  echo "setup-python: pinned packages already installed"
fi

# Build the extension directory from the installed wheels.
"${VENV}/bin/python" - "${VENV}/duckdb-ext" "${DUCKDB_VERSION}" <<'PY'
import importlib.util, os, pathlib, shutil, sys

ext_root = pathlib.Path(sys.argv[1])
version = sys.argv[2]
platform = "linux_amd64"
target = ext_root / f"v{version}" / platform
target.mkdir(parents=True, exist_ok=True)

# extension name in the wheel -> file name DuckDB looks for
wanted = {"ducklake": "ducklake", "postgres": "postgres_scanner", "httpfs": "httpfs",
          "sqlite_scanner": "sqlite_scanner"}
for name, dest_name in wanted.items():
    spec = importlib.util.find_spec(f"duckdb_extension_{name}")
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"setup-python: package duckdb_extension_{name} not importable")
    pkg_dir = pathlib.Path(list(spec.submodule_search_locations)[0])
    candidates = sorted(pkg_dir.glob(f"extensions/v{version}/*.duckdb_extension"))
    if not candidates:
        candidates = sorted(pkg_dir.rglob("*.duckdb_extension"))
    if not candidates:
        sys.exit(f"setup-python: no .duckdb_extension file under {pkg_dir}")
    src = candidates[0]
    dst = target / f"{dest_name}.duckdb_extension"
    if not dst.exists() or dst.stat().st_size != src.stat().st_size \
            or dst.stat().st_mtime < src.stat().st_mtime:
        shutil.copy2(src, dst)
        print(f"setup-python: {src.name} -> {dst.relative_to(ext_root.parent.parent)}")
print(f"setup-python: extension dir ready: {target}")
PY

# Smoke test: the extensions load without any download.
"${VENV}/bin/python" - "${VENV}/duckdb-ext" <<'PY'
import sys, duckdb
con = duckdb.connect(config={"extension_directory": sys.argv[1],
                             "autoinstall_known_extensions": False,
                             "autoload_known_extensions": True})
con.execute("LOAD ducklake; LOAD postgres_scanner;")
print("setup-python: duckdb", duckdb.__version__, "loads ducklake + postgres_scanner OK")
PY
}

# The PostgreSQL clients the end-to-end tests drive besides DuckDB:
# SQLAlchemy (with both psycopg drivers), pandas, ducklakepy (a DuckLake
# implementation over SQLAlchemy), asyncpg and ducklake-dataframe (another,
# used through its pandas front end, so without Polars).
setup_venv "${REPO_ROOT}/.venv" 1.5.5 "pytest==9.2.0" "psycopg[binary]==3.3.9" \
  "psycopg2-binary==2.9.13" "SQLAlchemy==2.0.58" "pandas==3.1.1" "pyarrow==26.0.1" \
  "ducklakepy==0.1.0.dev0" "asyncpg==0.32.0" "ducklake-dataframe==1.0.0"
setup_venv "${REPO_ROOT}/.venv-duckdb-1.4.4" 1.4.4
