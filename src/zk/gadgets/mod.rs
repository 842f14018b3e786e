//! Gadgets written once over [`Backend`], run identically by prover, verifier and the
//! cleartext evaluator.
//!
//! Conventions: a byte is 8 bits, least significant first (bit i = coefficient of x^i in
//! GF(2^8) for AES); byte strings are `Vec<Bit>` of length 8·len; SHA-256 words are
//! `[Bit; 32]`, bit i = 2^i.

pub mod aes;
pub mod aes_bool;
pub mod hmac_prf;
pub mod keystream;
pub mod sha256;

#[cfg(test)]
mod tests;

use crate::zk::quicksilver::Backend;

/// A 32-bit word of authenticated bits, bit i = 2^i.
pub type Word<B> = [<B as Backend>::Bit; 32];

/// Public bytes as constant bits (free).
pub fn constant_bytes<B: Backend>(b: &B, bytes: &[u8]) -> Vec<B::Bit> {
    let mut out = Vec::with_capacity(bytes.len() * 8);
    for byte in bytes {
        for i in 0..8 {
            out.push(b.constant((byte >> i) & 1 == 1));
        }
    }
    out
}

/// Commit `len` private bytes: the prover passes `Some(bytes)` (exactly `len` of them),
/// the verifier `None`.
pub fn commit_bytes<B: Backend>(b: &mut B, bytes: Option<&[u8]>, len: usize) -> Vec<B::Bit> {
    let mut out = Vec::with_capacity(len * 8);
    for j in 0..len {
        let byte = bytes.and_then(|v| v.get(j).copied());
        for i in 0..8 {
            out.push(b.commit(byte.map(|x| (x >> i) & 1 == 1)));
        }
    }
    out
}

/// Pack bits (LSB first) into bytes; a trailing partial byte is zero-padded.
pub fn bits_to_bytes(bits: &[bool]) -> Vec<u8> {
    bits.chunks(8)
        .map(|c| c.iter().enumerate().fold(0u8, |acc, (i, b)| acc | ((*b as u8) << i)))
        .collect()
}

/// Open byte-aligned bits and return the bytes.
pub fn open_bytes<B: Backend>(b: &mut B, bits: &[B::Bit]) -> Vec<u8> {
    let v = b.open(bits);
    bits_to_bytes(&v)
}

/// Assert that byte-aligned bits equal public bytes.
pub fn assert_bytes_eq<B: Backend>(b: &mut B, bits: &[B::Bit], bytes: &[u8]) {
    let expected: Vec<bool> =
        bytes.iter().flat_map(|x| (0..8).map(move |i| (x >> i) & 1 == 1)).collect();
    b.assert_constant(bits, &expected);
}

/// Open only the bytes at `positions` of a byte string (partial opening); returns them in
/// the order given. Out-of-range positions yield nothing.
pub fn open_selected_bytes<B: Backend>(
    b: &mut B,
    bits: &[B::Bit],
    positions: &[usize],
) -> Vec<u8> {
    let mut sel = Vec::with_capacity(positions.len() * 8);
    for p in positions {
        if let Some(byte) = bits.get(p * 8..p * 8 + 8) {
            sel.extend_from_slice(byte);
        }
    }
    open_bytes(b, &sel)
}

/// XOR of two equal-length bit strings.
pub fn xor_bits<B: Backend>(b: &B, x: &[B::Bit], y: &[B::Bit]) -> Vec<B::Bit> {
    x.iter().zip(y).map(|(p, q)| b.xor(*p, *q)).collect()
}

/// 32-bit addition mod 2^32 with one AND per bit (31 ANDs: no carry out of the top bit):
/// carry' = c ⊕ ((x ⊕ c) ∧ (y ⊕ c)) = maj(x, y, c).
pub fn add32<B: Backend>(b: &mut B, x: &Word<B>, y: &Word<B>) -> Word<B> {
    let mut out = [b.constant(false); 32];
    let mut c = b.constant(false);
    for i in 0..32 {
        let xc = b.xor(x[i], c);
        out[i] = b.xor(xc, y[i]);
        if i < 31 {
            let yc = b.xor(y[i], c);
            let t = b.and(xc, yc);
            c = b.xor(c, t);
        }
    }
    out
}

/// A public 32-bit word.
pub fn constant_word<B: Backend>(b: &B, w: u32) -> Word<B> {
    core::array::from_fn(|i| b.constant((w >> i) & 1 == 1))
}
