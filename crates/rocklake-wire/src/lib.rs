//! PostgreSQL wire protocol for RockLake.
