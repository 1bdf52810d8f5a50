//! Date and time: PostgreSQL's operator table among `date`, `time`,
//! `timetz`, `timestamp`, `timestamptz` and `interval` ([`arith`]), and the
//! calendar they share ([`calendar`]). Time zones are the session's
//! (`TimeZone`, UTC on this server).

mod arith;
pub(crate) mod calendar;
mod fields;

use super::def::Library;

/// Registers the date and time operators and functions.
pub(super) fn register(lib: &mut Library) {
    arith::register(lib);
    fields::register(lib);
}
