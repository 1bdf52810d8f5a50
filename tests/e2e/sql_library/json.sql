-- JSON and JSONB: input and normalisation, casts, operators, comparison, construction, aggregates, processing functions (PostgreSQL's "JSON Functions and Operators").
SELECT '{"b": 2, "a": 1}'::json, '{"b": 2, "a": 1}'::jsonb, '[1, 2, "foo", null]'::json, '[1,2,"foo",null]'::jsonb
SELECT '{"a":1,"a":2}'::json, '{"a":1,"a":2}'::jsonb, '{"a":{"x":1},"a":{"y":2}}'::jsonb
SELECT '{"bb":1,"a":2,"c":3,"aa":4,"":5,"B":6}'::jsonb, '{"ab":1,"b":2,"aa":3}'::jsonb
SELECT '  {"a" :  [1 ,2],   "b":{ }  }  '::json, '  {"a" :  [1 ,2],   "b":{ }  }  '::jsonb, ' true '::jsonb, E'\n[\t1 ]\r'::jsonb
SELECT '1.0'::jsonb, '1e2'::jsonb, '-0'::jsonb, '-0.0'::jsonb, '1.5E-3'::jsonb, '1E+2'::jsonb, '0.10'::jsonb, '1e2'::json, '-0'::json
SELECT '9223372036854775808'::jsonb, '-123456789012345678901234567890.123456789'::jsonb, '1e100'::jsonb, '1.3e-20'::jsonb
SELECT '"\u00e9"'::jsonb, '"\u00e9"'::json, '"\ud83d\ude00"'::jsonb, '"\u0041\n\t\"\\\/"'::jsonb, '"é"'::jsonb, '"\u00E9\u20AC"'::jsonb
SELECT '"\u00e9"'::json ->> 0, '["\u00e9"]'::json ->> 0, '"\u0041"'::json #>> '{}', '"a\/b"'::json #>> '{}'
SELECT '"abc"'::jsonb, '""'::jsonb, 'true'::jsonb, 'false'::jsonb, 'null'::jsonb, '[]'::jsonb, '{}'::jsonb, '[[],[{}]]'::jsonb
SELECT '{"aa":["a","aaa"],"qq":{"a":12,"b":16,"c":["c1","c2"],"d":{"d1":"d1","d2":"d2","d1":"d3"}}}'::jsonb
SELECT '01'::jsonb
SELECT '"\u0000"'::jsonb
SELECT '{"a":1}'::json::jsonb, '{"b":1, "a":[1, 2.50]}'::jsonb::json, '{"b":1,  "a":2}'::json::text, '{"b":1,  "a":2}'::jsonb::text
SELECT '[1,2]'::text::json, '{"x":1}'::text::jsonb, CAST('{"a": "b"}' AS jsonb), jsonb '{"a":[1,2]}', json '[ 3 ]'
SELECT pg_typeof('{}'::json), pg_typeof('{}'::jsonb), pg_typeof('{}'::jsonb -> 'a'), pg_typeof('{}'::json ->> 'a'), pg_typeof('{}'::json -> 'a')
SELECT 'true'::jsonb::bool, 'false'::jsonb::boolean, '12345'::jsonb::int4, '12345'::jsonb::numeric, '1.0'::jsonb::float8, '12345.05'::jsonb::float4
SELECT '12345.05'::jsonb::numeric, '12345.05'::jsonb::int2, '12345.5'::jsonb::int4, '-12345.5'::jsonb::int8, '1e2'::jsonb::int, '1.5e-3'::jsonb::numeric
SELECT '"hello"'::jsonb::int4
SELECT 'null'::jsonb::int
SELECT '{"a": {"b":"foo"}}'::json -> 'a', '[{"a":"foo"},{"b":"bar"},{"c":"baz"}]'::json -> 2, '[{"a":"foo"},{"b":"bar"},{"c":"baz"}]'::json -> -3
SELECT '{"a":1,"b":2}'::json ->> 'b', '[1,2,3]'::json ->> 2, '[1,2,3]'::json ->> -1, '{"a":"x y"}'::json ->> 'a', '{"a":null}'::json ->> 'a'
SELECT '{"a":[1, 2]}'::json ->> 'a', '{"a":1,"a":2}'::json -> 'a', '{"a":1, "b" : [ 1 ,2 ]}'::json -> 'b', '[1,2]'::json -> 5, '{"a":1}'::json -> 0, '3'::json -> 'a'
SELECT '{"a": {"b": ["foo","bar"]}}'::json #> '{a,b,1}', '{"a": {"b": ["foo","bar"]}}'::json #>> '{a,b,1}', '{"a": {"b": ["foo","bar"]}}'::json #> '{a}'
SELECT '{"a": {"b":"foo"}}'::jsonb -> 'a', '[{"a":"foo"},{"b":"bar"}]'::jsonb -> 1, '["a","b","c",[1,2],null]'::jsonb -> -1, '["a","b","c"]'::jsonb -> -3
SELECT '["a","b","c",[1,2],null]'::jsonb -> -6, '["a","b"]'::jsonb -> 5, '{"a":1}'::jsonb -> 0, '"foo"'::jsonb -> 'z', '[1]'::jsonb -> 'a', '"foo"'::jsonb -> 0
SELECT '{"a":1,"b":2}'::jsonb ->> 'b', '[1,2,3]'::jsonb ->> 2, '["x","y"]'::jsonb ->> -1, '{"a":null}'::jsonb ->> 'a', '{"a":[1,2]}'::jsonb ->> 'a', '{"a":"\u00e9"}'::jsonb ->> 'a'
SELECT '{"a":null}'::jsonb -> 'a', ('{"a":null}'::jsonb -> 'a') IS NULL, ('{"a":null}'::jsonb ->> 'a') IS NULL, '{"a":1}'::jsonb -> NULL::text, '{"a":1}'::jsonb -> ''
SELECT '{"n":null,"a":1,"b":[1,2],"c":{"1":2},"d":{"1":[2,3]}}'::jsonb -> 'd' -> '1', '[0,[1,[2]]]'::jsonb -> 1 -> 1 -> 0, '{"a":{"b":"c"}}'::jsonb -> 'a' ->> 'b'
SELECT '{"a": {"b": ["foo","bar"]}}'::jsonb #> '{a,b,1}', '{"a": {"b": ["foo","bar"]}}'::jsonb #>> '{a,b,1}', '{"a":"b","c":[1,2,3]}'::jsonb #> '{c,-1}'
SELECT '{"a":"b","c":[1,2,3]}'::jsonb #> '{c,-4}', '{"a":"b","c":[1,2,3]}'::jsonb #>> '{c}', '{"a":"b"}'::jsonb #> '{a,x}', '[0,1,2,[3,4],{"5":"five"}]'::jsonb #> '{4,5}'
SELECT '{"a": {"b":{"c": "foo"}}}'::jsonb #> '{}', '42'::jsonb #> '{}', '"foo"'::jsonb #>> '{}', 'null'::jsonb #>> '{}', '{"a": {"b":1}}'::jsonb #> array['a', null]
SELECT '{"a":1, "b":2}'::jsonb @> '{"b":2}'::jsonb, '{"b":2}'::jsonb <@ '{"a":1, "b":2}'::jsonb, '[1,2,3]'::jsonb @> '[3,1]', '[1,2]'::jsonb @> '[1,2,2]', '[5]'::jsonb @> '5', '5'::jsonb @> '[5]'
SELECT '{"a":[1,2,{"c":3,"x":4}],"c":"b"}'::jsonb @> '{"a":[{"x":4},1]}', '{"a":[1,2],"c":"b"}'::jsonb @> '{"a":[3]}', '{"a":"b","c":null}'::jsonb @> '{"c":null}'
SELECT '{ "name": "Bob", "tags": [ "enim", "qui"]}'::jsonb @> '{"tags":["qu"]}', '{"a":{"b":1,"c":2}}'::jsonb @> '{"a":{"c":2}}', '{"a":1}'::jsonb @> '{"a":1,"b":null}'
SELECT '1'::jsonb @> '1.0', '[1,[2,3]]'::jsonb @> '[[3]]', '[1,[2,3]]'::jsonb @> '[3]', '{}'::jsonb @> '{}', '[]'::jsonb <@ '[1]', '["a"]'::jsonb @> '"a"', '{"a":1}'::jsonb @> '[]'
SELECT '{"a":1, "b":2}'::jsonb ? 'b', '["a", "b", "c"]'::jsonb ? 'b', '{"a":null}'::jsonb ? 'a', '[1,2]'::jsonb ? '1', '"foo"'::jsonb ? 'foo', '{"a":{"b":1}}'::jsonb ? 'b'
SELECT '{"a":1, "b":2, "c":3}'::jsonb ?| array['b', 'd'], '["a", "b", "c"]'::jsonb ?& array['a', 'b'], '{"a":null, "b":"qq"}'::jsonb ?& ARRAY['c','a']
SELECT '{"a":1}'::jsonb ?| '{}'::text[], '{"a":1}'::jsonb ?& '{}'::text[], '{"a":1}'::jsonb ?| ARRAY['a', NULL], '{"a":1}'::jsonb ?& ARRAY['a','a']
SELECT '["a", "b"]'::jsonb || '["a", "d"]'::jsonb, '{"a": "b"}'::jsonb || '{"c": "d"}'::jsonb, '[1, 2]'::jsonb || '3'::jsonb, '{"a": "b"}'::jsonb || '42'::jsonb
SELECT '[1, 2]'::jsonb || jsonb_build_array('[3, 4]'::jsonb), '{"aa":1 , "b":2, "cq":3}'::jsonb || '{"cq":"l", "b":"g", "fg":false}', '"b"'::jsonb || '"a"'::jsonb
SELECT '[]'::jsonb || '{"a":"b"}'::jsonb, '{"c": 1}'::jsonb || '["a", "b"]', jsonb_concat('{"a":1}', '{"a":[2]}'), '{"a":{"b":1}}'::jsonb || '{"a":{"c":2}}', '{}'::jsonb || '[]'
SELECT '{"a": "b", "c": "d"}'::jsonb - 'a', '["a", "b", "c", "b"]'::jsonb - 'b', '{"a": "b", "c": "d"}'::jsonb - '{a,c}'::text[], '["a", "b"]'::jsonb - 1
SELECT '["a","b","c"]'::jsonb - -1, '["a","b","c"]'::jsonb - 3, '["a","b","c"]'::jsonb - -4, '{"a":1}'::jsonb - 'x', '[]'::jsonb - 1, '[1, "1"]'::jsonb - '1'
SELECT '"a"'::jsonb - 'a'
SELECT '["a", {"b":1}]'::jsonb #- '{1,b}', '{"n":null,"a":1,"b":[1,2]}'::jsonb #- '{b,-1}', '{"a":1}'::jsonb #- '{x,y}', '[1,2,3]'::jsonb #- '{0}', '{}'::jsonb #- '{a}'
SELECT '[1,2,3]'::jsonb #- '{x}'
SELECT '1.0'::jsonb = '1'::jsonb, '{"a":1,"b":2}'::jsonb = '{"b":2,"a":1}'::jsonb, '[1,2]'::jsonb = '[2,1]'::jsonb, '"1"'::jsonb = '1'::jsonb, '{"x":"y"}'::jsonb <> '{"x":"z"}'::jsonb
SELECT '[1,2]'::jsonb < '[1,3]'::jsonb, '[1,2,3]'::jsonb > '[9]'::jsonb, '{"a":1}'::jsonb < '{"a":2}'::jsonb, '{"b":1}'::jsonb > '{"a":1,"c":2}'::jsonb, 'null'::jsonb < '"a"'::jsonb
SELECT '"a"'::jsonb < '1'::jsonb, '1'::jsonb < 'false'::jsonb, 'false'::jsonb < 'true'::jsonb, 'true'::jsonb < '[]'::jsonb, '[]'::jsonb < 'null'::jsonb, '[[]]'::jsonb < '{}'::jsonb
SELECT '"abc"'::jsonb < '"abd"'::jsonb, '"b"'::jsonb > '"aa"'::jsonb, '1.5'::jsonb >= '1.50'::jsonb, '{"a":[1]}'::jsonb <= '{"a":[1,2]}'::jsonb, jsonb_cmp('[1]', '[true]')
SELECT j FROM (VALUES ('{}'::jsonb), ('[]'), ('null'), ('true'), ('1'), ('"a"'), ('[1]'), ('{"a":1}'), ('false'), ('-1.5'), ('""'), ('[0,0]'), ('{"a":1,"b":2}'), ('[null]')) v(j) ORDER BY j
SELECT j FROM (VALUES ('{"b":1}'::jsonb), ('{"a":2}'), ('{"a":1}'), ('{"aa":0}'), ('[2]'), ('[1,1]'), ('["a"]'), ('[true]'), ('"B"'), ('"a"'), ('10'), ('9.5')) v(j) ORDER BY j DESC
SELECT count(DISTINCT j), count(j) FROM (VALUES ('1'::jsonb), ('1.0'), ('1.00'), ('[1]'), ('{"a":1}'), ('{"a":1.0}')) v(j)
SELECT to_json('Fred said "Hi."'::text), to_jsonb('Fred said "Hi."'::text), to_json(42), to_jsonb(-1.50), to_jsonb(1e3::float8), to_json(true), to_jsonb(false)
SELECT to_jsonb('NaN'::float8), to_json(1.0e-5::numeric), to_jsonb(3::int2), to_jsonb(12345678901234::int8), to_jsonb(0.1::float4)
SELECT to_jsonb('Infinity'::numeric)
SELECT to_json(E'a\tb\u0001"\\/'::text), to_jsonb(E'line1\nline2'::text), to_json('é'::text), to_json('x'::varchar), to_jsonb('abc'::name)
SELECT to_json('x'::char(3))
SELECT to_json(ARRAY[1,2,3]), to_jsonb(ARRAY['a',NULL,'c']), to_json('{}'::int[]), to_jsonb(ARRAY[true,false]), array_to_json(ARRAY[1,5])
SELECT to_jsonb('{{1,5},{99,100}}'::int[]), array_to_json('{{1,5},{99,100}}'::int[])
SELECT to_jsonb(timestamp '2014-05-28 12:22:35.614298'), to_json(timestamp '2014-05-28 12:22:35'), to_jsonb(timestamptz '2014-05-28 12:22:35.614298-04'), to_jsonb(date '2014-05-28')
SELECT to_json(date 'infinity'), to_jsonb(timestamp '-infinity'), to_jsonb(time '10:11:12.5'), to_json(interval '1 day 2 hours'), to_jsonb('\x0102'::bytea)
SELECT to_json(NULL::text), to_jsonb(NULL::int), to_jsonb(NULL::int) IS NULL, to_json('{"a":1}'::jsonb), to_jsonb('{"b":1, "a":2}'::json), to_jsonb('[1, 2]'::text)
SELECT to_jsonb(row(42, 'Fred said "Hi."'::text)), to_json(row(1, NULL, ARRAY[1,2])), to_jsonb(row()), row_to_json(row(1,'foo')), to_json(row(row(1, 'a'), 2))
SELECT json_build_array(1, 2, 'foo', 4, 5), jsonb_build_array(1, 2, 'foo', 4, 5), json_build_array(), jsonb_build_array(), json_build_array(NULL), jsonb_build_array('a', NULL)
SELECT jsonb_build_array('a',1,'b',1.2,'c',true,'d',null,'e',json '{"x": 3, "y": [1,2,3]}'), json_build_array('e',json '{"x": 3, "y": [1,2,3]}', 1.50)
SELECT json_build_array(ARRAY[1,2], '{"a":1}'::jsonb, '[1, 2]'::json, 'x'::text)
SELECT jsonb_build_array(VARIADIC '{1,2,3,4}'::int[]), jsonb_build_array(VARIADIC '{a,b,c}'::text[])
SELECT json_build_object('foo', 1, 2, row(3,'bar')), jsonb_build_object('foo', 1, 2, row(3,'bar')), json_build_object(), jsonb_build_object(), json_build_object(1,2)
SELECT jsonb_build_object('a',1,'b',1.2,'c',true,'d',null,'e',json '{"x": 3, "y": [1,2,3]}'), json_build_object('b', 1, 'a', 2, 'b', 3), jsonb_build_object('b', 1, 'a', 2, 'b', 3)
SELECT json_build_object(true, 'x', 1.5, '2014-05-28'::date), jsonb_build_object('a', jsonb_build_object('b',false,'c',99), 'd', jsonb_build_array(9,8,7)), jsonb_build_object('a', NULL)
SELECT jsonb_build_object('a', 'b', 'c')
SELECT jsonb_build_object(NULL, 'a')
SELECT json_object('{a, 1, b, "def", c, 3.5}'), json_object('{a,b}', '{1,2}'), json_object('{}'), json_object('{}', '{}')
SELECT json_object('{{a, 1}, {b, "def"}, {c, 3.5}}')
SELECT jsonb_object('{a, 1, b, "def", c, 3.5}'), jsonb_object('{b,1,a,2,b,3}'), json_object('{b,1,a,NULL,b,3}')
SELECT jsonb_object('{{a,1},{b,2},{3,NULL},{"d e f","a b c"}}')
SELECT jsonb_object('{a,b,"","d e f"}','{1,2,3,"a b c"}'), json_object('{a,b,"","d e f"}','{1,2,NULL,"a b c"}'), jsonb_object('{}', '{}')
SELECT json_object('{a,b,c}')
SELECT json_agg(x), jsonb_agg(x), json_agg(x ORDER BY x DESC), jsonb_agg(x ORDER BY x DESC) FROM (VALUES (1), (NULL), (3), (2)) v(x)
SELECT json_agg(s ORDER BY s), jsonb_agg(j ORDER BY s), json_agg(j ORDER BY s) FROM (VALUES ('b', '{"k": 1}'::jsonb), ('a', '[1, 2]'), ('c', 'null')) v(s, j)
SELECT json_agg(v ORDER BY a), jsonb_agg(v ORDER BY a DESC) FROM (VALUES (1, 'x'), (2, 'y z')) v(a, b)
SELECT json_agg(x) FILTER (WHERE x > 1), jsonb_agg(x) FILTER (WHERE x > 5), json_agg(DISTINCT x ORDER BY x) FROM (VALUES (1), (2), (2), (3)) v(x)
SELECT json_agg(s ORDER BY s DESC), jsonb_agg(s ORDER BY s), json_agg(d ORDER BY d) FROM (VALUES ('a"b', date '2020-01-02'), (NULL, date '2019-12-31')) v(s, d)
SELECT json_object_agg(k, v ORDER BY k), jsonb_object_agg(k, v ORDER BY k), json_object_agg(k, v ORDER BY k DESC) FROM (VALUES ('b', 1), ('a', 2), ('c', NULL)) t(k, v)
SELECT jsonb_object_agg(k, v ORDER BY v), json_object_agg(k, v ORDER BY v) FROM (VALUES ('a', 1), ('a', 2), ('b', 3)) t(k, v)
SELECT jsonb_object_agg(k, j ORDER BY k), json_object_agg(n, j ORDER BY n) FROM (VALUES ('x', '[1, 2]'::jsonb, 10), ('y', '{"b":1}', 2)) t(k, j, n)
SELECT json_agg(x), jsonb_agg(x), json_object_agg(x, x), jsonb_object_agg(x, x) FROM (VALUES (1)) v(x) WHERE x > 1
SELECT jsonb_object_agg(k, v) FROM (VALUES (NULL::text, 1)) t(k, v)
SELECT * FROM jsonb_each('{"a":"foo", "b":"bar"}')
SELECT * FROM jsonb_each('{"f1":[1,2,3],"f2":{"f3":1},"f4":null,"f5":99,"f6":"stringy","f0":1.50}') q
SELECT key, value FROM jsonb_each_text('{"f1":[1,2,3],"f2":{"f3":1},"f4":null,"f5":"null","f6":"stringy"}')
SELECT * FROM json_each('{"b":1, "a":[true, 2], "b":"x y"}')
SELECT key, value, value IS NULL FROM json_each_text('{"a":"foo", "b":null, "c":{"x": 1}, "d":"\u00e9"}')
SELECT jsonb_each('{"b":1, "a":{"c":2}}'), json_each('{"x": [1, 2], "b":"s"}'), json_each_text('{"a":"foo","b":[1, 2]}'), jsonb_each_text('{"z":null}')
SELECT (jsonb_each('{"a":1,"b":"x"}')).key, (jsonb_each('{"a":1,"b":"x"}')).value, pg_typeof((jsonb_each('{"a":1}')).value)
SELECT e.key, e.value FROM jsonb_each('{"b":2,"a":1}') AS e WHERE e.value::int > 1
SELECT * FROM jsonb_array_elements('[1,true,[1,[2,3]],null,{"f1":1,"f2":[7,8,9]},false,"stringy"]')
SELECT value, pg_typeof(value) FROM jsonb_array_elements_text('[1,true,[1,[2,3]],null,{"f1":1,"f2":[7,8,9]},false,"stringy"]')
SELECT json_array_elements('[1, "two", {"a" : [3]}, null]'), json_array_elements_text('[1, "two", {"a" : [3]}, null]')
SELECT x FROM json_array_elements_text('["foo", "bar", "\u00e9"]') AS t(x)
SELECT ordinality, value FROM jsonb_array_elements('["c","a","b"]') WITH ORDINALITY
SELECT (SELECT count(*) FROM jsonb_array_elements('[]')), (SELECT count(*) FROM json_each('{}')), (SELECT count(*) FROM jsonb_object_keys('{}'))
SELECT * FROM jsonb_array_elements('{"a":1}')
SELECT jsonb_object_keys('{"f1":"abc","f2":{"f3":"a", "f4":"b"}}'), json_object_keys('{"f1":"abc","f2":{"f3":"a", "f4":"b"}}')
SELECT jsonb_object_keys('{"bb":1,"a":2,"c":3,"a":4}'), json_object_keys('{"bb":1,"a":2,"c":3,"a":4}')
SELECT * FROM jsonb_object_keys('{"b":{"x":1},"a":[1]}')
SELECT jsonb_typeof('{}'), jsonb_typeof('[]'), jsonb_typeof('"a"'), jsonb_typeof('-1.0'), jsonb_typeof('1e2'), jsonb_typeof('true'), jsonb_typeof('null'), jsonb_typeof(NULL)
SELECT json_typeof('-123.4'), json_typeof('null'::json), json_typeof(NULL::json) IS NULL, json_typeof(' {"a":1} '), json_typeof('[]'), json_typeof('"x"'), json_typeof('false')
SELECT json_array_length('[1,2,3,{"f1":1,"f2":[5,6]},4]'), jsonb_array_length('[]'), jsonb_array_length('[1,[2,3],{"a":[4]}]'), json_array_length('[ ]')
SELECT jsonb_array_length('{"f1":1,"f2":[5,6]}')
SELECT jsonb_set('[{"f1":1,"f2":null},2,null,3]', '{0,f1}', '[2,3,4]', false), jsonb_set('[{"f1":1,"f2":null},2]', '{0,f3}', '[2,3,4]')
SELECT jsonb_set('[{"f1":1,"f2":null},2]', '{0,f3}', '[2,3,4]', false), jsonb_set('[1,2,3]', '{1}', '"x"', false), jsonb_set('[1,2,3]', '{5}', '"x"', false)
SELECT jsonb_set('{"a":1,"b":[0,1,2],"c":{"d":4}}','{b,-1}','"x"'), jsonb_set('{"a":1,"b":[0,1,2]}','{b,-33}','{"foo":123}'), jsonb_set('{"a":1,"b":[0,1,2]}','{b,33}','{"foo":123}')
SELECT jsonb_set('{"a":1,"b":[0,1,2],"c":{"d":4}}','{c,e}','{"foo":123}'), jsonb_set('{"a":1}','{x,y}','1'), jsonb_set('{}','{x}','{"foo":123}'), jsonb_set('[]','{-99}','1')
SELECT jsonb_set('{"a":1}', '{a}', 'null'), jsonb_set('{"a":1}', '{a}', NULL), jsonb_set('{"n":null, "a":1, "b":[1,2]}'::jsonb, '{b,-1}', '{"1": 2}'), jsonb_set('{"a":1}', '{}', '2')
SELECT jsonb_set('"a"','{a}','"b"')
SELECT jsonb_insert('{"a": [0,1,2]}', '{a, 1}', '"new_value"'), jsonb_insert('{"a": [0,1,2]}', '{a, 1}', '"new_value"', true), jsonb_insert('{"a": [0,1,2]}', '{a, -1}', '"new_value"', true)
SELECT jsonb_insert('{"a": [0,1,2]}', '{a, 10}', '"v"'), jsonb_insert('{"a": [0,1,2]}', '{a, -10}', '"v"'), jsonb_insert('[]', '{1}', '"v"'), jsonb_insert('{"a": {"b": 1}}', '{a, c}', '2', true)
SELECT jsonb_insert('{"a": {"b": "value"}}', '{a, b}', '"new_value"')
SELECT jsonb_strip_nulls('{"a":1,"b":null,"c":[2,null,3],"d":{"e":4,"f":null}}'), jsonb_strip_nulls('[1,{"a":1,"b":null,"c":2},3]'), jsonb_strip_nulls('null')
SELECT jsonb_strip_nulls('{"a": {"b": null, "c": null}, "d": {} }'), json_strip_nulls('[{"f1":1, "f2":null}, 2, null, 3]'), json_strip_nulls('{"a": 1,  "b" : null, "c": { "d" : null , "e": [ 1 ] } }')
SELECT jsonb_pretty('[{"f1":1,"f2":null}, 2]')
SELECT jsonb_pretty('{"a": "test", "b": [1, 2, 3], "d":{"dd": "test4", "dd2":{"ddd": "test5"}}}'), jsonb_pretty('{}'), jsonb_pretty('[]'), jsonb_pretty('[[]]'), jsonb_pretty('1')
SELECT jsonb_extract_path('{"f2":{"f3":1},"f4":{"f5":99,"f6":"foo"}}', 'f4', 'f6'), jsonb_extract_path_text('{"f4":{"f5":99,"f6":"foo"}}', 'f4', 'f6')
SELECT jsonb_extract_path('{"f2":["f3",1]}','f2','1'), jsonb_extract_path('{"a":1}','b','c'), jsonb_extract_path_text('[0,null]','1') IS NULL, jsonb_extract_path('[0,null]','1')
SELECT json_extract_path('{"f2":{"f3":1},"f4":{"f5":99,"f6":"foo"}}', 'f4', 'f6'), json_extract_path_text('{"f4":{"f5":99,"f6":"foo"}}', 'f4', 'f6')
SELECT json_extract_path('{"f2":["f3",1]}','f2','-1'), json_extract_path_text('{"a":null}','a'), json_extract_path('{"a":{"b" : [ 1 ]}}', 'a')
SELECT json_extract_path_text('{"a":"x"}', VARIADIC '{a}')
SELECT row_to_json(t) FROM (SELECT 1 AS a, 'x' AS b) t
SELECT row_to_json(t), to_jsonb(t), to_json(t) FROM (SELECT 1 AS a, 'x y' AS "B", NULL::int AS c, ARRAY[1,2] AS d, '{"z":1}'::jsonb AS e) t
SELECT row_to_json(t, true), row_to_json(t, false) FROM (SELECT 1 AS a, 'x y' AS b, ARRAY['p', 'q'] AS c) t
SELECT to_jsonb(t) FROM (VALUES (2, 'b'), (1, 'a')) t(n, s) ORDER BY n
SELECT json_agg(t ORDER BY n), jsonb_agg(t ORDER BY n DESC) FROM (VALUES (2, 'b'), (1, 'a')) t(n, s)
SELECT jsonb_object_agg(s, t ORDER BY s), json_object_agg(s, t ORDER BY s) FROM (VALUES (2, 'b'), (1, 'a')) t(n, s)
SELECT (repeat('[', 1000000) || repeat(']', 1000000))::jsonb
SELECT (repeat('{"a":', 1000000) || '1' || repeat('}', 1000000))::json
