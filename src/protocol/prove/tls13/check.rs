//! The verifier's checks of TLS 1.3 application records (docs/protocol.md, "TLS 1.3 in proxy
//! mode", Records): every tag, every record's inner content type and padding, the revealed
//! bytes, and the records that are not application data (alerts, post-handshake messages),
//! which are always opened whole.
//!
//! A TLS 1.3 record's plaintext is content ‖ type ‖ zeros. On the ZK path the prover announces
//! each record's [`RecordShape`]; the proof opens the keystream of its type byte and padding,
//! and the verifier requires them to decrypt to that type and to zeros. The type is the last
//! nonzero byte, so a shape that puts the type byte anywhere but at the real one needs the
//! real type byte (nonzero) to decrypt to zero, or a zero to decrypt to the type: padding, a
//! handshake message or an alert cannot pass for application data.

use crate::protocol::disclose::output::RecordLayout;
use crate::protocol::prove::tls12::check::{
    check_nothing_after_close, gcm_tag, poly1305_tag, push_alert, CheckError, RecoveredDirection,
};
use crate::protocol::prove::tls13::OpenedRecords;
use crate::tls::codec::MAX_PLAINTEXT;
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

/// The inner content types a record under the application keys may have.
const APPLICATION_DATA: u8 = 23;
const ALERT: u8 = 21;
const HANDSHAKE: u8 = 22;
/// KeyUpdate's handshake type: the records after it are under other keys, which the proof
/// does not derive (docs/protocol.md: refused by design).
const KEY_UPDATE: u8 = 24;

/// Checks what the prover announced before anything is computed from it: at most as many
/// shapes as a direction may have records, none longer than a record's content can be.
pub(crate) fn check_announced(shapes: &[RecordShape]) -> Result<(), Check13Error> {
    if shapes.len() > crate::protocol::observe::tls12::MAX_RECORDS_PER_DIRECTION {
        return Err(Check13Error::TooManyShapes(shapes.len()));
    }
    match shapes.iter().position(|s| s.content_len > MAX_PLAINTEXT) {
        Some(record) => Err(Check13Error::ContentTooLong { record, content_len: shapes[record].content_len }),
        None => Ok(()),
    }
}

/// The application-data bytes of a sequence of records with these shapes.
pub(crate) fn app_len(shapes: &[RecordShape]) -> u64 {
    shapes.iter().filter(|s| s.content_type == APPLICATION_DATA).map(|s| s.content_len as u64).sum()
}

/// Where the application-data bytes of `ranges` lie: (record, byte positions in its
/// plaintext, increasing), records in order. The ranges must be sorted and disjoint.
pub(crate) fn app_positions(shapes: &[RecordShape], ranges: &[Range<u64>]) -> Vec<(usize, Vec<usize>)> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    for (i, shape) in shapes.iter().enumerate().filter(|(_, s)| s.content_type == APPLICATION_DATA) {
        let (start, end) = (offset, offset + shape.content_len as u64);
        let ps: Vec<usize> = ranges
            .iter()
            .filter(|r| r.start < end && r.end > start)
            .flat_map(|r| (r.start.max(start) - start) as usize..(r.end.min(end) - start) as usize)
            .collect();
        if !ps.is_empty() {
            out.push((i, ps));
        }
        offset = end;
    }
    out
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Check13Error {
    #[error("{records} records but {shapes} shapes announced")]
    ShapeCount { records: usize, shapes: usize },
    #[error("{0} record shapes announced, more than a direction may have")]
    TooManyShapes(usize),
    #[error("record {record}: a content of {content_len} bytes is more than a record holds")]
    ContentTooLong { record: usize, content_len: usize },
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
    /// E_K(J0) blocks (AES-GCM) or Poly1305 one-time keys (ChaCha20-Poly1305).
    #[error("{0} opened tag keys for {1} records")]
    TagKeyCount(usize, usize),
    #[error("the opened key does not fit the suite")]
    BadKey,
    #[error("record {record} has inner content type {found}: only application data, alerts and post-handshake messages follow the handshake")]
    UnexpectedContentType { record: usize, found: u8 },
    #[error("record {record} is an alert of {len} bytes")]
    BadAlertLength { record: usize, len: usize },
    /// The records after a KeyUpdate are under keys the proof does not derive.
    #[error("record {record} holds a KeyUpdate: sessions that update their keys are not proven")]
    KeyUpdate { record: usize },
    #[error(transparent)]
    Record(#[from] CheckError),
}

/// Byte positions to open per record: the revealed application-data bytes (`reveal` ranges
/// over the concatenated content of the records whose shape says application data), the whole
/// content of every other record (alerts, post-handshake messages), then each record's type
/// byte and padding. Both sides compute them from the announced shapes.
pub(crate) fn positions(
    records: &[Vec<u8>],
    shapes: &[RecordShape],
    reveal: &[Range<u64>],
) -> Result<Vec<(usize, Vec<usize>)>, Check13Error> {
    check_shapes(records, shapes)?;
    let total = app_len(shapes);
    if let Some(r) = reveal.iter().find(|r| r.end > total) {
        return Err(Check13Error::RevealOutOfBounds { start: r.start, end: r.end, len: total });
    }
    let mut revealed = app_positions(shapes, reveal).into_iter().peekable();
    let mut out = Vec::with_capacity(records.len());
    for (i, (record, shape)) in records.iter().zip(shapes).enumerate() {
        let mut ps = match revealed.next_if(|(r, _)| *r == i) {
            Some((_, ps)) => ps,
            None if shape.content_type != APPLICATION_DATA => (0..shape.content_len).collect(),
            None => Vec::new(),
        };
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

/// Reads a record that is not application data: an alert is recorded, a KeyUpdate refused.
fn other_record(
    direction: &'static str,
    record: usize,
    shape: &RecordShape,
    content: &[u8],
    alerts: &mut Vec<(usize, [u8; 2])>,
) -> Result<(), Check13Error> {
    match shape.content_type {
        ALERT => match content {
            [level, description] => Ok(push_alert(direction, alerts, record, [*level, *description])?),
            _ => Err(Check13Error::BadAlertLength { record, len: content.len() }),
        },
        // A record may hold several post-handshake messages; each is type ‖ 3-byte length ‖ body.
        HANDSHAKE => {
            let mut rest = content;
            while let [typ, a, b, c, tail @ ..] = rest {
                if *typ == KEY_UPDATE {
                    return Err(Check13Error::KeyUpdate { record });
                }
                let len = u32::from_be_bytes([0, *a, *b, *c]) as usize;
                rest = tail.get(len..).unwrap_or_default();
            }
            Ok(())
        }
        found => Err(Check13Error::UnexpectedContentType { record, found }),
    }
}

/// Checks one direction's application records (payloads: ciphertext ‖ tag, sequence numbers
/// from 0) with what the proof opened, and recovers its application data (hidden bytes 0),
/// the revealed ranges and its alerts. `reveal` must be canonical (checked by the caller).
pub(crate) fn recover(
    direction: &'static str,
    aead: AeadAlg,
    records: &[Vec<u8>],
    shapes: &[RecordShape],
    reveal: &[Range<u64>],
    opened: &OpenedRecords,
) -> Result<RecoveredDirection, Check13Error> {
    let positions = positions(records, shapes, reveal)?;
    let mut bytes = Vec::new();
    let mut alerts = Vec::new();
    let fast_path = match opened {
        OpenedRecords::Key { key, iv } => {
            let record_key =
                RecordKey::new(aead, &TrafficKeys::from_parts(key, *iv)).map_err(|_| Check13Error::BadKey)?;
            for (i, (record, shape)) in records.iter().zip(shapes).enumerate() {
                let inner = record_key.open(i as u64, record).map_err(|_| Check13Error::BadTag { record: i })?;
                if inner.content_type != shape.content_type {
                    return Err(Check13Error::WrongContentType {
                        record: i,
                        announced: shape.content_type,
                        found: inner.content_type,
                    });
                }
                if inner.content.len() != shape.content_len {
                    return Err(Check13Error::WrongContentLength {
                        record: i,
                        announced: shape.content_len,
                        found: inner.content.len(),
                    });
                }
                if shape.content_type == APPLICATION_DATA {
                    bytes.extend(inner.content);
                } else {
                    other_record(direction, i, shape, &inner.content, &mut alerts)?;
                }
            }
            true
        }
        OpenedRecords::Keystream { h, j0, keystream } => {
            if aead == AeadAlg::ChaCha20Poly1305 {
                return Err(Check13Error::BadKey);
            }
            if j0.len() != records.len() {
                return Err(Check13Error::TagKeyCount(j0.len(), records.len()));
            }
            let tag =
                |i: usize, record: &[u8], ciphertext: &[u8]| gcm_tag(h, &j0[i], &header(record.len()), ciphertext);
            read_opened(direction, records, shapes, &positions, keystream, tag, &mut bytes, &mut alerts)?;
            false
        }
        OpenedRecords::ChaChaKeystream { poly_keys, keystream } => {
            if aead != AeadAlg::ChaCha20Poly1305 {
                return Err(Check13Error::BadKey);
            }
            if poly_keys.len() != records.len() {
                return Err(Check13Error::TagKeyCount(poly_keys.len(), records.len()));
            }
            let tag = |i: usize, record: &[u8], ciphertext: &[u8]| {
                poly1305_tag(&poly_keys[i], &header(record.len()), ciphertext)
            };
            read_opened(direction, records, shapes, &positions, keystream, tag, &mut bytes, &mut alerts)?;
            false
        }
    };
    let alerts = check_nothing_after_close(direction, &alerts, records.len())?;
    // `positions` checked that each content ends before its record's last ciphertext byte.
    let layouts = records
        .iter()
        .zip(shapes)
        .map(|(r, s)| RecordLayout {
            content_len: s.content_len,
            content_type: s.content_type,
            padding: r.len() - TAG_LEN - s.content_len - 1,
        })
        .collect();
    Ok(RecoveredDirection { bytes, revealed: reveal.to_vec(), fast_path, alerts, records: layouts })
}

/// The ZK path's reading of a direction: each record's tag checked with `tag(record index,
/// record, ciphertext)` (from the opened tag keys), then the opened keystream bytes, one per
/// position, XOR the ciphertext: the revealed content into `bytes` (application data) or
/// `alerts`, the type byte and the padding checked where they were opened.
#[allow(clippy::too_many_arguments)]
fn read_opened(
    direction: &'static str,
    records: &[Vec<u8>],
    shapes: &[RecordShape],
    positions: &[(usize, Vec<usize>)],
    keystream: &[u8],
    tag: impl Fn(usize, &[u8], &[u8]) -> [u8; 16],
    bytes: &mut Vec<u8>,
    alerts: &mut Vec<(usize, [u8; 2])>,
) -> Result<(), Check13Error> {
    let expected: usize = positions.iter().map(|(_, ps)| ps.len()).sum();
    if keystream.len() != expected {
        return Err(Check13Error::KeystreamLength { opened: keystream.len(), expected });
    }
    let mut ks = keystream.iter();
    for ((i, ps), (record, shape)) in positions.iter().zip(records.iter().zip(shapes)) {
        let (ciphertext, record_tag) = record.split_at(record.len() - TAG_LEN);
        if tag(*i, record, ciphertext)[..] != *record_tag {
            return Err(Check13Error::BadTag { record: *i });
        }
        let start = bytes.len();
        let is_app = shape.content_type == APPLICATION_DATA;
        if is_app {
            bytes.resize(start + shape.content_len, 0);
        }
        let mut content = Vec::new();
        for &p in ps {
            // `positions` made every p < ciphertext.len(), and `ks` holds one byte each.
            let byte = ciphertext[p] ^ ks.next().copied().unwrap_or_default();
            if p < shape.content_len {
                if is_app {
                    bytes[start + p] = byte;
                } else {
                    content.push(byte);
                }
            } else if p == shape.content_len && byte != shape.content_type {
                return Err(Check13Error::WrongContentType { record: *i, announced: shape.content_type, found: byte });
            } else if p > shape.content_len && byte != 0 {
                return Err(Check13Error::PaddingNotZero { record: *i });
            }
        }
        if !is_app {
            other_record(direction, *i, shape, &content, alerts)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::codec::{ContentType, RECORD_HEADER_LEN};

    const KEY: [u8; 16] = [7; 16];
    const IV: [u8; 12] = [9; 12];

    /// Records (payloads) of (type, content) under the test key, and the honest shapes.
    fn sealed(records: &[(ContentType, &[u8])]) -> (Vec<Vec<u8>>, Vec<RecordShape>) {
        let key = RecordKey::new(AeadAlg::Aes128Gcm, &TrafficKeys::from_parts(&KEY, IV)).unwrap();
        let payloads = records
            .iter()
            .enumerate()
            .map(|(seq, (t, c))| key.seal(seq as u64, *t, c).unwrap()[RECORD_HEADER_LEN..].to_vec())
            .collect();
        let shapes =
            records.iter().map(|(t, c)| RecordShape { content_len: c.len(), content_type: *t as u8 }).collect();
        (payloads, shapes)
    }

    fn fast(records: &[(ContentType, &[u8])]) -> Result<RecoveredDirection, Check13Error> {
        let (payloads, shapes) = sealed(records);
        let total = app_len(&shapes);
        recover(
            "received",
            AeadAlg::Aes128Gcm,
            &payloads,
            &shapes,
            &[0..total],
            &OpenedRecords::Key { key: KEY.to_vec(), iv: IV },
        )
    }

    #[test]
    fn records_after_the_handshake_are_application_data_alerts_or_post_handshake_messages() {
        use ContentType::{Alert, ApplicationData, ChangeCipherSpec, Handshake};
        let ticket: &[u8] = &[4, 0, 0, 2, 0xaa, 0xbb];
        let d = fast(&[(Handshake, ticket), (ApplicationData, b"hello"), (Alert, &[1, 0])]).unwrap();
        assert_eq!(
            (d.bytes.as_slice(), d.alerts.as_slice(), d.fast_path),
            (&b"hello"[..], &[[1, 0]][..], true),
            "a ticket is no content"
        );
        let layout = |content_len, content_type| RecordLayout { content_len, content_type, padding: 0 };
        assert_eq!(d.records, [layout(6, 22), layout(5, 23), layout(2, 21)]);
        // Two messages in one record, the second a KeyUpdate: its records would be under keys
        // the proof does not derive.
        let key_update: &[u8] = &[4, 0, 0, 1, 0xaa, 24, 0, 0, 1, 0];
        assert_eq!(
            fast(&[(ApplicationData, b"x"), (Handshake, key_update)]).unwrap_err(),
            Check13Error::KeyUpdate { record: 1 }
        );
        assert_eq!(
            fast(&[(ChangeCipherSpec, &[1])]).unwrap_err(),
            Check13Error::UnexpectedContentType { record: 0, found: 20 }
        );
        assert_eq!(fast(&[(Alert, &[1, 0, 0])]).unwrap_err(), Check13Error::BadAlertLength { record: 0, len: 3 });
        assert!(matches!(
            fast(&[(Alert, &[3, 0])]),
            Err(Check13Error::Record(CheckError::BadAlertLevel { index: 0, level: 3, .. }))
        ));
        assert!(matches!(
            fast(&[(Alert, &[1, 0]), (ApplicationData, b"more")]),
            Err(Check13Error::Record(CheckError::DataAfterClose { index: 1, .. }))
        ));
    }

    #[test]
    fn the_zk_path_opens_other_records_whole_and_the_type_byte_and_padding_of_each() {
        use ContentType::{Alert, ApplicationData};
        let (payloads, shapes) = sealed(&[(ApplicationData, b"0123456789"), (Alert, &[1, 0])]);
        let got = positions(&payloads, &shapes, &[2..4]).unwrap();
        assert_eq!(got, vec![(0, vec![2, 3, 10]), (1, vec![0, 1, 2])]);
        assert_eq!(app_positions(&shapes, &[2..4, 9..10]), vec![(0, vec![2, 3, 9])]);
        // Nothing revealed: an application record opens its type byte alone, never its content.
        assert_eq!(positions(&payloads, &shapes, &[]).unwrap(), vec![(0, vec![10]), (1, vec![0, 1, 2])]);
    }

    /// What an honest ZK-path proof opens for `positions`, computed natively: H, every
    /// record's E_K(J0), and the keystream at the positions.
    fn opened_natively(records: &[Vec<u8>], positions: &[(usize, Vec<usize>)]) -> OpenedRecords {
        use aes::cipher::{BlockEncrypt, KeyInit};
        let aes = aes::Aes128::new(&KEY.into());
        let block = |seq: usize, counter: u32| {
            let mut b = aes::Block::default();
            b[..12].copy_from_slice(&crate::tls::tls13::record::nonce(&IV, seq as u64));
            b[12..].copy_from_slice(&counter.to_be_bytes());
            aes.encrypt_block(&mut b);
            <[u8; 16]>::from(b)
        };
        let mut h = aes::Block::default();
        aes.encrypt_block(&mut h);
        let j0 = (0..records.len()).map(|seq| block(seq, 1)).collect();
        let keystream = positions
            .iter()
            .flat_map(|(seq, ps)| ps.iter().map(|p| block(*seq, 2 + (p / 16) as u32)[p % 16]).collect::<Vec<u8>>())
            .collect();
        OpenedRecords::Keystream { h: h.into(), j0, keystream }
    }

    /// On the ZK path the type byte and every byte after it are opened: a shape that ends the
    /// content early must find the real content's bytes there, which are not its zeros.
    #[test]
    fn the_zk_path_refuses_a_shape_whose_padding_is_not_zeros() {
        use ContentType::ApplicationData;
        let (payloads, honest) = sealed(&[(ApplicationData, b"hello")]);
        let zk = |shapes: &[RecordShape], reveal: &[Range<u64>]| {
            let opened = opened_natively(&payloads, &positions(&payloads, shapes, reveal)?);
            recover("received", AeadAlg::Aes128Gcm, &payloads, shapes, reveal, &opened)
        };
        let d = zk(&honest, &[1..3]).unwrap();
        assert_eq!((d.bytes.as_slice(), d.fast_path), (&b"\0el\0\0"[..], false));
        // "hel" then the type byte 'l' (announced as such), then "o" and 23 as padding
        let early = [RecordShape { content_len: 3, content_type: b'l' }];
        assert_eq!(zk(&early, &[]).unwrap_err(), Check13Error::PaddingNotZero { record: 0 });
        // and a type byte announced at the real place with another type
        let other = [RecordShape { content_len: 5, content_type: 21 }];
        assert_eq!(
            zk(&other, &[]).unwrap_err(),
            Check13Error::WrongContentType { record: 0, announced: 21, found: 23 }
        );
    }

    /// Shapes that do not fit the records are refused before anything is opened.
    #[test]
    fn shapes_that_do_not_fit_the_records_are_refused() {
        use ContentType::ApplicationData;
        let (payloads, shapes) = sealed(&[(ApplicationData, b"0123456789")]);
        assert_eq!(positions(&payloads, &[], &[]), Err(Check13Error::ShapeCount { records: 1, shapes: 0 }));
        let at = |content_len, content_type| vec![RecordShape { content_len, content_type }];
        // the ciphertext is 10 bytes of content and the type byte: content ends before it
        assert_eq!(
            positions(&payloads, &at(11, 23), &[]),
            Err(Check13Error::ShapeOutOfRecord { record: 0, content_len: 11, ciphertext_len: 11 })
        );
        assert_eq!(positions(&payloads, &at(10, 0), &[]), Err(Check13Error::NoContentType { record: 0 }));
        assert_eq!(positions(&[vec![0; 15]], &at(0, 23), &[]), Err(Check13Error::RecordTooShort { record: 0 }));
        assert_eq!(
            positions(&payloads, &shapes, &[0..11]),
            Err(Check13Error::RevealOutOfBounds { start: 0, end: 11, len: 10 })
        );
    }

    /// Ranges over the application data of several records, one of them an alert between,
    /// map to each record's own positions.
    #[test]
    fn ranges_across_records_map_to_each_records_positions() {
        let shape = |content_len, content_type| RecordShape { content_len, content_type };
        let shapes =
            [shape(10, APPLICATION_DATA), shape(2, ALERT), shape(10, APPLICATION_DATA), shape(5, APPLICATION_DATA)];
        let got = app_positions(&shapes, &[2..4, 8..13, 19..25]);
        assert_eq!(got, vec![(0, vec![2, 3, 8, 9]), (2, vec![0, 1, 2, 9]), (3, vec![0, 1, 2, 3, 4])]);
        assert_eq!(app_len(&shapes), 25);
        assert_eq!(app_positions(&shapes, &[10..20]), vec![(2, (0..10).collect())]);
    }

    #[test]
    fn announced_shapes_are_bounded_before_use() {
        let one = RecordShape { content_len: 1, content_type: APPLICATION_DATA };
        assert_eq!(check_announced(&vec![one; crate::protocol::observe::tls12::MAX_RECORDS_PER_DIRECTION]), Ok(()));
        let many = vec![one; crate::protocol::observe::tls12::MAX_RECORDS_PER_DIRECTION + 1];
        assert_eq!(check_announced(&many), Err(Check13Error::TooManyShapes(many.len())));
        let long = RecordShape { content_len: MAX_PLAINTEXT + 1, content_type: APPLICATION_DATA };
        assert_eq!(
            check_announced(&[one, long]),
            Err(Check13Error::ContentTooLong { record: 1, content_len: MAX_PLAINTEXT + 1 })
        );
        assert_eq!(check_announced(&[RecordShape { content_len: MAX_PLAINTEXT, ..one }]), Ok(()));
    }
}
