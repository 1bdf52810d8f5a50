"""Answers to `require X`, for a Linux x86-64 release build of DuckDB; any other
name is an extension, available if it can be LOADed."""

from __future__ import annotations

import os
import re
import shutil

# `require X` for these answers without loading anything.
REQUIRE_PRESENT = {"notmusl", "notmingw", "notwindows", "longdouble", "64bit", "noforcestorage",
                   "no_force_storage", "nothreadsan", "strinline", "no_alternative_verify",
                   "no_latest_storage", "no_vector_verification", "allow_unsigned_extensions"}
REQUIRE_MISSING = {"mingw", "windows", "vacuum_rebuild_indexes"}
STANDARD_VECTOR_SIZE = 2048
DEFAULT_BLOCK_SIZE = 262144


def parse_memory_limit(text: str) -> int:
    """`4GB`, `500 MiB`, ... in bytes (0 if not understood)."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*([a-zA-Z]*)\s*", text)
    if not m:
        return 0
    units = {"": 1, "b": 1, "byte": 1, "bytes": 1, "kb": 1000, "kib": 1024, "mb": 1000 ** 2, "mib": 1024 ** 2,
             "gb": 1000 ** 3, "gib": 1024 ** 3, "tb": 1000 ** 4, "tib": 1024 ** 4}
    return int(float(m.group(1)) * units.get(m.group(2).lower(), 1))


def check_require(params: list[str], database, fail) -> bool:
    """Whether `require <params>` is met; `fail(msg)` reports a malformed directive,
    `database.load_extension(name)` loads an extension."""
    if not params:
        fail("require requires a single parameter")
    param = params[0].lower()
    if param in REQUIRE_PRESENT:
        return True
    if param in REQUIRE_MISSING:
        return False
    if param == "skip_reload":
        return True
    if param == "ram":
        if len(params) != 2:
            fail("require ram requires a parameter")
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError):
            return False
        return total >= parse_memory_limit(params[1])
    if param == "disk_space":
        if len(params) != 2:
            fail("require disk_space requires a parameter")
        return shutil.disk_usage(".").free >= parse_memory_limit(params[1])
    if param == "vector_size":
        return STANDARD_VECTOR_SIZE >= int(params[1])
    if param == "exact_vector_size":
        return STANDARD_VECTOR_SIZE == int(params[1])
    if param == "block_size":
        return DEFAULT_BLOCK_SIZE == int(params[1])
    if param == "no_extension_autoloading":
        if len(params) < 2:
            fail("require no_extension_autoloading needs an explanation string")
        return True   # autoload_known_extensions is off, as with "autoloading": "none"
    # an extension: LOAD it (statically linked or in the extension directory)
    return database.load_extension(param)
