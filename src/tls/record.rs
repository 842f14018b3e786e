//! Record layer: per-direction protection state and record framing.

use super::codec::{MAX_PLAINTEXT, RECORD_HEADER_LEN, TLS12};
use super::crypto::{RecordCrypto, EXPLICIT_NONCE_LEN, TAG_LEN};
use super::error::{Error, PeerMisbehaved};
use super::transcript::{Direction, TranscriptRecord};

/// Protection state of one direction: `None` until ChangeCipherSpec, then AEAD + sequence.
#[derive(Default)]
pub struct DirectionState {
    pub crypto: Option<Box<dyn RecordCrypto>>,
    pub seq: u64,
}

impl DirectionState {
    /// Install new keys (at ChangeCipherSpec); the sequence number restarts at 0.
    pub fn install(&mut self, crypto: Box<dyn RecordCrypto>) {
        self.crypto = Some(crypto);
        self.seq = 0;
    }

    pub fn is_encrypting(&self) -> bool {
        self.crypto.is_some()
    }

    /// Build one outgoing record (plaintext ≤ 2^14) and its transcript entry.
    pub fn seal_record(
        &mut self,
        content_type: u8,
        plaintext: &[u8],
    ) -> Result<TranscriptRecord, Error> {
        debug_assert!(plaintext.len() <= MAX_PLAINTEXT);
        let (payload, seq) = match &mut self.crypto {
            Some(c) => {
                let seq = self.seq;
                let p = c.seal(seq, content_type, TLS12, plaintext)?;
                self.seq = self
                    .seq
                    .checked_add(1)
                    .ok_or(Error::Crypto("sequence overflow"))?;
                (p, Some(seq))
            }
            None => (plaintext.to_vec(), None),
        };
        let mut raw = Vec::with_capacity(RECORD_HEADER_LEN + payload.len());
        raw.push(content_type);
        raw.extend_from_slice(&TLS12.to_be_bytes());
        raw.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        raw.extend_from_slice(&payload);
        Ok(split_entry(
            Direction::Sent,
            content_type,
            TLS12,
            seq,
            raw,
            Some(plaintext.to_vec()),
        ))
    }

    /// Open one incoming record (`raw` = header ‖ payload). Returns the transcript entry (with
    /// plaintext) or the error together with an entry without plaintext.
    pub fn open_record(
        &mut self,
        content_type: u8,
        version: u16,
        raw: Vec<u8>,
    ) -> Result<TranscriptRecord, Box<(Error, TranscriptRecord)>> {
        match &mut self.crypto {
            None => {
                let pt = raw[RECORD_HEADER_LEN..].to_vec();
                let entry = split_entry(
                    Direction::Received,
                    content_type,
                    version,
                    None,
                    raw,
                    Some(pt),
                );
                if entry.ciphertext.len() > MAX_PLAINTEXT {
                    let mut e = entry;
                    e.plaintext = None;
                    return Err(Box::new((PeerMisbehaved::RecordOverflow.into(), e)));
                }
                Ok(entry)
            }
            Some(c) => {
                let seq = self.seq;
                let res = c.open(seq, content_type, version, &raw[RECORD_HEADER_LEN..]);
                let mut entry = split_entry(
                    Direction::Received,
                    content_type,
                    version,
                    Some(seq),
                    raw,
                    None,
                );
                match res {
                    Ok(pt) => {
                        self.seq += 1;
                        if pt.len() > MAX_PLAINTEXT {
                            return Err(Box::new((PeerMisbehaved::RecordOverflow.into(), entry)));
                        }
                        entry.plaintext = Some(pt);
                        Ok(entry)
                    }
                    Err(e) => Err(Box::new((e, entry))),
                }
            }
        }
    }
}

fn split_entry(
    direction: Direction,
    content_type: u8,
    version: u16,
    seq: Option<u64>,
    raw: Vec<u8>,
    plaintext: Option<Vec<u8>>,
) -> TranscriptRecord {
    let payload = &raw[RECORD_HEADER_LEN..];
    if seq.is_some() && payload.len() >= EXPLICIT_NONCE_LEN + TAG_LEN {
        let mut nonce = [0u8; 8];
        nonce.copy_from_slice(&payload[..EXPLICIT_NONCE_LEN]);
        let mut tag = [0u8; 16];
        tag.copy_from_slice(&payload[payload.len() - TAG_LEN..]);
        let ciphertext = payload[EXPLICIT_NONCE_LEN..payload.len() - TAG_LEN].to_vec();
        TranscriptRecord {
            direction,
            content_type,
            version,
            seq,
            explicit_nonce: Some(nonce),
            ciphertext,
            tag: Some(tag),
            plaintext,
            raw,
        }
    } else {
        TranscriptRecord {
            direction,
            content_type,
            version,
            seq,
            explicit_nonce: None,
            ciphertext: payload.to_vec(),
            tag: None,
            plaintext,
            raw,
        }
    }
}
