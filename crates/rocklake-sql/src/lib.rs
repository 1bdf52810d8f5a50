//! SQL execution for RockLake: parses the PostgreSQL dialect DuckDB sends and runs
//! it against a [`storage::Storage`].

pub mod error;
pub mod output;
pub mod storage;
