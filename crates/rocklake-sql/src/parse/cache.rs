//! Parsed statements of short query strings, shared by every session.
//!
//! DuckDB repeats most of its catalog statements word for word (`SELECT 1`,
//! `BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ`, the latest-snapshot
//! query, `COMMIT`, `DISCARD ALL`), and the rest with other literals (the
//! statistics reads of a table, the snapshot a commit inserts, one `COPY`
//! per table when it lists them all). Tokenizing and parsing was 7% of the
//! server's CPU in an insert loop and 15% in `SHOW ALL TABLES` on 5,000
//! tables. Two caches, least recently used first out:
//!
//! - by text: a hit shares the statements kept (cloning them cost a tenth
//!   of parsing again, sharing nothing). Parsing is a pure function of the
//!   text, so a hit is exactly what parsing would give;
//! - by shape ([`super::shape`]): a string whose text is new but whose shape
//!   has a template gets a copy of the template with its own literals put
//!   in, which is what parsing it gives (the template's checks make sure),
//!   down to the positions of its literals; other positions in it are those
//!   of the string the template was made from (nothing reads them). A shape
//!   gets its template at its second string: building one parses a second
//!   text for its check, which a shape seen once (a statement with a name
//!   made up for it, say) would pay for nothing.
//!
//! Only strings of at most [`MAX_CACHED_SQL_BYTES`] are kept by text and of
//! at most [`MAX_SHAPED_SQL_BYTES`] by shape: their statements nest at most
//! [`super::MAX_NESTING`] levels (counted before parsing) and mostly a few,
//! so copying them (which recurses, as [`super::prepare`] does over the
//! same statements) stays far from the stack limit, and each cache holds
//! at most [`CAPACITY`] entries. Errors are not kept.

use std::num::NonZeroUsize;
use std::sync::{Arc, LazyLock, Mutex};

use lru::LruCache;
use rocklake_types::SqlError;

use super::shape::{shape_of, Template};
use super::Parsed;

/// The longest query string the cache keeps by text.
pub(crate) const MAX_CACHED_SQL_BYTES: usize = 1024;

/// The longest query string the cache keeps by shape.
pub(crate) const MAX_SHAPED_SQL_BYTES: usize = 4096;

/// How many query strings, and how many shapes, the cache keeps.
pub(crate) const CAPACITY: usize = 256;

/// A shape seen before.
#[derive(Clone)]
enum ShapeEntry {
    /// Seen once: its template is made at its next string.
    Seen,
    /// Its template.
    Template(Arc<Template>),
    /// It failed the template's checks: its strings are parsed one by one.
    Refused,
}

struct Caches {
    texts: Mutex<LruCache<Box<str>, Arc<Parsed>>>,
    shapes: Mutex<LruCache<String, ShapeEntry>>,
}

fn new_caches() -> Caches {
    let capacity = NonZeroUsize::new(CAPACITY).expect("capacity is not zero");
    Caches {
        texts: Mutex::new(LruCache::new(capacity)),
        shapes: Mutex::new(LruCache::new(capacity)),
    }
}

static CACHES: LazyLock<Caches> = LazyLock::new(new_caches);

/// Takes a cache's lock. A panic while holding it leaves the cache
/// consistent (every operation on it is a single call), so a poisoned lock
/// is taken over.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The statements of `sql`: from the caches, or from `parse` (and kept when
/// `sql` is short and parses).
pub(crate) fn get_or_parse(
    sql: &str,
    parse: impl Fn(&str) -> Result<Parsed, SqlError>,
) -> Result<Arc<Parsed>, SqlError> {
    get_or_parse_in(&CACHES, sql, parse)
}

fn get_or_parse_in(
    caches: &Caches,
    sql: &str,
    parse: impl Fn(&str) -> Result<Parsed, SqlError>,
) -> Result<Arc<Parsed>, SqlError> {
    if sql.len() > MAX_SHAPED_SQL_BYTES {
        return parse(sql).map(Arc::new);
    }
    let by_text = sql.len() <= MAX_CACHED_SQL_BYTES;
    if by_text {
        let hit = lock(&caches.texts).get(sql).cloned();
        if let Some(parsed) = hit {
            return Ok(parsed);
        }
    }
    let shape = shape_of(sql).filter(|shape| !shape.is_plain());
    let entry = shape
        .as_ref()
        .and_then(|shape| lock(&caches.shapes).get(&shape.key).cloned());
    if let (Some(shape), Some(ShapeEntry::Template(template))) = (&shape, &entry) {
        return Ok(Arc::new(template.fill(shape)));
    }
    let parsed = Arc::new(parse(sql)?);
    if by_text {
        let evicted = lock(&caches.texts).push(sql.into(), Arc::clone(&parsed));
        // Statements evicted are freed after the lock is released.
        drop(evicted);
    }
    let new_entry = match (&shape, entry) {
        (Some(_), None) => Some(ShapeEntry::Seen),
        (Some(shape), Some(ShapeEntry::Seen)) => Some(
            match Template::build(sql, shape, &parsed, |text| parse(text).ok()) {
                Some(template) => ShapeEntry::Template(Arc::new(template)),
                None => ShapeEntry::Refused,
            },
        ),
        _ => None,
    };
    if let (Some(shape), Some(new_entry)) = (shape, new_entry) {
        let evicted = lock(&caches.shapes).push(shape.key, new_entry);
        drop(evicted);
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::shape::literal_spans;

    fn counting(cache: &Caches, sql: &str) -> (Result<Arc<Parsed>, SqlError>, usize) {
        let parsed = std::cell::Cell::new(0);
        let result = get_or_parse_in(cache, sql, |s| {
            parsed.set(parsed.get() + 1);
            crate::parse::parse_uncached(s)
        });
        (result, parsed.get())
    }

    #[test]
    fn a_hit_gives_what_parsing_gives() {
        let cache = new_caches();
        let sql = "SELECT a, b FROM t WHERE a = 1 AND b IN (SELECT 2)";
        let (first, parsed) = counting(&cache, sql);
        assert!(parsed >= 1);
        let (again, parsed) = counting(&cache, sql);
        assert_eq!(parsed, 0, "a string seen before is not parsed again");
        assert_eq!(again.unwrap(), first.unwrap());
    }

    #[test]
    fn errors_and_long_strings_are_not_kept() {
        let cache = new_caches();
        for _ in 0..2 {
            let (result, parsed) = counting(&cache, "SELEC 1");
            assert!(result.is_err());
            assert_eq!(parsed, 1, "an error is parsed again");
        }
        let long = format!("SELECT a -- {}", "x".repeat(MAX_CACHED_SQL_BYTES));
        for _ in 0..2 {
            assert_eq!(
                counting(&cache, &long).1,
                1,
                "a long string without literals is parsed again"
            );
        }
        let longer = |n: usize| format!("SELECT {n} -- {}", "x".repeat(MAX_SHAPED_SQL_BYTES));
        for n in 0..2 {
            assert_eq!(counting(&cache, &longer(n)).1, 1, "a longer one too");
        }
    }

    #[test]
    fn the_least_recently_used_string_goes_first() {
        let cache = new_caches();
        for i in 0..=CAPACITY {
            counting(&cache, &format!("SELECT a{i}")).0.unwrap();
        }
        assert_eq!(counting(&cache, "SELECT a0").1, 1, "evicted");
        assert_eq!(
            counting(&cache, &format!("SELECT a{CAPACITY}")).1,
            0,
            "kept"
        );
    }

    /// Parses `sql` through the cache and checks the result against parsing
    /// it, value positions included (which `PartialEq` leaves out).
    fn same_as_parsing(cache: &Caches, sql: &str) -> usize {
        let (result, parsed) = counting(cache, sql);
        let expected = crate::parse::parse_uncached(sql).unwrap();
        let result = result.unwrap();
        assert_eq!(*result, expected, "{sql}");
        assert_eq!(literal_spans(&result), literal_spans(&expected), "{sql}");
        parsed
    }

    #[test]
    fn a_string_of_a_known_shape_is_not_parsed() {
        let cache = new_caches();
        let first = "SELECT a FROM t WHERE a = 1 AND b = 'x' OFFSET 5 LIMIT 5";
        assert_eq!(same_as_parsing(&cache, first), 1, "seen once");
        let second = "SELECT a FROM t WHERE a = 3 AND b = 'y' OFFSET 9 LIMIT 5";
        assert_eq!(
            same_as_parsing(&cache, second),
            2,
            "the string and the check"
        );
        for sql in [
            "SELECT a FROM t WHERE a = 22 AND b = 'it''s' OFFSET 7 LIMIT 300",
            "SELECT a FROM t WHERE a = 2.5 AND b = '' OFFSET 0 LIMIT 1",
        ] {
            assert_eq!(same_as_parsing(&cache, sql), 0, "{sql}");
        }
        // Other kinds of literal are another shape.
        assert!(
            same_as_parsing(
                &cache,
                "SELECT a FROM t WHERE a = '1' AND b = 'x' OFFSET 5 LIMIT 5"
            ) > 0
        );
    }

    #[test]
    fn a_shape_whose_literals_are_not_all_values_is_parsed_each_time() {
        let cache = new_caches();
        // A type's length is a number of the statement, not a value.
        for (n, expected) in [(10, 1), (20, 1), (30, 1)] {
            let sql = format!("SELECT CAST(a AS VARCHAR({n})), {n} FROM t");
            assert_eq!(same_as_parsing(&cache, &sql), expected, "{sql}");
        }
    }
}

/// Strings of one shape with random literals: what the cache gives is what
/// parsing gives, whichever string of the shape came first.
#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;
    use crate::parse::shape::literal_spans;

    /// Statements of many kinds, `N` for a number and `S` for a string.
    const SHAPES: &[&str] = &[
        "SELECT snapshot_id, schema_version FROM public.ducklake_snapshot WHERE snapshot_id = (SELECT MAX(snapshot_id) FROM public.ducklake_snapshot)",
        r#"COPY (SELECT "table_id", "min_value" FROM "public"."ducklake_table_column_stats" WHERE "table_id" = S) TO STDOUT (FORMAT "binary")"#,
        "INSERT INTO public.ducklake_snapshot VALUES (N, NOW(), N, N, N); INSERT INTO t VALUES (N, S, NULL), (N, S, TRUE)",
        "UPDATE public.ducklake_table_stats SET record_count = N, file_size_bytes = N WHERE table_id = N",
        "DELETE FROM t WHERE a IN (N, N, N) OR b BETWEEN N AND N OR c NOT IN (S, S)",
        "SELECT a FROM t WHERE b LIKE S AND c ILIKE S ORDER BY a DESC LIMIT N OFFSET N",
        "SELECT a FROM t OFFSET N ROWS FETCH FIRST N ROWS ONLY",
        "SELECT CASE WHEN a > N THEN S WHEN a < -N THEN S ELSE S END, a + N * N - N / N FROM t",
        "SELECT S::date + INTERVAL S, DATE S, TIMESTAMP S, S::jsonb -> S ->> N, ARRAY[N, N][N]",
        "SELECT count(*) FILTER (WHERE a = N), sum(b) OVER (PARTITION BY c ORDER BY d ROWS BETWEEN N PRECEDING AND CURRENT ROW) FROM t GROUP BY c HAVING count(*) > N",
        "WITH x AS (SELECT N AS a, S AS b) SELECT * FROM x JOIN y ON x.a = y.a AND y.b = S",
        "SELECT substring(S FROM N FOR N), position(S IN S), trim(both S from S), round(N, N)",
        "SELECT a FROM t WHERE (a, b) > (N, S) AND EXISTS (SELECT 1 FROM u WHERE u.x = N)",
        "SET application_name = S; SET search_path TO S, S; SELECT set_config(S, S, false)",
        "CREATE TABLE t (a INTEGER DEFAULT N, b VARCHAR DEFAULT S, c NUMERIC(10, 2) CHECK (c > N))",
        "ALTER TABLE t ALTER COLUMN a SET DEFAULT N; COMMENT ON TABLE t IS S",
        "SELECT a FROM t WHERE a = $1 AND b = N AND c = S",
        "INSERT INTO t (a, b) VALUES (N, S) ON CONFLICT (a) DO UPDATE SET b = S RETURNING a, N",
        "SELECT 'x' || S || N::text, S COLLATE \"C\", N::bigint % N",
        "SELECT a FROM t WHERE a = N\n  AND b = S -- a comment with 'quotes' and 12\n  AND c = N",
        "SELECT pg_catalog.format_type(N, N), S::regclass, N::oid",
        "SELECT * FROM generate_series(N, N) g LEFT JOIN t ON t.a = g UNION ALL SELECT N, S",
    ];

    fn literal(kind: char) -> BoxedStrategy<String> {
        if kind == 'N' {
            prop_oneof![
                (0u64..1_000_000_000_000).prop_map(|n| n.to_string()),
                (0u32..100_000, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b}")),
                Just("99999999999999999999999999".to_string()),
            ]
            .boxed()
        } else {
            prop_oneof![
                "[a-z0-9 ]{0,12}",
                "[a-zé'\\n%_\\-]{0,8}",
                Just(String::new()),
            ]
            .prop_map(|s| format!("'{}'", s.replace('\'', "''")))
            .boxed()
        }
    }

    /// Strings of one shape: `SHAPES[index]` with random literals.
    fn strings(count: usize) -> impl Strategy<Value = Vec<String>> {
        (0..SHAPES.len()).prop_flat_map(move |index| {
            let shape = SHAPES[index];
            let kinds: Vec<char> = shape
                .split(|c: char| !c.is_alphanumeric())
                .filter(|word| *word == "N" || *word == "S")
                .map(|word| word.chars().next().unwrap())
                .collect();
            let one = kinds.into_iter().map(literal).collect::<Vec<_>>();
            proptest::collection::vec(one, count).prop_map(move |sets| {
                sets.into_iter()
                    .map(|literals| fill(shape, &literals))
                    .collect()
            })
        })
    }

    fn fill(shape: &str, literals: &[String]) -> String {
        let mut out = String::new();
        let mut next = literals.iter();
        let mut word = String::new();
        for c in shape.chars().chain(std::iter::once(' ')) {
            if c.is_alphanumeric() || c == '_' {
                word.push(c);
                continue;
            }
            if word == "N" || word == "S" {
                out.push_str(next.next().unwrap());
            } else {
                out.push_str(&word);
            }
            word.clear();
            out.push(c);
        }
        out.pop();
        out
    }

    /// The literals of `shape` numbered from `seed`.
    fn numbered(shape: &str, seed: u64) -> String {
        let literals: Vec<String> = shape
            .split(|c: char| !c.is_alphanumeric())
            .filter(|word| *word == "N" || *word == "S")
            .zip(seed..)
            .map(|(word, n)| {
                if word == "N" {
                    n.to_string()
                } else {
                    format!("'v{n}'")
                }
            })
            .collect();
        fill(shape, &literals)
    }

    #[test]
    fn templates_are_kept_unless_a_literal_is_not_a_value() {
        // A type's length and a comment's text are not values.
        let not_values = [
            "CREATE TABLE t (a INTEGER DEFAULT N, b VARCHAR DEFAULT S, c NUMERIC(10, 2) CHECK (c > N))",
            "ALTER TABLE t ALTER COLUMN a SET DEFAULT N; COMMENT ON TABLE t IS S",
        ];
        for shape in SHAPES.iter().filter(|shape| numbered(shape, 1) != **shape) {
            let cache = new_caches();
            for seed in [1, 100] {
                let sql = numbered(shape, seed);
                get_or_parse_in(&cache, &sql, crate::parse::parse_uncached).unwrap();
            }
            let key = shape_of(&numbered(shape, 200)).unwrap().key;
            let entry = cache.shapes.lock().unwrap().get(&key).cloned();
            let kept = match entry {
                Some(ShapeEntry::Template(_)) => true,
                Some(ShapeEntry::Refused) => false,
                _ => panic!("{shape}: no decision after two strings"),
            };
            assert_eq!(kept, !not_values.contains(shape), "{shape}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn what_the_cache_gives_is_what_parsing_gives(strings in strings(4)) {
            let cache = new_caches();
            for sql in &strings {
                let expected = crate::parse::parse_uncached(sql).unwrap();
                let got = get_or_parse_in(&cache, sql, crate::parse::parse_uncached).unwrap();
                prop_assert_eq!(&*got, &expected, "{}", sql);
                prop_assert_eq!(literal_spans(&got), literal_spans(&expected), "{}", sql);
            }
        }
    }
}
