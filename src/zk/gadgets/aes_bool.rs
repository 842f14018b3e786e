//! Plain boolean-circuit AES-128 (baseline and cross-check for the field-embedding S-box).
//!
//! The S-box inversion runs in the tower field GF(((2^2)^2)^2), where an inverse costs 36 AND:
//! - GF(4) = GF(2)[u]/(u² + u + 1): product by Karatsuba (3 AND); inverse = square (free).
//! - GF(16) = GF(4)[w]/(w² + w + μ), μ = u: product 3 GF(4) products (9 AND); inverse of
//!   c·w + d is (c·w + (c + d))·N⁻¹ with N = μc² + cd + d² ∈ GF(4): 3 GF(4) products (9 AND).
//! - GF(256) = GF(16)[z]/(z² + z + ν) with ν the smallest element making it irreducible; the
//!   inverse of a·z + b is (a·z + (a + b))·N⁻¹ with N = νa² + ab + b²: one GF(16) product,
//!   one GF(16) inverse, two GF(16) products = 36 AND.
//! - The AES field maps into the tower by x ↦ β, β the first tower element that is a root of
//!   x^8 + x^4 + x^3 + x + 1 (found by search at first use); the map and its inverse are
//!   GF(2)-linear, so free, as is the affine output map.
//!
//! 36 AND per S-box: 5,760 per block plus 1,440 for the key schedule.

use std::sync::OnceLock;

use super::aes::{encrypt_with, key_schedule_with, sbox_affine, sbox_if_public, Block, RoundKeys};
use crate::zk::quicksilver::Backend;

// ---- cleartext tower arithmetic (used to derive the constants and linear maps) ----

fn gf4_mul(x: u8, y: u8) -> u8 {
    let (x0, x1, y0, y1) = (x & 1, (x >> 1) & 1, y & 1, (y >> 1) & 1);
    let m0 = x0 & y0;
    let m1 = x1 & y1;
    let m2 = (x0 ^ x1) & (y0 ^ y1);
    (m0 ^ m1) | ((m2 ^ m0) << 1)
}

const MU: u8 = 0b10; // u

fn gf16_mul(x: u8, y: u8) -> u8 {
    let (x0, x1, y0, y1) = (x & 3, x >> 2, y & 3, y >> 2);
    let m0 = gf4_mul(x0, y0);
    let m1 = gf4_mul(x1, y1);
    let m2 = gf4_mul(x0 ^ x1, y0 ^ y1);
    (m0 ^ gf4_mul(MU, m1)) | ((m2 ^ m0) << 2)
}

struct Tower {
    nu: u8,
    /// images of the AES polynomial-basis bits x^i in the tower (the map AES → tower)
    to_tower: [u8; 8],
    /// images of the tower basis bits in the AES field (the map tower → AES)
    from_tower: [u8; 8],
}

fn gf256_tower_mul(nu: u8, x: u8, y: u8) -> u8 {
    let (x0, x1, y0, y1) = (x & 15, x >> 4, y & 15, y >> 4);
    let m0 = gf16_mul(x0, y0);
    let m1 = gf16_mul(x1, y1);
    let m2 = gf16_mul(x0 ^ x1, y0 ^ y1);
    (m0 ^ gf16_mul(nu, m1)) | ((m2 ^ m0) << 4)
}

fn tower() -> &'static Tower {
    static T: OnceLock<Tower> = OnceLock::new();
    T.get_or_init(|| {
        let nu = (1u8..16)
            .find(|nu| (0u8..16).all(|z| gf16_mul(z, z) ^ z != *nu))
            .expect("an irreducible z^2 + z + nu exists");
        let mul = |x, y| gf256_tower_mul(nu, x, y);
        let pow = |x: u8, e: u32| (0..e).fold(1u8, |acc, _| mul(acc, x));
        let beta = (2u8..=255)
            .find(|b| pow(*b, 8) ^ pow(*b, 4) ^ pow(*b, 3) ^ *b ^ 1 == 0)
            .expect("the AES polynomial splits in GF(256)");
        let to_tower: [u8; 8] = core::array::from_fn(|i| pow(beta, i as u32));
        let apply = |s: u8| (0..8).fold(0u8, |acc, i| if (s >> i) & 1 == 1 { acc ^ to_tower[i] } else { acc });
        let from_tower: [u8; 8] = core::array::from_fn(|j| {
            (0u8..=255).find(|s| apply(*s) == 1 << j).expect("the map is a bijection")
        });
        Tower { nu, to_tower, from_tower }
    })
}

// ---- circuits ----

/// A GF(2)-linear map on bit vectors given by the images of the input basis bits.
fn linear<B: Backend, const N: usize>(b: &B, x: &[B::Bit], images: &[u8]) -> [B::Bit; N] {
    core::array::from_fn(|j| {
        let mut acc = b.constant(false);
        for (i, img) in images.iter().enumerate() {
            if (img >> j) & 1 == 1 {
                acc = b.xor(acc, x[i]);
            }
        }
        acc
    })
}

fn xor_n<B: Backend, const N: usize>(b: &B, x: &[B::Bit; N], y: &[B::Bit; N]) -> [B::Bit; N] {
    core::array::from_fn(|i| b.xor(x[i], y[i]))
}

fn gf4_mul_c<B: Backend>(b: &mut B, x: &[B::Bit; 2], y: &[B::Bit; 2]) -> [B::Bit; 2] {
    let m0 = b.and(x[0], y[0]);
    let m1 = b.and(x[1], y[1]);
    let xs = b.xor(x[0], x[1]);
    let ys = b.xor(y[0], y[1]);
    let m2 = b.and(xs, ys);
    [b.xor(m0, m1), b.xor(m2, m0)]
}

fn images4(f: impl Fn(u8) -> u8, bits: usize) -> Vec<u8> {
    (0..bits).map(|i| f(1 << i)).collect()
}

fn gf16_mul_c<B: Backend>(b: &mut B, x: &[B::Bit; 4], y: &[B::Bit; 4]) -> [B::Bit; 4] {
    let (x0, x1) = ([x[0], x[1]], [x[2], x[3]]);
    let (y0, y1) = ([y[0], y[1]], [y[2], y[3]]);
    let m0 = gf4_mul_c(b, &x0, &y0);
    let m1 = gf4_mul_c(b, &x1, &y1);
    let xs = xor_n(b, &x0, &x1);
    let ys = xor_n(b, &y0, &y1);
    let m2 = gf4_mul_c(b, &xs, &ys);
    let mu_m1: [B::Bit; 2] = linear(b, &m1, &images4(|v| gf4_mul(MU, v), 2));
    let lo = xor_n(b, &m0, &mu_m1);
    let hi = xor_n(b, &m2, &m0);
    [lo[0], lo[1], hi[0], hi[1]]
}

fn gf16_inv_c<B: Backend>(b: &mut B, x: &[B::Bit; 4]) -> [B::Bit; 4] {
    let (d, c) = ([x[0], x[1]], [x[2], x[3]]);
    let sq = images4(|v| gf4_mul(v, v), 2);
    let mu_sq = images4(|v| gf4_mul(MU, gf4_mul(v, v)), 2);
    let mu_c2: [B::Bit; 2] = linear(b, &c, &mu_sq);
    let d2: [B::Bit; 2] = linear(b, &d, &sq);
    let cd = gf4_mul_c(b, &c, &d);
    let n = xor_n(b, &xor_n(b, &mu_c2, &d2), &cd);
    let ninv: [B::Bit; 2] = linear(b, &n, &sq);
    let hi = gf4_mul_c(b, &c, &ninv);
    let cd_sum = xor_n(b, &c, &d);
    let lo = gf4_mul_c(b, &cd_sum, &ninv);
    [lo[0], lo[1], hi[0], hi[1]]
}

/// GF(256) inversion in the tower representation (36 AND; 0 ↦ 0).
fn gf256_inv_tower_c<B: Backend>(b: &mut B, x: &[B::Bit; 8]) -> [B::Bit; 8] {
    let nu = tower().nu;
    let lo: [B::Bit; 4] = core::array::from_fn(|i| x[i]);
    let hi: [B::Bit; 4] = core::array::from_fn(|i| x[4 + i]);
    let nu_sq: [B::Bit; 4] = linear(b, &hi, &images4(|v| gf16_mul(nu, gf16_mul(v, v)), 4));
    let b_sq: [B::Bit; 4] = linear(b, &lo, &images4(|v| gf16_mul(v, v), 4));
    let ab = gf16_mul_c(b, &hi, &lo);
    let n = xor_n(b, &xor_n(b, &nu_sq, &b_sq), &ab);
    let ninv = gf16_inv_c(b, &n);
    let out_hi = gf16_mul_c(b, &hi, &ninv);
    let sum = xor_n(b, &hi, &lo);
    let out_lo = gf16_mul_c(b, &sum, &ninv);
    core::array::from_fn(|i| if i < 4 { out_lo[i] } else { out_hi[i - 4] })
}

/// The AES S-box as a boolean circuit (36 AND).
pub fn sbox_bool<B: Backend>(b: &mut B, s: &[B::Bit; 8]) -> [B::Bit; 8] {
    if let Some(out) = sbox_if_public(b, s) {
        return out;
    }
    let t = tower();
    let x: [B::Bit; 8] = linear(b, s, &t.to_tower);
    let inv_t = gf256_inv_tower_c(b, &x);
    let inv: [B::Bit; 8] = linear(b, &inv_t, &t.from_tower);
    sbox_affine(b, &inv)
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
