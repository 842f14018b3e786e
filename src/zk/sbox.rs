//! The AES S-box in the ZK engine: GF(2^8) inversion proven by embedding in GF(2^128).
//!
//! S-box input s (8 bits) is mapped to φ(s) = Σ s_i·α^i ∈ GF(2^128), where α is a root of the
//! AES polynomial x^8 + x^4 + x^3 + x + 1 in GF(2^128); φ is a field embedding
//! GF(2^8) → GF(2^128) (8 | 128), so it is GF(2)-linear and commutes with products. The prover
//! commits t = s^254 as 8 bits and two degree-2 constraints are checked:
//! φ(s)²·φ(t) = φ(s) and φ(s)·φ(t)² = φ(t). For s ≠ 0 the first gives t = s⁻¹; for s = 0 the
//! second gives t = 0. Squares are free: φ(s)² = Σ s_i·α^{2i}. The affine map, ShiftRows,
//! MixColumns and AddRoundKey are GF(2)-linear on bits, hence free.
//! Cost: 8 committed bits + 2 constraints per S-box (1,280 bits per block, 320 per key).
//!
//! How α is found ([`alpha`]): GF(2^8)* is the unique subgroup of order 255 in GF(2^128)*,
//! so h = g^((2^128−1)/255) lies in GF(2^8) for any g. Trying g = x, x+1, x^2, … we take the
//! first h of order exactly 255 (h^(255/p) ≠ 1 for p ∈ {3, 5, 17}), then the smallest k with
//! p(h^k) = 0; α = h^k. Deterministic, computed once.

use std::sync::OnceLock;

use super::Backend;
use crate::circuits::aes::{gf256_inv, sbox_affine, sbox_if_public};
use crate::primitives::field::F128;

fn aes_poly(z: F128) -> F128 {
    // z^8 + z^4 + z^3 + z + 1
    z.pow(8) ^ z.pow(4) ^ z.pow(3) ^ z ^ F128::ONE
}

/// A root α of x^8 + x^4 + x^3 + x + 1 in GF(2^128) (see the module docs for the derivation).
pub(crate) fn alpha() -> F128 {
    static ALPHA: OnceLock<F128> = OnceLock::new();
    *ALPHA.get_or_init(|| {
        let e = u128::MAX / 255;
        for g in 2u128.. {
            let h = F128(g).pow(e);
            if h.pow(85) == F128::ONE || h.pow(51) == F128::ONE || h.pow(15) == F128::ONE {
                continue;
            }
            let mut beta = F128::ONE;
            for _ in 0..255 {
                if aes_poly(beta) == F128::ZERO {
                    return beta;
                }
                beta *= h;
            }
        }
        unreachable!("a generator of GF(2^8)* always has 8 powers that are roots")
    })
}

/// [α^0..α^7] and [α^0, α^2, …, α^14] (the embedding and embedding-of-square bases).
pub(crate) fn embedding_bases() -> &'static ([F128; 8], [F128; 8]) {
    static BASES: OnceLock<([F128; 8], [F128; 8])> = OnceLock::new();
    BASES.get_or_init(|| {
        let a = alpha();
        let lin = core::array::from_fn(|i| a.pow(i as u128));
        let sq = core::array::from_fn(|i| a.pow(2 * i as u128));
        (lin, sq)
    })
}

/// S-box by field embedding: 8 committed bits and 2 GF(2^128) constraints.
pub(crate) fn sbox_field<B: Backend>(b: &mut B, s: &[B::Bit; 8]) -> [B::Bit; 8] {
    if let Some(out) = sbox_if_public(b, s) {
        return out;
    }
    let sv: Option<u8> =
        s.iter().enumerate().try_fold(0u8, |acc, (i, bit)| b.value(*bit).map(|v| acc | ((v as u8) << i)));
    let tv = sv.map(gf256_inv);
    let t: [B::Bit; 8] = core::array::from_fn(|i| b.commit(tv.map(|t| (t >> i) & 1 == 1)));
    b.assert_byte_inverse(s, &t);
    sbox_affine(b, &t)
}
