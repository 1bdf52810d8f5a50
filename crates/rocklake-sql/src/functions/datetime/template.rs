//! PostgreSQL's date/time template patterns (`YYYY-MM-DD HH24:MI:SS`,
//! `FMMonth DDth`, ...): `to_char` of timestamps and dates, and `to_date`
//! and `to_timestamp(text, text)`, which read text by a template. Keywords
//! match as PostgreSQL's do (exact upper, lower or capitalized spellings,
//! longest first); `FM` drops padding, `TH`/`th` add an ordinal suffix,
//! double-quoted text is literal. Names are the `C` locale's (English).

use rocklake_types::datum::Datum;
use rocklake_types::value::datetime::days_from_civil;
use rocklake_types::{SqlError, SqlState};

use super::super::def::types::*;
use super::super::def::Library;
use super::calendar::{checked_date, days_in_month, join, split};

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// Registers `to_char` of timestamps, `to_date` and `to_timestamp(text,
/// text)`.
pub(super) fn register(lib: &mut Library) {
    lib.function("to_char", [TIMESTAMP, TEXT], TEXT, |a, _, _| {
        Ok(to_char(a, false))
    });
    lib.function("to_char", [TIMESTAMPTZ, TEXT], TEXT, |a, _, _| {
        Ok(to_char(a, true))
    })
    .stable();
    lib.function("to_date", [TEXT, TEXT], DATE, |a, _, _| {
        let micros = read(
            a[0].as_str().unwrap_or_default(),
            a[1].as_str().unwrap_or_default(),
        )?;
        Ok(Datum::Date(checked_date(
            micros.div_euclid(MICROS_PER_DAY),
        )?))
    })
    .stable();
    lib.function("to_timestamp", [TEXT, TEXT], TIMESTAMPTZ, |a, _, _| {
        let micros = read(
            a[0].as_str().unwrap_or_default(),
            a[1].as_str().unwrap_or_default(),
        )?;
        Ok(Datum::TimestampTz(micros))
    })
    .stable();
}

/// A template keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Meridiem { dots: bool, upper: bool },
    Era { dots: bool, upper: bool },
    Hour12,
    Hour24,
    Minute,
    Second,
    Millis,
    Micros,
    Fraction(u32),
    SecondsOfDay,
    YearComma,
    Year(u32),
    IsoYear(u32),
    MonthName(Case),
    MonthAbbrev(Case),
    Month,
    DayName(Case),
    DayAbbrev(Case),
    DayOfYear,
    IsoDayOfYear,
    DayOfMonth,
    DayOfWeek,
    IsoDayOfWeek,
    WeekOfMonth,
    WeekOfYear,
    IsoWeek,
    Century,
    Julian,
    Quarter,
    Roman(Case),
    Zone(Case),
    ZoneHours,
    ZoneMinutes,
    Offset,
    Strict,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Upper,
    Capital,
    Lower,
}

/// Keywords in upper case with their meaning; each also matches all in
/// lower case (and, for names, capitalized, listed separately).
const KEYWORDS: &[(&str, Key)] = &[
    (
        "A.D.",
        Key::Era {
            dots: true,
            upper: true,
        },
    ),
    (
        "A.M.",
        Key::Meridiem {
            dots: true,
            upper: true,
        },
    ),
    (
        "AD",
        Key::Era {
            dots: false,
            upper: true,
        },
    ),
    (
        "AM",
        Key::Meridiem {
            dots: false,
            upper: true,
        },
    ),
    (
        "B.C.",
        Key::Era {
            dots: true,
            upper: true,
        },
    ),
    (
        "BC",
        Key::Era {
            dots: false,
            upper: true,
        },
    ),
    ("CC", Key::Century),
    ("DAY", Key::DayName(Case::Upper)),
    ("DDD", Key::DayOfYear),
    ("DD", Key::DayOfMonth),
    ("DY", Key::DayAbbrev(Case::Upper)),
    ("D", Key::DayOfWeek),
    ("FF1", Key::Fraction(1)),
    ("FF2", Key::Fraction(2)),
    ("FF3", Key::Fraction(3)),
    ("FF4", Key::Fraction(4)),
    ("FF5", Key::Fraction(5)),
    ("FF6", Key::Fraction(6)),
    ("FX", Key::Strict),
    ("HH24", Key::Hour24),
    ("HH12", Key::Hour12),
    ("HH", Key::Hour12),
    ("IDDD", Key::IsoDayOfYear),
    ("ID", Key::IsoDayOfWeek),
    ("IW", Key::IsoWeek),
    ("IYYY", Key::IsoYear(4)),
    ("IYY", Key::IsoYear(3)),
    ("IY", Key::IsoYear(2)),
    ("I", Key::IsoYear(1)),
    ("J", Key::Julian),
    ("MI", Key::Minute),
    ("MM", Key::Month),
    ("MONTH", Key::MonthName(Case::Upper)),
    ("MON", Key::MonthAbbrev(Case::Upper)),
    ("MS", Key::Millis),
    ("OF", Key::Offset),
    (
        "P.M.",
        Key::Meridiem {
            dots: true,
            upper: true,
        },
    ),
    (
        "PM",
        Key::Meridiem {
            dots: false,
            upper: true,
        },
    ),
    ("Q", Key::Quarter),
    ("RM", Key::Roman(Case::Upper)),
    ("SSSSS", Key::SecondsOfDay),
    ("SSSS", Key::SecondsOfDay),
    ("SS", Key::Second),
    ("TZH", Key::ZoneHours),
    ("TZM", Key::ZoneMinutes),
    ("TZ", Key::Zone(Case::Upper)),
    ("US", Key::Micros),
    ("WW", Key::WeekOfYear),
    ("W", Key::WeekOfMonth),
    ("Y,YYY", Key::YearComma),
    ("YYYY", Key::Year(4)),
    ("YYY", Key::Year(3)),
    ("YY", Key::Year(2)),
    ("Y", Key::Year(1)),
];

/// The capitalized spellings that are keywords of their own.
const CAPITALIZED: &[(&str, Key)] = &[
    ("Month", Key::MonthName(Case::Capital)),
    ("Mon", Key::MonthAbbrev(Case::Capital)),
    ("Day", Key::DayName(Case::Capital)),
    ("Dy", Key::DayAbbrev(Case::Capital)),
];

/// `key` as its lower-case spelling means it.
fn lowered(key: Key) -> Key {
    match key {
        Key::Meridiem { dots, .. } => Key::Meridiem { dots, upper: false },
        Key::Era { dots, .. } => Key::Era { dots, upper: false },
        Key::MonthName(_) => Key::MonthName(Case::Lower),
        Key::MonthAbbrev(_) => Key::MonthAbbrev(Case::Lower),
        Key::DayName(_) => Key::DayName(Case::Lower),
        Key::DayAbbrev(_) => Key::DayAbbrev(Case::Lower),
        Key::Roman(_) => Key::Roman(Case::Lower),
        Key::Zone(_) => Key::Zone(Case::Lower),
        other => other,
    }
}

/// One piece of a template.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Literal(char),
    Field {
        key: Key,
        /// The spelling, for messages.
        name: String,
        fill: bool,
        ordinal: Option<bool>,
    },
}

/// The keyword at the start of `rest`, with its length in bytes.
fn keyword(rest: &str) -> Option<(Key, usize)> {
    let mut best: Option<(Key, usize)> = None;
    let mut consider = |spelling: &str, key: Key| {
        if rest.starts_with(spelling) && best.is_none_or(|(_, len)| spelling.len() > len) {
            best = Some((key, spelling.len()));
        }
    };
    for (upper, key) in KEYWORDS {
        consider(upper, *key);
        consider(&upper.to_ascii_lowercase(), lowered(*key));
    }
    for (spelling, key) in CAPITALIZED {
        consider(spelling, *key);
    }
    best
}

/// Reads a template into its pieces.
fn parse(template: &str) -> Vec<Node> {
    let mut nodes = Vec::new();
    let mut rest = template;
    while let Some(c) = rest.chars().next() {
        if c == '"' {
            rest = &rest[1..];
            let mut chars = rest.char_indices();
            let mut end = rest.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            nodes.push(Node::Literal(escaped));
                        }
                    }
                    c => nodes.push(Node::Literal(c)),
                }
            }
            rest = &rest[end.min(rest.len())..];
            continue;
        }
        if c == '\\' && rest[1..].starts_with('"') {
            nodes.push(Node::Literal('"'));
            rest = &rest[2..];
            continue;
        }
        let mut fill = false;
        for prefix in ["FM", "fm", "TM", "tm"] {
            if let Some(after) = rest.strip_prefix(prefix) {
                fill |= prefix.eq_ignore_ascii_case("FM");
                rest = after;
                break;
            }
        }
        match keyword(rest) {
            Some((key, len)) => {
                let name = rest[..len].to_string();
                rest = &rest[len..];
                let mut ordinal = None;
                if let Some(after) = rest.strip_prefix("TH") {
                    ordinal = Some(true);
                    rest = after;
                } else if let Some(after) = rest.strip_prefix("th") {
                    ordinal = Some(false);
                    rest = after;
                }
                for spell in ["SP", "sp"] {
                    if let Some(after) = rest.strip_prefix(spell) {
                        rest = after;
                    }
                }
                nodes.push(Node::Field {
                    key,
                    name,
                    fill,
                    ordinal,
                });
            }
            None => {
                if let Some(c) = rest.chars().next() {
                    nodes.push(Node::Literal(c));
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
    }
    nodes
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const ROMAN: [&str; 12] = [
    "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII",
];

fn cased(text: &str, case: Case) -> String {
    match case {
        Case::Upper => text.to_ascii_uppercase(),
        Case::Lower => text.to_ascii_lowercase(),
        Case::Capital => text.to_string(),
    }
}

/// `value` zero-padded to `width` digits (after a minus sign), unless
/// `fill`.
fn padded(value: i64, width: usize, fill: bool) -> String {
    if fill {
        return value.to_string();
    }
    if value < 0 {
        format!(
            "-{:0>w$}",
            value.unsigned_abs(),
            w = width.saturating_sub(1)
        )
    } else {
        format!("{value:0>width$}")
    }
}

/// A name padded to 9 characters unless `fill`.
fn name_field(text: String, fill: bool) -> String {
    if fill {
        text
    } else {
        format!("{text:<9}")
    }
}

/// The ordinal suffix of the number `digits` ends with.
fn ordinal(digits: &str, upper: bool) -> &'static str {
    let bytes = digits.as_bytes();
    let last = bytes.last().copied().unwrap_or(b'0');
    let teen = bytes.len() > 1 && bytes[bytes.len() - 2] == b'1';
    let suffix = match (last, teen) {
        (b'1', false) => "st",
        (b'2', false) => "nd",
        (b'3', false) => "rd",
        _ => "th",
    };
    match (suffix, upper) {
        ("st", true) => "ST",
        ("nd", true) => "ND",
        ("rd", true) => "RD",
        ("th", true) => "TH",
        (s, _) => s,
    }
}

/// PostgreSQL's positive year numbering (1 BC is 1).
fn adjust_year(year: i64) -> i64 {
    if year <= 0 {
        1 - year
    } else {
        year
    }
}

/// The ISO year (astronomical), week and day of week of a date.
fn iso_date(days: i64) -> (i64, i64, i64) {
    let iso_dow = (days + 3).rem_euclid(7) + 1;
    let thursday = days - iso_dow + 4;
    let (iso_year, _, _) = rocklake_types::value::datetime::civil_from_days(thursday);
    let week = (thursday - days_from_civil(iso_year, 1, 1)) / 7 + 1;
    (iso_year, week, iso_dow)
}

/// `to_char(timestamp, template)`; `zone` says whether it is a
/// `timestamptz` (shown in UTC, the session's zone).
pub(super) fn format(micros: i64, zone: bool, template: &str) -> String {
    let ((year, month, day), time) = split(micros);
    let days = days_from_civil(year, i64::from(month), i64::from(day));
    let (iso_year, iso_week, iso_dow) = iso_date(days);
    let day_of_year = days - days_from_civil(year, 1, 1) + 1;
    let dow = (days + 4).rem_euclid(7);
    let hour = time / 3_600_000_000;
    let minute = time / 60_000_000 % 60;
    let second = time / 1_000_000 % 60;
    let fraction = time % 1_000_000;
    let mut out = String::new();
    for node in parse(template) {
        let (key, fill, th) = match node {
            Node::Literal(c) => {
                out.push(c);
                continue;
            }
            Node::Field {
                key, fill, ordinal, ..
            } => (key, fill, ordinal),
        };
        let number = |value: i64, width: usize| padded(value, width, fill);
        let text = match key {
            Key::Meridiem { dots, upper } => {
                let pm = hour >= 12;
                let t = match (pm, dots) {
                    (false, false) => "AM",
                    (true, false) => "PM",
                    (false, true) => "A.M.",
                    (true, true) => "P.M.",
                };
                if upper {
                    t.to_string()
                } else {
                    t.to_ascii_lowercase()
                }
            }
            Key::Era { dots, upper } => {
                let bc = year <= 0;
                let t = match (bc, dots) {
                    (true, false) => "BC",
                    (false, false) => "AD",
                    (true, true) => "B.C.",
                    (false, true) => "A.D.",
                };
                if upper {
                    t.to_string()
                } else {
                    t.to_ascii_lowercase()
                }
            }
            Key::Hour12 => number(if hour % 12 == 0 { 12 } else { hour % 12 }, 2),
            Key::Hour24 => number(hour, 2),
            Key::Minute => number(minute, 2),
            Key::Second => number(second, 2),
            Key::Millis => number(fraction / 1000, 3),
            Key::Micros => number(fraction, 6),
            Key::Fraction(n) => number(fraction / 10_i64.pow(6 - n), n as usize),
            Key::SecondsOfDay => (hour * 3600 + minute * 60 + second).to_string(),
            Key::YearComma => {
                let y = adjust_year(year);
                format!("{},{:03}", y / 1000, y % 1000)
            }
            Key::Year(4) if (-9998..=9999).contains(&year) => number(adjust_year(year), 4),
            Key::Year(4) => adjust_year(year).to_string(),
            Key::Year(n) => number(adjust_year(year) % 10_i64.pow(n), n as usize),
            Key::IsoYear(4) if (-9998..=9999).contains(&iso_year) => {
                number(adjust_year(iso_year), 4)
            }
            Key::IsoYear(4) => adjust_year(iso_year).to_string(),
            Key::IsoYear(n) => number(adjust_year(iso_year) % 10_i64.pow(n), n as usize),
            Key::MonthName(case) => name_field(cased(MONTHS[month as usize - 1], case), fill),
            Key::MonthAbbrev(case) => cased(&MONTHS[month as usize - 1][..3], case),
            Key::Month => number(i64::from(month), 2),
            Key::DayName(case) => name_field(cased(DAYS[dow as usize], case), fill),
            Key::DayAbbrev(case) => cased(&DAYS[dow as usize][..3], case),
            Key::DayOfYear => number(day_of_year, 3),
            Key::IsoDayOfYear => number((iso_week - 1) * 7 + iso_dow, 3),
            Key::DayOfMonth => number(i64::from(day), 2),
            Key::DayOfWeek => (dow + 1).to_string(),
            Key::IsoDayOfWeek => iso_dow.to_string(),
            Key::WeekOfMonth => ((i64::from(day) - 1) / 7 + 1).to_string(),
            Key::WeekOfYear => number((day_of_year - 1) / 7 + 1, 2),
            Key::IsoWeek => number(iso_week, 2),
            Key::Century => {
                let c = if year > 0 {
                    (year - 1) / 100 + 1
                } else {
                    year / 100 - 1
                };
                if (-99..=99).contains(&c) {
                    number(c, if c >= 0 { 2 } else { 3 })
                } else {
                    c.to_string()
                }
            }
            Key::Julian => (days + 2_440_588).to_string(),
            Key::Quarter => ((i64::from(month) - 1) / 3 + 1).to_string(),
            Key::Roman(case) => {
                let r = cased(ROMAN[month as usize - 1], case);
                if fill {
                    r
                } else {
                    format!("{r:<4}")
                }
            }
            Key::Zone(case) if zone => cased("UTC", case),
            Key::Zone(_) => String::new(),
            Key::ZoneHours | Key::Offset => {
                if fill {
                    "+0".into()
                } else {
                    "+00".into()
                }
            }
            Key::ZoneMinutes => "00".into(),
            Key::Strict => String::new(),
        };
        out.push_str(&text);
        if let Some(upper) = th {
            if text.ends_with(|c: char| c.is_ascii_digit()) {
                out.push_str(ordinal(&text, upper));
            }
        }
    }
    out
}

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
pub(super) fn read(input: &str, template: &str) -> Result<i64, SqlError> {
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
        let days = julian - 2_440_588;
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

/// `to_char(timestamp or timestamptz, template)`.
pub(super) fn to_char(a: &[Datum], zone: bool) -> Datum {
    let micros = match &a[0] {
        Datum::Timestamp(v) | Datum::TimestampTz(v) => *v,
        _ => return Datum::Null,
    };
    let template = a[1].as_str().unwrap_or_default();
    // An empty template gives NULL, as in PostgreSQL.
    if super::calendar::is_infinite_timestamp(micros) || template.is_empty() {
        return Datum::Null;
    }
    Datum::text(format(micros, zone, template))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(y: i64, m: u32, d: u32, h: i64, mi: i64, s: i64) -> i64 {
        join((y, m, d), ((h * 60 + mi) * 60 + s) * 1_000_000).unwrap()
    }

    #[test]
    fn templates_print_as_postgres_prints_them() {
        let t = stamp(2024, 3, 5, 14, 7, 9);
        assert_eq!(
            format(t, false, "YYYY-MM-DD HH24:MI:SS"),
            "2024-03-05 14:07:09"
        );
        assert_eq!(format(t, false, "FMMonth DDth, Yyyy"), "March 05th, 4024");
        assert_eq!(format(t, false, "Day|DY|RM"), "Tuesday  |TUE|III ");
        assert_eq!(format(t, true, "\"Q\"Q TZ"), "Q1 UTC");
        let bc = stamp(-43, 3, 15, 12, 0, 0);
        assert_eq!(format(bc, false, "YYYY BC CC"), "0044 BC -01");
    }

    #[test]
    fn text_is_read_by_its_template() {
        assert_eq!(
            read("2024-03-05", "YYYY-MM-DD").unwrap(),
            stamp(2024, 3, 5, 0, 0, 0)
        );
        assert_eq!(
            read("20240305", "YYYYMMDD").unwrap(),
            stamp(2024, 3, 5, 0, 0, 0)
        );
        assert_eq!(
            read("05/03/2024 02:07 PM", "DD/MM/YYYY HH:MI AM").unwrap(),
            stamp(2024, 3, 5, 14, 7, 0)
        );
        assert_eq!(
            read("March 5, 2024", "Month DD, YYYY").unwrap(),
            stamp(2024, 3, 5, 0, 0, 0)
        );
        assert!(read("2024-02-30", "YYYY-MM-DD").is_err());
        assert!(read("abc", "YYYY").is_err());
    }
}
