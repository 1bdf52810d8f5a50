-- Functions about values and the catalog.
SELECT pg_typeof(1), pg_typeof('a'), pg_typeof(1.5), pg_typeof(1e10), pg_typeof(2147483648)
SELECT pg_typeof(now()), pg_typeof(ARRAY[1]), pg_typeof(NULL), pg_typeof(true), pg_typeof('a'::varchar)
SELECT pg_typeof(1::int2), pg_typeof('{}'::text[]), pg_typeof(interval '1 day'), pg_typeof(date '2024-01-01')
SELECT num_nulls(1, NULL, 2), num_nonnulls(1, NULL, 2), num_nulls(), num_nonnulls(NULL, NULL)
SELECT format_type('int4'::regtype, NULL), format_type(23, -1), format_type(1700, 655366), format_type(1043, 24)
SELECT format_type(NULL, NULL), format_type(1007, NULL), format_type(25, NULL), format_type(999999, NULL)
SELECT to_regtype('integer'), to_regtype('int8'), to_regtype('nosuchtype'), to_regtype('timestamptz')
SELECT to_regclass('pg_class'), to_regclass('no_such_table'), to_regclass('pg_catalog.pg_type')
SELECT pg_typeof(gen_random_uuid()), gen_random_uuid() <> gen_random_uuid()
-- What the newest SQLAlchemy reads while reflecting a table.
SELECT pg_collation_is_visible(100), pg_collation_is_visible(950), pg_collation_is_visible(999999)
SELECT pg_type_is_visible(23), pg_statistics_obj_is_visible(999999), pg_ts_config_is_visible(999999)
SELECT current_setting('default_table_access_method'), current_setting('lc_collate'), current_setting('block_size')
SELECT name, setting, unit, vartype FROM pg_settings WHERE name IN ('default_table_access_method', 'statement_timeout', 'bytea_output', 'lc_ctype') ORDER BY name
-- Access privilege inquiry.
SELECT has_table_privilege('pg_class', 'SELECT'), has_table_privilege('pg_class', 'select, insert with grant option'), has_table_privilege('pg_class', ' SELECT '), has_table_privilege(999999, 'SELECT')
SELECT has_table_privilege('postgres', 'pg_class', 'SELECT'), has_table_privilege('pg_catalog.pg_class', 'TRUNCATE, REFERENCES'), has_table_privilege(99999::oid, 'pg_class', 'UPDATE')
SELECT has_column_privilege('pg_class', 1::int2, 'SELECT'), has_column_privilege('pg_class', 999::int2, 'SELECT'), has_column_privilege('postgres', 'pg_type', 'typname', 'SELECT')
SELECT has_database_privilege(current_database(), 'TEMP'), has_database_privilege(current_database(), 'connect'), has_schema_privilege('public', 'CREATE'), has_schema_privilege('pg_catalog', 'usage, create'), has_schema_privilege(99999::oid, 'pg_catalog', 'CREATE')
SELECT has_table_privilege('pg_class', NULL), has_schema_privilege(NULL::text, 'USAGE')
SELECT has_table_privilege(10, 'pg_type', 'INSERT'), has_column_privilege('pg_class', 'relname', 'UPDATE')
SELECT has_table_privilege('nosuch', 'SELECT')
SELECT has_table_privilege('pg_class', 'FOO')
SELECT has_table_privilege('pg_class', '')
SELECT has_table_privilege('nosuchrole', 'pg_class', 'SELECT')
SELECT has_schema_privilege('nosuch', 'USAGE')
SELECT has_schema_privilege('public', 'SELECT')
SELECT has_database_privilege('nosuch', 'CONNECT')
SELECT has_column_privilege('pg_class', 'nosuch', 'SELECT')
SELECT pg_sleep(0), pg_typeof(pg_sleep(0)), pg_sleep(-1), pg_sleep_for('0 s'), pg_sleep_until(now() - interval '1 s'), pg_sleep(NULL)
-- What libpq's target_session_attrs reads (the writer answers as a primary).
SELECT pg_is_in_recovery(), current_setting('in_hot_standby'), current_setting('transaction_read_only'), current_setting('default_transaction_read_only')
SET in_hot_standby = on
