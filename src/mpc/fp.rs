//! Arithmetic modulo the P-256 base-field prime p, as the OLE and the 2PC ECDH need it: a
//! thin wrapper over `p256`'s field element (constant time), plus uniform elements from 512
//! hashed bits.

use p256::elliptic_curve::bigint::{Encoding, NonZero, U512};
use p256::{FieldBytes, FieldElement};

/// p = 2^256 − 2^224 + 2^192 + 2^96 − 1, big-endian.
const P_HEX: &str = "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff";

/// An element of GF(p).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp(pub(crate) FieldElement);

impl Fp {
    pub const ZERO: Fp = Fp(FieldElement::ZERO);
    pub const ONE: Fp = Fp(FieldElement::ONE);

    /// From 32 big-endian bytes, if they are below p.
    pub fn from_be_bytes(b: &[u8; 32]) -> Option<Fp> {
        Option::from(FieldElement::from_bytes(FieldBytes::from_slice(b))).map(Fp)
    }

    pub fn to_be_bytes(self) -> [u8; 32] {
        self.0.to_bytes().into()
    }

    /// 512 bits reduced mod p: within 2^-256 of uniform when the bits are.
    pub fn from_wide(b: &[u8; 64]) -> Fp {
        let p = NonZero::new(U512::from_be_hex(&format!("{:0>128}", P_HEX))).expect("p is not zero");
        let r = U512::from_be_slice(b).rem(&p);
        let bytes = r.to_be_bytes();
        let mut low = [0u8; 32];
        low.copy_from_slice(&bytes[32..]);
        Fp::from_be_bytes(&low).expect("a remainder mod p is below p")
    }

    /// 2^i.
    pub fn pow2(i: usize) -> Fp {
        let mut b = [0u8; 32];
        b[31 - i / 8] = 1 << (i % 8);
        Fp::from_be_bytes(&b).expect("2^i < p for i < 256")
    }

    /// Bit i of the canonical representative (i < 256).
    pub fn bit(self, i: usize) -> bool {
        (self.to_be_bytes()[31 - i / 8] >> (i % 8)) & 1 == 1
    }

    /// a⁻¹ (0 ↦ 0).
    pub fn invert(self) -> Fp {
        Fp(Option::from(self.0.invert()).unwrap_or(FieldElement::ZERO))
    }

    /// A uniformly random element.
    pub fn random() -> Fp {
        let mut b = [0u8; 64];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut b);
        Fp::from_wide(&b)
    }
}

impl core::ops::Add for Fp {
    type Output = Fp;
    fn add(self, o: Fp) -> Fp {
        Fp(self.0 + o.0)
    }
}

impl core::ops::Sub for Fp {
    type Output = Fp;
    fn sub(self, o: Fp) -> Fp {
        Fp(self.0 - o.0)
    }
}

impl core::ops::Mul for Fp {
    type Output = Fp;
    fn mul(self, o: Fp) -> Fp {
        Fp(self.0 * o.0)
    }
}

impl core::ops::Neg for Fp {
    type Output = Fp;
    fn neg(self) -> Fp {
        Fp(-self.0)
    }
}
