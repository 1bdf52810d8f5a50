//! Parsed statements of short query strings, shared by every session.
//!
//! DuckDB repeats most of its catalog statements word for word (`SELECT 1`,
//! `BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ`, the latest-snapshot
//! query, the statistics reads of a table, `COMMIT`, `DISCARD ALL`): nine of
//! the thirteen requests of a 1-row insert. Tokenizing and parsing them again
//! was about 7% of the server's CPU in an insert loop; a hit shares the
//! statements kept (cloning them, as the cache first did, cost half of
//! parsing again). Parsing is a pure function of the text, so a hit
//! is exactly what parsing would give. Only strings of at most
//! [`MAX_CACHED_SQL_BYTES`] are kept: their statements nest a few hundred
//! levels at most, so cloning them (which recurses) stays far from the stack
//! limit, and the cache holds at most [`CAPACITY`] of them. Errors are not
//! kept.

use std::num::NonZeroUsize;
use std::sync::{Arc, LazyLock, Mutex};

use lru::LruCache;
use rocklake_types::SqlError;

use super::Parsed;

/// The longest query string the cache keeps.
pub(crate) const MAX_CACHED_SQL_BYTES: usize = 1024;

/// How many query strings the cache keeps (least recently used go first).
pub(crate) const CAPACITY: usize = 256;

type Cache = Mutex<LruCache<Box<str>, Arc<Parsed>>>;

fn new_cache() -> Cache {
    Mutex::new(LruCache::new(
        NonZeroUsize::new(CAPACITY).expect("capacity is not zero"),
    ))
}

static CACHE: LazyLock<Cache> = LazyLock::new(new_cache);

/// The statements of `sql`: from the cache, or from `parse` (and kept when
/// `sql` is short and parses).
pub(crate) fn get_or_parse(
    sql: &str,
    parse: impl FnOnce(&str) -> Result<Parsed, SqlError>,
) -> Result<Arc<Parsed>, SqlError> {
    get_or_parse_in(&CACHE, sql, parse)
}

fn get_or_parse_in(
    cache: &Cache,
    sql: &str,
    parse: impl FnOnce(&str) -> Result<Parsed, SqlError>,
) -> Result<Arc<Parsed>, SqlError> {
    if sql.len() > MAX_CACHED_SQL_BYTES {
        return parse(sql).map(Arc::new);
    }
    // A panic while holding the lock leaves the cache consistent (every
    // operation on it is a single call), so a poisoned lock is taken over.
    let lock = || {
        cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    };
    let hit = lock().get(sql).cloned();
    if let Some(parsed) = hit {
        return Ok(parsed);
    }
    let parsed = Arc::new(parse(sql)?);
    let evicted = lock().push(sql.into(), Arc::clone(&parsed));
    // Statements evicted are freed after the lock is released.
    drop(evicted);
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counting(cache: &Cache, sql: &str) -> (Result<Arc<Parsed>, SqlError>, usize) {
        let mut parsed = 0;
        let result = get_or_parse_in(cache, sql, |s| {
            parsed += 1;
            crate::parse::parse_uncached(s)
        });
        (result, parsed)
    }

    #[test]
    fn a_hit_gives_what_parsing_gives() {
        let cache = new_cache();
        let sql = "SELECT a, b FROM t WHERE a = 1 AND b IN (SELECT 2)";
        let (first, parsed) = counting(&cache, sql);
        assert_eq!(parsed, 1);
        let (again, parsed) = counting(&cache, sql);
        assert_eq!(parsed, 0, "a string seen before is not parsed again");
        assert_eq!(again.unwrap(), first.unwrap());
    }

    #[test]
    fn errors_and_long_strings_are_not_kept() {
        let cache = new_cache();
        for _ in 0..2 {
            let (result, parsed) = counting(&cache, "SELEC 1");
            assert!(result.is_err());
            assert_eq!(parsed, 1, "an error is parsed again");
        }
        let long = format!("SELECT 1 -- {}", "x".repeat(MAX_CACHED_SQL_BYTES));
        for _ in 0..2 {
            assert_eq!(
                counting(&cache, &long).1,
                1,
                "a long string is parsed again"
            );
        }
    }

    #[test]
    fn the_least_recently_used_string_goes_first() {
        let cache = new_cache();
        for i in 0..=CAPACITY {
            counting(&cache, &format!("SELECT {i}")).0.unwrap();
        }
        assert_eq!(counting(&cache, "SELECT 0").1, 1, "evicted");
        assert_eq!(counting(&cache, &format!("SELECT {CAPACITY}")).1, 0, "kept");
    }
}
