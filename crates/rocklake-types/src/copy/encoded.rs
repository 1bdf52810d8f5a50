//! Rows already encoded as binary COPY tuples, kept to be sent again
//! without decoding or encoding a value (see the SQL engine's encoded
//! results). Each tuple is exactly what [`super::binary::put_tuple`] writes;
//! the wire server frames each one as a CopyData message.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};

use super::binary;
use crate::datum::{ColumnDef, Datum, PgType, Row};
use crate::error::SqlError;

/// Binary COPY tuples, in runs that later tuples were appended to (see
/// [`EncodedTuples::appended`]): runs are shared, so appending a few
/// tuples to a large result copies none of its bytes.
#[derive(Debug, Clone, Default)]
pub struct EncodedTuples {
    runs: Vec<Arc<TupleRun>>,
}

/// Tuples in one buffer, with where each ends.
#[derive(Debug, Default, PartialEq, Eq)]
struct TupleRun {
    bytes: Bytes,
    /// The end offset of each tuple in `bytes`, ascending.
    ends: Vec<u32>,
}

impl TupleRun {
    fn tuples(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.ends.len()).map(|i| {
            let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
            &self.bytes[start..self.ends[i] as usize]
        })
    }

    /// `self` followed by `next`, in one buffer.
    fn joined(&self, next: &TupleRun) -> TupleRun {
        let mut bytes = BytesMut::with_capacity(self.bytes.len() + next.bytes.len());
        bytes.extend_from_slice(&self.bytes);
        bytes.extend_from_slice(&next.bytes);
        let base = self.bytes.len() as u32;
        let mut ends = Vec::with_capacity(self.ends.len() + next.ends.len());
        ends.extend_from_slice(&self.ends);
        ends.extend(next.ends.iter().map(|end| base + end));
        TupleRun {
            bytes: bytes.freeze(),
            ends,
        }
    }
}

impl PartialEq for EncodedTuples {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.tuples().eq(other.tuples())
    }
}

impl Eq for EncodedTuples {}

impl EncodedTuples {
    /// The number of tuples.
    pub fn len(&self) -> usize {
        self.runs.iter().map(|run| run.ends.len()).sum()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.runs.iter().all(|run| run.ends.is_empty())
    }

    /// The memory the tuples take (their bytes and offsets).
    pub fn size_bytes(&self) -> usize {
        self.runs
            .iter()
            .map(|run| run.bytes.len() + run.ends.len() * std::mem::size_of::<u32>())
            .sum()
    }

    /// Each tuple's bytes, in order.
    pub fn tuples(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.runs.iter().flat_map(|run| run.tuples())
    }

    /// These tuples followed by `more`, sharing the bytes of both. Runs are
    /// joined so that each is at least twice the size of the next: a result
    /// appended to once per commit stays in a few runs (logarithmic in its
    /// size), and each byte is copied a logarithmic number of times over all
    /// the appends.
    pub fn appended(&self, more: EncodedTuples) -> EncodedTuples {
        let mut runs = self.runs.clone();
        for run in more.runs {
            if run.ends.is_empty() {
                continue;
            }
            runs.push(run);
            while let [.., before, last] = runs.as_slice() {
                let fits = before.bytes.len() + last.bytes.len() <= u32::MAX as usize;
                if before.bytes.len() >= 2 * last.bytes.len() || !fits {
                    break;
                }
                let joined = Arc::new(before.joined(last));
                runs.truncate(runs.len() - 2);
                runs.push(joined);
            }
        }
        EncodedTuples { runs }
    }

    /// The tuples decoded as rows of `columns` (for a consumer that wants
    /// values rather than bytes).
    pub fn decode(&self, columns: &[ColumnDef]) -> Result<Vec<Row>, SqlError> {
        let mut decoder = binary::CopyInDecoder::new(columns.to_vec());
        let mut header = BytesMut::new();
        binary::put_header(&mut header);
        decoder.feed(&header)?;
        for run in &self.runs {
            decoder.feed(&run.bytes)?;
        }
        decoder.feed(&binary::TRAILER)?;
        decoder.finish()
    }
}

/// Builds [`EncodedTuples`] row by row, up to a size limit.
pub struct TupleEncoder {
    types: Vec<PgType>,
    buf: BytesMut,
    ends: Vec<u32>,
    limit: usize,
}

impl TupleEncoder {
    /// An encoder of rows with `types` that holds at most `limit` bytes
    /// (and never more than `u32::MAX`).
    pub fn new(types: Vec<PgType>, limit: usize) -> Self {
        TupleEncoder {
            types,
            buf: BytesMut::new(),
            ends: Vec::new(),
            limit: limit.min(u32::MAX as usize),
        }
    }

    /// Appends a row. `Ok(false)` leaves the encoder as it was: the row
    /// would take it past its limit.
    pub fn push<'a, R>(&mut self, row: R) -> Result<bool, SqlError>
    where
        R: IntoIterator<Item = &'a Datum>,
        R::IntoIter: ExactSizeIterator,
    {
        let start = self.buf.len();
        binary::put_tuple(&mut self.buf, &self.types, row)?;
        if self.buf.len() > self.limit {
            self.buf.truncate(start);
            return Ok(false);
        }
        self.ends.push(self.buf.len() as u32);
        Ok(true)
    }

    /// The tuples appended.
    pub fn finish(self) -> EncodedTuples {
        EncodedTuples {
            runs: vec![Arc::new(TupleRun {
                bytes: self.buf.freeze(),
                ends: self.ends,
            })],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns() -> Vec<ColumnDef> {
        vec![
            ColumnDef::new("id", PgType::Int8),
            ColumnDef::new("name", PgType::Text),
        ]
    }

    fn types() -> Vec<PgType> {
        columns().into_iter().map(|c| c.pg_type).collect()
    }

    #[test]
    fn tuples_are_what_the_stream_encoder_writes_and_decode_back() {
        let rows = vec![
            vec![Datum::Int8(1), Datum::text("a")],
            vec![Datum::Int8(-7), Datum::Null],
            vec![Datum::Int8(i64::MAX), Datum::text("ünï")],
        ];
        let mut encoder = TupleEncoder::new(types(), usize::MAX);
        for row in &rows {
            assert!(encoder.push(row).unwrap());
        }
        let tuples = encoder.finish();
        assert_eq!(tuples.len(), 3);
        let stream = binary::encode_stream(&types(), &rows).unwrap();
        let joined: Vec<u8> = tuples.tuples().flatten().copied().collect();
        assert_eq!(
            joined,
            stream[binary::HEADER_LEN..stream.len() - binary::TRAILER.len()]
        );
        assert_eq!(tuples.decode(&columns()).unwrap(), rows);
    }

    #[test]
    fn a_row_past_the_limit_is_refused_and_the_rest_kept() {
        let row = vec![Datum::Int8(1), Datum::text("abc")];
        let one = {
            let mut encoder = TupleEncoder::new(types(), usize::MAX);
            encoder.push(&row).unwrap();
            encoder.finish().size_bytes() - 4
        };
        let mut encoder = TupleEncoder::new(types(), one * 2 + 1);
        assert!(encoder.push(&row).unwrap());
        assert!(encoder.push(&row).unwrap());
        assert!(!encoder.push(&row).unwrap());
        let tuples = encoder.finish();
        assert_eq!(tuples.len(), 2);
        assert_eq!(tuples.decode(&columns()).unwrap(), vec![row.clone(), row]);
    }

    #[test]
    fn no_tuples_decode_to_no_rows() {
        let tuples = TupleEncoder::new(types(), 0).finish();
        assert!(tuples.is_empty());
        assert_eq!(tuples.tuples().count(), 0);
        assert!(tuples.decode(&columns()).unwrap().is_empty());
    }

    #[test]
    fn appended_tuples_follow_in_order_in_few_runs() {
        let row = |id: i64| vec![Datum::Int8(id), Datum::text(format!("n{id}"))];
        let encode = |ids: std::ops::Range<i64>| {
            let mut encoder = TupleEncoder::new(types(), usize::MAX);
            for id in ids {
                encoder.push(&row(id)).unwrap();
            }
            encoder.finish()
        };
        let mut tuples = encode(0..1000);
        for id in 1000..1400 {
            tuples = tuples.appended(encode(id..id + 1));
        }
        tuples = tuples.appended(encode(0..0));
        assert_eq!(tuples.len(), 1400);
        assert_eq!(tuples, encode(0..1400));
        let rows: Vec<Row> = (0..1400).map(row).collect();
        assert_eq!(tuples.decode(&columns()).unwrap(), rows);
        assert!(tuples.runs.len() <= 12, "{} runs", tuples.runs.len());
        assert_eq!(tuples.size_bytes(), encode(0..1400).size_bytes());
    }
}
