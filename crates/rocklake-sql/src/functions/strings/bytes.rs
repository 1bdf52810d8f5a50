//! Binary string functions: `md5`, `sha224` … `sha512`, `encode` and
//! `decode` (`hex`, `base64`, `escape`), and the byte lengths of `bytea`.

use base64::Engine;
use md5::Digest;
use rocklake_types::datum::{Datum, PgType};
use rocklake_types::{SqlError, SqlState};

use super::super::def::types::*;
use super::super::def::Library;
use super::str_arg;
use crate::plan::{CallEnv, CallInfo, ScalarFn};

const BYTEA: PgType = PgType::Bytea;

/// Registers the binary string functions.
pub(super) fn register(lib: &mut Library) {
    lib.function("length", [BYTEA], INT4, |a, _, _| {
        Ok(Datum::Int4(bytes(&a[0]).len() as i32))
    });
    lib.function("octet_length", [BYTEA], INT4, |a, _, _| {
        Ok(Datum::Int4(bytes(&a[0]).len() as i32))
    });
    lib.function("bit_length", [BYTEA], INT4, |a, _, _| {
        Ok(Datum::Int4(bytes(&a[0]).len() as i32 * 8))
    });
    lib.function("md5", [TEXT], TEXT, |a, _, _| {
        Ok(Datum::text(hex::encode(md5::Md5::digest(str_arg(&a[0])))))
    });
    lib.function("md5", [BYTEA], TEXT, |a, _, _| {
        Ok(Datum::text(hex::encode(md5::Md5::digest(bytes(&a[0])))))
    });
    let digests: [(&str, ScalarFn); 4] = [
        ("sha224", |a, _, _| {
            Ok(Datum::Bytea(sha2::Sha224::digest(bytes(&a[0])).to_vec()))
        }),
        ("sha256", |a, _, _| {
            Ok(Datum::Bytea(sha2::Sha256::digest(bytes(&a[0])).to_vec()))
        }),
        ("sha384", |a, _, _| {
            Ok(Datum::Bytea(sha2::Sha384::digest(bytes(&a[0])).to_vec()))
        }),
        ("sha512", |a, _, _| {
            Ok(Datum::Bytea(sha2::Sha512::digest(bytes(&a[0])).to_vec()))
        }),
    ];
    for (name, eval) in digests {
        lib.function(name, [BYTEA], BYTEA, eval);
    }
    lib.function("encode", [BYTEA, TEXT], TEXT, encode);
    lib.function("decode", [TEXT, TEXT], BYTEA, decode);
}

fn bytes(d: &Datum) -> &[u8] {
    match d {
        Datum::Bytea(b) => b,
        _ => &[],
    }
}

fn invalid(message: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, message)
}

fn unknown_format(name: &str) -> SqlError {
    invalid(format!("unrecognized encoding: \"{name}\""))
}

fn encode(a: &[Datum], _: &CallInfo, env: &CallEnv) -> Result<Datum, SqlError> {
    let data = bytes(&a[0]);
    env.memory.check(data.len() * 4)?;
    let text = match str_arg(&a[1]).to_ascii_lowercase().as_str() {
        "hex" => hex::encode(data),
        "base64" => {
            // PostgreSQL breaks base64 text into lines of 76 characters.
            let flat = base64::engine::general_purpose::STANDARD.encode(data);
            let lines: Vec<&str> = flat
                .as_bytes()
                .chunks(76)
                .map(|c| std::str::from_utf8(c).expect("base64 is ASCII"))
                .collect();
            lines.join("\n")
        }
        "escape" => {
            let mut out = String::new();
            for &b in data {
                match b {
                    b'\\' => out.push_str("\\\\"),
                    0 | 0x80..=0xff => out.push_str(&format!("\\{b:03o}")),
                    _ => out.push(b as char),
                }
            }
            out
        }
        _ => return Err(unknown_format(str_arg(&a[1]))),
    };
    Ok(Datum::text(text))
}

fn decode(a: &[Datum], _: &CallInfo, _: &CallEnv) -> Result<Datum, SqlError> {
    let text = str_arg(&a[0]);
    let data = match str_arg(&a[1]).to_ascii_lowercase().as_str() {
        "hex" => decode_hex(text)?,
        "base64" => decode_base64(text)?,
        "escape" => decode_escape(text)?,
        _ => return Err(unknown_format(str_arg(&a[1]))),
    };
    Ok(Datum::Bytea(data))
}

/// Hex digits in pairs; whitespace between pairs is skipped.
fn decode_hex(text: &str) -> Result<Vec<u8>, SqlError> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut chars = text
        .chars()
        .filter(|c| !matches!(c, ' ' | '\t' | '\n' | '\r'));
    let digit = |c: char| {
        c.to_digit(16)
            .ok_or_else(|| invalid(format!("invalid hexadecimal digit: \"{c}\"")))
    };
    while let Some(high) = chars.next() {
        let high = digit(high)?;
        let Some(low) = chars.next() else {
            return Err(invalid("invalid hexadecimal data: odd number of digits"));
        };
        out.push((high * 16 + digit(low)?) as u8);
    }
    Ok(out)
}

/// Base64 as PostgreSQL reads it: whitespace ignored, `=` padding only at
/// the end.
fn decode_base64(text: &str) -> Result<Vec<u8>, SqlError> {
    let mut symbols = String::with_capacity(text.len());
    let mut padding = 0;
    for c in text.chars() {
        match c {
            ' ' | '\t' | '\n' | '\r' => continue,
            '=' => padding += 1,
            c if c.is_ascii_alphanumeric() || c == '+' || c == '/' => {
                if padding > 0 {
                    return Err(invalid("invalid base64 end sequence").with_hint(
                        "Input data is missing padding, is truncated, or is otherwise corrupted.",
                    ));
                }
                symbols.push(c);
            }
            other => {
                return Err(invalid(format!(
                    "invalid symbol \"{other}\" found while decoding base64 sequence"
                )))
            }
        }
    }
    if !(symbols.len() + padding).is_multiple_of(4) || padding > 2 {
        return Err(invalid("invalid base64 end sequence")
            .with_hint("Input data is missing padding, is truncated, or is otherwise corrupted."));
    }
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(symbols.as_bytes())
        .map_err(|_| invalid("invalid base64 end sequence"))
}

/// `\\` for a backslash, `\ooo` for a byte in octal, anything else as is.
fn decode_escape(text: &str) -> Result<Vec<u8>, SqlError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let bad = || {
        SqlError::new(
            SqlState::INVALID_TEXT_REPRESENTATION,
            "invalid input syntax for type bytea",
        )
    };
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
        } else if bytes.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else {
            let octal = bytes.get(i + 1..i + 4).ok_or_else(bad)?;
            let valid = (b'0'..=b'3').contains(&octal[0])
                && octal[1..].iter().all(|d| (b'0'..=b'7').contains(d));
            if !valid {
                return Err(bad());
            }
            out.push((octal[0] - b'0') * 64 + (octal[1] - b'0') * 8 + (octal[2] - b'0'));
            i += 4;
        }
    }
    Ok(out)
}
