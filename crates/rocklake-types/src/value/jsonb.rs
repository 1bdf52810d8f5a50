//! The `jsonb` type: a JSON document decomposed as PostgreSQL's `jsonb`
//! holds it. On input an object keeps the last value of a key given twice
//! and orders its keys by length, then bytes; numbers become `numeric`
//! (`1e2` is `100`, `1.50` keeps its scale); strings are unescaped (and
//! `\u0000` refused, as text cannot hold it). Output is PostgreSQL's
//! `jsonb_out`: `{"a": 1, "b": [1, 2]}`. [`Datum::Jsonb`] keeps that
//! output text, which [`parse`] reads back.
//!
//! Parsing is serde_json's: [`node`] splits one level of a document into
//! the input text of its parts (`RawValue`), so the `json` type's
//! functions, which answer with the text as it was written, use it too.
//!
//! [`Datum::Jsonb`]: crate::datum::Datum::Jsonb

use std::cmp::Ordering;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::json::invalid;
use super::numeric;
use crate::error::SqlError;
use crate::sqlstate::SqlState;

/// A JSON value as `jsonb` holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Jsonb {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, as `numeric`'s canonical text (`100`, `1.50`).
    Number(String),
    /// A string, unescaped.
    String(String),
    /// An array.
    Array(Vec<Jsonb>),
    /// An object: unique keys ordered by length, then bytes.
    Object(Vec<(String, Jsonb)>),
}

/// One level of a JSON document: its parts as their input text.
pub enum Node<'a> {
    /// An object's pairs in input order (a key may come twice).
    Object(Vec<(String, &'a RawValue)>),
    /// An array's elements.
    Array(Vec<&'a RawValue>),
    /// A string, unescaped.
    String(String),
    /// A number as written.
    Number(&'a str),
    /// `true` / `false`.
    Bool(bool),
    /// `null`.
    Null,
}

/// Splits the JSON text `text` into its top level (22P02 for text that is
/// not one JSON document; 22P05 for a string holding `\u0000`).
pub fn node(text: &str) -> Result<Node<'_>, SqlError> {
    let parsed = |e: serde_json::Error| invalid(&e.to_string());
    let text = text.trim_matches([' ', '\t', '\n', '\r']);
    Ok(match text.as_bytes().first() {
        Some(b'{') => Node::Object(serde_json::from_str::<Pairs>(text).map_err(parsed)?.0),
        Some(b'[') => Node::Array(serde_json::from_str(text).map_err(parsed)?),
        Some(b'"') => {
            let s: String = serde_json::from_str(text).map_err(parsed)?;
            if s.contains('\0') {
                return Err(SqlError::new(
                    SqlState::UNTRANSLATABLE_CHARACTER,
                    "unsupported Unicode escape sequence",
                )
                .with_detail("\\u0000 cannot be converted to text."));
            }
            Node::String(s)
        }
        Some(b't' | b'f' | b'n') => match serde_json::from_str::<Option<bool>>(text) {
            Ok(Some(b)) => Node::Bool(b),
            Ok(None) => Node::Null,
            Err(e) => return Err(parsed(e)),
        },
        _ => {
            // Checked as JSON, then read as the number it spells.
            serde_json::from_str::<&RawValue>(text).map_err(parsed)?;
            Node::Number(text)
        }
    })
}

/// An object's pairs in input order, duplicates kept.
struct Pairs<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Pairs<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PairsVisitor;
        impl<'de> Visitor<'de> for PairsVisitor {
            type Value = Pairs<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Pairs<'de>, A::Error> {
                let mut pairs = Vec::new();
                while let Some(pair) = map.next_entry::<String, &'de RawValue>()? {
                    pairs.push(pair);
                }
                Ok(Pairs(pairs))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Pairs<'de>, A::Error> {
                Err(serde::de::Error::custom("expected an object"))
            }
        }
        deserializer.deserialize_map(PairsVisitor)
    }
}

/// Reads JSON text into a [`Jsonb`] (at most
/// [`MAX_DEPTH`](super::json::MAX_DEPTH) levels deep).
pub fn parse(text: &str) -> Result<Jsonb, SqlError> {
    super::json::check_depth(text)?;
    parse_checked(text)
}

/// [`parse`] of text whose depth was checked.
fn parse_checked(text: &str) -> Result<Jsonb, SqlError> {
    Ok(match node(text)? {
        Node::Null => Jsonb::Null,
        Node::Bool(b) => Jsonb::Bool(b),
        Node::String(s) => Jsonb::String(s),
        Node::Number(n) => Jsonb::Number(numeric::parse(n).ok_or_else(|| invalid(n))?),
        Node::Array(items) => Jsonb::Array(
            items
                .into_iter()
                .map(|item| parse_checked(item.get()))
                .collect::<Result<_, _>>()?,
        ),
        Node::Object(pairs) => {
            let mut fields = Vec::with_capacity(pairs.len());
            for (key, value) in pairs {
                fields.push((key, parse_checked(value.get())?));
            }
            Jsonb::object(fields)
        }
    })
}

/// Orders object keys as `jsonb` stores them: shorter first, then bytes.
pub fn key_order(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

impl Jsonb {
    /// An object of these pairs: the last value of a repeated key kept,
    /// keys in `jsonb`'s order.
    pub fn object(mut pairs: Vec<(String, Jsonb)>) -> Jsonb {
        // A stable sort keeps repeated keys in input order; the last wins.
        pairs.sort_by(|a, b| key_order(&a.0, &b.0));
        let mut unique: Vec<(String, Jsonb)> = Vec::with_capacity(pairs.len());
        for (key, value) in pairs {
            match unique.last_mut() {
                Some(last) if last.0 == key => last.1 = value,
                _ => unique.push((key, value)),
            }
        }
        Jsonb::Object(unique)
    }

    /// `jsonb_typeof`: `object`, `array`, `string`, `number`, `boolean`
    /// or `null`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Jsonb::Null => "null",
            Jsonb::Bool(_) => "boolean",
            Jsonb::Number(_) => "number",
            Jsonb::String(_) => "string",
            Jsonb::Array(_) => "array",
            Jsonb::Object(_) => "object",
        }
    }

    /// Whether this is a scalar (not an array or object).
    pub fn is_scalar(&self) -> bool {
        !matches!(self, Jsonb::Array(_) | Jsonb::Object(_))
    }

    /// The value of `key` in an object.
    pub fn get(&self, key: &str) -> Option<&Jsonb> {
        match self {
            Jsonb::Object(pairs) => pairs
                .binary_search_by(|(k, _)| key_order(k, key))
                .ok()
                .map(|i| &pairs[i].1),
            _ => None,
        }
    }

    /// `jsonb_out`: PostgreSQL's output text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    /// Appends `jsonb_out`'s text.
    pub fn write(&self, out: &mut String) {
        match self {
            Jsonb::Null => out.push_str("null"),
            Jsonb::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Jsonb::Number(n) => out.push_str(n),
            Jsonb::String(s) => write_string(s, out),
            Jsonb::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Jsonb::Object(pairs) => {
                out.push('{');
                for (i, (key, value)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_string(key, out);
                    out.push_str(": ");
                    value.write(out);
                }
                out.push('}');
            }
        }
    }

    /// `jsonb_pretty`'s text: one element or pair per line, four spaces
    /// per level.
    pub fn to_pretty(&self) -> String {
        let mut out = String::new();
        self.write_pretty(0, &mut out);
        out
    }

    fn write_pretty(&self, level: usize, out: &mut String) {
        let indent = |out: &mut String, level: usize| {
            out.push('\n');
            out.push_str(&"    ".repeat(level));
        };
        match self {
            Jsonb::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, level + 1);
                    item.write_pretty(level + 1, out);
                }
                indent(out, level);
                out.push(']');
            }
            Jsonb::Object(pairs) => {
                out.push('{');
                for (i, (key, value)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, level + 1);
                    write_string(key, out);
                    out.push_str(": ");
                    value.write_pretty(level + 1, out);
                }
                indent(out, level);
                out.push('}');
            }
            scalar => scalar.write(out),
        }
    }

    /// Appends a text equal for equal values (numbers without trailing
    /// fraction zeros), for hashing.
    pub fn write_equality_text(&self, out: &mut String) {
        match self {
            Jsonb::Number(n) => out.push_str(numeric::without_trailing_zeros(n)),
            Jsonb::Array(items) => {
                out.push('[');
                for item in items {
                    item.write_equality_text(out);
                    out.push(',');
                }
                out.push(']');
            }
            Jsonb::Object(pairs) => {
                out.push('{');
                for (key, value) in pairs {
                    write_string(key, out);
                    out.push(':');
                    value.write_equality_text(out);
                    out.push(',');
                }
                out.push('}');
            }
            scalar => scalar.write(out),
        }
    }

    /// Whether `self` contains `other` (`@>`), by PostgreSQL's rules: an
    /// object contains the pairs of another (values contained
    /// recursively), an array the elements of another in any order and
    /// number, and a top-level array a lone scalar.
    pub fn contains(&self, other: &Jsonb) -> bool {
        match (self, other) {
            (Jsonb::Array(_), scalar) if scalar.is_scalar() => {
                contains_inner(self, &Jsonb::Array(vec![scalar.clone()]))
            }
            _ => contains_inner(self, other),
        }
    }
}

fn contains_inner(this: &Jsonb, other: &Jsonb) -> bool {
    match (this, other) {
        (Jsonb::Object(_), Jsonb::Object(wanted)) => wanted.iter().all(|(key, value)| {
            this.get(key).is_some_and(|have| match (have, value) {
                (a, b) if a.is_scalar() && b.is_scalar() => compare(a, b).is_eq(),
                (a, b) => same_kind(a, b) && contains_inner(a, b),
            })
        }),
        (Jsonb::Array(have), Jsonb::Array(wanted)) => wanted.iter().all(|value| {
            have.iter().any(|item| {
                if value.is_scalar() {
                    item.is_scalar() && compare(item, value).is_eq()
                } else {
                    same_kind(item, value) && contains_inner(item, value)
                }
            })
        }),
        (a, b) if a.is_scalar() && b.is_scalar() => compare(a, b).is_eq(),
        _ => false,
    }
}

fn same_kind(a: &Jsonb, b: &Jsonb) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// The rank of a kind of value in `jsonb`'s order: null, string, number,
/// boolean, array, object.
fn rank(v: &Jsonb) -> u8 {
    match v {
        Jsonb::Null => 0,
        Jsonb::String(_) => 1,
        Jsonb::Number(_) => 2,
        Jsonb::Bool(_) => 3,
        Jsonb::Array(_) => 4,
        Jsonb::Object(_) => 5,
    }
}

/// Orders two documents as `jsonb`'s btree operators do. At the top a
/// scalar is a one-element array marked as a scalar: it sorts above an
/// empty array and below any other array (PostgreSQL's `jsonb_cmp`).
pub fn compare_documents(a: &Jsonb, b: &Jsonb) -> Ordering {
    match (a, b) {
        (scalar, Jsonb::Array(items)) if scalar.is_scalar() => {
            if items.is_empty() {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (Jsonb::Array(_), scalar) if scalar.is_scalar() => compare_documents(b, a).reverse(),
        _ => compare(a, b),
    }
}

/// Orders two values below the top: by kind, then numbers by value,
/// strings by bytes, containers by size and then part by part (object
/// keys in their stored order).
pub fn compare(a: &Jsonb, b: &Jsonb) -> Ordering {
    rank(a).cmp(&rank(b)).then_with(|| match (a, b) {
        (Jsonb::Bool(x), Jsonb::Bool(y)) => x.cmp(y),
        (Jsonb::Number(x), Jsonb::Number(y)) => numeric::compare(x, y),
        (Jsonb::String(x), Jsonb::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Jsonb::Array(x), Jsonb::Array(y)) => x.len().cmp(&y.len()).then_with(|| {
            x.iter()
                .zip(y)
                .map(|(p, q)| compare(p, q))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }),
        (Jsonb::Object(x), Jsonb::Object(y)) => x.len().cmp(&y.len()).then_with(|| {
            x.iter()
                .zip(y)
                .map(|((kp, vp), (kq, vq))| {
                    kp.as_bytes()
                        .cmp(kq.as_bytes())
                        .then_with(|| compare(vp, vq))
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }),
        _ => Ordering::Equal,
    })
}

/// Appends `s` as a JSON string the way PostgreSQL's `escape_json`
/// writes it.
pub fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(s: &str) -> String {
        parse(s).unwrap().to_text()
    }

    #[test]
    fn input_is_normalised_as_postgresql_does() {
        assert_eq!(
            canonical(r#"{"bb": 1, "a": [1.50, 1e2, -0], "a": {"c":null}}"#),
            r#"{"a": {"c": null}, "bb": 1}"#
        );
        assert_eq!(canonical(r#" "x\u00e9\n" "#), "\"x\u{e9}\\n\"");
        assert_eq!(canonical("[1.5E-3, true]"), "[0.0015, true]");
        assert_eq!(
            parse(r#""\u0000""#).unwrap_err().code,
            SqlState::UNTRANSLATABLE_CHARACTER
        );
        for bad in ["", "{", "[1,]", "nul", "01", "{\"a\" 1}"] {
            assert_eq!(
                parse(bad).unwrap_err().code,
                SqlState::INVALID_TEXT_REPRESENTATION,
                "{bad}"
            );
        }
    }

    #[test]
    fn order_and_containment_follow_jsonb_cmp() {
        let j = |s: &str| parse(s).unwrap();
        assert!(compare_documents(&j("1.0"), &j("1")).is_eq());
        assert!(compare_documents(&j("[]"), &j("null")).is_lt());
        assert!(compare_documents(&j("1"), &j("[0]")).is_lt());
        assert!(compare_documents(&j("{}"), &j("[1, 2]")).is_gt());
        assert!(compare_documents(&j(r#"{"aa": 1, "c": 1}"#), &j(r#"{"b": 1, "d": 1}"#)).is_gt());
        assert!(j(r#"{"a": [1, 2], "b": 3}"#).contains(&j(r#"{"a": [2]}"#)));
        assert!(j("[1, [2, 3]]").contains(&j("[[3]]")));
        assert!(j("[1, 2]").contains(&j("1")));
        assert!(!j("1").contains(&j("[1]")));
        assert!(!j(r#"{"a": 1}"#).contains(&j(r#"{"a": [1]}"#)));
    }

    #[test]
    fn pretty_output_matches_jsonb_pretty() {
        assert_eq!(
            parse(r#"{"a": [1], "b": {}}"#).unwrap().to_pretty(),
            "{\n    \"a\": [\n        1\n    ],\n    \"b\": {\n    }\n}"
        );
    }
}
