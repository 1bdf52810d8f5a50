"""DuckLake feature conformance: one step list per feature group.

Each group runs on a fresh catalog, the same way on RockLake and on the
reference catalogs (see test_conformance.py); the results are compared step by
step.  Only values that are deterministic across backends are selected: no
file paths, UUIDs or absolute times (times are used only relative to the same
backend's own `ducklake_snapshots`).  TIMESTAMPTZ values are selected as text
with the session time zone fixed to UTC.

Snapshot ids are computed by DuckDB, so they are the same on every correct
backend; the comments give the snapshot each step creates where it matters.

docs/conformance.md lists every feature with the group and step proving it.
"""

from __future__ import annotations

import dataclasses

from workload import Step


@dataclasses.dataclass(frozen=True)
class AttachStep(Step):
    """The backend's ATTACH with extra options, e.g. SNAPSHOT_VERSION."""
    options: str = ""

    def render(self, attach: str) -> str:
        assert attach.endswith(")"), attach
        return f"{attach[:-1]}, {self.options})"

S = Step  # short alias for the tables below


def ddl(name: str, sql: str) -> Step:
    return Step(name, sql, returns_rows=False)


ATTACH = ddl("attach", "{attach}")
SETUP = [ATTACH, ddl("utc", "SET TimeZone = 'UTC'"), ddl("one_thread", "SET threads = 1")]
REATTACH = [ddl("detach", "DETACH l"), ddl("reattach", "{attach}")]

# --------------------------------------------------------------------------
# Views, macros, comments
# --------------------------------------------------------------------------
VIEWS_MACROS_COMMENTS: list[Step] = SETUP + [
    ddl("create_table", "CREATE TABLE l.t (id INTEGER, name VARCHAR)"),
    S("insert", "INSERT INTO l.t VALUES (1, 'a'), (2, 'b'), (3, 'c')"),
    ddl("create_view", "CREATE VIEW l.v AS SELECT id FROM l.t WHERE id > 1"),
    S("select_view", "SELECT * FROM l.v ORDER BY id", ordered=True),
    ddl("replace_view", "CREATE OR REPLACE VIEW l.v AS SELECT id, name FROM l.t WHERE id < 3"),
    S("select_replaced_view", "SELECT * FROM l.v ORDER BY id", ordered=True),
    ddl("create_existing_view_fails", "CREATE VIEW l.v AS SELECT 1 AS x"),
    ddl("create_view_if_not_exists", "CREATE VIEW IF NOT EXISTS l.v AS SELECT 1 AS x"),
    ddl("create_schema", "CREATE SCHEMA l.s"),
    ddl("create_view_in_schema",
        "CREATE VIEW l.s.cnt AS SELECT count(*) AS n, max(name) AS m FROM l.main.t"),
    S("select_view_in_schema", "SELECT * FROM l.s.cnt"),
    S("view_definitions",
      "SELECT schema_name, view_name FROM duckdb_views() WHERE database_name = 'l'"),
    ddl("comment_table", "COMMENT ON TABLE l.t IS 'the table'"),
    ddl("comment_column", "COMMENT ON COLUMN l.t.name IS 'the name'"),
    ddl("comment_view", "COMMENT ON VIEW l.v IS 'the view'"),
    S("table_comments",
      "SELECT table_name, comment FROM duckdb_tables() WHERE database_name = 'l'"),
    S("view_comments",
      "SELECT view_name, comment FROM duckdb_views() WHERE database_name = 'l'"),
    S("column_comments",
      "SELECT column_name, comment FROM duckdb_columns() "
      "WHERE database_name = 'l' AND table_name = 't'"),
    ddl("comment_change", "COMMENT ON TABLE l.t IS 'changed'"),
    ddl("comment_remove", "COMMENT ON COLUMN l.t.name IS NULL"),
    S("comments_after_change",
      "SELECT column_name, comment FROM duckdb_columns() "
      "WHERE database_name = 'l' AND table_name = 't' "
      "UNION ALL SELECT table_name, comment FROM duckdb_tables() WHERE database_name = 'l'"),
    ddl("scalar_macro_default", "CREATE MACRO l.add_to(a, b := 5) AS a + b"),
    S("use_scalar_macro", "SELECT l.add_to(1), l.add_to(1, b := 2)"),
    ddl("table_macro", "CREATE MACRO l.from_id(k) AS TABLE SELECT * FROM l.t WHERE id >= k"),
    S("use_table_macro", "SELECT * FROM l.from_id(2) ORDER BY id", ordered=True),
    ddl("replace_macro", "CREATE OR REPLACE MACRO l.add_to(a, b) AS a * b"),
    S("use_replaced_macro", "SELECT l.add_to(3, 4)"),
    S("list_macros",
      "SELECT function_name, function_type FROM duckdb_functions() "
      "WHERE database_name = 'l' AND function_type LIKE '%macro%'"),
    *REATTACH,
    S("reattach_view", "SELECT * FROM l.v ORDER BY id", ordered=True),
    S("reattach_comments",
      "SELECT table_name, comment FROM duckdb_tables() WHERE database_name = 'l' "
      "UNION ALL SELECT view_name, comment FROM duckdb_views() WHERE database_name = 'l'"),
    S("reattach_macros", "SELECT l.add_to(3, 4), (SELECT count(*) FROM l.from_id(3))"),
    ddl("drop_macro", "DROP MACRO l.add_to"),
    S("dropped_macro_fails", "SELECT l.add_to(1, 2)"),
    ddl("drop_table_macro", "DROP MACRO TABLE l.from_id"),
    ddl("drop_view", "DROP VIEW l.v"),
    S("dropped_view_fails", "SELECT * FROM l.v"),
    ddl("drop_missing_view_fails", "DROP VIEW l.v"),
    ddl("drop_view_if_exists", "DROP VIEW IF EXISTS l.v"),
    S("views_left", "SELECT schema_name, view_name FROM duckdb_views() WHERE database_name = 'l'"),
    S("time_travel_view", "SELECT count(*) FROM l.t AT (VERSION => 2)"),
    S("snapshots",
      "SELECT snapshot_id, schema_version, changes FROM ducklake_snapshots('l') "
      "ORDER BY snapshot_id", ordered=True),
]

# --------------------------------------------------------------------------
# Every scalar type and nested types, inlined and after flushing to Parquet
# --------------------------------------------------------------------------
_TYPE_COLUMNS = [
    ("c_bool", "BOOLEAN", "true", "false"),
    ("c_ti", "TINYINT", "-128", "127"),
    ("c_si", "SMALLINT", "-32768", "32767"),
    ("c_i", "INTEGER", "-2147483648", "2147483647"),
    ("c_bi", "BIGINT", "-9223372036854775808", "9223372036854775807"),
    ("c_hi", "HUGEINT", "-12345678901234567890123456789", "99999999999999999999999999999999999999"),
    ("c_uti", "UTINYINT", "0", "255"),
    ("c_usi", "USMALLINT", "0", "65535"),
    ("c_ui", "UINTEGER", "0", "4294967295"),
    ("c_ubi", "UBIGINT", "0", "18446744073709551615"),
    ("c_uhi", "UHUGEINT", "0", "200000000000000000000000000000000000000"),
    ("c_d41", "DECIMAL(4,1)", "-999.9", "999.9"),
    ("c_d93", "DECIMAL(9,3)", "-999999.999", "123456.789"),
    ("c_d186", "DECIMAL(18,6)", "-999999999999.999999", "0.000001"),
    ("c_d3810", "DECIMAL(38,10)", "-9999999999999999999999999999.9999999999",
     "1234567890123456789012345678.0123456789"),
    ("c_f", "FLOAT", "-3.4e38", "1.5"),
    ("c_db", "DOUBLE", "-1.7976931348623157e308", "2.718281828459045"),
    ("c_date", "DATE", "'0001-01-01'", "'9999-12-31'"),
    ("c_time", "TIME", "'00:00:00'", "'23:59:59.999999'"),
    ("c_timetz", "TIMETZ", "'00:00:00+15:59'", "'12:34:56.789-07:00'"),
    ("c_ts", "TIMESTAMP", "'1970-01-01 00:00:00'", "'2262-04-11 23:47:16.854775'"),
    ("c_ts_s", "TIMESTAMP_S", "'1900-01-01 00:00:01'", "'2024-02-29 12:00:00'"),
    ("c_ts_ms", "TIMESTAMP_MS", "'1999-12-31 23:59:59.999'", "'2024-02-29 12:00:00.001'"),
    ("c_ts_ns", "TIMESTAMP_NS", "'1970-01-01 00:00:00.000000001'",
     "'2024-02-29 12:00:00.123456789'"),
    ("c_tstz", "TIMESTAMPTZ", "'2000-01-01 00:00:00+00'", "'2024-06-30 23:59:59.5+02'"),
    ("c_iv", "INTERVAL", "INTERVAL '0 seconds'", "INTERVAL '1 year 2 months 3 days 04:05:06.789'"),
    ("c_uuid", "UUID", "'00000000-0000-0000-0000-000000000000'",
     "'ffffffff-ffff-ffff-ffff-ffffffffffff'"),
    ("c_blob", "BLOB", "'\\x00\\xFF'::BLOB", "'abc\\x0A\\x00'::BLOB"),
    ("c_vc", "VARCHAR", "''", "'ünï''cödé \"q\" \\ tab\t end'"),
]

_CREATE_TYPES = ("CREATE TABLE l.types (id INTEGER, "
                 + ", ".join(f"{c} {t}" for c, t, _, _ in _TYPE_COLUMNS) + ")")
_INSERT_TYPES = (
    "INSERT INTO l.types VALUES "
    f"(1, {', '.join(lo for _, _, lo, _ in _TYPE_COLUMNS)}), "
    f"(2, {', '.join(hi for _, _, _, hi in _TYPE_COLUMNS)}), "
    f"(3, {', '.join('NULL' for _ in _TYPE_COLUMNS)})")
# Every value as DuckDB prints it, so the comparison is exact to the last digit.
_SELECT_TYPES = "SELECT id, COLUMNS(c -> c LIKE 'c\\_%' ESCAPE '\\')::VARCHAR FROM l.types ORDER BY id"
_TYPEOF_TYPES = ("SELECT typeof(COLUMNS(*)) FROM l.types LIMIT 1")

TYPES: list[Step] = SETUP + [
    ddl("create_types", _CREATE_TYPES),
    S("insert_types_inlined", _INSERT_TYPES),
    S("select_types_inlined", _SELECT_TYPES, ordered=True),
    S("typeof_inlined", _TYPEOF_TYPES),
    S("float_specials_inlined",
      "INSERT INTO l.types (id, c_f, c_db) VALUES (4, 'nan', '-inf'), (5, 'inf', 'nan'), "
      "(6, '-0.0', '-0.0')"),
    S("select_float_specials",
      "SELECT id, c_f::VARCHAR, c_db::VARCHAR, isnan(c_db), c_db = 'nan'::DOUBLE FROM l.types "
      "WHERE id >= 4 ORDER BY id", ordered=True),
    S("filters_inlined",
      "SELECT count(*) FILTER (c_hi > 0), count(*) FILTER (c_uhi > 1), "
      "count(*) FILTER (c_d3810 < 0), count(*) FILTER (c_date > DATE '2000-01-01'), "
      "count(*) FILTER (c_ts_ns > TIMESTAMP_NS '1970-01-01 00:00:00'), "
      "count(*) FILTER (c_vc = ''), count(*) FILTER (c_blob = '\\x00\\xFF'::BLOB), "
      "count(*) FILTER (c_uuid > '00000000-0000-0000-0000-000000000000'), "
      "count(*) FILTER (c_db > 0), count(*) FILTER (c_f IS NULL) FROM l.types"),
    ddl("create_nested",
        "CREATE TABLE l.nested (id INTEGER, l INTEGER[], ls VARCHAR[], "
        "st STRUCT(a INTEGER, b VARCHAR), m MAP(VARCHAR, INTEGER), "
        "ll INTEGER[][], lst STRUCT(x DOUBLE, y DATE)[], sl STRUCT(k VARCHAR, v INTEGER[]))"),
    S("insert_nested_inlined",
      "INSERT INTO l.nested VALUES "
      "(1, [1, 2, NULL], ['a', 'b''c', ''], {'a': 1, 'b': 'x'}, MAP {'k1': 1, 'k2': NULL}, "
      "[[1], [], NULL], [{'x': 1.5, 'y': DATE '2024-01-01'}], {'k': 'z', 'v': [7, 8]}), "
      "(2, [], [], {'a': NULL, 'b': NULL}, MAP {}, [], [], {'k': NULL, 'v': []}), "
      "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"),
    S("select_nested_inlined", "SELECT * FROM l.nested ORDER BY id", ordered=True),
    S("nested_access_inlined",
      "SELECT id, l[1], len(ls), st.b, m['k1'], ll[1], lst[1].y, sl.v[2] FROM l.nested "
      "ORDER BY id", ordered=True),
    S("flush", "SELECT schema_name, table_name, rows_flushed FROM ducklake_flush_inlined_data('l')"),
    S("select_types_parquet", _SELECT_TYPES, ordered=True),
    S("typeof_parquet", _TYPEOF_TYPES),
    S("select_float_specials_parquet",
      "SELECT id, c_f::VARCHAR, c_db::VARCHAR, isnan(c_db), c_db = 'nan'::DOUBLE FROM l.types "
      "WHERE id >= 4 ORDER BY id", ordered=True),
    S("filters_parquet",
      "SELECT count(*) FILTER (c_hi > 0), count(*) FILTER (c_uhi > 1), "
      "count(*) FILTER (c_d3810 < 0), count(*) FILTER (c_date > DATE '2000-01-01'), "
      "count(*) FILTER (c_ts_ns > TIMESTAMP_NS '1970-01-01 00:00:00'), "
      "count(*) FILTER (c_vc = ''), count(*) FILTER (c_blob = '\\x00\\xFF'::BLOB), "
      "count(*) FILTER (c_uuid > '00000000-0000-0000-0000-000000000000'), "
      "count(*) FILTER (c_db > 0), count(*) FILTER (c_f IS NULL) FROM l.types"),
    S("pruned_read_parquet",
      "SELECT id FROM l.types WHERE c_i = 2147483647 OR c_date = DATE '0001-01-01' ORDER BY id",
      ordered=True),
    S("select_nested_parquet", "SELECT * FROM l.nested ORDER BY id", ordered=True),
    S("nested_access_parquet",
      "SELECT id, l[1], len(ls), st.b, m['k1'], ll[1], lst[1].y, sl.v[2] FROM l.nested "
      "ORDER BY id", ordered=True),
    S("file_counts",
      "SELECT table_name, file_count, delete_file_count FROM ducklake_table_info('l')"),
    S("column_stats_via_time_travel",
      "SELECT count(*) FROM l.types AT (VERSION => 3)"),
    # Known stock DuckDB/DuckLake bugs, expected identically on every catalog.
    ddl("create_extremes", "CREATE TABLE l.extremes (h HUGEINT, uh UHUGEINT, iv INTERVAL, d DATE, ts TIMESTAMP)"),
    S("insert_extremes",
      "INSERT INTO l.extremes VALUES (-170141183460469231731687303715884105728, "
      "340282366920938463463374607431768211455, INTERVAL '-1 day', 'infinity', '-infinity')"),
    S("select_extremes_inlined", "SELECT h, uh, iv, d::VARCHAR, ts::VARCHAR FROM l.extremes"),
    S("flush_negative_interval_fails",
      "SELECT table_name, rows_flushed FROM ducklake_flush_inlined_data('l', table_name => 'extremes')"),
    S("delete_negative_interval", "DELETE FROM l.extremes"),
    S("insert_hugeint_min",
      "INSERT INTO l.extremes (h, uh, d, ts) VALUES (-170141183460469231731687303715884105728, "
      "340282366920938463463374607431768211455, 'infinity', '-infinity')"),
    S("select_extremes_after_delete", "SELECT h, uh, iv, d::VARCHAR, ts::VARCHAR FROM l.extremes"),
    S("flush_after_delete_still_fails",
      "SELECT table_name, rows_flushed FROM ducklake_flush_inlined_data('l', table_name => 'extremes')"),
    ddl("create_big", "CREATE TABLE l.big (h HUGEINT, uh UHUGEINT)"),
    S("insert_big", "INSERT INTO l.big VALUES (-170141183460469231731687303715884105728, "
      "340282366920938463463374607431768211455)"),
    S("flush_big", "SELECT table_name, rows_flushed FROM ducklake_flush_inlined_data('l', table_name => 'big')"),
    S("read_big_after_flush_fails", "SELECT h::VARCHAR, uh::VARCHAR FROM l.big"),
    # TIME_NS: DuckLake types the inlined-data table column TIME_NS, which
    # PostgreSQL does not know, so the commit fails there (and on RockLake);
    # a DuckDB-file catalog accepts it (FILE_CATALOG_DIFFERS).
    ddl("time_ns_fails", "CREATE TABLE l.tns (c TIME_NS)"),
]

# --------------------------------------------------------------------------
# Schema evolution: type change, defaults, NOT NULL
# --------------------------------------------------------------------------
SCHEMA_EVOLUTION: list[Step] = SETUP + [
    ddl("create", "CREATE TABLE l.e (id INTEGER, v INTEGER, f FLOAT)"),
    S("insert_inlined", "INSERT INTO l.e VALUES (1, 10, 1.5), (2, 20, 2.5)"),
    S("insert_parquet",
      "INSERT INTO l.e SELECT i::INTEGER, i::INTEGER, i / 4 FROM range(100, 1100) r(i)"),
    ddl("alter_type_int_bigint", "ALTER TABLE l.e ALTER COLUMN v TYPE BIGINT"),
    ddl("alter_type_float_double", "ALTER TABLE l.e ALTER COLUMN f SET DATA TYPE DOUBLE"),
    S("insert_bigint", "INSERT INTO l.e VALUES (3, 9223372036854775807, 1e300)"),
    S("select_after_type_change",
      "SELECT id, v, f FROM l.e WHERE id < 10 OR id = 1099 ORDER BY id", ordered=True),
    S("typeof_after_type_change", "SELECT typeof(v), typeof(f) FROM l.e LIMIT 1"),
    ddl("alter_type_narrowing_fails", "ALTER TABLE l.e ALTER COLUMN v TYPE INTEGER"),
    ddl("alter_type_to_varchar_fails", "ALTER TABLE l.e ALTER COLUMN id TYPE VARCHAR"),
    ddl("add_column_default", "ALTER TABLE l.e ADD COLUMN w VARCHAR DEFAULT 'dflt'"),
    ddl("add_column_int_default", "ALTER TABLE l.e ADD COLUMN z INTEGER DEFAULT 7"),
    S("select_defaults_on_old_rows",
      "SELECT id, w, z FROM l.e WHERE id < 10 OR id = 1099 ORDER BY id", ordered=True),
    S("insert_using_defaults", "INSERT INTO l.e (id, v) VALUES (4, 4)"),
    S("insert_overriding_default", "INSERT INTO l.e VALUES (5, 5, 5, 'given', NULL)"),
    S("select_defaults", "SELECT id, v, w, z FROM l.e WHERE id < 10 ORDER BY id", ordered=True),
    ddl("set_default", "ALTER TABLE l.e ALTER COLUMN w SET DEFAULT 'other'"),
    S("insert_new_default", "INSERT INTO l.e (id) VALUES (6)"),
    ddl("drop_default", "ALTER TABLE l.e ALTER COLUMN z DROP DEFAULT"),
    S("insert_no_default", "INSERT INTO l.e (id) VALUES (7)"),
    S("select_after_default_changes", "SELECT id, w, z FROM l.e WHERE id >= 6 AND id < 10 "
      "ORDER BY id", ordered=True),
    ddl("set_not_null", "ALTER TABLE l.e ALTER COLUMN id SET NOT NULL"),
    S("insert_null_fails", "INSERT INTO l.e (id) VALUES (NULL)"),
    ddl("drop_not_null", "ALTER TABLE l.e ALTER COLUMN id DROP NOT NULL"),
    S("insert_null_ok", "INSERT INTO l.e (id, v) VALUES (NULL, -1)"),
    S("describe",
      "SELECT column_name, data_type, column_default, is_nullable FROM information_schema.columns "
      "WHERE table_catalog = 'l' AND table_name = 'e' ORDER BY ordinal_position", ordered=True),
    S("flush", "SELECT table_name, rows_flushed FROM ducklake_flush_inlined_data('l')"),
    S("select_after_flush",
      "SELECT id, v, f, w, z FROM l.e WHERE id IS NULL OR id < 10 OR id = 1099 ORDER BY id",
      ordered=True),
    S("aggregate_after_flush", "SELECT count(*), sum(v), count(w), sum(z) FROM l.e"),
    S("time_travel_before_type_change",
      "SELECT typeof(v), count(*), sum(v) FROM l.e AT (VERSION => 3) GROUP BY ALL"),
    S("time_travel_before_defaults",
      "SELECT * FROM l.e AT (VERSION => 6) WHERE id < 10 ORDER BY id", ordered=True),
    *REATTACH,
    S("reattach_select", "SELECT count(*), sum(v), count(w), sum(z) FROM l.e"),
]

# --------------------------------------------------------------------------
# Partitioning and sorting
# --------------------------------------------------------------------------
PARTITION_SORT: list[Step] = SETUP + [
    ddl("create", "CREATE TABLE l.p (id INTEGER, kind VARCHAR, ts TIMESTAMP)"),
    ddl("partition_by_kind", "ALTER TABLE l.p SET PARTITIONED BY (kind)"),
    S("insert_partitioned",
      "INSERT INTO l.p SELECT i::INTEGER, chr(97 + (i % 3)::INTEGER), "
      "TIMESTAMP '2023-11-01' + INTERVAL (i) HOUR FROM range(1000) r(i)"),
    S("files_per_partition", "SELECT count(*), count(delete_file) FROM ducklake_list_files('l', 'p')"),
    S("pruned_read", "SELECT count(*), min(id), max(id) FROM l.p WHERE kind = 'b'"),
    S("group_by_partition", "SELECT kind, count(*), sum(id) FROM l.p GROUP BY kind"),
    ddl("partition_by_time", "ALTER TABLE l.p SET PARTITIONED BY (year(ts), month(ts))"),
    S("insert_time_partitioned",
      "INSERT INTO l.p SELECT i::INTEGER, 'd', TIMESTAMP '2023-12-25' + INTERVAL (i) HOUR "
      "FROM range(1000, 2000) r(i)"),
    S("files_after_time_partitioning", "SELECT count(*) FROM ducklake_list_files('l', 'p')"),
    S("pruned_time_read",
      "SELECT count(*), min(id), max(id) FROM l.p WHERE ts >= TIMESTAMP '2024-01-01'"),
    S("pruned_time_and_kind_read",
      "SELECT kind, count(*) FROM l.p WHERE ts < TIMESTAMP '2024-01-01' AND kind IN ('a', 'd') "
      "GROUP BY kind"),
    ddl("partition_by_bucket", "ALTER TABLE l.p SET PARTITIONED BY (bucket(4, id))"),
    S("insert_bucket_partitioned",
      "INSERT INTO l.p SELECT i::INTEGER, 'g', TIMESTAMP '2022-01-01' FROM range(4000, 4100) r(i)"),
    S("files_after_bucket_partitioning", "SELECT count(*) FROM ducklake_list_files('l', 'p')"),
    S("pruned_bucket_read", "SELECT count(*), sum(id) FROM l.p WHERE id = 4017"),
    ddl("reset_partitioning", "ALTER TABLE l.p RESET PARTITIONED BY"),
    S("insert_unpartitioned",
      "INSERT INTO l.p SELECT i::INTEGER, 'e', TIMESTAMP '2025-01-01' FROM range(2000, 2100) r(i)"),
    S("files_after_reset", "SELECT count(*) FROM ducklake_list_files('l', 'p')"),
    S("partition_time_travel", "SELECT count(*) FROM l.p AT (VERSION => 3) WHERE kind = 'a'"),
    S("merge_partitioned",
      "SELECT table_name, files_processed, files_created FROM ducklake_merge_adjacent_files('l')"),
    S("files_after_merge", "SELECT count(*) FROM ducklake_list_files('l', 'p')"),
    S("read_after_merge", "SELECT kind, count(*), sum(id) FROM l.p GROUP BY kind"),
    ddl("create_sorted", "CREATE TABLE l.srt (id INTEGER, k VARCHAR)"),
    ddl("sort_desc", "ALTER TABLE l.srt SET SORTED BY (id DESC)"),
    S("insert_sorted",
      "INSERT INTO l.srt SELECT (i * 7919 % 1000)::INTEGER, 'k' || i FROM range(1000) r(i)"),
    S("file_order_desc", "SELECT id FROM l.srt LIMIT 5", ordered=True),
    ddl("sort_by_two", "ALTER TABLE l.srt SET SORTED BY (k ASC, id ASC)"),
    S("insert_sorted_2",
      "INSERT INTO l.srt SELECT (i * 7919 % 1000)::INTEGER, 'z' || (i % 7) FROM range(1000) r(i)"),
    S("file_order_two_keys", "SELECT k, id FROM l.srt WHERE k LIKE 'z%' LIMIT 3", ordered=True),
    ddl("reset_sorted", "ALTER TABLE l.srt RESET SORTED BY"),
    S("sorted_counts", "SELECT count(*), sum(id) FROM l.srt"),
    *REATTACH,
    S("reattach_partitioned_read", "SELECT kind, count(*) FROM l.p GROUP BY kind"),
    S("reattach_insert_partitioned",
      "INSERT INTO l.p SELECT i::INTEGER, 'f', TIMESTAMP '2025-01-01' FROM range(3000, 3010) r(i)"),
]

# --------------------------------------------------------------------------
# Deletes with delete files, time travel, change feed, table info
# --------------------------------------------------------------------------
# Snapshots: 1 create, 2 parquet insert, 3 delete (delete file), 4 update,
# 5 inlined insert, 6 delete of an inlined row.
DELETES_TIME_TRAVEL: list[Step] = SETUP + [
    ddl("create", "CREATE TABLE l.d (id INTEGER, v VARCHAR)"),
    S("insert_parquet", "INSERT INTO l.d SELECT i::INTEGER, 'v' || i FROM range(2000) r(i)"),
    S("delete_from_parquet", "DELETE FROM l.d WHERE id % 3 = 0"),
    S("files_with_deletes",
      "SELECT count(*), count(delete_file) FROM ducklake_list_files('l', 'd')"),
    S("table_info",
      "SELECT table_name, schema_id, table_id, file_count, delete_file_count "
      "FROM ducklake_table_info('l')"),
    S("update", "UPDATE l.d SET v = 'updated' WHERE id < 10"),
    S("insert_inlined", "INSERT INTO l.d VALUES (5000, 'x'), (5001, 'y'), (5002, 'z')"),
    S("delete_inlined", "DELETE FROM l.d WHERE id = 5001"),
    S("current", "SELECT count(*), sum(id), count(*) FILTER (v = 'updated') FROM l.d"),
    S("tt_v2", "SELECT count(*), sum(id) FROM l.d AT (VERSION => 2)"),
    S("tt_v3", "SELECT count(*), sum(id) FROM l.d AT (VERSION => 3)"),
    S("tt_v4", "SELECT id, v FROM l.d AT (VERSION => 4) WHERE id < 10 ORDER BY id", ordered=True),
    S("tt_v5", "SELECT id, v FROM l.d AT (VERSION => 5) WHERE id >= 5000 ORDER BY id",
      ordered=True),
    S("tt_before_create_fails", "SELECT count(*) FROM l.d AT (VERSION => 0)"),
    S("tt_future_fails", "SELECT count(*) FROM l.d AT (VERSION => 99)"),
    ddl("ts_of_v3",
        "SET VARIABLE ts3 = (SELECT snapshot_time FROM ducklake_snapshots('l') "
        "WHERE snapshot_id = 3)"),
    S("tt_timestamp_v3", "SELECT count(*), sum(id) FROM l.d AT (TIMESTAMP => getvariable('ts3'))"),
    S("tt_timestamp_before_v3",
      "SELECT count(*), sum(id) FROM l.d "
      "AT (TIMESTAMP => getvariable('ts3') - INTERVAL 1 MICROSECOND)"),
    S("list_files_at_version",
      "SELECT count(*), count(delete_file) FROM ducklake_list_files('l', 'd', snapshot_version => 2)"),
    S("list_files_at_time",
      "SELECT count(*), count(delete_file) FROM ducklake_list_files('l', 'd', "
      "snapshot_time => getvariable('ts3'))"),
    S("changes_v3_v6",
      "SELECT snapshot_id, change_type, count(*), sum(id) FROM ducklake_table_changes("
      "'l', 'main', 'd', 3, 6) GROUP BY ALL ORDER BY ALL", ordered=True),
    S("changes_detail",
      "SELECT snapshot_id, change_type, id, v FROM ducklake_table_changes('l', 'main', 'd', 4, 6) "
      "WHERE id < 3 OR id >= 5000 ORDER BY ALL", ordered=True),
    S("insertions",
      "SELECT id, v FROM ducklake_table_insertions('l', 'main', 'd', 5, 6) ORDER BY id",
      ordered=True),
    S("deletions",
      "SELECT count(*), sum(id) FROM ducklake_table_deletions('l', 'main', 'd', 3, 4)"),
    S("insertions_by_time",
      "SELECT count(*) FROM ducklake_table_insertions('l', 'main', 'd', getvariable('ts3'), "
      "getvariable('ts3') + INTERVAL 1 DAY)"),
    ddl("detach_for_version", "DETACH l"),
    AttachStep("attach_at_version", "{attach}", returns_rows=False, options="SNAPSHOT_VERSION 3"),
    S("read_attached_version", "SELECT count(*), sum(id) FROM l.d"),
    S("write_to_attached_version_fails", "INSERT INTO l.d VALUES (1, 'no')"),
    *REATTACH,
    S("reattach_current", "SELECT count(*), sum(id) FROM l.d"),
    S("last_snapshot", "SELECT id FROM ducklake_current_snapshot('l')"),
]

# --------------------------------------------------------------------------
# Options at global, schema and table scope; commit messages
# --------------------------------------------------------------------------
_OPTIONS = ("SELECT option_name, value, scope, scope_entry FROM ducklake_options('l') "
            "WHERE option_name NOT IN ('data_path', 'created_by') ORDER BY ALL")
OPTIONS: list[Step] = SETUP + [
    S("options_initial", _OPTIONS, ordered=True),
    ddl("set_global", "CALL ducklake_set_option('l', 'data_inlining_row_limit', 5)"),
    ddl("create_schema", "CREATE SCHEMA l.s"),
    ddl("create_in_schema", "CREATE TABLE l.s.t (id INTEGER)"),
    ddl("create_in_main", "CREATE TABLE l.t2 (id INTEGER)"),
    ddl("set_schema", "CALL ducklake_set_option('l', 'parquet_compression', 'zstd', schema => 's')"),
    ddl("set_table",
        "CALL ducklake_set_option('l', 'data_inlining_row_limit', 100, table_name => 't2')"),
    ddl("set_schema_inline",
        "CALL ducklake_set_option('l', 'data_inlining_row_limit', 0, schema => 's')"),
    S("options_scoped", _OPTIONS, ordered=True),
    S("insert_schema_scoped", "INSERT INTO l.s.t SELECT i::INTEGER FROM range(3) r(i)"),
    S("insert_table_scoped", "INSERT INTO l.t2 SELECT i::INTEGER FROM range(50) r(i)"),
    S("insert_global_scoped", "CREATE TABLE l.t3 AS SELECT i::INTEGER AS id FROM range(8) r(i)"),
    S("files",
      "SELECT table_name, file_count FROM ducklake_table_info('l')"),
    ddl("set_unknown_option_fails", "CALL ducklake_set_option('l', 'no_such_option', 1)"),
    ddl("set_option_unknown_table_fails",
        "CALL ducklake_set_option('l', 'data_inlining_row_limit', 1, table_name => 'nope')"),
    ddl("overwrite_global", "CALL ducklake_set_option('l', 'data_inlining_row_limit', 20)"),
    S("options_after_overwrite", _OPTIONS, ordered=True),
    ddl("begin", "BEGIN"),
    S("commit_message", "CALL ducklake_set_commit_message('l', 'alice', 'add rows', "
      "extra_info => '{\"k\": 1}')", returns_rows=False),
    S("insert_with_message", "INSERT INTO l.t2 VALUES (1000)"),
    ddl("commit", "COMMIT"),
    S("snapshot_message",
      "SELECT snapshot_id, author, commit_message, commit_extra_info FROM ducklake_snapshots('l') "
      "ORDER BY snapshot_id DESC LIMIT 1", ordered=True),
    *REATTACH,
    S("options_after_reattach", _OPTIONS, ordered=True),
    S("settings", "SELECT extension_version IS NOT NULL FROM ducklake_settings('l')"),
]

# --------------------------------------------------------------------------
# Maintenance functions
# --------------------------------------------------------------------------
MAINTENANCE: list[Step] = SETUP + [
    ddl("create", "CREATE TABLE l.m (id INTEGER, v VARCHAR)"),
    S("inline_1", "INSERT INTO l.m VALUES (1, 'a'), (2, 'b')"),
    S("inline_2", "INSERT INTO l.m VALUES (3, 'c')"),
    S("flush_one_table",
      "SELECT schema_name, table_name, rows_flushed FROM ducklake_flush_inlined_data('l', "
      "schema_name => 'main', table_name => 'm')"),
    S("flush_nothing_left",
      "SELECT count(*) FROM ducklake_flush_inlined_data('l')"),
    ddl("no_inlining", "CALL ducklake_set_option('l', 'data_inlining_row_limit', 0)"),
    S("small_file_1", "INSERT INTO l.m SELECT i::INTEGER, 'p' FROM range(10, 20) r(i)"),
    S("small_file_2", "INSERT INTO l.m SELECT i::INTEGER, 'q' FROM range(20, 30) r(i)"),
    S("small_file_3", "INSERT INTO l.m SELECT i::INTEGER, 'r' FROM range(30, 40) r(i)"),
    S("files_before_merge", "SELECT count(*) FROM ducklake_list_files('l', 'm')"),
    S("merge", "SELECT table_name, files_processed, files_created "
               "FROM ducklake_merge_adjacent_files('l', 'm')"),
    S("files_after_merge", "SELECT count(*) FROM ducklake_list_files('l', 'm')"),
    S("read_after_merge", "SELECT count(*), sum(id), string_agg(DISTINCT v, ',' ORDER BY v) FROM l.m"),
    S("delete_for_rewrite", "DELETE FROM l.m WHERE id % 2 = 0"),
    S("files_with_deletes", "SELECT count(*), count(delete_file) FROM ducklake_list_files('l', 'm')"),
    S("rewrite", "SELECT table_name, files_processed, files_created "
                 "FROM ducklake_rewrite_data_files('l', 'm', delete_threshold => 0)"),
    S("files_after_rewrite",
      "SELECT count(*), count(delete_file) FROM ducklake_list_files('l', 'm')"),
    S("read_after_rewrite", "SELECT count(*), sum(id) FROM l.m"),
    S("tt_before_rewrite", "SELECT count(*), sum(id) FROM l.m AT (VERSION => 4)"),
    S("snapshots_before_expire", "SELECT snapshot_id FROM ducklake_snapshots('l') ORDER BY 1",
      ordered=True),
    S("expire_dry_run",
      "SELECT snapshot_id FROM ducklake_expire_snapshots('l', dry_run => true, versions => [2, 3]) "
      "ORDER BY 1", ordered=True),
    S("expire_versions",
      "SELECT snapshot_id FROM ducklake_expire_snapshots('l', versions => [2, 3]) ORDER BY 1",
      ordered=True),
    S("snapshots_after_expire_versions",
      "SELECT snapshot_id FROM ducklake_snapshots('l') ORDER BY 1", ordered=True),
    S("tt_expired_fails", "SELECT count(*) FROM l.m AT (VERSION => 2)"),
    S("tt_kept", "SELECT count(*) FROM l.m AT (VERSION => 5)"),
    ddl("time_of_last_snapshot",
        "SET VARIABLE last_ts = (SELECT max(snapshot_time) FROM ducklake_snapshots('l'))"),
    S("expire_older_than",
      "SELECT count(*) FROM ducklake_expire_snapshots('l', older_than => getvariable('last_ts'))"),
    S("snapshots_after_expire_older",
      "SELECT snapshot_id FROM ducklake_snapshots('l') ORDER BY 1", ordered=True),
    S("cleanup_dry_run",
      "SELECT count(*) > 0 FROM ducklake_cleanup_old_files('l', dry_run => true, cleanup_all => true)"),
    S("cleanup",
      "SELECT count(*) FROM ducklake_cleanup_old_files('l', cleanup_all => true)"),
    S("cleanup_again", "SELECT count(*) FROM ducklake_cleanup_old_files('l', cleanup_all => true)"),
    S("orphans_none",
      "SELECT count(*) FROM ducklake_delete_orphaned_files('l', cleanup_all => true)"),
    S("read_after_cleanup", "SELECT count(*), sum(id) FROM l.m"),
    ddl("inline_again", "CALL ducklake_set_option('l', 'data_inlining_row_limit', 10)"),
    S("inline_3", "INSERT INTO l.m VALUES (100, 'x')"),
    S("delete_parquet_row", "DELETE FROM l.m WHERE id = 11"),
    ddl("checkpoint", "CHECKPOINT l"),
    S("read_after_checkpoint", "SELECT count(*), sum(id) FROM l.m"),
    S("files_after_checkpoint",
      "SELECT count(*), count(delete_file) FROM ducklake_list_files('l', 'm')"),
    S("snapshot_count_after_checkpoint", "SELECT count(*) FROM ducklake_snapshots('l')"),
    *REATTACH,
    S("reattach_read", "SELECT count(*), sum(id) FROM l.m"),
]

# --------------------------------------------------------------------------
# Transactions and statements that must fail identically
# --------------------------------------------------------------------------
TRANSACTIONS_ERRORS: list[Step] = SETUP + [
    ddl("create", "CREATE TABLE l.t (id INTEGER, v VARCHAR NOT NULL)"),
    ddl("begin_ddl", "BEGIN"),
    ddl("create_in_tx", "CREATE TABLE l.tx (i INTEGER)"),
    S("insert_in_tx", "INSERT INTO l.tx VALUES (1), (2)"),
    S("read_in_tx", "SELECT sum(i) FROM l.tx"),
    ddl("rollback_ddl", "ROLLBACK"),
    S("rolled_back_table_fails", "SELECT * FROM l.tx"),
    ddl("begin_multi", "BEGIN"),
    S("insert_a", "INSERT INTO l.t VALUES (1, 'a'), (2, 'b')"),
    S("insert_parquet_in_tx", "INSERT INTO l.t SELECT i::INTEGER, 'p' FROM range(100, 1100) r(i)"),
    S("update_in_tx", "UPDATE l.t SET v = 'bb' WHERE id = 2"),
    ddl("alter_in_tx", "ALTER TABLE l.t ADD COLUMN extra INTEGER"),
    S("delete_in_tx", "DELETE FROM l.t WHERE id = 1"),
    S("own_writes", "SELECT count(*), sum(id), max(v) FROM l.t"),
    ddl("commit_multi", "COMMIT"),
    S("after_commit", "SELECT count(*), sum(id), max(v), count(extra) FROM l.t"),
    S("one_snapshot", "SELECT snapshot_id, changes FROM ducklake_snapshots('l') "
                      "ORDER BY snapshot_id DESC LIMIT 1", ordered=True),
    ddl("begin_drop", "BEGIN"),
    ddl("drop_in_tx", "DROP TABLE l.t"),
    S("dropped_in_tx_fails", "SELECT count(*) FROM l.t"),
    ddl("rollback_drop", "ROLLBACK"),
    S("table_back", "SELECT count(*) FROM l.t"),
    ddl("begin_error", "BEGIN"),
    S("insert_ok_in_tx", "INSERT INTO l.t VALUES (7, 'x', NULL)"),
    S("insert_not_null_fails", "INSERT INTO l.t VALUES (8, NULL, NULL)"),
    S("after_error_in_tx_fails", "SELECT count(*) FROM l.t"),
    ddl("rollback_after_error", "ROLLBACK"),
    S("nothing_from_failed_tx", "SELECT count(*), max(id) FROM l.t"),
    ddl("primary_key_fails", "CREATE TABLE l.pk (id INTEGER PRIMARY KEY)"),
    ddl("unique_fails", "CREATE TABLE l.uq (id INTEGER UNIQUE)"),
    ddl("fixed_array_fails", "CREATE TABLE l.arr (a INTEGER[3])"),
    ddl("enum_fails", "CREATE TABLE l.en (e ENUM('a', 'b'))"),
    ddl("union_fails", "CREATE TABLE l.un (u UNION(i INTEGER, s VARCHAR))"),
    S("unknown_table_fails", "SELECT * FROM l.nope"),
    S("unknown_column_fails", "SELECT nope FROM l.t"),
    ddl("create_existing_fails", "CREATE TABLE l.t (id INTEGER)"),
    ddl("create_if_not_exists", "CREATE TABLE IF NOT EXISTS l.t (id INTEGER)"),
    ddl("drop_unknown_fails", "DROP TABLE l.nope"),
    ddl("drop_if_exists", "DROP TABLE IF EXISTS l.nope"),
    ddl("alter_unknown_fails", "ALTER TABLE l.nope ADD COLUMN c INTEGER"),
    ddl("add_existing_column_fails", "ALTER TABLE l.t ADD COLUMN v INTEGER"),
    ddl("drop_unknown_column_fails", "ALTER TABLE l.t DROP COLUMN nope"),
    S("conversion_fails", "INSERT INTO l.t VALUES ('abc', 'x', NULL)"),
    S("not_null_fails", "INSERT INTO l.t (id) VALUES (9)"),
    ddl("unknown_schema_fails", "CREATE TABLE l.nope.t (i INTEGER)"),
    ddl("create_schema", "CREATE SCHEMA l.s"),
    ddl("create_in_schema", "CREATE TABLE l.s.x (i INTEGER)"),
    ddl("drop_nonempty_schema_fails", "DROP SCHEMA l.s"),
    ddl("drop_schema_cascade", "DROP SCHEMA l.s CASCADE"),
    S("schemas", "SELECT schema_name FROM duckdb_schemas() WHERE database_name = 'l'"),
    S("no_stray_snapshots", "SELECT count(*), max(snapshot_id) FROM ducklake_snapshots('l')"),
    *REATTACH,
    S("reattach_read", "SELECT count(*), sum(id), max(v) FROM l.t"),
]

GROUPS: dict[str, list[Step]] = {
    "views_macros_comments": VIEWS_MACROS_COMMENTS,
    "types": TYPES,
    "schema_evolution": SCHEMA_EVOLUTION,
    "partition_sort": PARTITION_SORT,
    "deletes_time_travel": DELETES_TIME_TRAVEL,
    "options": OPTIONS,
    "maintenance": MAINTENANCE,
    "transactions_errors": TRANSACTIONS_ERRORS,
}
