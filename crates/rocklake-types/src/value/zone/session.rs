//! The session's time zone (the `TimeZone` setting). PostgreSQL keeps it
//! in a global of the backend process; here it is a value of the thread
//! that runs the session (each session has its own), installed when a
//! statement starts. It decides how a `timestamptz` is written and read as
//! text, and the local time that date and time functions work in. Threads
//! that serve no session see UTC.

use std::cell::RefCell;
use std::sync::Arc;

use super::Zone;

/// A `TimeZone` value: its name as `SHOW` gives it and the zone (equal
/// names, equal zones).
#[derive(Debug, Clone)]
pub struct SessionZone {
    name: Arc<str>,
    /// `None`: UTC (the offset is always 0).
    zone: Option<Arc<Zone>>,
}

/// The name of the default time zone, as `SHOW TimeZone` gives it.
pub const DEFAULT_ZONE: &str = "Etc/UTC";

thread_local! {
    static SESSION_ZONE: RefCell<SessionZone> = RefCell::new(SessionZone::utc());
}

impl SessionZone {
    /// `Etc/UTC`, the default.
    pub fn utc() -> SessionZone {
        SessionZone {
            name: Arc::from(DEFAULT_ZONE),
            zone: None,
        }
    }

    /// The zone a `SET TimeZone` value names: a zone of the time zone
    /// database (any case, shown as the database spells it) or a POSIX
    /// offset (`+05:30` is west of Greenwich, as POSIX writes it).
    pub fn parse(value: &str) -> Option<SessionZone> {
        let trimmed = value.trim();
        if let Ok(tz) = jiff::tz::db().get(trimmed) {
            let name = tz.iana_name().unwrap_or(trimmed).to_string();
            let always_utc = tz.to_fixed_offset().is_ok_and(|o| o.seconds() == 0);
            return Some(SessionZone {
                name: Arc::from(name),
                zone: (!always_utc).then(|| Arc::new(Zone::Named(tz))),
            });
        }
        // `<-07>+07`: a named offset as PostgreSQL spells `SET TIME ZONE -7`.
        let offset = match trimmed.strip_prefix('<') {
            Some(rest) => &rest[rest.find('>')? + 1..],
            None => trimmed,
        };
        let east = super::posix_offset(offset)?;
        Some(SessionZone {
            name: Arc::from(trimmed),
            zone: (east != 0).then(|| Arc::new(Zone::Fixed(east))),
        })
    }

    /// Its name, as `SHOW TimeZone` gives it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The zone's offset (seconds east of UTC) at the instant `utc_micros`.
    pub fn offset_at(&self, utc_micros: i64) -> i32 {
        match &self.zone {
            None => 0,
            Some(zone) => zone.offset_at(utc_micros).unwrap_or(0),
        }
    }

    /// The local time of the instant `utc_micros` (infinities as they are).
    pub fn local(&self, utc_micros: i64) -> i64 {
        if is_infinite(utc_micros) {
            return utc_micros;
        }
        utc_micros + i64::from(self.offset_at(utc_micros)) * 1_000_000
    }

    /// The instant of the local time `local_micros` (in a daylight-saving
    /// gap the offset before it, in a repeated hour the offset after it).
    pub fn instant(&self, local_micros: i64) -> i64 {
        match &self.zone {
            _ if is_infinite(local_micros) => local_micros,
            None => local_micros,
            Some(zone) => zone.utc(local_micros).unwrap_or(local_micros),
        }
    }

    /// The zone's abbreviation at the instant `utc_micros` (`CEST`; `UTC`
    /// for UTC; empty for a POSIX offset), as `to_char`'s `TZ` shows it.
    pub fn abbreviation_at(&self, utc_micros: i64) -> String {
        match self.zone.as_deref() {
            None => "UTC".to_string(),
            Some(Zone::Fixed(_)) => String::new(),
            Some(Zone::Named(tz)) => super::to_timestamp(utc_micros)
                .map(|ts| tz.to_offset_info(ts).abbreviation().to_string())
                .unwrap_or_default(),
        }
    }

    /// Whether this is UTC.
    pub fn is_utc(&self) -> bool {
        self.zone.is_none()
    }
}

impl PartialEq for SessionZone {
    fn eq(&self, other: &SessionZone) -> bool {
        self.name == other.name
    }
}

fn is_infinite(micros: i64) -> bool {
    micros == i64::MAX || micros == i64::MIN
}

/// The time zone of the session this thread runs.
pub fn session_zone() -> SessionZone {
    SESSION_ZONE.with(|zone| zone.borrow().clone())
}

/// Runs `f` with the session's zone, without copying it.
pub fn with_session_zone<T>(f: impl FnOnce(&SessionZone) -> T) -> T {
    SESSION_ZONE.with(|zone| f(&zone.borrow()))
}

/// Makes `zone` the time zone of the session this thread runs.
pub fn set_session_zone(zone: SessionZone) {
    SESSION_ZONE.with(|current| {
        if *current.borrow() != zone {
            *current.borrow_mut() = zone;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::datetime::{format_timestamp, parse_timestamp};

    #[test]
    fn the_session_zone_shows_and_reads_local_time() {
        let berlin = SessionZone::parse("europe/berlin").unwrap();
        assert_eq!(berlin.name(), "Europe/Berlin");
        assert!(SessionZone::parse("utc").unwrap().is_utc());
        assert_eq!(SessionZone::parse("+05:30").unwrap().offset_at(0), -19_800);
        assert_eq!(
            SessionZone::parse("<-07>+07").unwrap().offset_at(0),
            -25_200
        );
        assert!(SessionZone::parse("Mars/Olympus").is_none());
        let instant = parse_timestamp("2020-06-01 12:00:00+00", true).unwrap();
        set_session_zone(berlin);
        assert_eq!(format_timestamp(instant, true), "2020-06-01 14:00:00+02");
        assert_eq!(parse_timestamp("2020-06-01 14:00:00", true), Some(instant));
        assert_eq!(session_zone().abbreviation_at(instant), "CEST");
        set_session_zone(SessionZone::utc());
        assert_eq!(format_timestamp(instant, true), "2020-06-01 12:00:00+00");
    }
}
