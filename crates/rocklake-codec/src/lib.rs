//! RockLake's storage encoding: SQL values, tag-first binary keys and protobuf
//! values. See `docs/key-layout.md` for the full key layout.

pub mod datum;
pub mod keys;
pub mod relations;
pub mod tables;
pub mod tags;
pub mod values;
pub mod wire;
