//! Plain boolean-circuit AES-128 (baseline and cross-check for the field-embedding S-box). Its
//! S-box circuit is also the SubBytes of the bitsliced software AES in [`crate::zk::prp`].
//!
//! The S-box inversion runs in the tower field GF(((2^2)^2)^2), where an inverse costs 36 AND:
//! - GF(4) = GF(2)[u]/(u² + u + 1): product by Karatsuba (3 AND); inverse = square (free).
//! - GF(16) = GF(4)[w]/(w² + w + μ), μ = u: product 3 GF(4) products (9 AND); inverse of
//!   c·w + d is (c·w + (c + d))·N⁻¹ with N = μc² + cd + d² ∈ GF(4): 3 GF(4) products (9 AND).
//! - GF(256) = GF(16)[z]/(z² + z + ν) with ν the smallest element making it irreducible; the
//!   inverse of a·z + b is (a·z + (a + b))·N⁻¹ with N = νa² + ab + b²: one GF(16) product,
//!   one GF(16) inverse, two GF(16) products = 36 AND.
//! - The AES field maps into the tower by x ↦ β, β the first tower element that is a root of
//!   x^8 + x^4 + x^3 + x + 1 (found by search at compile time); the map and its inverse are
//!   GF(2)-linear, so free, as is the affine output map.
//!
//! 36 AND per S-box: 5,760 per block plus 1,440 for the key schedule.

use super::aes::{encrypt_with, key_schedule_with, sbox_if_public, Block, RoundKeys};
use crate::zk::quicksilver::Backend;

/// The gates the tower-field S-box is built from. The ZK backends implement them (XOR free,
/// AND one committed bit), and so does the bitsliced software AES of [`crate::zk::prp`],
/// which evaluates the same circuit on whole registers.
pub(crate) trait Gates {
    type Bit: Copy;
    fn xor(&self, a: Self::Bit, b: Self::Bit) -> Self::Bit;
    fn and(&mut self, a: Self::Bit, b: Self::Bit) -> Self::Bit;
    fn zero(&self) -> Self::Bit;
}

impl<B: Backend> Gates for B {
    type Bit = B::Bit;
    #[inline]
    fn xor(&self, a: B::Bit, b: B::Bit) -> B::Bit {
        Backend::xor(self, a, b)
    }
    #[inline]
    fn and(&mut self, a: B::Bit, b: B::Bit) -> B::Bit {
        Backend::and(self, a, b)
    }
    #[inline]
    fn zero(&self) -> B::Bit {
        self.constant(false)
    }
}

// ---- cleartext tower arithmetic (const: derives the circuits' linear maps at compile time,
// so the bitsliced software AES gets them folded into straight-line code) ----

const fn gf4_mul(x: u8, y: u8) -> u8 {
    let (x0, x1, y0, y1) = (x & 1, (x >> 1) & 1, y & 1, (y >> 1) & 1);
    let m0 = x0 & y0;
    let m1 = x1 & y1;
    let m2 = (x0 ^ x1) & (y0 ^ y1);
    (m0 ^ m1) | ((m2 ^ m0) << 1)
}

const MU: u8 = 0b10; // u

const fn gf16_mul(x: u8, y: u8) -> u8 {
    let (x0, x1, y0, y1) = (x & 3, x >> 2, y & 3, y >> 2);
    let m0 = gf4_mul(x0, y0);
    let m1 = gf4_mul(x1, y1);
    let m2 = gf4_mul(x0 ^ x1, y0 ^ y1);
    (m0 ^ gf4_mul(MU, m1)) | ((m2 ^ m0) << 2)
}

/// ν: the first element of GF(16) with z² + z + ν irreducible.
const NU: u8 = {
    let mut nu = 1u8;
    'search: loop {
        let mut z = 0u8;
        while z < 16 {
            if gf16_mul(z, z) ^ z == nu {
                nu += 1;
                continue 'search;
            }
            z += 1;
        }
        break nu;
    }
};

const fn gf256_tower_mul(x: u8, y: u8) -> u8 {
    let (x0, x1, y0, y1) = (x & 15, x >> 4, y & 15, y >> 4);
    let m0 = gf16_mul(x0, y0);
    let m1 = gf16_mul(x1, y1);
    let m2 = gf16_mul(x0 ^ x1, y0 ^ y1);
    (m0 ^ gf16_mul(NU, m1)) | ((m2 ^ m0) << 4)
}

const fn tower_pow(x: u8, e: u32) -> u8 {
    let mut acc = 1u8;
    let mut i = 0;
    while i < e {
        acc = gf256_tower_mul(acc, x);
        i += 1;
    }
    acc
}

/// The image of `s` under the GF(2)-linear map with basis images `images`.
const fn apply_linear(images: &[u8; 8], s: u8) -> u8 {
    let mut acc = 0u8;
    let mut i = 0;
    while i < 8 {
        if (s >> i) & 1 == 1 {
            acc ^= images[i];
        }
        i += 1;
    }
    acc
}

/// Images of the AES polynomial-basis bits x^i in the tower (the map AES → tower): x ↦ β,
/// β the first tower element that is a root of x^8 + x^4 + x^3 + x + 1.
const TO_TOWER: [u8; 8] = {
    let mut beta = 2u8;
    while tower_pow(beta, 8) ^ tower_pow(beta, 4) ^ tower_pow(beta, 3) ^ beta ^ 1 != 0 {
        beta += 1;
    }
    let mut t = [0u8; 8];
    let mut i = 0;
    while i < 8 {
        t[i] = tower_pow(beta, i as u32);
        i += 1;
    }
    t
};

/// Images of the tower basis bits under the map back to the AES field followed by the linear
/// part of the S-box's affine map, b ↦ b ⊕ (b ⋘ 1) ⊕ (b ⋘ 2) ⊕ (b ⋘ 3) ⊕ (b ⋘ 4).
const OUT_IMAGES: [u8; 8] = {
    let mut t = [0u8; 8];
    let mut j = 0;
    while j < 8 {
        let mut s = 0u8;
        while apply_linear(&TO_TOWER, s) != 1 << j {
            s += 1;
        }
        t[j] = s ^ s.rotate_left(1) ^ s.rotate_left(2) ^ s.rotate_left(3) ^ s.rotate_left(4);
        j += 1;
    }
    t
};

/// Basis images of v ↦ μ·v, v ↦ v² and v ↦ μ·v² on GF(4), and of v ↦ v² and v ↦ ν·v² on GF(16).
const GF4_MU: [u8; 2] = [gf4_mul(MU, 1), gf4_mul(MU, 2)];
const GF4_SQ: [u8; 2] = [gf4_mul(1, 1), gf4_mul(2, 2)];
const GF4_MU_SQ: [u8; 2] = [gf4_mul(MU, gf4_mul(1, 1)), gf4_mul(MU, gf4_mul(2, 2))];
const GF16_SQ: [u8; 4] = [gf16_mul(1, 1), gf16_mul(2, 2), gf16_mul(4, 4), gf16_mul(8, 8)];
const GF16_NU_SQ: [u8; 4] = [
    gf16_mul(NU, gf16_mul(1, 1)),
    gf16_mul(NU, gf16_mul(2, 2)),
    gf16_mul(NU, gf16_mul(4, 4)),
    gf16_mul(NU, gf16_mul(8, 8)),
];

// ---- circuits ----

/// A GF(2)-linear map on bit vectors given by the images of the input basis bits. The images
/// are compile-time constants, so once inlined the loops and tests fold into straight-line
/// XORs (which matters for the bitsliced software AES).
#[inline(always)]
fn linear<G: Gates, const K: usize, const N: usize>(g: &G, x: &[G::Bit; K], images: &[u8; K]) -> [G::Bit; N] {
    let mut out = [g.zero(); N];
    let mut started = [false; N];
    for i in 0..K {
        for j in 0..N {
            if (images[i] >> j) & 1 == 1 {
                out[j] = if started[j] { g.xor(out[j], x[i]) } else { x[i] };
                started[j] = true;
            }
        }
    }
    out
}

#[inline(always)]
fn xor_n<B: Gates, const N: usize>(b: &B, x: &[B::Bit; N], y: &[B::Bit; N]) -> [B::Bit; N] {
    let mut out = *x;
    for i in 0..N {
        out[i] = b.xor(x[i], y[i]);
    }
    out
}

#[inline(always)]
fn gf4_mul_c<B: Gates>(b: &mut B, x: &[B::Bit; 2], y: &[B::Bit; 2]) -> [B::Bit; 2] {
    let m0 = b.and(x[0], y[0]);
    let m1 = b.and(x[1], y[1]);
    let xs = b.xor(x[0], x[1]);
    let ys = b.xor(y[0], y[1]);
    let m2 = b.and(xs, ys);
    [b.xor(m0, m1), b.xor(m2, m0)]
}

#[inline(always)]
fn gf16_mul_c<B: Gates>(b: &mut B, x: &[B::Bit; 4], y: &[B::Bit; 4]) -> [B::Bit; 4] {
    let (x0, x1) = ([x[0], x[1]], [x[2], x[3]]);
    let (y0, y1) = ([y[0], y[1]], [y[2], y[3]]);
    let m0 = gf4_mul_c(b, &x0, &y0);
    let m1 = gf4_mul_c(b, &x1, &y1);
    let xs = xor_n(b, &x0, &x1);
    let ys = xor_n(b, &y0, &y1);
    let m2 = gf4_mul_c(b, &xs, &ys);
    let mu_m1: [B::Bit; 2] = linear(b, &m1, &GF4_MU);
    let lo = xor_n(b, &m0, &mu_m1);
    let hi = xor_n(b, &m2, &m0);
    [lo[0], lo[1], hi[0], hi[1]]
}

#[inline(always)]
fn gf16_inv_c<B: Gates>(b: &mut B, x: &[B::Bit; 4]) -> [B::Bit; 4] {
    let (d, c) = ([x[0], x[1]], [x[2], x[3]]);
    let mu_c2: [B::Bit; 2] = linear(b, &c, &GF4_MU_SQ);
    let d2: [B::Bit; 2] = linear(b, &d, &GF4_SQ);
    let cd = gf4_mul_c(b, &c, &d);
    let n = xor_n(b, &xor_n(b, &mu_c2, &d2), &cd);
    let ninv: [B::Bit; 2] = linear(b, &n, &GF4_SQ);
    let hi = gf4_mul_c(b, &c, &ninv);
    let cd_sum = xor_n(b, &c, &d);
    let lo = gf4_mul_c(b, &cd_sum, &ninv);
    [lo[0], lo[1], hi[0], hi[1]]
}

/// GF(256) inversion in the tower representation (36 AND; 0 ↦ 0).
#[inline(always)]
fn gf256_inv_tower_c<B: Gates>(b: &mut B, x: &[B::Bit; 8]) -> [B::Bit; 8] {
    let lo = [x[0], x[1], x[2], x[3]];
    let hi = [x[4], x[5], x[6], x[7]];
    let nu_sq: [B::Bit; 4] = linear(b, &hi, &GF16_NU_SQ);
    let b_sq: [B::Bit; 4] = linear(b, &lo, &GF16_SQ);
    let ab = gf16_mul_c(b, &hi, &lo);
    let n = xor_n(b, &xor_n(b, &nu_sq, &b_sq), &ab);
    let ninv = gf16_inv_c(b, &n);
    let out_hi = gf16_mul_c(b, &hi, &ninv);
    let sum = xor_n(b, &hi, &lo);
    let out_lo = gf16_mul_c(b, &sum, &ninv);
    [out_lo[0], out_lo[1], out_lo[2], out_lo[3], out_hi[0], out_hi[1], out_hi[2], out_hi[3]]
}

/// The AES S-box up to its additive constant 0x63: map into the tower, invert there (36 AND),
/// map back and apply the affine map's linear part (one merged linear map).
#[inline(always)]
pub(crate) fn sbox_without_constant<G: Gates>(g: &mut G, s: &[G::Bit; 8]) -> [G::Bit; 8] {
    let x: [G::Bit; 8] = linear(g, s, &TO_TOWER);
    let inv_t = gf256_inv_tower_c(g, &x);
    linear(g, &inv_t, &OUT_IMAGES)
}

/// The AES S-box as a boolean circuit (36 AND).
pub fn sbox_bool<B: Backend>(b: &mut B, s: &[B::Bit; 8]) -> [B::Bit; 8] {
    if let Some(out) = sbox_if_public(b, s) {
        return out;
    }
    let out = sbox_without_constant(b, s);
    core::array::from_fn(|i| if (0x63 >> i) & 1 == 1 { b.not(out[i]) } else { out[i] })
}

/// AES-128 key schedule as a boolean circuit.
pub fn key_schedule_bool<B: Backend>(b: &mut B, key: &[B::Bit]) -> RoundKeys<B> {
    key_schedule_with(b, key, sbox_bool::<B>)
}

/// AES-128 block encryption as a boolean circuit.
pub fn encrypt_bool<B: Backend>(b: &mut B, rk: &RoundKeys<B>, block: &[B::Bit]) -> Block<B> {
    encrypt_with(b, rk, block, sbox_bool::<B>)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::gadgets::aes::sbox_plain;
    use crate::zk::quicksilver::PlainBackend;

    #[test]
    fn tower_sbox_matches_table_on_all_inputs_with_36_and() {
        for s in 0..=255u8 {
            let mut b = PlainBackend::new();
            let bits: [_; 8] = core::array::from_fn(|i| b.commit(Some((s >> i) & 1 == 1)));
            let out = sbox_bool(&mut b, &bits);
            let v = out.iter().enumerate().fold(0u8, |acc, (i, x)| acc | ((x.v as u8) << i));
            assert_eq!(v, sbox_plain(s), "s = {s:#04x}");
            assert_eq!(b.stats().and_gates, 36);
        }
    }
}
