//! The text forms of arrays: `array_out` / `array_in` (`{1,2,NULL}`,
//! `{"a b","x\"y"}`) for one-dimensional arrays of any element type, and the
//! space-separated `int2vector` / `oidvector` forms.

use crate::datum::{Datum, PgType};
use crate::error::SqlError;
use crate::sqlstate::SqlState;

use super::text::{format_text, parse_text};

/// `array_out`: `{e1,e2,...}`, each element in its type's text form, quoted
/// when PostgreSQL quotes it (empty, `NULL`-like, or holding `{},"\` or
/// white space), NULL elements as `NULL`.
pub fn format_array(elements: &[Datum]) -> String {
    let mut out = String::from("{");
    for (i, element) in elements.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match format_text(element) {
            None => out.push_str("NULL"),
            Some(text) if needs_quotes(&text) => {
                out.push('"');
                for c in text.chars() {
                    if c == '"' || c == '\\' {
                        out.push('\\');
                    }
                    out.push(c);
                }
                out.push('"');
            }
            Some(text) => out.push_str(&text),
        }
    }
    out.push('}');
    out
}

fn needs_quotes(text: &str) -> bool {
    text.is_empty()
        || text.eq_ignore_ascii_case("null")
        || text
            .chars()
            .any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || c.is_ascii_whitespace())
}

/// `int2vectorout` / `oidvectorout`: the elements separated by spaces.
pub fn format_vector(elements: &[Datum]) -> String {
    let parts: Vec<String> = elements.iter().filter_map(format_text).collect();
    parts.join(" ")
}

fn malformed(s: &str, detail: &str) -> SqlError {
    SqlError::new(
        SqlState::INVALID_TEXT_REPRESENTATION,
        format!("malformed array literal: \"{s}\""),
    )
    .with_detail(detail)
}

/// `array_in` for a one-dimensional array of `element` values. Multi-dimensional
/// arrays and explicit bounds (`[0:1]={...}`) are refused with 0A000.
pub fn parse_array(s: &str, element: &PgType) -> Result<Datum, SqlError> {
    let trimmed = s.trim();
    if trimmed.starts_with('[') {
        return Err(SqlError::unsupported(format!(
            "array literals with explicit bounds are not supported: \"{s}\""
        )));
    }
    let Some(inner) = trimmed.strip_prefix('{') else {
        return Err(malformed(
            s,
            "Array value must start with \"{\" or dimension information.",
        ));
    };
    let mut chars = inner.chars().peekable();
    let mut elements = Vec::new();
    loop {
        while chars.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            chars.next();
        }
        match chars.peek() {
            Some('}') if elements.is_empty() => {
                chars.next();
                break;
            }
            Some('{') => {
                return Err(SqlError::unsupported(format!(
                    "multidimensional arrays are not supported: \"{s}\""
                )))
            }
            None => return Err(malformed(s, "Unexpected end of input.")),
            _ => {}
        }
        let (text, quoted) =
            read_element(&mut chars).ok_or_else(|| malformed(s, "Unexpected end of input."))?;
        if text.is_empty() && !quoted {
            return Err(malformed(s, "Unexpected \",\" character."));
        }
        elements.push(if !quoted && text.eq_ignore_ascii_case("null") {
            Datum::Null
        } else {
            parse_text(&text, element)?
        });
        match chars.next() {
            Some(',') => continue,
            Some('}') => break,
            _ => return Err(malformed(s, "Unexpected array element.")),
        }
    }
    if chars.any(|c| !c.is_ascii_whitespace()) {
        return Err(malformed(s, "Junk after closing right brace."));
    }
    Ok(Datum::array(elements))
}

/// One element's text (unescaped) and whether any of it was quoted; stops
/// before the `,` or `}` that ends it. `None` at the end of input.
fn read_element(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<(String, bool)> {
    let mut text = String::new();
    let mut quoted = false;
    let mut in_quotes = false;
    // Unquoted trailing white space is dropped, quoted is kept.
    let mut kept_len = 0;
    loop {
        let c = *chars.peek()?;
        match c {
            '"' => {
                chars.next();
                in_quotes = !in_quotes;
                quoted = true;
                kept_len = text.len();
            }
            '\\' => {
                chars.next();
                text.push(chars.next()?);
                kept_len = text.len();
            }
            ',' | '}' if !in_quotes => break,
            _ => {
                chars.next();
                text.push(c);
                if in_quotes || !c.is_ascii_whitespace() {
                    kept_len = text.len();
                }
            }
        }
    }
    text.truncate(kept_len);
    Some((text, quoted))
}

/// `int2vectorin` / `oidvectorin`: elements separated by white space.
pub fn parse_vector(s: &str, element: &PgType) -> Result<Datum, SqlError> {
    let elements = s
        .split_ascii_whitespace()
        .map(|part| parse_text(part, element))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Datum::Vector(elements.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn texts(items: &[Option<&str>]) -> Datum {
        Datum::array(
            items
                .iter()
                .map(|i| i.map_or(Datum::Null, Datum::text))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn formats_like_array_out() {
        assert_eq!(format_array(&[]), "{}");
        assert_eq!(format_array(&[Datum::Int2(1), Datum::Int2(-2)]), "{1,-2}");
        let Datum::Array(items) = texts(&[
            Some("a"),
            None,
            Some(""),
            Some("NULL"),
            Some("a b"),
            Some("x\"y\\"),
        ]) else {
            unreachable!()
        };
        assert_eq!(format_array(&items), r#"{a,NULL,"","NULL","a b","x\"y\\"}"#);
        assert_eq!(format_vector(&[Datum::Int2(1), Datum::Int2(3)]), "1 3");
    }

    #[test]
    fn parses_like_array_in() {
        assert_eq!(
            parse_array(r#" { a , "b c" ,NULL, "NULL" , x\,y } "#, &PgType::Text).unwrap(),
            texts(&[Some("a"), Some("b c"), None, Some("NULL"), Some("x,y")])
        );
        assert_eq!(
            parse_array("{}", &PgType::Int4).unwrap(),
            Datum::array(vec![])
        );
        assert_eq!(
            parse_array("{1,2}", &PgType::Int4).unwrap(),
            Datum::array(vec![Datum::Int4(1), Datum::Int4(2)])
        );
        for bad in ["1,2", "{1,2", "{1,2}x", "{1,,2}", "{"] {
            assert_eq!(
                parse_array(bad, &PgType::Int4).unwrap_err().code,
                "22P02",
                "{bad}"
            );
        }
        assert_eq!(
            parse_array("{{1}}", &PgType::Int4).unwrap_err().code,
            "0A000"
        );
        assert_eq!(parse_array("{x}", &PgType::Int4).unwrap_err().code, "22P02");
        assert_eq!(
            parse_vector(" 1  2 ", &PgType::Int2).unwrap(),
            Datum::Vector(vec![Datum::Int2(1), Datum::Int2(2)].into())
        );
    }

    proptest! {
        #[test]
        fn text_arrays_round_trip(items in proptest::collection::vec(proptest::option::of(".{0,6}"), 0..6)) {
            let datum = Datum::array(items.iter().map(|i| i.as_deref().map_or(Datum::Null, Datum::text)).collect::<Vec<_>>());
            let Datum::Array(elements) = &datum else { unreachable!() };
            let text = format_array(elements);
            prop_assert_eq!(parse_array(&text, &PgType::Text).unwrap(), datum);
        }
    }
}
