#!/usr/bin/env bash
# A stand-in for the RockLake server binary, backed by a real PostgreSQL, to
# check the end-to-end harness itself (start, wait for port, restart, compare):
#
#   ROCKLAKE_BIN=scripts/pg-as-rocklake.sh .venv/bin/pytest tests/e2e -q -m rocklake
#
# Accepts the same command line as the tests use for RockLake:
#   pg-as-rocklake.sh serve CATALOG_DIR --listen HOST:PORT
# and runs PostgreSQL in the foreground until SIGTERM/SIGINT (fast shutdown).
# The cluster lives in ${TMPDIR:-/tmp}/pg-as-rocklake/<hash of CATALOG_DIR> (the
# server runs as the "postgres" OS user, which may not be able to enter
# CATALOG_DIR); a restart with the same CATALOG_DIR finds the same catalog.
# `pg-as-rocklake.sh clean` removes all such clusters.
set -euo pipefail
ROOT="${TMPDIR:-/tmp}/pg-as-rocklake"

if [ "${1:-}" = "clean" ]; then rm -rf "${ROOT}"; exit 0; fi
if [ "${1:-}" != "serve" ] || [ $# -lt 4 ] || [ "$3" != "--listen" ]; then
  echo "usage: $0 serve CATALOG_DIR --listen HOST:PORT" >&2; exit 2
fi
CATALOG_DIR="$2"; HOST="${4%:*}"; PORT="${4##*:}"
mkdir -p "${CATALOG_DIR}"
HASH="$(cd "${CATALOG_DIR}" && pwd | sha1sum | cut -c1-16)"
mkdir -p "${ROOT}"; chmod 755 "${ROOT}"
PGDATA_DIR="${ROOT}/${HASH}"
echo "${PGDATA_DIR}" > "${CATALOG_DIR}/pg-as-rocklake.location"

PGBIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r | head -n1)"
if [ -z "${PGBIN}" ]; then echo "pg-as-rocklake: PostgreSQL not installed" >&2; exit 1; fi
if [ "$(id -u)" -eq 0 ]; then RUNAS=(runuser -u postgres --); else RUNAS=(); fi
ME="$(id -un)"

if [ ! -f "${PGDATA_DIR}/PG_VERSION" ]; then
  mkdir -p "${PGDATA_DIR}"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "${PGDATA_DIR}"; fi
  chmod 700 "${PGDATA_DIR}"
  "${RUNAS[@]}" "${PGBIN}/initdb" -D "${PGDATA_DIR}" -U postgres -A trust -E UTF8 --locale=C >/dev/null
  # Create database "lake" and a role for the invoking OS user (the tests'
  # connection string names no user) before the TCP port opens.
  "${RUNAS[@]}" "${PGBIN}/pg_ctl" -D "${PGDATA_DIR}" -w -l "${PGDATA_DIR}/init.log" \
    -o "-c listen_addresses='' -k ${PGDATA_DIR} -p ${PORT}" start >/dev/null
  "${RUNAS[@]}" "${PGBIN}/psql" -q -h "${PGDATA_DIR}" -p "${PORT}" -U postgres -d postgres \
    -c "CREATE DATABASE lake" >/dev/null
  if [ "${ME}" != postgres ]; then
    "${RUNAS[@]}" "${PGBIN}/psql" -q -h "${PGDATA_DIR}" -p "${PORT}" -U postgres -d postgres \
      -c "CREATE ROLE \"${ME}\" SUPERUSER LOGIN" >/dev/null
  fi
  "${RUNAS[@]}" "${PGBIN}/pg_ctl" -D "${PGDATA_DIR}" -m fast -w stop >/dev/null
fi

"${RUNAS[@]}" "${PGBIN}/postgres" -D "${PGDATA_DIR}" -p "${PORT}" -k "${PGDATA_DIR}" \
  -c listen_addresses="${HOST}" -c fsync=off -c synchronous_commit=off -c full_page_writes=off &
PG_PID=$!
stop() { "${RUNAS[@]}" "${PGBIN}/pg_ctl" -D "${PGDATA_DIR}" -m fast -w stop >/dev/null 2>&1 || kill "${PG_PID}" 2>/dev/null || true; }
trap 'stop; wait ${PG_PID} 2>/dev/null; exit 0' TERM INT
wait "${PG_PID}"
