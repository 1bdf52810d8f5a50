"""The end-to-end DuckLake workload, run identically against every catalog backend.

A workload is a list of `Step`s.  Each step is one SQL statement sent to a
DuckDB connection on which the ducklake and postgres_scanner extensions are
loaded.  `{attach}` in a step's SQL is replaced by the backend's ATTACH
statement (see `conftest.Backend.attach_sql`), so the same list runs against a
DuckDB-file catalog, a real PostgreSQL catalog, or RockLake.

Every catalog is attached under the alias `l` (ALIAS below); the DuckLake
snapshot ids are computed by the client, so they are identical on every
correct backend, which is why time travel uses fixed versions.

`run_steps()` returns one `StepResult` per step: the normalised result rows
(sorted unless the statement orders them) or the error text.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
import threading
import time
import uuid
from typing import Any, Callable, Iterable, Sequence

ALIAS = "l"


@dataclasses.dataclass(frozen=True)
class Step:
    name: str
    sql: str
    returns_rows: bool = True
    ordered: bool = False  # True when the SQL has an ORDER BY that fixes row order

    def render(self, attach: str) -> str:
        return self.sql.replace("{attach}", attach)


@dataclasses.dataclass
class StepResult:
    name: str
    sql: str
    ok: bool
    rows: list | None = None
    error: str | None = None
    seconds: float = 0.0

    def outcome(self) -> Any:
        """What is compared between backends."""
        if self.ok:
            return {"rows": self.rows}
        return {"error": error_class(self.error or "")}

    def show(self) -> str:
        if self.ok:
            return "ok" if self.rows is None else json.dumps(self.rows, default=str)
        return "ERROR " + (self.error or "")


def error_class(message: str) -> str:
    """'Catalog Error: Table ... does not exist' -> 'Catalog Error'.

    Only the class of an error is compared across backends: the full text can
    legitimately name the backend (connection strings, file paths)."""
    head = message.split(":", 1)[0].strip()
    return head if head.endswith("Error") or head.endswith("Exception") else message.strip()


# --------------------------------------------------------------------------
# The workload
# --------------------------------------------------------------------------

# Part 1: build up a catalog; ends with DETACH.  Snapshot numbering (as
# computed by DuckLake): 0 create catalog, 1 schema, 2 table, 3 view,
# 4 small inlined insert, 5 5000-row Parquet insert, 6 update, 7 delete,
# 8 add column, 9 insert, 10 drop column, 11 rename column, 12 rename table,
# 13 new view, 14 CREATE TABLE AS, 15 DROP TABLE.
PART1: list[Step] = [
    Step("attach", "{attach}", returns_rows=False),
    Step("create_schema", "CREATE SCHEMA l.s1", returns_rows=False),
    Step("create_table",
         "CREATE TABLE l.s1.t (id INTEGER, name VARCHAR, amount DOUBLE)", returns_rows=False),
    Step("create_view",
         "CREATE VIEW l.s1.v AS SELECT id, name FROM l.s1.t WHERE id < 100", returns_rows=False),
    Step("insert_small_inlined",
         "INSERT INTO l.s1.t VALUES (1, 'one', 1.5), (2, 'two', 2.5), (3, 'three', NULL)"),
    Step("select_inlined", "SELECT id, name, amount FROM l.s1.t ORDER BY id", ordered=True),
    Step("insert_large_parquet",
         "INSERT INTO l.s1.t SELECT i::INTEGER, 'row' || i, i * 0.5 FROM range(1000, 6000) r(i)"),
    Step("count_after_inserts",
         "SELECT count(*), sum(id), min(id), max(id), count(amount) FROM l.s1.t"),
    Step("select_filtered",
         "SELECT id, name, amount FROM l.s1.t WHERE id < 10 OR id BETWEEN 2000 AND 2004 "
         "ORDER BY id", ordered=True),
    Step("select_filtered_agg",
         "SELECT count(*), sum(amount) FROM l.s1.t WHERE name LIKE 'row1%' AND amount > 600"),
    Step("select_view", "SELECT * FROM l.s1.v ORDER BY id", ordered=True),
    Step("update", "UPDATE l.s1.t SET amount = amount * 10 WHERE id IN (2, 1500)"),
    Step("select_updated", "SELECT id, amount FROM l.s1.t WHERE id IN (1, 2, 1500, 1501) ORDER BY id",
         ordered=True),
    Step("delete", "DELETE FROM l.s1.t WHERE id = 3 OR id >= 5900"),
    Step("count_after_delete", "SELECT count(*), sum(id), max(id), sum(amount) FROM l.s1.t"),
    Step("alter_add_column", "ALTER TABLE l.s1.t ADD COLUMN flag BOOLEAN", returns_rows=False),
    Step("insert_with_new_column", "INSERT INTO l.s1.t VALUES (7, 'seven', 7.0, false)"),
    Step("alter_drop_column", "ALTER TABLE l.s1.t DROP COLUMN amount", returns_rows=False),
    Step("alter_rename_column", "ALTER TABLE l.s1.t RENAME COLUMN name TO label", returns_rows=False),
    Step("select_after_alter", "SELECT * FROM l.s1.t WHERE id < 10 OR id = 1000 ORDER BY id",
         ordered=True),
    Step("describe_after_alter",
         "SELECT column_name, data_type FROM information_schema.columns "
         "WHERE table_catalog = 'l' AND table_schema = 's1' AND table_name = 't' "
         "ORDER BY ordinal_position", ordered=True),
    Step("rename_table", "ALTER TABLE l.s1.t RENAME TO t2", returns_rows=False),
    Step("select_renamed", "SELECT count(*), sum(id), count(flag) FROM l.s1.t2"),
    Step("create_view_on_renamed",
         "CREATE VIEW l.s1.v2 AS SELECT id, label FROM l.s1.t2 WHERE flag IS NOT NULL",
         returns_rows=False),
    Step("create_table_to_drop", "CREATE TABLE l.s1.gone AS SELECT 42 AS x", returns_rows=False),
    Step("drop_table", "DROP TABLE l.s1.gone", returns_rows=False),
    Step("list_tables",
         "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'l'"),
    Step("list_views",
         "SELECT schema_name, view_name FROM duckdb_views() WHERE database_name = 'l'"),
    Step("time_travel_v4", "SELECT id, name, amount FROM l.s1.t AT (VERSION => 4) ORDER BY id",
         ordered=True),
    Step("time_travel_v5",
         "SELECT count(*), sum(id), sum(amount) FROM l.s1.t AT (VERSION => 5)"),
    Step("time_travel_v7_view_of_past",
         "SELECT id, amount FROM l.s1.t AT (VERSION => 7) WHERE id IN (2, 3, 1500) ORDER BY id",
         ordered=True),
    Step("time_travel_dropped_table", "SELECT x FROM l.s1.gone AT (VERSION => 14)"),
    Step("snapshots",
         "SELECT snapshot_id, schema_version, changes FROM ducklake_snapshots('l') "
         "ORDER BY snapshot_id", ordered=True),
    Step("current_snapshot", "SELECT id FROM ducklake_current_snapshot('l')"),
    Step("detach", "DETACH l", returns_rows=False),
]

# Part 2: re-attach the existing catalog (same DuckDB instance or a new one,
# before or after a server restart) and check everything is still there.
PART2: list[Step] = [
    Step("reattach", "{attach}", returns_rows=False),
    Step("reattach_count", "SELECT count(*), sum(id), count(flag) FROM l.s1.t2"),
    Step("reattach_rows", "SELECT * FROM l.s1.t2 WHERE id < 10 OR id = 1000 ORDER BY id",
         ordered=True),
    Step("reattach_view", "SELECT * FROM l.s1.v2 ORDER BY id", ordered=True),
    Step("reattach_time_travel", "SELECT count(*) FROM l.s1.t AT (VERSION => 5)"),
    Step("reattach_list_tables",
         "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'l'"),
    Step("reattach_insert", "INSERT INTO l.s1.t2 VALUES (8, 'eight', true)"),
    Step("reattach_count_after_insert", "SELECT count(*), sum(id) FROM l.s1.t2"),
    Step("reattach_snapshots",
         "SELECT snapshot_id, schema_version, changes FROM ducklake_snapshots('l') "
         "WHERE snapshot_id >= 14 ORDER BY snapshot_id", ordered=True),
    Step("final_detach", "DETACH l", returns_rows=False),
]

WORKLOAD: list[Step] = PART1 + PART2

# Extra catalog features, run on a fresh catalog: comments, macros,
# partitioning, maintenance functions.  `{data_path}` is not needed: the
# maintenance functions work on the attached catalog.
EXTRAS: list[Step] = [
    Step("attach", "{attach}", returns_rows=False),
    Step("create_table", "CREATE TABLE l.events (id INTEGER, kind VARCHAR, v DOUBLE)",
         returns_rows=False),
    Step("comment_table", "COMMENT ON TABLE l.events IS 'event log'", returns_rows=False),
    Step("comment_column", "COMMENT ON COLUMN l.events.kind IS 'event kind'", returns_rows=False),
    Step("read_comments",
         "SELECT comment FROM duckdb_tables() WHERE database_name = 'l' AND table_name = 'events'"),
    Step("scalar_macro", "CREATE MACRO l.add_one(x) AS x + 1", returns_rows=False),
    Step("table_macro",
         "CREATE MACRO l.events_of(k) AS TABLE SELECT id FROM l.events WHERE kind = k",
         returns_rows=False),
    Step("use_scalar_macro", "SELECT l.add_one(41)"),
    Step("inline_insert_1", "INSERT INTO l.events VALUES (1, 'a', 1.0), (2, 'b', 2.0)"),
    Step("inline_insert_2", "INSERT INTO l.events VALUES (3, 'a', 3.0)"),
    Step("use_table_macro", "SELECT * FROM l.events_of('a') ORDER BY id", ordered=True),
    Step("partition", "ALTER TABLE l.events SET PARTITIONED BY (kind)", returns_rows=False),
    Step("insert_partitioned",
         "INSERT INTO l.events SELECT i::INTEGER, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END, i "
         "FROM range(100, 1100) r(i)"),
    Step("insert_partitioned_2",
         "INSERT INTO l.events SELECT i::INTEGER, 'c', i FROM range(2000, 2500) r(i)"),
    Step("insert_partitioned_3",
         "INSERT INTO l.events SELECT i::INTEGER, 'c', i FROM range(2500, 3000) r(i)"),
    Step("partitioned_filter", "SELECT kind, count(*), sum(v) FROM l.events GROUP BY kind"),
    Step("flush_inlined", "SELECT count(*) FROM ducklake_flush_inlined_data('l')"),
    Step("count_after_flush", "SELECT count(*), sum(id) FROM l.events"),
    Step("file_count_before_merge",
         "SELECT count(*) FROM ducklake_list_files('l', 'events')"),
    Step("merge_adjacent", "SELECT count(*) FROM ducklake_merge_adjacent_files('l')"),
    Step("count_after_merge", "SELECT count(*), sum(id) FROM l.events"),
    Step("delete_some", "DELETE FROM l.events WHERE id % 10 = 0"),
    Step("expire_snapshots",
         "SELECT count(*) FROM ducklake_expire_snapshots('l', older_than => now() + INTERVAL 1 DAY)"),
    Step("snapshots_after_expire",
         "SELECT snapshot_id FROM ducklake_snapshots('l') ORDER BY snapshot_id", ordered=True),
    Step("cleanup_old_files",
         "SELECT count(*) FROM ducklake_cleanup_old_files('l', cleanup_all => true)"),
    Step("count_after_maintenance", "SELECT count(*), sum(id), sum(v) FROM l.events"),
    # explicit transactions: several changes in one DuckLake commit, and a rollback
    Step("tx_begin", "BEGIN TRANSACTION", returns_rows=False),
    Step("tx_insert", "INSERT INTO l.events VALUES (9001, 'tx', 1.0), (9002, 'tx', 2.0)"),
    Step("tx_update", "UPDATE l.events SET v = v + 10 WHERE id = 9001"),
    Step("tx_delete", "DELETE FROM l.events WHERE id = 9002"),
    Step("tx_read_own_writes", "SELECT id, v FROM l.events WHERE id > 9000 ORDER BY id",
         ordered=True),
    Step("tx_commit", "COMMIT", returns_rows=False),
    Step("tx2_begin", "BEGIN TRANSACTION", returns_rows=False),
    Step("tx2_insert", "INSERT INTO l.events VALUES (9003, 'tx', 3.0)"),
    Step("tx2_rollback", "ROLLBACK", returns_rows=False),
    Step("tx_result", "SELECT id, kind, v FROM l.events WHERE id > 9000 ORDER BY id", ordered=True),
    Step("tx_snapshots",
         "SELECT snapshot_id, changes FROM ducklake_snapshots('l') ORDER BY snapshot_id DESC LIMIT 1",
         ordered=True),
    Step("detach", "DETACH l", returns_rows=False),
    Step("reattach", "{attach}", returns_rows=False),
    Step("reattach_count", "SELECT kind, count(*) FROM l.events GROUP BY kind"),
    Step("reattach_macro", "SELECT l.add_one(1)"),
    Step("final_detach", "DETACH l", returns_rows=False),
]


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------

def normalize(value: Any) -> Any:
    """Make a DuckDB Python value JSON-friendly and comparable."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return repr(value) if value != value or value in (float("inf"), float("-inf")) else value
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (datetime.date, datetime.time, datetime.datetime, datetime.timedelta,
                          uuid.UUID)):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): normalize(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    return str(value)


def _sort_key(row: list) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def run_steps(con, steps: Sequence[Step], attach: str, *,
              max_consecutive_errors: int | None = None,
              step_timeout: float | None = None,
              on_timeout: Callable[[Step], None] | None = None,
              on_step: Callable[[StepResult], None] | None = None) -> list[StepResult]:
    """Run `steps` on DuckDB connection `con`; never raises for SQL errors.

    With max_consecutive_errors, the remaining steps are recorded as not run
    once that many steps in a row failed (useful against a dead server).
    With step_timeout, `on_timeout(step)` is called from a watchdog thread
    when a step runs longer (a query blocked in libpq cannot be interrupted
    from DuckDB, so the caller typically kills the server), and the step's
    error is prefixed with "TIMEOUT"."""
    results: list[StepResult] = []
    consecutive = 0
    for step in steps:
        sql = step.render(attach)
        if max_consecutive_errors is not None and consecutive >= max_consecutive_errors:
            results.append(StepResult(step.name, sql, ok=False,
                                      error=f"Not run: {consecutive} previous steps failed"))
            continue
        started = time.monotonic()
        fired = threading.Event()
        watchdog = None
        if step_timeout is not None:
            def expire(step=step):
                fired.set()
                try:
                    con.interrupt()
                finally:
                    if on_timeout:
                        on_timeout(step)
            watchdog = threading.Timer(step_timeout, expire)
            watchdog.daemon = True
            watchdog.start()
        try:
            cur = con.execute(sql)
            rows = cur.fetchall() if step.returns_rows else None
            if rows is not None:
                rows = [normalize(list(r)) for r in rows]
                if not step.ordered:
                    rows.sort(key=_sort_key)
            res = StepResult(step.name, sql, ok=True, rows=rows)
            consecutive = 0
        except Exception as exc:  # duckdb.Error and friends
            res = StepResult(step.name, sql, ok=False, error=f"{exc}")
            consecutive += 1
        finally:
            if watchdog is not None:
                watchdog.cancel()
        if fired.is_set():
            res = StepResult(step.name, sql, ok=False,
                             error=f"TIMEOUT after {step_timeout:.0f}s: "
                                   f"{res.error if not res.ok else 'finished late'}")
            consecutive += 1 if res.ok else 0
        res.seconds = time.monotonic() - started
        results.append(res)
        if on_step:
            on_step(res)
    return results


def compare(expected: Iterable[StepResult], actual: Iterable[StepResult],
            max_report: int = 5) -> list[str]:
    """Human-readable differences between two runs of the same steps (empty if equal)."""
    diffs = []
    for exp, act in zip(expected, actual):
        if exp.outcome() != act.outcome():
            diffs.append(
                f"step {exp.name!r}:\n    sql:      {act.sql}\n"
                f"    expected: {_clip(exp.show())}\n    got:      {_clip(act.show())}")
    return diffs[:max_report] + ([f"... and {len(diffs) - max_report} more differing steps"]
                                 if len(diffs) > max_report else [])


def _clip(text: str, limit: int = 600) -> str:
    text = text.replace("\n", " | ")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def by_name(results: Iterable[StepResult]) -> dict[str, StepResult]:
    return {r.name: r for r in results}
