//! Circuits written once over [`Circuit`], run identically by the ZK engine's prover and
//! verifier, the garbled-circuit garbler and evaluator, and the cleartext evaluator: AES-128
//! and AES-256, SHA-256 and SHA-384, HMAC and the TLS 1.2 PRF, the AES-GCM keystream, the
//! ChaCha20 block.
//!
//! Conventions: a byte is 8 bits, least significant first (bit i = coefficient of x^i in
//! GF(2^8) for AES); byte strings are `Vec<Bit>` of length 8·len; SHA-256 words are
//! `[Bit; 32]`, bit i = 2^i.

pub mod aes;
pub(crate) mod aes_bool;
pub(crate) mod chacha20;
pub mod hmac_prf;
pub mod keystream;
pub(crate) mod modp;
pub(crate) mod sha2;
pub(crate) mod sha256;
pub(crate) mod sha384;
pub mod statement;

#[cfg(test)]
mod tests;

pub(crate) use crate::primitives::sbox_circuit::Gates;

/// A boolean-circuit backend: XOR and NOT are free, AND is the one gate that costs (a committed
/// bit and a check in ZK, two ciphertexts in a garbled circuit). Public constants propagate:
/// a gate with a public input costs nothing.
pub trait Circuit: Gates {
    /// A public constant bit (free).
    fn constant(&self, v: bool) -> Self::Bit;
    /// `Some(v)` if the bit is a public constant (structure, known to both sides).
    fn public_value(&self, a: Self::Bit) -> Option<bool>;
    /// ¬a (free).
    fn not(&self, a: Self::Bit) -> Self::Bit {
        let one = self.constant(true);
        self.xor(a, one)
    }
    /// The AES S-box on one byte: the Boyar–Peralta circuit (32 AND) unless the backend has a
    /// cheaper way (the ZK engine proves a GF(2^8) inversion instead: [`crate::zk::sbox`]).
    fn aes_sbox(&mut self, s: &[Self::Bit; 8]) -> [Self::Bit; 8]
    where
        Self: Sized,
    {
        aes_bool::sbox_bool(self, s)
    }
    /// Two independent AND gates, in this order: by default one after the other. Garbled
    /// circuits hash both gates' labels in one call (full passes of wasm's bit-sliced AES).
    fn and_pair(&mut self, [(a0, b0), (a1, b1)]: [(Self::Bit, Self::Bit); 2]) -> [Self::Bit; 2] {
        let c0 = self.and(a0, b0);
        [c0, self.and(a1, b1)]
    }
    /// SubBytes on independent bytes: by default one [`Circuit::aes_sbox`] at a time. Garbled
    /// circuits do the bytes' S-boxes side by side, hashing their AND gates in batches.
    fn aes_sub_bytes(&mut self, bytes: &mut [[Self::Bit; 8]])
    where
        Self: Sized,
    {
        for x in bytes.iter_mut() {
            *x = self.aes_sbox(x);
        }
    }
}

/// A 32-bit word of bits, bit i = 2^i.
pub(crate) type Word<B> = [<B as Gates>::Bit; 32];

/// Public bytes as constant bits (free).
pub fn constant_bytes<B: Circuit>(b: &B, bytes: &[u8]) -> Vec<B::Bit> {
    let mut out = Vec::with_capacity(bytes.len() * 8);
    for byte in bytes {
        for i in 0..8 {
            out.push(b.constant((byte >> i) & 1 == 1));
        }
    }
    out
}

/// Pack bits (LSB first) into bytes; a trailing partial byte is zero-padded.
pub(crate) fn bits_to_bytes(bits: &[bool]) -> Vec<u8> {
    bits.chunks(8).map(|c| c.iter().enumerate().fold(0u8, |acc, (i, b)| acc | ((*b as u8) << i))).collect()
}

/// Bytes as bits, least significant first (the inverse of [`bits_to_bytes`]).
pub(crate) fn bytes_to_bits(bytes: &[u8]) -> Vec<bool> {
    bytes.iter().flat_map(|x| (0..8).map(move |i| (x >> i) & 1 == 1)).collect()
}

/// XOR of two equal-length bit strings.
pub(crate) fn xor_bits<B: Circuit>(b: &B, x: &[B::Bit], y: &[B::Bit]) -> Vec<B::Bit> {
    x.iter().zip(y).map(|(p, q)| b.xor(*p, *q)).collect()
}

/// Addition mod 2^N with one AND per bit (N − 1 ANDs: no carry out of the top bit):
/// carry' = c ⊕ ((x ⊕ c) ∧ (y ⊕ c)) = maj(x, y, c).
pub fn add<B: Circuit, const N: usize>(b: &mut B, x: &[B::Bit; N], y: &[B::Bit; N]) -> [B::Bit; N] {
    let mut out = [b.constant(false); N];
    let mut c = b.constant(false);
    for i in 0..N {
        let xc = b.xor(x[i], c);
        out[i] = b.xor(xc, y[i]);
        if i + 1 < N {
            let yc = b.xor(y[i], c);
            let t = b.and(xc, yc);
            c = b.xor(c, t);
        }
    }
    out
}

/// Two independent additions mod 2^N in lockstep, their carry gates paired
/// ([`Circuit::and_pair`]): the same gates as two [`add`] calls.
pub(crate) fn add_pair<B: Circuit, const N: usize>(
    b: &mut B,
    [(x0, y0), (x1, y1)]: [(&[B::Bit; N], &[B::Bit; N]); 2],
) -> [[B::Bit; N]; 2] {
    let mut out = [[b.constant(false); N]; 2];
    let mut c = [b.constant(false); 2];
    for i in 0..N {
        let xc = [b.xor(x0[i], c[0]), b.xor(x1[i], c[1])];
        out[0][i] = b.xor(xc[0], y0[i]);
        out[1][i] = b.xor(xc[1], y1[i]);
        if i + 1 < N {
            let yc = [b.xor(y0[i], c[0]), b.xor(y1[i], c[1])];
            let t = b.and_pair([(xc[0], yc[0]), (xc[1], yc[1])]);
            c = [b.xor(c[0], t[0]), b.xor(c[1], t[1])];
        }
    }
    out
}

/// A public word of N ≤ 64 bits.
pub(crate) fn constant_word<B: Circuit, const N: usize>(b: &B, w: u64) -> [B::Bit; N] {
    core::array::from_fn(|i| b.constant((w >> i) & 1 == 1))
}
