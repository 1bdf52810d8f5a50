"""Parts of the SQL surface beyond DuckDB's own statements, differential
against a real PostgreSQL 15 (ROCKLAKE_PG_REFERENCE=1): array values
(constructors, `ARRAY(subquery)`, subscripts, `||`, casts from and to text),
`op ANY/ALL (array)`, set-returning
functions in the select list (`unnest`, `generate_subscripts`,
`generate_series`, in lockstep, and in FROM), `array_agg`/`string_agg` with `ORDER BY`,
`FILTER`, `DISTINCT`, the array functions, `json_build_object`, LIKE with
ESCAPE, `quote_ident`, and the `pg_catalog` vectors (`int2vector`,
`oidvector`) that reflection code reads, the object-identifier types
(`regclass`, `regtype`, `regnamespace`, `regproc`) that print as names, row
values (`information_schema._pg_expandarray`, `(row).field`), TRIM and the
bitwise operators; `INTERSECT`/`EXCEPT [ALL]`, `SELECT DISTINCT ON`,
`RIGHT`/`FULL JOIN` (ON, USING, NATURAL) and their errors, explicit window
frames (`ROWS`, `RANGE`, `GROUPS`) and their errors, the common type of
string types, `LATERAL` subqueries, and the `json` operators `->`/`->>`;
transaction characteristics (isolation level, read-only transactions) and
the table origins of result columns in RowDescription. Each step runs with text and with
binary results (psycopg decodes arrays by their type OIDs).
"""

from __future__ import annotations

import psycopg
import pytest

from conftest import PostgresBackend

SETUP = [
    "DROP TABLE IF EXISTS arr",
    "CREATE TABLE arr (g text, id bigint PRIMARY KEY, v int, name varchar)",
    "INSERT INTO arr VALUES ('a', 1, 10, 'x'), ('a', 2, NULL, 'y z'), ('b', 3, 30, NULL), "
    "('b', 4, 40, 'q\"uote'), ('c', 5, 50, '')",
    # Set operations, DISTINCT ON and outer joins (duplicates and NULLs).
    "DROP TABLE IF EXISTS sl",
    "DROP TABLE IF EXISTS sr",
    "CREATE TABLE sl (x int, y text)",
    "INSERT INTO sl VALUES (1, 'a'), (1, 'a'), (1, 'a'), (2, 'b'), (2, 'b'), (NULL, NULL), "
    "(NULL, NULL), (3, 'c')",
    "CREATE TABLE sr (x bigint, y varchar, z numeric)",
    "INSERT INTO sr VALUES (1, 'a', 1.5), (2, 'b', 2.5), (2, 'b', 0), (2, 'b', NULL), "
    "(NULL, NULL, 7), (4, 'd', 4)",
    "DROP TABLE IF EXISTS ja",
    "DROP TABLE IF EXISTS jb",
    "DROP TABLE IF EXISTS jc",
    "CREATE TABLE ja (id int, v text)",
    "INSERT INTO ja VALUES (1, 'a1'), (2, 'a2'), (2, 'a2b'), (NULL, 'an'), (5, 'a5')",
    "CREATE TABLE jb (id bigint, w text)",
    "INSERT INTO jb VALUES (2, 'b2'), (3, 'b3'), (NULL, 'bn'), (5, 'b5'), (5, 'b5b')",
    "CREATE TABLE jc (id numeric, u text)",
    "INSERT INTO jc VALUES (3, 'c3'), (6, 'c6'), (1, 'c1')",
    "DROP TABLE IF EXISTS ux",
    "DROP TABLE IF EXISTS uy",
    "DROP TABLE IF EXISTS uz",
    "CREATE TABLE ux (x int, y int, a int)",
    "INSERT INTO ux VALUES (1, 2, 3), (1, 7, 8), (NULL, 2, 0)",
    "CREATE TABLE uy (x bigint, b int)",
    "INSERT INTO uy VALUES (1, 4), (9, 9)",
    "CREATE TABLE uz (y int, c int)",
    "INSERT INTO uz VALUES (2, 5), (7, 6)",
    "DROP TABLE IF EXISTS w",
    "CREATE TABLE w (g text, o int, v int)",
    "INSERT INTO w VALUES ('a', 1, 10), ('a', 2, 20), ('a', 2, 25), ('a', 3, NULL), "
    "('a', 5, 50), ('b', 1, 1), ('b', 1, 2), ('b', 4, NULL)",
]

STEPS = [
    # Array values.
    "SELECT ARRAY[1, 2, 3], ARRAY['a', NULL, 'b c', '', 'NULL'], ARRAY[1.5, 2]",
    "SELECT ARRAY[id, v] FROM arr ORDER BY id",
    "SELECT (ARRAY[10, 20, 30])[2], (ARRAY[10, 20, 30])[5], (ARRAY['x'])[0]",
    "SELECT ARRAY(SELECT name FROM arr ORDER BY id), ARRAY(SELECT id FROM arr WHERE false)",
    "SELECT '{1,2,3}'::int[], '{a,\"b c\",NULL}'::text[], ARRAY[1,2]::text[]",
    "SELECT ARRAY[1,2]::text, '{1,x}'::int[]",
    "SELECT ARRAY[]::int[], cardinality(ARRAY[]::int[])",
    "SELECT ARRAY[]",
    "SELECT array_lower(ARRAY[5,6,7], 1), array_upper(ARRAY[5,6,7], 1), "
    "array_length(ARRAY[5,6,7], 1), array_upper(ARRAY[5,6,7], 2), cardinality(ARRAY[5,6,7])",
    "SELECT ARRAY[1, 2] || ARRAY[3], ARRAY[1] || 2, 0 || ARRAY[1], NULL::int[] || ARRAY[1], "
    "ARRAY['a'] || '{b,c}', NULL::int[] || NULL::int[], ARRAY[1] || NULL::int",
    "SELECT array_to_string(ARRAY['a', NULL, 'c'], ','), "
    "array_to_string(ARRAY['a', NULL, 'c'], ',', '*'), array_to_string(ARRAY[1, 2], '-')",
    # op ANY / ALL over array values.
    "SELECT id FROM arr WHERE v = ANY (ARRAY(SELECT v FROM arr WHERE g = 'b')) ORDER BY id",
    "SELECT id FROM arr WHERE id <> ALL ('{1,2}'::bigint[]) ORDER BY id",
    "SELECT 1 = ANY (ARRAY[2, NULL]), 1 = ANY (ARRAY[]::int[]), 1 < ALL (ARRAY[]::int[]), "
    "NULL::int = ANY (ARRAY[1]), 3 > ALL (ARRAY[1, 2])",
    # Set-returning functions in the select list.
    "SELECT unnest(ARRAY[3, 1, 2])",
    "SELECT id, unnest(ARRAY[id, id * 10]) FROM arr WHERE id < 3 ORDER BY 1, 2",
    "SELECT unnest(ARRAY[1, 2, 3]) AS a, unnest(ARRAY['x', 'y']) AS b",
    "SELECT generate_subscripts(ARRAY['a', 'b', 'c'], 1), "
    "generate_subscripts(ARRAY['a', 'b', 'c'], 1, true)",
    "SELECT generate_series(1, 5), generate_series(10, 1, -3)",
    "SELECT generate_series(1::bigint, 3), generate_series(5, 1)",
    "SELECT count(*) FROM (SELECT generate_series(1, 100000)) s",
    "SELECT generate_series(1, 3, 0)",
    "SELECT unnest(ARRAY[1, 2]) + 1 AS next ORDER BY next DESC",
    # ... and in FROM.
    "SELECT * FROM generate_series(1, 3) s",
    "SELECT s, s * 2 FROM pg_catalog.generate_series(1, 3) s ORDER BY s DESC",
    "SELECT x FROM unnest(ARRAY['b', 'a']) AS u(x) ORDER BY x",
    "SELECT generate_series FROM generate_series(2, 3)",
    "SELECT a.id, s FROM arr a, generate_series(1, 2) s WHERE a.id < 3 ORDER BY 1, 2",
    "SELECT id, (SELECT string_agg(s::text, ',') FROM generate_series(1, a.id) s) "
    "FROM arr a ORDER BY id",
    "SELECT g, unnest(array_agg(id ORDER BY id DESC)) FROM arr GROUP BY g ORDER BY g, 2",
    "SELECT id FROM arr WHERE unnest(ARRAY[1]) = 1",
    # Aggregates with ORDER BY, FILTER, DISTINCT.
    "SELECT g, array_agg(id ORDER BY id DESC), array_agg(v), string_agg(name, '|' ORDER BY id) "
    "FROM arr GROUP BY g ORDER BY g",
    "SELECT array_agg(DISTINCT g ORDER BY g), string_agg(DISTINCT g, ',' ORDER BY g DESC) "
    "FROM arr",
    "SELECT count(*) FILTER (WHERE v > 20), sum(v) FILTER (WHERE g = 'a'), "
    "array_agg(id) FILTER (WHERE v IS NULL), count(*) FROM arr",
    "SELECT array_agg(id), string_agg(name, ',') FROM arr WHERE false",
    # values equal by PostgreSQL's equality are one key (was: two for 1.0 and 1.00)
    "SELECT count(DISTINCT x), count(*) FROM (VALUES (1.0::numeric), (1.00), (1)) t(x)",
    "SELECT count(*) FROM (SELECT x FROM (VALUES (1.0::numeric), (1.00)) t(x) GROUP BY x) g",
    "SELECT count(*) FROM (SELECT 1.0::numeric UNION SELECT 1.00::numeric) u",
    "SELECT count(DISTINCT x) FROM (VALUES (0.0::float8), (-0.0::float8)) t(x)",
    "SELECT count(DISTINCT x) FROM (VALUES ('1 mon'::interval), ('30 days'::interval)) t(x)",
    "SELECT count(*) FROM (VALUES (1.0::numeric)) a(x) JOIN (VALUES (1.00::numeric)) b(y) ON x = y",
    "SELECT array_agg(v ORDER BY v NULLS FIRST), array_agg(name ORDER BY name DESC NULLS LAST) "
    "FROM arr",
    "SELECT string_agg(name, NULL ORDER BY id) FROM arr",
    "SELECT lower(name) FILTER (WHERE true) FROM arr",
    # json_build_object, LIKE ... ESCAPE, quote_ident / quote_literal.
    "SELECT json_build_object('id', id, 'name', name, 'v', v, 'ok', v > 20) FROM arr "
    "ORDER BY id",
    "SELECT json_build_object('a', ARRAY[1, 2], 'b', 1.50, 'c', 'q\"uote')",
    "SELECT json_build_object('a')",
    "SELECT name FROM arr WHERE name NOT LIKE 'q' || '%' ESCAPE '/' ORDER BY id",
    "SELECT 'a_c' LIKE 'a/_c' ESCAPE '/', 'abc' LIKE 'a/_c' ESCAPE '/', "
    "'a\\c' LIKE 'a\\c' ESCAPE '', 'x%' LIKE 'x#%' ESCAPE '#'",
    "SELECT 'x' LIKE 'x' ESCAPE 'ab'",
    "SELECT quote_ident('events'), quote_ident('Mixed Case'), quote_ident('select'), "
    "quote_ident('a\"b'), quote_literal('it''s'), quote_literal(E'a\\\\b')",
    # The catalog's vectors and arrays, as reflection code reads them.
    "SELECT indkey, indclass, indoption, indcollation, indkey[0], array_upper(indkey, 1) "
    "FROM pg_index WHERE indrelid = 'arr'::regclass",
    "SELECT attname FROM pg_attribute a JOIN pg_index i ON a.attrelid = i.indrelid "
    "AND a.attnum = ANY (i.indkey) WHERE i.indrelid = 'arr'::regclass",
    "SELECT unnest(indkey) AS attnum, generate_subscripts(indkey, 1) AS ord, "
    "unnest(indclass) AS opclass FROM pg_index WHERE indrelid = 'arr'::regclass",
    "SELECT opcname, opcdefault FROM pg_opclass o JOIN pg_index i ON o.oid = ANY (i.indclass) "
    "WHERE i.indrelid = 'arr'::regclass",
    "SELECT conkey, conname FROM pg_constraint WHERE conrelid = 'arr'::regclass",
    "SELECT typname, typelem::regtype::text FROM pg_type WHERE typname IN ('_int4', '_text') "
    "ORDER BY 1",
    "SELECT reloptions FROM pg_class WHERE relname = 'arr'",
    "SELECT count(*) FROM pg_sequence",
    "SELECT pg_get_serial_sequence('arr', 'id'), pg_type_is_visible(23)",
    # WITH RECURSIVE (UNION and UNION ALL, correlated, nested), settings.
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) "
    "SELECT n, n * n FROM r ORDER BY n",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT (n % 3) + 1 FROM r) SELECT * FROM r ORDER BY n",
    "WITH RECURSIVE r AS (SELECT id, v FROM arr WHERE id = 1 UNION ALL "
    "SELECT a.id, a.v FROM arr a JOIN r ON a.id = r.id + 1) SELECT * FROM r ORDER BY id",
    "SELECT id, (WITH RECURSIVE c(k) AS (SELECT a.id UNION ALL SELECT k - 1 FROM c WHERE k > 1) "
    "SELECT count(*) FROM c) FROM arr a ORDER BY id",
    "WITH RECURSIVE r(n) AS (SELECT 1::int UNION ALL SELECT 'x'::text FROM r) SELECT * FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r ORDER BY 1) SELECT * FROM r",
    "SELECT current_setting('standard_conforming_strings'), current_setting('jit'), "
    "current_setting('nope', true)",
    "SELECT current_setting('nope')",
    "SELECT set_config('application_name', 'surface', false), "
    "current_setting('application_name') = 'surface'",
    "SELECT current_setting('application_name')",
    "SELECT set_config('nope', 'x', false)",
    # Object identifiers print as names, compare as numbers.
    # (as text: the binary form is the oid, which differs between servers)
    "SELECT 'arr'::regclass::text, 'public.arr'::regclass::text, "
    "'arr_pkey'::regclass::text, 'pg_class'::regclass, 'pg_class'::regclass::oid",
    "SELECT c.oid::regclass::text, c.relnamespace::regnamespace, c.reltype <> 0 "
    "FROM pg_class c WHERE c.relname IN ('arr', 'arr_pkey') ORDER BY 1",
    "SELECT 'int4'::regtype, 'character varying'::regtype, 23::regtype::text, "
    "'public'::regnamespace, 11::regnamespace, 1::regclass, to_regclass('nope'), "
    "to_regclass('arr')::text, to_regtype('bigint')",
    "SELECT 'nope'::regclass",
    "SELECT 'nope'::regtype",
    "SELECT 'nope'::regnamespace",
    "SELECT relname FROM pg_class WHERE oid = 'arr'::regclass AND 'arr'::regclass = oid",
    "SELECT attname FROM pg_attribute WHERE attrelid = 'arr_pkey'::regclass",
    "SELECT pg_get_indexdef('arr_pkey'::regclass, 1, true), "
    "pg_get_indexdef('arr_pkey'::regclass, 2, true), pg_get_indexdef('arr_pkey'::regclass)",
    # Primary keys of tables users create (23505), current_schemas,
    # pg_settings and pg_constraint columns pgJDBC reads.
    "INSERT INTO arr (g, id) VALUES ('d', 1)",
    "INSERT INTO arr (g, id) VALUES ('d', 90), ('e', 90)",
    "UPDATE arr SET id = 2 WHERE id = 1",
    "SELECT current_schemas(true), current_schemas(false), current_schemas(NULL)",
    "SELECT setting FROM pg_settings WHERE name = 'max_index_keys'",
    "SHOW transaction_isolation",
    "SHOW nope",
    "SELECT confupdtype, confdeltype, confmatchtype FROM pg_constraint "
    "WHERE conrelid = 'arr'::regclass",
    "SELECT obj_description('public'::regnamespace, 'pg_namespace'), "
    "obj_description('arr'::regclass, 'pg_class'), col_description('arr'::regclass, 1)",
    # Subscripts on qualified columns (pgJDBC's getImportedKeys), named by
    # the column.
    "SELECT con.conkey[pos.n], con.conname, pg_index.indkey[0] "
    "FROM pg_catalog.pg_constraint con, pg_catalog.generate_series(1, 2) pos(n), pg_index "
    "WHERE con.conrelid = 'arr'::regclass AND pg_index.indrelid = con.conrelid ORDER BY pos.n",
    "SELECT arr.id[1] FROM arr",
    # regproc: pg_type's I/O functions (pgJDBC's getTypeInfo).
    "SELECT typname, typinput, typoutput, typreceive, typsend, "
    "typinput = 'pg_catalog.array_in'::regproc AS is_array FROM pg_type "
    "WHERE typname IN ('int4', '_int4', 'aclitem', 'numeric', 'regproc', 'arr', '_text') "
    "ORDER BY 1",
    "SELECT 'array_in'::regproc::oid, 'ARRAY_IN'::regproc::text, 750::regproc::text, "
    "0::regproc::text, 99999::regproc::text",
    "SELECT 'nope'::regproc",
    # Row values: information_schema._pg_expandarray (pgJDBC's
    # getPrimaryKeys and getIndexInfo) and field selection.
    "SELECT information_schema._pg_expandarray(ARRAY[10, 20, 30])",
    "SELECT (information_schema._pg_expandarray(ARRAY['a', NULL, 'b c'])).x, "
    "(information_schema._pg_expandarray(ARRAY['a', NULL, 'b c'])).n",
    "SELECT k, (k).x, (k).n FROM (SELECT information_schema._pg_expandarray(ARRAY[5, 6]) AS k) s",
    "SELECT information_schema._pg_expandarray(ARRAY['a,b', '', 'q\"u', NULL, 'x\\y'])",
    "SELECT k FROM (SELECT information_schema._pg_expandarray(ARRAY[10, 9, NULL]) AS k) s "
    "ORDER BY k",
    "SELECT k IS NULL, k IS NOT NULL, k = k, k::text "
    "FROM (SELECT information_schema._pg_expandarray(ARRAY[NULL::int, 1]) AS k) s",
    "SELECT count(DISTINCT k) "
    "FROM (SELECT information_schema._pg_expandarray(ARRAY[2, 1, 2]) AS k) s",
    "SELECT information_schema._pg_expandarray(NULL::int[]), "
    "information_schema._pg_expandarray(ARRAY[]::int[])",
    "SELECT result.a, (result.keys).x, (result.keys).n FROM (SELECT a.attnum AS a, "
    "information_schema._pg_expandarray(i.indkey) AS keys FROM pg_attribute a "
    "JOIN pg_index i ON a.attrelid = i.indrelid WHERE i.indrelid = 'arr'::regclass) result "
    "WHERE result.a = (result.keys).x",
    "SELECT (information_schema._pg_expandarray(indkey)).n AS pos, "
    "trim(both '\"' from pg_get_indexdef(indexrelid, "
    "(information_schema._pg_expandarray(indkey)).n, false)) AS col, "
    "indoption[(information_schema._pg_expandarray(indkey)).n - 1] & 1::smallint AS desc_bit "
    "FROM pg_index WHERE indrelid = 'arr'::regclass",
    "SELECT _pg_expandarray(ARRAY[1])",
    "SELECT (information_schema._pg_expandarray(ARRAY[1])).y",
    "SELECT (k).x FROM (SELECT 1 AS k) s",
    # TRIM and the bitwise operators.
    "SELECT trim(both '\"' from '\"ab\"'), trim('  x '), trim(leading 'x' from 'xxaxx'), "
    "trim(trailing from '  a  ') || '|', btrim('xyax', 'xy'), ltrim('  a'), rtrim('a  ') || '|', "
    "trim(both '' from 'a'), trim(NULL::text), btrim('abc', NULL)",
    "SELECT 5 & 3, 5 | 3, 5 # 3, 6::smallint & 3::smallint, 7::bigint & 2, NULL::int & 1",
    "SELECT 1.5 & 1",
    # The common type of string types, as PostgreSQL's: the first of varchar
    # and text, name over the others, CASE's ELSE first.
    "SELECT y FROM sr UNION SELECT y FROM sl ORDER BY 1",
    "SELECT y FROM sl UNION ALL SELECT y FROM sr ORDER BY 1",
    "SELECT relname FROM pg_class WHERE relname = 'sl' UNION SELECT 'x'::text ORDER BY 1",
    "SELECT COALESCE(y, 'none'::text), CASE WHEN x > 1 THEN y ELSE 'small'::text END FROM sr "
    "ORDER BY 1, 2",
    # INTERSECT / EXCEPT [ALL]: duplicates counted (min(m, n), max(m - n, 0)),
    # NULLs equal, INTERSECT binding tighter, types resolved like UNION's.
    "SELECT x, y FROM sl INTERSECT SELECT x, y FROM sr ORDER BY 1, 2",
    "SELECT x, y FROM sl INTERSECT ALL SELECT x, y FROM sr ORDER BY 1, 2",
    "SELECT x, y FROM sl EXCEPT SELECT x, y FROM sr ORDER BY 1, 2",
    "SELECT x, y FROM sl EXCEPT ALL SELECT x, y FROM sr ORDER BY 1, 2",
    "SELECT x, y FROM sr EXCEPT ALL SELECT x, y FROM sl ORDER BY x DESC NULLS LAST, y",
    "SELECT x AS k FROM sl INTERSECT SELECT x FROM sr ORDER BY k NULLS FIRST",
    "SELECT x FROM sl EXCEPT ALL SELECT x FROM sr ORDER BY 1 LIMIT 2 OFFSET 1",
    "SELECT 1 UNION SELECT 2 INTERSECT SELECT 3",
    "(SELECT 1 UNION SELECT 2) INTERSECT SELECT 2",
    "SELECT 1 EXCEPT SELECT 1 INTERSECT SELECT 2",
    "SELECT 1 UNION SELECT 2 EXCEPT SELECT 1 ORDER BY 1",
    "SELECT 1 UNION ALL SELECT 1 EXCEPT ALL SELECT 1",
    "(SELECT x FROM sl EXCEPT SELECT x FROM sr) UNION ALL (SELECT 9 INTERSECT ALL SELECT 9) "
    "ORDER BY 1",
    "SELECT count(*), count(x) FROM (SELECT x FROM sl EXCEPT ALL SELECT x FROM sr) s",
    "WITH e AS (SELECT y FROM sl EXCEPT SELECT y FROM sr) SELECT * FROM e",
    "SELECT x FROM sl WHERE x IN (SELECT x FROM sl INTERSECT SELECT x FROM sr) ORDER BY x",
    "SELECT 'x'::varchar INTERSECT SELECT relname FROM pg_class WHERE relname = 'sl'",
    "SELECT 1 INTERSECT SELECT 1.0",
    "SELECT 1.5 EXCEPT SELECT 1.50",
    "SELECT 'a' INTERSECT ALL SELECT 'a'",
    "SELECT NULL::int, 'a' EXCEPT SELECT NULL, 'a'",
    "SELECT ARRAY[1, NULL] INTERSECT SELECT ARRAY[1, NULL]",
    "SELECT y, z FROM sr EXCEPT SELECT 'b', 0.00 ORDER BY 1, 2",
    "SELECT 1, 2 INTERSECT SELECT 1",
    "SELECT 1 INTERSECT SELECT true",
    "SELECT x FROM sl EXCEPT SELECT y FROM sr",
    # SELECT DISTINCT ON: the first row of each group in ORDER BY order.
    "SELECT DISTINCT ON (x) x, y FROM sl ORDER BY x, y DESC",
    "SELECT DISTINCT ON (x) x, y FROM sl ORDER BY x NULLS FIRST, y",
    "SELECT DISTINCT ON (y) x, y, z FROM sr ORDER BY y, z DESC NULLS LAST",
    "SELECT DISTINCT ON (x) y, z FROM sr ORDER BY x, z",
    "SELECT DISTINCT ON (x) x, z FROM sr ORDER BY x DESC, z DESC",
    "SELECT DISTINCT ON (y) y, z FROM sr ORDER BY y, z NULLS FIRST",
    "SELECT DISTINCT ON (x, y) x, y FROM sl ORDER BY y DESC",
    "SELECT DISTINCT ON (x) x, y FROM sl ORDER BY x, y, x DESC LIMIT 2",
    "SELECT DISTINCT ON (x) x, count(*) FROM sl GROUP BY x ORDER BY x",
    "SELECT DISTINCT ON (1) x AS k, y FROM sl ORDER BY k",
    "SELECT DISTINCT ON (k) x AS k, y FROM sl ORDER BY k DESC, y",
    "SELECT DISTINCT ON (sl.x) x, y FROM sl ORDER BY x, y",
    "SELECT DISTINCT ON (x + 1) y FROM sl ORDER BY x + 1 DESC",
    "SELECT DISTINCT ON (upper(y)) y FROM sl ORDER BY upper(y), x",
    "SELECT DISTINCT ON (x) * FROM sr ORDER BY x, z DESC",
    "SELECT DISTINCT ON (y) x FROM sl",
    "SELECT count(*) FROM (SELECT DISTINCT ON (x) x FROM sl) s",
    "SELECT DISTINCT ON (v) v FROM (VALUES (1.0::numeric), (1.00), (2)) t(v) ORDER BY v",
    "SELECT DISTINCT ON (x) x, y FROM sl ORDER BY y",
    "SELECT DISTINCT ON (y) x FROM sl ORDER BY x, y",
    "SELECT DISTINCT ON (3) x FROM sl",
    # RIGHT and FULL joins: ON, USING (merged column), NATURAL.
    "SELECT ja.id, v, jb.id, w FROM ja RIGHT JOIN jb ON ja.id = jb.id ORDER BY w, v",
    "SELECT ja.id, v, jb.id, w FROM ja FULL OUTER JOIN jb ON ja.id = jb.id ORDER BY w, v",
    "SELECT v, w FROM ja RIGHT OUTER JOIN jb ON ja.id < jb.id ORDER BY w, v",
    "SELECT v, w FROM ja FULL JOIN jb ON ja.id = jb.id AND v < 'a5' ORDER BY v, w",
    "SELECT count(*) FROM ja FULL JOIN jb ON true",
    "SELECT v, w FROM ja FULL JOIN jb ON false ORDER BY v, w",
    "SELECT v, w FROM ja FULL JOIN jb ON ja.id = jb.id WHERE ja.id IS NULL ORDER BY v, w",
    "SELECT v, w, u FROM ja LEFT JOIN jb ON ja.id = jb.id RIGHT JOIN jc ON jc.id = ja.id "
    "ORDER BY u, v, w",
    "SELECT count(*), count(ja.id), count(jb.id) FROM ja FULL JOIN jb ON jb.id = ja.id + 1",
    "SELECT * FROM ja FULL JOIN jb USING (id) ORDER BY id, v, w",
    "SELECT * FROM ja RIGHT JOIN jb USING (id) ORDER BY w, v",
    "SELECT * FROM ja NATURAL FULL JOIN jb ORDER BY 1, 2, 3",
    "SELECT * FROM ja JOIN jb USING (id) ORDER BY 1, 2, 3",
    "SELECT * FROM ja LEFT JOIN jb USING (id) ORDER BY 1, 2, 3",
    # Join conditions checked on the two rows before they are combined:
    # the left row's last candidate failing or matching, conditions on
    # both sides and on an enclosing query, a subquery in ON.
    "SELECT v, w FROM ja LEFT JOIN jb ON ja.id = jb.id AND w < 'b5b' ORDER BY v, w",
    "SELECT v, w FROM ja LEFT JOIN jb ON ja.id = jb.id AND w > 'b5' ORDER BY v, w",
    "SELECT v, w FROM ja RIGHT JOIN jb ON ja.id = jb.id AND length(v) + length(w) = 4 "
    "ORDER BY w, v",
    "SELECT v, w, u FROM ja JOIN jb ON ja.id <= jb.id JOIN jc ON jc.id > jb.id - ja.id "
    "ORDER BY v, w, u",
    "SELECT v, (SELECT count(*) FROM jb JOIN jc ON jc.id = jb.id + ja.id) FROM ja ORDER BY v",
    "SELECT v, w FROM ja JOIN jb ON jb.id = (SELECT max(jc.id) FROM jc WHERE jc.id < ja.id + jb.id) "
    "ORDER BY v, w",
    "SELECT v, w FROM ja LEFT JOIN jb ON EXISTS (SELECT 1 FROM jc WHERE jc.id = ja.id + jb.id) "
    "ORDER BY v, w",
    "SELECT id, v, w, u FROM ja FULL JOIN jb USING (id) FULL JOIN jc USING (id) "
    "ORDER BY id, v, w",
    "SELECT id, count(*) FROM ja FULL JOIN jb USING (id) GROUP BY id ORDER BY id",
    "SELECT id, ja.id, jb.id FROM ja FULL JOIN jb USING (id) WHERE id > 2 ORDER BY 1, 3",
    "SELECT * FROM ja FULL JOIN jb ON ja.id < jb.id",
    "SELECT * FROM ja FULL JOIN jb ON ja.id = jb.id OR v = w",
    "SELECT * FROM ja FULL JOIN jb ON ja.id = 1",
    "SELECT * FROM ja FULL JOIN jb",
    # Joins in parentheses, on the right of a join or after a comma item:
    # their conditions read their own rows and may not read the items
    # before them.
    "SELECT v, w, u FROM ja JOIN (jb JOIN jc ON jc.id = jb.id) ON ja.id + 1 = jb.id "
    "ORDER BY v, w, u",
    "SELECT v, w, u FROM ja LEFT JOIN (jb LEFT JOIN jc ON jc.id = jb.id - 2) ON ja.id = jb.id "
    "ORDER BY v, w, u",
    "SELECT v, w, u FROM ja FULL JOIN (jb FULL JOIN jc ON jc.id = jb.id) ON ja.id = jb.id "
    "ORDER BY v, w, u",
    "SELECT v, w, u FROM ja RIGHT JOIN (jb JOIN jc ON jc.id >= jb.id) ON ja.id = jb.id "
    "ORDER BY v, w, u",
    "SELECT v, w, u FROM ja, (jb JOIN jc ON jc.id >= jb.id) WHERE ja.id = jb.id ORDER BY v, w, u",
    "SELECT v, w, u FROM ja, jb LEFT JOIN (jc JOIN sl ON sl.x = jc.id) ON jc.id = jb.id "
    "WHERE ja.id = jb.id ORDER BY v, w, u",
    "SELECT * FROM ja JOIN (jb JOIN jc USING (id)) USING (id) ORDER BY 1",
    "SELECT * FROM jb FULL JOIN (ja JOIN jc USING (id)) USING (id) ORDER BY 1, 2, 3",
    "SELECT v, w, u FROM ja, jb FULL JOIN jc ON jc.id = jb.id WHERE ja.id = jb.id OR ja.id = 1 "
    "ORDER BY v, w, u",
    "SELECT v, w, u FROM ja, jb RIGHT JOIN jc ON jc.id = jb.id ORDER BY v, w, u",
    # `*` shows each join's USING columns before its other columns.
    "SELECT * FROM jc, ja JOIN jb USING (id) ORDER BY 1, 2, 3, 4, 5",
    "SELECT * FROM ux JOIN uy USING (x) JOIN uz USING (y) ORDER BY 1, 2, 3",
    "SELECT * FROM uz JOIN (ux JOIN uy USING (x)) USING (y) ORDER BY 1, 2, 3",
    "SELECT * FROM uy, uz JOIN ux USING (y) ORDER BY 1, 2, 3, 4, 5",
    "SELECT * FROM ux NATURAL JOIN uy, uz NATURAL FULL JOIN ux x ORDER BY 1, 2, 3, 4, 5, 6",
    "SELECT * FROM uy FULL JOIN ux USING (x), uz ORDER BY 1, 2, 3, 4, 5",
    "SELECT id, v, u FROM jb, ja RIGHT JOIN jc USING (id) WHERE jb.w = 'b3' ORDER BY 1, 2, 3",
    "SELECT id, jb.id, ja.id FROM jb LEFT JOIN (ja LEFT JOIN jc USING (id)) USING (id) "
    "ORDER BY 1, 2, 3",
    "SELECT v, w FROM ja JOIN (jb JOIN jc ON jc.id IN (SELECT x FROM sl)) ON ja.id = jb.id "
    "ORDER BY v, w",
    "SELECT v, w FROM ja JOIN (jb JOIN jc ON ja.id = jb.id) ON true",
    # Explicit window frames: ROWS, RANGE (peers), GROUPS, empty frames.
    "SELECT g, o, v, "
    "sum(v) OVER (PARTITION BY g ORDER BY o, v ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), "
    "sum(v) OVER (PARTITION BY g ORDER BY o ROWS UNBOUNDED PRECEDING), "
    "sum(v) OVER (PARTITION BY g ORDER BY o) FROM w ORDER BY g, o, v",
    "SELECT o, v, max(v) OVER (ORDER BY o, v ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), "
    "min(v) OVER (ORDER BY o, v ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), "
    "avg(v) OVER (ORDER BY o, v ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING), "
    "sum(v) OVER (ORDER BY o, v ROWS 2 PRECEDING) FROM w ORDER BY o, v",
    "SELECT o, v, sum(v::float8 / 3) OVER (ORDER BY o, v ROWS 1 PRECEDING), "
    "sum(v::bigint) OVER (ORDER BY o, v ROWS 1 PRECEDING), "
    "sum(CASE WHEN o % 2 = 0 THEN v + 0.5 ELSE v::numeric END) "
    "OVER (ORDER BY o, v ROWS 1 PRECEDING), "
    "avg(v::bigint) OVER (ORDER BY o, v ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING), "
    "bool_and(v > 15) OVER (ORDER BY o, v ROWS 1 PRECEDING), "
    "count(v) OVER (ORDER BY o, v ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM w ORDER BY o, v",
    "SELECT g, o, v, first_value(v) OVER (PARTITION BY g ORDER BY o, v "
    "ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING), last_value(v) OVER (PARTITION BY g "
    "ORDER BY o, v ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING), count(*) OVER (PARTITION BY g "
    "ORDER BY o, v ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) FROM w ORDER BY g, o, v",
    "SELECT o, sum(v) OVER (ORDER BY o, v ROWS BETWEEN 2 FOLLOWING AND 1 FOLLOWING), "
    "count(*) OVER (ORDER BY o, v ROWS BETWEEN 2 FOLLOWING AND 1 FOLLOWING), "
    "sum(v) OVER (ORDER BY o, v ROWS BETWEEN 1.5 PRECEDING AND CURRENT ROW), "
    "sum(v) OVER (ORDER BY o, v ROWS BETWEEN 1000000000000 PRECEDING "
    "AND 9223372036854775807 FOLLOWING) FROM w ORDER BY o, v",
    "SELECT sum(o) OVER (ORDER BY o ROWS BETWEEN (SELECT 1) PRECEDING AND CURRENT ROW), "
    "sum(o) OVER (ORDER BY o ROWS BETWEEN '1' PRECEDING AND CURRENT ROW) FROM w ORDER BY o",
    "SELECT o, v, count(*) OVER (ORDER BY o RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING), "
    "sum(v) OVER (PARTITION BY g ORDER BY o RANGE BETWEEN UNBOUNDED PRECEDING "
    "AND UNBOUNDED FOLLOWING), last_value(v) OVER (ORDER BY o RANGE BETWEEN "
    "UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING), first_value(v) OVER (ORDER BY o, v "
    "RANGE CURRENT ROW) FROM w ORDER BY o, v, g",
    "SELECT g, sum(v) OVER (PARTITION BY g RANGE BETWEEN CURRENT ROW AND CURRENT ROW) "
    "FROM w ORDER BY 1, 2",
    "SELECT o, v, sum(v) OVER (ORDER BY o GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING), "
    "count(v) OVER (ORDER BY o GROUPS 1 PRECEDING), "
    "count(*) OVER (ORDER BY o GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING), "
    "first_value(v) OVER (ORDER BY o, v GROUPS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), "
    "sum(v) OVER (ORDER BY o GROUPS BETWEEN 2 FOLLOWING AND 1 FOLLOWING) FROM w ORDER BY o, v",
    "SELECT o, v, row_number() OVER (ORDER BY o, v ROWS 1 PRECEDING), "
    "lag(v) OVER (ORDER BY o, v ROWS BETWEEN CURRENT ROW AND CURRENT ROW), "
    "rank() OVER (ORDER BY o ROWS 1 PRECEDING) FROM w ORDER BY o, v",
    "SELECT sum(c), sum(t) FROM (SELECT "
    "count(*) OVER (ORDER BY g ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS c, "
    "sum(g) OVER (ORDER BY g ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS t "
    "FROM generate_series(1, 20000) g) s",
    "SELECT sum(o) OVER (ORDER BY o ROWS BETWEEN -1 PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(o) OVER (ORDER BY o ROWS BETWEEN 'a' PRECEDING AND CURRENT ROW) FROM w",
    # LATERAL subqueries: run per row of the FROM items before them.
    "SELECT a.id, s.x FROM arr a, LATERAL (SELECT b.id AS x FROM arr b "
    "WHERE b.g = a.g AND b.id > a.id ORDER BY b.id) s ORDER BY 1, 2",
    "SELECT a.id, s.n FROM arr a LEFT JOIN LATERAL (SELECT b.name AS n FROM arr b "
    "WHERE b.id = a.id + 1) s ON true ORDER BY 1",
    "SELECT a.g, s.c, s.m FROM (SELECT DISTINCT g FROM arr) a CROSS JOIN LATERAL "
    "(SELECT count(*) AS c, max(v) AS m FROM arr b WHERE b.g = a.g) s ORDER BY 1",
    "SELECT a.id, s.k FROM arr a JOIN LATERAL (SELECT a.v * 2 AS k) s ON s.k > 20 ORDER BY 1",
    "SELECT a.id, s.k FROM arr a, LATERAL (SELECT a.id + 1 AS k UNION ALL SELECT a.v) s "
    "ORDER BY 1, 2 NULLS FIRST",
    "SELECT a.id, s.* FROM arr a LEFT JOIN LATERAL (SELECT b.* FROM arr b WHERE b.v > a.v "
    "ORDER BY b.v LIMIT 1) s ON true ORDER BY 1",
    "SELECT (SELECT string_agg(s.t, ',' ORDER BY s.t) FROM arr b, "
    "LATERAL (SELECT b.g || a.id::text AS t) s) FROM arr a ORDER BY a.id",
    "SELECT a.id, s.one FROM arr a RIGHT JOIN LATERAL (SELECT 1 AS one) s ON true ORDER BY 1",
    "SELECT * FROM LATERAL (SELECT 1 AS one) s",
    "SELECT * FROM arr a FULL JOIN LATERAL (SELECT a.id) s ON true",
    "SELECT * FROM arr a, (SELECT a.id) s",
    # json -> key / index and ->>: the input text of the value, NULL for a
    # key of the wrong kind, PostgreSQL's errors.
    """SELECT '{"a": 1, "a" : [1,  2]}'::json -> 'a', '[1, {"b":2} ,3]'::json -> 1, """
    """'[1,2]'::json -> -1, '[1,2]'::json -> 5""",
    """SELECT '{"a": "x\\ny\\u00e9"}'::json ->> 'a', '{"a": "x\\ny"}'::json -> 'a', """
    """'{"a":null}'::json ->> 'a', '{"a":null}'::json -> 'a'""",
    """SELECT '{"a": 1.50, "b": true}'::json ->> 'a', '{"b": true}'::json ->> 'b', """
    """'"s"'::json -> 'a', '{"1":5}'::json -> 1, '[1,2]'::json -> '1'""",
    """SELECT '  {"a" :  {"b": [true, null] } } '::json -> 'a' -> 'b' -> 0, """
    """'[[1,2],[3]]'::json -> 0 -> 1, '[1,2]'::json -> 1::smallint""",
    """SELECT json_build_object('k', 1, 'l', json_build_object('m', 'n')), """
    """json_build_object('k', 1, 'l', json_build_object('m', 'n')) -> 'l' ->> 'm'""",
    """SELECT x -> 'k', x ->> 'k' FROM (VALUES ('{"k": [1]}'::json), ('{"j": 2}'), (NULL)) t(x)""",
    """SELECT name, json_build_object('id', id, 'v', v) ->> 'v' FROM arr ORDER BY id""",
    """SELECT '{"a":1}' -> 'a'""",
    """SELECT '[1,2]'::json -> 1::bigint""",
    """SELECT 'x'::text -> 'a'""",
    """SELECT '{bad'::json -> 'a'""",
    """SELECT '{bad'::json""",
    # FETCH FIRST: a LIMIT.
    "SELECT g FROM generate_series(1, 5) g ORDER BY g OFFSET 1 ROWS FETCH FIRST 2 ROWS ONLY",
    "SELECT g FROM generate_series(1, 5) g ORDER BY g FETCH FIRST ROW ONLY",
    "SELECT g FROM generate_series(1, 5) g ORDER BY g DESC FETCH NEXT 0 ROWS ONLY",
    "SELECT id, name FROM arr ORDER BY id FETCH FIRST 2 ROWS ONLY",
    """SELECT ' [1, {"a" : 2}] '::json, 'null'::json, '1.50'::json""",
]

# Errors whose message is compared too (SQLSTATE and primary message).
MESSAGE_STEPS = [
    "SELECT x, y FROM sl INTERSECT SELECT x FROM sr",
    "SELECT 1 EXCEPT SELECT true",
    "SELECT DISTINCT ON (x) x, y FROM sl ORDER BY y",
    "SELECT DISTINCT ON (x, y) x FROM sl ORDER BY x, x + 1",
    "SELECT DISTINCT ON (3) x FROM sl",
    "SELECT * FROM ja FULL JOIN jb ON ja.id < jb.id",
    "SELECT * FROM ja FULL JOIN jb ON ja.id IS NOT DISTINCT FROM jb.id",
    "SELECT * FROM ja JOIN (SELECT 'x'::text AS id) t USING (id)",
    "SELECT v, w FROM ja JOIN (jb JOIN jc ON jc.id = ja.id) ON true",
    "SELECT v, w FROM ja, (jb JOIN jc ON jc.id = ja.id + jb.id)",
    "SELECT sum(o) OVER (ORDER BY o ROWS UNBOUNDED FOLLOWING) FROM w",
    "SELECT sum(o) OVER (ORDER BY o ROWS 1 FOLLOWING) FROM w",
    "SELECT sum(o) OVER (ORDER BY o ROWS BETWEEN CURRENT ROW AND UNBOUNDED PRECEDING) FROM w",
    "SELECT sum(o) OVER (ORDER BY o ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM w",
    "SELECT sum(o) OVER (ORDER BY o ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW) FROM w",
    "SELECT sum(o) OVER (ORDER BY o ROWS BETWEEN CURRENT ROW AND -2 FOLLOWING) FROM w",
    "SELECT sum(o) OVER (ORDER BY o ROWS BETWEEN NULL PRECEDING AND CURRENT ROW) FROM w "
    "WHERE false",
    "SELECT sum(o) OVER (ORDER BY o ROWS BETWEEN CURRENT ROW AND NULL FOLLOWING) FROM w",
    "SELECT sum(o) OVER (ORDER BY o ROWS BETWEEN v PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(o) OVER (GROUPS 1 PRECEDING) FROM w",
    # Interval fields beyond 64 bits: PostgreSQL's 22015 (was an overflow:
    # a panic in debug builds, a wrapped value in release builds).
    "SELECT '99999999999999999999999999999999999999 seconds'::interval",
    "SELECT '9223372036854775807 seconds'::interval",
    "SELECT '2562047788 hours'::interval",
    "SELECT '-9223372036854775808 microseconds'::interval",
    "SELECT 'P99999999999999999999Y'::interval",
    "SELECT '99999999999999999999:00:00'::interval",
    "SELECT '1.000000000000000000000000001 seconds'::interval",
]

# Transaction characteristics (what pgJDBC's setTransactionIsolation and
# setReadOnly send), read-only transactions, a savepoint around a statement
# that failed before writing; each statement once, in autocommit mode, its
# rows or its error (SQLSTATE and message), notices and the reported
# settings (ParameterStatus) compared.
TRANSACTION_STEPS = [
    "DROP TABLE IF EXISTS tx",
    "CREATE TABLE tx (id bigint PRIMARY KEY, v text)",
    "INSERT INTO tx VALUES (1, 'one')",
    "SELECT name, setting FROM pg_settings WHERE name IN ('default_transaction_isolation', "
    "'default_transaction_read_only', 'transaction_isolation', 'transaction_read_only') "
    "ORDER BY 1",
    "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
    "SHOW default_transaction_isolation",
    "SHOW transaction_isolation",
    "SHOW default_transaction_read_only",
    "SHOW transaction_read_only",
    "SELECT current_setting('transaction_read_only'), "
    "current_setting('default_transaction_isolation')",
    "SELECT name, setting FROM pg_settings WHERE name IN ('default_transaction_isolation', "
    "'default_transaction_read_only', 'transaction_isolation', 'transaction_read_only') "
    "ORDER BY 1",
    "INSERT INTO tx VALUES (2, 'two')",
    "SELECT count(*) FROM tx",
    "BEGIN",
    "SHOW transaction_read_only",
    "UPDATE tx SET v = 'x' WHERE false",
    "ROLLBACK",
    "BEGIN",
    "SET TRANSACTION READ WRITE",
    "SHOW transaction_read_only",
    "INSERT INTO tx VALUES (3, 'three')",
    "COMMIT",
    "BEGIN",
    "SELECT 1",
    "SET TRANSACTION READ WRITE",
    "ROLLBACK",
    "SET TRANSACTION READ ONLY",
    "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE, ISOLATION LEVEL READ COMMITTED",
    "SHOW transaction_isolation",
    "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
    "SHOW transaction_isolation",
    "SHOW transaction_read_only",
    "DELETE FROM tx",
    "ROLLBACK",
    "SHOW transaction_isolation",
    "BEGIN READ ONLY",
    "CREATE TABLE tx2 (a int)",
    "ROLLBACK",
    "BEGIN READ ONLY",
    "ALTER TABLE tx ADD COLUMN w int",
    "ROLLBACK",
    "BEGIN READ ONLY",
    "DROP TABLE tx",
    "ROLLBACK",
    "BEGIN READ ONLY",
    "SELECT count(*) FROM tx",
    "SET TRANSACTION READ ONLY",
    "COMMIT",
    "BEGIN",
    "SELECT current_setting('transaction_read_only')",
    "SET TRANSACTION READ ONLY",
    "SELECT current_setting('transaction_read_only'), current_setting('transaction_isolation')",
    "SET application_name = 'in_block'",
    "SELECT current_setting('application_name')",
    "COMMIT",
    "BEGIN",
    "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    "SHOW transaction_isolation",
    "SELECT 1",
    "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
    "ROLLBACK",
    "BEGIN",
    "SET transaction_read_only = on",
    "INSERT INTO tx VALUES (4, 'four')",
    "ROLLBACK",
    "SET default_transaction_read_only = 'yes'",
    "SHOW default_transaction_read_only",
    "SET default_transaction_read_only = maybe",
    "SET default_transaction_read_only = 0",
    "SHOW default_transaction_read_only",
    "SET default_transaction_isolation = 'bogus'",
    "SET default_transaction_isolation TO 'REPEATABLE READ'",
    "SHOW default_transaction_isolation",
    "RESET default_transaction_isolation",
    "SHOW default_transaction_isolation",
    "SET application_name = 'surface'",
    "SELECT set_config('application_name', 'configured', false)",
    "SET TimeZone = 'UTC'",
    "RESET ALL",
    # A savepoint around an INSERT that failed before writing.
    "BEGIN",
    "INSERT INTO tx VALUES (5, 'kept')",
    "SAVEPOINT before_error",
    "INSERT INTO tx VALUES (5, 'duplicate')",
    "ROLLBACK TO SAVEPOINT before_error",
    "RELEASE SAVEPOINT before_error",
    "COMMIT",
    "SELECT id, v FROM tx ORDER BY id",
]

# Result columns that read a table's column as it is carry the table and
# the column number in RowDescription (through subqueries, CTEs and USING
# joins, and in RETURNING lists; not through expressions).
ORIGIN_STEPS = [
    "SELECT id, v AS w, 1 + 1 AS two, id::text AS t, (id), tx.v, id + 0 FROM tx",
    "SELECT * FROM tx",
    "SELECT s.id, s.x FROM (SELECT id, id + 1 AS x FROM tx) s",
    "WITH c AS (SELECT v, id FROM tx) SELECT id, v FROM c",
    "SELECT a.v, b.v, id FROM tx a JOIN tx b USING (id)",
    "SELECT * FROM tx a JOIN tx b USING (id)",
    "SELECT * FROM tx a RIGHT JOIN tx b USING (id)",
    "SELECT * FROM tx a FULL JOIN tx b USING (id)",
    "SELECT id, count(*), max(v) FROM tx GROUP BY id",
    "SELECT id FROM tx UNION ALL SELECT id FROM tx",
    "SELECT DISTINCT v FROM tx ORDER BY v",
    "INSERT INTO tx VALUES (6, 'six') RETURNING id, v, id + 1, *",
    "UPDATE tx SET v = 'seven' WHERE id = 6 RETURNING v, tx.id",
    "DELETE FROM tx WHERE id = 6 RETURNING *",
    # Catalog tables and views (PostgreSQL's oids and column numbers).
    "SELECT relname, relnamespace, oid FROM pg_class WHERE relname = 'tx'",
    "SELECT c.relname, n.nspname, t.typinput FROM pg_class c "
    "JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_type t ON t.oid = c.reltype "
    "WHERE c.relname = 'tx'",
    "SELECT tablename, indexname FROM pg_indexes WHERE tablename = 'tx'",
    "SELECT table_name, column_name, ordinal_position FROM information_schema.columns "
    "WHERE table_name = 'tx'",
    "SELECT name, setting FROM pg_settings WHERE name = 'TimeZone'",
    "SELECT rolname FROM pg_roles WHERE rolname = 'postgres'",
    "SELECT 'pg_indexes'::regclass::oid, 'pg_settings'::regclass::oid, "
    "'pg_roles'::regclass::oid",
]


def run_steps(conn: psycopg.Connection) -> list:
    """Each step's rows (or SQLSTATE), with text and with binary results."""
    out = []
    for sql in SETUP:
        conn.execute(sql)
    for sql in STEPS:
        for binary in (False, True):
            try:
                with conn.cursor(binary=binary) as cur:
                    cur.execute(sql)
                    out.append((sql, binary, cur.fetchall(),
                                [d.type_code for d in cur.description]))
            except psycopg.Error as e:
                out.append((sql, binary, f"ERROR {e.sqlstate}"))
    for sql in MESSAGE_STEPS:
        try:
            out.append((sql, None, conn.execute(sql).fetchall()))
        except psycopg.Error as e:
            out.append((sql, None, f"ERROR {e.sqlstate} {e.diag.message_primary}"))
    return out


@pytest.mark.rocklake
def test_arrays_and_set_returning_functions_give_what_postgresql_gives(pg_server, rocklake):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    results = {}
    for name, dsn in (("postgres", pg_server.dsn(reference.db)), ("rocklake", rocklake.dsn())):
        with psycopg.connect(dsn, autocommit=True) as conn:
            results[name] = run_steps(conn)
    expected, actual = results["postgres"], results["rocklake"]
    assert len(actual) == len(expected)
    differences = [f"{e[0]} (binary={e[1]}): PostgreSQL gave {e[2:]!r}, RockLake {a[2:]!r}"
                   for e, a in zip(expected, actual) if a != e]
    assert not differences, "\n".join(differences)


def run_transaction_steps(conn: psycopg.Connection) -> list:
    """Each step's rows or error (SQLSTATE and message), with its notices."""
    notices = []
    conn.add_notice_handler(
        lambda d: notices.append((d.severity, d.sqlstate, d.message_primary)))
    out = []
    for sql in TRANSACTION_STEPS:
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                result = cur.fetchall() if cur.description else cur.statusmessage
        except psycopg.Error as e:
            result = f"ERROR {e.sqlstate} {e.diag.message_primary}"
        # What the server reported (ParameterStatus) of the settings it
        # reports changes of.
        reported = [conn.info.parameter_status(n)
                    for n in ("default_transaction_read_only", "application_name", "TimeZone")]
        out.append((sql, result, list(notices), reported))
        notices.clear()
    return out


def run_origin_steps(conn: psycopg.Connection) -> list:
    """The (table name, column number) each result column comes from (a
    user's table by name, catalogs by their oids), and the rows."""
    tables = dict(conn.execute(
        "SELECT oid, relname FROM pg_class WHERE relname IN ('tx')").fetchall())
    out = []
    for sql in ORIGIN_STEPS:
        with conn.cursor() as cur:
            cur.execute(sql)
            res = cur.pgresult
            # (sorted: some steps have no ORDER BY)
            rows = sorted((tuple(tables.get(v, v) for v in row) for row in cur.fetchall()),
                          key=repr)
            out.append((sql, [(res.fname(i).decode(), tables.get(res.ftable(i), res.ftable(i)),
                               res.ftablecol(i)) for i in range(res.nfields)], rows))
    return out


@pytest.mark.rocklake
def test_transaction_characteristics_and_result_origins_give_what_postgresql_gives(
        pg_server, rocklake):
    rocklake.start()
    reference = PostgresBackend(pg_server)
    results = {}
    for name, dsn in (("postgres", pg_server.dsn(reference.db)), ("rocklake", rocklake.dsn())):
        with psycopg.connect(dsn, autocommit=True) as conn:
            results[name] = run_transaction_steps(conn) + run_origin_steps(conn)
    expected, actual = results["postgres"], results["rocklake"]
    assert len(actual) == len(expected)
    differences = [f"{e[0]}: PostgreSQL gave {e[1:]!r}, RockLake {a[1:]!r}"
                   for e, a in zip(expected, actual) if a != e]
    assert not differences, "\n".join(differences)
