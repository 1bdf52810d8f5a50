//! Reading text by a template (`to_date`, `to_timestamp(text, text)`):
//! each field takes its digits or names from the input, separators match
//! separators, and the fields read make a timestamp, with PostgreSQL's
//! errors for text that does not fit.

use rocklake_types::value::datetime::days_from_civil;
use rocklake_types::{SqlError, SqlState};

use super::super::calendar::{days_in_month, join};
use super::{parse, Key, Node, DAYS, MONTHS, ROMAN};

fn invalid_format(message: String) -> SqlError {
    SqlError::new(SqlState::INVALID_DATETIME_FORMAT, message)
}

/// What a template read from text says.
#[derive(Default)]
struct Parsed {
    year: Option<i64>,
    bc: bool,
    month: Option<i64>,
    day: Option<i64>,
    day_of_year: Option<i64>,
    julian: Option<i64>,
    hour: i64,
    twelve_hour: bool,
    pm: Option<bool>,
    minute: i64,
    second: i64,
    micros: i64,
}

/// Reads `input` by `template` (`to_date`, `to_timestamp`): the timestamp
/// it names.
pub(in crate::functions::datetime) fn read(input: &str, template: &str) -> Result<i64, SqlError> {
    let nodes = parse(template);
    let mut parsed = Parsed::default();
    let mut at = input;
    for (i, node) in nodes.iter().enumerate() {
        match node {
            Node::Literal(c) if c.is_whitespace() => {
                at = at.trim_start();
            }
            Node::Literal(literal) => {
                // Text consumes one character of the input, whatever it
                // is; a separator matches one non-alphanumeric character,
                // if there is one.
                if let Some(c) = at.chars().next() {
                    if literal.is_alphanumeric() || !c.is_alphanumeric() {
                        at = &at[c.len_utf8()..];
                    }
                }
            }
            Node::Field { key, name, .. } => {
                at = at.trim_start();
                let next_is_field = matches!(nodes.get(i + 1), Some(Node::Field { .. }));
                at = read_field(*key, name, at, next_is_field, &mut parsed)?;
            }
        }
    }
    assemble(&parsed, input)
}

/// Reads an integer of at most `width` digits (exactly `width` when the
/// next template piece is a field too).
fn read_number<'a>(
    at: &'a str,
    name: &str,
    width: usize,
    exact: bool,
) -> Result<(i64, &'a str), SqlError> {
    let signed = at.starts_with(['-', '+']);
    let body = if signed { &at[1..] } else { at };
    let limit = if exact { width } else { body.len() };
    let digits = body
        .char_indices()
        .take_while(|(i, c)| c.is_ascii_digit() && *i < limit)
        .count();
    if digits == 0 {
        let shown: String = at.chars().take(width.max(1)).collect();
        return Err(
            invalid_format(format!("invalid value \"{shown}\" for \"{name}\""))
                .with_detail("Value must be an integer."),
        );
    }
    let text = &at[..digits + usize::from(signed)];
    let value = text.parse::<i64>().map_err(|_| {
        SqlError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("value for \"{name}\" in source string is out of range"),
        )
    })?;
    Ok((value, &at[text.len()..]))
}

/// Finds one of `names` (case-insensitive) at the start of `at`.
fn read_name<'a>(at: &'a str, name: &str, names: &[&str]) -> Result<(usize, &'a str), SqlError> {
    for (i, candidate) in names.iter().enumerate() {
        if at.len() >= candidate.len() && at[..candidate.len()].eq_ignore_ascii_case(candidate) {
            return Ok((i, &at[candidate.len()..]));
        }
    }
    Err(invalid_format(format!(
        "invalid value \"{}\" for \"{name}\"",
        at.chars().take(3).collect::<String>()
    ))
    .with_detail("The given value did not match any of the allowed values for this field."))
}

fn read_field<'a>(
    key: Key,
    name: &str,
    at: &'a str,
    exact: bool,
    parsed: &mut Parsed,
) -> Result<&'a str, SqlError> {
    let number = |width: usize| read_number(at, name, width, exact);
    Ok(match key {
        Key::Year(n) | Key::IsoYear(n) => {
            let (v, rest) = number(n as usize)?;
            parsed.year = Some(match n {
                4 => v,
                3 if v < 100 => 2000 + v,
                3 => 1000 + v,
                2 if v < 70 => 2000 + v,
                2 => 1900 + v,
                _ => 2000 + v,
            });
            rest
        }
        Key::YearComma => {
            let (thousands, rest) = number(1)?;
            let rest = rest.strip_prefix(',').unwrap_or(rest);
            let (units, rest) = read_number(rest, name, 3, true)?;
            parsed.year = Some(thousands * 1000 + units);
            rest
        }
        Key::Month => {
            let (v, rest) = number(2)?;
            parsed.month = Some(v);
            rest
        }
        Key::MonthName(_) => {
            let (i, rest) = read_name(at, name, &MONTHS)?;
            parsed.month = Some(i as i64 + 1);
            rest
        }
        Key::MonthAbbrev(_) => {
            let abbrevs: Vec<&str> = MONTHS.iter().map(|m| &m[..3]).collect();
            let (i, rest) = read_name(at, name, &abbrevs)?;
            parsed.month = Some(i as i64 + 1);
            rest
        }
        Key::Roman(_) => {
            let mut by_length: Vec<(usize, &str)> = ROMAN.iter().copied().enumerate().collect();
            by_length.sort_by_key(|(_, r)| std::cmp::Reverse(r.len()));
            let names: Vec<&str> = by_length.iter().map(|(_, r)| *r).collect();
            let (i, rest) = read_name(at, name, &names)?;
            parsed.month = Some(by_length[i].0 as i64 + 1);
            rest
        }
        Key::DayName(_) => read_name(at, name, &DAYS)?.1,
        Key::DayAbbrev(_) => {
            let abbrevs: Vec<&str> = DAYS.iter().map(|d| &d[..3]).collect();
            read_name(at, name, &abbrevs)?.1
        }
        Key::DayOfMonth => {
            let (v, rest) = number(2)?;
            parsed.day = Some(v);
            rest
        }
        Key::DayOfYear | Key::IsoDayOfYear => {
            let (v, rest) = number(3)?;
            parsed.day_of_year = Some(v);
            rest
        }
        Key::Julian => {
            let (v, rest) = number(7)?;
            parsed.julian = Some(v);
            rest
        }
        Key::Hour12 | Key::Hour24 => {
            let (v, rest) = number(2)?;
            parsed.hour = v;
            parsed.twelve_hour = key == Key::Hour12;
            rest
        }
        Key::Minute => {
            let (v, rest) = number(2)?;
            parsed.minute = v;
            rest
        }
        Key::Second => {
            let (v, rest) = number(2)?;
            parsed.second = v;
            rest
        }
        Key::Millis | Key::Micros | Key::Fraction(_) => {
            let width = match key {
                Key::Millis => 3,
                Key::Micros => 6,
                Key::Fraction(n) => n as usize,
                _ => 6,
            };
            let digits = at.chars().take_while(char::is_ascii_digit).count();
            let (v, rest) = number(width)?;
            let read = digits.min(if exact { width } else { digits });
            let micros = match key {
                Key::Millis => v * 10_i64.pow(3u32.saturating_sub(read as u32)) * 1000,
                _ => v * 10_i64.pow(6u32.saturating_sub(read as u32)),
            };
            parsed.micros += micros;
            rest
        }
        Key::SecondsOfDay => {
            let (v, rest) = number(5)?;
            parsed.hour = v / 3600;
            parsed.minute = v / 60 % 60;
            parsed.second = v % 60;
            rest
        }
        Key::Meridiem { dots, .. } => {
            let names: &[&str] = if dots {
                &["A.M.", "P.M."]
            } else {
                &["AM", "PM"]
            };
            let (i, rest) = read_name(at, name, names)?;
            parsed.pm = Some(i == 1);
            rest
        }
        Key::Era { dots, .. } => {
            let names: &[&str] = if dots {
                &["A.D.", "B.C."]
            } else {
                &["AD", "BC"]
            };
            let (i, rest) = read_name(at, name, names)?;
            parsed.bc = i == 1;
            rest
        }
        Key::Century
        | Key::Quarter
        | Key::DayOfWeek
        | Key::IsoDayOfWeek
        | Key::WeekOfMonth
        | Key::WeekOfYear
        | Key::IsoWeek => number(2)?.1,
        Key::Zone(_) | Key::ZoneHours | Key::ZoneMinutes | Key::Offset => {
            return Err(SqlError::unsupported(format!(
                "formatting field \"{name}\" is only supported in to_char"
            )))
        }
        Key::Strict => at,
    })
}

fn out_of_range(input: &str) -> SqlError {
    SqlError::new(
        SqlState::DATETIME_FIELD_OVERFLOW,
        format!("date/time field value out of range: \"{input}\""),
    )
}

fn assemble(p: &Parsed, input: &str) -> Result<i64, SqlError> {
    let mut hour = p.hour;
    if let Some(pm) = p.pm {
        if !(1..=12).contains(&hour) {
            return Err(SqlError::new(
                SqlState::INVALID_DATETIME_FORMAT,
                format!("hour \"{hour}\" is invalid for the 12-hour clock"),
            )
            .with_hint("Use the 24-hour clock, or give an hour between 1 and 12."));
        }
        hour = hour % 12 + if pm { 12 } else { 0 };
    } else if p.twelve_hour && !(1..=12).contains(&hour) {
        return Err(SqlError::new(
            SqlState::INVALID_DATETIME_FORMAT,
            format!("hour \"{hour}\" is invalid for the 12-hour clock"),
        )
        .with_hint("Use the 24-hour clock, or give an hour between 1 and 12."));
    }
    if hour > 24 || p.minute > 59 || p.second > 60 {
        return Err(out_of_range(input));
    }
    let year = match (p.year, p.bc) {
        (Some(y), true) => 1 - y,
        (Some(y), false) => y,
        (None, _) => 0,
    };
    let date = if let Some(julian) = p.julian {
        let days = julian - super::super::calendar::julian_day(0);
        rocklake_types::value::datetime::civil_from_days(days)
    } else if let (Some(doy), None) = (p.day_of_year, p.month) {
        let days = days_from_civil(year, 1, 1) + doy - 1;
        rocklake_types::value::datetime::civil_from_days(days)
    } else {
        let month = p.month.unwrap_or(1);
        let day = p.day.unwrap_or(1);
        if !(1..=12).contains(&month)
            || day < 1
            || day > i64::from(days_in_month(year, month as u32))
        {
            return Err(out_of_range(input));
        }
        (year, month as u32, day as u32)
    };
    let time = ((hour * 60 + p.minute) * 60 + p.second) * 1_000_000 + p.micros;
    join(date, time)
}
