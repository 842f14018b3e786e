//! Arithmetic modulo the P-256 base-field prime p, as the OLE and the 2PC ECDH need it: a
//! thin wrapper over `p256`'s field element (constant time), plus uniform elements from 512
//! hashed bits.

use p256::elliptic_curve::bigint::{Limb, U256};
use p256::elliptic_curve::subtle::{Choice, ConditionallySelectable};
use p256::{FieldBytes, FieldElement};

/// p = 2^256 − 2^224 + 2^192 + 2^96 − 1, big-endian.
const P_HEX: &str = "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff";

const P: U256 = U256::from_be_hex(P_HEX);

/// 2^256 mod p = 2^224 − 2^192 − 2^96 + 1.
const TWO_256: U256 = U256::from_be_hex("00000000fffffffeffffffffffffffffffffffff000000000000000000000001");

/// An element of GF(p).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp(pub(crate) FieldElement);

impl Fp {
    pub const ZERO: Fp = Fp(FieldElement::ZERO);
    #[cfg(test)]
    pub(crate) const ONE: Fp = Fp(FieldElement::ONE);

    /// From 32 big-endian bytes, if they are below p.
    pub fn from_be_bytes(b: &[u8; 32]) -> Option<Fp> {
        Option::from(FieldElement::from_bytes(FieldBytes::from_slice(b))).map(Fp)
    }

    pub fn to_be_bytes(self) -> [u8; 32] {
        self.0.to_bytes().into()
    }

    /// 512 bits reduced mod p: within 2^-256 of uniform when the bits are. As hi·2^256 + lo
    /// with each half reduced by one conditional subtraction (a 256-bit value is below 2p),
    /// in constant time.
    pub(crate) fn from_wide(b: &[u8; 64]) -> Fp {
        let (hi, lo) = b.split_at(32);
        let two_256 = Option::from(FieldElement::from_uint(TWO_256)).unwrap_or(FieldElement::ZERO);
        Fp(Self::reduce_256(hi).0 * two_256 + Self::reduce_256(lo).0)
    }

    /// A 32-byte big-endian value (below 2^256 < 2p) mod p.
    fn reduce_256(b: &[u8]) -> Fp {
        let v = U256::from_be_slice(b);
        let (d, borrow) = v.sbb(&P, Limb::ZERO);
        let r = U256::conditional_select(&d, &v, Choice::from((borrow.0 & 1) as u8));
        Fp(Option::from(FieldElement::from_uint(r)).unwrap_or(FieldElement::ZERO))
    }

    /// 2^i.
    pub(crate) fn pow2(i: usize) -> Fp {
        let mut b = [0u8; 32];
        b[31 - i / 8] = 1 << (i % 8);
        Fp::from_be_bytes(&b).expect("2^i < p for i < 256")
    }

    /// Bit i of the canonical representative (i < 256).
    pub fn bit(self, i: usize) -> bool {
        (self.to_be_bytes()[31 - i / 8] >> (i % 8)) & 1 == 1
    }

    /// a⁻¹ (0 ↦ 0).
    pub(crate) fn invert(self) -> Fp {
        Fp(Option::from(self.0.invert()).unwrap_or(FieldElement::ZERO))
    }

    /// A uniformly random element.
    pub fn random() -> Fp {
        let mut b = [0u8; 64];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut b);
        Fp::from_wide(&b)
    }
}

super::field_ops!(Fp);

#[cfg(test)]
mod tests {
    use super::*;
    use p256::elliptic_curve::bigint::{Encoding, NonZero, U512};

    /// The definition: the 512-bit integer's remainder mod p, by long division.
    fn reference(b: &[u8; 64]) -> [u8; 32] {
        let p = NonZero::new(U512::from_be_hex(&format!("{:0>128}", P_HEX))).expect("p is not zero");
        let r = U512::from_be_slice(b).rem(&p).to_be_bytes();
        r[32..].try_into().expect("32 bytes")
    }

    #[test]
    fn wide_reduction_is_the_remainder_mod_p() {
        let p: [u8; 32] = P.to_be_bytes();
        let mut edges = vec![[0xffu8; 64], [0u8; 64]];
        for (hi, lo) in [(p, p), ([0xff; 32], p), (p, [0xff; 32]), ([0; 32], p)] {
            let mut b = [0u8; 64];
            b[..32].copy_from_slice(&hi);
            b[32..].copy_from_slice(&lo);
            edges.push(b);
        }
        let mut rng = rand::rng();
        for _ in 0..200 {
            let mut b = [0u8; 64];
            rand::RngCore::fill_bytes(&mut rng, &mut b);
            edges.push(b);
        }
        for b in edges {
            assert_eq!(Fp::from_wide(&b).to_be_bytes(), reference(&b), "{b:02x?}");
        }
    }
}
