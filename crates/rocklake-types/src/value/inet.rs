//! PostgreSQL's `inet`: an IPv4 or IPv6 address with a netmask length,
//! held as its canonical text (`127.0.0.1`, `10.0.0.0/8`, `::1`).

use std::net::IpAddr;

/// PostgreSQL's address family numbers in the binary format.
const FAMILY_V4: u8 = 2;
const FAMILY_V6: u8 = 3;

/// Reads `text` (`address[/bits]`): the address and its netmask length.
pub fn parse(text: &str) -> Option<(IpAddr, u8)> {
    let text = text.trim();
    let (address, bits) = match text.split_once('/') {
        Some((address, bits)) => (address, Some(bits.parse::<u8>().ok()?)),
        None => (text, None),
    };
    let address: IpAddr = address.parse().ok()?;
    let most = if address.is_ipv4() { 32 } else { 128 };
    let bits = bits.unwrap_or(most);
    (bits <= most).then_some((address, bits))
}

/// The canonical text: the length is left out when it is the whole address.
pub fn format(address: IpAddr, bits: u8) -> String {
    let most = if address.is_ipv4() { 32 } else { 128 };
    if bits == most {
        address.to_string()
    } else {
        format!("{address}/{bits}")
    }
}

/// The binary format: family, bits, is-cidr (0), length, address bytes.
pub fn to_binary(text: &str) -> Option<Vec<u8>> {
    let (address, bits) = parse(text)?;
    let (family, bytes) = match address {
        IpAddr::V4(a) => (FAMILY_V4, a.octets().to_vec()),
        IpAddr::V6(a) => (FAMILY_V6, a.octets().to_vec()),
    };
    let mut out = vec![family, bits, 0, bytes.len() as u8];
    out.extend(bytes);
    Some(out)
}

/// Reads the binary format back to canonical text.
pub fn from_binary(bytes: &[u8]) -> Option<String> {
    let [family, bits, _cidr, length, rest @ ..] = bytes else {
        return None;
    };
    let address = match (*family, *length, rest.len()) {
        (FAMILY_V4, 4, 4) => IpAddr::from(<[u8; 4]>::try_from(rest).ok()?),
        (FAMILY_V6, 16, 16) => IpAddr::from(<[u8; 16]>::try_from(rest).ok()?),
        _ => return None,
    };
    let most = if address.is_ipv4() { 32 } else { 128 };
    (*bits <= most).then(|| format(address, *bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inet_round_trips_in_text_and_binary() {
        for (input, canonical) in [
            ("127.0.0.1", "127.0.0.1"),
            ("10.0.0.0/8", "10.0.0.0/8"),
            ("192.168.1.5/32", "192.168.1.5"),
            ("::1", "::1"),
            ("2001:db8::1/64", "2001:db8::1/64"),
        ] {
            let (address, bits) = parse(input).unwrap();
            assert_eq!(format(address, bits), canonical);
            let binary = to_binary(canonical).unwrap();
            assert_eq!(from_binary(&binary).unwrap(), canonical);
        }
        assert!(parse("300.0.0.1").is_none());
        assert!(parse("1.2.3.4/33").is_none());
        assert_eq!(
            to_binary("127.0.0.1").unwrap(),
            vec![2, 32, 0, 4, 127, 0, 0, 1]
        );
    }
}
