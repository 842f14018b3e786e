//! TLS 1.2 key schedule with the suite's PRF hash, SHA-256 or SHA-384 (RFC 5246 §5, §6.3,
//! §7.4.9, §8.1; RFC 5289 §3; RFC 7627 §4).
//!
//! All functions are pure, so a verifier or a ZK prover can recompute them from the exposed
//! inputs.

use super::codec::{CipherSuite, PrfHash};
use ring::{digest, hmac};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// The ECDHE pre-master secret (the x-coordinate / X25519 output). Zeroized on drop.
#[derive(Clone, Zeroize, ZeroizeOnDrop, PartialEq, Eq)]
pub struct PreMasterSecret(Vec<u8>);

impl PreMasterSecret {
    pub fn new(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl core::fmt::Debug for PreMasterSecret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("PreMasterSecret(..)")
    }
}

/// The 48-byte master secret. Zeroized on drop.
#[derive(Clone, Zeroize, ZeroizeOnDrop, PartialEq, Eq)]
pub struct MasterSecret(pub [u8; 48]);

impl core::fmt::Debug for MasterSecret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("MasterSecret(..)")
    }
}

/// An AES-128-GCM key block: write keys and 4-byte implicit IVs (salts). Zeroized on drop.
#[derive(Clone, Zeroize, ZeroizeOnDrop, PartialEq, Eq)]
pub struct KeyBlock {
    pub client_write_key: [u8; 16],
    pub server_write_key: [u8; 16],
    pub client_write_iv: [u8; 4],
    pub server_write_iv: [u8; 4],
}

impl core::fmt::Debug for KeyBlock {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("KeyBlock(..)")
    }
}

/// A key block split for any suite's AEAD (no MAC keys, RFC 5246 §6.3): write keys of
/// [`Aead12::key_len`](super::codec::Aead12::key_len) bytes and write IVs of
/// [`Aead12::iv_len`](super::codec::Aead12::iv_len) (the AES-GCM 4-byte salt, or
/// ChaCha20-Poly1305's 12-byte IV). Zeroized on drop.
#[derive(Clone, Zeroize, ZeroizeOnDrop, PartialEq, Eq)]
pub struct WriteKeys {
    pub client_write_key: Vec<u8>,
    pub server_write_key: Vec<u8>,
    pub client_write_iv: Vec<u8>,
    pub server_write_iv: Vec<u8>,
}

impl core::fmt::Debug for WriteKeys {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("WriteKeys(..)")
    }
}

impl AsRef<[u8]> for HandshakeHash {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// A handshake hash of the suite's PRF hash (32 or 48 bytes).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct HandshakeHash {
    bytes: [u8; 48],
    len: usize,
}

impl HandshakeHash {
    /// The hash of `parts` in order under `hash`.
    pub fn of<'a>(hash: PrfHash, parts: impl IntoIterator<Item = &'a [u8]>) -> Self {
        let mut ctx = digest::Context::new(ring_digest(hash));
        for p in parts {
            ctx.update(p);
        }
        Self::from_slice(ctx.finish().as_ref())
    }
    /// From 32 or 48 bytes (longer input is cut at 48).
    pub(crate) fn from_slice(h: &[u8]) -> Self {
        let len = h.len().min(48);
        let mut bytes = [0u8; 48];
        bytes[..len].copy_from_slice(&h[..len]);
        Self { bytes, len }
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
    /// A SHA-256 hash as its 32 bytes; `None` for a SHA-384 one.
    pub fn as_sha256(&self) -> Option<&[u8; 32]> {
        self.as_bytes().try_into().ok()
    }
}

fn ring_hmac(hash: PrfHash) -> hmac::Algorithm {
    match hash {
        PrfHash::Sha256 => hmac::HMAC_SHA256,
        PrfHash::Sha384 => hmac::HMAC_SHA384,
    }
}

pub(crate) fn ring_digest(hash: PrfHash) -> &'static digest::Algorithm {
    match hash {
        PrfHash::Sha256 => &digest::SHA256,
        PrfHash::Sha384 => &digest::SHA384,
    }
}

/// P_SHA256(secret, label ‖ seed) filling `out` (RFC 5246 §5).
#[cfg(test)]
pub(crate) fn prf(secret: &[u8], label: &[u8], seed: &[u8], out: &mut [u8]) {
    prf_with(PrfHash::Sha256, secret, label, seed, out)
}

/// P_hash(secret, label ‖ seed) filling `out` (RFC 5246 §5), hash the suite's (SHA-256, or
/// SHA-384 for the AES-256-GCM suites of RFC 5289).
pub(crate) fn prf_with(hash: PrfHash, secret: &[u8], label: &[u8], seed: &[u8], out: &mut [u8]) {
    let key = hmac::Key::new(ring_hmac(hash), secret);
    let mut label_seed = Vec::with_capacity(label.len() + seed.len());
    label_seed.extend_from_slice(label);
    label_seed.extend_from_slice(seed);
    // A(1) = HMAC(secret, A(0) = label‖seed)
    let mut a = hmac::sign(&key, &label_seed);
    let mut filled = 0;
    while filled < out.len() {
        let mut ctx = hmac::Context::with_key(&key);
        ctx.update(a.as_ref());
        ctx.update(&label_seed);
        let block = ctx.sign();
        let n = (out.len() - filled).min(block.as_ref().len());
        out[filled..filled + n].copy_from_slice(&block.as_ref()[..n]);
        filled += n;
        a = hmac::sign(&key, a.as_ref());
    }
}

/// master_secret = PRF(pms, "master secret", client_random ‖ server_random)[0..48], SHA-256.
pub fn master_secret(pms: &PreMasterSecret, client_random: &[u8; 32], server_random: &[u8; 32]) -> MasterSecret {
    master_secret_with(PrfHash::Sha256, pms, client_random, server_random)
}

/// master_secret = PRF(pms, "master secret", client_random ‖ server_random)[0..48] with the
/// suite's PRF hash.
pub fn master_secret_with(
    hash: PrfHash,
    pms: &PreMasterSecret,
    client_random: &[u8; 32],
    server_random: &[u8; 32],
) -> MasterSecret {
    let mut seed = [0u8; 64];
    seed[..32].copy_from_slice(client_random);
    seed[32..].copy_from_slice(server_random);
    let mut ms = [0u8; 48];
    prf_with(hash, pms.as_bytes(), b"master secret", &seed, &mut ms);
    let out = MasterSecret(ms);
    ms.zeroize();
    out
}

/// RFC 7627: master_secret = PRF(pms, "extended master secret", session_hash)[0..48], where
/// session_hash = SHA-256 of the handshake messages up to and including ClientKeyExchange.
pub fn extended_master_secret(pms: &PreMasterSecret, session_hash: &[u8]) -> MasterSecret {
    extended_master_secret_with(PrfHash::Sha256, pms, session_hash)
}

/// RFC 7627 with the suite's PRF hash, which is also the session hash's.
pub fn extended_master_secret_with(hash: PrfHash, pms: &PreMasterSecret, session_hash: &[u8]) -> MasterSecret {
    let mut ms = [0u8; 48];
    prf_with(hash, pms.as_bytes(), b"extended master secret", session_hash, &mut ms);
    let out = MasterSecret(ms);
    ms.zeroize();
    out
}

/// key_block = PRF(ms, "key expansion", server_random ‖ client_random) for an AES-128-GCM
/// suite: client key 16 ‖ server key 16 ‖ client IV 4 ‖ server IV 4.
pub fn key_block(ms: &MasterSecret, client_random: &[u8; 32], server_random: &[u8; 32]) -> KeyBlock {
    let k = key_block_of(CipherSuite::EcdheEcdsaAes128GcmSha256, ms, client_random, server_random);
    let mut out = KeyBlock {
        client_write_key: [0; 16],
        server_write_key: [0; 16],
        client_write_iv: [0; 4],
        server_write_iv: [0; 4],
    };
    out.client_write_key.copy_from_slice(&k.client_write_key);
    out.server_write_key.copy_from_slice(&k.server_write_key);
    out.client_write_iv.copy_from_slice(&k.client_write_iv);
    out.server_write_iv.copy_from_slice(&k.server_write_iv);
    out
}

/// The key block's length for `suite`: two keys and two IVs.
pub fn key_block_len(suite: CipherSuite) -> usize {
    2 * (suite.aead().key_len() + suite.aead().iv_len())
}

/// key_block = PRF(ms, "key expansion", server_random ‖ client_random) with the suite's PRF
/// hash, split client key ‖ server key ‖ client IV ‖ server IV at the suite's lengths.
pub fn key_block_of(
    suite: CipherSuite,
    ms: &MasterSecret,
    client_random: &[u8; 32],
    server_random: &[u8; 32],
) -> WriteKeys {
    let mut seed = [0u8; 64];
    seed[..32].copy_from_slice(server_random);
    seed[32..].copy_from_slice(client_random);
    let mut kb = zeroize::Zeroizing::new(vec![0u8; key_block_len(suite)]);
    prf_with(suite.prf_hash(), &ms.0, b"key expansion", &seed, &mut kb);
    let (k, v) = (suite.aead().key_len(), suite.aead().iv_len());
    WriteKeys {
        client_write_key: kb[..k].to_vec(),
        server_write_key: kb[k..2 * k].to_vec(),
        client_write_iv: kb[2 * k..2 * k + v].to_vec(),
        server_write_iv: kb[2 * k + v..2 * k + 2 * v].to_vec(),
    }
}

/// verify_data = PRF(ms, label, handshake_hash)[0..12], SHA-256; label is "client finished"
/// or "server finished".
pub fn verify_data(ms: &MasterSecret, label: &[u8], handshake_hash: &[u8]) -> [u8; 12] {
    verify_data_with(PrfHash::Sha256, ms, label, handshake_hash)
}

/// verify_data with the suite's PRF hash, over a handshake hash of that hash.
pub fn verify_data_with(hash: PrfHash, ms: &MasterSecret, label: &[u8], handshake_hash: &[u8]) -> [u8; 12] {
    let mut out = [0u8; 12];
    prf_with(hash, &ms.0, label, handshake_hash, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// Published TLS 1.2 PRF (SHA-256) test vector (from the IETF TLS WG mailing list, as
    /// used by many TLS libraries' test suites).
    #[test]
    fn prf_sha256_known_answer() {
        let secret = hex("9bbe436ba940f017b17652849a71db35");
        let seed = hex("a0ba9f936cda311827a6f796ffd5198c");
        let expected = hex(concat!(
            "e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a6b301791e90d35c9c9a46b4e14baf9af",
            "0fa022f7077def17abfd3797c0564bab4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff701",
            "87347b66"
        ));
        let mut out = vec![0u8; expected.len()];
        prf(&secret, b"test label", &seed, &mut out);
        assert_eq!(out, expected);
    }

    /// Published TLS 1.2 PRF (SHA-384) test vector, from the same set as the SHA-256 one.
    #[test]
    fn prf_sha384_known_answer() {
        let secret = hex("b80b733d6ceefcdc71566ea48e5567df");
        let seed = hex("cd665cf6a8447dd6ff8b27555edb7465");
        let expected = hex(concat!(
            "7b0c18e9ced410ed1804f2cfa34a336a1c14dffb4900bb5fd7942107e81c83cde9ca0faa60be9fe34f82b1233c9146a0",
            "e534cb400fed2700884f9dc236f80edd8bfa961144c9e8d792eca722a7b32fc3d416d473ebc2c5fd4abfdad05d918425",
            "9b5bf8cd4d90fa0d31e2dec479e4f1a26066f2eea9a69236a3e52655c9e9aee691c8f3a26854308d5eaa3be85e099070",
            "3d73e56f"
        ));
        let mut out = vec![0u8; expected.len()];
        prf_with(PrfHash::Sha384, &secret, b"test label", &seed, &mut out);
        assert_eq!(out, expected);
    }

    /// HMAC-SHA384 written out over the `sha2` crate (RFC 2104), independent of ring's.
    fn hmac_sha384(key: &[u8], msg: &[u8]) -> Vec<u8> {
        use sha2::{Digest, Sha384};
        let mut k = [0u8; 128];
        k[..key.len()].copy_from_slice(key);
        let pad = |byte: u8| k.iter().map(|x| x ^ byte).collect::<Vec<u8>>();
        let inner = Sha384::new().chain_update(pad(0x36)).chain_update(msg).finalize();
        Sha384::new().chain_update(pad(0x5c)).chain_update(inner).finalize().to_vec()
    }

    /// P_SHA384 and the AES-256-GCM suites' key schedule against P_hash written out here over
    /// an independent HMAC: master secret, extended master secret, a 72-byte key block split
    /// 32 ‖ 32 ‖ 4 ‖ 4, and verify_data over a 48-byte handshake hash.
    #[test]
    fn the_sha384_key_schedule_matches_p_hash_over_an_independent_hmac() {
        let p_hash = |secret: &[u8], label_seed: &[u8], n: usize| {
            let (mut a, mut out) = (label_seed.to_vec(), Vec::new());
            while out.len() < n {
                a = hmac_sha384(secret, &a);
                out.extend(hmac_sha384(secret, &[&a[..], label_seed].concat()));
            }
            out.truncate(n);
            out
        };
        let pms = PreMasterSecret::new((0..32).collect());
        let (cr, sr) = ([3u8; 32], [4u8; 32]);
        let ms = master_secret_with(PrfHash::Sha384, &pms, &cr, &sr);
        assert_eq!(ms.0.to_vec(), p_hash(pms.as_bytes(), &[&b"master secret"[..], &cr, &sr].concat(), 48));
        let session_hash = [9u8; 48];
        let ems = extended_master_secret_with(PrfHash::Sha384, &pms, &session_hash);
        assert_eq!(
            ems.0.to_vec(),
            p_hash(pms.as_bytes(), &[&b"extended master secret"[..], &session_hash].concat(), 48)
        );
        let suite = CipherSuite::EcdheRsaAes256GcmSha384;
        let kb = key_block_of(suite, &ms, &cr, &sr);
        let raw = p_hash(&ms.0, &[&b"key expansion"[..], &sr, &cr].concat(), 72);
        assert_eq!(
            [&kb.client_write_key[..], &kb.server_write_key, &kb.client_write_iv, &kb.server_write_iv].concat(),
            raw
        );
        let vd = verify_data_with(PrfHash::Sha384, &ms, b"client finished", &session_hash);
        assert_eq!(vd.to_vec(), p_hash(&ms.0, &[&b"client finished"[..], &session_hash].concat(), 12));
        // ChaCha20-Poly1305's key block: 88 bytes of P_SHA256, split 32 ‖ 32 ‖ 12 ‖ 12
        let kb = key_block_of(CipherSuite::EcdheEcdsaChaCha20Poly1305Sha256, &ms, &cr, &sr);
        let mut raw = [0u8; 88];
        prf(&ms.0, b"key expansion", &[&sr[..], &cr].concat(), &mut raw);
        assert_eq!((kb.client_write_iv.len(), kb.server_write_key.len()), (12, 32));
        assert_eq!(
            [&kb.client_write_key[..], &kb.server_write_key, &kb.client_write_iv, &kb.server_write_iv].concat(),
            raw
        );
    }

    #[test]
    fn key_block_layout_matches_prf() {
        let ms = MasterSecret([7u8; 48]);
        let cr = [1u8; 32];
        let sr = [2u8; 32];
        let kb = key_block(&ms, &cr, &sr);
        let mut seed = sr.to_vec();
        seed.extend_from_slice(&cr);
        let mut raw = [0u8; 40];
        prf(&ms.0, b"key expansion", &seed, &mut raw);
        assert_eq!(kb.client_write_key, raw[..16]);
        assert_eq!(kb.server_write_key, raw[16..32]);
        assert_eq!(kb.client_write_iv, raw[32..36]);
        assert_eq!(kb.server_write_iv, raw[36..40]);
    }
}
