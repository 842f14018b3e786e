//! Arithmetic modulo p = 2^255 − 19, the field of Curve25519, as the OLE and the two-party
//! X25519 need it: constant-time Montgomery arithmetic from `crypto-bigint` (the integer crate
//! `p256` already builds on), little-endian bytes as RFC 7748 writes them, uniform elements
//! from 512 hashed bits, and the square root that recovers a point's coordinates.

use p256::elliptic_curve::bigint::modular::constant_mod::{Residue, ResidueParams};
use p256::elliptic_curve::bigint::{impl_modulus, Encoding, Limb, U256};

use p256::elliptic_curve::subtle::{Choice, ConditionallySelectable, ConstantTimeEq};

impl_modulus!(P25519, U256, "7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed");

type R = Residue<P25519, { U256::LIMBS }>;

/// An element of GF(2^255 − 19).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct F25519(R);

/// (p − 5)/8, the exponent of the square-root candidate for p ≡ 5 (mod 8).
const SQRT_EXP: U256 = U256::from_be_hex("0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffd");
/// (p − 1)/4, the exponent that gives √−1 = 2^((p−1)/4).
const SQRT_M1_EXP: U256 = U256::from_be_hex("1ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffb");

impl F25519 {
    pub const ZERO: F25519 = F25519(R::ZERO);
    pub const ONE: F25519 = F25519(R::ONE);

    /// From a small integer.
    pub fn from_u64(v: u64) -> F25519 {
        F25519(R::new(&U256::from_u64(v)))
    }

    /// From 32 little-endian bytes, if they encode an integer below p.
    pub fn from_le_bytes(b: &[u8; 32]) -> Option<F25519> {
        let v = U256::from_le_slice(b);
        let (_, borrow) = v.sbb(&P25519::MODULUS, Limb::ZERO);
        // a borrow means v < p
        bool::from(Choice::from((borrow.0 & 1) as u8)).then(|| F25519(R::new(&v)))
    }

    /// From 32 little-endian bytes read as an integer below 2^256, reduced mod p.
    fn reduce_le(b: &[u8]) -> F25519 {
        // Montgomery form of any 256-bit integer: x·R² stays below p·2^256
        F25519(R::new(&U256::from_le_slice(b)))
    }

    /// The canonical representative, little-endian.
    pub fn to_le_bytes(self) -> [u8; 32] {
        self.0.retrieve().to_le_bytes()
    }

    /// 512 bits reduced mod p: within 2^-256 of uniform when the bits are (hi·2^256 + lo,
    /// little-endian halves).
    pub(crate) fn from_wide(b: &[u8; 64]) -> F25519 {
        let (lo, hi) = b.split_at(32);
        // 2^256 mod p = 38
        Self::reduce_le(hi) * F25519::from_u64(38) + Self::reduce_le(lo)
    }

    /// 2^i (i < 256).
    pub(crate) fn pow2(i: usize) -> F25519 {
        let mut b = [0u8; 32];
        b[i / 8] = 1 << (i % 8);
        Self::reduce_le(&b)
    }

    /// Bit i of the canonical representative (i < 256).
    pub fn bit(self, i: usize) -> bool {
        (self.to_le_bytes()[i / 8] >> (i % 8)) & 1 == 1
    }

    /// a⁻¹ (0 ↦ 0), in constant time.
    pub(crate) fn invert(self) -> F25519 {
        let (inverse, exists) = self.0.invert();
        F25519(R::conditional_select(&R::ZERO, &inverse, Choice::from(exists)))
    }

    /// A square root of `self` if it has one, in constant time: for p ≡ 5 (mod 8) the
    /// candidate β = a^((p+3)/8) = a·a^((p−5)/8) squares to a or to −a; in the second case
    /// β·√−1 is the root. Which of the two roots is returned is not specified.
    pub(crate) fn sqrt(self) -> Option<F25519> {
        let beta = self.0 * self.0.pow(&SQRT_EXP);
        let sqrt_m1 = R::new(&U256::from_u64(2)).pow(&SQRT_M1_EXP);
        let square = beta * beta;
        let flip = square.ct_eq(&-self.0);
        let root = R::conditional_select(&beta, &(beta * sqrt_m1), flip);
        bool::from((root * root).ct_eq(&self.0)).then_some(F25519(root))
    }

    /// Whether the canonical representative is odd (the "sign" RFC 8032 encodes).
    pub(crate) fn is_odd(self) -> bool {
        self.bit(0)
    }

    /// `a` if `take`, else zero, without branching.
    pub(crate) fn select(self, take: bool) -> F25519 {
        F25519(R::conditional_select(&R::ZERO, &self.0, Choice::from(take as u8)))
    }

    /// A uniformly random element.
    pub fn random() -> F25519 {
        let mut b = [0u8; 64];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut b);
        F25519::from_wide(&b)
    }
}

super::field_ops!(F25519);

#[cfg(test)]
mod tests {
    use super::*;
    use p256::elliptic_curve::bigint::{NonZero, U512};

    const P_LE: [u8; 32] = {
        let mut p = [0xff; 32];
        p[0] = 0xed;
        p[31] = 0x7f;
        p
    };

    /// The definition: the 512-bit integer's remainder mod p, by long division.
    fn reference(b: &[u8; 64]) -> [u8; 32] {
        let p = NonZero::new(U512::from_le_slice(&[&P_LE[..], &[0; 32]].concat())).expect("p is not zero");
        let r = U512::from_le_slice(b).rem(&p).to_le_bytes();
        r[..32].try_into().expect("32 bytes")
    }

    #[test]
    fn wide_reduction_is_the_remainder_mod_p() {
        let mut edges = vec![[0xffu8; 64], [0u8; 64]];
        for (lo, hi) in [(P_LE, P_LE), ([0xff; 32], P_LE), (P_LE, [0xff; 32]), (P_LE, [0; 32])] {
            edges.push([lo, hi].concat().try_into().expect("64 bytes"));
        }
        let mut rng = rand::rng();
        for _ in 0..200 {
            let mut b = [0u8; 64];
            rand::RngCore::fill_bytes(&mut rng, &mut b);
            edges.push(b);
        }
        for b in edges {
            assert_eq!(F25519::from_wide(&b).to_le_bytes(), reference(&b), "{b:02x?}");
        }
    }

    #[test]
    fn only_canonical_bytes_decode_and_they_round_trip() {
        assert_eq!(F25519::from_le_bytes(&P_LE), None, "p itself");
        assert_eq!(F25519::from_le_bytes(&[0xff; 32]), None);
        let mut below = P_LE;
        below[0] -= 1;
        assert_eq!(F25519::from_le_bytes(&below).map(|x| x + F25519::ONE), Some(F25519::ZERO), "p − 1 = −1");
        for _ in 0..50 {
            let x = F25519::random();
            assert_eq!(F25519::from_le_bytes(&x.to_le_bytes()), Some(x));
        }
        assert_eq!(F25519::pow2(255).to_le_bytes()[0], 19, "2^255 = 19");
        assert!(F25519::pow2(3).bit(3) && !F25519::pow2(3).bit(2));
    }

    /// Inverses and square roots: x·x⁻¹ = 1, √(x²) = ±x, and a non-residue (2, as p ≡ 5 mod 8)
    /// has none.
    #[test]
    fn inverses_and_square_roots_hold() {
        assert_eq!(F25519::ZERO.invert(), F25519::ZERO);
        for _ in 0..50 {
            let x = F25519::random();
            assert_eq!(x * x.invert(), F25519::ONE);
            let r = (x * x).sqrt().expect("a square has a root");
            assert!(r == x || r == -x);
        }
        assert_eq!(F25519::from_u64(2).sqrt(), None, "2 is not a square mod p");
        let i = (-F25519::ONE).sqrt().expect("−1 is a square mod p");
        assert_eq!(i * i, -F25519::ONE);
    }
}
