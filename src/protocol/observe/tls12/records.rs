//! The record layer of a recorded stream: plaintext records up to ChangeCipherSpec, then
//! encrypted ones, each bounded and checked for what may follow the Finished.

use super::*;
use crate::tls::codec::{self, hs, parse_record_header, HandshakeJoiner, MAX_PLAINTEXT, RECORD_HEADER_LEN};
use crate::tls::crypto::{aead_aad, EXPLICIT_NONCE_LEN, TAG_LEN};
use crate::tls::{Direction, PeerMisbehaved};

/// A record before ChangeCipherSpec (or the ChangeCipherSpec itself), as on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PlaintextRecord {
    pub content_type: u8,
    pub version: u16,
    pub payload: Vec<u8>,
}

/// A protected record after ChangeCipherSpec, split into its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncryptedRecord {
    /// Sequence number in its direction, from 0 after ChangeCipherSpec (0 is the Finished).
    pub seq: u64,
    pub content_type: u8,
    pub version: u16,
    /// The 8 bytes the record's nonce is made from beside the write IV: for AES-GCM the
    /// explicit nonce on the wire (nonce = salt ‖ these), for ChaCha20-Poly1305, which sends
    /// none, the sequence number (nonce = IV ⊕ 0^32 ‖ these, RFC 7905 §2).
    pub explicit_nonce: [u8; 8],
    /// Ciphertext without nonce and tag; as long as the plaintext.
    pub ciphertext: Vec<u8>,
    pub tag: [u8; 16],
}

impl EncryptedRecord {
    /// GCM additional data: seq(8) ‖ type(1) ‖ version(2) ‖ plaintext length(2)
    /// (RFC 5246 §6.2.3.3). The length fits in 16 bits: records are bounded when parsed.
    pub(crate) fn additional_data(&self) -> [u8; 13] {
        aead_aad(self.seq, self.content_type, self.version, self.ciphertext.len())
    }
}

/// One direction split into records, with its plaintext handshake messages.
pub(super) struct ParsedDirection {
    pub(super) records: DirectionRecords,
    /// The records after ChangeCipherSpec as on the wire (type, version, payload), split into
    /// [`DirectionRecords::encrypted`] by [`split_encrypted`] once the suite is known.
    pub(super) protected: Vec<(u8, u16, Vec<u8>)>,
    /// (type, raw message) before ChangeCipherSpec, HelloRequest excluded (never hashed).
    pub(super) messages: Vec<(u8, Vec<u8>)>,
}

pub(crate) fn map_tls(direction: Direction, e: crate::tls::Error) -> TranscriptError {
    match e {
        crate::tls::Error::PeerMisbehaved(p) => match p {
            PeerMisbehaved::UnknownContentType(content_type) => {
                TranscriptError::UnknownContentType { direction, content_type }
            }
            PeerMisbehaved::UnsupportedVersion(version) => {
                TranscriptError::UnsupportedRecordVersion { direction, version }
            }
            PeerMisbehaved::HandshakeMessageTooLarge(length) => {
                TranscriptError::HandshakeMessageTooLarge { direction, length }
            }
            other => TranscriptError::Tls { direction, source: other.into() },
        },
        other => TranscriptError::Tls { direction, source: other },
    }
}

pub(super) fn parse_direction(direction: Direction, stream: &[u8]) -> Result<ParsedDirection, TranscriptError> {
    let mut records = DirectionRecords::default();
    let mut messages = Vec::new();
    let mut joiner = HandshakeJoiner::default();
    let mut encrypted = false;
    let mut protected = Vec::new();
    let mut count = 0usize;
    let mut rest = stream;
    while !rest.is_empty() {
        let header = match parse_record_header(rest) {
            Ok(Some(h)) => h,
            Ok(None) => return Err(TranscriptError::Truncated { direction }),
            Err(crate::tls::Error::PeerMisbehaved(PeerMisbehaved::RecordOverflow)) => {
                let length = match rest.get(3..5) {
                    Some(l) => u16::from_be_bytes([l[0], l[1]]) as usize,
                    None => 0,
                };
                return Err(TranscriptError::RecordOverflow { direction, length });
            }
            Err(e) => return Err(map_tls(direction, e)),
        };
        let total = RECORD_HEADER_LEN + header.length;
        if rest.len() < total {
            return Err(TranscriptError::Truncated { direction });
        }
        count += 1;
        if count > MAX_RECORDS_PER_DIRECTION {
            return Err(TranscriptError::TooManyRecords { direction });
        }
        let payload = &rest[RECORD_HEADER_LEN..total];
        rest = &rest[total..];
        let content_type = header.content_type;
        if encrypted {
            if payload.len() > MAX_ENCRYPTED_PAYLOAD {
                return Err(TranscriptError::RecordOverflow { direction, length: payload.len() });
            }
            protected.push((content_type, header.version, payload.to_vec()));
            continue;
        }
        if payload.len() > MAX_PLAINTEXT {
            return Err(TranscriptError::RecordOverflow { direction, length: payload.len() });
        }
        if payload.is_empty() {
            // Zero-length application data is legal but not before CCS; reported below.
            if content_type != codec::ContentType::ApplicationData as u8 {
                return Err(TranscriptError::EmptyFragment { direction, content_type });
            }
        }
        if content_type != codec::ContentType::Handshake as u8 && !joiner.is_empty() {
            return Err(TranscriptError::InterleavedHandshakeFragment { direction });
        }
        match content_type {
            22 => {
                joiner.push(payload);
                while let Some((typ, msg)) = joiner.pop().map_err(|e| map_tls(direction, e))? {
                    if typ == hs::HELLO_REQUEST && direction == Direction::Received {
                        // Not hashed (RFC 5246 §7.4.1.1); ignored during a handshake.
                        if msg.len() != 4 {
                            return Err(TranscriptError::Tls {
                                direction,
                                source: crate::tls::error::decode("HelloRequest body"),
                            });
                        }
                        continue;
                    }
                    if messages.len() >= MAX_HANDSHAKE_MESSAGES {
                        return Err(TranscriptError::TooManyHandshakeMessages { direction });
                    }
                    messages.push((typ, msg));
                }
            }
            21 => {
                if payload.len() != 2 {
                    return Err(TranscriptError::BadAlert { direction });
                }
                if payload[0] != 1 {
                    return Err(TranscriptError::FatalAlert { direction, description: payload[1] });
                }
                // Warning alerts (e.g. unrecognized_name) are allowed during the handshake.
            }
            20 => {
                if payload != [1] {
                    return Err(TranscriptError::BadChangeCipherSpec { direction });
                }
                encrypted = true;
            }
            _ => return Err(TranscriptError::UnexpectedPlaintextRecord { direction, content_type }),
        }
        records.plaintext.push(PlaintextRecord { content_type, version: header.version, payload: payload.to_vec() });
    }
    if !joiner.is_empty() {
        return Err(TranscriptError::Truncated { direction });
    }
    let (ccs, fin) = match direction {
        Direction::Sent => ("client ChangeCipherSpec", "client Finished"),
        Direction::Received => ("server ChangeCipherSpec", "server Finished"),
    };
    if !encrypted {
        return Err(TranscriptError::MissingMessage(ccs));
    }
    if protected.is_empty() {
        return Err(TranscriptError::MissingMessage(fin));
    }
    Ok(ParsedDirection { records, protected, messages })
}

/// Splits a direction's protected records as `suite` frames them.
pub(super) fn split_encrypted(
    direction: Direction,
    suite: CipherSuite,
    parsed: &mut ParsedDirection,
) -> Result<(), TranscriptError> {
    let mut nonces = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(parsed.protected.len());
    for (content_type, version, payload) in std::mem::take(&mut parsed.protected) {
        // The sequence number is the record's position, never the prover-chosen explicit
        // nonce: a replayed, dropped or reordered record then fails its tag.
        let seq = out.len() as u64;
        let record = encrypted_record(direction, suite, seq, content_type, version, &payload)?;
        if !nonces.insert(record.explicit_nonce) {
            return Err(TranscriptError::RepeatedNonce { direction, seq });
        }
        out.push(record);
    }
    parsed.records.encrypted = out;
    Ok(())
}

pub(super) fn encrypted_record(
    direction: Direction,
    suite: CipherSuite,
    seq: u64,
    content_type: u8,
    version: u16,
    payload: &[u8],
) -> Result<EncryptedRecord, TranscriptError> {
    let length = payload.len();
    let nonce_len = suite.aead().explicit_nonce_len();
    if length < nonce_len + TAG_LEN {
        return Err(TranscriptError::EncryptedRecordTooShort { direction, seq, length });
    }
    if length > nonce_len + MAX_PLAINTEXT + TAG_LEN {
        return Err(TranscriptError::RecordOverflow { direction, length });
    }
    let ct_len = length - nonce_len - TAG_LEN;
    if seq == 0 {
        if content_type != codec::ContentType::Handshake as u8 {
            return Err(TranscriptError::FinishedNotHandshake { direction, content_type });
        }
        if ct_len != FINISHED_LEN {
            return Err(TranscriptError::BadFinishedLength { direction, length: ct_len });
        }
    } else {
        match content_type {
            23 => {}
            21 if ct_len == 2 => {}
            21 => return Err(TranscriptError::BadEncryptedAlertLength { direction, seq, length: ct_len }),
            _ => return Err(TranscriptError::DisallowedEncryptedRecord { direction, seq, content_type }),
        }
    }
    let mut explicit_nonce = seq.to_be_bytes();
    if nonce_len == EXPLICIT_NONCE_LEN {
        explicit_nonce.copy_from_slice(&payload[..EXPLICIT_NONCE_LEN]);
    }
    let mut tag = [0u8; 16];
    tag.copy_from_slice(&payload[length - TAG_LEN..]);
    Ok(EncryptedRecord {
        seq,
        content_type,
        version,
        explicit_nonce,
        ciphertext: payload[nonce_len..length - TAG_LEN].to_vec(),
        tag,
    })
}
