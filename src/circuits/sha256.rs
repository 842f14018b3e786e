//! SHA-256 compression as a boolean circuit (FIPS 180-4): ≈22.7k AND gates per compression
//! with private inputs, fewer when parts are public (constants fold for free).

use super::sha2::{self, Family};
use super::Circuit;

/// FIPS 180-4 initial hash value.
pub(crate) const IV: [u32; 8] =
    [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/// FIPS 180-4 round constants.
pub(crate) const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
];

const K64: [u64; 64] = sha2::widen(K);

const FAMILY: Family =
    Family { k: &K64, sigma0: [7, 18, 3], sigma1: [17, 19, 10], big_sigma0: [2, 13, 22], big_sigma1: [6, 11, 25] };

/// A SHA-256 chaining state.
pub(crate) type State<B> = sha2::State<B, 32>;

/// The public initial state.
pub(crate) fn initial_state<B: Circuit>(b: &B) -> State<B> {
    sha2::constant_state(b, &sha2::widen(IV))
}

/// The state as its 32-byte big-endian encoding (the digest when it is the final state).
pub(crate) fn state_to_bytes<B: Circuit>(s: &State<B>) -> Vec<B::Bit> {
    sha2::state_to_bytes::<B, 32>(s)
}

/// A state from its 32-byte big-endian encoding.
pub(crate) fn state_from_bytes<B: Circuit>(bits: &[B::Bit]) -> State<B> {
    sha2::state_from_bytes::<B, 32>(bits)
}

/// One compression: `block` is 64 bytes (512 bits) in message byte order.
pub(crate) fn compress<B: Circuit>(b: &mut B, state: &State<B>, block: &[B::Bit]) -> State<B> {
    sha2::compress(b, &FAMILY, state, block)
}

/// Hash `msg` (byte-aligned bits) continuing from `state`, which has already absorbed
/// `prefix_len` bytes (a multiple of 64); applies the padding and returns the 32-byte digest.
pub(crate) fn finish<B: Circuit>(b: &mut B, state: &State<B>, prefix_len: usize, msg: &[B::Bit]) -> Vec<B::Bit> {
    sha2::finish(b, &FAMILY, state, prefix_len, msg)
}

/// Full SHA-256 of a byte-aligned bit string.
pub(crate) fn sha256<B: Circuit>(b: &mut B, msg: &[B::Bit]) -> Vec<B::Bit> {
    let iv = initial_state(b);
    finish(b, &iv, 0, msg)
}
