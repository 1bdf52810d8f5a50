//! PostgreSQL's regular expressions (advanced REs, "AREs") in the syntax
//! of Rust's `regex` crate, with PostgreSQL's flags.
//!
//! Escapes that differ are rewritten (`\m` `\M` `\y` `\Y` `\Z` word and
//! string constraints, `\b` backspace, `\B` backslash, `\e`, `\x`/`\u`/`\U`
//! code points, `\c` controls, octal `\0`), bracket expressions keep
//! PostgreSQL's meaning (`[` and `&&`-like pairs are literal there), a `{`
//! that starts no bound is literal, and `.` matches a newline unless a
//! newline-sensitive flag is given. What Rust's engine cannot do —
//! back-references, lookahead and lookbehind, collating elements and
//! equivalence classes, basic REs — is refused with 0A000, never matched
//! differently.

use rocklake_types::{SqlError, SqlState};

/// The options of one regular expression (PostgreSQL's flag letters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct Flags {
    /// `i`: case-insensitive.
    pub case_insensitive: bool,
    /// `n`/`m` or `p`: `.` and `[^...]` do not match a newline.
    pub dot_excludes_newline: bool,
    /// `n`/`m` or `w`: `^` and `$` match at line starts and ends.
    pub line_anchors: bool,
    /// `x`: whitespace and `#` comments are ignored.
    pub expanded: bool,
    /// `q`: the pattern is a literal string.
    pub literal: bool,
    /// `g`: every match (the functions that take it), not only the first.
    pub global: bool,
}

fn invalid_option(c: char) -> SqlError {
    SqlError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("invalid regular expression option: \"{c}\""),
    )
}

fn unsupported(what: &str) -> SqlError {
    SqlError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!("{what} in regular expressions are not supported by RockLake"),
    )
    .with_hint("RockLake's regular expression engine has no backtracking; see docs/conformance.md.")
}

/// An invalid pattern, as PostgreSQL reports it.
pub(crate) fn invalid_pattern(message: &str) -> SqlError {
    SqlError::new(
        SqlState::INVALID_REGULAR_EXPRESSION,
        format!("invalid regular expression: {message}"),
    )
}

impl Flags {
    /// Reads a flags argument (`'gi'`, ...).
    pub fn parse(text: &str) -> Result<Flags, SqlError> {
        let mut flags = Flags::default();
        for c in text.chars() {
            flags.apply(c, true)?;
        }
        Ok(flags)
    }

    /// Applies one flag letter; `g` only where `global_allowed`.
    fn apply(&mut self, c: char, global_allowed: bool) -> Result<(), SqlError> {
        match c {
            'g' if global_allowed => self.global = true,
            'i' => self.case_insensitive = true,
            'c' => self.case_insensitive = false,
            'n' | 'm' => {
                self.dot_excludes_newline = true;
                self.line_anchors = true;
            }
            'p' => {
                self.dot_excludes_newline = true;
                self.line_anchors = false;
            }
            'w' => {
                self.dot_excludes_newline = false;
                self.line_anchors = true;
            }
            's' => {
                self.dot_excludes_newline = false;
                self.line_anchors = false;
            }
            'x' => self.expanded = true,
            'q' => self.literal = true,
            't' | 'e' => {}
            'b' => return Err(unsupported("basic regular expressions (flag b)")),
            other => return Err(invalid_option(other)),
        }
        Ok(())
    }
}

/// `pattern` with `flags` in Rust's syntax.
pub(crate) fn to_rust(pattern: &str, mut flags: Flags) -> Result<String, SqlError> {
    let mut body = pattern;
    // Directors: `***=` (the rest is literal) and `***:` (an ARE).
    if let Some(rest) = body.strip_prefix("***=") {
        body = rest;
        flags.literal = true;
    } else if let Some(rest) = body.strip_prefix("***:") {
        body = rest;
    }
    // Embedded options at the start: `(?flags)`.
    if !flags.literal {
        if let Some(rest) = body.strip_prefix("(?") {
            if let Some(close) = rest.find(')') {
                let letters = &rest[..close];
                if !letters.is_empty() && letters.chars().all(|c| c.is_ascii_alphabetic()) {
                    for c in letters.chars() {
                        flags
                            .apply(c, false)
                            .map_err(|_| invalid_pattern("invalid embedded option"))?;
                    }
                    body = &rest[close + 1..];
                }
            }
        }
    }
    let mut out = String::new();
    out.push_str("(?");
    if !flags.dot_excludes_newline {
        out.push('s');
    }
    if flags.line_anchors {
        out.push('m');
    }
    if flags.case_insensitive {
        out.push('i');
    }
    if flags.expanded && !flags.literal {
        out.push('x');
    }
    if out.len() == 2 {
        out.clear();
    } else {
        out.push(')');
    }
    if flags.literal {
        out.push_str(&regex_syntax::escape(body));
        return Ok(out);
    }
    Translator {
        chars: body.chars().collect(),
        at: 0,
        out,
        flags,
    }
    .run()
}

struct Translator {
    chars: Vec<char>,
    at: usize,
    out: String,
    flags: Flags,
}

impl Translator {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn run(mut self) -> Result<String, SqlError> {
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '\\' => self.escape(false)?,
                '[' => self.bracket()?,
                '(' if self.peek(0) == Some('?') => self.group_options()?,
                '{' => self.brace(),
                '}' => self.out.push_str("\\}"),
                '.' | '^' | '$' | '*' | '+' | '?' | '|' | '(' | ')' => self.out.push(c),
                c => self.literal(c),
            }
        }
        Ok(self.out)
    }

    fn literal(&mut self, c: char) {
        if regex_syntax::is_meta_character(c) || (!self.flags.expanded && c == '#') {
            self.out.push('\\');
        }
        if !self.flags.expanded && c.is_whitespace() {
            // Kept literally even where Rust's `x` mode is off: no change.
            self.out.push(c);
            return;
        }
        self.out.push(c);
    }

    /// `(?:`, `(?#comment)`; lookaround is refused.
    fn group_options(&mut self) -> Result<(), SqlError> {
        match (self.peek(1), self.peek(2)) {
            (Some(':'), _) => {
                self.out.push_str("(?:");
                self.at += 2;
            }
            (Some('#'), _) => {
                while let Some(c) = self.peek(0) {
                    self.at += 1;
                    if c == ')' {
                        break;
                    }
                }
            }
            (Some('=' | '!'), _) | (Some('<'), Some('=' | '!')) => {
                return Err(unsupported("lookahead and lookbehind constraints"))
            }
            _ => return Err(invalid_pattern("quantifier operand invalid")),
        }
        Ok(())
    }

    /// `{m}`, `{m,}`, `{m,n}`; any other `{` is a literal.
    fn brace(&mut self) {
        let mut end = self.at;
        while self
            .chars
            .get(end)
            .is_some_and(|c| c.is_ascii_digit() || *c == ',')
        {
            end += 1;
        }
        let is_bound = end > self.at
            && self.chars[self.at].is_ascii_digit()
            && self.chars.get(end) == Some(&'}');
        if is_bound {
            self.out.push('{');
            self.out.extend(&self.chars[self.at..=end]);
            self.at = end + 1;
        } else {
            self.out.push_str("\\{");
        }
    }

    /// An escape after `\` (inside a bracket expression when `in_bracket`).
    fn escape(&mut self, in_bracket: bool) -> Result<(), SqlError> {
        let Some(c) = self.peek(0) else {
            return Err(invalid_pattern("invalid escape \\ sequence"));
        };
        self.at += 1;
        let code = |out: &mut String, value: u32| {
            out.push_str(&format!("\\x{{{value:X}}}"));
        };
        match c {
            '1'..='9' if !in_bracket => return Err(unsupported("back-references")),
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => {
                self.out.push('\\');
                self.out.push(c);
            }
            'm' | 'M' | 'y' | 'Y' | 'A' | 'Z' if in_bracket => {
                return Err(invalid_pattern("invalid escape \\ sequence"))
            }
            'm' => self.out.push_str("\\b{start}"),
            'M' => self.out.push_str("\\b{end}"),
            'y' => self.out.push_str("\\b"),
            'Y' => self.out.push_str("\\B"),
            'A' => self.out.push_str("\\A"),
            'Z' => self.out.push_str("\\z"),
            'a' => code(&mut self.out, 7),
            'b' => code(&mut self.out, 8),
            'B' => self.out.push_str("\\\\"),
            'e' => code(&mut self.out, 0x1B),
            'f' => code(&mut self.out, 0x0C),
            'n' => code(&mut self.out, 0x0A),
            'r' => code(&mut self.out, 0x0D),
            't' => code(&mut self.out, 0x09),
            'v' => code(&mut self.out, 0x0B),
            'c' => {
                let Some(x) = self.peek(0) else {
                    return Err(invalid_pattern("invalid escape \\ sequence"));
                };
                self.at += 1;
                code(&mut self.out, x as u32 & 0x1F);
            }
            'x' | 'u' | 'U' | '0' => {
                let (radix, most) = match c {
                    'x' => (16, 8),
                    'u' => (16, 4),
                    'U' => (16, 8),
                    _ => (8, 2),
                };
                let mut value: u32 = 0;
                let mut digits = 0;
                while digits < most {
                    let Some(d) = self.peek(0).and_then(|d| d.to_digit(radix)) else {
                        break;
                    };
                    value = value * radix + d;
                    digits += 1;
                    self.at += 1;
                }
                if (c == 'u' && digits != 4) || (c == 'U' && digits != 8) {
                    return Err(invalid_pattern("invalid escape \\ sequence"));
                }
                if char::from_u32(value).is_none() {
                    return Err(invalid_pattern("invalid escape \\ sequence"));
                }
                code(&mut self.out, value);
            }
            c if c.is_ascii_alphanumeric() => {
                return Err(invalid_pattern("invalid escape \\ sequence"))
            }
            c => {
                self.out.push('\\');
                self.out.push(c);
            }
        }
        Ok(())
    }

    /// A bracket expression after `[`.
    fn bracket(&mut self) -> Result<(), SqlError> {
        self.out.push('[');
        if self.peek(0) == Some('^') {
            self.out.push('^');
            self.at += 1;
            if self.flags.dot_excludes_newline {
                self.out.push_str("\\n");
            }
        }
        let mut first = true;
        loop {
            let Some(c) = self.peek(0) else {
                return Err(invalid_pattern("brackets [] not balanced"));
            };
            self.at += 1;
            match c {
                ']' if !first => break,
                ']' => self.out.push_str("\\]"),
                '[' => match self.peek(0) {
                    Some(':') => {
                        let close = (self.at..self.chars.len().saturating_sub(1))
                            .find(|&i| self.chars[i] == ':' && self.chars[i + 1] == ']')
                            .ok_or_else(|| invalid_pattern("brackets [] not balanced"))?;
                        self.out.push('[');
                        self.out.extend(&self.chars[self.at..close + 2]);
                        self.at = close + 2;
                    }
                    Some('.' | '=') => {
                        return Err(unsupported("collating elements and equivalence classes"))
                    }
                    _ => self.out.push_str("\\["),
                },
                '\\' => self.escape(true)?,
                '&' | '~' => {
                    self.out.push('\\');
                    self.out.push(c);
                }
                '-' if self.peek(0) == Some('-') => self.out.push_str("\\-"),
                c => self.out.push(c),
            }
            first = false;
        }
        self.out.push(']');
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rust(pattern: &str) -> String {
        to_rust(pattern, Flags::default()).unwrap()
    }

    #[test]
    fn postgres_escapes_become_rust_ones() {
        assert_eq!(rust(r"\mfoo\M"), r"(?s)\b{start}foo\b{end}");
        assert_eq!(rust(r"a\yb\Z"), r"(?s)a\bb\z");
        assert_eq!(rust(r"\B"), r"(?s)\\");
        assert_eq!(rust(r"\u00e9"), r"(?s)\x{E9}");
        assert_eq!(rust("a{b"), r"(?s)a\{b");
        assert_eq!(rust("a{2,3}"), "(?s)a{2,3}");
        assert_eq!(rust("[[a&&b]"), r"(?s)[\[a\&\&b]");
        assert_eq!(rust("[]a]"), r"(?s)[\]a]");
        assert_eq!(rust("[[:alpha:]]"), "(?s)[[:alpha:]]");
    }

    #[test]
    fn what_rust_cannot_match_is_refused() {
        for pattern in [r"(a)\1", "a(?=b)", "(?<!a)b", "[[.a.]]"] {
            let err = to_rust(pattern, Flags::default()).unwrap_err();
            assert_eq!(err.code, SqlState::FEATURE_NOT_SUPPORTED, "{pattern}");
        }
    }

    #[test]
    fn flags_read_like_postgres() {
        let flags = Flags::parse("gin").unwrap();
        assert!(flags.global && flags.case_insensitive && flags.line_anchors);
        assert_eq!(rust_with("a.b", "n"), "(?m)a.b");
        assert_eq!(rust_with("[^a]", "p"), r"[^\na]");
        assert!(Flags::parse("z").is_err());
        assert_eq!(rust("(?i)abc"), "(?si)abc");
        assert_eq!(rust("***=a.b"), r"(?s)a\.b");
    }

    fn rust_with(pattern: &str, flags: &str) -> String {
        to_rust(pattern, Flags::parse(flags).unwrap()).unwrap()
    }
}
