//! RockLake's storage encoding: SQL values, tag-first binary keys and protobuf values.

pub mod datum;
