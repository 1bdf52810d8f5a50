//! Date and time: PostgreSQL's operator table among `date`, `time`,
//! `timetz`, `timestamp`, `timestamptz` and `interval` ([`arith`]), their
//! fields ([`fields`]: `extract`, `date_part`, `date_trunc`), the other
//! functions ([`functions`]), time zones ([`zones`]) and the calendar they
//! share ([`calendar`]), series of timestamps ([`series`]) and template
//! patterns (`to_char`, `to_date`, `to_timestamp`: [`template`]). The session's time zone is UTC.

mod abbreviations;
mod arith;
pub(crate) mod calendar;
mod fields;
mod functions;
mod overlaps;
pub(crate) mod series;
mod template;
mod zones;

use super::def::Library;

/// Registers the date and time operators and functions.
pub(super) fn register(lib: &mut Library) {
    arith::register(lib);
    fields::register(lib);
    functions::register(lib);
    series::register(lib);
    overlaps::register(lib);
    template::register(lib);
}
