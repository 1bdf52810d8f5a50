//! Known answers produced by a real PostgreSQL 15.18 (TimeZone UTC,
//! `extra_float_digits = 1`): for each value, its `*send` bytes and its text
//! output. Every value must decode from those bytes, encode back to exactly
//! those bytes, and print exactly that text.
//!
//! Regenerate with a query of the form
//! `SELECT 'float8' || '|' || encode(float8send(x), 'hex') || '|' || x::text
//! FROM unnest(ARRAY[...]::float8[]) x` per type (bool's `::text` spells
//! `true`/`false`, where `boolout` prints `t`/`f`; tabs are written `\t`).

#![allow(clippy::result_large_err)]

use bytes::BytesMut;
use rocklake_types::datum::PgType;
use rocklake_types::value::binary::{put_value, read_value};
use rocklake_types::value::text::format_text;

const REFERENCE: &str = r#"
float8|0000000000000000|0
float8|8000000000000000|-0
float8|3fb999999999999a|0.1
float8|430c6bf526340000|1e+15
float8|3ee4f8b588e368f1|1e-05
float8|42dc12218377de40|123456789012345
float8|7fefffffffffffff|1.7976931348623157e+308
float8|0000000000000001|5e-324
float8|7ff8000000000000|NaN
float8|7ff0000000000000|Infinity
float8|fff0000000000000|-Infinity
float8|3fd5555555555555|0.3333333333333333
float8|4059000000000000|100
float8|7e41eb2d66005835|1.5e+300
float8|4028b0a3d70a3d71|12.345
float8|3efa36e2eb1c432d|2.5e-05
float8|3f1a36e2eb1c432d|0.0001
float8|42d6bcc41e900000|100000000000000
float8|430c6bf52633ffff|999999999999999.9
float4|3dcccccd|0.1
float4|49742400|1e+06
float4|47c35000|100000
float4|7f7fffff|3.4028235e+38
float4|7fc00000|NaN
float4|00800000|1.1754944e-38
float4|3eaaaaab|0.33333334
float4|47f1205a|123456.7
float4|497423fe|999999.9
float4|38d1b717|0.0001
float4|3727c5ac|1e-05
interval|00000000000000000000000000000000|00:00:00
interval|00000000000000000000000100000000|1 day
interval|000000036c97ca88000000030000000e|1 year 2 mons 3 days 04:05:06.789
interval|fffffffffff0bdc000000003ffffffff|-1 mons +3 days -00:00:01
interval|00000000000f4240ffffffff00000000|-1 days +00:00:01
interval|ffffffffffe91ca00000000000000000|-00:00:01.5
interval|00000053d1ac10000000000000000000|100:00:00
interval|0000000000000000000000000000000c|1 year
interval|0000000000000000fffffffdfffffff2|-1 years -2 mons -3 days
interval|0000000000000000ffffffff00000001|1 mon -1 days
interval|fffffffc93743f8000000003fffffff2|-1 years -2 mons +3 days -04:05:06
interval|00000000000000010000000000000001|1 mon 00:00:00.000001
interval|0000000000000000fffffffe00000000|-2 days
timestamptz|000304a8203e9e40|2026-12-02 16:44:32.123456+00
timestamptz|0000000000000000|2000-01-01 00:00:00+00
timestamptz|ffffffffffffffff|1999-12-31 23:59:59.999999+00
timestamptz|ff1fe2ffc59c6000|0001-01-01 00:00:00+00
timestamptz|ff1fe2eba7c50000|0001-12-31 00:00:00+00 BC
timestamptz|ff1af9e8fb46d000|0044-03-15 12:00:00+00 BC
timestamptz|7fffffffffffffff|infinity
timestamptz|8000000000000000|-infinity
timestamptz|7fffff5bb3a35dc0|294276-12-31 23:59:59+00
timestamptz|000000000007a120|2000-01-01 00:00:00.5+00
timestamptz|fd0f7fbdaf17e000|4713-01-01 00:00:00+00 BC
timestamp|000304a8203e9e40|2026-12-02 16:44:32.123456
timestamp|fffca2fec4c82000|1970-01-01 00:00:00
timestamp|ff1fe2ffc59ad960|0001-12-31 23:59:59.9 BC
timestamp|7fffffffffffffff|infinity
timestamp|0380e70b913b8000|10000-01-01 00:00:00
date|00002279|2024-02-29
date|fff4dbf9|0001-01-01
date|fff4dbf8|0001-12-31 BC
date|7fffffff|infinity
date|80000000|-infinity
date|7fda970c|5874897-12-31
date|ffff718f|1900-03-01
time|0000000000000000|00:00:00
time|000000141dd76000|24:00:00
time|0000000ae5cb9f4a|13:00:05.00001
time|000000141dd75fff|23:59:59.999999
timetz|00000000d693a40000000000|01:00:00+00
timetz|00000000d693a400ffffe3e0|01:00:00+02
timetz|00000000d693a40000004d58|01:00:00-05:30
timetz|00000000d693a400fffffff6|01:00:00+00:00:10
timetz|000000141dd760000000e0c4|24:00:00-15:59
timetz|0000000a8be6260800000e10|12:34:56.789-01
numeric|0000000000000000|0
numeric|0000000000000002|0.00
numeric|0002000040000003000c0d48|-12.340
numeric|00010005000000000001|100000000000000000000
numeric|0001ffff000000040001|0.0001
numeric|0001fffe0000000503e8|0.00001
numeric|000300010000000104d2162e2328|12345678.9
numeric|0002fffe40000009000c0bb8|-0.000000123
numeric|0001000000000000270f|9999
numeric|00010001000000000001|10000
numeric|00000000c0000000|NaN
numeric|00000000d0000020|Infinity
numeric|00000000f0000020|-Infinity
numeric|000a00090000000000aa0583209a01d5090d0c601c871bf620da165f|170141183460469231731687303715884105727
numeric|0001ffff00000004000f|0.0015
numeric|0003000300000000000109291770|1234560000000
numeric|0000000000000000|0
numeric|0004000100000008270f270f270f270f|99999999.99999999
numeric|0001ffff0000000403e8|0.1000
bytea||\x
bytea|dead00ff|\xdead00ff
uuid|a0eebc999c0b4ef8bb6d6bb9bd380a11|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11
uuid|00000000000000000000000000000000|00000000-0000-0000-0000-000000000000
int2[]|000000000000000000000015|{}
int2[]|000000010000000000000015000000020000000100000002000100000002fffe|{1,-2}
int2[]|0000000100000000000000150000000100000001000000027fff|{32767}
tid|000000000001|(0,1)
tid|ffffffffffff|(4294967295,65535)
bool|01|true
bool|00|false
oid|00000000|0
oid|ffffffff|4294967295
int8|8000000000000000|-9223372036854775808
int8|7fffffffffffffff|9223372036854775807
int4|80000000|-2147483648
int4|0000002a|42
int2|8000|-32768
int2|0007|7
text|68c3a96c6c6f|héllo
text||
text|7461620978|tab\tx
varchar|6475636b6c616b65|ducklake
name|6475636b6c616b655f736e617073686f74|ducklake_snapshot
char|61|a
char|70|p
"#;

fn pg_type(name: &str) -> PgType {
    match name {
        "float8" => PgType::Float8,
        "float4" => PgType::Float4,
        "interval" => PgType::Interval,
        "timestamptz" => PgType::TimestampTz,
        "timestamp" => PgType::Timestamp,
        "date" => PgType::Date,
        "time" => PgType::Time,
        "timetz" => PgType::TimeTz,
        "numeric" => PgType::Numeric(None),
        "bytea" => PgType::Bytea,
        "uuid" => PgType::Uuid,
        "int2[]" => PgType::array_of(PgType::Int2),
        "tid" => PgType::Tid,
        "bool" => PgType::Bool,
        "oid" => PgType::Oid,
        "int8" => PgType::Int8,
        "int4" => PgType::Int4,
        "int2" => PgType::Int2,
        "text" => PgType::Text,
        "varchar" => PgType::Varchar,
        "name" => PgType::Name,
        "char" => PgType::Char,
        other => panic!("unknown type {other} in reference"),
    }
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn every_value_matches_postgres_bytes_and_text() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in REFERENCE.lines().filter(|l| !l.is_empty()) {
        let mut parts = line.splitn(3, '|');
        let (ty, hex, text) = (
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap(),
        );
        let pg = pg_type(ty);
        let bytes = unhex(hex);
        let expected_text = match (ty, text) {
            ("bool", "true") => "t".to_string(),
            ("bool", "false") => "f".to_string(),
            _ => text.replace("\\t", "\t"),
        };
        let datum = match read_value(&pg, &bytes) {
            Ok(d) => d,
            Err(e) => {
                failures.push(format!("{line}: decode failed: {e}"));
                continue;
            }
        };
        let mut encoded = BytesMut::new();
        put_value(&mut encoded, &pg, &datum).unwrap();
        if encoded.to_vec() != bytes {
            failures.push(format!("{line}: re-encoded as {}", hex_of(&encoded)));
        }
        let printed = format_text(&datum).unwrap();
        if printed != expected_text {
            failures.push(format!("{line}: printed {printed:?}"));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
    assert!(checked > 100, "only {checked} reference values");
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
