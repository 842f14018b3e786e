//! HMAC-SHA256 (RFC 2104) and the TLS 1.2 PRF P_SHA256 (RFC 5246 §5) over authenticated bits.
//! The inner and outer key-pad compressions are computed once per key ([`HmacKey`]) and reused
//! by every HMAC call, also across batches. HMAC-SHA384 (TLS 1.3's TLS_AES_256_GCM_SHA384) only
//! in its opened-inner form ([`hmac_pad_states`], [`hmac_public_inner_with`]).

use super::sha256::{compress, finish, initial_state, State};
use super::Circuit;
use super::{constant_bytes, sha2, sha384, xor_bits};

/// The SHA-2 function under an HMAC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sha2 {
    Sha256,
    Sha384,
}

impl Sha2 {
    /// Bytes a compression absorbs (an HMAC key pad is one block).
    pub(crate) fn block_len(self) -> usize {
        match self {
            Sha2::Sha256 => 64,
            Sha2::Sha384 => sha384::BLOCK_LEN,
        }
    }

    /// Bytes of a chaining state's encoding (eight words).
    pub(crate) fn state_len(self) -> usize {
        match self {
            Sha2::Sha256 => 32,
            Sha2::Sha384 => 64,
        }
    }

    /// Bytes of a digest (and of an HMAC).
    pub(crate) fn output_len(self) -> usize {
        match self {
            Sha2::Sha256 => 32,
            Sha2::Sha384 => sha384::OUTPUT_LEN,
        }
    }
}

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

/// The pad states (inner, outer) of a key of at most one block, as the hash's state
/// encodings ([`super::sha256::state_to_bytes`], [`super::sha384::state_to_bytes`]): two
/// compressions.
pub(crate) fn hmac_pad_states<B: Circuit>(b: &mut B, hash: Sha2, key: &[B::Bit]) -> (Vec<B::Bit>, Vec<B::Bit>) {
    match hash {
        Sha2::Sha256 => {
            let k = hmac_key(b, key);
            (super::sha256::state_to_bytes::<B>(&k.inner), super::sha256::state_to_bytes::<B>(&k.outer))
        }
        Sha2::Sha384 => {
            let block = 8 * sha384::BLOCK_LEN;
            assert!(key.len() % 8 == 0 && key.len() <= block, "HMAC key must be at most one block");
            let mut padded = key.to_vec();
            padded.resize(block, b.constant(false));
            let iv = sha384::initial_state(b);
            let mut pad = |byte: u8| {
                let masked = xor_bits(b, &padded, &constant_bytes(b, &[byte; sha384::BLOCK_LEN]));
                sha384::state_to_bytes::<B>(&sha384::compress(b, &iv, &masked))
            };
            (pad(0x36), pad(0x5c))
        }
    }
}

/// HMAC-SHA256(key, msg) → 32 bytes of bits.
pub fn hmac<B: Circuit>(b: &mut B, key: &HmacKey<B>, msg: &[B::Bit]) -> Vec<B::Bit> {
    let inner = finish(b, &key.inner, 64, msg);
    finish(b, &key.outer, 64, &inner)
}

/// P_SHA256(secret, seed) truncated to `out_len` bytes:
/// A(0) = seed, A(i) = HMAC(secret, A(i-1)), output = HMAC(A(1) ‖ seed) ‖ HMAC(A(2) ‖ seed) ‖ …
pub fn p_sha256<B: Circuit>(b: &mut B, key: &HmacKey<B>, seed: &[B::Bit], out_len: usize) -> Vec<B::Bit> {
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
pub(crate) fn tls12_prf<B: Circuit>(
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
pub(crate) struct PublicInner {
    hash: Sha2,
    /// The chaining state's words (SHA-256's in the low 32 bits).
    state: [u64; 8],
}

impl PublicInner {
    /// A SHA-256 inner state from its opened bytes (big-endian words, as
    /// [`super::sha256::state_to_bytes`]).
    pub(crate) fn from_bytes(bytes: &[u8; 32]) -> Self {
        PublicInner {
            hash: Sha2::Sha256,
            state: core::array::from_fn(|i| {
                u32::from_be_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]]).into()
            }),
        }
    }

    /// An inner state of `hash` from its opened bytes, `None` unless they are
    /// [`Sha2::state_len`] long.
    pub(crate) fn from_state(hash: Sha2, bytes: &[u8]) -> Option<Self> {
        match hash {
            Sha2::Sha256 => Some(Self::from_bytes(bytes.try_into().ok()?)),
            Sha2::Sha384 => {
                let bytes: &[u8; 64] = bytes.try_into().ok()?;
                Some(PublicInner {
                    hash,
                    state: core::array::from_fn(|i| u64::from_be_bytes(core::array::from_fn(|k| bytes[8 * i + k]))),
                })
            }
        }
    }

    /// The hash continued from the inner state (one block already absorbed) over `msg`: the
    /// inner hash, [`Sha2::output_len`] bytes.
    pub(crate) fn inner_hash(&self, msg: &[u8]) -> Vec<u8> {
        let block = self.hash.block_len();
        let length_bytes = block / 8;
        let mut data = msg.to_vec();
        data.push(0x80);
        while data.len() % block != block - length_bytes {
            data.push(0);
        }
        data.extend_from_slice(&(((block + msg.len()) as u128) * 8).to_be_bytes()[16 - length_bytes..]);
        let mut out = Vec::with_capacity(64);
        match self.hash {
            Sha2::Sha256 => {
                let mut state: [u32; 8] = self.state.map(|w| w as u32);
                let blocks: Vec<::sha2::digest::generic_array::GenericArray<u8, _>> =
                    data.chunks(64).map(|c| *::sha2::digest::generic_array::GenericArray::from_slice(c)).collect();
                ::sha2::compress256(&mut state, &blocks);
                state.iter().for_each(|w| out.extend_from_slice(&w.to_be_bytes()));
            }
            Sha2::Sha384 => {
                let mut state = self.state;
                let blocks: Vec<::sha2::digest::generic_array::GenericArray<u8, _>> =
                    data.chunks(128).map(|c| *::sha2::digest::generic_array::GenericArray::from_slice(c)).collect();
                ::sha2::compress512(&mut state, &blocks);
                state.iter().for_each(|w| out.extend_from_slice(&w.to_be_bytes()));
            }
        }
        out.truncate(self.hash.output_len());
        out
    }
}

/// The pad states (inner, outer) of a key of at most one block, computed in the clear, in the
/// encodings [`hmac_pad_states`] gives: for a prover that commits to a key's pad states
/// instead of the key. Wiped when dropped.
pub(crate) fn native_pad_states(hash: Sha2, key: &[u8]) -> [zeroize::Zeroizing<Vec<u8>>; 2] {
    use ::sha2::digest::generic_array::GenericArray;
    use zeroize::Zeroizing;
    let block = hash.block_len();
    assert!(key.len() <= block, "HMAC key must be at most one block");
    [0x36u8, 0x5c].map(|pad| {
        let mut padded = Zeroizing::new(vec![pad; block]);
        padded.iter_mut().zip(key).for_each(|(p, k)| *p ^= k);
        let mut out = Zeroizing::new(Vec::with_capacity(hash.state_len()));
        match hash {
            Sha2::Sha256 => {
                let mut state = Zeroizing::new(super::sha256::IV);
                ::sha2::compress256(&mut state, &[*GenericArray::from_slice(&padded)]);
                state.iter().for_each(|w| out.extend_from_slice(&w.to_be_bytes()));
            }
            Sha2::Sha384 => {
                let mut state = Zeroizing::new(sha384::IV);
                ::sha2::compress512(&mut state, &[*GenericArray::from_slice(&padded)]);
                state.iter().for_each(|w| out.extend_from_slice(&w.to_be_bytes()));
            }
        }
        out
    })
}

/// HMAC-SHA256(key, msg) in ZK given the key's opened inner state: the outer compression only.
pub(crate) fn hmac_public_inner<B: Circuit>(
    b: &mut B,
    outer: &State<B>,
    inner: &PublicInner,
    msg: &[u8],
) -> Vec<B::Bit> {
    assert_eq!(inner.hash, Sha2::Sha256, "a SHA-256 outer state");
    let ih = constant_bytes(b, &inner.inner_hash(msg));
    finish(b, outer, 64, &ih)
}

/// HMAC(key, msg) in ZK, of `inner`'s hash, given the key's outer state encoding
/// ([`hmac_pad_states`]) and opened inner state: the outer compression only.
pub(crate) fn hmac_public_inner_with<B: Circuit>(
    b: &mut B,
    outer: &[B::Bit],
    inner: &PublicInner,
    msg: &[u8],
) -> Vec<B::Bit> {
    assert_eq!(outer.len(), 8 * inner.hash.state_len(), "an outer state of the inner state's hash");
    let ih = constant_bytes(b, &inner.inner_hash(msg));
    match inner.hash {
        Sha2::Sha256 => finish(b, &sha2::state_from_bytes::<B, 32>(outer), 64, &ih),
        Sha2::Sha384 => sha384::finish(b, &sha384::state_from_bytes::<B>(outer), sha384::BLOCK_LEN, &ih),
    }
}
