//! The crypto seam: the steps an MPC backend will replace, and their local `ring` versions.

use super::codec::{Aead12, NamedGroup};
use super::error::{Error, PeerMisbehaved};
use super::keys::PreMasterSecret;
use ring::{aead, agreement, rand};

/// Client side of one ECDHE exchange.
pub trait KeyExchange: Send {
    /// The group this share is on.
    fn group(&self) -> NamedGroup;
    /// Our public share as sent in ClientKeyExchange (uncompressed point / 32-byte X25519 key).
    fn public_key(&self) -> &[u8];
    /// Given the server's public share, produce the pre-master secret.
    fn complete(self: Box<Self>, server_public: &[u8]) -> Result<PreMasterSecret, Error>;
}

/// AEAD protection of records in one direction (TLS 1.2 AES-GCM, RFC 5288; ChaCha20-Poly1305,
/// RFC 7905).
pub trait RecordCrypto: Send {
    /// Bytes of explicit nonce before each record's ciphertext: 8 for AES-GCM, 0 for
    /// ChaCha20-Poly1305.
    fn explicit_nonce_len(&self) -> usize {
        EXPLICIT_NONCE_LEN
    }
    /// Encrypt one record's plaintext. Returns the record payload:
    /// explicit nonce ‖ ciphertext ‖ tag(16).
    fn seal(&mut self, seq: u64, content_type: u8, version: u16, plaintext: &[u8]) -> Result<Vec<u8>, Error>;
    /// Decrypt one record payload (explicit nonce ‖ ciphertext ‖ tag). Errors with
    /// [`PeerMisbehaved::BadRecordMac`] if authentication fails.
    fn open(&mut self, seq: u64, content_type: u8, version: u16, payload: &[u8]) -> Result<Vec<u8>, Error>;
}

/// Creates the [`RecordCrypto`] of one direction from the key block at ChangeCipherSpec.
/// The default is [`RingRecordCryptoFactory`]; a different backend can be plugged in through
/// [`crate::tls::ClientConfig::record_crypto`].
pub trait RecordCryptoFactory: Send + Sync + core::fmt::Debug {
    /// `client_write` is true for our sending direction; `key` and `iv` are the suite's
    /// lengths ([`Aead12::key_len`], [`Aead12::iv_len`]).
    fn new_record_crypto(
        &self,
        suite: super::codec::CipherSuite,
        client_write: bool,
        key: &[u8],
        iv: &[u8],
    ) -> Result<Box<dyn RecordCrypto>, Error>;
}

/// The default factory: local AES-GCM or ChaCha20-Poly1305 with `ring`.
#[derive(Debug, Default, Clone, Copy)]
pub struct RingRecordCryptoFactory;

impl RecordCryptoFactory for RingRecordCryptoFactory {
    fn new_record_crypto(
        &self,
        suite: super::codec::CipherSuite,
        _client_write: bool,
        key: &[u8],
        iv: &[u8],
    ) -> Result<Box<dyn RecordCrypto>, Error> {
        if key.len() != suite.aead().key_len() {
            return Err(Error::Crypto("write key length does not match the suite"));
        }
        match suite.aead() {
            Aead12::Aes128Gcm | Aead12::Aes256Gcm => Ok(Box::new(AesGcmRecordCrypto::new(key, iv)?)),
            Aead12::ChaCha20Poly1305 => Ok(Box::new(ChaCha20Poly1305RecordCrypto::new(key, iv)?)),
        }
    }
}

/// Local ECDHE with `ring` ephemeral keys (P-256 or X25519).
pub struct RingKeyExchange {
    group: NamedGroup,
    private: agreement::EphemeralPrivateKey,
    public: Vec<u8>,
}

impl RingKeyExchange {
    /// Generate a fresh ephemeral key on `group`.
    pub fn generate(group: NamedGroup) -> Result<Self, Error> {
        let rng = rand::SystemRandom::new();
        let alg = ring_alg(group);
        let private =
            agreement::EphemeralPrivateKey::generate(alg, &rng).map_err(|_| Error::Crypto("ECDHE key generation"))?;
        let public = private.compute_public_key().map_err(|_| Error::Crypto("ECDHE public key"))?.as_ref().to_vec();
        Ok(Self { group, private, public })
    }
}

fn ring_alg(group: NamedGroup) -> &'static agreement::Algorithm {
    match group {
        NamedGroup::Secp256r1 => &agreement::ECDH_P256,
        NamedGroup::X25519 => &agreement::X25519,
    }
}

impl KeyExchange for RingKeyExchange {
    fn group(&self) -> NamedGroup {
        self.group
    }
    fn public_key(&self) -> &[u8] {
        &self.public
    }
    fn complete(self: Box<Self>, server_public: &[u8]) -> Result<PreMasterSecret, Error> {
        let peer = agreement::UnparsedPublicKey::new(ring_alg(self.group), server_public);
        // ring validates the point (on-curve, not identity) and rejects all-zero X25519 output.
        agreement::agree_ephemeral(self.private, &peer, |k| PreMasterSecret::new(k.to_vec()))
            .map_err(|_| PeerMisbehaved::InvalidServerPublicKey.into())
    }
}

/// Local AES-GCM record protection with `ring` (a 16- or 32-byte key); the 8-byte explicit
/// nonce is the record sequence number (RFC 5288 §3 allows it, and it never repeats under one
/// key), nonce = implicit_iv(4) ‖ explicit(8).
pub struct AesGcmRecordCrypto {
    key: aead::LessSafeKey,
    iv: [u8; 4],
}

impl AesGcmRecordCrypto {
    /// `iv` is the 4-byte implicit salt.
    pub fn new(key: &[u8], iv: &[u8]) -> Result<Self, Error> {
        let alg = match key.len() {
            16 => &aead::AES_128_GCM,
            32 => &aead::AES_256_GCM,
            _ => return Err(Error::Crypto("bad AES key length")),
        };
        let iv: [u8; 4] = iv.try_into().map_err(|_| Error::Crypto("bad AES-GCM salt length"))?;
        let key = aead::UnboundKey::new(alg, key).map_err(|_| Error::Crypto("AES key"))?;
        Ok(Self { key: aead::LessSafeKey::new(key), iv })
    }
}

/// Local ChaCha20-Poly1305 record protection with `ring` (RFC 7905 §2): the nonce is the
/// 12-byte write IV XOR the sequence number left-padded to 12 bytes, and no nonce is sent.
pub struct ChaCha20Poly1305RecordCrypto {
    key: aead::LessSafeKey,
    iv: [u8; 12],
}

impl ChaCha20Poly1305RecordCrypto {
    pub fn new(key: &[u8], iv: &[u8]) -> Result<Self, Error> {
        let iv: [u8; 12] = iv.try_into().map_err(|_| Error::Crypto("bad ChaCha20-Poly1305 IV length"))?;
        let key = aead::UnboundKey::new(&aead::CHACHA20_POLY1305, key).map_err(|_| Error::Crypto("ChaCha20 key"))?;
        Ok(Self { key: aead::LessSafeKey::new(key), iv })
    }
}

/// RFC 7905's per-record nonce: `iv` XOR the sequence number, big-endian in the last 8 bytes.
pub(crate) fn chacha_nonce(iv: &[u8; 12], seq: u64) -> [u8; 12] {
    let mut nonce = *iv;
    for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
        *n ^= s;
    }
    nonce
}

impl RecordCrypto for ChaCha20Poly1305RecordCrypto {
    fn explicit_nonce_len(&self) -> usize {
        0
    }

    fn seal(&mut self, seq: u64, content_type: u8, version: u16, plaintext: &[u8]) -> Result<Vec<u8>, Error> {
        let aad = aead_aad(seq, content_type, version, plaintext.len());
        let mut out = Vec::with_capacity(plaintext.len() + TAG_LEN);
        out.extend_from_slice(plaintext);
        let nonce = aead::Nonce::assume_unique_for_key(chacha_nonce(&self.iv, seq));
        let tag = self
            .key
            .seal_in_place_separate_tag(nonce, aead::Aad::from(aad), &mut out)
            .map_err(|_| Error::Crypto("ChaCha20-Poly1305 seal"))?;
        out.extend_from_slice(tag.as_ref());
        Ok(out)
    }

    fn open(&mut self, seq: u64, content_type: u8, version: u16, payload: &[u8]) -> Result<Vec<u8>, Error> {
        if payload.len() < TAG_LEN {
            return Err(PeerMisbehaved::BadRecordMac.into());
        }
        let aad = aead_aad(seq, content_type, version, payload.len() - TAG_LEN);
        let mut body = payload.to_vec();
        let nonce = aead::Nonce::assume_unique_for_key(chacha_nonce(&self.iv, seq));
        let n = self
            .key
            .open_in_place(nonce, aead::Aad::from(aad), &mut body)
            .map_err(|_| Error::PeerMisbehaved(PeerMisbehaved::BadRecordMac))?
            .len();
        body.truncate(n);
        Ok(body)
    }
}

/// additional_data = seq ‖ type ‖ version ‖ plaintext length (RFC 5246 §6.2.3.3).
pub(crate) fn aead_aad(seq: u64, content_type: u8, version: u16, len: usize) -> [u8; 13] {
    let mut aad = [0u8; 13];
    aad[..8].copy_from_slice(&seq.to_be_bytes());
    aad[8] = content_type;
    aad[9..11].copy_from_slice(&version.to_be_bytes());
    aad[11..13].copy_from_slice(&(len as u16).to_be_bytes());
    aad
}

/// Explicit nonce length and GCM tag length.
pub(crate) const EXPLICIT_NONCE_LEN: usize = 8;
pub(crate) const TAG_LEN: usize = 16;

impl RecordCrypto for AesGcmRecordCrypto {
    fn seal(&mut self, seq: u64, content_type: u8, version: u16, plaintext: &[u8]) -> Result<Vec<u8>, Error> {
        let explicit = seq.to_be_bytes();
        let mut nonce = [0u8; 12];
        nonce[..4].copy_from_slice(&self.iv);
        nonce[4..].copy_from_slice(&explicit);
        let aad = aead_aad(seq, content_type, version, plaintext.len());
        let mut out = Vec::with_capacity(EXPLICIT_NONCE_LEN + plaintext.len() + TAG_LEN);
        out.extend_from_slice(&explicit);
        let mut body = plaintext.to_vec();
        let tag = self
            .key
            .seal_in_place_separate_tag(aead::Nonce::assume_unique_for_key(nonce), aead::Aad::from(aad), &mut body)
            .map_err(|_| Error::Crypto("AES-GCM seal"))?;
        out.extend_from_slice(&body);
        out.extend_from_slice(tag.as_ref());
        Ok(out)
    }

    fn open(&mut self, seq: u64, content_type: u8, version: u16, payload: &[u8]) -> Result<Vec<u8>, Error> {
        if payload.len() < EXPLICIT_NONCE_LEN + TAG_LEN {
            return Err(PeerMisbehaved::BadRecordMac.into());
        }
        let mut nonce = [0u8; 12];
        nonce[..4].copy_from_slice(&self.iv);
        nonce[4..].copy_from_slice(&payload[..EXPLICIT_NONCE_LEN]);
        let ct_len = payload.len() - EXPLICIT_NONCE_LEN - TAG_LEN;
        let aad = aead_aad(seq, content_type, version, ct_len);
        let mut body = payload[EXPLICIT_NONCE_LEN..].to_vec();
        let pt = self
            .key
            .open_in_place(aead::Nonce::assume_unique_for_key(nonce), aead::Aad::from(aad), &mut body)
            .map_err(|_| Error::PeerMisbehaved(PeerMisbehaved::BadRecordMac))?;
        let n = pt.len();
        body.truncate(n);
        Ok(body)
    }
}

/// Fill `out` with random bytes from the OS RNG (ring).
pub(crate) fn random_bytes(out: &mut [u8]) -> Result<(), Error> {
    use ring::rand::SecureRandom;
    rand::SystemRandom::new().fill(out).map_err(|_| Error::Crypto("rng"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_open_roundtrip_and_tamper() {
        let mut c = AesGcmRecordCrypto::new(&[9u8; 16], &[1, 2, 3, 4]).unwrap();
        let rec = c.seal(5, 23, 0x0303, b"hello").unwrap();
        assert_eq!(&rec[..8], &5u64.to_be_bytes());
        assert_eq!(c.open(5, 23, 0x0303, &rec).unwrap(), b"hello");
        // wrong seq (AAD) fails
        assert_eq!(c.open(6, 23, 0x0303, &rec), Err(PeerMisbehaved::BadRecordMac.into()));
        let mut bad = rec.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(c.open(5, 23, 0x0303, &bad), Err(PeerMisbehaved::BadRecordMac.into()));
        assert_eq!(c.open(5, 23, 0x0303, &rec[..10]), Err(PeerMisbehaved::BadRecordMac.into()));
    }

    /// RFC 7905 records against ring's CHACHA20_POLY1305 called directly with the nonce built
    /// here by hand (the IV XOR the sequence number padded to 12 bytes): the payload is
    /// ciphertext ‖ tag with no explicit nonce, the AAD TLS 1.2's.
    #[test]
    fn chacha20_poly1305_records_use_rfc7905_nonces_and_no_explicit_nonce() {
        let (key, iv) = ([0x42u8; 32], [7u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        let mut c = ChaCha20Poly1305RecordCrypto::new(&key, &iv).unwrap();
        let other = aead::LessSafeKey::new(aead::UnboundKey::new(&aead::CHACHA20_POLY1305, &key).unwrap());
        let msg = b"GET / HTTP/1.1\r\n";
        for seq in [0u64, 1, 0x0102_0304_0506_0708] {
            let rec = c.seal(seq, 23, 0x0303, msg).unwrap();
            let s = seq.to_be_bytes();
            let nonce = [7, 1, 2, 3, 4 ^ s[0], 5 ^ s[1], 6 ^ s[2], 7 ^ s[3], 8 ^ s[4], 9 ^ s[5], 10 ^ s[6], 11 ^ s[7]];
            let aad = [&s[..], &[23, 3, 3, 0, 16]].concat();
            let mut expected = msg.to_vec();
            other
                .seal_in_place_append_tag(
                    aead::Nonce::assume_unique_for_key(nonce),
                    aead::Aad::from(&aad[..]),
                    &mut expected,
                )
                .unwrap();
            assert_eq!(rec, expected, "seq {seq}");
            assert_eq!(c.open(seq, 23, 0x0303, &rec).unwrap(), msg);
            assert_eq!(c.open(seq + 1, 23, 0x0303, &rec), Err(PeerMisbehaved::BadRecordMac.into()));
            let mut bad = rec.clone();
            bad[0] ^= 1;
            assert_eq!(c.open(seq, 23, 0x0303, &bad), Err(PeerMisbehaved::BadRecordMac.into()));
        }
        assert_eq!(c.explicit_nonce_len(), 0);
        assert_eq!(c.open(0, 23, 0x0303, &[0; 15]), Err(PeerMisbehaved::BadRecordMac.into()));
        assert!(ChaCha20Poly1305RecordCrypto::new(&key, &[0; 4]).is_err(), "the IV is 12 bytes");
    }

    /// AES-256-GCM records as RFC 5288 frames them, against GCM computed here from the `aes`
    /// and `ghash` crates: CTR keystream from counter 2, tag GHASH ⊕ E_K(J0).
    #[test]
    fn aes256_gcm_records_match_gcm_from_independent_blocks() {
        use aes::cipher::{BlockEncrypt, KeyInit};
        let key = [0x24u8; 32];
        let mut c = AesGcmRecordCrypto::new(&key, &[9, 8, 7, 6]).unwrap();
        let rec = c.seal(3, 23, 0x0303, b"hello").unwrap();
        let aes = aes::Aes256::new((&key).into());
        let block = |counter: u32| {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&[9, 8, 7, 6]);
            b[4..12].copy_from_slice(&3u64.to_be_bytes());
            b[12..].copy_from_slice(&counter.to_be_bytes());
            let mut b = b.into();
            aes.encrypt_block(&mut b);
            <[u8; 16]>::from(b)
        };
        let mut h = [0u8; 16].into();
        aes.encrypt_block(&mut h);
        let ct: Vec<u8> = b"hello".iter().zip(block(2)).map(|(p, k)| p ^ k).collect();
        let tag = {
            use ghash::universal_hash::{KeyInit, UniversalHash};
            let mut g = ghash::GHash::new(&h);
            g.update_padded(&aead_aad(3, 23, 0x0303, 5));
            g.update_padded(&ct);
            let mut lens = [0u8; 16];
            lens[..8].copy_from_slice(&(13u64 * 8).to_be_bytes());
            lens[8..].copy_from_slice(&(5u64 * 8).to_be_bytes());
            g.update(&[lens.into()]);
            let t: [u8; 16] = g.finalize().into();
            let j0 = block(1);
            <[u8; 16]>::try_from(t.iter().zip(j0).map(|(a, b)| a ^ b).collect::<Vec<u8>>()).unwrap()
        };
        assert_eq!(rec, [&3u64.to_be_bytes()[..], &ct, &tag].concat());
        assert!(AesGcmRecordCrypto::new(&key, &[0; 12]).is_err(), "a salt is 4 bytes");
    }

    #[test]
    fn ecdhe_both_groups_agree() {
        for g in [NamedGroup::Secp256r1, NamedGroup::X25519] {
            let a = RingKeyExchange::generate(g).unwrap();
            let b = RingKeyExchange::generate(g).unwrap();
            let (pa, pb) = (a.public.clone(), b.public.clone());
            let s1 = Box::new(a).complete(&pb).unwrap();
            let s2 = Box::new(b).complete(&pa).unwrap();
            assert_eq!(s1, s2);
            assert!(Box::new(RingKeyExchange::generate(g).unwrap()).complete(&[4u8; 3]).is_err());
        }
    }
}
