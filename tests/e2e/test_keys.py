"""`rocklake keys`: a catalog's keys and values, decoded, while the server runs.

After a DuckDB workload with inlined rows and a Parquet file, the dump shows
every value in readable form: catalog rows by column, the rows of inlined
data tables with the user's values, registry entries, counters and system
keys; `--tag` takes a tag name, a catalog table name or a tag byte.
"""

from __future__ import annotations

import subprocess

import pytest

from conftest import ROCKLAKE_BIN


def keys(backend, *args) -> list[str]:
    res = subprocess.run([ROCKLAKE_BIN, "keys", backend.location, *args], env=backend.env(),
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines()


@pytest.mark.rocklake
def test_keys_decode_values_and_take_table_names(rocklake, duck, data_dir):
    rocklake.start()
    con = duck()
    con.execute(rocklake.attach_sql("l", data_dir("lake")))
    con.execute("CREATE TABLE l.people (id INTEGER, name VARCHAR)")
    con.execute("INSERT INTO l.people VALUES (1, 'ada lovelace')")
    con.execute("INSERT INTO l.people SELECT range, 'bulk' FROM range(2, 5000)")

    everything = keys(rocklake)
    assert all(" = " in line for line in everything), [l for l in everything if " = " not in l]
    assert not [line for line in everything if "<undecodable" in line]

    files = keys(rocklake, "--tag", "ducklake_data_file")
    assert files and all(line.startswith("20") for line in files), files
    assert any("path: \"ducklake-" in line and ".parquet" in line for line in files), files
    assert keys(rocklake, "--tag", "0x20") == files
    assert keys(rocklake, "--tag", "data_file") == files

    # The inlined row carries the user's value, decoded with its relation's
    # columns (DuckLake declares inlined VARCHAR columns BYTEA on PostgreSQL).
    inlined = keys(rocklake, "--tag", "inlined_data")
    hex_name = "ada lovelace".encode().hex()
    assert any(f"name: \"\\\\x{hex_name}\"" in line for line in inlined), inlined

    snapshots = keys(rocklake, "--tag", "ducklake_snapshot")
    assert any("snapshot_id: \"0\"" in line for line in snapshots), snapshots
    registry = keys(rocklake, "--tag", "relation")
    assert any("table public.ducklake_snapshot (snapshot_id BIGINT" in line for line in registry)
    system = keys(rocklake, "--tag", "system")
    assert any("'format-version' = 2" in line for line in system), system
    assert any("'hot-key' = HotKey {" in line for line in system), system
    counters = keys(rocklake, "--tag", "counter")
    assert any("next_snapshot_id = " in line for line in counters), counters

    bad = subprocess.run([ROCKLAKE_BIN, "keys", rocklake.location, "--tag", "ducklake_nonsense"],
                         env=rocklake.env(), capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "catalog table name" in bad.stderr
