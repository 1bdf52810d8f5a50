#!/usr/bin/env python3
"""Replay captured DuckDB statements (tests/fixtures/pg15-capture) against a server.

Sends every captured message of a scenario, in order, over libpq the way
postgres_scanner does:
  * "simple" entries via PQexec (simple Query; multi-statement strings stay one message);
    COPY ... TO STDOUT results are read and discarded; COPY ... FROM STDIN gets an
    empty binary COPY (header + trailer: the captured payloads are not in the log);
  * "parse" entries via PQprepare("") + PQdescribePrepared("") (never executed).
Each captured session gets its own connection.  Errors the capture expected
(<scenario>.errors.jsonl) are tolerated; any other error is reported.

A DuckDB-free way to check that a server accepts what DuckDB sends.  Statements
carry literal snapshot ids, so replay into an EMPTY database.

  .venv/bin/python scripts/replay-capture.py --port 5432 --dbname lake workload
  .venv/bin/python scripts/replay-capture.py --port 55432 --create-db replay1 workload extras

The `concurrent` scenario cannot be replayed serially (the second writer's
INSERT blocks on the first writer's open transaction) and is refused.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "pg15-capture"
EMPTY_BINARY_COPY = b"PGCOPY\n\xff\r\n\x00" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x00" + b"\xff\xff"


def load(path: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class Session:
    def __init__(self, conninfo: str):
        from psycopg import pq
        self.pq = pq
        self.conn = pq.PGconn.connect(conninfo.encode())
        if self.conn.status != pq.ConnStatus.OK:
            raise RuntimeError(f"connect failed: {self.conn.error_message.decode(errors='replace')}")

    def _drain(self, res) -> str | None:
        """Consume all results of the current command; return the first error."""
        pq = self.pq
        error = None
        while res is not None:
            st = res.status
            if st == pq.ExecStatus.COPY_OUT:
                while True:
                    n, _ = self.conn.get_copy_data(0)
                    if n < 0:
                        break
            elif st == pq.ExecStatus.COPY_IN:
                self.conn.put_copy_data(EMPTY_BINARY_COPY)
                self.conn.put_copy_end()
            elif st in (pq.ExecStatus.FATAL_ERROR, pq.ExecStatus.NONFATAL_ERROR) and error is None:
                sqlstate = res.error_field(pq.DiagnosticField.SQLSTATE) or b""
                error = f"{sqlstate.decode()} {res.error_message.decode(errors='replace').strip()}"
            elif st == pq.ExecStatus.BAD_RESPONSE and error is None:
                error = f"bad response: {res.error_message.decode(errors='replace').strip()}"
            res = self.conn.get_result()
        return error

    def simple(self, sql: str) -> str | None:
        try:
            self.conn.send_query(sql.encode())
        except Exception as exc:  # psycopg.pq raises on a dead connection
            return f"send failed: {exc}"
        return self._drain(self.conn.get_result())

    def parse_describe(self, sql: str) -> str | None:
        try:
            res = self.conn.prepare(b"", sql.encode())
        except Exception as exc:
            return f"parse: {exc}"
        err = self._status_error(res)
        if err:
            return "parse: " + err
        try:
            res = self.conn.describe_prepared(b"")
        except Exception as exc:
            return f"describe: {exc}"
        err = self._status_error(res)
        return "describe: " + err if err else None

    def _status_error(self, res) -> str | None:
        if res.status in (self.pq.ExecStatus.COMMAND_OK, self.pq.ExecStatus.TUPLES_OK):
            return None
        sqlstate = res.error_field(self.pq.DiagnosticField.SQLSTATE) or b""
        return f"{sqlstate.decode()} {res.error_message.decode(errors='replace').strip()}"

    def close(self):
        self.conn.finish()


def replay(scenario: str, conninfo: str, fixtures: pathlib.Path = FIXTURES) -> dict:
    """Replay one scenario; returns counts and the unexpected errors as
    [{"seq", "step", "error", "sql"}]."""
    stmts = load(fixtures / f"{scenario}.jsonl")
    expected = {e["seq"] for e in load(fixtures / f"{scenario}.errors.jsonl")
                if e["severity"] in ("ERROR", "FATAL")}
    sessions: dict[int, Session] = {}
    unexpected, expected_seen = [], 0
    started = time.monotonic()
    try:
        for s in stmts:
            sess = sessions.get(s["session"])
            if sess is None:
                sess = sessions[s["session"]] = Session(conninfo)
            err = sess.simple(s["sql"]) if s["kind"] == "simple" else sess.parse_describe(s["sql"])
            if err and s["seq"] in expected:
                expected_seen += 1
            elif err:
                unexpected.append({"seq": s["seq"], "step": s["step"], "error": err, "sql": s["sql"]})
    finally:
        for sess in sessions.values():
            sess.close()
    return {"scenario": scenario, "messages": len(stmts), "connections": len(sessions),
            "seconds": time.monotonic() - started, "unexpected": unexpected,
            "expected_errors_seen": expected_seen}


def format_report(r: dict, limit: int | None = 10) -> str:
    lines = [f"{r['scenario']}: {r['messages']} messages replayed in {r['seconds']:.1f}s on "
             f"{r['connections']} connections; {len(r['unexpected'])} unexpected errors"]
    shown = r["unexpected"] if limit is None else r["unexpected"][:limit]
    for u in shown:
        lines.append(f"  seq {u['seq']} ({u['step']}): {u['error'].splitlines()[0]}\n"
                     f"    {u['sql'][:300]}")
    if len(shown) < len(r["unexpected"]):
        lines.append(f"  ... {len(r['unexpected']) - len(shown)} more (use -v)")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", default=["workload", "extras"])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=5432)
    ap.add_argument("--user", default=None)
    ap.add_argument("--dbname", default="lake")
    ap.add_argument("--create-db", metavar="PREFIX",
                    help="(PostgreSQL) create a fresh database PREFIX_<scenario> per scenario")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    if "concurrent" in args.scenarios:
        sys.exit("the concurrent scenario cannot be replayed serially")
    failures = 0
    for sc in args.scenarios:
        db = args.dbname
        base = f"host={args.host} port={args.port}" + (f" user={args.user}" if args.user else "")
        if args.create_db:
            db = f"{args.create_db}_{sc}"
            admin = Session(f"{base} dbname=postgres")
            err = admin.simple(f'DROP DATABASE IF EXISTS "{db}"') or admin.simple(f'CREATE DATABASE "{db}"')
            admin.close()
            if err:
                sys.exit(f"cannot create database {db}: {err}")
        report = replay(sc, f"{base} dbname={db}")
        print(format_report(report, None if args.verbose else 10), flush=True)
        failures += len(report["unexpected"])
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
