//! The DuckLake catalog on SlateDB.
