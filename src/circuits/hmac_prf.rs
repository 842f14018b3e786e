//! HMAC-SHA256 (RFC 2104) and the TLS 1.2 PRF P_SHA256 (RFC 5246 §5) over authenticated bits.
//! The inner and outer key-pad compressions are computed once per key ([`HmacKey`]) and reused
//! by every HMAC call, also across batches.

use super::sha256::{compress, finish, initial_state, State};
use super::{constant_bytes, xor_bits};
use super::Circuit;

/// The states after absorbing K ⊕ ipad and K ⊕ opad.
pub struct HmacKey<B: Circuit> {
    pub inner: State<B>,
    pub outer: State<B>,
}

impl<B: Circuit> Clone for HmacKey<B> {
    fn clone(&self) -> Self {
        HmacKey { inner: self.inner, outer: self.outer }
    }
}

/// Precompute the pad states of a key of at most 64 bytes (2 compressions).
pub fn hmac_key<B: Circuit>(b: &mut B, key: &[B::Bit]) -> HmacKey<B> {
    assert!(key.len() % 8 == 0 && key.len() <= 512, "HMAC key must be at most 64 bytes");
    let mut padded = key.to_vec();
    while padded.len() < 512 {
        padded.push(b.constant(false));
    }
    let ipad = constant_bytes(b, &[0x36; 64]);
    let opad = constant_bytes(b, &[0x5c; 64]);
    let ki = xor_bits(b, &padded, &ipad);
    let ko = xor_bits(b, &padded, &opad);
    let iv = initial_state(b);
    let inner = compress(b, &iv, &ki);
    let outer = compress(b, &iv, &ko);
    HmacKey { inner, outer }
}

/// HMAC-SHA256(key, msg) → 32 bytes of bits.
pub fn hmac<B: Circuit>(b: &mut B, key: &HmacKey<B>, msg: &[B::Bit]) -> Vec<B::Bit> {
    let inner = finish(b, &key.inner, 64, msg);
    finish(b, &key.outer, 64, &inner)
}

/// P_SHA256(secret, seed) truncated to `out_len` bytes:
/// A(0) = seed, A(i) = HMAC(secret, A(i-1)), output = HMAC(A(1) ‖ seed) ‖ HMAC(A(2) ‖ seed) ‖ …
pub fn p_sha256<B: Circuit>(
    b: &mut B,
    key: &HmacKey<B>,
    seed: &[B::Bit],
    out_len: usize,
) -> Vec<B::Bit> {
    let mut out = Vec::with_capacity(out_len * 8 + 256);
    let mut a = hmac(b, key, seed);
    while out.len() < out_len * 8 {
        let mut msg = a.clone();
        msg.extend_from_slice(seed);
        out.extend(hmac(b, key, &msg));
        if out.len() < out_len * 8 {
            a = hmac(b, key, &a);
        }
    }
    out.truncate(out_len * 8);
    out
}

/// TLS 1.2 PRF(secret, label, seed) with a public label and seed: P_SHA256(secret, label ‖ seed).
pub fn tls12_prf<B: Circuit>(
    b: &mut B,
    key: &HmacKey<B>,
    label: &[u8],
    seed: &[u8],
    out_len: usize,
) -> Vec<B::Bit> {
    let mut ls = label.to_vec();
    ls.extend_from_slice(seed);
    let ls_bits = constant_bytes(b, &ls);
    p_sha256(b, key, &ls_bits, out_len)
}

/// TLS 1.2 key expansion: PRF(MS, "key expansion", server_random ‖ client_random).
pub fn tls12_key_block<B: Circuit>(
    b: &mut B,
    ms_key: &HmacKey<B>,
    server_random: &[u8; 32],
    client_random: &[u8; 32],
    out_len: usize,
) -> Vec<B::Bit> {
    let mut seed = server_random.to_vec();
    seed.extend_from_slice(client_random);
    tls12_prf(b, ms_key, b"key expansion", &seed, out_len)
}

/// TLS 1.2 Finished verify_data (12 bytes): PRF(MS, label, handshake_hash), label
/// "client finished" or "server finished".
pub fn tls12_verify_data<B: Circuit>(
    b: &mut B,
    ms_key: &HmacKey<B>,
    label: &[u8],
    handshake_hash: &[u8; 32],
) -> Vec<B::Bit> {
    tls12_prf(b, ms_key, label, handshake_hash, 12)
}

/// The public half of an HMAC key whose inner state was opened: the inner hash of any message
/// is then a public function both sides compute in the clear, and only the outer compression
/// (keyed by the still-private outer state) runs in ZK — 1 compression per HMAC instead of
/// 2+, and with a public message block, so its message schedule costs nothing.
///
/// Opening the inner state is safe for the same reason HMAC is a PRF: its proof treats the
/// inner and outer states as independent keys (compression keyed through its data input,
/// under the ipad/opad related keys), and with the inner state public the outputs are
/// F(outer, ·) on distinct single-block inputs, which stay pseudorandom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublicInner {
    state: [u32; 8],
}

impl PublicInner {
    /// From the opened state bytes (big-endian words, as [`super::sha256::state_to_bytes`]).
    pub fn from_bytes(bytes: &[u8; 32]) -> Self {
        PublicInner { state: core::array::from_fn(|i| u32::from_be_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]])) }
    }

    /// SHA-256 continued from the inner state (64 bytes already absorbed) over `msg`.
    pub fn inner_hash(&self, msg: &[u8]) -> [u8; 32] {
        let mut data = msg.to_vec();
        data.push(0x80);
        while data.len() % 64 != 56 {
            data.push(0);
        }
        data.extend_from_slice(&(((64 + msg.len()) as u64) * 8).to_be_bytes());
        let mut state = self.state;
        let blocks: Vec<sha2::digest::generic_array::GenericArray<u8, _>> =
            data.chunks(64).map(|c| *sha2::digest::generic_array::GenericArray::from_slice(c)).collect();
        sha2::compress256(&mut state, &blocks);
        let mut out = [0u8; 32];
        for (i, w) in state.iter().enumerate() {
            out[4 * i..4 * i + 4].copy_from_slice(&w.to_be_bytes());
        }
        out
    }
}

/// HMAC(key, msg) in ZK given the key's opened inner state: the outer compression only.
pub fn hmac_public_inner<B: Circuit>(b: &mut B, outer: &State<B>, inner: &PublicInner, msg: &[u8]) -> Vec<B::Bit> {
    let ih = constant_bytes(b, &inner.inner_hash(msg));
    finish(b, outer, 64, &ih)
}
