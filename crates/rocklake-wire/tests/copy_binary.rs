//! Binary COPY codec: known answers from the DuckDB capture and PostgreSQL,
//! malformed-input errors, and round-trip properties under arbitrary chunking.

#![allow(clippy::result_large_err)]

use proptest::prelude::*;
use rocklake_types::copy::binary::{decode_stream, encode_stream, CopyInDecoder, HEADER_LEN};
use rocklake_types::datum::{ColumnDef, Datum, PgType, Row};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn cols(types: &[PgType]) -> Vec<ColumnDef> {
    types
        .iter()
        .enumerate()
        .map(|(i, t)| ColumnDef::new(format!("c{i}"), t.clone()))
        .collect()
}

const HEADER: &str = "5047434f50590aff0d0a00 00000000 00000000";

/// `COPY "public"."ducklake_snapshot" FROM STDIN (FORMAT BINARY)` as DuckDB
/// sends it at catalog creation: one tuple `int8 0 ; timestamptz ; int8 0 ;
/// int8 1 ; int8 0`.
#[test]
fn ducklake_snapshot_tuple_known_answer() {
    let types = [
        PgType::Int8,
        PgType::TimestampTz,
        PgType::Int8,
        PgType::Int8,
        PgType::Int8,
    ];
    // 2026-12-02 11:09:58.766649 UTC in microseconds since 2000-01-01.
    let row = vec![
        Datum::Int8(0),
        Datum::TimestampTz(849_524_998_766_649),
        Datum::Int8(0),
        Datum::Int8(1),
        Datum::Int8(0),
    ];
    let expected = hex(&format!(
        "{HEADER}
         0005
         00000008 0000000000000000
         00000008 000304a373c78039
         00000008 0000000000000000
         00000008 0000000000000001
         00000008 0000000000000000
         ffff"
    ));
    let encoded = encode_stream(&types, std::slice::from_ref(&row)).unwrap();
    assert_eq!(encoded.to_vec(), expected);

    // DuckDB sends it as three CopyData messages: header, tuples, trailer.
    let tuple_end = expected.len() - 2;
    let mut decoder = CopyInDecoder::new(cols(&types));
    decoder.feed(&expected[..HEADER_LEN]).unwrap();
    decoder.feed(&expected[HEADER_LEN..tuple_end]).unwrap();
    assert_eq!(decoder.row_count(), 1);
    decoder.feed(&expected[tuple_end..]).unwrap();
    assert_eq!(decoder.finish().unwrap(), vec![row]);
}

/// `COPY "public"."ducklake_schema"`: `int8 0 ; uuid ; int8 0 ; NULL ; text
/// 'main' ; text 'main/' ; bool 1`.
#[test]
fn ducklake_schema_tuple_with_null_and_uuid() {
    let types = [
        PgType::Int8,
        PgType::Uuid,
        PgType::Int8,
        PgType::Int8,
        PgType::Varchar,
        PgType::Varchar,
        PgType::Bool,
    ];
    let uuid = hex("a0eebc999c0b4ef8bb6d6bb9bd380a11");
    let row = vec![
        Datum::Int8(0),
        Datum::Uuid(uuid.clone().try_into().unwrap()),
        Datum::Int8(0),
        Datum::Null,
        Datum::Text("main".into()),
        Datum::Text("main/".into()),
        Datum::Bool(true),
    ];
    let expected = hex(&format!(
        "{HEADER} 0007
         00000008 0000000000000000
         00000010 a0eebc999c0b4ef8bb6d6bb9bd380a11
         00000008 0000000000000000
         ffffffff
         00000004 6d61696e
         00000005 6d61696e2f
         00000001 01
         ffff"
    ));
    assert_eq!(
        encode_stream(&types, std::slice::from_ref(&row))
            .unwrap()
            .to_vec(),
        expected
    );
    assert_eq!(decode_stream(&cols(&types), &expected).unwrap(), vec![row]);
}

#[test]
fn empty_stream_is_header_and_trailer() {
    let encoded = encode_stream(&[PgType::Int8], &[]).unwrap();
    assert_eq!(encoded.len(), 21);
    assert_eq!(encoded.to_vec(), hex(&format!("{HEADER} ffff")));
    assert_eq!(
        decode_stream(&cols(&[PgType::Int8]), &encoded).unwrap(),
        Vec::<Row>::new()
    );
}

/// PostgreSQL's `numeric_send` output for a few values inside a COPY field.
#[test]
fn numeric_fields_match_postgres() {
    let cases = [
        ("0", "0000 0000 0000 0000"),
        ("-12.340", "0002 0000 4000 0003 000c 0d48"),
        ("100000000000000000000", "0001 0005 0000 0000 0001"),
        ("0.0001", "0001 ffff 0000 0004 0001"),
        ("NaN", "0000 0000 c000 0000"),
    ];
    let types = [PgType::Numeric(Some((38, 10)))];
    for (text, body) in cases {
        let body = hex(body);
        let mut expected = hex(&format!("{HEADER} 0001"));
        expected.extend_from_slice(&(body.len() as i32).to_be_bytes());
        expected.extend_from_slice(&body);
        expected.extend_from_slice(&[0xFF, 0xFF]);
        let row = vec![Datum::Numeric(text.into())];
        assert_eq!(
            encode_stream(&types, std::slice::from_ref(&row))
                .unwrap()
                .to_vec(),
            expected,
            "{text}"
        );
        assert_eq!(decode_stream(&cols(&types), &expected).unwrap(), vec![row]);
    }
    // "1e20" is accepted as input and comes back in canonical form.
    let encoded = encode_stream(&types, &[vec![Datum::Numeric("1e20".into())]]).unwrap();
    assert_eq!(
        decode_stream(&cols(&types), &encoded).unwrap(),
        vec![vec![Datum::Numeric("100000000000000000000".into())]]
    );
}

fn decode_err(types: &[PgType], bytes: &[u8]) -> rocklake_types::SqlError {
    decode_stream(&cols(types), bytes).unwrap_err()
}

#[test]
fn malformed_streams_give_precise_errors() {
    let int8 = [PgType::Int8];
    let e = decode_err(&int8, b"PGCOPY\nXX");
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        ("22P04", "COPY file signature not recognized")
    );

    let e = decode_err(&int8, &[]);
    assert_eq!(e.code, "22P04");

    let e = decode_err(&int8, &hex("5047434f50590aff0d0a00 0000")); // header cut short
    assert_eq!(e.code, "22P04");

    let e = decode_err(&int8, &hex("5047434f50590aff0d0a00 00010000 00000000 ffff"));
    assert_eq!(e.message, "invalid COPY file header (WITH OIDS)");

    let e = decode_err(
        &int8,
        &hex(&format!("{HEADER} 0002 ffffffff ffffffff ffff")),
    );
    assert_eq!(e.code, "22P04");
    assert_eq!(e.message, "row field count is 2, expected 1");

    let e = decode_err(&int8, &hex(&format!("{HEADER} 0001 fffffffe")));
    assert_eq!(e.message, "invalid field size");
    assert!(e
        .detail
        .unwrap()
        .contains("COPY line 1, column 1 (c0, int8)"));

    let e = decode_err(&int8, &hex(&format!("{HEADER} 0001 00000008 0000")));
    assert_eq!(e.code, "22P04");
    assert_eq!(e.message, "unexpected EOF in COPY data");

    let e = decode_err(&int8, &hex(&format!("{HEADER} ffff 00")));
    assert_eq!(e.message, "received copy data after EOF marker");

    // Second tuple's value has the wrong width for int8.
    let e = decode_err(
        &int8,
        &hex(&format!(
            "{HEADER} 0001 00000008 0000000000000001 0001 00000004 00000001 ffff"
        )),
    );
    assert_eq!(e.code, "22P03");
    let detail = e.detail.unwrap();
    assert!(
        detail.starts_with("COPY line 2, column 1 (c0, int8)"),
        "{detail}"
    );

    // A header extension is skipped; a stream without trailer ends at a tuple boundary.
    let rows = decode_stream(
        &cols(&int8),
        &hex("5047434f50590aff0d0a00 00000000 00000003 aabbcc 0001 00000008 0000000000000007"),
    )
    .unwrap();
    assert_eq!(rows, vec![vec![Datum::Int8(7)]]);
}

fn datum_for(ty: &PgType) -> BoxedStrategy<Datum> {
    let value: BoxedStrategy<Datum> = match ty {
        PgType::Bool => any::<bool>().prop_map(Datum::Bool).boxed(),
        PgType::Int2 => any::<i16>().prop_map(Datum::Int2).boxed(),
        PgType::Int4 => any::<i32>().prop_map(Datum::Int4).boxed(),
        PgType::Int8 => any::<i64>().prop_map(Datum::Int8).boxed(),
        PgType::Float4 => any::<f32>()
            .prop_filter("NaN != NaN", |v| !v.is_nan())
            .prop_map(Datum::Float4)
            .boxed(),
        PgType::Float8 => any::<f64>()
            .prop_filter("NaN != NaN", |v| !v.is_nan())
            .prop_map(Datum::Float8)
            .boxed(),
        PgType::Text | PgType::Varchar | PgType::Name => "\\PC{0,12}".prop_map(Datum::text).boxed(),
        PgType::Char => "[\\x01-\\x7f]?".prop_map(Datum::text).boxed(),
        PgType::Bytea => prop::collection::vec(any::<u8>(), 0..24)
            .prop_map(Datum::Bytea)
            .boxed(),
        PgType::Uuid => any::<[u8; 16]>().prop_map(Datum::Uuid).boxed(),
        PgType::TimestampTz => any::<i64>().prop_map(Datum::TimestampTz).boxed(),
        PgType::Timestamp => any::<i64>().prop_map(Datum::Timestamp).boxed(),
        PgType::Date => any::<i32>().prop_map(Datum::Date).boxed(),
        PgType::Time => (0i64..=86_400_000_000).prop_map(Datum::Time).boxed(),
        PgType::TimeTz => (0i64..=86_400_000_000, -57_599i32..=57_599)
            .prop_map(|(micros, offset_west_secs)| Datum::TimeTz {
                micros,
                offset_west_secs,
            })
            .boxed(),
        PgType::Interval => (any::<i32>(), any::<i32>(), any::<i64>())
            .prop_map(|(months, days, micros)| Datum::Interval {
                months,
                days,
                micros,
            })
            .boxed(),
        PgType::Numeric(_) => numeric_text().prop_map(Datum::Numeric).boxed(),
        PgType::Oid
        | PgType::Xid
        | PgType::RegProc
        | PgType::RegClass
        | PgType::RegType
        | PgType::RegNamespace => any::<u32>().prop_map(Datum::Oid).boxed(),
        PgType::Inet => prop_oneof![
            (any::<[u8; 4]>(), 0u8..=32).prop_map(|(a, bits)| (std::net::IpAddr::from(a), bits)),
            (any::<[u8; 16]>(), 0u8..=128).prop_map(|(a, bits)| (std::net::IpAddr::from(a), bits)),
        ]
        .prop_map(|(address, bits)| Datum::text(rocklake_types::value::inet::format(address, bits)))
        .boxed(),
        PgType::Tid => (any::<u32>(), any::<u16>())
            .prop_map(|(block, offset)| Datum::Tid { block, offset })
            .boxed(),
        PgType::Array(element) => prop::collection::vec(datum_for(element), 0..6)
            .prop_map(Datum::array)
            .boxed(),
        // Vectors hold no NULLs.
        PgType::Int2Vector => prop::collection::vec(any::<i16>(), 0..6)
            .prop_map(|items| {
                Datum::Vector(
                    items
                        .into_iter()
                        .map(Datum::Int2)
                        .collect::<Vec<_>>()
                        .into(),
                )
            })
            .boxed(),
        PgType::OidVector => prop::collection::vec(any::<u32>(), 0..6)
            .prop_map(|items| {
                Datum::Vector(items.into_iter().map(Datum::Oid).collect::<Vec<_>>().into())
            })
            .boxed(),
        // json input is checked: valid documents only.
        PgType::Json => prop_oneof![
            "[a-z]{0,8}".prop_map(|k| format!("{{\"{k}\": [1, null, \"x\"]}}")),
            "-?[1-9][0-9]{0,5}".prop_map(String::from),
            "[a-z ]{0,8}".prop_map(|s| format!("\"{s}\"")),
            Just("null".to_string()),
        ]
        .prop_map(Datum::text)
        .boxed(),
        // jsonb values are held in their output form.
        PgType::Jsonb => prop_oneof![
            "[a-z]{0,8}".prop_map(|k| format!("{{\"{k}\": [1, null, \"x\"]}}")),
            "-?[1-9][0-9]{0,5}".prop_map(String::from),
            Just("null".to_string()),
        ]
        .prop_map(|text| Datum::Jsonb(text.into()))
        .boxed(),
        PgType::Void => Just(Datum::text("")).boxed(),
        PgType::AclItem | PgType::Unknown => "[a-z{}:\"]{0,12}".prop_map(Datum::text).boxed(),
        // Row values are never COPY input (no column has a row type).
        PgType::Record(_) => Just(Datum::Null).boxed(),
    };
    prop_oneof![1 => Just(Datum::Null), 6 => value].boxed()
}

/// Canonical numeric text: no leading zeros, `dscale` fraction digits, no
/// negative zero, or one of the special values.
fn numeric_text() -> impl Strategy<Value = String> {
    let finite = (any::<bool>(), "[1-9][0-9]{0,30}|0", "[0-9]{0,20}").prop_map(
        |(negative, int_part, frac)| {
            let mut text = int_part.clone();
            if !frac.is_empty() {
                text = format!("{text}.{frac}");
            }
            let is_zero = text.bytes().all(|b| b == b'0' || b == b'.');
            if negative && !is_zero {
                text.insert(0, '-');
            }
            text
        },
    );
    prop_oneof![
        10 => finite,
        1 => prop_oneof![Just("NaN".to_string()), Just("Infinity".to_string()), Just("-Infinity".to_string())],
    ]
}

fn any_type() -> impl Strategy<Value = PgType> {
    prop_oneof![
        Just(PgType::Bool),
        Just(PgType::Bytea),
        Just(PgType::Char),
        Just(PgType::Name),
        Just(PgType::Int8),
        Just(PgType::Int2),
        Just(PgType::Int4),
        Just(PgType::Text),
        Just(PgType::Oid),
        Just(PgType::Tid),
        Just(PgType::Float4),
        Just(PgType::Float8),
        Just(PgType::Varchar),
        Just(PgType::Date),
        Just(PgType::Time),
        Just(PgType::Timestamp),
        Just(PgType::TimestampTz),
        Just(PgType::Interval),
        Just(PgType::TimeTz),
        Just(PgType::Numeric(Some((38, 10)))),
        Just(PgType::Numeric(None)),
        Just(PgType::Uuid),
        Just(PgType::RegClass),
        Just(PgType::array_of(PgType::Int2)),
        Just(PgType::array_of(PgType::Text)),
        Just(PgType::array_of(PgType::Numeric(None))),
        Just(PgType::Int2Vector),
        Just(PgType::OidVector),
        Just(PgType::Json),
        Just(PgType::Jsonb),
    ]
}

/// Column types, rows of matching values, and cut points for re-chunking.
fn table() -> impl Strategy<Value = (Vec<PgType>, Vec<Row>, Vec<prop::sample::Index>)> {
    prop::collection::vec(any_type(), 1..8).prop_flat_map(|types| {
        let row: Vec<BoxedStrategy<Datum>> = types.iter().map(datum_for).collect();
        (
            Just(types),
            prop::collection::vec(row, 0..8),
            prop::collection::vec(any::<prop::sample::Index>(), 0..12),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn decode_inverts_encode_under_any_chunking((types, rows, cuts) in table()) {
        let encoded = encode_stream(&types, &rows).unwrap();
        prop_assert_eq!(decode_stream(&cols(&types), &encoded).unwrap(), rows.clone());

        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(encoded.len() + 1)).collect();
        points.push(0);
        points.push(encoded.len());
        points.sort_unstable();
        let mut decoder = CopyInDecoder::new(cols(&types));
        for pair in points.windows(2) {
            decoder.feed(&encoded[pair[0]..pair[1]]).unwrap();
        }
        prop_assert_eq!(decoder.finish().unwrap(), rows);
    }

    #[test]
    fn byte_at_a_time_matches_whole((types, rows, _cuts) in table()) {
        let encoded = encode_stream(&types, &rows).unwrap();
        let mut decoder = CopyInDecoder::new(cols(&types));
        for byte in encoded.iter() {
            decoder.feed(std::slice::from_ref(byte)).unwrap();
        }
        prop_assert_eq!(decoder.finish().unwrap(), rows);
    }

    #[test]
    fn truncated_streams_never_decode_silently((types, rows, cuts) in table()) {
        let encoded = encode_stream(&types, &rows).unwrap();
        let Some(cut) = cuts.first() else { return Ok(()) };
        let at = cut.index(encoded.len());
        // Cutting inside the header or a tuple is an error; cutting at a tuple
        // boundary yields a prefix of the rows.
        match decode_stream(&cols(&types), &encoded[..at]) {
            Ok(prefix) => {
                prop_assert!(prefix.len() <= rows.len());
                prop_assert_eq!(&rows[..prefix.len()], &prefix[..]);
            }
            Err(e) => prop_assert!(e.code == "22P04", "unexpected {:?}", e),
        }
    }

    #[test]
    fn garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64), types in prop::collection::vec(any_type(), 1..4)) {
        let mut stream = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0".to_vec();
        stream.extend_from_slice(&bytes);
        let _ = decode_stream(&cols(&types), &stream);
    }
}

#[test]
fn nan_floats_round_trip_bitwise() {
    let types = [PgType::Float4, PgType::Float8];
    let encoded = encode_stream(
        &types,
        &[vec![Datum::Float4(f32::NAN), Datum::Float8(f64::NAN)]],
    )
    .unwrap();
    let rows = decode_stream(&cols(&types), &encoded).unwrap();
    assert!(matches!(rows[0][0], Datum::Float4(v) if v.is_nan()));
    assert!(matches!(rows[0][1], Datum::Float8(v) if v.is_nan()));
}
