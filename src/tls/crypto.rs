//! The crypto seam: the steps an MPC backend will replace, and their local `ring` versions.

use super::codec::NamedGroup;
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

/// AEAD protection of records in one direction (TLS 1.2 AES-GCM, RFC 5288).
pub trait RecordCrypto: Send {
    /// Encrypt one record's plaintext. Returns the record payload:
    /// explicit_nonce(8) ‖ ciphertext ‖ tag(16).
    fn seal(&mut self, seq: u64, content_type: u8, version: u16, plaintext: &[u8]) -> Result<Vec<u8>, Error>;
    /// Decrypt one record payload (explicit_nonce ‖ ciphertext ‖ tag). Errors with
    /// [`PeerMisbehaved::BadRecordMac`] if authentication fails.
    fn open(&mut self, seq: u64, content_type: u8, version: u16, payload: &[u8]) -> Result<Vec<u8>, Error>;
}

/// Creates the [`RecordCrypto`] of one direction from the key block at ChangeCipherSpec.
/// The default is [`AesGcmRecordCrypto`]; a different backend can be plugged in through
/// [`crate::tls::ClientConfig::record_crypto`].
pub trait RecordCryptoFactory: Send + Sync + core::fmt::Debug {
    /// `client_write` is true for our sending direction.
    fn new_record_crypto(
        &self,
        suite: super::codec::CipherSuite,
        client_write: bool,
        key: &[u8],
        iv: &[u8; 4],
    ) -> Result<Box<dyn RecordCrypto>, Error>;
}

/// The default factory: local AES-GCM with `ring`.
#[derive(Debug, Default, Clone, Copy)]
pub struct RingRecordCryptoFactory;

impl RecordCryptoFactory for RingRecordCryptoFactory {
    fn new_record_crypto(
        &self,
        _suite: super::codec::CipherSuite,
        _client_write: bool,
        key: &[u8],
        iv: &[u8; 4],
    ) -> Result<Box<dyn RecordCrypto>, Error> {
        Ok(Box::new(AesGcmRecordCrypto::new(key, iv)?))
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

/// Local AES-128-GCM record protection with `ring`; the 8-byte explicit nonce is the record
/// sequence number (as rustls and OpenSSL do), nonce = implicit_iv(4) ‖ explicit(8).
pub struct AesGcmRecordCrypto {
    key: aead::LessSafeKey,
    iv: [u8; 4],
}

impl AesGcmRecordCrypto {
    pub fn new(key: &[u8], iv: &[u8; 4]) -> Result<Self, Error> {
        let alg = match key.len() {
            16 => &aead::AES_128_GCM,
            32 => &aead::AES_256_GCM,
            _ => return Err(Error::Crypto("bad AES key length")),
        };
        let key = aead::UnboundKey::new(alg, key).map_err(|_| Error::Crypto("AES key"))?;
        Ok(Self { key: aead::LessSafeKey::new(key), iv: *iv })
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
