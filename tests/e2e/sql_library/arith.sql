-- The number operators: + - * / % over every pair of integer widths,
-- real, double precision and numeric; the bitwise operators; prefix - + @ ~;
-- overflow, division by zero, and how untyped literals resolve.
SELECT 1 + 2, 1 - 2, 2 * 3, 7 / 2, -7 / 2, 7 % 3, -7 % 3
SELECT 1::int2 + 1::int2, 1::int2 + 1::int4, 1::int4 + 1::int8, 1::int8 * 2::int2
SELECT pg_typeof(1::int2 + 1::int2), pg_typeof(1::int2 * 1::int4), pg_typeof(1::int4 - 1::int8)
SELECT 32767::int2 + 1::int2
SELECT 2147483647 + 1
SELECT -2147483648 - 1
SELECT 9223372036854775807 + 1
SELECT (-9223372036854775807 - 1) / -1
SELECT (-2147483647 - 1) % -1
SELECT 46341 * 46341
SELECT 1 / 0
SELECT 1 % 0
SELECT 1.5 / 0
SELECT 1.0::float8 / 0
SELECT 'NaN'::float8 / 0
SELECT 1::numeric / 3, 2::numeric / 3, 10::numeric / 4, 0::numeric / 3
SELECT 1::numeric / 8, 3::numeric / 2, 10000::numeric / 3, 99999::numeric / 3
SELECT 12345678901234567890::numeric / 3, 1::numeric / 7000000
SELECT 7.5 % 2, -7.5 % 2, 7 % 2.5, 0.1 + 0.2, 1.25 * 0.5, 100.00 - 0.001
SELECT 123456789012345678901234567890 * 98765432109876543210
SELECT 'NaN'::numeric + 1, 'NaN'::numeric * 0
SELECT 1.5::float4 * 2::float4, 1.5::float4 + 1::float8, pg_typeof(1::float4 * 1::float4), pg_typeof(1::float4 * 1::float8)
SELECT 0.1::float8 + 0.2::float8, 1e308::float8 * 10
SELECT 1e-300::float8 * 1e-300::float8
SELECT 1::float4 / 3::float4, 2::float8 / 3::float8
SELECT 1 + 1.5, pg_typeof(1 + 1.5), pg_typeof(1 + 1.5::float8), pg_typeof(1::int8 + 1.5)
SELECT '1' + 2, 2 + '3', pg_typeof('1' + 2)
SELECT '1.5' * 2.0
SELECT 'a' + 'b'
SELECT 'a' + 1
SELECT true + 1
SELECT 1 + null, null::int - 1, pg_typeof(1 + null)
SELECT -5, - 5, -(-5), +5, @ -5, @ -5.5, @ -5.5::float8, - 2.5::float8, -'1'::numeric
SELECT -(-32768::int2)
SELECT @ (-2147483647 - 1)
SELECT 5 & 3, 5 | 3, 5 # 3, ~5, 1 << 4, 256 >> 2, -1 >> 1, 1::int8 << 40, 1::int2 << 15
SELECT 1 << 33, 1::int2 << 17
SELECT 5.0 & 3
SELECT 2 ^ 10, 2.0 ^ 0.5, pg_typeof(2 ^ 10)
SELECT |/ 16, ||/ 27, |/ 2
SELECT |/ -1
SELECT 0 ^ -1
SELECT (-8) ^ 0.5
SELECT 10 ^ 400
SELECT 1e400::float8
SELECT 17 / 5 * 5 + 17 % 5, (1 + 2) * 3 - 4 / 2
