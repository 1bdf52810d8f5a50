"""The session's time zone (`TimeZone`), differential against a real
PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1): how `timestamptz` values are shown
and read, the casts and functions that work on local time (date_trunc,
extract, to_char, age, adding days and months across daylight-saving
changes, generate_series), in several zones; the forms of SET that change it
and how transactions undo them; and the zone a client starts with (libpq's
PGTZ, `options=-c TimeZone=...`).
"""

from __future__ import annotations

import psycopg
import pytest

ZONES = ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "+05:30", "UTC"]

QUERIES = [
    "SELECT '2020-06-01 12:00+00'::timestamptz, '2020-01-01 12:00'::timestamptz, "
    "'2020-03-29 02:30'::timestamptz, '2020-10-25 02:30'::timestamptz, "
    "'2020-03-08 02:30'::timestamptz, '2020-11-01 01:30'::timestamptz",
    "SELECT '2020-06-01 23:30+00'::timestamptz::date, '2020-06-01 23:30+00'::timestamptz::timestamp, "
    "'2020-06-01'::date::timestamptz, '2020-06-01 12:00'::timestamp::timestamptz, "
    "'2020-06-01 23:30+00'::timestamptz::time, '2020-06-01 23:30+00'::timestamptz::timetz, "
    "'2020-06-01 23:30+00'::timestamptz::text",
    "SELECT date_trunc('day', '2020-06-01 23:30+00'::timestamptz), "
    "date_trunc('month', '2020-03-31 23:30+00'::timestamptz), "
    "extract(hour FROM '2020-06-01 23:30+00'::timestamptz), "
    "extract(timezone FROM '2020-06-01 23:30+00'::timestamptz), "
    "extract(timezone_hour FROM '2020-01-01 00:00+00'::timestamptz), "
    "extract(epoch FROM '2020-06-01 23:30+00'::timestamptz), "
    "date_part('dow', '2020-06-01 23:30+00'::timestamptz)",
    "SELECT '2020-03-28 12:00'::timestamptz + interval '1 day', "
    "'2020-03-28 12:00'::timestamptz + interval '24 hours', "
    "'2020-01-31 12:00'::timestamptz + interval '1 month', "
    "'2020-11-01 00:00'::timestamptz - interval '1 day', "
    "'2020-10-24 12:00'::timestamptz + interval '1 day 1 hour'",
    "SELECT to_char('2020-06-01 23:30+00'::timestamptz, 'YYYY-MM-DD HH24:MI:SS TZ OF TZH TZM'), "
    "age('2020-06-01 00:30+00'::timestamptz, '2020-05-01 23:30+00'::timestamptz), "
    "make_timestamptz(2020, 6, 1, 12, 0, 0), make_timestamptz(2020, 6, 1, 12, 0, 0, 'UTC'), "
    "to_timestamp('2020-06-01 12', 'YYYY-MM-DD HH24')",
    "SELECT x FROM generate_series('2020-03-27'::timestamptz, '2020-03-31', '1 day') x",
    "SELECT '2020-06-01 12:00'::timestamp = '2020-06-01 12:00'::timestamptz, "
    "'2020-06-01'::date < '2020-06-01 00:30+00'::timestamptz, "
    "to_json('2020-06-01 12:00+00'::timestamptz), to_jsonb('2020-06-01 12:00+00'::timestamptz), "
    "'2020-06-01 12:00+00'::timestamptz AT TIME ZONE 'Asia/Tokyo', "
    "'2020-06-01 12:00'::timestamp AT TIME ZONE 'Asia/Tokyo'",
    "SELECT current_setting('TimeZone'), now() = current_timestamp, "
    "current_date = now()::date, localtimestamp = now()::timestamp",
]


def answers(dsn: str, zone: str) -> list:
    out = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"SET TimeZone = '{zone}'")
        for sql in QUERIES:
            for binary in (False, True):
                try:
                    with conn.cursor(binary=binary) as cur:
                        cur.execute(sql)
                        res = cur.pgresult
                        rows = [[res.get_value(r, c) for c in range(res.nfields)]
                                for r in range(res.ntuples)]
                        out.append(("rows", [res.ftype(c) for c in range(res.nfields)], rows))
                except psycopg.Error as error:
                    out.append(("error", error.sqlstate, str(error).splitlines()[0]))
    return out


SESSION_STEPS = [
    "SHOW TimeZone",
    "SET TIME ZONE 'Europe/Paris'", "SHOW TimeZone",
    "SET TIME ZONE -7", "SHOW TimeZone", "SELECT '2020-01-01 00:00+00'::timestamptz::text",
    "SET TIME ZONE 5.5", "SHOW TimeZone",
    "SET TIME ZONE LOCAL", "SHOW TimeZone",
    "SET timezone = 'asia/tokyo'", "SHOW TimeZone",
    "RESET TimeZone", "SHOW TimeZone",
    "SET timezone = 'Mars/Olympus'",
    "BEGIN", "SET timezone = 'Asia/Tokyo'", "ROLLBACK", "SHOW TimeZone",
    "BEGIN", "SET LOCAL timezone = 'Asia/Tokyo'", "SHOW TimeZone", "COMMIT", "SHOW TimeZone",
    "BEGIN", "SET timezone = 'Asia/Tokyo'", "SELECT 1/0", "ROLLBACK", "SHOW TimeZone",
    "BEGIN", "SET timezone = 'Asia/Tokyo'", "SET LOCAL timezone = 'UTC'", "COMMIT", "SHOW TimeZone",
    "SET LOCAL timezone = 'Europe/Berlin'", "SHOW TimeZone",
    "SET timezone = 'Asia/Kolkata'; SELECT 1/0", "SHOW TimeZone",
    "SET LOCAL timezone = 'Europe/Berlin'; SHOW TimeZone",
]


def session_steps(dsn: str) -> list:
    out = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        notices = []
        conn.add_notice_handler(lambda d: notices.append((d.severity, d.sqlstate, d.message_primary)))
        for sql in SESSION_STEPS:
            try:
                cur = conn.execute(sql)
                out.append(("ok", cur.fetchall() if cur.description else cur.statusmessage,
                            conn.info.parameter_status("TimeZone")))
            except psycopg.Error as error:
                out.append(("error", error.sqlstate, str(error).splitlines()[0]))
        out.append(("notices", notices))
    return out


def started_with(dsn: str) -> list:
    out = []
    for extra in ("options='-c TimeZone=Asia/Tokyo'", "options='-c timezone=Europe/Berlin -c statement_timeout=5s'"):
        with psycopg.connect(f"{dsn} {extra}", autocommit=True) as conn:
            out.append((conn.info.parameter_status("TimeZone"),
                        conn.execute("SELECT current_setting('TimeZone'), "
                                     "current_setting('statement_timeout'), "
                                     "'2020-01-01 00:00+00'::timestamptz::text").fetchone()))
            conn.execute("RESET ALL")
            out.append(conn.execute("SHOW TimeZone").fetchone())
    with pytest.raises(psycopg.OperationalError) as refused:
        psycopg.connect(f"{dsn} options='-c TimeZone=Mars/Olympus'")
    out.append("invalid value for parameter \"TimeZone\"" in str(refused.value))
    return out


@pytest.mark.rocklake
def test_time_zones_answer_as_on_postgresql(pg_server, rocklake):
    rocklake.start()
    reference = pg_server.dsn("postgres")
    for zone in ZONES:
        expected = answers(reference, zone)
        actual = answers(rocklake.dsn(), zone)
        for sql, want, got in zip([q for q in QUERIES for _ in (0, 1)], expected, actual):
            assert got == want, (zone, sql)
        assert all(kind == "rows" for kind, *_ in expected), expected
    assert session_steps(rocklake.dsn()) == session_steps(reference)
    assert started_with(rocklake.dsn()) == started_with(reference)
