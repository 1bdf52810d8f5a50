//! Writes: the statements that change a database's tables and schemas.
//!
//! - [`dml`]: `INSERT` (with `ON CONFLICT` and `RETURNING`), `UPDATE`
//!   (also `... FROM`), `DELETE`, with primary-key checks;
//! - [`ddl`]: `CREATE TABLE`, `DROP TABLE`, `CREATE SCHEMA`, `DROP SCHEMA`;
//! - [`alter`]: `ALTER TABLE`.

pub(crate) mod alter;
pub(crate) mod ddl;
pub(crate) mod dml;
