//! Arbitrary client-first and client-final messages through the SCRAM
//! exchange: they must be answered or refused, never panic, and never
//! authenticate.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rocklake_wire::scram::{Exchange, ScramUsers, ScramVerifier};

fn users() -> &'static ScramUsers {
    static USERS: OnceLock<ScramUsers> = OnceLock::new();
    USERS.get_or_init(|| {
        let mut users = ScramUsers::new();
        users.insert("u", ScramVerifier::new("secret"));
        users
    })
}

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|b| *b == 0).unwrap_or(data.len());
    let (first, last) = data.split_at(split);
    if let Ok(exchange) = Exchange::start(users(), "u", first) {
        assert!(exchange.finish(last).is_err());
    }
});
