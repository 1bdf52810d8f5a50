-- Statistical, bitwise and ordered-set aggregates; ranking and value window functions.
SELECT variance(i), var_pop(i), stddev(i), stddev_pop(i), var_samp(i), stddev_samp(i) FROM (VALUES (1, 1.5::float8, 2.0::numeric, 3), (2, 2.5, 4.5, 5), (3, 3.75, 4.0, 7), (4, NULL, 8.25, 11)) t(i, f, n, b)
SELECT variance(n), var_pop(n), stddev(n), stddev_pop(n) FROM (VALUES (1, 1.5::float8, 2.0::numeric, 3), (2, 2.5, 4.5, 5), (3, 3.75, 4.0, 7), (4, NULL, 8.25, 11)) t(i, f, n, b)
SELECT variance(f), var_pop(f), stddev(f), stddev_pop(f), pg_typeof(variance(f)), pg_typeof(variance(i)) FROM (VALUES (1, 1.5::float8, 2.0::numeric, 3), (2, 2.5, 4.5, 5), (3, 3.75, 4.0, 7), (4, NULL, 8.25, 11)) t(i, f, n, b)
SELECT variance(x), stddev(x), var_pop(x), stddev_pop(x) FROM (VALUES (1), (1)) t(x)
SELECT variance(x), stddev(x), var_pop(x), stddev_pop(x) FROM (VALUES (5)) t(x)
SELECT variance(x), stddev_pop(x) FROM (VALUES (NULL::int)) t(x)
SELECT stddev(x) FROM generate_series(1, 10) x
SELECT stddev(x::numeric / 3), variance(x::numeric / 7), var_pop(x::numeric / 11) FROM generate_series(1, 10) x
SELECT stddev(x::bigint * 1000000007), variance(x::smallint) FROM generate_series(1, 20) x
SELECT var_samp(x::float4), pg_typeof(var_samp(x::float4)), stddev(x::float8 / 3) FROM generate_series(1, 5) x
SELECT variance('a'::text)
SELECT corr(f, i), covar_pop(f, i), covar_samp(f, i), regr_count(f, i), regr_sxx(f, i), regr_syy(f, i) FROM (VALUES (1, 1.5::float8, 2.0::numeric, 3), (2, 2.5, 4.5, 5), (3, 3.75, 4.0, 7), (4, NULL, 8.25, 11)) t(i, f, n, b)
SELECT regr_sxy(f, i), regr_avgx(f, i), regr_avgy(f, i), regr_r2(f, i), regr_slope(f, i), regr_intercept(f, i) FROM (VALUES (1, 1.5::float8, 2.0::numeric, 3), (2, 2.5, 4.5, 5), (3, 3.75, 4.0, 7), (4, NULL, 8.25, 11)) t(i, f, n, b)
SELECT corr(x, x * x), covar_samp(x, 2 * x), regr_slope(3 * x + 1, x), regr_intercept(3 * x + 1, x), regr_r2(1, x) FROM generate_series(1, 10) x
SELECT corr(x, 1), regr_slope(x, 1), covar_samp(x, x), regr_count(x, NULL::int) FROM (VALUES (1)) t(x)
SELECT corr(y, x), regr_count(y, x) FROM (VALUES (1, NULL), (NULL, 2), (3, 4)) t(y, x)
SELECT bit_and(b), bit_or(b), bit_xor(b), bit_and(b::int8), bit_or(b::int2), pg_typeof(bit_xor(b::int2)) FROM (VALUES (1, 1.5::float8, 2.0::numeric, 3), (2, 2.5, 4.5, 5), (3, 3.75, 4.0, 7), (4, NULL, 8.25, 11)) t(i, f, n, b)
SELECT bit_and(x), bit_or(x) FROM (VALUES (NULL::int)) t(x)
SELECT bool_and(x), bool_or(x), every(x) FROM (VALUES (true), (NULL), (false)) t(x)
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f), percentile_cont(0.25) WITHIN GROUP (ORDER BY n), percentile_disc(0.5) WITHIN GROUP (ORDER BY n) FROM (VALUES (1, 1.5::float8, 2.0::numeric, 3), (2, 2.5, 4.5, 5), (3, 3.75, 4.0, 7), (4, NULL, 8.25, 11)) t(i, f, n, b)
SELECT percentile_disc(0) WITHIN GROUP (ORDER BY i DESC), percentile_disc(1) WITHIN GROUP (ORDER BY i), mode() WITHIN GROUP (ORDER BY b % 2) FROM (VALUES (1, 1.5::float8, 2.0::numeric, 3), (2, 2.5, 4.5, 5), (3, 3.75, 4.0, 7), (4, NULL, 8.25, 11)) t(i, f, n, b)
SELECT percentile_cont(x) WITHIN GROUP (ORDER BY v) FROM (VALUES (0.1), (0.1)) p(x), generate_series(1, 10) v GROUP BY x
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM (VALUES (interval '1 day'), (interval '2 days 3 hours')) t(x)
SELECT percentile_cont(0.3) WITHIN GROUP (ORDER BY x), percentile_disc(0.3) WITHIN GROUP (ORDER BY x) FROM generate_series(1, 7) x
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x), mode() WITHIN GROUP (ORDER BY x) FROM (VALUES (NULL::int)) t(x)
SELECT mode() WITHIN GROUP (ORDER BY x) FROM (VALUES ('b'), ('a'), ('b'), ('a'), ('c')) t(x)
SELECT g, mode() WITHIN GROUP (ORDER BY x DESC), percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FROM (VALUES (1, 3), (1, 1), (2, 5), (1, 3), (2, 6)) t(g, x) GROUP BY g ORDER BY g
SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY i) FROM (VALUES (1, 1.5::float8, 2.0::numeric, 3), (2, 2.5, 4.5, 5), (3, 3.75, 4.0, 7), (4, NULL, 8.25, 11)) t(i, f, n, b)
SELECT percentile_disc(-0.1) WITHIN GROUP (ORDER BY i) FROM (VALUES (1, 1.5::float8, 2.0::numeric, 3), (2, 2.5, 4.5, 5), (3, 3.75, 4.0, 7), (4, NULL, 8.25, 11)) t(i, f, n, b)
SELECT mode(i) FROM (VALUES (1, 1.5::float8, 2.0::numeric, 3), (2, 2.5, 4.5, 5), (3, 3.75, 4.0, 7), (4, NULL, 8.25, 11)) t(i, f, n, b)
SELECT sum(i) WITHIN GROUP (ORDER BY i) FROM (VALUES (1, 1.5::float8, 2.0::numeric, 3), (2, 2.5, 4.5, 5), (3, 3.75, 4.0, 7), (4, NULL, 8.25, 11)) t(i, f, n, b)
SELECT x, ntile(3) OVER (ORDER BY x), ntile(4) OVER (ORDER BY x DESC), percent_rank() OVER (ORDER BY x / 3), cume_dist() OVER (ORDER BY x / 3) FROM generate_series(1, 10) x
SELECT x, nth_value(x, 2) OVER (ORDER BY x), nth_value(x, 3) OVER (ORDER BY x ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING), first_value(x) OVER (ORDER BY x DESC), last_value(x) OVER (ORDER BY x) FROM generate_series(1, 5) x
SELECT x, stddev(x) OVER (ORDER BY x), variance(x::float8) OVER (), bit_or(x) OVER (ORDER BY x ROWS 1 PRECEDING) FROM generate_series(1, 5) x
SELECT ntile(0) OVER () FROM generate_series(1, 3)
SELECT nth_value(1, 0) OVER () FROM generate_series(1, 3)
SELECT percent_rank() OVER (), cume_dist() OVER (), ntile(NULL) OVER () FROM generate_series(1, 1)
SELECT ntile(5) OVER (ORDER BY x), ntile(2) OVER (PARTITION BY x % 2 ORDER BY x) FROM generate_series(1, 7) x
SELECT percentile_cont(ARRAY[0.1, 0.5, NULL, 0.9]) WITHIN GROUP (ORDER BY x), percentile_disc(ARRAY[0, 0.33, 1]) WITHIN GROUP (ORDER BY x) FROM generate_series(1, 10) x
SELECT pg_typeof(percentile_disc(ARRAY[0.5]) WITHIN GROUP (ORDER BY x)), pg_typeof(percentile_cont(ARRAY[0.5]) WITHIN GROUP (ORDER BY x)) FROM generate_series(1, 3) x
