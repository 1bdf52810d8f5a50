-- Row values and composite types: ROW constructors, row comparison, row NULL tests, composite text output, whole-row references.
SELECT ROW(1, 'a'), ROW(1), ROW(), (1, 'a'), (1, 'a', NULL), ROW(NULL), ROW(NULL, NULL)
SELECT pg_typeof(ROW(1, 'a')), pg_typeof((1, 2)), pg_typeof(ROW()), ROW(1, 'a')::text, pg_typeof(ROW(1, 'a')::text)
SELECT ROW('a b', 'c,d', 'e"f', '', NULL, E'g\\h', '(x)', ' lead', 'trail ')
SELECT ROW(''), ROW(' '), ROW('x'), ROW('NULL'), ROW('null'), ROW(NULL::text), ROW('{1,2}'), ROW(E'a\tb'), ROW('é')
SELECT ROW(1.50, true, date '2020-01-01', ARRAY[1, 2], '{"a": 1}'::jsonb, -0.0::float8)
SELECT ROW('x'::char(3))
SELECT ROW(ROW(1, 'a b'), 2), ROW(ROW(NULL, ''), ROW()), ROW(ROW(ROW('"'))), ARRAY[ROW(1, 'a'), ROW(2, 'b c')]
SELECT ROW(1, 2) < ROW(1, 3), ROW(1, 2) = ROW(1, 2), (1, 2) = (1, 2), (1, 2) <> (1, 3), ROW(2, 0) > ROW(1, 9), ROW(1, 2) <= ROW(1, 2), ROW(1, 'b') > ROW(1, 'a')
SELECT ROW(1, NULL) = ROW(1, NULL), ROW(1, NULL) = ROW(2, NULL), ROW(1, NULL) <> ROW(2, NULL), ROW(1, 2) < ROW(2, NULL), ROW(1, NULL) < ROW(1, 2), ROW(NULL, 1) > ROW(NULL, 2)
SELECT ROW(1, NULL) IS DISTINCT FROM ROW(1, NULL), ROW(1, NULL) IS NOT DISTINCT FROM ROW(1, NULL), ROW(1, 2) IS DISTINCT FROM ROW(1, NULL), (1, 'a') IS DISTINCT FROM (1, 'b')
SELECT ROW(NULL, NULL) IS NULL, ROW(1, NULL) IS NULL, ROW(1, NULL) IS NOT NULL, NOT ROW(1, NULL) IS NULL, ROW(1, 2) IS NOT NULL, ROW(NULL, NULL) IS NOT NULL, ROW(NULL) IS NULL
SELECT ROW() IS NULL, ROW() IS NOT NULL, ROW(ROW(NULL)) IS NULL, ROW(ROW(NULL), NULL) IS NULL, ROW(ROW(NULL, NULL), NULL) IS NOT NULL
SELECT ROW() = ROW()
SELECT ROW(1, 2) IN (ROW(1, 2), ROW(3, 4)), (1, 2) IN ((3, 4), (5, 6)), (1, 2) NOT IN ((1, 3)), (1, NULL) IN ((1, 2)), ROW(1, 2) = ANY (ARRAY[ROW(1, 2), ROW(3, 4)])
SELECT (1, 2) = (1, 2, 3)
SELECT '(1,"a b")'::record
SELECT t FROM (SELECT 1 AS a, 'x y' AS b) t
SELECT t.* FROM (SELECT 1 AS a, 'x y' AS b) t
SELECT t, t.a, (t).b, t.* FROM (SELECT 1 AS a, 'x y' AS b, NULL::int AS c) t
SELECT ROW(t.*), ROW(t.*, 3), (t.*)::text FROM (SELECT 1 AS a, 'b' AS b) t
SELECT pg_typeof(t), t::text, pg_typeof(t.*) FROM (SELECT 1 AS a) t
SELECT count(t.*), count(t), count(*), count(t.a) FROM (VALUES (1, NULL), (NULL::int, NULL::text), (2, 'x')) t(a, b)
SELECT t, t IS NULL, t IS NOT NULL, NOT t IS NULL FROM (VALUES (NULL::int, NULL::text), (1, NULL), (1, 'a')) t(a, b)
SELECT t FROM (VALUES (2, 'b'), (1, 'z'), (1, 'a'), (1, NULL)) t(x, y) ORDER BY t
SELECT t FROM (VALUES (2, 'b'), (1, 'z'), (1, 'a')) t(x, y) ORDER BY t DESC
SELECT t = t, t < ROW(1, 'b'::text), t IS DISTINCT FROM ROW(1, 'a'::text), t = ROW(2, NULL::text) FROM (VALUES (1, 'a')) t(x, y)
SELECT t = ROW(1, 'a') FROM (VALUES (1, 'a')) t(x, y)
SELECT row_to_json(t), to_jsonb(t) FROM (SELECT 1 AS a, ROW(2, 'x') AS r, NULL::text AS n) t
SELECT (SELECT t FROM (SELECT 1 AS a, 'q' AS b) t), (SELECT ROW(1, 'x')), (SELECT (2, NULL))
SELECT array_agg(t ORDER BY a), array_agg(ROW(a, b) ORDER BY a DESC) FROM (VALUES (1, 'x y'), (2, NULL)) t(a, b)
SELECT max(ROW(a, b)::text), count(DISTINCT t) FROM (VALUES (1, 'x'), (1, 'x'), (2, 'y')) t(a, b)
SELECT (ROW(1, 2)).f1
SELECT (r).f1 FROM (SELECT ROW(1, 2) AS r) s
SELECT (t.x).a, (t.x).b, (ROW(1, 'a'::text)).f2, (ROW(ROW(1, 2), 3)).f1 FROM (SELECT x FROM (SELECT 5 AS a, 'y' AS b) x) t
SELECT (t).* FROM (SELECT 1 AS a, 2 AS b) t
SELECT ROW(1, 2) IS NULL OR ROW(NULL, 2) = ROW(NULL, 2), coalesce(NULL, ROW(1, 'a')), nullif(ROW(1, 2), ROW(1, 2))
SELECT CASE WHEN ROW(1, 'a') = ROW(1, 'a') THEN ROW(1, 'yes') ELSE ROW(0, 'no') END, greatest(ROW(1, 2), ROW(1, 3))
SELECT ROW(1, 2) = ROW(1, 2)::record
SELECT ROW(1, 'a') = (SELECT 1, 'a'), (1, 2) < (SELECT 1, 3)
SELECT t FROM (SELECT 1 AS a, 2 AS b) AS t WHERE t = ROW(1, 2)
