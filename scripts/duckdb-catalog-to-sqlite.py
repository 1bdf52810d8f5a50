#!/usr/bin/env python3
"""Copies a DuckLake catalog kept in a DuckDB file into a new SQLite file,
which `rocklake import sqlite:FILE` then reads.

`rocklake` does not link DuckDB (building the bundled DuckDB library would
take far longer than the rest of the workspace), so a DuckDB-file catalog
(`ATTACH 'ducklake:metadata.ducklake'`) moves in through DuckDB itself: this
script opens the file as a plain DuckDB database, read-only, and copies
every `ducklake_` table, every row, into SQLite with DuckDB's SQLite
extension, in one transaction of the source. Values take the forms DuckLake
itself uses on SQLite (booleans as integers, timestamps as text).

Usage: scripts/duckdb-catalog-to-sqlite.py METADATA.ducklake NEW.sqlite
       [--extension-dir DIR]   (where the sqlite_scanner extension is; default
                                .venv/duckdb-ext, as scripts/setup-python.sh lays it out)
then:  rocklake import sqlite:NEW.sqlite ROOT
"""

from __future__ import annotations

import argparse
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="the DuckDB file holding the DuckLake catalog")
    parser.add_argument("target", help="a new SQLite file")
    parser.add_argument("--extension-dir", default=str(REPO / ".venv" / "duckdb-ext"))
    args = parser.parse_args()
    import duckdb

    if not pathlib.Path(args.source).is_file():
        sys.exit(f"{args.source}: no such DuckDB file")
    if pathlib.Path(args.target).exists():
        sys.exit(f"{args.target} exists: give a new SQLite file")
    con = duckdb.connect(config={"extension_directory": args.extension_dir,
                                 "autoinstall_known_extensions": False})
    con.execute("LOAD sqlite_scanner")
    source = args.source.replace("'", "''")
    target = args.target.replace("'", "''")
    con.execute(f"ATTACH '{source}' AS src (READ_ONLY)")
    tables = [name for (name,) in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = 'src' "
        "AND table_name LIKE 'ducklake\\_%' ESCAPE '\\' ORDER BY table_name").fetchall()]
    if not tables:
        sys.exit(f"{args.source} holds no DuckLake catalog (no ducklake_ tables)")
    con.execute(f"ATTACH '{target}' AS dst (TYPE sqlite)")
    try:
        con.execute("BEGIN")
        for name in tables:
            quoted = '"' + name.replace('"', '""') + '"'
            con.execute(f"CREATE TABLE dst.{quoted} AS SELECT * FROM src.{quoted}")
        con.execute("COMMIT")
    except Exception:
        con.close()
        pathlib.Path(args.target).unlink(missing_ok=True)
        raise
    print(f"copied {len(tables)} tables of {args.source} into {args.target}")


if __name__ == "__main__":
    main()
