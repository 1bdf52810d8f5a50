//! A number template (`'9G999D99S'`) read into its nodes and what they
//! say together: digits before and after the decimal point, digits after
//! `V`, where zeros start and end, the sign's anchoring, the flags; with
//! PostgreSQL's errors (42601) for combinations it refuses. Keywords match
//! inside words, in their upper- or lower-case spelling only.

use rocklake_types::{SqlError, SqlState};

/// A template keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Key {
    Comma,
    Dot,
    Zero,
    Nine,
    B,
    C,
    D,
    Eeee,
    Fm,
    G,
    L,
    Mi,
    Pl,
    Pr,
    Rn { upper: bool },
    Sg,
    Sp,
    S,
    Th { upper: bool },
    V,
}

/// One node: a keyword or a literal character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Node {
    Key(Key),
    Literal(char),
}

/// The keywords in the order they are tried.
const KEYWORDS: &[(&str, Key)] = &[
    (",", Key::Comma),
    (".", Key::Dot),
    ("0", Key::Zero),
    ("9", Key::Nine),
    ("B", Key::B),
    ("C", Key::C),
    ("D", Key::D),
    ("EEEE", Key::Eeee),
    ("FM", Key::Fm),
    ("G", Key::G),
    ("L", Key::L),
    ("MI", Key::Mi),
    ("PL", Key::Pl),
    ("PR", Key::Pr),
    ("RN", Key::Rn { upper: true }),
    ("SG", Key::Sg),
    ("SP", Key::Sp),
    ("S", Key::S),
    ("TH", Key::Th { upper: true }),
    ("V", Key::V),
    ("b", Key::B),
    ("c", Key::C),
    ("d", Key::D),
    ("eeee", Key::Eeee),
    ("fm", Key::Fm),
    ("g", Key::G),
    ("l", Key::L),
    ("mi", Key::Mi),
    ("pl", Key::Pl),
    ("pr", Key::Pr),
    ("rn", Key::Rn { upper: false }),
    ("sg", Key::Sg),
    ("sp", Key::Sp),
    ("s", Key::S),
    ("th", Key::Th { upper: false }),
    ("v", Key::V),
];

/// What a template says as a whole.
#[derive(Debug, Clone, Default)]
pub(super) struct Template {
    pub(super) nodes: Vec<Node>,
    /// Digits before the decimal point.
    pub(super) pre: usize,
    /// Digits after it.
    pub(super) post: usize,
    /// Digits after `V`.
    pub(super) multi: usize,
    /// Where zeros start (1-based digit position; 0: no `0`).
    pub(super) zero_start: usize,
    /// Where they end.
    pub(super) zero_end: usize,
    /// `S` before the number (-1), after it (1), none (0).
    pub(super) lsign: i8,
    /// Digits before an `S` before the decimal point.
    pub(super) pre_lsign: usize,
    pub(super) zero: bool,
    pub(super) blank: bool,
    pub(super) decimal: bool,
    pub(super) fill: bool,
    pub(super) sign_anchored: bool,
    pub(super) minus: bool,
    pub(super) plus: bool,
    pub(super) brackets: bool,
    pub(super) roman: bool,
    pub(super) multiply: bool,
    pub(super) exponent: bool,
}

fn refused(message: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, message)
}

impl Template {
    /// Reads `format`.
    pub(super) fn parse(format: &str) -> Result<Template, SqlError> {
        let mut t = Template::default();
        let mut rest = format;
        while let Some(c) = rest.chars().next() {
            if let Some(&(spelled, key)) = KEYWORDS.iter().find(|(s, _)| rest.starts_with(s)) {
                rest = &rest[spelled.len()..];
                t.nodes.push(Node::Key(key));
                t.take(key)?;
                continue;
            }
            if c == '"' {
                let mut chars = rest[1..].char_indices();
                let mut end = rest.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '"' => {
                            end = i + 2;
                            break;
                        }
                        '\\' => match chars.next() {
                            Some((_, escaped)) => t.nodes.push(Node::Literal(escaped)),
                            None => t.nodes.push(Node::Literal('\\')),
                        },
                        c => t.nodes.push(Node::Literal(c)),
                    }
                }
                rest = &rest[end.min(rest.len())..];
                continue;
            }
            if c == '\\' && rest[1..].starts_with('"') {
                t.nodes.push(Node::Literal('"'));
                rest = &rest[2..];
                continue;
            }
            t.nodes.push(Node::Literal(c));
            rest = &rest[c.len_utf8()..];
        }
        Ok(t)
    }

    /// What keyword `key` adds, after those before it.
    fn take(&mut self, key: Key) -> Result<(), SqlError> {
        if self.exponent && key != Key::Eeee {
            return Err(refused("\"EEEE\" must be the last pattern used"));
        }
        match key {
            Key::Nine | Key::Zero => {
                if self.brackets {
                    return Err(refused(if key == Key::Nine {
                        "\"9\" must be ahead of \"PR\""
                    } else {
                        "\"0\" must be ahead of \"PR\""
                    }));
                }
                if key == Key::Zero && !self.zero && !self.decimal {
                    self.zero = true;
                    self.zero_start = self.pre + 1;
                }
                if key == Key::Nine && self.multiply {
                    self.multi += 1;
                } else if self.decimal {
                    self.post += 1;
                } else {
                    self.pre += 1;
                }
                if key == Key::Zero {
                    self.zero_end = self.pre + self.post;
                }
            }
            Key::B => {
                if self.pre == 0 && self.post == 0 && !self.zero {
                    self.blank = true;
                }
            }
            Key::D | Key::Dot => {
                if self.decimal {
                    return Err(refused("multiple decimal points"));
                }
                if self.multiply {
                    return Err(refused("cannot use \"V\" and decimal point together"));
                }
                self.decimal = true;
            }
            Key::Fm => self.fill = true,
            Key::S => {
                if self.sign_anchored {
                    return Err(refused("cannot use \"S\" twice"));
                }
                if self.plus || self.minus || self.brackets {
                    return Err(refused(
                        "cannot use \"S\" and \"PL\"/\"MI\"/\"SG\"/\"PR\" together",
                    ));
                }
                if !self.decimal {
                    self.lsign = -1;
                    self.pre_lsign = self.pre;
                    self.sign_anchored = true;
                } else if self.lsign == 0 {
                    self.lsign = 1;
                    self.sign_anchored = true;
                }
            }
            Key::Mi | Key::Pl | Key::Sg => {
                if self.sign_anchored {
                    return Err(refused(match key {
                        Key::Mi => "cannot use \"S\" and \"MI\" together",
                        Key::Pl => "cannot use \"S\" and \"PL\" together",
                        _ => "cannot use \"S\" and \"SG\" together",
                    }));
                }
                self.minus |= matches!(key, Key::Mi | Key::Sg);
                self.plus |= matches!(key, Key::Pl | Key::Sg);
            }
            Key::Pr => {
                if self.sign_anchored || self.plus || self.minus {
                    return Err(refused(
                        "cannot use \"PR\" and \"S\"/\"PL\"/\"MI\"/\"SG\" together",
                    ));
                }
                self.brackets = true;
            }
            Key::Rn { .. } => self.roman = true,
            Key::V => {
                if self.decimal {
                    return Err(refused("cannot use \"V\" and decimal point together"));
                }
                self.multiply = true;
            }
            Key::Eeee => {
                if self.exponent {
                    return Err(refused("cannot use \"EEEE\" twice"));
                }
                if self.blank
                    || self.fill
                    || self.sign_anchored
                    || self.brackets
                    || self.minus
                    || self.plus
                    || self.roman
                    || self.multiply
                {
                    return Err(refused("\"EEEE\" is incompatible with other formats"));
                }
                self.exponent = true;
            }
            Key::Comma | Key::C | Key::G | Key::L | Key::Sp | Key::Th { .. } => {}
        }
        Ok(())
    }
}
