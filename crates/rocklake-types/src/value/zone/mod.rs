//! Time zones as PostgreSQL reads their names in `AT TIME ZONE`,
//! `timezone()`, `date_trunc(..., zone)` and `make_timestamptz`: IANA names
//! (any case, from the time zone database bundled with the server), the
//! abbreviations of PostgreSQL's default set (`CEST`, `EST`), POSIX
//! offsets (`UTC+2`, `+02`, `-05:30`, where a positive offset is *west* of
//! Greenwich, as in POSIX), and `interval` offsets (east).
//!
//! A local time that falls in a daylight-saving gap takes the offset from
//! before the change, one that occurs twice the offset from after it, as
//! PostgreSQL's `DetermineTimeZoneOffset` does.

mod abbreviations;
mod session;

use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::Timestamp;

use super::datetime::{split, MICROS_PER_SECOND, UNIX_TO_PG_EPOCH_DAYS};
use crate::error::SqlError;
use crate::sqlstate::SqlState;
use abbreviations::ABBREVIATIONS;

pub use session::{session_zone, set_session_zone, with_session_zone, SessionZone, DEFAULT_ZONE};

fn timestamp_out_of_range() -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range")
}

/// A time zone.
#[derive(Debug, Clone)]
pub enum Zone {
    /// A fixed offset, seconds east of UTC.
    Fixed(i32),
    /// A zone of the time zone database.
    Named(TimeZone),
}

fn not_recognized(name: &str) -> SqlError {
    SqlError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("time zone \"{name}\" not recognized"),
    )
}

/// The zone `name` stands for.
pub fn zone(name: &str) -> Result<Zone, SqlError> {
    let trimmed = name.trim();
    let lower = trimmed.to_ascii_lowercase();
    if let Ok(i) = ABBREVIATIONS.binary_search_by(|(a, _)| (*a).cmp(lower.as_str())) {
        return Ok(Zone::Fixed(ABBREVIATIONS[i].1));
    }
    if let Some(offset) = posix_offset(trimmed) {
        return Ok(Zone::Fixed(offset));
    }
    jiff::tz::db()
        .get(trimmed)
        .map(Zone::Named)
        .map_err(|_| not_recognized(name))
}

/// A POSIX-style offset (`+02`, `-05:30`, `UTC+2`, `GMT-3`): seconds east,
/// the sign reversed as POSIX writes it.
fn posix_offset(text: &str) -> Option<i32> {
    let start = text
        .find(['+', '-'])
        .or_else(|| text.find(|c: char| c.is_ascii_digit()).filter(|&i| i > 0))?;
    let (name, offset) = text.split_at(start);
    if !(name.is_empty() || name.chars().all(|c| c.is_ascii_alphabetic()) && name.len() >= 3) {
        return None;
    }
    let (west, digits) = match offset.as_bytes()[0] {
        b'-' => (false, &offset[1..]),
        b'+' => (true, &offset[1..]),
        _ => (true, offset),
    };
    let mut parts = digits.split(':');
    let number = |s: Option<&str>| -> Option<i32> {
        match s {
            None => Some(0),
            Some(s) if !s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit()) => {
                s.parse().ok()
            }
            _ => None,
        }
    };
    let hours = number(Some(parts.next()?))?;
    let minutes = number(parts.next())?;
    let seconds = number(parts.next())?;
    if parts.next().is_some() || hours > 15 || minutes > 59 || seconds > 59 {
        return None;
    }
    let total = hours * 3600 + minutes * 60 + seconds;
    Some(if west { -total } else { total })
}

fn to_timestamp(utc_micros: i64) -> Result<Timestamp, SqlError> {
    let unix = utc_micros + UNIX_TO_PG_EPOCH_DAYS * 86_400 * MICROS_PER_SECOND;
    Timestamp::from_microsecond(unix).map_err(|_| timestamp_out_of_range())
}

impl Zone {
    /// The zone's offset (seconds east) at the instant `utc_micros`.
    pub fn offset_at(&self, utc_micros: i64) -> Result<i32, SqlError> {
        match self {
            Zone::Fixed(east) => Ok(*east),
            Zone::Named(tz) => Ok(tz.to_offset(to_timestamp(utc_micros)?).seconds()),
        }
    }

    /// The local time (as microseconds since 2000-01-01 on the local clock)
    /// of the instant `utc_micros`.
    pub fn local(&self, utc_micros: i64) -> Result<i64, SqlError> {
        Ok(utc_micros + i64::from(self.offset_at(utc_micros)?) * MICROS_PER_SECOND)
    }

    /// The instant whose local time in this zone is `local_micros`.
    pub fn utc(&self, local_micros: i64) -> Result<i64, SqlError> {
        let offset = match self {
            Zone::Fixed(east) => *east,
            Zone::Named(tz) => {
                let ((year, month, day), time) = split(local_micros);
                let second = time / MICROS_PER_SECOND;
                let datetime = DateTime::new(
                    i16::try_from(year).map_err(|_| timestamp_out_of_range())?,
                    month as i8,
                    day as i8,
                    (second / 3600) as i8,
                    (second / 60 % 60) as i8,
                    (second % 60) as i8,
                    0,
                )
                .map_err(|_| timestamp_out_of_range())?;
                match tz.to_ambiguous_zoned(datetime).offset() {
                    AmbiguousOffset::Unambiguous { offset } => offset.seconds(),
                    AmbiguousOffset::Gap { before, .. } => before.seconds(),
                    AmbiguousOffset::Fold { after, .. } => after.seconds(),
                }
            }
        };
        Ok(local_micros - i64::from(offset) * MICROS_PER_SECOND)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000_000;

    #[test]
    fn names_offsets_and_transitions_as_postgres_reads_them() {
        assert!(matches!(zone("+02").unwrap(), Zone::Fixed(-7200)));
        assert!(matches!(zone("UTC+2").unwrap(), Zone::Fixed(-7200)));
        assert!(matches!(zone("-05:30").unwrap(), Zone::Fixed(19800)));
        assert!(matches!(zone("CEST").unwrap(), Zone::Fixed(7200)));
        assert!(matches!(zone("est").unwrap(), Zone::Fixed(-18000)));
        assert_eq!(zone("Mars/Olympus").err().unwrap().code, "22023");
        let berlin = zone("europe/berlin").unwrap();
        // 2024-07-01 12:00 UTC is 14:00 in Berlin.
        let july = 8948 * 24 * H + 12 * H;
        assert_eq!(berlin.local(july).unwrap(), july + 2 * H);
        // 2024-03-31 02:30 does not exist: the offset before (+01).
        let gap = 8856 * 24 * H + 2 * H + H / 2;
        assert_eq!(berlin.utc(gap).unwrap(), gap - H);
        // 2024-10-27 02:30 occurs twice: the offset after (+01).
        let fold = 9066 * 24 * H + 2 * H + H / 2;
        assert_eq!(berlin.utc(fold).unwrap(), fold - H);
    }
}
