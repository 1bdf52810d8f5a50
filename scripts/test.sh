#!/usr/bin/env bash
# Runs RockLake's whole test suite: formatting and lints, the Rust unit,
# property and integration tests (real SlateDB on temporary directories), and
# the end-to-end tests driving stock DuckDB against the server and against
# reference DuckLake catalogs (a DuckDB file and a real PostgreSQL 15).
#
# Idempotent; installs what it needs (Python venv with the DuckDB wheels,
# the s3s-fs S3 emulator into .tools/, PostgreSQL from Debian for the
# reference). Set ROCKLAKE_PG_REFERENCE=0 to skip the PostgreSQL reference.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "toolchain components"
rustup component add rustfmt clippy >/dev/null 2>&1 || true

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

# The docs of every item, private ones too (the crates are read by their
# developers more than called by others): a dead intra-doc link fails.
step "cargo doc"
RUSTDOCFLAGS="-D warnings -A rustdoc::private_intra_doc_links" \
    cargo doc --workspace --no-deps --document-private-items

step "cargo test"
cargo test --workspace

step "python environment with DuckDB 1.5.5 wheels"
scripts/setup-python.sh

export ROCKLAKE_PG_REFERENCE="${ROCKLAKE_PG_REFERENCE:-1}"
if [ "$ROCKLAKE_PG_REFERENCE" = "1" ] && [ ! -x /usr/lib/postgresql/15/bin/postgres ]; then
  step "PostgreSQL 15 for the reference catalog"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi

if ! command -v prometheus >/dev/null; then
  step "Prometheus, which scrapes the metrics endpoint in the end-to-end tests"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >/dev/null
fi

S3S_FS_VERSION="0.14.1"  # 0.17 needs rustc 1.96
if [ "$(.tools/bin/s3s-fs --version 2>/dev/null || true)" != "s3s-fs ${S3S_FS_VERSION}" ]; then
  step "S3 emulator for the end-to-end tests (s3s-fs ${S3S_FS_VERSION} into .tools/)"
  cargo install --locked --root .tools "s3s-fs@${S3S_FS_VERSION}" --features binary
fi

if ! command -v chromium >/dev/null; then
  step "Chromium, which loads the status page in the end-to-end tests"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

if ! command -v node >/dev/null; then
  step "Node.js, for node-postgres in the end-to-end tests"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
if [ ! -d tests/e2e/node/node_modules/pg ]; then
  step "node-postgres for the end-to-end tests (npm, tests/e2e/node)"
  (cd tests/e2e/node && npm ci --no-audit --no-fund --silent)
fi

if ! command -v javac >/dev/null || [ ! -f /usr/share/java/postgresql.jar ]; then
  step "a JDK and pgJDBC, for the JDBC client in the end-to-end tests"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jdk-headless libpostgresql-jdbc-java >/dev/null
fi

step "build the server for the end-to-end tests"
cargo build -p rocklake

step "end-to-end tests (pytest, real DuckDB)"
.venv/bin/pytest tests/e2e -q
