//! COPY stream codecs: PostgreSQL's text format ([`text`]), CSV format
//! ([`csv`]) and binary format ([`binary`]). Framing (CopyData messages)
//! belongs to the wire server.

pub mod binary;
pub mod csv;
pub mod encoded;
pub mod text;

/// The format of a COPY, either direction.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CopyFormat {
    /// `FORMAT BINARY`.
    #[default]
    Binary,
    /// `FORMAT TEXT`.
    Text(text::TextCopyFormat),
    /// `FORMAT CSV`.
    Csv(csv::CsvCopyFormat),
}
