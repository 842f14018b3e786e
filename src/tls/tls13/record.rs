//! TLS 1.3 record protection (RFC 8446 §5.2–5.3): the nonce is the IV XOR the record's
//! sequence number, the plaintext is content ‖ content type ‖ zero padding, and the record
//! header is the associated data.

use super::key_schedule::TrafficKeys;
use crate::tls::codec::{ContentType, MAX_PLAINTEXT, RECORD_HEADER_LEN, TLS12};
use crate::tls::error::{Error, PeerMisbehaved};
use ring::aead;
use zeroize::Zeroize;

/// The AEAD of a TLS 1.3 cipher suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AeadAlg {
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
}

impl AeadAlg {
    pub(crate) fn key_len(self) -> usize {
        match self {
            Self::Aes128Gcm => 16,
            Self::Aes256Gcm | Self::ChaCha20Poly1305 => 32,
        }
    }
    fn ring(self) -> &'static aead::Algorithm {
        match self {
            Self::Aes128Gcm => &aead::AES_128_GCM,
            Self::Aes256Gcm => &aead::AES_256_GCM,
            Self::ChaCha20Poly1305 => &aead::CHACHA20_POLY1305,
        }
    }
}

/// Tag length of every TLS 1.3 AEAD.
pub(crate) const TAG_LEN: usize = 16;
/// Most bytes an encrypted record may carry: 2^14 of inner plaintext + 256 (RFC 8446 §5.2).
pub(crate) const MAX_ENCRYPTED: usize = MAX_PLAINTEXT + 256;

/// The per-record nonce: the 12-byte IV XOR the sequence number, right-aligned.
pub(crate) fn nonce(iv: &[u8; 12], seq: u64) -> [u8; 12] {
    let mut n = *iv;
    for (b, s) in n[4..].iter_mut().zip(seq.to_be_bytes()) {
        *b ^= s;
    }
    n
}

/// A decrypted record: its real content type, its content, and how many zero bytes of
/// padding followed the type byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct InnerPlaintext {
    pub content_type: u8,
    pub content: Vec<u8>,
    pub padding: usize,
}

/// One direction's record key and IV.
pub(crate) struct RecordKey {
    key: aead::LessSafeKey,
    iv: [u8; 12],
}

impl Drop for RecordKey {
    fn drop(&mut self) {
        self.iv.zeroize();
    }
}

impl RecordKey {
    pub(crate) fn new(alg: AeadAlg, keys: &TrafficKeys) -> Result<Self, Error> {
        let key = aead::UnboundKey::new(alg.ring(), keys.key()).map_err(|_| Error::Crypto("AEAD key length"))?;
        Ok(Self { key: aead::LessSafeKey::new(key), iv: keys.iv })
    }

    /// The whole record (header ‖ ciphertext ‖ tag) for `content` of `content_type`, with no
    /// padding. The outer type is application data, as for every encrypted record.
    pub(crate) fn seal(&self, seq: u64, content_type: ContentType, content: &[u8]) -> Result<Vec<u8>, Error> {
        if content.len() > MAX_PLAINTEXT {
            return Err(Error::InvalidState("a record carries at most 2^14 bytes"));
        }
        let len = content.len() + 1 + TAG_LEN;
        let header = header(len);
        let mut record = Vec::with_capacity(RECORD_HEADER_LEN + len);
        record.extend_from_slice(&header);
        record.extend_from_slice(content);
        record.push(content_type as u8);
        let tag = self
            .key
            .seal_in_place_separate_tag(
                aead::Nonce::assume_unique_for_key(nonce(&self.iv, seq)),
                aead::Aad::from(header),
                &mut record[RECORD_HEADER_LEN..],
            )
            .map_err(|_| Error::Crypto("AEAD seal"))?;
        record.extend_from_slice(tag.as_ref());
        Ok(record)
    }

    /// Decrypt one encrypted record's payload (what follows its header) received as the
    /// `seq`-th of its direction, and split off the content type and padding.
    pub(crate) fn open(&self, seq: u64, payload: &[u8]) -> Result<InnerPlaintext, Error> {
        if payload.len() > MAX_ENCRYPTED {
            return Err(PeerMisbehaved::RecordOverflow.into());
        }
        if payload.len() < TAG_LEN + 1 {
            return Err(PeerMisbehaved::DecodeError("encrypted record shorter than its tag and type").into());
        }
        let mut buf = payload.to_vec();
        let plain_len = self
            .key
            .open_in_place(
                aead::Nonce::assume_unique_for_key(nonce(&self.iv, seq)),
                aead::Aad::from(header(payload.len())),
                &mut buf,
            )
            .map_err(|_| PeerMisbehaved::BadRecordMac)?
            .len();
        buf.truncate(plain_len);
        if plain_len > MAX_PLAINTEXT + 1 {
            return Err(PeerMisbehaved::RecordOverflow.into());
        }
        // The content type is the last nonzero byte; all after it is padding.
        let at = buf.iter().rposition(|&b| b != 0).ok_or(PeerMisbehaved::NoInnerContentType)?;
        let content_type = buf[at];
        let padding = plain_len - at - 1;
        buf.truncate(at);
        Ok(InnerPlaintext { content_type, content: buf, padding })
    }
}

/// The header of an encrypted record of `len` payload bytes: application data, legacy
/// version 0x0303.
pub(crate) fn header(len: usize) -> [u8; RECORD_HEADER_LEN] {
    let [v0, v1] = TLS12.to_be_bytes();
    let [l0, l1] = (len as u16).to_be_bytes();
    [ContentType::ApplicationData as u8, v0, v1, l0, l1]
}

#[cfg(test)]
mod tests {
    use super::super::key_schedule::{HashAlg, Secret};
    use super::*;

    fn h(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }
    fn rfc8448_keys(secret: &str) -> RecordKey {
        let keys = TrafficKeys::derive(HashAlg::Sha256, &Secret::from_slice(&h(secret)), 16);
        RecordKey::new(AeadAlg::Aes128Gcm, &keys).unwrap()
    }
    const PLAINTEXT: std::ops::Range<u8> = 0..0x32;

    // RFC 8448 §3: the application data records, the client's first (seq 0) and the server's
    // second (seq 1, after its NewSessionTicket), both carrying bytes 00..31.
    const CLIENT_AP: &str = "9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5";
    const SERVER_AP: &str = "a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643";
    const CLIENT_RECORD: &str = "17030300 43a23f7054b62c94d0affafe8228ba55cbefacea42f914aa66bcab3f2b9819a8a5b46b395bd54a9a20441e2b62974e1f5a6292a2977014bd1e3deae63aeebb21694915e4";
    const SERVER_RECORD: &str = "17030300 432e937e11ef4ac740e538ad36005fc4a46932fc3225d05f82aa1b36e30efaf97d90e6dffc602dcb501a59a8fcc49c4bf2e5f0a21c0047c2abf332540dd032e167c2955d";

    #[test]
    fn records_match_rfc8448s_application_data() {
        let content: Vec<u8> = PLAINTEXT.collect();
        assert_eq!(rfc8448_keys(CLIENT_AP).seal(0, ContentType::ApplicationData, &content).unwrap(), h(CLIENT_RECORD));
        assert_eq!(rfc8448_keys(SERVER_AP).seal(1, ContentType::ApplicationData, &content).unwrap(), h(SERVER_RECORD));
        let opened = rfc8448_keys(SERVER_AP).open(1, &h(SERVER_RECORD)[5..]).unwrap();
        assert_eq!(opened, InnerPlaintext { content_type: 23, content, padding: 0 });
    }

    #[test]
    fn a_tampered_record_or_wrong_sequence_number_is_a_bad_mac() {
        let key = rfc8448_keys(SERVER_AP);
        let mut payload = h(SERVER_RECORD)[5..].to_vec();
        assert_eq!(key.open(0, &payload), Err(PeerMisbehaved::BadRecordMac.into()));
        payload[3] ^= 1;
        assert_eq!(key.open(1, &payload), Err(PeerMisbehaved::BadRecordMac.into()));
    }

    #[test]
    fn padding_is_split_off_and_a_record_of_only_zeros_is_refused() {
        let keys = TrafficKeys::derive(HashAlg::Sha256, &Secret::from_slice(&[5; 32]), 16);
        let key = RecordKey::new(AeadAlg::Aes128Gcm, &keys).unwrap();
        // seal() never pads, so these inner plaintexts are sealed with ring directly.
        let raw = aead::LessSafeKey::new(aead::UnboundKey::new(&aead::AES_128_GCM, keys.key()).unwrap());
        let seal_inner = |seq: u64, inner: &[u8]| {
            let mut buf = inner.to_vec();
            let aad = aead::Aad::from(header(inner.len() + TAG_LEN));
            let tag = raw
                .seal_in_place_separate_tag(aead::Nonce::assume_unique_for_key(nonce(&keys.iv, seq)), aad, &mut buf)
                .unwrap();
            buf.extend_from_slice(tag.as_ref());
            buf
        };
        let opened = key.open(4, &seal_inner(4, &[1, 2, 0, 0x16, 0, 0, 0])).unwrap();
        assert_eq!(opened, InnerPlaintext { content_type: 0x16, content: vec![1, 2, 0], padding: 3 });
        assert_eq!(key.open(5, &seal_inner(5, &[0, 0, 0])), Err(PeerMisbehaved::NoInnerContentType.into()));
    }

    #[test]
    fn oversized_and_undersized_records_are_refused_before_decryption() {
        let key = rfc8448_keys(SERVER_AP);
        assert_eq!(key.open(0, &vec![0; MAX_ENCRYPTED + 1]), Err(PeerMisbehaved::RecordOverflow.into()));
        assert!(matches!(key.open(0, &[0; TAG_LEN]), Err(Error::PeerMisbehaved(PeerMisbehaved::DecodeError(_)))));
        assert!(key.seal(0, ContentType::ApplicationData, &vec![0; MAX_PLAINTEXT + 1]).is_err());
        assert_eq!(nonce(&[0; 12], 0x0102), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2]);
    }
}
