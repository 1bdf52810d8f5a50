//! PostgreSQL's binary `numeric` form (what `numeric_send` writes and
//! `numeric_recv` reads), converted from and to the canonical decimal text kept
//! in [`crate::datum::Datum::Numeric`].
//!
//! Wire layout: `ndigits: i16`, `weight: i16`, `sign: u16`, `dscale: u16`, then
//! `ndigits` base-10000 digits as `i16`, most significant first. The value is
//! `sum(digit[i] * 10000^(weight - i))`; `dscale` is the number of decimal
//! digits shown after the point.

use bytes::{BufMut, BytesMut};

use super::decompose;

/// Sign word of a positive (or zero) value.
pub const NUMERIC_POS: u16 = 0x0000;
/// Sign word of a negative value.
pub const NUMERIC_NEG: u16 = 0x4000;
/// Sign word of `NaN`.
pub const NUMERIC_NAN: u16 = 0xC000;
/// Sign word of `Infinity` (PostgreSQL 14+).
pub const NUMERIC_PINF: u16 = 0xD000;
/// Sign word of `-Infinity` (PostgreSQL 14+).
pub const NUMERIC_NINF: u16 = 0xF000;
/// Largest display scale the binary form can carry (`NUMERIC_DSCALE_MASK`).
const MAX_DSCALE: u16 = 0x3FFF;

/// A numeric value in PostgreSQL's binary layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryNumeric {
    /// Weight of the first digit, in base-10000 positions before the point.
    pub weight: i16,
    /// One of the `NUMERIC_*` sign words.
    pub sign: u16,
    /// Decimal digits after the point.
    pub dscale: u16,
    /// Base-10000 digits, most significant first, without leading or trailing
    /// zero digits.
    pub digits: Vec<i16>,
}

impl BinaryNumeric {
    /// Appends the binary form (without a length prefix) to `buf`.
    pub fn put(&self, buf: &mut BytesMut) {
        buf.put_i16(self.digits.len() as i16);
        buf.put_i16(self.weight);
        buf.put_u16(self.sign);
        buf.put_u16(self.dscale);
        for digit in &self.digits {
            buf.put_i16(*digit);
        }
    }
}

fn special(sign: u16) -> BinaryNumeric {
    BinaryNumeric {
        weight: 0,
        sign,
        // PostgreSQL reads the dscale of a special value out of its short
        // header (`(header & 0x1F80) >> 7`), which is 32 for the infinities
        // and 0 for NaN; send the same bytes.
        dscale: if sign == NUMERIC_NAN { 0 } else { 32 },
        digits: Vec::new(),
    }
}

/// Parses decimal text (`-12.340`, `1e20`, `NaN`, `-Infinity`) into the binary
/// layout, the way PostgreSQL's `numeric_in` would before `numeric_send`.
pub fn parse_numeric(text: &str) -> Result<BinaryNumeric, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "nan" => return Ok(special(NUMERIC_NAN)),
        "infinity" | "+infinity" | "inf" | "+inf" => return Ok(special(NUMERIC_PINF)),
        "-infinity" | "-inf" => return Ok(special(NUMERIC_NINF)),
        _ => {}
    }
    let decimal = decompose(text)
        .ok_or_else(|| format!("invalid input syntax for type numeric: \"{text}\""))?;
    let dscale = decimal.frac.len();
    if dscale > usize::from(MAX_DSCALE) {
        return Err(format!("numeric scale {dscale} out of range in \"{text}\""));
    }
    // value = digits * 10^-dscale
    let mut digits = format!("{}{}", decimal.int, decimal.frac)
        .trim_start_matches('0')
        .to_string();
    if digits.is_empty() {
        return Ok(BinaryNumeric {
            weight: 0,
            sign: NUMERIC_POS,
            dscale: dscale as u16,
            digits: Vec::new(),
        });
    }
    // Align the exponent to a base-10000 boundary by appending zeros.
    let scale_exp = -(dscale as i64);
    let pad = scale_exp.rem_euclid(4);
    digits.extend(std::iter::repeat_n('0', pad as usize));
    let low_weight = (scale_exp - pad) / 4;
    let lead = (4 - digits.len() % 4) % 4;
    let padded: String = "0".repeat(lead) + &digits;
    let mut groups: Vec<i16> = padded
        .as_bytes()
        .chunks(4)
        .map(|chunk| {
            chunk
                .iter()
                .fold(0i16, |acc, b| acc * 10 + i16::from(b - b'0'))
        })
        .collect();
    let weight = low_weight + groups.len() as i64 - 1;
    while groups.last() == Some(&0) {
        groups.pop();
    }
    let weight =
        i16::try_from(weight).map_err(|_| format!("value overflows numeric format: \"{text}\""))?;
    Ok(BinaryNumeric {
        weight,
        sign: if decimal.neg {
            NUMERIC_NEG
        } else {
            NUMERIC_POS
        },
        dscale: dscale as u16,
        digits: groups,
    })
}

/// Reads a binary numeric value (exactly `bytes`, without a length prefix) and
/// renders it as PostgreSQL's `numeric_out` would.
pub fn numeric_from_binary(bytes: &[u8]) -> Result<String, String> {
    if bytes.len() < 8 {
        return Err(format!(
            "numeric value needs at least 8 bytes, got {}",
            bytes.len()
        ));
    }
    let word = |i: usize| u16::from_be_bytes([bytes[i], bytes[i + 1]]);
    let ndigits = word(0) as i16;
    let weight = word(2) as i16;
    let sign = word(4);
    let dscale = word(6);
    if ndigits < 0 || bytes.len() != 8 + 2 * ndigits as usize {
        return Err(format!(
            "numeric value with {ndigits} digits must be {} bytes, got {}",
            8 + 2 * i64::from(ndigits).max(0),
            bytes.len()
        ));
    }
    match sign {
        NUMERIC_POS | NUMERIC_NEG => {}
        NUMERIC_NAN => return Ok("NaN".to_string()),
        NUMERIC_PINF => return Ok("Infinity".to_string()),
        NUMERIC_NINF => return Ok("-Infinity".to_string()),
        other => {
            return Err(format!(
                "invalid sign in external \"numeric\" value: {other:#06x}"
            ))
        }
    }
    if dscale > MAX_DSCALE {
        return Err(format!(
            "invalid scale in external \"numeric\" value: {dscale}"
        ));
    }
    let mut digits = Vec::with_capacity(ndigits as usize);
    for i in 0..ndigits as usize {
        let digit = word(8 + 2 * i) as i16;
        if !(0..10_000).contains(&digit) {
            return Err(format!(
                "invalid digit in external \"numeric\" value: {digit}"
            ));
        }
        digits.push(digit);
    }
    Ok(render(weight, sign == NUMERIC_NEG, dscale, &digits))
}

/// Renders digits like `numeric_out`: the integer part without leading zeros,
/// then exactly `dscale` fraction digits (extra digits are truncated, as
/// `numeric_recv` does).
fn render(weight: i16, negative: bool, dscale: u16, digits: &[i16]) -> String {
    let group = |index: i32| -> i16 {
        if index < 0 {
            0
        } else {
            digits.get(index as usize).copied().unwrap_or(0)
        }
    };
    let mut int_part = String::new();
    for index in 0..=i32::from(weight) {
        int_part.push_str(&format!("{:04}", group(index)));
    }
    let int_part = int_part.trim_start_matches('0');
    let mut frac = String::new();
    let mut index = i32::from(weight) + 1;
    while frac.len() < usize::from(dscale) {
        frac.push_str(&format!("{:04}", group(index)));
        index += 1;
    }
    frac.truncate(usize::from(dscale));
    let is_zero = int_part.is_empty() && frac.bytes().all(|b| b == b'0');
    let mut out = String::new();
    if negative && !is_zero {
        out.push('-');
    }
    out.push_str(if int_part.is_empty() { "0" } else { int_part });
    if dscale > 0 {
        out.push('.');
        out.push_str(&frac);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_of(text: &str) -> Vec<u8> {
        let mut buf = BytesMut::new();
        parse_numeric(text).unwrap().put(&mut buf);
        buf.to_vec()
    }

    #[test]
    fn zero_has_no_digits() {
        assert_eq!(bytes_of("0"), [0, 0, 0, 0, 0, 0, 0, 0]);
        // dscale is kept: '0.00'::numeric sends dscale 2.
        assert_eq!(bytes_of("0.00"), [0, 0, 0, 0, 0, 0, 0, 2]);
    }

    #[test]
    fn negative_with_scale() {
        // numeric_send('-12.340'): ndigits 2, weight 0, sign 0x4000, dscale 3, [12, 3400]
        assert_eq!(
            bytes_of("-12.340"),
            [0, 2, 0, 0, 0x40, 0, 0, 3, 0, 12, 0x0D, 0x48]
        );
    }

    #[test]
    fn large_power_of_ten_strips_trailing_groups() {
        // 1e20 = 1 * 10000^5: ndigits 1, weight 5, dscale 0.
        assert_eq!(bytes_of("1e20"), [0, 1, 0, 5, 0, 0, 0, 0, 0, 1]);
        assert_eq!(bytes_of("100000000000000000000"), bytes_of("1e20"));
    }

    #[test]
    fn small_fraction() {
        // 0.0001 = 1 * 10000^-1: ndigits 1, weight -1, dscale 4.
        assert_eq!(bytes_of("0.0001"), [0, 1, 0xFF, 0xFF, 0, 0, 0, 4, 0, 1]);
        // 0.00001 = 1000 * 10000^-2, dscale 5.
        assert_eq!(
            bytes_of("0.00001"),
            [0, 1, 0xFF, 0xFE, 0, 0, 0, 5, 0x03, 0xE8]
        );
    }

    #[test]
    fn specials() {
        assert_eq!(bytes_of("NaN"), [0, 0, 0, 0, 0xC0, 0, 0, 0]);
        assert_eq!(bytes_of("Infinity"), [0, 0, 0, 0, 0xD0, 0, 0, 0x20]);
        assert_eq!(bytes_of("-Infinity"), [0, 0, 0, 0, 0xF0, 0, 0, 0x20]);
        for text in ["NaN", "Infinity", "-Infinity"] {
            assert_eq!(numeric_from_binary(&bytes_of(text)).unwrap(), text);
        }
    }

    #[test]
    fn renders_canonical_text() {
        for text in [
            "0",
            "0.00",
            "-12.340",
            "100000000000000000000",
            "0.0001",
            "12345678.9",
            "-0.000000123",
            "9999",
            "10000",
            "170141183460469231731687303715884105727",
        ] {
            assert_eq!(
                numeric_from_binary(&bytes_of(text)).unwrap(),
                text,
                "{text}"
            );
        }
        assert_eq!(
            numeric_from_binary(&bytes_of("1e20")).unwrap(),
            "100000000000000000000"
        );
        assert_eq!(numeric_from_binary(&bytes_of("1.5e-3")).unwrap(), "0.0015");
        assert_eq!(numeric_from_binary(&bytes_of("-0.0")).unwrap(), "0.0");
    }

    #[test]
    fn truncates_digits_hidden_by_dscale() {
        // [1, 2345] weight 0 dscale 2 is 1.2345 shown with two digits: 1.23
        let raw = [0, 2, 0, 0, 0, 0, 0, 2, 0, 1, 0x09, 0x29];
        assert_eq!(numeric_from_binary(&raw).unwrap(), "1.23");
    }

    #[test]
    fn rejects_malformed_binary() {
        assert!(numeric_from_binary(&[0, 0, 0]).is_err());
        // ndigits says 1 but no digit follows
        assert!(numeric_from_binary(&[0, 1, 0, 0, 0, 0, 0, 0]).is_err());
        // bad sign word
        assert!(numeric_from_binary(&[0, 0, 0, 0, 0x12, 0, 0, 0]).is_err());
        // digit 10000 is out of range
        assert!(numeric_from_binary(&[0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10]).is_err());
    }

    #[test]
    fn rejects_bad_text() {
        for text in ["", "-", "1.2.3", "abc", "1e", "--1", ". "] {
            assert!(parse_numeric(text).is_err(), "{text:?}");
        }
    }
}
