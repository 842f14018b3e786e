//! GF(2^128) arithmetic.
//!
//! Representation: polynomial basis, bit `i` of the `u128` is the coefficient of `x^i`,
//! reduction modulo `x^128 + x^7 + x^2 + x + 1`. This is *not* GCM's bit-reflected order;
//! conversions for GHASH live next to the GCM code.

use core::ops::{Add, AddAssign, BitXor, BitXorAssign, Mul, MulAssign};

/// An element of GF(2^128).
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash, Debug)]
pub struct F128(pub u128);

impl F128 {
    pub const ZERO: F128 = F128(0);
    pub const ONE: F128 = F128(1);

    /// `1` if `b`, else `0`, without branching on `b`.
    #[inline]
    pub fn from_bit(b: bool) -> F128 {
        F128(b as u128)
    }

    /// `self` if `b`, else zero, without branching on `b`.
    #[inline]
    pub fn select(self, b: bool) -> F128 {
        F128(self.0 & (0u128.wrapping_sub(b as u128)))
    }

    pub fn to_le_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }

    pub fn from_le_bytes(b: [u8; 16]) -> F128 {
        F128(u128::from_le_bytes(b))
    }

    /// Field multiplication (portable, constant time).
    pub fn mul(self, rhs: F128) -> F128 {
        let (lo, hi) = clmul128(self.0, rhs.0);
        F128(reduce(lo, hi))
    }
}

/// 128×128 → 256-bit carry-less multiply, portable and branch-free.
fn clmul128(a: u128, b: u128) -> (u128, u128) {
    let a0 = a as u64;
    let a1 = (a >> 64) as u64;
    let b0 = b as u64;
    let b1 = (b >> 64) as u64;
    let z0 = clmul64(a0, b0);
    let z2 = clmul64(a1, b1);
    let z1 = clmul64(a0 ^ a1, b0 ^ b1) ^ z0 ^ z2;
    let lo = z0 ^ (z1 << 64);
    let hi = z2 ^ (z1 >> 64);
    (lo, hi)
}

fn clmul64(a: u64, b: u64) -> u128 {
    let mut r: u128 = 0;
    let a = a as u128;
    for i in 0..64 {
        let mask = 0u128.wrapping_sub(((b >> i) & 1) as u128);
        r ^= (a << i) & mask;
    }
    r
}

/// Reduce a 256-bit product modulo x^128 + x^7 + x^2 + x + 1.
fn reduce(lo: u128, hi: u128) -> u128 {
    // x^128 = x^7 + x^2 + x + 1
    let t = hi ^ (hi >> 127) ^ (hi >> 126) ^ (hi >> 121);
    lo ^ t ^ (t << 1) ^ (t << 2) ^ (t << 7)
}

impl BitXor for F128 {
    type Output = F128;
    #[inline]
    fn bitxor(self, r: F128) -> F128 {
        F128(self.0 ^ r.0)
    }
}
impl BitXorAssign for F128 {
    #[inline]
    fn bitxor_assign(&mut self, r: F128) {
        self.0 ^= r.0
    }
}
impl Add for F128 {
    type Output = F128;
    #[inline]
    fn add(self, r: F128) -> F128 {
        self ^ r
    }
}
impl AddAssign for F128 {
    #[inline]
    fn add_assign(&mut self, r: F128) {
        self.0 ^= r.0
    }
}
impl Mul for F128 {
    type Output = F128;
    #[inline]
    fn mul(self, r: F128) -> F128 {
        F128::mul(self, r)
    }
}
impl MulAssign for F128 {
    #[inline]
    fn mul_assign(&mut self, r: F128) {
        *self = F128::mul(*self, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_times_x127_wraps_to_modulus_tail() {
        // x * x^127 = x^128 = x^7 + x^2 + x + 1
        assert_eq!(F128(2) * F128(1 << 127), F128(0x87));
    }

    #[test]
    fn field_laws_on_random_elements() {
        use rand::Rng;
        let mut rng = rand::rng();
        for _ in 0..200 {
            let (a, b, c) = (F128(rng.random()), F128(rng.random()), F128(rng.random()));
            assert_eq!(a * b, b * a);
            assert_eq!((a * b) * c, a * (b * c));
            assert_eq!(a * (b + c), a * b + a * c);
            assert_eq!(a * F128::ONE, a);
        }
    }
}
