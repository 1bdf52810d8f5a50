//! PostgreSQL's date/time template patterns (`YYYY-MM-DD HH24:MI:SS`,
//! `FMMonth DDth`, ...): `to_char` of timestamps and dates, and `to_date`
//! and `to_timestamp(text, text)`, which read text by a template. Keywords
//! match as PostgreSQL's do (exact upper, lower or capitalized spellings,
//! longest first); `FM` drops padding, `TH`/`th` add an ordinal suffix,
//! double-quoted text is literal. Names are the `C` locale's (English).
//! Reading text by a template is in [`mod@read`].

use rocklake_types::datum::Datum;
use rocklake_types::value::datetime::days_from_civil;
use rocklake_types::value::zone::session_zone;

use super::super::def::types::*;
use super::super::def::Library;
use super::calendar::{checked_date, iso_week_date, julian_day, split};

mod read;
use read::read;

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// Registers `to_char` of timestamps, `to_date` and `to_timestamp(text,
/// text)`.
pub(super) fn register(lib: &mut Library) {
    lib.function("to_char", [TIMESTAMP, TEXT], TEXT, |a, _, _| Ok(to_char(a)));
    lib.function("to_char", [TIMESTAMPTZ, TEXT], TEXT, |a, _, _| {
        Ok(to_char(a))
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
        // Local time in the session's zone.
        Ok(Datum::TimestampTz(session_zone().instant(micros)))
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

/// The zone a `timestamptz` is shown in by `to_char`: its offset (seconds
/// east) and abbreviation at the instant.
pub(super) struct ShownZone {
    east: i32,
    abbreviation: String,
}

/// `to_char(timestamp, template)`; with `zone` of a `timestamptz`, whose
/// local time `micros` is.
pub(super) fn format(micros: i64, zone: Option<&ShownZone>, template: &str) -> String {
    let ((year, month, day), time) = split(micros);
    let days = days_from_civil(year, i64::from(month), i64::from(day));
    let (iso_year, iso_week, iso_dow) = iso_week_date(days);
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
            Key::Julian => julian_day(days).to_string(),
            Key::Quarter => ((i64::from(month) - 1) / 3 + 1).to_string(),
            Key::Roman(case) => {
                let r = cased(ROMAN[month as usize - 1], case);
                if fill {
                    r
                } else {
                    format!("{r:<4}")
                }
            }
            Key::Zone(case) => zone.map_or_else(String::new, |z| cased(&z.abbreviation, case)),
            Key::ZoneHours | Key::Offset => {
                let east = zone.map_or(0, |z| z.east);
                let sign = if east < 0 { '-' } else { '+' };
                let (hours, minutes) = (east.abs() / 3600, east.abs() / 60 % 60);
                let mut text = if fill {
                    format!("{sign}{hours}")
                } else {
                    format!("{sign}{hours:02}")
                };
                if key == Key::Offset && minutes != 0 {
                    text.push_str(&format!(":{minutes:02}"));
                }
                text
            }
            Key::ZoneMinutes => format!("{:02}", zone.map_or(0, |z| z.east.abs() / 60 % 60)),
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

/// `to_char(timestamp or timestamptz, template)`: a `timestamptz` on the
/// clock of the session's zone.
pub(super) fn to_char(a: &[Datum]) -> Datum {
    let micros = match &a[0] {
        Datum::Timestamp(v) | Datum::TimestampTz(v) => *v,
        _ => return Datum::Null,
    };
    let template = a[1].as_str().unwrap_or_default();
    // An empty template gives NULL, as in PostgreSQL.
    if super::calendar::is_infinite_timestamp(micros) || template.is_empty() {
        return Datum::Null;
    }
    Datum::text(match &a[0] {
        Datum::TimestampTz(_) => {
            let session = session_zone();
            let zone = ShownZone {
                east: session.offset_at(micros),
                abbreviation: session.abbreviation_at(micros),
            };
            format(session.local(micros), Some(&zone), template)
        }
        _ => format(micros, None, template),
    })
}

#[cfg(test)]
mod tests {
    use super::super::calendar::join;
    use super::*;

    fn stamp(y: i64, m: u32, d: u32, h: i64, mi: i64, s: i64) -> i64 {
        join((y, m, d), ((h * 60 + mi) * 60 + s) * 1_000_000).unwrap()
    }

    #[test]
    fn templates_print_as_postgres_prints_them() {
        let t = stamp(2024, 3, 5, 14, 7, 9);
        assert_eq!(
            format(t, None, "YYYY-MM-DD HH24:MI:SS"),
            "2024-03-05 14:07:09"
        );
        assert_eq!(format(t, None, "FMMonth DDth, Yyyy"), "March 05th, 4024");
        assert_eq!(format(t, None, "Day|DY|RM"), "Tuesday  |TUE|III ");
        let utc = ShownZone {
            east: 0,
            abbreviation: "UTC".into(),
        };
        assert_eq!(format(t, Some(&utc), "\"Q\"Q TZ"), "Q1 UTC");
        let india = ShownZone {
            east: -(5 * 3600 + 1800),
            abbreviation: String::new(),
        };
        assert_eq!(format(t, Some(&india), "TZ|OF|TZH:TZM"), "|-05:30|-05:30");
        let bc = stamp(-43, 3, 15, 12, 0, 0);
        assert_eq!(format(bc, None, "YYYY BC CC"), "0044 BC -01");
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
