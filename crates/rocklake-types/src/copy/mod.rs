//! COPY stream codecs: PostgreSQL's text format ([`text`]) and binary format
//! ([`binary`]). Framing (CopyData messages) belongs to the wire server.

pub mod binary;
pub mod text;
