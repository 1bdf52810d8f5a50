"""The DuckDB test configuration (test/configs/postgres.json of the checkout):
skipped files, test environment, statically loaded extensions, on_init."""

from __future__ import annotations

import json
import re

DEFAULT_CONFIG = "test/configs/postgres.json"
MIRRORED_KEYS = {"description", "on_init", "autoloading", "statically_loaded_extensions", "test_env", "skip_tests",
                 "skip_error_messages"}


def load_config(path) -> dict:
    """The parts of a config file the runner mirrors (and the keys it does not)."""
    with open(path) as f:
        cfg = json.load(f)
    skips = {}
    for group in cfg.get("skip_tests", []):
        for p in group.get("paths", []):
            skips[p] = group.get("reason", "")
    env = {e["env_name"]: e["env_value"] for e in cfg.get("test_env", [])}
    return {
        "skips": skips,
        "env": env,
        "static_extensions": cfg.get("statically_loaded_extensions", ["core_functions"]),
        "on_init": cfg.get("on_init", ""),
        "skip_error_messages": cfg.get("skip_error_messages", []),
        "autoloading": cfg.get("autoloading", "none"),
        "unsupported_keys": sorted(set(cfg) - MIRRORED_KEYS),
    }


def settings_of(on_init: str) -> str:
    """The `SET` statements of an on_init script (DuckLake main's postgres
    config ends its schema reset with `SET pg_experimental_filter_pushdown=false;
    SET pg_order_pushdown=false;`): they shape how DuckDB talks to the
    catalog, so they run even when the rest of on_init does not."""
    statements = [part.strip() for part in on_init.split(";")]
    return "".join(f"{s}; " for s in statements if s.upper().startswith("SET ")).strip()


def rewrite_dbname(text, dbname) -> str:
    """Point a libpq string (or ducklake:postgres:... / postgres:...) at `dbname`."""
    return re.sub(r"dbname=[^\s']+", f"dbname={dbname}", text)
