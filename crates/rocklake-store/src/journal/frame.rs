//! Frames of a journal file: `length u32 | crc32 u32 | seq u64 | payload`,
//! big-endian, one per commit, written back to back from the file's start.
//!
//! The frame is hand-written (not a protobuf message) because recovery must
//! find where valid frames end in a file that may hold a torn write, zeroes
//! or an earlier round's frames: a fixed header with a checksum and an
//! increasing sequence number says that without decoding the payload. The
//! payload itself is a protobuf `JournalBatch`, sealed when the catalog is
//! encrypted.

/// Bytes of a frame's header.
pub(crate) const HEADER_BYTES: usize = 16;

/// Appends the frame of commit `seq` holding `payload` to `out`.
pub(crate) fn encode(seq: u64, payload: &[u8], out: &mut Vec<u8>) {
    let length = u32::try_from(payload.len()).expect("journal payloads are bounded");
    out.extend_from_slice(&length.to_be_bytes());
    out.extend_from_slice(&checksum(length, seq, payload).to_be_bytes());
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(payload);
}

fn checksum(length: u32, seq: u64, payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&length.to_be_bytes());
    hasher.update(&seq.to_be_bytes());
    hasher.update(payload);
    hasher.finalize()
}

/// The frames at the start of `file` as `(seq, payload)`, in order: up to
/// the first that is missing (zeroes), torn (its checksum fails or it runs
/// past the end) or not newer than the frame before it (a frame left from
/// before the writer wrapped around to the file's start).
pub(crate) fn scan(file: &[u8]) -> Vec<(u64, &[u8])> {
    let mut frames = Vec::new();
    let mut position = 0;
    let mut last_seq = None;
    while let Some(header) = file.get(position..position + HEADER_BYTES) {
        let length = u32::from_be_bytes(header[0..4].try_into().expect("4 bytes"));
        let crc = u32::from_be_bytes(header[4..8].try_into().expect("4 bytes"));
        let seq = u64::from_be_bytes(header[8..16].try_into().expect("8 bytes"));
        let start = position + HEADER_BYTES;
        let Some(payload) = file.get(start..start + length as usize) else {
            break;
        };
        if length == 0 || crc != checksum(length, seq, payload) {
            break;
        }
        if last_seq.is_some_and(|last| seq <= last) {
            break;
        }
        frames.push((seq, payload));
        last_seq = Some(seq);
        position = start + length as usize;
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn file_of(frames: &[(u64, Vec<u8>)], size: usize) -> Vec<u8> {
        let mut file = Vec::new();
        for (seq, payload) in frames {
            encode(*seq, payload, &mut file);
        }
        file.resize(size.max(file.len()), 0);
        file
    }

    #[test]
    fn frames_read_back_until_the_zeroes() {
        let frames = vec![(3, b"abc".to_vec()), (4, vec![7; 300]), (9, b"z".to_vec())];
        let file = file_of(&frames, 4096);
        let read: Vec<_> = scan(&file)
            .into_iter()
            .map(|(seq, payload)| (seq, payload.to_vec()))
            .collect();
        assert_eq!(read, frames);
    }

    #[test]
    fn a_frame_from_before_a_wrap_ends_the_scan() {
        // An earlier round wrote 10, 11, 12; the writer wrapped and wrote 20
        // over the start of it, ending inside frame 10's bytes or right at 11.
        let mut file = file_of(&[(10, vec![1; 5]), (11, vec![2; 5]), (12, vec![3; 5])], 256);
        let mut newer = Vec::new();
        encode(20, &[9; 5], &mut newer);
        file[..newer.len()].copy_from_slice(&newer);
        let read: Vec<_> = scan(&file).into_iter().map(|(seq, _)| seq).collect();
        assert_eq!(read, vec![20]);
    }

    proptest! {
        #[test]
        fn a_damaged_byte_never_yields_a_wrong_frame(
            payloads in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..64), 1..6),
            damage in any::<prop::sample::Index>(),
            flip in 1u8..=255,
        ) {
            let frames: Vec<(u64, Vec<u8>)> =
                payloads.into_iter().enumerate().map(|(i, p)| (i as u64 + 1, p)).collect();
            let mut file = file_of(&frames, 0);
            let at = damage.index(file.len());
            file[at] ^= flip;
            let read = scan(&file);
            // A prefix of the frames, each exactly as written, ending before
            // the damaged one.
            prop_assert!(read.len() < frames.len());
            for ((seq, payload), (want_seq, want)) in read.iter().zip(&frames) {
                prop_assert_eq!(seq, want_seq);
                prop_assert_eq!(*payload, want.as_slice());
            }
        }

        #[test]
        fn a_torn_tail_keeps_every_whole_frame(
            payloads in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..64), 1..6),
            cut in any::<prop::sample::Index>(),
        ) {
            let frames: Vec<(u64, Vec<u8>)> =
                payloads.into_iter().enumerate().map(|(i, p)| (i as u64 + 1, p)).collect();
            let file = file_of(&frames, 0);
            let cut = cut.index(file.len() + 1);
            let whole = {
                let mut end = 0;
                frames.iter().take_while(|(_, p)| { end += HEADER_BYTES + p.len(); end <= cut }).count()
            };
            prop_assert_eq!(scan(&file[..cut]).len(), whole);
        }
    }
}
