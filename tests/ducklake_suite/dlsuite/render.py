"""Query results as DuckDB's runner sees them (TestResultHelper): values rendered as
strings, sort modes, MD5 hashes, `<FILE>:` and `<REGEX>:` expectations, and the
comparison with the expected values (numeric tolerance, boolean spellings)."""

from __future__ import annotations

import hashlib
import math
import re
import threading

from .errors import error_text, truncate

NUMERIC_TYPE = re.compile(r"(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|"
                          r"UHUGEINT|FLOAT|DOUBLE|DECIMAL\(\d+,\s*\d+\))")
HASH_RESULT = re.compile(r"[0-9]+ values hashing to [0-9a-z]{32}")
SORT_STYLES = {"nosort": "none", "none": "none", "rowsort": "row", "sort": "row", "valuesort": "value"}


class Result:
    """The outcome of a query: an error, or column names, types and rows of VARCHAR values."""
    __slots__ = ("error", "names", "types", "rows")

    def __init__(self, error=None, names=(), types=(), rows=()):
        self.error = error
        self.names = list(names)
        self.types = list(types)
        self.rows = rows


def render_values(res: Result) -> list[str]:
    """All values row by row as the runner prints them (NULL, (empty), 1/0, \\0)."""
    out = []
    bool_cols = [t == "BOOLEAN" for t in res.types]
    for row in res.rows:
        for c, v in enumerate(row):
            if v is None:
                out.append("NULL")
            elif bool_cols[c]:
                out.append("1" if v == "true" else "0")
            elif v == "":
                out.append("(empty)")
            else:
                out.append(v.replace("\0", "\\0"))
    return out


def sort_values(style: str, values: list[str], ncols: int) -> str | None:
    """Sort `values` in place for `rowsort`/`valuesort`; an error message if not aligned."""
    if style == "none":
        return None
    if style == "value":
        values.sort()
        return None
    if ncols == 0 or len(values) % ncols != 0:
        return f"Failed to sort query result - result is not aligned ({len(values)} values, {ncols} columns)"
    rows = [values[i:i + ncols] for i in range(0, len(values), ncols)]
    rows.sort()
    values[:] = [v for row in rows for v in row]
    return None


def split_tabs(text: str) -> list[str]:
    """The values of a tab-separated expected row."""
    parts = [p for p in text.split("\t") if p != ""]
    return parts or [text]


def approx_equal(l, r) -> bool:
    """ApproxEqual: floats equal within 1% (NaN equals NaN)."""
    if math.isnan(l) and math.isnan(r):
        return True
    if not math.isfinite(l) or not math.isfinite(r):
        return l == r
    epsilon = abs(r) * 0.01 + 0.00000001
    return abs(l - r) <= epsilon


def matches_regex(value: str, pattern: str) -> bool:
    """`<REGEX>:re` (must match all of `value`) or `<!REGEX>:re` (must not)."""
    want = pattern.startswith("<REGEX>:")
    regex = pattern.replace("<REGEX>:", "").replace("<!REGEX>:", "")
    try:
        m = re.fullmatch(regex, value, re.DOTALL) is not None
    except re.error:
        return False
    return m == want


def preview(values: list[str], ncols: int, limit=6) -> str:
    """The first rows of a result for a failure message."""
    if ncols == 0:
        return "[]"
    rows = ["\t".join(values[i:i + ncols]) for i in range(0, len(values), ncols)]
    shown = " | ".join(rows[:limit])
    if len(rows) > limit:
        shown += f" | ... ({len(rows)} rows)"
    return truncate(shown, 600)


def _as_bool(s):
    if s.lower() == "true" or s == "1":
        return 1
    if s.lower() == "false" or s == "0":
        return 0
    return None


def load_result_file(fname: str, names: list[str]):
    """Expected values from a `<FILE>:` CSV (`|`-separated, with header):
    (values, number of columns, error message or None)."""
    import duckdb
    try:
        con = duckdb.connect(":memory:")
        cols = ", ".join("'" + n.replace("'", "''") + "': 'VARCHAR'" for n in names)
        rows = con.execute(f"SELECT * FROM read_csv('{fname}', header=1, sep='|', columns={{{cols}}}, "
                           "auto_detect=false)").fetchall()
        ncols = len(names)
        con.close()
    except Exception as e:  # noqa: BLE001
        return [], 0, f"Could not read CSV File \"{fname}\": {error_text(e)}"
    values = []
    for row in rows:
        for v in row:
            values.append("NULL" if v is None else v)
    return values, ncols, None


class ValueCaster:
    """Casts done by DuckDB itself on a private in-memory connection (thread-safe)."""

    def __init__(self):
        self._con = None
        self._lock = threading.Lock()

    def _connection(self):
        import duckdb
        if self._con is None:
            self._con = duckdb.connect(":memory:")
        return self._con

    def to_varchar(self, value, sql_type: str):
        """A Python value of a result column -> DuckDB's VARCHAR rendering."""
        if value is None:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, str):
            return value
        with self._lock:
            con = self._connection()
            try:
                return con.execute(f"SELECT CAST(CAST($1 AS {sql_type}) AS VARCHAR)", [value]).fetchone()[0]
            except Exception:  # noqa: BLE001
                return str(value)

    def try_cast(self, text: str, sql_type: str):
        """Value(text).TryCastAs(sql_type): (value, converted)."""
        if text == "NULL":
            return None, True
        with self._lock:
            con = self._connection()
            try:
                v = con.execute(f"SELECT TRY_CAST($1 AS {sql_type})", [text]).fetchone()[0]
            except Exception:  # noqa: BLE001
                return None, False
        return v, v is not None


class ResultChecker:
    """CheckQueryResult for one test file: holds `hash-threshold` and the hash labels."""

    def __init__(self, keywords, caster: ValueCaster):
        self.keywords = keywords
        self.caster = caster
        self.hash_threshold = 0
        self.hash_labels: dict[str, tuple[str, str]] = {}
        self.label_lock = threading.Lock()

    def reset_label(self, label: str) -> bool:
        """`reset label X`: forget the hash of a label; False if unknown."""
        with self.label_lock:
            if label not in self.hash_labels:
                return False
            del self.hash_labels[label]
            return True

    def check(self, query, running_loops, res: Result) -> str | None:
        """Compare a successful result with what `query` expects: None if it matches,
        else the failure message."""
        ncols = len(res.types)
        total = len(res.rows) * ncols
        values = query.values
        result_is_hash = len(values) == 1 and HASH_RESULT.fullmatch(values[0]) is not None
        compare_hash = (query.label is not None or (self.hash_threshold > 0 and total > self.hash_threshold)
                        or result_is_hash)
        result_values = render_values(res)
        err = sort_values(query.sort_style, result_values, ncols)
        if err:
            return err
        expected_columns = query.expected_columns
        if len(values) == 1 and values[0].startswith("<FILE>:"):
            fname = self.keywords.replace(values[0].replace("<FILE>:", ""))
            fname = self.keywords.loop_replacement(fname, running_loops)
            comparison, expected_columns, err = load_result_file(fname, res.names)
            if err:
                return err
        else:
            comparison = values
        if compare_hash:
            return self._check_hash(query, result_values, total, ncols, result_is_hash)
        return self._check_values(res, result_values, comparison, expected_columns)

    def _check_values(self, res, result_values, comparison, expected_columns) -> str | None:
        ncols = len(res.types)
        nrows = len(res.rows)
        total = nrows * ncols
        original_expected = expected_columns
        mismatch = expected_columns != ncols
        expected_columns = ncols
        if expected_columns == 0:
            return "query returned no columns"
        wrong_columns = f"wrong column count: expected {original_expected}, got {ncols}"
        expected_rows = len(comparison) // expected_columns
        row_wise = expected_columns > 1 and len(comparison) == nrows
        if not row_wise:
            row_wise = all("\t" in v for v in comparison)
        if row_wise:
            expected_rows = len(comparison)
        elif len(comparison) % expected_columns != 0:
            if mismatch:
                return f"{wrong_columns} (result: {preview(result_values, ncols)})"
            return f"expected values ({len(comparison)}) not divisible by column count {expected_columns}"
        if expected_rows != nrows:
            if mismatch:
                return f"{wrong_columns} (result: {preview(result_values, ncols)})"
            return (f"wrong row count: expected {expected_rows} rows, got {nrows} "
                    f"(result: {preview(result_values, ncols)})")
        if row_wise:
            comparison, err = _split_rows(comparison, total, expected_columns)
            if err:
                return wrong_columns if mismatch else err
        for i in range(min(total, len(comparison))):
            got, exp = result_values[i], comparison[i]
            if not self.values_equal(got, exp, res.types[i % expected_columns]):
                row, col = divmod(i, expected_columns)
                return (f"wrong result: row {row + 1}, column {res.names[col]!r} (index {col + 1}): "
                        f"got {truncate(got, 200)!r}, expected {truncate(exp, 200)!r}")
        if mismatch:
            return f"{wrong_columns} (values match)"
        return None

    def _check_hash(self, query, result_values, total, ncols, result_is_hash) -> str | None:
        md5 = hashlib.md5()
        for v in result_values[:total]:
            md5.update(v.encode("utf-8", "surrogateescape"))
            md5.update(b"\n")
        hash_value = f"{total} values hashing to {md5.hexdigest()}"
        hash_error = False
        expected_desc = ""
        if query.label is not None:
            with self.label_lock:
                entry = self.hash_labels.get(query.label)
                if entry is None:
                    self.hash_labels[query.label] = (hash_value, preview(result_values, ncols))
                else:
                    hash_error = entry[0] != hash_value
                    expected_desc = f" (label {query.label}: {entry[0]}, result {entry[1]})"
        if result_is_hash:
            hash_error = query.values[0] != hash_value
            expected_desc = f" (expected {query.values[0]})"
        if hash_error:
            return f"wrong result hash: got {hash_value}{expected_desc}; result {preview(result_values, ncols)}"
        return None

    def values_equal(self, got: str, exp: str, sql_type: str) -> bool:
        """One rendered value against its expected text (keywords, regex, numeric, boolean)."""
        if got == exp or got == self.keywords.replace(exp):
            return True
        if exp.startswith("<REGEX>:") or exp.startswith("<!REGEX>:"):
            if matches_regex(got, exp):
                return True
        if NUMERIC_TYPE.fullmatch(sql_type):
            lv, lok = self.caster.try_cast(got, sql_type)
            rv, rok = self.caster.try_cast(exp, sql_type)
            if not (lok and rok):
                return False
            if lv is None or rv is None:
                return lv is None and rv is None
            if sql_type in ("FLOAT", "DOUBLE"):
                return approx_equal(float(rv), float(lv))
            return lv == rv
        if sql_type == "BOOLEAN":
            lb, rb = _as_bool(got), _as_bool(exp)
            if lb is None or rb is None:
                return lb is None and rb is None
            return lb == rb
        return False


def _split_rows(comparison, total, expected_columns):
    """Tab-separated expected rows -> one value each: (values, error message or None)."""
    flat = []
    for i in range(min(total, len(comparison))):
        splits = split_tabs(comparison[i])
        if len(splits) != expected_columns:
            return None, (f"row {i + 1} of the expected result has {len(splits)} values, "
                          f"expected {expected_columns}")
        flat.extend(splits)
    return flat, None
