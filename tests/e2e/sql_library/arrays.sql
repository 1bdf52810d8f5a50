-- Array functions on one-dimensional arrays.
SELECT cardinality(ARRAY[1, 2, 3]), cardinality('{}'::int[]), cardinality(ARRAY['a'])
SELECT array_length(ARRAY[1, 2, 3], 1), array_length(ARRAY[1, 2, 3], 2), array_length('{}'::int[], 1)
SELECT array_lower(ARRAY[5, 6, 7], 1), array_upper(ARRAY[5, 6, 7], 1), array_upper(ARRAY[5], 0)
SELECT array_ndims(ARRAY[1, 2]), array_ndims('{}'::int[]), array_dims(ARRAY[1, 2, 3]), array_dims('{}'::text[])
SELECT array_append(ARRAY[1, 2], 3), array_append(NULL::int[], 1), array_append(ARRAY[1], NULL)
SELECT array_append(ARRAY[1], 1.5), array_append('{1}', 2), pg_typeof(array_append(ARRAY[1], 1.5))
SELECT array_prepend(0, ARRAY[1, 2]), array_prepend(NULL, ARRAY[1]), array_prepend('x', ARRAY['a'])
SELECT array_cat(ARRAY[1, 2], ARRAY[3, 4]), array_cat(NULL::int[], ARRAY[2]), array_cat(NULL::int[], NULL::int[])
SELECT array_position(ARRAY['a', 'b', 'c'], 'b'), array_position(ARRAY[1, 2], 3), array_position(ARRAY[1, NULL], NULL)
SELECT array_positions(ARRAY[1, 2, 1, 3, 1], 1), array_positions(ARRAY[1], 2), array_positions(NULL::int[], 1)
SELECT array_remove(ARRAY[1, 2, 3, 2], 2), array_remove(ARRAY[1, NULL, 2], NULL), array_remove(NULL::int[], 1)
SELECT array_replace(ARRAY[1, 2, 5, 4], 5, 3), array_replace(ARRAY[1, NULL], NULL, 0)
SELECT array_fill(7, ARRAY[3]), array_fill('x'::text, ARRAY[2]), array_fill(1, ARRAY[0])
SELECT array_fill(1, ARRAY[-1])
SELECT cardinality(1)
SELECT array_append(ARRAY[1], 'x')
SELECT array_length('1 2'::int2vector, 1), cardinality('1 2 3'::int2vector)
SELECT ARRAY[1,4,3] @> ARRAY[3,1,3], ARRAY[2,7] <@ ARRAY[1,7,4,2,6], ARRAY[1,4,3] && ARRAY[2,1], ARRAY[1,NULL] @> ARRAY[NULL]::int[], '{}'::int[] <@ ARRAY[1], ARRAY[1] && '{}'::int[]
SELECT ARRAY[1,2] @> '{1}', ARRAY['a'] && '{a,b}', ARRAY['b'] <@ ARRAY['a'], NULL::int[] @> ARRAY[1]
SELECT ARRAY[1,2] @> ARRAY[1.5]
