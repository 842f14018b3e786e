//! The verifier's checks of TLS 1.3 application records (docs/protocol.md, "TLS 1.3 in proxy
//! mode", Records): every tag, every record's inner content type and padding, and the
//! revealed bytes.
//!
//! A TLS 1.3 record's plaintext is content ‖ type ‖ zeros. On the ZK path the prover announces
//! each record's [`RecordShape`]; the proof opens the keystream of its type byte and padding,
//! and the verifier requires them to decrypt to that type and to zeros. The type is the last
//! nonzero byte, so a shape that puts the type byte anywhere but at the real one needs the
//! real type byte (nonzero) to decrypt to zero, or a zero to decrypt to the type: padding, a
//! handshake message or an alert cannot pass for application data.

use super::check::gcm_tag;
use super::proof13::OpenedRecords;
use crate::tls::tls13::record::{header, RecordKey, TAG_LEN};
use crate::tls::tls13::{AeadAlg, TrafficKeys};
use std::ops::Range;
use thiserror::Error;

/// What the prover announces of a record: where its content ends and its inner content type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RecordShape {
    pub content_len: usize,
    pub content_type: u8,
}

/// Application data's inner content type.
const APPLICATION_DATA: u8 = 23;

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Check13Error {
    #[error("{records} records but {shapes} shapes announced")]
    ShapeCount { records: usize, shapes: usize },
    #[error("record {record}: a content of {content_len} bytes does not fit its {ciphertext_len} bytes")]
    ShapeOutOfRecord { record: usize, content_len: usize, ciphertext_len: usize },
    #[error("record {record} is shorter than its tag")]
    RecordTooShort { record: usize },
    #[error("record {record}: bad authentication tag")]
    BadTag { record: usize },
    #[error("record {record}: the inner content type is {found}, not the {announced} announced")]
    WrongContentType { record: usize, announced: u8, found: u8 },
    #[error("record {record}: {found} bytes of content, not the {announced} announced")]
    WrongContentLength { record: usize, announced: usize, found: usize },
    #[error("record {record}: padding is not zeros")]
    PaddingNotZero { record: usize },
    #[error("record {record}: announced content type 0, which is padding")]
    NoContentType { record: usize },
    #[error("a reveal range {start}..{end} goes beyond the {len} bytes of application data")]
    RevealOutOfBounds { start: u64, end: u64, len: u64 },
    #[error("the proof opened {opened} keystream bytes, {expected} were asked for")]
    KeystreamLength { opened: usize, expected: usize },
    #[error("{0} E_K(J0) blocks for {1} records")]
    J0Count(usize, usize),
    #[error("the opened key does not fit the suite")]
    BadKey,
}

/// Byte positions to open per record: the revealed application-data bytes (`reveal` ranges
/// over the concatenated content of the records whose shape says application data), then each
/// record's type byte and padding. Both sides compute them from the announced shapes.
pub fn positions(records: &[Vec<u8>], shapes: &[RecordShape], reveal: &[Range<u64>]) -> Result<Vec<(usize, Vec<usize>)>, Check13Error> {
    check_shapes(records, shapes)?;
    let total: u64 = shapes.iter().filter(|s| s.content_type == APPLICATION_DATA).map(|s| s.content_len as u64).sum();
    if let Some(r) = reveal.iter().find(|r| r.end > total) {
        return Err(Check13Error::RevealOutOfBounds { start: r.start, end: r.end, len: total });
    }
    let mut out = Vec::with_capacity(records.len());
    let mut offset = 0u64;
    for (i, (record, shape)) in records.iter().zip(shapes).enumerate() {
        let mut ps = Vec::new();
        if shape.content_type == APPLICATION_DATA {
            let (start, end) = (offset, offset + shape.content_len as u64);
            for r in reveal.iter().filter(|r| r.start < end && r.end > start) {
                ps.extend((r.start.max(start) - start) as usize..(r.end.min(end) - start) as usize);
            }
            offset = end;
        }
        ps.extend(shape.content_len..record.len() - TAG_LEN);
        out.push((i, ps));
    }
    Ok(out)
}

fn check_shapes(records: &[Vec<u8>], shapes: &[RecordShape]) -> Result<(), Check13Error> {
    if records.len() != shapes.len() {
        return Err(Check13Error::ShapeCount { records: records.len(), shapes: shapes.len() });
    }
    for (i, (r, s)) in records.iter().zip(shapes).enumerate() {
        let ciphertext_len = r.len().checked_sub(TAG_LEN).ok_or(Check13Error::RecordTooShort { record: i })?;
        if s.content_len >= ciphertext_len {
            return Err(Check13Error::ShapeOutOfRecord { record: i, content_len: s.content_len, ciphertext_len });
        }
        if s.content_type == 0 {
            return Err(Check13Error::NoContentType { record: i });
        }
    }
    Ok(())
}

/// Checks one direction's application records (payloads: ciphertext ‖ tag, sequence numbers
/// from 0) with what the proof opened, and returns the revealed application-data bytes in
/// order (on the fast path: all of them).
pub fn recover(aead: AeadAlg, records: &[Vec<u8>], shapes: &[RecordShape], reveal: &[Range<u64>], opened: &OpenedRecords) -> Result<Vec<u8>, Check13Error> {
    let positions = positions(records, shapes, reveal)?;
    match opened {
        OpenedRecords::Key { key, iv } => {
            let record_key = RecordKey::new(aead, &TrafficKeys::from_parts(key, *iv)).map_err(|_| Check13Error::BadKey)?;
            let mut out = Vec::new();
            for (i, (record, shape)) in records.iter().zip(shapes).enumerate() {
                let inner = record_key.open(i as u64, record).map_err(|_| Check13Error::BadTag { record: i })?;
                if inner.content_type != shape.content_type {
                    return Err(Check13Error::WrongContentType { record: i, announced: shape.content_type, found: inner.content_type });
                }
                if inner.content.len() != shape.content_len {
                    return Err(Check13Error::WrongContentLength { record: i, announced: shape.content_len, found: inner.content.len() });
                }
                if shape.content_type == APPLICATION_DATA {
                    out.extend(inner.content);
                }
            }
            Ok(out)
        }
        OpenedRecords::Keystream { h, j0, keystream } => {
            if aead != AeadAlg::Aes128Gcm {
                return Err(Check13Error::BadKey);
            }
            if j0.len() != records.len() {
                return Err(Check13Error::J0Count(j0.len(), records.len()));
            }
            let expected: usize = positions.iter().map(|(_, ps)| ps.len()).sum();
            if keystream.len() != expected {
                return Err(Check13Error::KeystreamLength { opened: keystream.len(), expected });
            }
            let mut ks = keystream.iter();
            let mut out = Vec::new();
            for ((i, ps), (record, shape)) in positions.iter().zip(records.iter().zip(shapes)) {
                let (ciphertext, tag) = record.split_at(record.len() - TAG_LEN);
                if gcm_tag(h, &j0[*i], &header(record.len()), ciphertext)[..] != *tag {
                    return Err(Check13Error::BadTag { record: *i });
                }
                for &p in ps {
                    // `positions` made every p < ciphertext.len(), and `ks` holds one byte each.
                    let byte = ciphertext[p] ^ ks.next().copied().unwrap_or_default();
                    if p < shape.content_len {
                        out.push(byte);
                    } else if p == shape.content_len && byte != shape.content_type {
                        return Err(Check13Error::WrongContentType { record: *i, announced: shape.content_type, found: byte });
                    } else if p > shape.content_len && byte != 0 {
                        return Err(Check13Error::PaddingNotZero { record: *i });
                    }
                }
            }
            Ok(out)
        }
    }
}
