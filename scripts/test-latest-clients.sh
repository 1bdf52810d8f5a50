#!/usr/bin/env bash
# The client tests with the newest releases of the clients users install
# today, not the versions scripts/test.sh pins for repeatable runs:
# SQLAlchemy, psycopg, psycopg2, asyncpg, pandas, polars, pyarrow,
# ducklakepy, ducklake-dataframe (PyPI) and node-postgres (npm). DuckDB stays
# at the pinned release (its extensions come from the pinned wheels).
#
# Creates <repo>/.venv-latest and a node-postgres copy under it, prints the
# versions it tested, and runs the client tests against a real PostgreSQL 15
# reference and the server built by cargo.
#
# Usage: scripts/test-latest-clients.sh [pytest args...]
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${REPO_ROOT}"
PYTHON="${PYTHON:-python3}"
VENV="${REPO_ROOT}/.venv-latest"

# The pinned environment first: it lays out the DuckDB extension directory.
scripts/setup-python.sh

if [ ! -x "${VENV}/bin/python" ]; then
  "${PYTHON}" -m venv "${VENV}"
fi
"${VENV}/bin/python" -m pip install --disable-pip-version-check -q \
  "duckdb==1.5.5" "duckdb-extension-ducklake==1.5.5" "duckdb-extension-postgres==1.5.5" \
  "duckdb-extension-httpfs==1.5.5" "pytz" "pytest"
"${VENV}/bin/python" -m pip install --disable-pip-version-check -q --upgrade \
  "psycopg[binary]" psycopg2-binary SQLAlchemy pandas pyarrow polars asyncpg ducklake-dataframe
"${VENV}/bin/python" -m pip install --disable-pip-version-check -q --upgrade --pre ducklakepy

NODE_DIR="${VENV}/node"
mkdir -p "${NODE_DIR}"
cp tests/e2e/node/pg_steps.js "${NODE_DIR}/"
(cd "${NODE_DIR}" && { [ -f package.json ] || npm init -y >/dev/null; } \
  && npm install --no-audit --no-fund --silent pg@latest)

echo "test-latest-clients: versions under test"
"${VENV}/bin/python" - <<'PY'
import importlib.metadata as md
for name in ["SQLAlchemy", "psycopg", "psycopg2-binary", "asyncpg", "pandas", "polars",
             "pyarrow", "ducklakepy", "ducklake-dataframe", "duckdb"]:
    print(f"  {name} {md.version(name)}")
PY
echo "  node-postgres $(node -p "require('${NODE_DIR}/node_modules/pg/package.json').version")"

cargo build --bin rocklake
export ROCKLAKE_PG_REFERENCE=1
export ROCKLAKE_NODE_DIR="${NODE_DIR}"
export DUCKDB_EXTENSION_DIR="${REPO_ROOT}/.venv/duckdb-ext"
"${VENV}/bin/pytest" -q \
  tests/e2e/test_pg_clients.py tests/e2e/test_sqlalchemy.py tests/e2e/test_asyncpg.py \
  tests/e2e/test_ducklakepy.py tests/e2e/test_ducklake_dataframe.py tests/e2e/test_node_pg.py \
  tests/e2e/test_psql.py "$@"
