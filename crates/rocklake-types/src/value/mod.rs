//! PostgreSQL value I/O, one implementation per format: every cast to text,
//! every text-format result column and every COPY field goes through
//! [`text`]; binary-format columns and binary COPY through [`binary`].
//!
//! - [`text`]: each type's `*in` / `*out` (`DateStyle=ISO, MDY`,
//!   `TimeZone=UTC`, `IntervalStyle=postgres`, `extra_float_digits=1`);
//! - [`datetime`]: the calendar and the date/time/interval text forms,
//!   with [`interval`] the input of intervals;
//! - [`numeric`]: decimal values kept as canonical text, their arithmetic,
//!   and PostgreSQL's base-10000 binary form;
//! - [`binary`]: each type's `*send` / `*recv`.

pub mod array;
pub mod binary;
pub mod datetime;
pub mod equality;
pub mod inet;
pub mod interval;
pub mod json;
pub mod jsonb;
pub mod numeric;
pub mod text;
pub mod zone;
