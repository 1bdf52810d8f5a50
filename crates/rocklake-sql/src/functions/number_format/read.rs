//! `to_number(text, template)`: the input read against the template as
//! PostgreSQL 15 reads it: each digit position takes one character, signs
//! where the template allows them (`S`, `MI`, `PL`, `SG`, `PR`'s `<`),
//! separators skipped, literal text skipping one character; the digits
//! read become a `numeric` of the template's precision and scale (`V`
//! dividing by its power of ten).

use rocklake_types::datum::Datum;
use rocklake_types::value::numeric::{self, math};
use rocklake_types::{SqlError, SqlState};

use super::pattern::{Key, Node, Template};

/// What has been read: the sign and digits, digits before and after the
/// decimal point, whether the point was read.
struct Reading {
    sign: u8,
    digits: Vec<u8>,
    before: usize,
    after: usize,
    point: bool,
}

/// Skips up to `count` characters that are not digits, points, commas or
/// signs.
fn eat(input: &[u8], pos: &mut usize, count: usize) {
    for _ in 0..count {
        match input.get(*pos) {
            Some(c) if !b"0123456789.,+-".contains(c) => *pos += char_len(*c),
            _ => break,
        }
    }
}

fn char_len(first: u8) -> usize {
    match first {
        0..=0x7f => 1,
        0x80..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// `to_number`.
pub(super) fn to_number(input: &str, format: &str) -> Result<Datum, SqlError> {
    if format.is_empty() {
        return Ok(Datum::Null);
    }
    let t = Template::parse(format)?;
    if t.exponent {
        return Err(SqlError::unsupported("\"EEEE\" not supported for input"));
    }
    if t.roman {
        return Err(SqlError::unsupported("\"RN\" not supported for input"));
    }
    let b = input.as_bytes();
    let mut pos = 0usize;
    let mut r = Reading {
        sign: b' ',
        digits: Vec::new(),
        before: 0,
        after: 0,
        point: false,
    };
    for node in &t.nodes {
        if pos >= b.len() {
            break;
        }
        let key = match node {
            Node::Literal(_) => {
                pos += char_len(b[pos]);
                continue;
            }
            Node::Key(key) => *key,
        };
        match key {
            Key::Nine | Key::Zero | Key::Dot | Key::D => {
                read_digit(&t, key, b, &mut pos, &mut r);
                pos += 1;
            }
            Key::Comma | Key::G if !t.fill && b.get(pos) == Some(&b',') => pos += 1,
            Key::L => eat(b, &mut pos, 1),
            Key::Th { .. } if !t.decimal => eat(b, &mut pos, 2),
            Key::Mi | Key::Pl | Key::Sg => {
                let wanted: &[u8] = match key {
                    Key::Mi => b"-",
                    Key::Pl => b"+",
                    _ => b"-+",
                };
                match b.get(pos) {
                    Some(c) if wanted.contains(c) => {
                        r.sign = *c;
                        pos += 1;
                    }
                    _ => eat(b, &mut pos, 1),
                }
            }
            _ => {}
        }
    }
    finish(&t, r)
}

/// One digit position of the template.
fn read_digit(t: &Template, key: Key, b: &[u8], pos: &mut usize, r: &mut Reading) {
    if *pos >= b.len() {
        return;
    }
    if b[*pos] == b' ' {
        *pos += 1;
    }
    if *pos >= b.len() {
        return;
    }
    let digit_key = matches!(key, Key::Nine | Key::Zero);
    if r.sign == b' ' && digit_key && r.before + r.after == 0 {
        if t.sign_anchored && t.lsign == -1 {
            if matches!(b[*pos], b'-' | b'+') {
                r.sign = b[*pos];
                *pos += 1;
            }
        } else if b[*pos] == b'-' || (t.brackets && b[*pos] == b'<') {
            r.sign = b'-';
            *pos += 1;
        } else if b[*pos] == b'+' {
            r.sign = b'+';
            *pos += 1;
        }
    }
    if *pos >= b.len() {
        return;
    }
    let mut read = false;
    if b[*pos].is_ascii_digit() {
        if r.point && r.after == t.post {
            return;
        }
        r.digits.push(b[*pos]);
        if r.point {
            r.after += 1;
        } else {
            r.before += 1;
        }
        read = true;
    } else if t.decimal && !r.point && b[*pos] == b'.' {
        r.digits.push(b'.');
        r.point = true;
        read = true;
    }
    if *pos >= b.len() || r.sign != b' ' || r.before + r.after == 0 {
        return;
    }
    if t.sign_anchored && read && *pos + 1 < b.len() && !b[*pos + 1].is_ascii_digit() {
        if matches!(b[*pos + 1], b'-' | b'+') {
            r.sign = b[*pos + 1];
            *pos += 1;
        }
    } else if !read && !t.sign_anchored && (t.plus || t.minus) && matches!(b[*pos], b'-' | b'+') {
        r.sign = b[*pos];
    }
}

/// The number read, of the template's precision and scale.
fn finish(t: &Template, mut r: Reading) -> Result<Datum, SqlError> {
    if r.digits.last() == Some(&b'.') {
        r.digits.pop();
    }
    let body = String::from_utf8_lossy(&r.digits).to_string();
    let shown = format!("{}{body}", r.sign as char);
    let text = match r.sign {
        b'-' => format!("-{body}"),
        _ => body.clone(),
    };
    let invalid = || {
        SqlError::new(
            SqlState::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type numeric: \"{shown}\""),
        )
    };
    if body.is_empty() || body == "." {
        return Err(invalid());
    }
    let value = numeric::parse(&text).ok_or_else(invalid)?;
    let scale = r.after;
    let precision = t.pre + t.multi + r.after;
    let mut value = math::round_to(&value, scale as i32, math::Rounding::HalfAwayFromZero)?;
    let integer_digits = value
        .trim_start_matches('-')
        .split('.')
        .next()
        .unwrap_or("")
        .trim_start_matches('0')
        .len();
    if integer_digits > precision.saturating_sub(scale) {
        return Err(SqlError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            "numeric field overflow",
        ));
    }
    if t.multiply {
        // PostgreSQL 15 multiplies by 10^-multi rounded to 16 digits.
        let factor = match t.multi {
            0 => "1".to_string(),
            17.. => "0".to_string(),
            m => format!("0.{}1", "0".repeat(m - 1)),
        };
        let factor = math::round_to(&factor, 16, math::Rounding::HalfAwayFromZero)?;
        value = numeric::arith(&value, &factor, '*')?;
    }
    if numeric::is_zero(&value) {
        value = value.trim_start_matches('-').to_string();
    }
    Ok(Datum::Numeric(value))
}
