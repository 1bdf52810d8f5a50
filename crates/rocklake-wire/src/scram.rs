//! SCRAM-SHA-256 password authentication (RFC 5802 / RFC 7677) as
//! PostgreSQL 15 does it: no channel binding (the client may send the gs2
//! header `n,,` or `y,,`), 4096 iterations, salted verifiers instead of
//! passwords kept in memory, and a mock exchange for unknown users so a
//! client cannot tell a wrong user from a wrong password.
//!
//! The cryptography comes from RustCrypto (`sha2`, `hmac`, `pbkdf2`,
//! `subtle`); only the message syntax is parsed here. pgwire has a SCRAM
//! implementation, but it lives in its `server-api` (pgwire's own
//! connection handlers, `tokio-util`, `serde_json`, `x509-certificate`, ...)
//! and is driven through its handler traits, which this crate does not use;
//! the SCRAM messages are a few comma-separated `k=v` attributes.

use std::collections::HashMap;
use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use rand::RngCore;
use rocklake_types::{SqlError, SqlState};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The SASL mechanism name offered in AuthenticationSASL.
pub const MECHANISM: &str = "SCRAM-SHA-256";
/// PBKDF2 iterations of new verifiers (PostgreSQL's `scram_iterations`).
pub const ITERATIONS: u32 = 4096;
/// Salt length of new verifiers (PostgreSQL's `SCRAM_DEFAULT_SALT_LEN`).
const SALT_LEN: usize = 16;
/// Random bytes in the server's part of the nonce (`SCRAM_RAW_NONCE_LEN`).
const NONCE_LEN: usize = 18;

fn hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// What the server keeps for one password: salt, iteration count, StoredKey
/// and ServerKey. The password itself cannot be recovered from it.
#[derive(Clone, PartialEq, Eq)]
pub struct ScramVerifier {
    iterations: u32,
    salt: Vec<u8>,
    stored_key: [u8; 32],
    server_key: [u8; 32],
}

impl fmt::Debug for ScramVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScramVerifier")
            .field("iterations", &self.iterations)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for ScramVerifier {
    /// PostgreSQL's `pg_authid.rolpassword` form:
    /// `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{MECHANISM}${}:{}${}:{}",
            self.iterations,
            BASE64.encode(&self.salt),
            BASE64.encode(self.stored_key),
            BASE64.encode(self.server_key)
        )
    }
}

impl ScramVerifier {
    /// A verifier for `password` with a fresh random salt and
    /// [`ITERATIONS`] iterations.
    pub fn new(password: &str) -> Self {
        let mut salt = vec![0u8; SALT_LEN];
        rand::rng().fill_bytes(&mut salt);
        Self::with_salt(password, &salt, ITERATIONS)
    }

    /// A verifier for `password` with this salt and iteration count. The
    /// password is normalized with SASLprep first, as PostgreSQL and libpq
    /// do (falling back to the raw bytes when it is not valid SASLprep).
    pub fn with_salt(password: &str, salt: &[u8], iterations: u32) -> Self {
        let prepared = stringprep::saslprep(password);
        let password = prepared.as_deref().unwrap_or(password);
        let mut salted = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), salt, iterations, &mut salted);
        let client_key = hmac(&salted, b"Client Key");
        ScramVerifier {
            iterations,
            salt: salt.to_vec(),
            stored_key: sha256(&client_key),
            server_key: hmac(&salted, b"Server Key"),
        }
    }

    /// Parses PostgreSQL's verifier text (see the [`fmt::Display`] impl);
    /// `None` if it is not one.
    pub fn parse(text: &str) -> Option<Self> {
        let rest = text.strip_prefix(MECHANISM)?.strip_prefix('$')?;
        let (params, keys) = rest.split_once('$')?;
        let (iterations, salt) = params.split_once(':')?;
        let (stored, server) = keys.split_once(':')?;
        let iterations: u32 = iterations.parse().ok().filter(|i| *i > 0)?;
        Some(ScramVerifier {
            iterations,
            salt: BASE64.decode(salt).ok()?,
            stored_key: BASE64.decode(stored).ok()?.try_into().ok()?,
            server_key: BASE64.decode(server).ok()?.try_into().ok()?,
        })
    }
}

/// The users allowed in, each with its verifier.
#[derive(Clone)]
pub struct ScramUsers {
    users: HashMap<String, ScramVerifier>,
    /// Where users not in `users` are looked up (roles with a password of
    /// their own, set in SQL).
    fallback: Option<VerifierLookup>,
    /// Secret from which unknown users' mock salts are derived, so that they
    /// are stable across attempts yet unpredictable.
    mock_key: [u8; 32],
}

impl fmt::Debug for ScramUsers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.users.keys().collect();
        names.sort();
        f.debug_struct("ScramUsers")
            .field("users", &names)
            .finish_non_exhaustive()
    }
}

/// Two sets of users are equal when they hold the same verifiers and
/// either both or neither look others up.
impl PartialEq for ScramUsers {
    fn eq(&self, other: &Self) -> bool {
        self.users == other.users && self.fallback.is_some() == other.fallback.is_some()
    }
}

impl Eq for ScramUsers {}

impl Default for ScramUsers {
    fn default() -> Self {
        let mut mock_key = [0u8; 32];
        rand::rng().fill_bytes(&mut mock_key);
        ScramUsers {
            users: HashMap::new(),
            fallback: None,
            mock_key,
        }
    }
}

/// Finds the verifier of a user the password file does not hold.
pub type VerifierLookup = std::sync::Arc<dyn Fn(&str) -> Option<ScramVerifier> + Send + Sync>;

impl ScramUsers {
    /// No users yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces a user.
    pub fn insert(&mut self, user: impl Into<String>, verifier: ScramVerifier) {
        self.users.insert(user.into(), verifier);
    }

    /// Looks up users not added with [`ScramUsers::insert`] with `lookup`.
    pub fn set_fallback(&mut self, lookup: VerifierLookup) {
        self.fallback = Some(lookup);
    }

    /// Whether `user` has a password here (added, or found by the fallback).
    pub fn knows(&self, user: &str) -> bool {
        self.users.contains_key(user) || self.fallback.as_ref().is_some_and(|f| f(user).is_some())
    }

    /// The users added, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.users.keys().cloned().collect();
        names.sort();
        names
    }

    /// Number of users.
    pub fn len(&self) -> usize {
        self.users.len()
    }

    /// True when there are no users.
    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }

    /// The verifier of `user`, or a mock one (stable salt, keys nothing
    /// matches) with `false`.
    fn lookup(&self, user: &str) -> (ScramVerifier, bool) {
        if let Some(verifier) = self.users.get(user) {
            return (verifier.clone(), true);
        }
        if let Some(verifier) = self.fallback.as_ref().and_then(|lookup| lookup(user)) {
            return (verifier, true);
        }
        let salt = hmac(&self.mock_key, user.as_bytes())[..SALT_LEN].to_vec();
        let mock = ScramVerifier {
            iterations: ITERATIONS,
            salt,
            stored_key: hmac(&self.mock_key, b"stored"),
            server_key: hmac(&self.mock_key, b"server"),
        };
        (mock, false)
    }
}

/// Why an exchange stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScramError {
    /// The client's message was malformed or asked for something
    /// unsupported (sent as FATAL with this error's SQLSTATE).
    Protocol(SqlError),
    /// Wrong password or unknown user (FATAL 28P01).
    Failed,
}

fn malformed(detail: &str) -> ScramError {
    ScramError::Protocol(
        SqlError::new(SqlState::PROTOCOL_VIOLATION, "malformed SCRAM message").with_detail(detail),
    )
}

/// Splits off `<attr>=<value>` from the front of `input` (up to the next
/// comma).
fn attribute<'a>(input: &mut &'a str, attr: char) -> Result<&'a str, ScramError> {
    let (item, rest) = input.split_once(',').unwrap_or((input, ""));
    let value = item
        .strip_prefix(attr)
        .and_then(|v| v.strip_prefix('='))
        .ok_or_else(|| malformed(&format!("Expected attribute \"{attr}\".")))?;
    *input = rest;
    Ok(value)
}

/// A SCRAM exchange between the client-first and client-final messages.
#[derive(Debug)]
pub struct Exchange {
    verifier: ScramVerifier,
    known_user: bool,
    gs2_header: String,
    client_first_bare: String,
    server_first: String,
    nonce: String,
}

impl Exchange {
    /// Starts an exchange for `user` from the client-first-message; the
    /// server-first-message to send is [`Exchange::server_first`].
    pub fn start(users: &ScramUsers, user: &str, client_first: &[u8]) -> Result<Self, ScramError> {
        let text = std::str::from_utf8(client_first)
            .map_err(|_| malformed("Message is not valid UTF-8."))?;
        // gs2-header: channel-binding flag, optional authzid.
        let (flag, rest) = text
            .split_once(',')
            .ok_or_else(|| malformed("Comma expected."))?;
        match flag {
            "n" | "y" => {}
            _ if flag.starts_with("p=") => {
                return Err(malformed(
                    "The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data.",
                ))
            }
            _ => return Err(malformed("Unexpected channel-binding flag.")),
        }
        let (authzid, bare) = rest
            .split_once(',')
            .ok_or_else(|| malformed("Comma expected."))?;
        if !authzid.is_empty() {
            return Err(ScramError::Protocol(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "client uses authorization identity, but it is not supported",
            )));
        }
        let gs2_header = format!("{flag},,");
        if bare.starts_with("m=") {
            return Err(ScramError::Protocol(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "client requires an unsupported SCRAM extension",
            )));
        }
        // The user name in the message is ignored (PostgreSQL uses the one
        // from the startup packet; libpq sends it empty).
        let mut cursor = bare;
        attribute(&mut cursor, 'n')?;
        let client_nonce = attribute(&mut cursor, 'r')?;
        if client_nonce.is_empty()
            || !client_nonce
                .bytes()
                .all(|b| (0x21..=0x7E).contains(&b) && b != b',')
        {
            return Err(malformed("Nonce is not printable."));
        }
        let mut raw = [0u8; NONCE_LEN];
        rand::rng().fill_bytes(&mut raw);
        let nonce = format!("{client_nonce}{}", BASE64.encode(raw));
        let (verifier, known_user) = users.lookup(user);
        let server_first = format!(
            "r={nonce},s={},i={}",
            BASE64.encode(&verifier.salt),
            verifier.iterations
        );
        Ok(Exchange {
            verifier,
            known_user,
            gs2_header,
            client_first_bare: bare.to_string(),
            server_first,
            nonce,
        })
    }

    /// The server-first-message (AuthenticationSASLContinue payload).
    pub fn server_first(&self) -> &str {
        &self.server_first
    }

    /// Checks the client-final-message; on success returns the
    /// server-final-message (AuthenticationSASLFinal payload).
    pub fn finish(&self, client_final: &[u8]) -> Result<String, ScramError> {
        let text = std::str::from_utf8(client_final)
            .map_err(|_| malformed("Message is not valid UTF-8."))?;
        let proof_at = text
            .rfind(",p=")
            .ok_or_else(|| malformed("Could not find proof."))?;
        let without_proof = &text[..proof_at];
        let proof = BASE64
            .decode(&text[proof_at + 3..])
            .ok()
            .filter(|p| p.len() == 32)
            .ok_or_else(|| malformed("Malformed proof in client-final-message."))?;
        let mut cursor = without_proof;
        let binding = attribute(&mut cursor, 'c')?;
        if BASE64.decode(binding).ok().as_deref() != Some(self.gs2_header.as_bytes()) {
            return Err(ScramError::Protocol(
                SqlError::new(
                    SqlState::PROTOCOL_VIOLATION,
                    "SCRAM channel binding check failed",
                )
                .with_detail("Unexpected SCRAM channel-binding attribute in client-final-message."),
            ));
        }
        if attribute(&mut cursor, 'r')? != self.nonce {
            return Err(malformed("Nonce does not match."));
        }
        let auth_message = format!(
            "{},{},{}",
            self.client_first_bare, self.server_first, without_proof
        );
        let signature = hmac(&self.verifier.stored_key, auth_message.as_bytes());
        let client_key: Vec<u8> = proof.iter().zip(signature).map(|(p, s)| p ^ s).collect();
        let matches: bool = sha256(&client_key).ct_eq(&self.verifier.stored_key).into();
        if !(matches && self.known_user) {
            return Err(ScramError::Failed);
        }
        let server_signature = hmac(&self.verifier.server_key, auth_message.as_bytes());
        Ok(format!("v={}", BASE64.encode(server_signature)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client side of RFC 7677's example, for a given password and
    /// nonce, computing the proof from the server-first message.
    fn client_final(password: &str, client_first_bare: &str, server_first: &str) -> String {
        let mut parts = server_first.split(',');
        let nonce = parts.next().unwrap().strip_prefix("r=").unwrap();
        let salt = BASE64
            .decode(parts.next().unwrap().strip_prefix("s=").unwrap())
            .unwrap();
        let iterations: u32 = parts
            .next()
            .unwrap()
            .strip_prefix("i=")
            .unwrap()
            .parse()
            .unwrap();
        let mut salted = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), &salt, iterations, &mut salted);
        let client_key = hmac(&salted, b"Client Key");
        let without_proof = format!("c=biws,r={nonce}");
        let auth = format!("{client_first_bare},{server_first},{without_proof}");
        let signature = hmac(&sha256(&client_key), auth.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(signature)
            .map(|(k, s)| k ^ s)
            .collect();
        format!("{without_proof},p={}", BASE64.encode(proof))
    }

    #[test]
    fn rfc7677_verifier() {
        // RFC 7677 section 3: user "user", password "pencil".
        let salt = BASE64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let verifier = ScramVerifier::with_salt("pencil", &salt, 4096);
        let mut users = ScramUsers::new();
        users.insert("user", verifier.clone());
        assert_eq!(ScramVerifier::parse(&verifier.to_string()), Some(verifier));
        let bare = "n=user,r=rOprNGfwEbeRWgbNEkqO";
        let exchange = Exchange::start(&users, "user", format!("n,,{bare}").as_bytes()).unwrap();
        assert!(exchange
            .server_first()
            .starts_with("r=rOprNGfwEbeRWgbNEkqO"));
        assert!(exchange
            .server_first()
            .ends_with(",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"));
        let good = client_final("pencil", bare, exchange.server_first());
        assert!(exchange.finish(good.as_bytes()).unwrap().starts_with("v="));
        let bad = client_final("pencil2", bare, exchange.server_first());
        assert_eq!(exchange.finish(bad.as_bytes()), Err(ScramError::Failed));
    }

    #[test]
    fn rfc7677_server_signature() {
        // The full RFC 7677 exchange with its fixed server nonce.
        let salt = BASE64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let exchange = Exchange {
            verifier: ScramVerifier::with_salt("pencil", &salt, 4096),
            known_user: true,
            gs2_header: "n,,".into(),
            client_first_bare: "n=user,r=rOprNGfwEbeRWgbNEkqO".into(),
            server_first:
                "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
                    .into(),
            nonce: "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0".into(),
        };
        let final_message = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
        assert_eq!(
            exchange.finish(final_message.as_bytes()).unwrap(),
            "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
        );
    }

    #[test]
    fn unknown_user_fails_with_a_stable_salt() {
        let users = ScramUsers::new();
        let first = Exchange::start(&users, "nobody", b"n,,n=,r=abc").unwrap();
        let second = Exchange::start(&users, "nobody", b"y,,n=,r=abc").unwrap();
        let salt = |e: &Exchange| e.server_first().split(',').nth(1).unwrap().to_string();
        assert_eq!(salt(&first), salt(&second));
        let attempt = client_final("x", "n=,r=abc", first.server_first());
        assert_eq!(first.finish(attempt.as_bytes()), Err(ScramError::Failed));
    }

    #[test]
    fn malformed_messages() {
        let users = ScramUsers::new();
        for bad in [
            &b""[..],
            b"n",
            b"x,,n=,r=a",
            b"p=tls-server-end-point,,n=,r=a",
            b"n,a=admin,n=,r=a",
            b"n,,m=ext,n=,r=a",
            b"n,,n=,r=",
            b"n,,r=abc",
            b"n,,n=,r=a\x01b",
            b"\xff,,",
        ] {
            assert!(
                matches!(
                    Exchange::start(&users, "u", bad),
                    Err(ScramError::Protocol(_))
                ),
                "{bad:?}"
            );
        }
        let exchange = Exchange::start(&users, "u", b"n,,n=,r=abc").unwrap();
        for bad in [
            "",
            "c=biws,r=abc",
            "c=biws,r=abc,p=!!",
            "c=eSws,r=abc,p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
            "c=biws,r=wrong,p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        ] {
            assert!(
                matches!(
                    exchange.finish(bad.as_bytes()),
                    Err(ScramError::Protocol(_))
                ),
                "{bad:?}"
            );
        }
    }
}
