//! `interval` input as PostgreSQL's `interval_in` reads it (with
//! `IntervalStyle = postgres`): quantities with units (`1 day 2 hours`,
//! `1.5 months`, `3 weeks ago`, `@ 1 minute`), times of day (`2:03:04.5`),
//! the SQL standard's `1-2` (years-months) and `1 2:03:04` (days and time),
//! ISO 8601 (`P1Y2M3DT4H5M6S`, `P0001-02-03T04:05:06`), and the field
//! qualifiers of a typed literal (`INTERVAL '1:30' HOUR TO MINUTE`,
//! `INTERVAL '2' DAY`), which also say what a bare number means and which
//! lower fields are dropped.
//!
//! Fractions cascade as PostgreSQL's: a fraction of a year into months
//! (rounded), of a month into days (30 to a month) and of a day or week
//! into seconds.

use crate::error::SqlError;
use crate::sqlstate::SqlState;

use super::datetime::{MICROS_PER_HOUR, MICROS_PER_MINUTE, MICROS_PER_SECOND};

/// The fields of an interval qualifier (`YEAR`, `DAY TO SECOND`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntervalFields {
    /// `YEAR`.
    Year,
    /// `MONTH`.
    Month,
    /// `DAY`.
    Day,
    /// `HOUR`.
    Hour,
    /// `MINUTE`.
    Minute,
    /// `SECOND`.
    Second,
    /// `YEAR TO MONTH`.
    YearToMonth,
    /// `DAY TO HOUR`.
    DayToHour,
    /// `DAY TO MINUTE`.
    DayToMinute,
    /// `DAY TO SECOND`.
    DayToSecond,
    /// `HOUR TO MINUTE`.
    HourToMinute,
    /// `HOUR TO SECOND`.
    HourToSecond,
    /// `MINUTE TO SECOND`.
    MinuteToSecond,
}

impl IntervalFields {
    /// The qualifier `leading [TO last]` (upper-case field names).
    pub fn of(leading: &str, last: Option<&str>) -> Option<IntervalFields> {
        use IntervalFields::*;
        Some(match (leading, last) {
            ("YEAR", None) => Year,
            ("MONTH", None) => Month,
            ("DAY", None) => Day,
            ("HOUR", None) => Hour,
            ("MINUTE", None) => Minute,
            ("SECOND", None) => Second,
            ("YEAR", Some("MONTH")) => YearToMonth,
            ("DAY", Some("HOUR")) => DayToHour,
            ("DAY", Some("MINUTE")) => DayToMinute,
            ("DAY", Some("SECOND")) => DayToSecond,
            ("HOUR", Some("MINUTE")) => HourToMinute,
            ("HOUR", Some("SECOND")) => HourToSecond,
            ("MINUTE", Some("SECOND")) => MinuteToSecond,
            _ => return None,
        })
    }

    /// The unit of a number written without one.
    fn bare_unit(self) -> Unit {
        use IntervalFields::*;
        match self {
            Year => Unit::Year,
            Month | YearToMonth => Unit::Month,
            Day => Unit::Day,
            Hour | DayToHour => Unit::Hour,
            Minute | HourToMinute | DayToMinute => Unit::Minute,
            Second | DayToSecond | HourToSecond | MinuteToSecond => Unit::Second,
        }
    }
}

/// A unit of an interval quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Year,
    Decade,
    Century,
    Millennium,
}

fn unit(word: &str) -> Option<Unit> {
    use Unit::*;
    Some(match word {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "useconds" => Microsecond,
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "mseconds" => Millisecond,
        "second" | "seconds" | "s" | "sec" | "secs" => Second,
        "minute" | "minutes" | "m" | "min" | "mins" => Minute,
        "hour" | "hours" | "h" | "hr" | "hrs" => Hour,
        "day" | "days" | "d" => Day,
        "week" | "weeks" | "w" => Week,
        "month" | "months" | "mon" | "mons" => Month,
        "year" | "years" | "y" | "yr" | "yrs" => Year,
        "decade" | "decades" | "dec" | "decs" => Decade,
        "century" | "centuries" | "c" | "cent" => Century,
        "millennium" | "millennia" | "millenniums" | "mil" | "mils" => Millennium,
        _ => return None,
    })
}

/// The fields being summed: PostgreSQL's `struct pg_itm_in` (months, days
/// and microseconds, wide so that overflow is found at the end).
#[derive(Default)]
struct Sum {
    months: i128,
    days: i128,
    micros: i128,
}

impl Sum {
    /// Adds `fraction` of `seconds` seconds (a fraction of a larger unit).
    fn fraction_of_seconds(&mut self, fraction: f64, seconds: f64) {
        self.micros += (fraction * seconds * 1_000_000.0).round() as i128;
    }

    /// Adds `fraction` of `days` days: whole days, the rest as seconds.
    fn fraction_of_days(&mut self, fraction: f64, days: f64) {
        let value = fraction * days;
        let whole = value.trunc();
        self.days += whole as i128;
        self.fraction_of_seconds(value - whole, 86_400.0);
    }

    fn add(&mut self, unit: Unit, whole: i128, fraction: f64) {
        match unit {
            Unit::Microsecond => self.micros += whole + fraction.round() as i128,
            Unit::Millisecond => {
                self.micros += ((whole as f64 + fraction) * 1000.0).round() as i128
            }
            Unit::Second => {
                self.micros += whole * i128::from(MICROS_PER_SECOND);
                self.fraction_of_seconds(fraction, 1.0);
            }
            Unit::Minute => {
                self.micros += whole * i128::from(MICROS_PER_MINUTE);
                self.fraction_of_seconds(fraction, 60.0);
            }
            Unit::Hour => {
                self.micros += whole * i128::from(MICROS_PER_HOUR);
                self.fraction_of_seconds(fraction, 3600.0);
            }
            Unit::Day => {
                self.days += whole;
                self.fraction_of_seconds(fraction, 86_400.0);
            }
            Unit::Week => {
                self.days += whole * 7;
                self.fraction_of_days(fraction, 7.0);
            }
            Unit::Month => {
                self.months += whole;
                self.fraction_of_days(fraction, 30.0);
            }
            Unit::Year => {
                self.months += whole * 12;
                self.months += (fraction * 12.0).round() as i128;
            }
            Unit::Decade => {
                self.months += whole * 120;
                self.months += (fraction * 120.0).round() as i128;
            }
            Unit::Century => {
                self.months += whole * 1200;
                self.months += (fraction * 1200.0).round() as i128;
            }
            Unit::Millennium => {
                self.months += whole * 12_000;
                self.months += (fraction * 12_000.0).round() as i128;
            }
        }
    }
}

/// One token of interval input.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// A signed number: its whole part and the fraction (of the same sign).
    Number(i128, f64),
    /// `[-+]h:m[:s[.f]]`.
    Time(String),
    /// `[-+]y-m`.
    YearMonth(String),
    /// A word (unit, `ago`).
    Word(String),
}

fn syntax_error(input: &str) -> SqlError {
    SqlError::new(
        SqlState::INVALID_DATETIME_FORMAT,
        format!("invalid input syntax for type interval: \"{input}\""),
    )
}

fn field_overflow(input: &str) -> SqlError {
    SqlError::new(
        SqlState::INTERVAL_FIELD_OVERFLOW,
        format!("interval field value out of range: \"{input}\""),
    )
}

/// Whether every whole number in interval input fits a signed 64-bit
/// integer, as PostgreSQL parses each field (`strtoi64`, out of range:
/// "interval field value out of range"), its sign included. Digits after a
/// decimal point are a fraction and may run on. Within that bound no sum of fields can overflow
/// [`Sum`]'s 128-bit parts: the widest unit (an hour) times `i64::MAX` is
/// about 3.3e28, so it would take billions of fields.
fn fields_fit_i64(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let fraction = start > 0 && bytes[start - 1] == b'.';
        // With its minus sign: `-9223372036854775808` is a field.
        let signed = if start > 0 && bytes[start - 1] == b'-' {
            start - 1
        } else {
            start
        };
        if !fraction && text[signed..i].parse::<i64>().is_err() {
            return false;
        }
    }
    true
}

/// A number's whole part and signed fraction.
fn number(text: &str) -> Option<(i128, f64)> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let whole: i128 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let fraction: f64 = if frac.is_empty() {
        0.0
    } else {
        format!("0.{frac}").parse().ok()?
    };
    Some(if negative {
        (-whole, -fraction)
    } else {
        (whole, fraction)
    })
}

fn tokens(input: &str) -> Option<Vec<Token>> {
    let text = input.trim().trim_start_matches('@');
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() || c == b',' {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() {
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                i += 1;
            }
            out.push(Token::Word(text[start..i].to_ascii_lowercase()));
            continue;
        }
        if !(c.is_ascii_digit() || c == b'-' || c == b'+' || c == b'.') {
            return None;
        }
        i += 1;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b':' {
            while i < bytes.len()
                && (bytes[i].is_ascii_digit() || bytes[i] == b':' || bytes[i] == b'.')
            {
                i += 1;
            }
            out.push(Token::Time(text[start..i].to_string()));
        } else if i < bytes.len()
            && bytes[i] == b'-'
            && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
        {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            out.push(Token::YearMonth(text[start..i].to_string()));
        } else {
            let (whole, fraction) = number(&text[start..i])?;
            out.push(Token::Number(whole, fraction));
        }
    }
    Some(out)
}

/// `[-+]h:m[:s[.f]]` (or `m:s[.f]` when `minutes_first`) in microseconds.
fn time_token(text: &str, minutes_first: bool) -> Option<i128> {
    let (negative, body) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let parts: Vec<&str> = body.split(':').collect();
    let int = |s: &str| -> Option<i128> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    let seconds = |s: &str| -> Option<i128> {
        let (whole, fraction) = number(s)?;
        Some(whole * 1_000_000 + (fraction * 1_000_000.0).round() as i128)
    };
    let micros = match (parts.as_slice(), minutes_first) {
        ([m, s], true) => int(m)? * 60_000_000 + seconds(s)?,
        ([h, m], false) => int(h)? * 3_600_000_000 + int(m)? * 60_000_000,
        ([h, m, s], _) => int(h)? * 3_600_000_000 + int(m)? * 60_000_000 + seconds(s)?,
        _ => return None,
    };
    Some(if negative { -micros } else { micros })
}

/// Parses interval input; `fields` is the qualifier of a typed literal.
pub fn parse_interval_with(
    input: &str,
    fields: Option<IntervalFields>,
) -> Result<(i32, i32, i64), SqlError> {
    let trimmed = input.trim();
    if !fields_fit_i64(trimmed) {
        return Err(field_overflow(input));
    }
    let sum = if trimmed.starts_with(['P', 'p']) && trimmed.len() > 1 {
        iso8601(&trimmed[1..]).ok_or_else(|| syntax_error(input))?
    } else {
        postgres_style(trimmed, fields).ok_or_else(|| syntax_error(input))?
    };
    let (months, days, micros) = truncate(sum, fields);
    let months = i32::try_from(months).map_err(|_| field_overflow(input))?;
    let days = i32::try_from(days).map_err(|_| field_overflow(input))?;
    let micros = i64::try_from(micros).map_err(|_| field_overflow(input))?;
    Ok((months, days, micros))
}

/// The fields a unit fills, so that none is given twice (PostgreSQL's
/// `fmask`).
fn mask(unit: Unit) -> u16 {
    1 << (unit as u16)
}

/// The fields a time of day fills: hours, minutes and seconds.
const TIME_MASK: u16 =
    (1 << Unit::Hour as u16) | (1 << Unit::Minute as u16) | (1 << Unit::Second as u16);

fn postgres_style(text: &str, fields: Option<IntervalFields>) -> Option<Sum> {
    let tokens = tokens(text)?;
    if tokens.is_empty() {
        return None;
    }
    let minutes_first = fields == Some(IntervalFields::MinuteToSecond);
    let bare = fields.map_or(Unit::Second, IntervalFields::bare_unit);
    let mut sum = Sum::default();
    let mut seen: u16 = 0;
    let mut fill = |m: u16| -> Option<()> {
        if seen & m != 0 {
            return None;
        }
        seen |= m;
        Some(())
    };
    let mut ago = false;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Word(word) if word == "ago" => ago = true,
            Token::Word(_) => return None,
            Token::Time(text) => {
                fill(TIME_MASK)?;
                sum.micros += time_token(text, minutes_first)?;
            }
            Token::YearMonth(text) => {
                fill(mask(Unit::Year) | mask(Unit::Month))?;
                let (negative, body) = match text.as_bytes().first()? {
                    b'-' => (true, &text[1..]),
                    b'+' => (false, &text[1..]),
                    _ => (false, text.as_str()),
                };
                let (y, m) = body.split_once('-')?;
                let months: i128 = y.parse::<i128>().ok()? * 12 + m.parse::<i128>().ok()?;
                sum.months += if negative { -months } else { months };
            }
            Token::Number(whole, fraction) => {
                let unit = match tokens.get(i + 1) {
                    Some(Token::Word(word)) if word == "ago" => return None,
                    Some(Token::Word(word)) => {
                        i += 1;
                        unit(word)?
                    }
                    // `1 2:03:04`: a number before a time counts days.
                    Some(Token::Time(_)) => Unit::Day,
                    // The SQL standard's `1 2` DAY TO HOUR.
                    Some(Token::Number(..))
                        if fields == Some(IntervalFields::DayToHour) && i + 2 == tokens.len() =>
                    {
                        Unit::Day
                    }
                    Some(_) => return None,
                    None => bare,
                };
                fill(mask(unit))?;
                sum.add(unit, *whole, *fraction);
            }
        }
        i += 1;
    }
    if ago {
        sum.months = -sum.months;
        sum.days = -sum.days;
        sum.micros = -sum.micros;
    }
    Some(sum)
}

/// ISO 8601 after its `P`: designators (`1Y2M3W4DT5H6M7.5S`) or the
/// alternative format (`0001-02-03T04:05:06`).
fn iso8601(text: &str) -> Option<Sum> {
    let mut sum = Sum::default();
    let (date, time) = match text.split_once(['T', 't']) {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    if date.contains('-') || time.is_some_and(|t| t.contains(':')) {
        // Alternative format: [YYYY-MM-DD][Thh:mm:ss].
        if !date.is_empty() {
            let mut parts = date.split('-');
            let years: i128 = parts.next()?.parse().ok()?;
            let months: i128 = parts.next().unwrap_or("0").parse().ok()?;
            let days: i128 = parts.next().unwrap_or("0").parse().ok()?;
            sum.months += years * 12 + months;
            sum.days += days;
        }
        if let Some(t) = time {
            sum.micros += time_token(t, false)?;
        }
        return Some(sum);
    }
    let mut designated = |part: &str, in_time: bool| -> Option<()> {
        let mut rest = part;
        while !rest.is_empty() {
            let end = rest.find(|c: char| c.is_ascii_alphabetic())?;
            let (whole, fraction) = number(&rest[..end])?;
            let designator = rest.as_bytes()[end].to_ascii_uppercase();
            let unit = match (designator, in_time) {
                (b'Y', false) => Unit::Year,
                (b'M', false) => Unit::Month,
                (b'W', false) => Unit::Week,
                (b'D', false) => Unit::Day,
                (b'H', true) => Unit::Hour,
                (b'M', true) => Unit::Minute,
                (b'S', true) => Unit::Second,
                _ => return None,
            };
            sum.add(unit, whole, fraction);
            rest = &rest[end + 1..];
        }
        Some(())
    };
    designated(date, false)?;
    if let Some(t) = time {
        if t.is_empty() {
            return None;
        }
        designated(t, true)?;
    }
    Some(sum)
}

/// Drops the fields below a qualifier's last (`AdjustIntervalForTypmod`).
fn truncate(sum: Sum, fields: Option<IntervalFields>) -> (i128, i128, i128) {
    use IntervalFields::*;
    let Sum {
        months,
        days,
        micros,
    } = sum;
    let hour = i128::from(MICROS_PER_HOUR);
    let minute = i128::from(MICROS_PER_MINUTE);
    match fields {
        Some(Year) => ((months / 12) * 12, 0, 0),
        Some(Month | YearToMonth) => (months, 0, 0),
        Some(Day) => (months, days, 0),
        Some(Hour | DayToHour) => (months, days, (micros / hour) * hour),
        Some(Minute | HourToMinute | DayToMinute) => (months, days, (micros / minute) * minute),
        _ => (months, days, micros),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (i32, i32, i64) {
        parse_interval_with(text, None).unwrap()
    }

    const H: i64 = MICROS_PER_HOUR;
    const MIN: i64 = MICROS_PER_MINUTE;
    const S: i64 = MICROS_PER_SECOND;

    /// Regression (found by `random_sql_into_the_engine`): a field of more
    /// than 64 bits overflowed the 128-bit sum while being scaled (a panic
    /// in debug builds, a wrapped value in release builds).
    #[test]
    fn fields_beyond_64_bits_are_out_of_range() {
        for text in [
            "99999999999999999999999999999999999999 seconds",
            "99999999999999999999 seconds",
            "9223372036854775808 microseconds",
            "170141183460469231731687303715884105727 hours",
            "99999999999999999999:00:00",
            "P99999999999999999999Y",
            "1 day 99999999999999999999999 minutes ago",
        ] {
            let error = parse_interval_with(text, None).unwrap_err();
            assert_eq!(error.code, SqlState::INTERVAL_FIELD_OVERFLOW, "{text}");
        }
        // In range as fields, out of range as a sum (PostgreSQL 15 agrees).
        let error = parse_interval_with("9223372036854775807 seconds", None).unwrap_err();
        assert_eq!(error.code, SqlState::INTERVAL_FIELD_OVERFLOW);
        assert_eq!(parse("2562047788 hours"), (0, 0, 2_562_047_788 * H));
        assert_eq!(
            parse("-9223372036854775807 microseconds"),
            (0, 0, -i64::MAX)
        );
        assert_eq!(parse("-9223372036854775808 microseconds"), (0, 0, i64::MIN));
        // Long fractions are not fields.
        assert_eq!(parse("1.000000000000000000000000001 seconds"), (0, 0, S));
    }

    #[test]
    fn postgres_input_forms() {
        assert_eq!(parse("1 day 2 hours"), (0, 1, 2 * H));
        assert_eq!(parse("1.5 days"), (0, 1, 12 * H));
        assert_eq!(parse("1.5 months"), (1, 15, 0));
        assert_eq!(parse("1.5 years"), (18, 0, 0));
        assert_eq!(parse("2 weeks"), (0, 14, 0));
        assert_eq!(parse("1 week 1.5 hours"), (0, 7, 90 * MIN));
        assert_eq!(parse("@ 1 minute ago"), (0, 0, -MIN));
        assert_eq!(parse("-1 day +2 hours"), (0, -1, 2 * H));
        assert_eq!(
            parse("2:03:04.5"),
            (0, 0, 2 * H + 3 * MIN + 4 * S + 500_000)
        );
        assert_eq!(parse("-00:00:01"), (0, 0, -S));
        assert_eq!(parse("1 2:03:04"), (0, 1, 2 * H + 3 * MIN + 4 * S));
        assert_eq!(parse("1-2"), (14, 0, 0));
        assert_eq!(parse("-1-2"), (-14, 0, 0));
        assert_eq!(parse("7"), (0, 0, 7 * S));
        assert_eq!(parse("1 day 2"), (0, 1, 2 * S));
        assert_eq!(
            parse("3 centuries 1 decade 1 millennium"),
            (12 * 1310, 0, 0)
        );
        assert_eq!(parse("10 ms 5 us"), (0, 0, 10_005));
        assert_eq!(parse("1d 2h 3m 4s"), (0, 1, 2 * H + 3 * MIN + 4 * S));
        assert_eq!(
            parse("14 months 3 days 14706789000 microseconds"),
            (14, 3, 14_706_789_000)
        );
        assert_eq!(parse("P1Y2M3DT4H5M6S"), (14, 3, 4 * H + 5 * MIN + 6 * S));
        assert_eq!(parse("P1W"), (0, 7, 0));
        assert_eq!(parse("PT1.5S"), (0, 0, 1_500_000));
        assert_eq!(
            parse("P0001-02-03T04:05:06"),
            (14, 3, 4 * H + 5 * MIN + 6 * S)
        );
        assert_eq!(parse("1 day ago 2"), (0, -1, -2 * S));
        assert_eq!(parse("ago 2"), (0, 0, -2 * S));
        assert_eq!(parse("1 day 1 week"), (0, 8, 0));
        for bad in [
            "",
            "day",
            "1 fortnight",
            "2 ago",
            "1 2",
            "1 2 3",
            "5 1 day",
            "1 day 1 day",
            "1 hour 01:00",
            "01:00 2:00",
            "P",
            "PT",
            "1:2:3:4",
        ] {
            assert!(parse_interval_with(bad, None).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse_interval_with("99999999999 days", None)
                .unwrap_err()
                .code,
            "22015"
        );
    }

    #[test]
    fn qualifiers_read_bare_numbers_and_drop_lower_fields() {
        use IntervalFields::*;
        let with = |text: &str, fields| parse_interval_with(text, Some(fields)).unwrap();
        assert_eq!(with("1", Day), (0, 1, 0));
        assert_eq!(with("2", Year), (24, 0, 0));
        assert_eq!(with("1.5", Year), (12, 0, 0));
        assert_eq!(with("90", Minute), (0, 0, 90 * MIN));
        assert_eq!(with("1:30", HourToMinute), (0, 0, 90 * MIN));
        assert_eq!(with("1:30", MinuteToSecond), (0, 0, MIN + 30 * S));
        assert_eq!(with("1 day 2 hours", Day), (0, 1, 0));
        assert_eq!(with("1 day 2:03:04", DayToMinute), (0, 1, 2 * H + 3 * MIN));
        assert_eq!(with("1 2", DayToHour), (0, 1, 2 * H));
        assert_eq!(with("1-2", YearToMonth), (14, 0, 0));
        assert_eq!(with("25 months", Year), (24, 0, 0));
    }
}
