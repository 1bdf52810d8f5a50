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
