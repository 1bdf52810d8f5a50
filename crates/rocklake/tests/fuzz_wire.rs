//! Property-based fuzzing of the server with the real SQL engine over
//! in-memory storage: random startup packets, random and mutated frontend
//! messages after a valid startup, and random SQL built from a token
//! grammar. Every bad input must get an ErrorResponse or a clean close,
//! never a hang or a panic, and after every case a fresh connection and a
//! long-lived session must still answer `SELECT 1`. The same SQL grammar is
//! also fed straight into `rocklake_sql::Session::execute`.
//!
//! Deep and huge statements (expression chains and nestings up to tens of
//! thousands of levels, IN lists of up to 100,000 items, random expressions
//! buried in them) must get an answer or PostgreSQL's error, and leave the
//! server serving.
//!
//! Bounded to a few hundred cases per property so it runs in `cargo test`
//! in about a second; `ROCKLAKE_FUZZ_CASES=20000 cargo test -p rocklake
//! --test fuzz_wire` runs longer.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use proptest::prelude::*;
use proptest::sample::select;
use rocklake::engine::EngineSessions;
use rocklake_sql::{MemoryStorage, Session};
use rocklake_wire::{AuthMethod, ScramUsers, ScramVerifier, ServerConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::runtime::Runtime;

/// How long any one exchange may take before it counts as a hang.
const HANG: Duration = Duration::from_secs(10);
/// Worker threads of the runtime the server runs on (panics there are
/// counted).
const SERVER_THREAD: &str = "fuzz-server";
/// Tables every session can see.
const SETUP: &str = "CREATE TABLE t1 (a BIGINT, b TEXT); INSERT INTO t1 VALUES (1, 'x'), (2, NULL)";

static PANICS: AtomicUsize = AtomicUsize::new(0);
/// What the server's panics said, so that the test that notices one (perhaps
/// not the one whose input caused it: the properties share the server) says
/// what it was.
static PANIC_MESSAGES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// One server for all cases, and a session that stays open throughout.
struct Fixture {
    runtime: Runtime,
    port: u16,
    /// A server of the same storage with SCRAM authentication.
    scram_port: u16,
    healthy: tokio_postgres::Client,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let default_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current()
                .name()
                .is_some_and(|n| n.starts_with(SERVER_THREAD) || n.starts_with("session-"))
            {
                PANICS.fetch_add(1, Ordering::SeqCst);
                if let Ok(mut messages) = PANIC_MESSAGES.lock() {
                    messages.push(info.to_string());
                }
            }
            default_hook(info);
        }));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(SERVER_THREAD)
            .enable_all()
            .build()
            .unwrap();
        let (port, scram_port, healthy) = runtime.block_on(async {
            let sessions = Arc::new(EngineSessions::new(Arc::new(MemoryStorage::new())));
            let config = ServerConfig {
                startup_timeout: Duration::from_secs(5),
                max_sessions: 1000,
                session_stack_bytes: rocklake_sql::parse::SESSION_STACK_BYTES,
                ..ServerConfig::default()
            };
            let mut users = ScramUsers::new();
            users.insert("fuzz", ScramVerifier::new("secret"));
            let scram_config = ServerConfig {
                auth: AuthMethod::ScramSha256(Arc::new(users)),
                ..config.clone()
            };
            let mut ports = Vec::new();
            for config in [config, scram_config] {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                ports.push(listener.local_addr().unwrap().port());
                tokio::spawn(rocklake_wire::serve(listener, sessions.clone(), config));
            }
            let healthy = connect(ports[0]).await;
            healthy.batch_execute(SETUP).await.unwrap();
            (ports[0], ports[1], healthy)
        });
        Fixture {
            runtime,
            port,
            scram_port,
            healthy,
        }
    })
}

async fn connect(port: u16) -> tokio_postgres::Client {
    let info = format!("host=127.0.0.1 port={port} user=fuzz dbname=lake");
    let (client, connection) =
        tokio::time::timeout(HANG, tokio_postgres::connect(&info, tokio_postgres::NoTls))
            .await
            .expect("connect hung")
            .expect("connect failed");
    tokio::spawn(connection);
    client
}

/// The server has not panicked, and both a fresh connection and the
/// long-lived session answer `SELECT 1`.
async fn assert_healthy(fixture: &Fixture) {
    if PANICS.load(Ordering::SeqCst) > 0 {
        let messages = PANIC_MESSAGES
            .lock()
            .map(|m| m.join("\n"))
            .unwrap_or_default();
        panic!("a server task panicked: {messages}");
    }
    let fresh = connect(fixture.port).await;
    for client in [&fresh, &fixture.healthy] {
        let rows = tokio::time::timeout(HANG, client.simple_query("SELECT 1"))
            .await
            .expect("SELECT 1 hung")
            .expect("SELECT 1 failed");
        let one = rows.iter().find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_string),
            _ => None,
        });
        assert_eq!(one.as_deref(), Some("1"), "{rows:?}");
    }
}

/// Reads until the server closes; a reset counts as a close. Panics on a
/// hang.
async fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match tokio::time::timeout(HANG, stream.read(&mut chunk)).await {
            Err(_) => panic!("server neither answered nor closed within {HANG:?}"),
            Ok(Ok(0)) | Ok(Err(_)) => return out,
            Ok(Ok(n)) => out.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Splits backend output into (type, body) frames; panics on a frame with
/// an impossible length. A partial frame at the end (a reset) is dropped.
fn frames(mut bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    while bytes.len() >= 5 {
        let len = i32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]);
        assert!(len >= 4, "backend frame with length {len}");
        let total = 1 + len as usize;
        if bytes.len() < total {
            break;
        }
        out.push((bytes[0], bytes[5..total].to_vec()));
        bytes = &bytes[total..];
    }
    out
}

fn startup_packet(params: &[u8]) -> Vec<u8> {
    let mut packet = BytesMut::new();
    packet.put_i32(8 + params.len() as i32);
    packet.put_i32(196_608);
    packet.put_slice(params);
    packet.to_vec()
}

fn frame(kind: u8, len: i32, body: &[u8]) -> Vec<u8> {
    let mut out = vec![kind];
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(body);
    out
}

/// A raw connection that completed startup (ReadyForQuery received).
async fn ready_connection(port: u16) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream
        .write_all(&startup_packet(b"user\0fuzz\0database\0lake\0\0"))
        .await
        .unwrap();
    read_until_ready(&mut stream, &[]).await.expect("startup");
    stream
}

/// Reads frames up to ReadyForQuery, answering CopyInResponse with
/// CopyFail; `None` if the server closed first.
async fn read_until_ready(stream: &mut TcpStream, pending: &[u8]) -> Option<Vec<(u8, Vec<u8>)>> {
    let mut input = pending.to_vec();
    let mut seen = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let complete = frames(&input);
        let used: usize = complete.iter().map(|(_, b)| 5 + b.len()).sum();
        input.drain(..used);
        for (kind, body) in complete {
            if kind == b'G' {
                let _ = stream.write_all(&frame(b'f', 9, b"fuzz\0")).await;
            }
            let ready = kind == b'Z';
            seen.push((kind, body));
            if ready {
                return Some(seen);
            }
        }
        match tokio::time::timeout(HANG, stream.read(&mut chunk)).await {
            Err(_) => panic!("no ReadyForQuery within {HANG:?}; got {seen:?}"),
            Ok(Ok(0)) | Ok(Err(_)) => return None,
            Ok(Ok(n)) => input.extend_from_slice(&chunk[..n]),
        }
    }
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

/// Startup-phase bytes: pure noise, or a length and request code (SSL,
/// GSS, cancel, protocol 3.0 or random) with random parameters.
fn startup_bytes() -> impl Strategy<Value = Vec<u8>> {
    let code = prop_oneof![
        Just(80_877_103i32),
        Just(80_877_104),
        Just(80_877_102),
        Just(196_608),
        Just(196_609),
        Just(131_072),
        any::<i32>(),
    ];
    let params = prop_oneof![
        Just(b"user\0fuzz\0\0".to_vec()),
        Just(b"user\0\0\0".to_vec()),
        Just(b"user\0fuzz\0_pq_.x\0y\0\0".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..48),
    ];
    let structured =
        (code, params, -16i32..16, any::<bool>()).prop_map(|(code, params, skew, random_len)| {
            let exact = 8 + params.len() as i32;
            let len = if random_len {
                skew * 100_000
            } else {
                exact + skew.min(0)
            };
            let mut out = len.to_be_bytes().to_vec();
            out.extend_from_slice(&code.to_be_bytes());
            out.extend_from_slice(&params);
            out
        });
    prop_oneof![proptest::collection::vec(any::<u8>(), 0..64), structured]
}

fn cstr(s: &str) -> Vec<u8> {
    let mut out = s.as_bytes().to_vec();
    out.push(0);
    out
}

/// A frontend message body: noise, or the shape of a real message with
/// random counts and lengths.
fn message_body(kind: u8) -> BoxedStrategy<Vec<u8>> {
    let noise = proptest::collection::vec(any::<u8>(), 0..48);
    let structured: BoxedStrategy<Vec<u8>> = match kind {
        b'Q' => sql().prop_map(|s| cstr(&s)).boxed(),
        b'P' => (
            sql(),
            any::<i16>(),
            proptest::collection::vec(any::<i32>(), 0..4),
        )
            .prop_map(|(sql, count, types)| {
                let mut b = cstr("");
                b.extend(cstr(&sql));
                b.extend(count.to_be_bytes());
                types.iter().for_each(|t| b.extend(t.to_be_bytes()));
                b
            })
            .boxed(),
        b'B' => (any::<i16>(), any::<i16>(), any::<i32>(), any::<i16>())
            .prop_map(|(formats, params, len, results)| {
                let mut b = cstr("");
                b.extend(cstr(""));
                b.extend(formats.to_be_bytes());
                b.extend(params.to_be_bytes());
                b.extend(len.to_be_bytes());
                b.extend(b"42");
                b.extend(results.to_be_bytes());
                b
            })
            .boxed(),
        b'D' | b'C' => (select(b"SPX".to_vec()), "[a-z]{0,3}")
            .prop_map(|(k, name)| {
                let mut b = vec![k];
                b.extend(cstr(&name));
                b
            })
            .boxed(),
        b'E' => any::<i32>()
            .prop_map(|rows| {
                let mut b = cstr("");
                b.extend(rows.to_be_bytes());
                b
            })
            .boxed(),
        _ => Just(Vec::new()).boxed(),
    };
    prop_oneof![noise, structured].boxed()
}

/// One frontend message: a tag, a body, and an exact, skewed, random or
/// truncated length.
fn message() -> impl Strategy<Value = Vec<u8>> {
    let kind = prop_oneof![
        4 => select(b"QPBDECSHXdcfp".to_vec()),
        1 => any::<u8>(),
    ];
    kind.prop_flat_map(|kind| {
        (
            Just(kind),
            message_body(kind),
            0u8..4,
            any::<i32>(),
            -6i32..6,
        )
    })
    .prop_map(|(kind, body, mode, random, skew)| {
        let exact = 4 + body.len() as i32;
        match mode {
            0 => frame(kind, exact, &body),
            1 => frame(kind, exact + skew, &body),
            2 => frame(kind, random, &body),
            _ => {
                let mut out = frame(kind, exact, &body);
                out.truncate(out.len() / 2);
                out
            }
        }
    })
}

fn ident() -> impl Strategy<Value = String> {
    prop_oneof![
        select(vec!["a", "b", "t1.a", "x", "oid", "relname", "snapshot_id"]).prop_map(String::from),
        "[a-z_][a-z0-9_]{0,5}",
        "\"[a-zA-Z ]{0,5}\"",
    ]
}

fn table() -> impl Strategy<Value = String> {
    select(vec![
        "t1",
        "t2",
        "nope",
        "pg_catalog.pg_class",
        "pg_namespace",
        "information_schema.tables",
        "ducklake_snapshot",
        "public.t1",
        "(SELECT 1 AS a) s",
        "t1 JOIN t1 u ON t1.a = u.a",
    ])
    .prop_map(String::from)
}

fn type_name() -> impl Strategy<Value = &'static str> {
    select(vec![
        "BIGINT",
        "INTEGER",
        "SMALLINT",
        "TEXT",
        "VARCHAR",
        "BOOLEAN",
        "DOUBLE PRECISION",
        "NUMERIC(10,2)",
        "NUMERIC",
        "TIMESTAMPTZ",
        "TIMESTAMP",
        "DATE",
        "UUID",
        "BYTEA",
        "INT2[]",
        "INTERVAL",
        "OID",
        "REGCLASS",
        "nosuchtype",
    ])
}

fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| format!("{v:?}")),
        "[a-z0-9 %_:.\\-\\\\']{0,10}".prop_map(|s| format!("'{}'", s.replace('\'', "''"))),
        select(vec![
            "NULL",
            "TRUE",
            "FALSE",
            "now()",
            "'2024-02-30'::date",
            "'1e400'::numeric",
            "9223372036854775807",
            "-9223372036854775808",
            "'NaN'::float8",
            "$1",
            "*",
            "ARRAY[1,2]",
            "current_schema()",
        ])
        .prop_map(String::from),
        ident(),
    ];
    let op = select(vec![
        "+", "-", "*", "/", "%", "=", "<>", "<", ">=", "AND", "OR", "||", "LIKE", "IS", "IS NOT",
        "::",
    ]);
    let func = select(vec![
        "abs",
        "length",
        "lower",
        "upper",
        "coalesce",
        "nullif",
        "max",
        "min",
        "count",
        "sum",
        "substring",
        "concat",
        "date_trunc",
        "greatest",
        "nosuchfunc",
        "pg_typeof",
    ]);
    leaf.prop_recursive(3, 24, 3, move |inner| {
        prop_oneof![
            (inner.clone(), op.clone(), inner.clone())
                .prop_map(|(a, o, b)| format!("({a} {o} {b})")),
            (func.clone(), proptest::collection::vec(inner.clone(), 0..3))
                .prop_map(|(f, args)| format!("{f}({})", args.join(", "))),
            (inner.clone(), type_name()).prop_map(|(e, t)| format!("CAST({e} AS {t})")),
            (inner.clone(), type_name()).prop_map(|(e, t)| format!("{e}::{t}")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("CASE WHEN {a} THEN {b} ELSE {c} END")),
            inner.clone().prop_map(|e| format!("NOT {e}")),
            inner.clone().prop_map(|e| format!("-({e})")),
            (
                inner.clone(),
                proptest::collection::vec(inner.clone(), 1..3)
            )
                .prop_map(|(e, l)| format!("{e} IN ({})", l.join(", "))),
            (inner.clone(), table()).prop_map(|(e, t)| format!("(SELECT {e} FROM {t})")),
        ]
    })
}

/// Loose tokens for syntax-level noise.
fn token_soup() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        select(vec![
            "SELECT",
            "FROM",
            "WHERE",
            "INSERT",
            "INTO",
            "VALUES",
            "CREATE",
            "TABLE",
            "DROP",
            "UPDATE",
            "SET",
            "DELETE",
            "BEGIN",
            "COMMIT",
            "ROLLBACK",
            "(",
            ")",
            ",",
            ";",
            "*",
            "=",
            "::",
            "'",
            "\"",
            "$1",
            "AS",
            "ON",
            "JOIN",
            "GROUP",
            "BY",
            "ORDER",
            "LIMIT",
            "OFFSET",
            "UNION",
            "ALL",
            "WITH",
            "RETURNING",
            "COPY",
            "STDIN",
            "STDOUT",
            "FORMAT",
            "BINARY",
            "--",
            "/*",
            "*/",
            "E'\\x'",
            "U&'\\0000'",
            "$$",
            "1",
            "-1",
            "1e999",
            "NULL",
            "t1",
            "a",
        ])
        .prop_map(String::from),
        ident(),
    ];
    proptest::collection::vec(token, 0..16).prop_map(|t| t.join(" "))
}

/// SASL messages: SASLInitialResponse-shaped (mechanism, length,
/// client-first-message from SCRAM pieces or noise), then SASLResponse
/// bodies of SCRAM attributes or noise, each framed as `p` with a mostly
/// exact length.
fn sasl_messages() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let piece = select(vec![
        "n",
        "y",
        "p=tls-server-end-point",
        "",
        "a=x",
        "n=",
        "n=fuzz",
        "r=abc",
        "r=",
        "m=ext",
        "c=biws",
        "c=eSws",
        "c=",
        "p=AAAA",
        "s=xx",
        "i=1",
        "=",
        "r=\u{1}",
        "x=y",
    ]);
    let scram_text = proptest::collection::vec(piece, 0..7).prop_map(|p| p.join(",").into_bytes());
    let text = prop_oneof![scram_text, proptest::collection::vec(any::<u8>(), 0..40)];
    let mechanism = select(vec!["SCRAM-SHA-256", "SCRAM-SHA-256-PLUS", "", "PLAIN"]);
    let initial = (mechanism, text.clone(), -2i32..2, any::<bool>()).prop_map(
        |(mechanism, data, skew, minus_one)| {
            let mut body = cstr(mechanism);
            let len = if minus_one {
                -1
            } else {
                data.len() as i32 + skew
            };
            body.extend(len.to_be_bytes());
            body.extend(&data);
            body
        },
    );
    let first = prop_oneof![initial, proptest::collection::vec(any::<u8>(), 0..40)];
    (first, proptest::collection::vec(text, 0..2), -1i32..2).prop_map(|(first, rest, skew)| {
        std::iter::once(first)
            .chain(rest)
            .map(|body| frame(b'p', 4 + body.len() as i32 + skew.max(0), &body))
            .collect()
    })
}

/// A statement or a short batch from the grammar.
fn sql() -> BoxedStrategy<String> {
    let columns = proptest::collection::vec((ident(), type_name()), 1..4).prop_map(|cols| {
        cols.iter()
            .map(|(n, t)| format!("{n} {t}"))
            .collect::<Vec<_>>()
            .join(", ")
    });
    let statement = prop_oneof![
        (
            proptest::collection::vec(expr(), 1..3),
            proptest::option::of(table()),
            proptest::option::of(expr()),
            proptest::option::of(expr()),
            proptest::option::of(-2i64..5),
        )
            .prop_map(|(exprs, from, filter, order, limit)| {
                let mut s = format!("SELECT {}", exprs.join(", "));
                if let Some(t) = from {
                    s.push_str(&format!(" FROM {t}"));
                }
                if let Some(f) = filter {
                    s.push_str(&format!(" WHERE {f}"));
                }
                if let Some(o) = order {
                    s.push_str(&format!(" ORDER BY {o}"));
                }
                if let Some(l) = limit {
                    s.push_str(&format!(" LIMIT {l}"));
                }
                s
            }),
        (select(vec!["t1", "t2", "t3"]), columns)
            .prop_map(|(t, c)| format!("CREATE TABLE {t} ({c})")),
        (table(), proptest::collection::vec(expr(), 0..3))
            .prop_map(|(t, v)| format!("INSERT INTO {t} VALUES ({})", v.join(", "))),
        (table(), ident(), expr(), expr())
            .prop_map(|(t, c, v, w)| format!("UPDATE {t} SET {c} = {v} WHERE {w}")),
        (table(), expr()).prop_map(|(t, w)| format!("DELETE FROM {t} WHERE {w}")),
        table().prop_map(|t| format!("DROP TABLE IF EXISTS {t}")),
        (table(), ident(), type_name())
            .prop_map(|(t, c, ty)| format!("ALTER TABLE {t} ADD COLUMN {c} {ty}")),
        select(vec![
            "BEGIN",
            "COMMIT",
            "ROLLBACK",
            "BEGIN ISOLATION LEVEL SERIALIZABLE",
            "SET search_path TO nope",
            "SHOW server_version",
            "COPY t1 TO STDOUT (FORMAT BINARY)",
            "COPY t1 FROM STDIN (FORMAT BINARY)",
            "COPY t1 FROM STDIN",
            "",
            ";",
        ])
        .prop_map(String::from),
        token_soup(),
    ];
    proptest::collection::vec(statement, 1..4)
        .prop_map(|s| s.join("; "))
        .boxed()
}

/// A size from 1 to `max`, spread evenly over the orders of magnitude.
fn log_size(max: u32) -> impl Strategy<Value = usize> {
    (0.0..(max as f64).ln()).prop_map(|x: f64| x.exp() as usize)
}

/// Deep and huge statements: chains of one operator, nestings of one
/// construct, long IN lists and VALUES, each around a random expression.
fn deep_sql() -> BoxedStrategy<String> {
    let chain = (
        select(vec!["+", "-", "*", "||", "AND", "OR", "=", "<"]),
        log_size(30_000),
        expr(),
    )
        .prop_map(|(op, n, e)| format!("SELECT {e}{}", format!(" {op} {e}").repeat(n)));
    let nesting = (
        select(vec![
            ("(", ")"),
            ("abs(", ")"),
            ("coalesce(NULL, ", ")"),
            ("CASE WHEN true THEN ", " END"),
            ("NOT ", ""),
            ("- ", ""),
            ("(SELECT ", ")"),
            ("ARRAY[", "]"),
            ("CAST(", " AS text)"),
            ("(SELECT 1 WHERE ", " IS NULL)"),
        ]),
        log_size(30_000),
        expr(),
    )
        .prop_map(|((open, close), n, e)| {
            format!("SELECT {}{e}{}", open.repeat(n), close.repeat(n))
        });
    let in_list = (log_size(100_000), expr(), any::<bool>()).prop_map(|(n, e, text)| {
        let items: Vec<String> = (0..n)
            .map(|i| {
                if text {
                    format!("'v{i}'")
                } else {
                    i.to_string()
                }
            })
            .collect();
        format!(
            "SELECT count(*) FROM t1 WHERE {e} IN ({})",
            items.join(", ")
        )
    });
    let values = log_size(20_000).prop_map(|n| {
        let rows: Vec<String> = (0..n).map(|i| format!("({i}, 'r{i}')")).collect();
        format!(
            "SELECT count(*), max(b) FROM (VALUES {}) v(a, b)",
            rows.join(", ")
        )
    });
    prop_oneof![chain, nesting, in_list, values].boxed()
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

/// `cases`, or `ROCKLAKE_FUZZ_CASES` for a longer local run.
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("ROCKLAKE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(400))]

    /// (a) Random bytes as the startup packet, then end of input.
    #[test]
    fn random_startup_packets(bytes in startup_bytes()) {
        let fixture = fixture();
        fixture.runtime.block_on(async {
            let mut stream = TcpStream::connect(("127.0.0.1", fixture.port)).await.unwrap();
            let _ = stream.write_all(&bytes).await;
            let _ = stream.shutdown().await;
            read_to_close(&mut stream).await;
            assert_healthy(fixture).await;
        });
    }

    /// (b) A valid startup, then random and mutated messages, then end of
    /// input: the server answers or closes, and its output is well framed.
    #[test]
    fn random_frontend_messages(messages in proptest::collection::vec(message(), 1..6)) {
        let fixture = fixture();
        fixture.runtime.block_on(async {
            let mut stream = ready_connection(fixture.port).await;
            for message in &messages {
                if stream.write_all(message).await.is_err() {
                    break;
                }
            }
            let _ = stream.shutdown().await;
            let output = read_to_close(&mut stream).await;
            for (kind, _) in frames(&output) {
                assert!(kind.is_ascii_alphanumeric(), "backend message type {kind}");
            }
            assert_healthy(fixture).await;
        });
    }

    /// (c) Random SQL through simple Query: an answer ending in
    /// ReadyForQuery every time, never a closed session.
    #[test]
    fn random_sql_over_the_wire(batch in sql()) {
        let fixture = fixture();
        fixture.runtime.block_on(async {
            let mut stream = ready_connection(fixture.port).await;
            let _ = stream.write_all(&frame(b'Q', 5 + batch.len() as i32, &cstr(&batch))).await;
            let answer = read_until_ready(&mut stream, &[]).await;
            assert!(answer.is_some(), "session closed on {batch:?}");
            let _ = stream.write_all(&frame(b'X', 4, &[])).await;
            assert_healthy(fixture).await;
        });
    }
}

proptest! {
    #![proptest_config(config(400))]

    /// (d) Random SASL messages never authenticate, and always end in an
    /// error or a close.
    #[test]
    fn random_sasl_messages(messages in sasl_messages()) {
        let fixture = fixture();
        fixture.runtime.block_on(async {
            let mut stream = TcpStream::connect(("127.0.0.1", fixture.scram_port)).await.unwrap();
            stream.write_all(&startup_packet(b"user\0fuzz\0\0")).await.unwrap();
            for message in &messages {
                if stream.write_all(message).await.is_err() {
                    break;
                }
            }
            let _ = stream.shutdown().await;
            let output = read_to_close(&mut stream).await;
            for (kind, body) in frames(&output) {
                assert!(
                    !(kind == b'R' && body == [0, 0, 0, 0]),
                    "authenticated by {messages:?}"
                );
            }
            assert_healthy(fixture).await;
        });
    }
}

proptest! {
    #![proptest_config(config(500))]

    /// Random statements straight into the engine: each returns Ok or Err.
    #[test]
    fn random_sql_into_the_engine(batches in proptest::collection::vec(sql(), 1..4)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let mut session = Session::new(Arc::new(MemoryStorage::new()));
            session.execute(SETUP).await;
            for batch in &batches {
                tokio::time::timeout(HANG, session.execute(batch))
                    .await
                    .unwrap_or_else(|_| panic!("engine hung on {batch:?}"));
            }
        });
    }
}

proptest! {
    #![proptest_config(config(48))]

    /// Deep and huge SQL through simple Query: an answer or an error
    /// ending in ReadyForQuery, and the server keeps serving.
    #[test]
    fn deep_and_huge_sql_over_the_wire(statement in deep_sql()) {
        let fixture = fixture();
        fixture.runtime.block_on(async {
            let mut stream = ready_connection(fixture.port).await;
            let query = frame(b'Q', 5 + statement.len() as i32, &cstr(&statement));
            let _ = stream.write_all(&query).await;
            let answer = read_until_ready(&mut stream, &[]).await;
            let head: String = statement.chars().take(80).collect();
            assert!(answer.is_some(), "session closed on {head}... ({} bytes)", statement.len());
            let _ = stream.write_all(&frame(b'X', 4, &[])).await;
            assert_healthy(fixture).await;
        });
    }
}

/// Regression: binding copied sub-expressions at every level, so deep
/// statements cost quadratic or cubic time (found by
/// `deep_and_huge_sql_over_the_wire`, debug build): `abs(abs(...))` 2,900
/// deep took 14 s (a call copied its arguments), 1,250 nested scalar
/// subqueries 22 s (a SELECT copied its select list), a chain of 1,200 CTEs
/// each reading the previous one 155 s (each CTE copied the plans before
/// it). Every way of nesting just under the limit must answer well within
/// the hang bound, with the value PostgreSQL gives.
#[test]
fn nesting_just_under_the_limit_answers() {
    let fixture = fixture();
    let n = rocklake_sql::parse::MAX_NESTING - 100;
    let nested = |open: &str, inner: &str, close: &str, depth: usize| {
        format!(
            "SELECT {}{inner}{}",
            open.repeat(depth),
            close.repeat(depth)
        )
    };
    let cte_chain = {
        let links: String = (1..1_200)
            .map(|i| format!(", c{i} AS (SELECT a + 1 AS a FROM c{})", i - 1))
            .collect();
        format!("WITH c0 AS (SELECT 1 AS a){links} SELECT a FROM c1199")
    };
    let cases = [
        (nested("abs(", "1", ")", n), "1"),
        (nested("coalesce(NULL, ", "1", ")", n), "1"),
        (nested("lower(", "'X'", ")", n), "x"),
        (nested("concat(", "'x'", ")", n), "x"),
        (nested("(", "1", ")", n), "1"),
        (nested("CASE WHEN true THEN ", "1", " END", n), "1"),
        (nested("CAST(", "1", " AS text)", n), "1"),
        (nested("(SELECT ", "1", ")", 1_400), "1"),
        (nested("(SELECT 1 WHERE ", "1", " IS NULL)", 1_400), "1"),
        (cte_chain, "1200"),
    ];
    fixture.runtime.block_on(async {
        for (statement, expected) in cases {
            let head: String = statement.chars().take(40).collect();
            let started = std::time::Instant::now();
            let rows = fixture
                .healthy
                .simple_query(&statement)
                .await
                .unwrap_or_else(|e| panic!("{head}...: {e}"));
            assert!(
                started.elapsed() < HANG,
                "{head}... took {:?}",
                started.elapsed()
            );
            let value = rows.iter().find_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
                _ => None,
            });
            assert_eq!(value.as_deref(), Some(expected), "{head}...");
        }
    });
}
