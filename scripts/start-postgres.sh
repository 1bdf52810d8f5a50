#!/usr/bin/env bash
# Idempotent throw-away PostgreSQL for reference runs and wire captures.
#
# Usage: scripts/start-postgres.sh DATADIR PORT [postgres -c options...]
#   e.g. scripts/start-postgres.sh /tmp/pg-ref 55432 -c log_statement=all
#
# - installs PostgreSQL from Debian (apt-get) when no server binaries are found
#   (needs root);
# - initdb into DATADIR (trust auth, superuser "postgres", UTF8, C locale) if
#   it is not a cluster yet;
# - starts the server on 127.0.0.1:PORT (unix socket in DATADIR) unless it
#   is already running; the log goes to DATADIR/server.log;
# - creates the databases named in $PG_CREATE_DBS (space separated, default "lake").
# PostgreSQL refuses to run as root: when run as root, the server runs as the
# "postgres" OS user (created by the Debian package) via runuser.
# Stop it with scripts/stop-postgres.sh DATADIR.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 DATADIR PORT [-c name=value ...]" >&2
  exit 2
fi
DATADIR="$1"; PORT="$2"; shift 2
EXTRA_OPTS=("$@")
CREATE_DBS="${PG_CREATE_DBS-lake}"

find_pgbin() {
  if [ -n "${PGBIN:-}" ] && [ -x "${PGBIN}/initdb" ]; then echo "${PGBIN}"; return 0; fi
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  return 1
}

if ! PGBIN="$(find_pgbin)"; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "start-postgres: PostgreSQL not installed and not root (apt-get install -y postgresql)" >&2
    exit 1
  fi
  echo "start-postgres: installing postgresql from apt"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q postgresql >/dev/null
  # The Debian package may start its own cluster on 5432; we do not need it.
  if command -v pg_ctlcluster >/dev/null 2>&1; then
    for c in $(ls /etc/postgresql 2>/dev/null); do pg_ctlcluster "$c" main stop 2>/dev/null || true; done
  fi
  PGBIN="$(find_pgbin)"
fi

mkdir -p "${DATADIR}"
DATADIR="$(cd "${DATADIR}" && pwd)"

if [ "$(id -u)" -eq 0 ]; then
  RUNAS=(runuser -u postgres --)
  chown postgres: "${DATADIR}"
  chmod 700 "${DATADIR}"
else
  RUNAS=()
fi
run() { "${RUNAS[@]}" "$@"; }

if [ ! -f "${DATADIR}/PG_VERSION" ]; then
  echo "start-postgres: initdb ${DATADIR}"
  run "${PGBIN}/initdb" -D "${DATADIR}" -U postgres -A trust -E UTF8 --locale=C >"${DATADIR}.initdb.log" 2>&1 || {
    cat "${DATADIR}.initdb.log" >&2; exit 1; }
  rm -f "${DATADIR}.initdb.log"
fi

if run "${PGBIN}/pg_ctl" -D "${DATADIR}" status >/dev/null 2>&1; then
  echo "start-postgres: already running (${DATADIR})"
else
  OPTS="-p ${PORT} -c listen_addresses=127.0.0.1 -k ${DATADIR} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50"
  if [ ${#EXTRA_OPTS[@]} -gt 0 ]; then OPTS="${OPTS} ${EXTRA_OPTS[*]}"; fi
  echo "start-postgres: starting on 127.0.0.1:${PORT}"
  run "${PGBIN}/pg_ctl" -D "${DATADIR}" -l "${DATADIR}/server.log" -o "${OPTS}" -w -t 60 start >/dev/null || {
    tail -n 30 "${DATADIR}/server.log" >&2; exit 1; }
fi

for db in ${CREATE_DBS}; do
  if ! run "${PGBIN}/psql" -h 127.0.0.1 -p "${PORT}" -U postgres -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname='${db}'" | grep -q 1; then
    run "${PGBIN}/createdb" -h 127.0.0.1 -p "${PORT}" -U postgres "${db}"
    echo "start-postgres: created database ${db}"
  fi
done
echo "start-postgres: ready: host=127.0.0.1 port=${PORT} user=postgres"
