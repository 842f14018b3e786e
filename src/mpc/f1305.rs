//! Arithmetic modulo p = 2^130 − 5, Poly1305's field, as the two-party Poly1305 needs it
//! ([`super::poly1305`]): constant-time Montgomery arithmetic from `crypto-bigint` (as
//! [`super::f25519`]), 17 little-endian bytes on the wire, uniform elements from 512 hashed
//! bits.

use p256::elliptic_curve::bigint::modular::constant_mod::{Residue, ResidueParams};
use p256::elliptic_curve::bigint::{impl_modulus, Encoding, Limb, U192};
use p256::elliptic_curve::subtle::{Choice, ConditionallySelectable};

impl_modulus!(P1305, U192, "0000000000000003fffffffffffffffffffffffffffffffb");

type R = Residue<P1305, { U192::LIMBS }>;

/// An element of GF(2^130 − 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct F1305(R);

/// Bytes of an element: 130 bits.
pub(crate) const F1305_BYTES: usize = 17;

impl F1305 {
    pub const ZERO: F1305 = F1305(R::ZERO);
    #[cfg(test)]
    pub const ONE: F1305 = F1305(R::ONE);

    /// A little-endian integer of any length, reduced mod p: its 16-byte words by Horner's
    /// rule (each word's Montgomery form x·R² stays below p·2^192).
    pub(crate) fn reduce_le(b: &[u8]) -> F1305 {
        let two_128 = F1305(R::new(&U192::ONE.shl_vartime(128)));
        b.chunks(16).rev().fold(F1305::ZERO, |acc, word| {
            let mut wide = [0u8; 24];
            wide[..word.len()].copy_from_slice(word);
            acc * two_128 + F1305(R::new(&U192::from_le_slice(&wide)))
        })
    }

    /// From 17 little-endian bytes, if they encode an integer below p.
    pub fn from_le_bytes(b: &[u8; F1305_BYTES]) -> Option<F1305> {
        let mut wide = [0u8; 24];
        wide[..F1305_BYTES].copy_from_slice(b);
        let v = U192::from_le_slice(&wide);
        let (_, borrow) = v.sbb(&P1305::MODULUS, Limb::ZERO);
        // a borrow means v < p
        bool::from(Choice::from((borrow.0 & 1) as u8)).then(|| F1305(R::new(&v)))
    }

    /// The canonical representative, little-endian.
    pub fn to_le_bytes(self) -> [u8; F1305_BYTES] {
        let mut out = [0u8; F1305_BYTES];
        out.copy_from_slice(&self.0.retrieve().to_le_bytes()[..F1305_BYTES]);
        out
    }

    /// 512 bits reduced mod p: within 2^-380 of uniform when the bits are.
    pub(crate) fn from_wide(b: &[u8; 64]) -> F1305 {
        Self::reduce_le(b)
    }

    /// 2^i (i < 192).
    pub(crate) fn pow2(i: usize) -> F1305 {
        let mut b = [0u8; 24];
        b[i / 8] = 1 << (i % 8);
        Self::reduce_le(&b)
    }

    /// Bit i of the canonical representative (i < 136).
    pub fn bit(self, i: usize) -> bool {
        (self.to_le_bytes()[i / 8] >> (i % 8)) & 1 == 1
    }

    /// a⁻¹ (0 ↦ 0), in constant time.
    pub(crate) fn invert(self) -> F1305 {
        let (inverse, exists) = self.0.invert();
        F1305(R::conditional_select(&R::ZERO, &inverse, Choice::from(exists)))
    }

    /// `a` if `take`, else zero, without branching.
    pub(crate) fn select(self, take: bool) -> F1305 {
        F1305(R::conditional_select(&R::ZERO, &self.0, Choice::from(take as u8)))
    }

    /// A uniformly random nonzero element.
    pub fn random_nonzero() -> F1305 {
        loop {
            let mut b = [0u8; 64];
            rand::RngCore::fill_bytes(&mut rand::rng(), &mut b);
            let x = F1305::from_wide(&b);
            if x != F1305::ZERO {
                return x;
            }
        }
    }
}

super::field_ops!(F1305);

#[cfg(test)]
mod tests {
    use super::*;
    use p256::elliptic_curve::bigint::{NonZero, U512};

    fn p_le() -> [u8; 64] {
        let mut p = [0u8; 64];
        p[0] = 0xfb;
        p[1..16].fill(0xff);
        p[16] = 3;
        p
    }

    /// The definition: the 512-bit integer's remainder mod p, by long division.
    fn reference(b: &[u8; 64]) -> [u8; F1305_BYTES] {
        let p = NonZero::new(U512::from_le_slice(&p_le())).expect("p is not zero");
        let r = U512::from_le_slice(b).rem(&p).to_le_bytes();
        r[..F1305_BYTES].try_into().expect("17 bytes")
    }

    #[test]
    fn wide_reduction_is_the_remainder_mod_p() {
        let mut cases = vec![[0xffu8; 64], [0u8; 64], p_le()];
        let mut p_plus = p_le();
        p_plus[0] += 4;
        cases.push(p_plus);
        let mut rng = rand::rng();
        for _ in 0..200 {
            let mut b = [0u8; 64];
            rand::RngCore::fill_bytes(&mut rng, &mut b);
            cases.push(b);
        }
        for b in cases {
            assert_eq!(F1305::from_wide(&b).to_le_bytes(), reference(&b), "{b:02x?}");
        }
    }

    #[test]
    fn only_canonical_bytes_decode_and_arithmetic_wraps_at_p() {
        let p: [u8; F1305_BYTES] = p_le()[..F1305_BYTES].try_into().expect("17 bytes");
        assert_eq!(F1305::from_le_bytes(&p), None, "p itself");
        assert_eq!(F1305::from_le_bytes(&[0xff; F1305_BYTES]), None);
        let mut below = p;
        below[0] -= 1;
        assert_eq!(F1305::from_le_bytes(&below).map(|x| x + F1305::ONE), Some(F1305::ZERO), "p − 1 = −1");
        assert_eq!(F1305::pow2(130).to_le_bytes()[0], 5, "2^130 = 5");
        for _ in 0..50 {
            let x = F1305::random_nonzero();
            assert_eq!(F1305::from_le_bytes(&x.to_le_bytes()), Some(x));
            assert_eq!(x * x.invert(), F1305::ONE);
        }
        assert_eq!(F1305::ZERO.invert(), F1305::ZERO);
    }
}
