"""Smoke test: stock DuckDB 1.5.5 + ducklake + postgres_scanner against a running
RockLake wire server (e.g. `cargo run -p rocklake-wire --example memory_server -- 55433`).

Setup (once): the repository's scripts/setup-python.sh (then run with
.venv/bin/python; the extensions are found in .venv/duckdb-ext), or by hand:
    python3 -m venv /tmp/duckenv
    /tmp/duckenv/bin/pip install duckdb==1.5.5 duckdb-extension-ducklake==1.5.5 \
        duckdb-extension-postgres==1.5.5
    EXT=/tmp/duckext/v1.5.5/linux_amd64; mkdir -p $EXT
    SP=$(ls -d /tmp/duckenv/lib/python3*/site-packages)
    cp $SP/duckdb_extension_ducklake/extensions/v1.5.5/ducklake.duckdb_extension $EXT/
    cp $SP/duckdb_extension_postgres/extensions/v1.5.5/postgres.duckdb_extension \
        $EXT/postgres_scanner.duckdb_extension

Run: PYTHON scripts/duckdb_smoke.py PORT [DATA_DIR]
(DUCKDB_EXT_DIR overrides where the extensions are looked for.)
Exits non-zero on the first failing step.
"""

import os
import sys
import tempfile

import duckdb

port = sys.argv[1] if len(sys.argv) > 1 else "55433"
data = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="rocklake-smoke-")
repo_ext = os.path.join(os.path.dirname(__file__), "..", "..", "..", ".venv", "duckdb-ext")
ext_dir = os.environ.get("DUCKDB_EXT_DIR") or (repo_ext if os.path.isdir(repo_ext) else "/tmp/duckext")
con = duckdb.connect(config={
    "extension_directory": ext_dir,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": True,
})
con.execute("LOAD postgres_scanner; LOAD ducklake;")
steps = [
    (f"ATTACH 'ducklake:postgres:host=127.0.0.1 port={port} user=postgres dbname=lake' "
     f"AS l (DATA_PATH '{data}/')", None),
    ("CREATE TABLE l.t (id INTEGER, name VARCHAR)", None),
    ("INSERT INTO l.t VALUES (1, 'one'), (2, 'two')", None),
    ("UPDATE l.t SET name = 'uno' WHERE id = 1", None),
    ("DELETE FROM l.t WHERE id = 2", None),
    ("SELECT * FROM l.t ORDER BY id", [(1, "uno")]),
    ("CREATE TABLE l.ty (a SMALLINT, c DOUBLE, e DECIMAL(18,3), f BLOB, g TIME, "
     "h INTERVAL, i UUID, j BOOLEAN, k TIMESTAMPTZ, p VARCHAR, r INTEGER[])", None),
    ("INSERT INTO l.ty VALUES (-3, 1.5e300, -12.340, '\\x00\\xff'::BLOB, '13:14:15.5', "
     "INTERVAL '14 months 3 days 4 hours', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', true, "
     "'2026-12-02 16:44:32.123456+00', 'h\u00e9llo \"q\" \\ x', [1, 2, NULL])", None),
    ("SELECT a, c, e::VARCHAR, f, g::VARCHAR, h::VARCHAR, i::VARCHAR, j, k::VARCHAR, p, r FROM l.ty",
     [(-3, 1.5e300, "-12.340", b"\x00\xff", "13:14:15.5", "1 year 2 months 3 days 04:00:00",
       "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", True, "2026-12-02 16:44:32.123456+00",
       'h\u00e9llo "q" \\ x', [1, 2, None])]),
    ("INSERT INTO l.t SELECT range, 'x' || range FROM range(10, 10010)", None),
    ("SELECT count(*) FROM l.t", [(10001,)]),
    ("SELECT count(*) FROM l.t AT (VERSION => 2)", [(2,)]),
    ("CALL ducklake_flush_inlined_data('l')", None),
    ("CHECKPOINT l", None),
    ("SELECT count(*) FROM l.t", [(10001,)]),
]
for sql, expected in steps:
    try:
        rows = con.execute(sql).fetchall()
    except Exception as e:  # noqa: BLE001 - report any DuckDB error
        print(f"FAIL {sql[:80]}\n  -> {e}")
        sys.exit(1)
    if expected is not None and rows != expected:
        print(f"FAIL {sql[:80]}\n  expected {expected}\n  got      {rows}")
        sys.exit(1)
    print(f"ok   {sql[:80]}")
print("all steps passed")
