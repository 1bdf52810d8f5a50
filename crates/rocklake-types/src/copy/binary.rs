//! PostgreSQL binary COPY format: the stream encoder used for `COPY ... TO
//! STDOUT (FORMAT binary)` and an incremental decoder for `COPY ... FROM STDIN
//! (FORMAT binary)`.
//!
//! Stream layout: the 11-byte signature `PGCOPY\n\xff\r\n\0`, an `i32` flags
//! word, an `i32` header-extension length and that many bytes; then per tuple
//! an `i16` field count followed by, per field, an `i32` length (`-1` for
//! NULL) and the value's binary representation; finally the trailer, an `i16`
//! of `-1`.
//!
//! Error messages mirror PostgreSQL's `copyfromparse.c`: stream-structure
//! problems are SQLSTATE `22P04 bad_copy_file_format`, bad field contents are
//! `22P03 invalid_binary_representation` (as PostgreSQL's `*recv` functions
//! raise). Every error's detail names the tuple ("line") and column.

use bytes::{Buf, BufMut, BytesMut};

use crate::datum::{ColumnDef, Datum, PgType, Row};
use crate::error::SqlError;
use crate::sqlstate::SqlState;
use crate::value::binary as binary_value;

/// The 11-byte signature that starts every binary COPY stream.
pub const SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";
/// Length of the header this encoder writes: signature, flags, extension length.
pub const HEADER_LEN: usize = 19;
/// The trailer: a field count of -1.
pub const TRAILER: [u8; 2] = [0xFF, 0xFF];

/// Appends the 19-byte stream header (no flags, no header extension).
pub fn put_header(buf: &mut BytesMut) {
    buf.put_slice(SIGNATURE);
    buf.put_i32(0);
    buf.put_i32(0);
}

/// Appends the stream trailer.
pub fn put_trailer(buf: &mut BytesMut) {
    buf.put_slice(&TRAILER);
}

/// Appends one field: its length and binary value, or `-1` for NULL.
pub fn put_field(buf: &mut BytesMut, ty: &PgType, datum: &Datum) -> Result<(), SqlError> {
    if datum.is_null() {
        buf.put_i32(-1);
        return Ok(());
    }
    let len_at = buf.len();
    buf.put_i32(0);
    binary_value::put_value(buf, ty, datum)?;
    let len = buf.len() - len_at - 4;
    let len = i32::try_from(len)
        .map_err(|_| SqlError::internal(format!("binary value of {len} bytes is too large")))?;
    buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// Appends one tuple (field count and fields) of a row whose columns have the
/// types `types`; the row is any exact-size sequence of values (a slice, or a
/// [`crate::rows::RowRef`]'s values read in place).
pub fn put_tuple<'a, R>(buf: &mut BytesMut, types: &[PgType], row: R) -> Result<(), SqlError>
where
    R: IntoIterator<Item = &'a Datum>,
    R::IntoIter: ExactSizeIterator,
{
    let row = row.into_iter();
    if row.len() != types.len() {
        return Err(SqlError::internal(format!(
            "row has {} values but the COPY has {} columns",
            row.len(),
            types.len()
        )));
    }
    let count = i16::try_from(types.len())
        .map_err(|_| SqlError::internal(format!("{} columns are too many", types.len())))?;
    buf.put_i16(count);
    for (index, (ty, datum)) in types.iter().zip(row).enumerate() {
        put_field(buf, ty, datum).map_err(|e| {
            let detail = format!("column {} of the COPY output", index + 1);
            e.with_detail(detail)
        })?;
    }
    Ok(())
}

/// Encodes a whole stream (header, tuples, trailer) in one buffer.
pub fn encode_stream(types: &[PgType], rows: &[Row]) -> Result<BytesMut, SqlError> {
    let mut buf = BytesMut::new();
    put_header(&mut buf);
    for row in rows {
        put_tuple(&mut buf, types, row)?;
    }
    put_trailer(&mut buf);
    Ok(buf)
}

/// Where the decoder is in the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Waiting for the 19 fixed header bytes.
    Header,
    /// Skipping this many more header-extension bytes.
    Extension(usize),
    /// Reading tuples.
    Tuples,
    /// The trailer was read; only the end of the stream may follow.
    Trailer,
}

/// Incremental decoder of a binary COPY IN stream. Feed it the CopyData
/// payloads as they arrive (their boundaries need not match tuples or even
/// fields), then call [`CopyInDecoder::finish`].
#[derive(Debug)]
pub struct CopyInDecoder {
    columns: Vec<ColumnDef>,
    buf: BytesMut,
    stage: Stage,
    rows: Vec<Row>,
    /// Do not rescan the pending tuple until the buffer holds this many bytes.
    need: usize,
}

fn format_error(message: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::BAD_COPY_FILE_FORMAT, message)
}

impl CopyInDecoder {
    /// A decoder for a stream whose tuples have these columns, in order.
    pub fn new(columns: Vec<ColumnDef>) -> Self {
        CopyInDecoder {
            columns,
            buf: BytesMut::new(),
            stage: Stage::Header,
            rows: Vec::new(),
            need: 0,
        }
    }

    /// Rows decoded so far.
    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    /// Consumes the next chunk of the stream, decoding every tuple it
    /// completes. After an error the decoder must be dropped.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), SqlError> {
        self.buf.extend_from_slice(chunk);
        loop {
            match self.stage {
                Stage::Header => {
                    let available = self.buf.len().min(SIGNATURE.len());
                    if self.buf[..available] != SIGNATURE[..available] {
                        return Err(format_error("COPY file signature not recognized"));
                    }
                    if self.buf.len() < HEADER_LEN {
                        return Ok(());
                    }
                    self.buf.advance(SIGNATURE.len());
                    let flags = self.buf.get_i32();
                    if flags & (1 << 16) != 0 {
                        return Err(format_error("invalid COPY file header (WITH OIDS)"));
                    }
                    if (flags as u32) & 0xFFFF_0000 != 0 {
                        return Err(format_error(
                            "unrecognized critical flags in COPY file header",
                        ));
                    }
                    let extension = self.buf.get_i32();
                    if extension < 0 {
                        return Err(format_error("invalid COPY file header (wrong length)"));
                    }
                    self.stage = Stage::Extension(extension as usize);
                }
                Stage::Extension(left) => {
                    let skip = left.min(self.buf.len());
                    self.buf.advance(skip);
                    if skip < left {
                        self.stage = Stage::Extension(left - skip);
                        return Ok(());
                    }
                    self.stage = Stage::Tuples;
                }
                Stage::Tuples => {
                    if self.buf.len() < self.need.max(2) {
                        return Ok(());
                    }
                    if !self.read_tuple()? {
                        return Ok(());
                    }
                }
                Stage::Trailer => {
                    if !self.buf.is_empty() {
                        return Err(format_error("received copy data after EOF marker"));
                    }
                    return Ok(());
                }
            }
        }
    }

    /// Decodes the tuple at the front of the buffer if it is complete; returns
    /// whether anything was consumed.
    fn read_tuple(&mut self) -> Result<bool, SqlError> {
        let line = self.rows.len() + 1;
        let count = i16::from_be_bytes([self.buf[0], self.buf[1]]);
        if count == -1 {
            self.buf.advance(2);
            self.stage = Stage::Trailer;
            return Ok(true);
        }
        if count as i64 != self.columns.len() as i64 {
            return Err(format_error(format!(
                "row field count is {count}, expected {}",
                self.columns.len()
            ))
            .with_detail(format!("COPY line {line}")));
        }
        // First pass: find every field's extent without consuming anything.
        let mut spans = Vec::with_capacity(self.columns.len());
        let mut at = 2usize;
        for index in 0..self.columns.len() {
            if self.buf.len() < at + 4 {
                self.need = at + 4;
                return Ok(false);
            }
            let len = i32::from_be_bytes([
                self.buf[at],
                self.buf[at + 1],
                self.buf[at + 2],
                self.buf[at + 3],
            ]);
            at += 4;
            if len == -1 {
                spans.push(None);
                continue;
            }
            if len < 0 {
                return Err(format_error("invalid field size").with_detail(self.where_(
                    line,
                    index,
                    &format!("field size {len}"),
                )));
            }
            let len = len as usize;
            if self.buf.len() < at + len {
                self.need = at + len;
                return Ok(false);
            }
            spans.push(Some(at..at + len));
            at += len;
        }
        let mut row = Vec::with_capacity(self.columns.len());
        for (index, span) in spans.into_iter().enumerate() {
            let datum = match span {
                None => Datum::Null,
                Some(range) => {
                    let ty = &self.columns[index].pg_type;
                    binary_value::read_value(ty, &self.buf[range]).map_err(|e| {
                        let detail = self.where_(line, index, &e.message);
                        e.with_detail(detail)
                    })?
                }
            };
            row.push(datum);
        }
        self.buf.advance(at);
        self.need = 0;
        self.rows.push(row);
        Ok(true)
    }

    fn where_(&self, line: usize, index: usize, what: &str) -> String {
        let column = &self.columns[index];
        format!(
            "COPY line {line}, column {} ({}, {}): {what}",
            index + 1,
            column.name,
            column.pg_type.type_name()
        )
    }

    /// Ends the stream (CopyDone) and returns the decoded rows. A stream may
    /// end after the trailer or, as PostgreSQL allows, at a tuple boundary
    /// without one.
    pub fn finish(self) -> Result<Vec<Row>, SqlError> {
        match self.stage {
            Stage::Header | Stage::Extension(_) => {
                if self.buf.len() < SIGNATURE.len() {
                    Err(format_error("COPY file signature not recognized"))
                } else {
                    Err(format_error("invalid COPY file header (missing length)"))
                }
            }
            Stage::Tuples if !self.buf.is_empty() => Err(format_error(
                "unexpected EOF in COPY data",
            )
            .with_detail(format!(
                "COPY line {}: {} bytes of an incomplete tuple",
                self.rows.len() + 1,
                self.buf.len()
            ))),
            Stage::Tuples | Stage::Trailer => Ok(self.rows),
        }
    }
}

/// Decodes a complete stream in one call (convenience for tests and small
/// payloads).
pub fn decode_stream(columns: &[ColumnDef], bytes: &[u8]) -> Result<Vec<Row>, SqlError> {
    let mut decoder = CopyInDecoder::new(columns.to_vec());
    decoder.feed(bytes)?;
    decoder.finish()
}
