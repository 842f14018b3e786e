//! GF(2^128) arithmetic.
//!
//! Representation: polynomial basis, bit `i` of the `u128` is the coefficient of `x^i`,
//! reduction modulo `x^128 + x^7 + x^2 + x + 1`. This is *not* GCM's bit-reflected order;
//! conversions for GHASH live next to the GCM code.

use core::ops::{Add, AddAssign, BitXor, BitXorAssign, Mul, MulAssign};

mod clmul;
mod sums;
#[cfg(test)]
mod tests;

pub use clmul::clmul_known_answers;
use clmul::*;
#[cfg(target_arch = "x86_64")]
use sums::simd;
pub use sums::FixedCombinations;
pub(crate) use sums::PublicWeightedSum;

/// An element of GF(2^128).
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash, Debug)]
#[repr(transparent)]
pub struct F128(pub u128);

impl F128 {
    pub const ZERO: F128 = F128(0);
    pub(crate) const ONE: F128 = F128(1);

    /// `self` if `b`, else zero, without branching on `b`.
    #[inline]
    pub fn select(self, b: bool) -> F128 {
        F128(self.0 & (0u128.wrapping_sub(b as u128)))
    }

    pub(crate) fn to_le_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }

    pub(crate) fn from_le_bytes(b: [u8; 16]) -> F128 {
        F128(u128::from_le_bytes(b))
    }

    /// Field multiplication (constant time; PCLMULQDQ on x86_64 when available). The same as
    /// `*`, callable where the operator would need the trait in scope.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub(crate) fn mul(self, rhs: F128) -> F128 {
        let (lo, hi) = clmul(self.0, rhs.0);
        F128(reduce(lo, hi))
    }

    /// Unreduced 256-bit product, for sums of products that are reduced once at the end.
    #[inline]
    pub fn mul_wide(self, rhs: F128) -> Wide {
        let (lo, hi) = clmul(self.0, rhs.0);
        Wide { lo, hi }
    }

    /// `self^2`.
    #[inline]
    pub(crate) fn square(self) -> F128 {
        self * self
    }

    /// `self^e` by square-and-multiply over a public exponent.
    pub(crate) fn pow(self, mut e: u128) -> F128 {
        let mut acc = F128::ONE;
        let mut base = self;
        while e != 0 {
            if e & 1 == 1 {
                acc *= base;
            }
            base = base.square();
            e >>= 1;
        }
        acc
    }

    /// Views raw `u128` elements as field elements, without a copy.
    pub(crate) fn from_u128_slice(v: &[u128]) -> &[F128] {
        // SAFETY: F128 is repr(transparent) over u128 (same size, alignment and validity), and
        // the returned slice borrows `v` for its whole lifetime.
        unsafe { core::slice::from_raw_parts(v.as_ptr() as *const F128, v.len()) }
    }

    /// `self·x`: a shift and a constant-time fold of the top bit.
    #[inline]
    pub(crate) fn mul_x(self) -> F128 {
        F128((self.0 << 1) ^ (0u128.wrapping_sub(self.0 >> 127) & 0x87))
    }

    /// `x^i` for `i < 128` (the polynomial-basis element).
    #[inline]
    pub(crate) fn x_pow(i: usize) -> F128 {
        F128(1u128 << i)
    }

    /// Σ a_i·b_i with a single reduction (over the shorter length).
    pub fn inner_product(a: &[F128], b: &[F128]) -> F128 {
        #[cfg(target_arch = "x86_64")]
        {
            if has_pclmul() {
                // SAFETY: the CPU supports pclmulqdq (checked just above).
                return unsafe { simd::inner_product(a, b) };
            }
        }
        let mut acc = Wide::ZERO;
        for (x, y) in a.iter().zip(b) {
            let (lo, hi) = clmul128(x.0, y.0);
            acc ^= Wide { lo, hi };
        }
        acc.reduce()
    }

    /// out_i = a_i · b_i (over the shortest length).
    pub(crate) fn mul_slices(a: &[F128], b: &[F128], out: &mut [F128]) {
        #[cfg(target_arch = "x86_64")]
        {
            if has_pclmul() {
                // SAFETY: the CPU supports pclmulqdq (checked just above).
                unsafe { simd::mul_slices(a, b, out) };
                return;
            }
        }
        for ((x, y), o) in a.iter().zip(b).zip(out.iter_mut()) {
            let (lo, hi) = clmul128(x.0, y.0);
            *o = F128(reduce(lo, hi));
        }
    }
}

/// An unreduced 256-bit carry-less product (or a XOR-sum of them).
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub struct Wide {
    pub lo: u128,
    pub hi: u128,
}

impl Wide {
    pub const ZERO: Wide = Wide { lo: 0, hi: 0 };
    /// Reduce modulo the field polynomial.
    #[inline]
    pub fn reduce(self) -> F128 {
        F128(reduce(self.lo, self.hi))
    }
}

impl BitXor for Wide {
    type Output = Wide;
    #[inline]
    fn bitxor(self, r: Wide) -> Wide {
        Wide { lo: self.lo ^ r.lo, hi: self.hi ^ r.hi }
    }
}
impl BitXorAssign for Wide {
    #[inline]
    fn bitxor_assign(&mut self, r: Wide) {
        self.lo ^= r.lo;
        self.hi ^= r.hi;
    }
}

impl zeroize::DefaultIsZeroes for F128 {}

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
/// Addition is XOR in characteristic 2.
impl Add for F128 {
    type Output = F128;
    #[inline]
    #[allow(clippy::suspicious_arithmetic_impl)]
    fn add(self, r: F128) -> F128 {
        self ^ r
    }
}
/// Subtraction is addition in characteristic 2.
impl core::ops::Sub for F128 {
    type Output = F128;
    #[inline]
    #[allow(clippy::suspicious_arithmetic_impl)]
    fn sub(self, rhs: F128) -> F128 {
        self + rhs
    }
}

/// Every element is its own negative in characteristic 2.
impl core::ops::Neg for F128 {
    type Output = F128;
    #[inline]
    fn neg(self) -> F128 {
        self
    }
}

impl AddAssign for F128 {
    #[inline]
    #[allow(clippy::suspicious_op_assign_impl)]
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
