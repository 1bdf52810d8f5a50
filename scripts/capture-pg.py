#!/usr/bin/env python3
"""Capture what stock DuckDB + ducklake + postgres_scanner send to a real PostgreSQL.

Starts a throw-away PostgreSQL (scripts/start-postgres.sh) with statement
logging into CSV, runs the e2e workload (tests/e2e/workload.py) and a few
extra scenarios against it through DuckDB's ducklake extension, one database
per scenario, then turns the server log into fixtures:

  <out>/<scenario>.jsonl          every statement DuckDB sent, in order:
                                  {"scenario", "seq", "kind": "simple"|"parse", "sql",
                                   "session", "step"[, "statements"]}
  <out>/<scenario>.errors.jsonl   ErrorResponses (and NOTICEs) PostgreSQL returned:
                                  {"scenario", "seq", "session", "step", "severity",
                                   "sqlstate", "message", "detail", "statement"}
  <out>/<scenario>.results.jsonl  what each workload step returned on the client
  <out>/summary.json              counts per scenario

Run with the project's venv (scripts/setup-python.sh):
  .venv/bin/python scripts/capture-pg.py [--port 55432] [--out tests/fixtures/pg15-capture]
"""

from __future__ import annotations

import argparse
import collections
import csv
import datetime
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests" / "e2e"))

EXT_DIR = os.environ.get("DUCKDB_EXTENSION_DIR", str(REPO_ROOT / ".venv" / "duckdb-ext"))
MARKER_APP = "capture-marker"
TMP_PLACEHOLDER = "<capture-tmp>"

# PostgreSQL 15 csvlog columns
CSV_COLUMNS = [
    "log_time", "user_name", "database_name", "process_id", "connection_from", "session_id",
    "session_line_num", "command_tag", "session_start_time", "virtual_transaction_id",
    "transaction_id", "error_severity", "sql_state_code", "message", "detail", "hint",
    "internal_query", "internal_query_pos", "context", "query", "query_pos", "location",
    "application_name", "backend_type", "leader_pid", "query_id",
]

LOG_OPTS = [
    "-c", "log_destination=csvlog",
    "-c", "logging_collector=on",
    "-c", "log_directory=log",
    "-c", "log_filename=capture.log",
    "-c", "log_statement=all",
    "-c", "log_min_duration_statement=0",   # logs Parse/Bind steps, which log_statement does not
    "-c", "log_min_messages=notice",
    "-c", "log_connections=on",
    "-c", "log_error_verbosity=verbose",
    "-c", "log_rotation_size=0",
]

CONCURRENT_COMMITS = 10


# ---------------------------------------------------------------------------
# DuckDB side
# ---------------------------------------------------------------------------

def duck():
    import duckdb
    con = duckdb.connect(config={"extension_directory": EXT_DIR,
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": True})
    con.execute("LOAD ducklake; LOAD postgres_scanner;")
    return con


def attach_sql(port: int, db: str, data_path: pathlib.Path, alias: str = "l") -> str:
    return (f"ATTACH 'ducklake:postgres:host=127.0.0.1 port={port} user=postgres dbname={db}' "
            f"AS {alias} (DATA_PATH '{data_path}/')")


class Marker:
    """A psycopg connection that writes step markers into the server log."""

    def __init__(self, port: int, db: str):
        import psycopg
        self.conn = psycopg.connect(host="127.0.0.1", port=port, user="postgres", dbname=db,
                                    application_name=MARKER_APP, autocommit=True)

    def __call__(self, step: str):
        safe = step.replace("'", "")
        self.conn.execute(f"SELECT 'CAPTURE-STEP {safe}'")

    def close(self):
        self.conn.close()


def run_workload_scenario(name, steps, port, tmp, results_out):
    from workload import run_steps
    data = tmp / "data" / name
    data.mkdir(parents=True)
    marker = Marker(port, name)
    con = duck()
    attach = attach_sql(port, name, data)
    res = []
    for step in steps:
        marker(step.name)
        res.extend(run_steps(con, [step], attach))
    marker("end")
    con.close()
    marker.close()
    for r in res:
        results_out.append({"scenario": name, "step": r.name, "sql": r.sql, "ok": r.ok,
                            "rows": r.rows[:50] if r.rows else r.rows, "error": r.error})
    failed = [r for r in res if not r.ok]
    print(f"  {name}: {len(res)} steps, {len(failed)} failed"
          + "".join(f"\n    {r.name}: {r.error.splitlines()[0]}" for r in failed))


WORKER_CODE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import importlib.util
spec = importlib.util.spec_from_file_location("capture", sys.argv[2])
cap = importlib.util.module_from_spec(spec); spec.loader.exec_module(cap)
attach, table, mode, n, start_at, who = sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]), float(sys.argv[7]), sys.argv[8]
con = cap.duck()
con.execute(attach)
while time.time() < start_at:
    time.sleep(0.005)
out = []
for i in range(n):
    if mode == "inlined":
        sql = f"INSERT INTO l.{table} VALUES ({i}, '{who}', {i}.5)"
    else:
        sql = (f"INSERT INTO l.{table} SELECT i::INTEGER, '{who}', i * 0.5 "
               f"FROM range({i * 1000}, {(i + 1) * 1000}) r(i)")
    t0 = time.time()
    try:
        con.execute(sql).fetchall()
        out.append({"who": who, "i": i, "ok": True, "ms": round((time.time() - t0) * 1000, 1)})
    except Exception as e:
        out.append({"who": who, "i": i, "ok": False, "ms": round((time.time() - t0) * 1000, 1),
                    "error": str(e)})
con.execute("DETACH l")
print(json.dumps(out))
"""


def run_concurrent_scenario(name, port, tmp, results_out):
    data = tmp / "data" / name
    data.mkdir(parents=True)
    marker = Marker(port, name)
    con = duck()
    attach = attach_sql(port, name, data)
    marker("setup")
    con.execute(attach)
    con.execute("CREATE TABLE l.c (id INTEGER, who VARCHAR, v DOUBLE)")
    con.execute("DETACH l")
    con.close()
    for mode in ("inlined", "parquet"):
        marker(f"concurrent-{mode}")
        start_at = time.time() + 3.0  # both processes attach, then start together
        procs = [subprocess.Popen([sys.executable, "-c", WORKER_CODE, str(REPO_ROOT / "tests" / "e2e"),
                                   str(pathlib.Path(__file__).resolve()), attach, "c", mode,
                                   str(CONCURRENT_COMMITS), str(start_at), who],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for who in ("A", "B")]
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=300)
            if p.returncode != 0:
                raise RuntimeError(f"worker failed: {err}")
            outs.extend(json.loads(out))
        ok = sum(1 for o in outs if o["ok"])
        print(f"  {name}/{mode}: {ok}/{len(outs)} commits ok, max latency "
              f"{max(o['ms'] for o in outs)} ms")
        for o in outs:
            results_out.append({"scenario": name, "step": f"concurrent-{mode}", **o})
    marker("check")
    con = duck()
    con.execute(attach)
    rows = con.execute("SELECT who, count(*) FROM l.c GROUP BY who ORDER BY who").fetchall()
    snaps = con.execute("SELECT count(*) FROM ducklake_snapshots('l')").fetchall()
    con.execute("DETACH l")
    con.close()
    marker("end")
    marker.close()
    results_out.append({"scenario": name, "step": "check", "rows_per_writer": rows,
                        "snapshots": snaps[0][0]})
    print(f"  {name}: rows per writer {rows}, {snaps[0][0]} snapshots")


# ---------------------------------------------------------------------------
# Log parsing
# ---------------------------------------------------------------------------

def split_statements(sql: str) -> list[str]:
    """Split a multi-statement Query string on ';' outside '...' literals and
    "..." identifiers (DuckLake uses neither dollar quotes nor E'' strings)."""
    out, cur, quote = [], [], None
    for ch in sql:
        if quote:
            if ch == quote:
                quote = None
        elif ch in ("'", '"'):
            quote = ch
        elif ch == ";":
            stmt = "".join(cur).strip()
            if stmt:
                out.append(stmt)
            cur = []
            continue
        cur.append(ch)
    stmt = "".join(cur).strip()
    if stmt:
        out.append(stmt)
    return out


EXT_RE = re.compile(r"^(?:duration: [0-9.]+ ms\s+)?(parse|bind|execute) ([^:]*): (.*)$", re.S)


def parse_log(csv_path: pathlib.Path, scenarios: list[str], tmp: pathlib.Path):
    tmp_s = str(tmp)

    def clean(text):
        return text.replace(tmp_s, TMP_PLACEHOLDER) if text else text

    stmts = collections.defaultdict(list)
    errors = collections.defaultdict(list)
    sessions = collections.defaultdict(dict)    # scenario -> pid -> session number
    last_seq = {}                                # (scenario, pid) -> seq
    step = {}
    other = collections.Counter()
    authorized = collections.defaultdict(set)    # scenario -> pids
    marker_pids = set()
    with open(csv_path, newline="", encoding="utf-8") as f:
        for row in csv.reader(f):
            rec = dict(zip(CSV_COLUMNS, row))
            db = rec["database_name"]
            if db not in scenarios:
                continue
            msg = rec["message"]
            if rec["application_name"] == MARKER_APP:
                marker_pids.add(rec["process_id"])
                m = re.search(r"CAPTURE-STEP ([^']*)'", msg)
                if m:
                    step[db] = m.group(1)
                continue
            pid = rec["process_id"]
            if msg.startswith("connection received"):
                continue
            if msg.startswith("connection authorized"):
                authorized[db].add(pid)
                continue
            sess = sessions[db].setdefault(pid, len(sessions[db]) + 1)
            sev = rec["error_severity"]
            if sev in ("ERROR", "FATAL", "PANIC", "WARNING", "NOTICE"):
                errors[db].append({
                    "scenario": db, "seq": last_seq.get((db, pid)), "session": sess,
                    "step": step.get(db), "severity": sev, "sqlstate": rec["sql_state_code"],
                    "message": clean(msg), "detail": clean(rec["detail"]) or None,
                    "statement": clean(rec["query"]) or None})
                continue
            kind = sql = None
            if msg.startswith("statement: "):
                kind, sql = "simple", msg[len("statement: "):]
            else:
                m = EXT_RE.match(msg)
                if m:
                    kind, sql = m.group(1), m.group(3)
                    if kind == "execute" and msg.startswith("duration:"):
                        kind = None  # the execute itself was already logged by log_statement
                elif re.match(r"^duration: [0-9.]+ ms$", msg):
                    continue
            if kind is None:
                other[msg.split(":")[0][:60]] += 1
                continue
            seq = len(stmts[db]) + 1
            last_seq[(db, pid)] = seq
            entry = {"scenario": db, "seq": seq, "kind": kind, "sql": clean(sql),
                     "session": sess, "step": step.get(db)}
            parts = split_statements(entry["sql"])
            if len(parts) > 1:
                entry["statements"] = parts
            stmts[db].append(entry)
    connects = {db: len(pids - marker_pids) for db, pids in authorized.items()}
    return stmts, errors, connects, other


# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=55432)
    ap.add_argument("--out", default=str(REPO_ROOT / "tests" / "fixtures" / "pg15-capture"))
    ap.add_argument("--keep", action="store_true", help="keep the temporary PostgreSQL and data")
    args = ap.parse_args()

    from workload import EXTRAS, WORKLOAD

    scenarios = ["workload", "extras", "concurrent"]
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="rocklake-capture-"))
    tmp.chmod(0o755)
    datadir = tmp / "pgdata"
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PG_CREATE_DBS=" ".join(scenarios))
    print(f"capture: PostgreSQL in {datadir} on 127.0.0.1:{args.port}")
    subprocess.run(["bash", str(REPO_ROOT / "scripts" / "start-postgres.sh"), str(datadir),
                    str(args.port), *LOG_OPTS], env=env, check=True)
    results = []
    started = time.time()
    try:
        version = subprocess.run(
            [sorted(pathlib.Path("/usr/lib/postgresql").glob("*/bin/psql"))[-1], "-h", "127.0.0.1",
             "-p", str(args.port), "-U", "postgres", "-d", "postgres", "-tAc", "SHOW server_version"],
            capture_output=True, text=True).stdout.strip()
        run_workload_scenario("workload", WORKLOAD, args.port, tmp, results)
        run_workload_scenario("extras", EXTRAS, args.port, tmp, results)
        run_concurrent_scenario("concurrent", args.port, tmp, results)
    finally:
        subprocess.run(["bash", str(REPO_ROOT / "scripts" / "stop-postgres.sh"), str(datadir)])
    elapsed = time.time() - started

    csv_path = datadir / "log" / "capture.csv"
    stmts, errors, connects, other = parse_log(csv_path, scenarios, tmp)

    import duckdb
    summary = {"postgresql": version, "duckdb": duckdb.__version__,
               "captured_at": datetime.date.today().isoformat(),
               "run_seconds": round(elapsed, 1), "scenarios": {}}
    for sc in scenarios:
        with open(out / f"{sc}.jsonl", "w") as f:
            for s in stmts[sc]:
                f.write(json.dumps(s, ensure_ascii=False) + "\n")
        with open(out / f"{sc}.errors.jsonl", "w") as f:
            for e in errors[sc]:
                f.write(json.dumps(e, ensure_ascii=False) + "\n")
        with open(out / f"{sc}.results.jsonl", "w") as f:
            for r in results:
                if r["scenario"] == sc:
                    f.write(json.dumps(r, ensure_ascii=False, default=str)
                            .replace(str(tmp), TMP_PLACEHOLDER) + "\n")
        kinds = collections.Counter(s["kind"] for s in stmts[sc])
        summary["scenarios"][sc] = {
            "statements": len(stmts[sc]), "by_kind": dict(kinds),
            "distinct_sql": len({s["sql"] for s in stmts[sc]}),
            "sessions": len({s["session"] for s in stmts[sc]}), "connections": connects.get(sc, 0),
            "errors": dict(collections.Counter(f'{e["severity"]} {e["sqlstate"]} {e["message"][:80]}'
                                                for e in errors[sc])),
        }
    summary["unclassified_log_messages"] = dict(other)
    if not any(e["sqlstate"] == "23505" for e in errors["concurrent"]):
        print("capture: WARNING: the concurrent writers hit no 23505 conflict this time; "
              "run the capture again to record one", file=sys.stderr)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    if args.keep:
        print(f"capture: kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
