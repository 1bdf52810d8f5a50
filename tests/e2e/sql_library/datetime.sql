-- Date and time: interval input (every form and the field qualifiers),
-- PostgreSQL's operator table among date, time, timetz, timestamp,
-- timestamptz and interval, extract/date_part/date_trunc, the make_*,
-- justify_*, age, isfinite, date_bin, to_timestamp, AT TIME ZONE.
SELECT INTERVAL '1 day', INTERVAL '1 day 2 hours', INTERVAL '2 weeks', INTERVAL '1.5 days', INTERVAL '1.5 months'
SELECT INTERVAL '1.5 years', INTERVAL '3 weeks ago', INTERVAL '@ 1 minute', INTERVAL '-1 day +2 hours'
SELECT INTERVAL '2:03:04.5', INTERVAL '-00:00:01', INTERVAL '1 2:03:04', INTERVAL '1-2', INTERVAL '-1-2'
SELECT INTERVAL '7', INTERVAL '1 day 2', INTERVAL '1d 2h 3m 4s', INTERVAL '10 ms 5 us', INTERVAL '1 day 1 week'
SELECT INTERVAL '3 centuries 1 decade 1 millennium', INTERVAL '1.5 weeks', INTERVAL '0.1 sec', INTERVAL '-1.5 days'
SELECT INTERVAL 'P1Y2M3DT4H5M6S', INTERVAL 'P1W', INTERVAL 'PT1.5S', INTERVAL 'P0001-02-03T04:05:06'
SELECT INTERVAL '1 day ago 2', INTERVAL 'ago 2', INTERVAL '1 day ago ago'
SELECT INTERVAL '1' DAY, INTERVAL '2' YEAR, INTERVAL '1.5' YEAR, INTERVAL '90' MINUTE, INTERVAL '2' MONTH
SELECT INTERVAL '1:30' HOUR TO MINUTE, INTERVAL '1:30' MINUTE TO SECOND, INTERVAL '1 day 2 hours' DAY
SELECT INTERVAL '1 2' DAY TO HOUR, INTERVAL '1 2:03' DAY TO MINUTE, INTERVAL '1 2:03' HOUR TO SECOND, INTERVAL '25 months' YEAR
SELECT INTERVAL '1-2' YEAR TO MONTH, INTERVAL '1 day 2:03:04' DAY TO MINUTE
SELECT '7 days'::interval, '1 mon 2 days 03:04:05'::interval, '-1 years -2 mons'::interval
SELECT INTERVAL '1 2'
SELECT INTERVAL '2 ago'
SELECT INTERVAL '1 day 1 day'
SELECT INTERVAL '1 fortnight'
SELECT INTERVAL '99999999999 days'
SELECT INTERVAL ''
SELECT date '2024-01-31' + 1, 1 + date '2024-01-31', date '2024-03-01' - 1, date '2024-03-01' - date '2024-01-01'
SELECT date '2024-01-01' + time '10:30', time '10:30' + date '2024-01-01', date '2024-01-01' + timetz '10:30+02'
SELECT date '2024-01-31' + interval '1 month', date '2024-03-31' - interval '1 month', interval '1 day' + date '2024-01-01'
SELECT time '23:00' + interval '2 hours', time '01:00' - interval '2 hours', interval '30 minutes' + time '10:00'
SELECT time '10:00' - time '08:30', time '08:30' - time '10:00', timetz '10:00+02' + interval '1 hour'
SELECT timestamp '2024-01-31 10:00' + interval '1 month', timestamp '2024-02-29 10:00' + interval '1 year'
SELECT timestamp '2024-01-01' + interval '1 mon 1 day 1 hour', interval '1 hour' + timestamp '2024-01-01'
SELECT timestamp '2024-03-01' - timestamp '2024-01-01', timestamp '2024-01-01' - timestamp '2024-01-02 12:00'
SELECT timestamptz '2024-01-01 00:00+00' - timestamptz '2023-12-30 12:00+00', timestamptz '2024-01-01 00:00+00' + interval '36 hours'
SELECT interval '1 day' + interval '2 hours', interval '1 mon' - interval '1 day', - interval '1 day 2 hours'
SELECT interval '1 day' * 1.5, interval '1 mon' * 0.5, 2 * interval '1 hour 30 minutes', interval '1 mon' / 3, interval '1 day' / 7
SELECT interval '1 year' * 0.1, interval '1 day 1 hour' * -2.5, interval '36 hours' / 2
SELECT interval '1 day' / 0
SELECT date 'infinity' + 1, date '2024-01-01' - date 'infinity'
SELECT timestamp 'infinity' + interval '1 day', timestamp 'infinity' - timestamp '2024-01-01'
SELECT 3 - interval '1 day'
SELECT date '2024-01-01' + date '2024-01-02'
SELECT now() - interval '7 days' < now(), pg_typeof(now() - interval '7 days'), pg_typeof(current_date - 1)
SELECT extract(epoch FROM timestamp '2024-01-01 00:00:00.5'), extract(second FROM timestamp '2024-01-01 00:00:56.789')
SELECT extract(milliseconds FROM timestamp '2024-01-01 00:00:56.789'), extract(microseconds FROM timestamp '2024-01-01 00:00:56.789')
SELECT extract(julian FROM timestamp '2024-01-01 12:00'), extract(julian FROM date '2024-01-01')
SELECT extract(year FROM date '0001-01-01 BC'), extract(epoch FROM date '2024-01-01'), extract(epoch FROM interval '1 year 1 mon 1 day 00:00:01.5')
SELECT extract(week FROM date '2021-01-03'), extract(isoyear FROM date '2021-01-03'), extract(dow FROM date '2024-01-07'), extract(isodow FROM date '2024-01-07')
SELECT extract(doy FROM date '2024-12-31'), extract(quarter FROM date '2024-12-31'), extract(century FROM date '2000-12-31'), extract(millennium FROM date '2001-01-01')
SELECT extract(decade FROM date '0005-01-01 BC'), extract(century FROM date '0100-01-01 BC'), extract(year FROM timestamp '2024-05-06 07:08:09')
SELECT extract(month FROM timestamp '2024-05-06'), extract(day FROM timestamp '2024-05-06'), extract(hour FROM timestamp '2024-05-06 07:08:09')
SELECT extract(minute FROM time '07:08:09.5'), extract(second FROM time '07:08:09.5'), extract(epoch FROM time '01:00')
SELECT extract(hour FROM interval '-26 hours'), extract(day FROM interval '40 days'), extract(month FROM interval '14 months'), extract(year FROM interval '14 months')
SELECT extract(quarter FROM interval '7 months'), extract(century FROM interval '250 years'), extract(epoch FROM interval '-1 day')
SELECT extract(timezone FROM timestamptz '2024-01-01 00:00+00'), extract(timezone_hour FROM timetz '10:00+05:30'), extract(timezone_minute FROM timetz '10:00+05:30')
SELECT extract(year FROM date 'infinity'), extract(month FROM date 'infinity'), extract(epoch FROM timestamp '-infinity')
SELECT extract(hour FROM date '2024-01-01')
SELECT extract(foo FROM date '2024-01-01')
SELECT extract(dow FROM interval '1 day')
SELECT extract(year FROM time '10:00')
SELECT date_part('epoch', timestamp '2024-01-01 00:00:00.5'), date_part('second', interval '-1 day -00:00:01.25'), date_part('year', date '2024-05-05')
SELECT date_part('hours', timestamp '2024-01-01 10:00'), date_part('DOW', date '2024-01-01'), date_part('millennium', timestamp '2000-12-31')
SELECT date_trunc('week', timestamp '2024-01-03 10:00'), date_trunc('decade', timestamp '2024-05-05'), date_trunc('century', timestamp '2001-05-05')
SELECT date_trunc('millennium', date '2001-05-05'), date_trunc('year', timestamp '2024-05-05 10:11:12'), date_trunc('quarter', timestamp '2024-05-05')
SELECT date_trunc('month', timestamp '2024-05-05 10:11'), date_trunc('day', timestamp '2024-05-05 10:11'), date_trunc('hour', timestamp '2024-05-05 10:11:12.5')
SELECT date_trunc('minute', timestamp '2024-05-05 10:11:12.5'), date_trunc('second', timestamp '2024-05-05 10:11:12.5'), date_trunc('milliseconds', timestamp '2024-05-05 10:11:12.123456')
SELECT date_trunc('century', timestamp '0005-01-01 BC'), date_trunc('millennium', timestamp '0005-01-01 BC'), date_trunc('decade', timestamp '0005-01-01 BC')
SELECT date_trunc('hour', timestamptz '2024-05-05 10:33+00'), date_trunc('day', timestamptz '2024-07-01 23:30+00', 'Europe/Berlin'), date_trunc('month', timestamp 'infinity')
SELECT date_trunc('month', interval '1 year 5 mons 3 days'), date_trunc('year', interval '27 months'), date_trunc('hour', interval '1 day 02:33:44')
SELECT date_trunc('dow', timestamp '2024-01-01')
SELECT date_trunc('week', interval '1 day')
SELECT date_trunc('nonsense', timestamp '2024-01-01')
SELECT make_date(2024, 2, 29), make_date(-44, 3, 15), make_time(8, 15, 23.5), make_time(24, 0, 0)
SELECT make_timestamp(2024, 2, 29, 12, 30, 45.123456), make_timestamptz(2024, 7, 1, 12, 0, 0), make_timestamptz(2024, 7, 1, 12, 0, 0, 'Europe/Berlin')
SELECT make_interval(1, 2, 3, 4, 5, 6, 7.5), make_interval(days => 10), make_interval(hours => 1, mins => 30), make_interval()
SELECT make_interval(years => 1, secs => 0.5), make_interval(2, weeks => 1)
SELECT make_date(0, 1, 1)
SELECT make_date(2023, 2, 30)
SELECT make_time(25, 0, 0)
SELECT make_timestamp(2024, 13, 1, 0, 0, 0)
SELECT justify_days(interval '35 days'), justify_days(interval '1 mon -35 days'), justify_hours(interval '27 hours'), justify_hours(interval '-27 hours')
SELECT justify_interval(interval '1 mon -1 hour'), justify_interval(interval '-1 mon 32 days 25 hours'), justify_interval(interval '0')
SELECT age(timestamp '2024-03-01', timestamp '2023-12-31 12:00'), age(timestamp '2001-04-10', timestamp '1957-06-13'), age(timestamp '2023-12-31 12:00', timestamp '2024-03-01')
SELECT age(timestamp '2024-03-31', timestamp '2024-02-29'), age(timestamp '2024-01-01', timestamp '2024-01-01'), age(timestamptz '2024-06-01 00:00+00', timestamptz '2024-05-31 12:00+00')
SELECT isfinite(date 'infinity'), isfinite(date '2024-01-01'), isfinite(timestamp '-infinity'), isfinite(timestamptz '2024-01-01'), isfinite(interval '1 day')
SELECT to_timestamp(1704067200.5), to_timestamp(0), to_timestamp(-1), to_timestamp('infinity'::float8)
SELECT to_timestamp('NaN'::float8)
SELECT date_bin('15 minutes', timestamp '2024-01-01 10:37', timestamp '2000-01-01'), date_bin('1 day', timestamp '2024-01-01 10:37', timestamp '2000-01-01 06:00')
SELECT date_bin('15 minutes', timestamptz '2024-01-01 10:37+00', timestamptz '2000-01-01 00:00+00'), date_bin('1 hour', timestamp '1999-12-31 22:30', timestamp '2000-01-01')
SELECT date_bin('1 month', timestamp '2024-01-01', timestamp '2000-01-01')
SELECT date_bin('0 minutes', timestamp '2024-01-01', timestamp '2000-01-01')
SELECT timestamp '2024-10-27 02:30' AT TIME ZONE 'Europe/Berlin', timestamp '2024-03-31 02:30' AT TIME ZONE 'Europe/Berlin'
SELECT timestamptz '2024-07-01 12:00+00' AT TIME ZONE 'europe/berlin', timestamptz '2024-01-01 12:00+00' AT TIME ZONE 'America/New_York'
SELECT timestamptz '2024-07-01 12:00+00' AT TIME ZONE '+02', timestamptz '2024-07-01 12:00+00' AT TIME ZONE 'UTC+2', timestamptz '2024-07-01 12:00+00' AT TIME ZONE '-05:30'
SELECT timestamptz '2024-07-01 12:00+00' AT TIME ZONE INTERVAL '02:00', timestamptz '2024-07-01 12:00+00' AT TIME ZONE 'EST', timestamptz '2024-07-01 12:00+00' AT TIME ZONE 'CEST'
SELECT timestamptz '2024-07-01 12:00+00' AT TIME ZONE 'UTC', timezone('Asia/Kolkata', timestamptz '2024-07-01 12:00+00'), timezone('Asia/Tokyo', timestamp '2024-07-01 12:00')
SELECT timetz '12:00+03' AT TIME ZONE 'UTC', time '12:00' AT TIME ZONE 'UTC'
SELECT timestamptz '2024-07-01 12:00+00' AT TIME ZONE 'Mars/Olympus'
SELECT timestamptz '2024-07-01 12:00+00' AT TIME ZONE INTERVAL '1 day'
SELECT '2024-01-01 10:00'::timestamp::date, '2024-01-01 10:00'::timestamp::time, '10:30'::time::interval, '1 day 02:00'::interval::time
SELECT 'infinity'::timestamp::date, '-infinity'::date::timestamp
-- Series of timestamps.
SELECT generate_series('2024-01-01'::timestamp, '2024-01-02', '6 hours')
SELECT generate_series('2024-01-31'::date, '2024-05-01', '1 month')
SELECT * FROM generate_series(timestamptz '2024-01-01', '2024-01-03', interval '1 day') AS d
SELECT generate_series('2024-01-05'::timestamp, '2024-01-01', '-2 days'), generate_series('2024-01-01'::timestamp, '2024-01-02', '-1 day')
SELECT generate_series('2024-01-01'::timestamp, '2024-01-02', '0 days')
SELECT pg_typeof(generate_series('2024-01-01'::date, '2024-01-02', '1 day'))
SELECT count(*) FROM generate_series(timestamp '2024-01-01', timestamp '2024-12-31', interval '1 hour')
SELECT d, x FROM generate_series(1, 3) x, generate_series(timestamp '2024-01-01' + x * interval '1 day', timestamp '2024-01-04', interval '1 day') d ORDER BY 2, 1
-- Template patterns: to_char, to_date, to_timestamp(text, text).
SELECT to_char(timestamp '2024-03-05 14:07:09.123456', 'YYYY-MM-DD HH24:MI:SS.US MS FF3 HH HH12 am AM a.m. P.M.')
SELECT to_char(timestamp '2024-03-05 14:07:09', 'Month|month|MONTH|Mon|mon|MON|Day|day|DAY|Dy|dy|DY|FMMonth|FMDay')
SELECT to_char(timestamp '2024-03-05 14:07:09', 'Y,YYY YYYY YYY YY Y IYYY IYY IY I BC AD b.c. DDD IDDD DD D ID W WW IW CC J Q RM rm')
SELECT to_char(timestamp '2024-03-01 04:07:09', 'DDth DDTH FMDDth MMth HH24th SSSS SSSSS TZ tz OF TZH TZM')
SELECT to_char(timestamptz '2024-03-01 04:07:09+00', 'TZ tz OF TZH:TZM'), to_char(timestamp '2024-11-12 23:59:59', 'FF1 FF2 FF4 FF5 FF6 fmHH12th pm')
SELECT to_char(timestamp '0044-03-15 12:00:00 BC', 'YYYY BC Y,YYY CC'), to_char(date '2024-12-30', 'IYYY-IW-ID'), to_char(timestamp '12345-01-01', 'YYYY CC')
SELECT to_char(timestamp '2024-01-01 00:00', 'HH12 FMHH12 FMDD FMMM FMYYYY'), to_char(timestamp '2024-03-05', '"Year" YYYY "q"Q Yyyy'), to_char(date '2024-03-22', 'DDth Dth WWth')
SELECT to_char(timestamp 'infinity', 'YYYY'), to_char(NULL::timestamp, 'YYYY'), to_char(timestamp '2024-03-05', '')
SELECT to_date('2024-03-05', 'YYYY-MM-DD'), to_date('05 Mar 2024', 'DD Mon YYYY'), to_date('20240305', 'YYYYMMDD'), to_timestamp('2024-03-05 14:07:09.5', 'YYYY-MM-DD HH24:MI:SS.MS')
SELECT to_timestamp('05/03/2024 02:07 PM', 'DD/MM/YYYY HH:MI AM'), to_date('March 5, 2024', 'Month DD, YYYY'), to_date('  2024-3-5', 'YYYY-MM-DD'), to_date('2024/03/05', 'YYYY-MM-DD')
SELECT to_timestamp('2024 065', 'YYYY DDD'), to_date('2024', 'YYYY'), to_timestamp('14:07', 'HH24:MI'), to_timestamp('2024-03-05T14:07:09Z', 'YYYY-MM-DD"T"HH24:MI:SS')
SELECT to_date('2024-13-01', 'YYYY-MM-DD')
SELECT to_date('2024-02-30', 'YYYY-MM-DD')
SELECT to_date('abc', 'YYYY')
-- OVERLAPS.
SELECT (DATE '2001-02-16', DATE '2001-12-21') OVERLAPS (DATE '2001-10-30', DATE '2002-10-30'), (DATE '2001-02-16', INTERVAL '100 days') OVERLAPS (DATE '2001-10-30', DATE '2002-10-30'), (DATE '2001-10-29', DATE '2001-10-30') OVERLAPS (DATE '2001-10-30', DATE '2001-10-31'), (DATE '2001-10-30', DATE '2001-10-30') OVERLAPS (DATE '2001-10-30', DATE '2001-10-31')
SELECT (timestamp '2024-01-01', NULL::timestamp) OVERLAPS (timestamp '2024-01-02', timestamp '2024-01-03'), (timestamp '2024-01-05', timestamp '2024-01-01') OVERLAPS (timestamp '2024-01-02', interval '1 day'), (time '10:00', time '12:00') OVERLAPS (time '11:00', interval '2 hours'), (now(), now()) OVERLAPS (now(), now())
SELECT (timestamptz '2024-01-01', timestamptz '2024-01-10') OVERLAPS (timestamptz '2024-01-05', NULL::timestamptz), (NULL::timestamptz, timestamptz '2024-01-03') OVERLAPS (timestamptz '2024-01-02', timestamptz '2024-01-04')
SELECT (1, 2) OVERLAPS (3, 4)
