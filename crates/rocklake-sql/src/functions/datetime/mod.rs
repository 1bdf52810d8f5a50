//! Date and time: PostgreSQL's operator table among `date`, `time`,
//! `timetz`, `timestamp`, `timestamptz` and `interval` ([`arith`]), their
//! fields ([`fields`]: `extract`, `date_part`, `date_trunc`), the other
//! functions ([`functions`]) and the calendar they share ([`calendar`]),
//! series of timestamps ([`series`]) and template patterns (`to_char`,
//! `to_date`, `to_timestamp`: [`template`]). Time zones, the session's
//! among them, are [`rocklake_types::value::zone`]'s.

mod arith;
pub(crate) mod calendar;
mod fields;
mod functions;
mod overlaps;
pub(crate) mod series;
mod template;

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
