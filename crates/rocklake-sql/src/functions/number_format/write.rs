//! `to_char` of a number: the number prepared as PostgreSQL's
//! `NUM_processor` does for its type (rounded to the template's fraction
//! digits, multiplied by `V`, as Roman numerals or in scientific notation,
//! `#` when it does not fit), then written node by node: blanks or zeros
//! before the digits, the sign where the template anchors it or before the
//! first digit, separators, currency (a space in the `C` locale),
//! ordinal suffixes. Output stops where PostgreSQL's would (a template
//! that runs out of digits cuts it).

use super::pattern::{Key, Node, Template};

/// A number ready to be written: its digits (with `.`), sign and the
/// count of blank positions before them.
pub(super) struct Prepared {
    /// The digits and decimal point, or Roman numerals, or `#`s.
    pub(super) digits: String,
    /// `'-'`, `'+'`, or none (Roman numerals).
    pub(super) sign: Option<char>,
    /// Digit positions before the first digit.
    pub(super) blanks: usize,
    /// Digits before the decimal point in the template (after `V`).
    pub(super) pre: usize,
    /// Digits after it (after capping for floats).
    pub(super) post: usize,
}

/// `#` for every digit position, the decimal point kept.
pub(super) fn overflow(pre: usize, post: usize) -> String {
    let mut s: Vec<char> = "#".repeat(pre + post + 1).chars().collect();
    s[pre] = '.';
    s.into_iter().collect()
}

/// Roman numerals of 1..=3999, else 15 `#`.
pub(super) fn roman(n: i64) -> String {
    if !(1..=3999).contains(&n) {
        return "#".repeat(15);
    }
    let mut n = n;
    let mut out = String::new();
    for (value, letters) in [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ] {
        while n >= value {
            out.push_str(letters);
            n -= value;
        }
    }
    out
}

/// The output, which a NUL (a template that ran out of digits) ends.
struct Output {
    text: String,
    ended: bool,
}

impl Output {
    fn push(&mut self, c: char) {
        if c == '\0' {
            self.ended = true;
        } else if !self.ended {
            self.text.push(c);
        }
    }

    fn push_str(&mut self, s: &str) {
        if !self.ended {
            self.text.push_str(s);
        }
    }
}

/// The ordinal suffix of the integer `digits` (`st`, `nd`, `rd`, `th`).
fn ordinal(digits: &str, upper: bool) -> Result<&'static str, rocklake_types::SqlError> {
    let bytes = digits.as_bytes();
    let Some(&last) = bytes.last().filter(|b| b.is_ascii_digit()) else {
        return Err(rocklake_types::SqlError::new(
            rocklake_types::SqlState::INVALID_TEXT_REPRESENTATION,
            format!("\"{digits}\" is not a number"),
        ));
    };
    let teen = bytes.len() > 1 && bytes[bytes.len() - 2] == b'1';
    Ok(match (if teen { b'0' } else { last }, upper) {
        (b'1', false) => "st",
        (b'2', false) => "nd",
        (b'3', false) => "rd",
        (_, false) => "th",
        (b'1', true) => "ST",
        (b'2', true) => "ND",
        (b'3', true) => "RD",
        (_, true) => "TH",
    })
}

/// Writes `number` as `template` says.
pub(super) fn write(
    template: &Template,
    number: &Prepared,
) -> Result<String, rocklake_types::SqlError> {
    let t = template;
    let digits: Vec<char> = number.digits.chars().collect();
    let (mut pre, mut post, mut blanks, mut sign) =
        (number.pre, number.post, number.blanks, number.sign);
    let mut lsign = t.lsign;
    let fill = t.fill;
    let (mut anchored, mut brackets, mut plus, mut minus) =
        (t.sign_anchored, t.brackets, t.plus, t.minus);
    let zero = t.zero;
    let decimal = t.decimal;
    if t.roman {
        pre = 0;
        post = 0;
        lsign = 0;
        blanks = 0;
        sign = None;
        anchored = false;
        brackets = false;
        plus = false;
        minus = false;
    }
    let zero_start = t.zero_start.saturating_sub(1);
    let zero_end = t.zero_end;
    let mut sign_wrote;
    if plus || minus {
        sign_wrote = !plus || minus;
    } else {
        if sign != Some('-') && fill {
            brackets = false;
        }
        sign_wrote = sign == Some('+') && fill && !anchored;
        if lsign == -1 && pre == t.pre_lsign {
            lsign = 1;
        }
    }
    let mut num_count = (pre + post) as i64 - 1;
    // Fill mode: the last digit worth writing after the decimal point.
    let mut last_relevant: Option<usize> = None;
    if fill && decimal {
        if let Some(point) = digits.iter().position(|&c| c == '.') {
            let mut last = point;
            for (k, &c) in digits.iter().enumerate().skip(point + 1) {
                if c != '0' {
                    last = k;
                }
            }
            if zero_end > blanks {
                let k = (digits.len() - 1).min(zero_end - blanks);
                last = last.max(k);
            }
            last_relevant = Some(last);
        }
    }
    if !sign_wrote && blanks == 0 {
        num_count += 1;
    }
    let relevant_is_point = last_relevant.is_some_and(|k| digits.get(k) == Some(&'.'));
    let mut out = Output {
        text: String::new(),
        ended: false,
    };
    let mut p = 0usize;
    let mut num_curr = 0usize;
    let mut num_in = false;
    let at = |p: usize| digits.get(p).copied().unwrap_or('\0');
    let pre_decimal = |p: usize| !zero && p == 0 && digits.first() == Some(&'0') && post != 0;
    for node in &t.nodes {
        let key = match node {
            Node::Literal(c) => {
                out.push(*c);
                continue;
            }
            Node::Key(key) => *key,
        };
        match key {
            Key::Nine | Key::Zero | Key::Dot | Key::D => {
                if t.roman {
                    continue;
                }
                num_in = false;
                if !sign_wrote
                    && (num_curr >= blanks || (zero && zero_start == num_curr))
                    && (!pre_decimal(p) || relevant_is_point)
                {
                    if anchored {
                        if lsign == -1 {
                            out.push(if sign == Some('-') { '-' } else { '+' });
                            sign_wrote = true;
                        }
                    } else if brackets {
                        out.push(if sign == Some('+') { ' ' } else { '<' });
                        sign_wrote = true;
                    } else if sign == Some('+') {
                        if !fill {
                            out.push(' ');
                        }
                        sign_wrote = true;
                    } else if sign == Some('-') {
                        out.push('-');
                        sign_wrote = true;
                    }
                }
                if num_curr < blanks && (zero_start > num_curr || !zero) {
                    if !fill {
                        out.push(' ');
                    }
                } else if zero && num_curr < blanks && zero_start <= num_curr {
                    out.push('0');
                    num_in = true;
                } else {
                    if at(p) == '.' {
                        out.push('.');
                    } else if last_relevant.is_some_and(|k| p > k) && key != Key::Zero {
                    } else if pre_decimal(p) {
                        if !fill {
                            out.push(' ');
                        } else if relevant_is_point {
                            out.push('0');
                        }
                    } else {
                        out.push(at(p));
                        num_in = true;
                    }
                    if at(p) != '\0' {
                        p += 1;
                    }
                }
                let mut end = num_count + i64::from(blanks > 0) + i64::from(decimal);
                if last_relevant == Some(p) {
                    end = num_curr as i64;
                }
                if num_curr as i64 + 1 == end {
                    if sign_wrote && brackets {
                        out.push(if sign == Some('+') { ' ' } else { '>' });
                    } else if anchored && lsign == 1 {
                        out.push(if sign == Some('-') { '-' } else { '+' });
                    }
                }
                num_curr += 1;
            }
            Key::Comma | Key::G => {
                if num_in {
                    out.push(',');
                } else if !fill {
                    out.push(' ');
                }
            }
            Key::L => out.push(' '),
            Key::Rn { upper } => {
                let numerals = if upper {
                    number.digits.clone()
                } else {
                    number.digits.to_lowercase()
                };
                if fill {
                    out.push_str(&numerals);
                } else {
                    out.push_str(&format!("{numerals:>15}"));
                }
            }
            Key::Th { upper } => {
                if t.roman || digits.first() == Some(&'#') || sign == Some('-') || decimal {
                    continue;
                }
                out.push_str(ordinal(&number.digits, upper)?);
            }
            Key::Mi => {
                if sign == Some('-') {
                    out.push('-');
                } else if !fill {
                    out.push(' ');
                }
            }
            Key::Pl => {
                if sign == Some('+') {
                    out.push('+');
                } else if !fill {
                    out.push(' ');
                }
            }
            Key::Sg => out.push(sign.unwrap_or('\0')),
            Key::B | Key::C | Key::Eeee | Key::Fm | Key::Pr | Key::S | Key::Sp | Key::V => {}
        }
    }
    Ok(out.text)
}
