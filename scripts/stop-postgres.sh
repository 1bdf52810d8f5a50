#!/usr/bin/env bash
# Stop a server started by scripts/start-postgres.sh.  Usage: stop-postgres.sh DATADIR [--remove]
set -euo pipefail
DATADIR="$1"
PGBIN="${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r | head -n1)}"
if [ "$(id -u)" -eq 0 ]; then RUNAS=(runuser -u postgres --); else RUNAS=(); fi
if [ -f "${DATADIR}/PG_VERSION" ]; then
  "${RUNAS[@]}" "${PGBIN}/pg_ctl" -D "${DATADIR}" -m fast -w stop >/dev/null 2>&1 || true
fi
if [ "${2:-}" = "--remove" ]; then rm -rf "${DATADIR}"; fi
