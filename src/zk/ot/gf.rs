//! Inner products over GF(2^128) for the KOS check: Σ a_i·b_i, accumulated unreduced
//! (256-bit carry-less sums) and reduced once. Same field representation as
//! [`crate::zk::field::F128`] (polynomial basis, modulus x^128 + x^7 + x^2 + x + 1).
//!
//! Uses PCLMULQDQ when the CPU has it (checked at run time), else a portable branch-free
//! carry-less multiply.

/// Σ a_i·b_i in GF(2^128) over the common length of the slices.
#[cfg(test)]
pub(crate) fn inner_product(a: &[u128], b: &[u128]) -> u128 {
    let (lo, hi) = inner_product_wide(a, b);
    reduce(lo, hi)
}

/// Unreduced 256-bit Σ a_i ⊗ b_i (carry-less), as (low 128 bits, high 128 bits).
pub(crate) fn inner_product_wide(a: &[u128], b: &[u128]) -> (u128, u128) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("pclmulqdq") {
            // SAFETY: the CPU supports PCLMULQDQ (checked just above); SSE2 is baseline on x86_64.
            return unsafe { x86::inner_product_wide_pclmul(a, b) };
        }
    }
    inner_product_wide_portable(a, b)
}

pub(crate) fn inner_product_wide_portable(a: &[u128], b: &[u128]) -> (u128, u128) {
    let (mut lo, mut hi) = (0u128, 0u128);
    for (&x, &y) in a.iter().zip(b.iter()) {
        let (l, h) = clmul128(x, y);
        lo ^= l;
        hi ^= h;
    }
    (lo, hi)
}

/// Reduce a 256-bit carry-less value modulo x^128 + x^7 + x^2 + x + 1.
pub(crate) fn reduce(lo: u128, hi: u128) -> u128 {
    // x^128 ≡ x^7 + x^2 + x + 1; fold the bits of hi that overflow again once.
    let t = hi ^ (hi >> 127) ^ (hi >> 126) ^ (hi >> 121);
    lo ^ t ^ (t << 1) ^ (t << 2) ^ (t << 7)
}

fn clmul128(a: u128, b: u128) -> (u128, u128) {
    let (a0, a1) = (a as u64, (a >> 64) as u64);
    let (b0, b1) = (b as u64, (b >> 64) as u64);
    let z0 = clmul64(a0, b0);
    let z2 = clmul64(a1, b1);
    let z1 = clmul64(a0 ^ a1, b0 ^ b1) ^ z0 ^ z2;
    (z0 ^ (z1 << 64), z2 ^ (z1 >> 64))
}

/// Branch-free 64×64 carry-less multiply: Karatsuba over three 32×32 products.
fn clmul64(x: u64, y: u64) -> u128 {
    let (x0, x1) = (x & 0xFFFF_FFFF, x >> 32);
    let (y0, y1) = (y & 0xFFFF_FFFF, y >> 32);
    let z0 = clmul32(x0, y0) as u128;
    let z2 = clmul32(x1, y1) as u128;
    let z1 = clmul32(x0 ^ x1, y0 ^ y1) as u128 ^ z0 ^ z2;
    z0 ^ (z1 << 32) ^ (z2 << 64)
}

/// 32×32 → 64-bit carry-less multiply with integer multiplies on "holey" operands: each
/// operand is split into 4 lanes holding every 4th bit; a product of lanes i and j only has
/// terms at positions ≡ i+j (mod 4), at most 8 per position (8 bits per 32-bit lane), so each
/// count fits in the 4 bits before the next same-lane position and its parity is exact.
fn clmul32(x: u64, y: u64) -> u64 {
    const M0: u64 = 0x1111_1111_1111_1111;
    const M1: u64 = 0x2222_2222_2222_2222;
    const M2: u64 = 0x4444_4444_4444_4444;
    const M3: u64 = 0x8888_8888_8888_8888;
    let (x0, x1, x2, x3) = (x & M0, x & M1, x & M2, x & M3);
    let (y0, y1, y2, y3) = (y & M0, y & M1, y & M2, y & M3);
    let w = |a: u64, b: u64| a.wrapping_mul(b);
    let z0 = w(x0, y0) ^ w(x1, y3) ^ w(x2, y2) ^ w(x3, y1);
    let z1 = w(x0, y1) ^ w(x1, y0) ^ w(x2, y3) ^ w(x3, y2);
    let z2 = w(x0, y2) ^ w(x1, y1) ^ w(x2, y0) ^ w(x3, y3);
    let z3 = w(x0, y3) ^ w(x1, y2) ^ w(x2, y1) ^ w(x3, y0);
    (z0 & M0) | (z1 & M1) | (z2 & M2) | (z3 & M3)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    #[target_feature(enable = "pclmulqdq")]
    pub(super) unsafe fn inner_product_wide_pclmul(a: &[u128], b: &[u128]) -> (u128, u128) {
        let mut lo = _mm_setzero_si128();
        let mut mid = _mm_setzero_si128();
        let mut hi = _mm_setzero_si128();
        for (&x, &y) in a.iter().zip(b.iter()) {
            let xv = _mm_set_epi64x((x >> 64) as i64, x as i64);
            let yv = _mm_set_epi64x((y >> 64) as i64, y as i64);
            lo = _mm_xor_si128(lo, _mm_clmulepi64_si128(xv, yv, 0x00));
            hi = _mm_xor_si128(hi, _mm_clmulepi64_si128(xv, yv, 0x11));
            mid = _mm_xor_si128(mid, _mm_clmulepi64_si128(xv, yv, 0x01));
            mid = _mm_xor_si128(mid, _mm_clmulepi64_si128(xv, yv, 0x10));
        }
        let lo: u128 = core::mem::transmute(lo);
        let mid: u128 = core::mem::transmute(mid);
        let hi: u128 = core::mem::transmute(hi);
        (lo ^ (mid << 64), hi ^ (mid >> 64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::field::F128;
    use rand::Rng;

    #[test]
    fn clmul32_matches_schoolbook() {
        let mut rng = rand::rng();
        for _ in 0..2000 {
            let x: u32 = rng.random();
            let y: u32 = rng.random();
            let mut r = 0u64;
            for i in 0..32 {
                if (y >> i) & 1 == 1 {
                    r ^= (x as u64) << i;
                }
            }
            assert_eq!(clmul32(x as u64, y as u64), r);
        }
        assert_eq!(clmul32(0xFFFF_FFFF, 0xFFFF_FFFF), 0x5555_5555_5555_5555);
    }

    #[test]
    fn inner_product_matches_field_mul() {
        let mut rng = rand::rng();
        for len in [0usize, 1, 2, 7, 100] {
            let a: Vec<u128> = (0..len).map(|_| rng.random()).collect();
            let b: Vec<u128> = (0..len).map(|_| rng.random()).collect();
            let expect = a
                .iter()
                .zip(&b)
                .fold(F128::ZERO, |acc, (&x, &y)| acc + F128(x) * F128(y));
            assert_eq!(F128(inner_product(&a, &b)), expect);
            let (lo, hi) = inner_product_wide_portable(&a, &b);
            assert_eq!(F128(reduce(lo, hi)), expect, "portable path");
        }
        // all-ones operands stress the reduction of the top bits
        let ones = [u128::MAX];
        assert_eq!(
            F128(inner_product(&ones, &ones)),
            F128(u128::MAX) * F128(u128::MAX)
        );
    }
}
