//! Arbitrary bytes through the startup-packet and typed-message decoders:
//! they must return a message, ask for more input, or report a protocol
//! violation, never panic.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use rocklake_wire::frontend::{decode_message, decode_startup};

fuzz_target!(|data: &[u8]| {
    let mut startup = BytesMut::from(data);
    while let Ok(Some(_)) = decode_startup(&mut startup) {}
    let mut messages = BytesMut::from(data);
    while let Ok(Some(_)) = decode_message(&mut messages) {}
});
