//! RockLake's storage encoding: tag-first binary keys, the DuckLake table
//! layouts and protobuf values (SQL values themselves are `rocklake-types`). See `docs/key-layout.md` for the full key layout.

pub mod keys;
pub mod protobuf;
pub mod relations;
pub mod roles;
pub mod tables;
pub mod tags;
pub mod values;
