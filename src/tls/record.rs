//! Record layer: per-direction protection state and record framing.

use super::codec::{MAX_PLAINTEXT, RECORD_HEADER_LEN, TLS12};
use super::crypto::{RecordCrypto, EXPLICIT_NONCE_LEN, TAG_LEN};
use super::error::{Error, PeerMisbehaved};
use super::transcript::{Direction, TranscriptRecord};

/// Protection state of one direction: `None` until ChangeCipherSpec, then AEAD + sequence.
#[derive(Default)]
pub(crate) struct DirectionState {
    pub crypto: Option<Box<dyn RecordCrypto>>,
    /// The keys are held by two parties together (MPC mode): the caller seals outgoing
    /// records ([`Self::push_sealed`]); incoming ones are counted and kept as they arrived.
    pub sealed_elsewhere: bool,
    pub seq: u64,
    /// Bytes of explicit nonce each protected record carries (the installed AEAD's; AES-GCM's
    /// 8 where the keys are held elsewhere, MPC mode being AES-GCM only).
    nonce_len: usize,
}

impl DirectionState {
    /// Install new keys (at ChangeCipherSpec); the sequence number restarts at 0.
    pub(crate) fn install(&mut self, crypto: Box<dyn RecordCrypto>) {
        self.nonce_len = crypto.explicit_nonce_len();
        self.crypto = Some(crypto);
        self.seq = 0;
    }

    /// From ChangeCipherSpec on, records are protected under keys nobody here holds.
    pub(crate) fn install_sealed_elsewhere(&mut self) {
        self.sealed_elsewhere = true;
        self.nonce_len = EXPLICIT_NONCE_LEN;
        self.seq = 0;
    }

    fn next_seq(&mut self) -> Result<u64, Error> {
        let seq = self.seq;
        self.seq = seq.checked_add(1).ok_or(Error::Crypto("sequence overflow"))?;
        Ok(seq)
    }

    /// An outgoing record whose `payload` (explicit nonce ‖ ciphertext ‖ tag) was sealed by
    /// the caller under this direction's next sequence number; `plaintext` if the caller
    /// knows it.
    pub(crate) fn push_sealed(
        &mut self,
        content_type: u8,
        payload: &[u8],
        plaintext: Option<Vec<u8>>,
    ) -> Result<TranscriptRecord, Error> {
        if !self.sealed_elsewhere {
            return Err(Error::InvalidState("records are sealed here, not by the caller"));
        }
        if payload.len() < EXPLICIT_NONCE_LEN + TAG_LEN || payload.len() > MAX_PLAINTEXT + EXPLICIT_NONCE_LEN + TAG_LEN
        {
            return Err(Error::InvalidState(
                "a sealed record's body is nonce, at most 2^14 bytes of ciphertext, and tag",
            ));
        }
        let seq = self.next_seq()?;
        Ok(split_entry(
            Direction::Sent,
            content_type,
            TLS12,
            Some(seq),
            self.nonce_len,
            framed(content_type, payload),
            plaintext,
        ))
    }

    /// Build one outgoing record (plaintext ≤ 2^14) and its transcript entry.
    pub(crate) fn seal_record(&mut self, content_type: u8, plaintext: &[u8]) -> Result<TranscriptRecord, Error> {
        debug_assert!(plaintext.len() <= MAX_PLAINTEXT);
        if self.sealed_elsewhere {
            return Err(Error::InvalidState("the two-party backend seals this direction's records"));
        }
        let (payload, seq) = match &mut self.crypto {
            Some(c) => {
                let seq = self.seq;
                let p = c.seal(seq, content_type, TLS12, plaintext)?;
                self.next_seq()?;
                (p, Some(seq))
            }
            None => (plaintext.to_vec(), None),
        };
        Ok(split_entry(
            Direction::Sent,
            content_type,
            TLS12,
            seq,
            self.nonce_len,
            framed(content_type, &payload),
            Some(plaintext.to_vec()),
        ))
    }

    /// Open one incoming record (`raw` = header ‖ payload). Returns the transcript entry (with
    /// plaintext) or the error together with an entry without plaintext.
    pub(crate) fn open_record(
        &mut self,
        content_type: u8,
        version: u16,
        raw: Vec<u8>,
    ) -> Result<TranscriptRecord, Box<(Error, TranscriptRecord)>> {
        if self.sealed_elsewhere {
            let len = raw.len() - RECORD_HEADER_LEN;
            let entry =
                split_entry(Direction::Received, content_type, version, Some(self.seq), self.nonce_len, raw, None);
            if len < EXPLICIT_NONCE_LEN + TAG_LEN {
                return Err(Box::new((PeerMisbehaved::BadRecordMac.into(), entry)));
            }
            if len > MAX_PLAINTEXT + EXPLICIT_NONCE_LEN + TAG_LEN {
                return Err(Box::new((PeerMisbehaved::RecordOverflow.into(), entry)));
            }
            self.seq += 1;
            return Ok(entry);
        }
        match &mut self.crypto {
            None => {
                let pt = raw[RECORD_HEADER_LEN..].to_vec();
                let entry = split_entry(Direction::Received, content_type, version, None, 0, raw, Some(pt));
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
                let mut entry =
                    split_entry(Direction::Received, content_type, version, Some(seq), self.nonce_len, raw, None);
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

/// header ‖ payload of a TLS 1.2 record.
fn framed(content_type: u8, payload: &[u8]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(RECORD_HEADER_LEN + payload.len());
    raw.push(content_type);
    raw.extend_from_slice(&TLS12.to_be_bytes());
    raw.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    raw.extend_from_slice(payload);
    raw
}

fn split_entry(
    direction: Direction,
    content_type: u8,
    version: u16,
    seq: Option<u64>,
    nonce_len: usize,
    raw: Vec<u8>,
    plaintext: Option<Vec<u8>>,
) -> TranscriptRecord {
    let payload = &raw[RECORD_HEADER_LEN..];
    if seq.is_some() && payload.len() >= nonce_len + TAG_LEN {
        let nonce = payload.get(..EXPLICIT_NONCE_LEN).and_then(|n| n.try_into().ok()).filter(|_| nonce_len > 0);
        let mut tag = [0u8; 16];
        tag.copy_from_slice(&payload[payload.len() - TAG_LEN..]);
        let ciphertext = payload[nonce_len..payload.len() - TAG_LEN].to_vec();
        TranscriptRecord {
            direction,
            content_type,
            version,
            seq,
            explicit_nonce: nonce,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed_elsewhere() -> DirectionState {
        let mut d = DirectionState::default();
        d.install_sealed_elsewhere();
        d
    }

    #[test]
    fn records_sealed_elsewhere_are_kept_as_they_arrived_and_counted() {
        let mut d = sealed_elsewhere();
        for seq in 0..2 {
            let payload = [&7u64.to_be_bytes()[..], &[0xab; 5], &[0xcd; 16]].concat();
            let e = d.open_record(23, TLS12, framed(23, &payload)).expect("kept");
            assert_eq!(
                (e.seq, e.explicit_nonce, e.plaintext, e.ciphertext.len()),
                (Some(seq), Some(7u64.to_be_bytes()), None, 5)
            );
        }
        // Our own: only the caller seals them, with the direction's next sequence number.
        assert!(d.seal_record(23, b"hi").is_err());
        let e = d.push_sealed(23, &[0; 24 + 3], Some(b"abc".to_vec())).expect("a whole record");
        assert_eq!(e.seq, Some(2));
    }

    #[test]
    fn a_record_sealed_elsewhere_shorter_than_nonce_and_tag_or_over_two_to_the_fourteen_is_refused() {
        for (len, want) in
            [(23, PeerMisbehaved::BadRecordMac), (24 + MAX_PLAINTEXT + 1, PeerMisbehaved::RecordOverflow)]
        {
            let err = sealed_elsewhere().open_record(23, TLS12, framed(23, &vec![0; len])).expect_err("refused");
            assert_eq!(err.0, Error::from(want), "{len} bytes");
        }
        for len in [23, 24 + MAX_PLAINTEXT + 1] {
            assert!(sealed_elsewhere().push_sealed(23, &vec![0; len], None).is_err(), "{len} bytes");
        }
        assert!(DirectionState::default().push_sealed(23, &[0; 24], None).is_err(), "not before ChangeCipherSpec");
    }
}
