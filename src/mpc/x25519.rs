//! Two-party X25519 for MPC mode's TLS 1.3: each party holds a scalar share dᵢ; the client key
//! share the server sees is u(8(d₁ + d₂)·B), the sum of both parties' points; once the server's
//! share S arrives, each computes its share point 8dᵢ·S with both coordinates, and the
//! conversion of [`super::ecdh`] (on the Montgomery curve v² = u³ + A·u² + u the sum has
//! u₃ = λ² − A − u₁ − u₂) ends with additive shares over GF(2^255 − 19) of the shared secret
//! u(8(d₁ + d₂)·S), which is what X25519 gives the server (RFC 7748 §6.1), without either
//! party learning it.
//!
//! - **Lifting the server's share.** X25519 sends u only, and a u has two points (u, ±v). Both
//!   parties lift it to the same point S (the Edwards point of sign 0); which one does not
//!   matter, since u(−P) = u(P) and d₁·S + d₂·S = (d₁ + d₂)·S for either. A u that is not on
//!   Curve25519 (on its twist) is refused.
//! - **The cofactor.** Every scalar is multiplied by 8, so a small-order part of the server's
//!   point vanishes from both shares alike and their sum is the secret the server computes with
//!   its clamped scalar (itself a multiple of 8). A share point at the identity (a server point
//!   of small order) is refused; a sum at the identity, which would give the all-zero secret
//!   RFC 8446 §7.4.2 forbids, has u₁ = u₂ and is refused by the conversion (`SameX`).
//! - **Coordinates.** The curve arithmetic is `curve25519-dalek`'s (Edwards form, constant
//!   time); a share point's Montgomery (u, v) comes from its Edwards (x, y) by the birational
//!   map of RFC 7748 §4.1, u = (1 + y)/(1 − y), v = √−486664·u/x, with x recovered from the
//!   encoding's y and sign. One fixed root √−486664 makes the map a group isomorphism (the other
//!   root composes it with negation), so sums map to sums.

use super::f25519::F25519;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::montgomery::MontgomeryPoint;
use curve25519_dalek::scalar::Scalar;

/// Curve25519's coefficient A (v² = u³ + A·u² + u).
pub(crate) const CURVE_A: u64 = 486_662;

/// Why a point of the two-party X25519 was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum X25519Error {
    #[error("the server's X25519 key share is not a point of Curve25519 (it is on the twist)")]
    NotOnCurve,
    #[error("the server's X25519 key share has small order (the shared secret would be known)")]
    SmallOrder,
    #[error("the peer's point share is not an encoded point of the prime-order subgroup")]
    BadPeerPoint,
}

/// A party's scalar share, uniform mod the group order ℓ (from 512 random bits).
pub(crate) fn random_scalar() -> Scalar {
    let mut b = [0u8; 64];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut b);
    Scalar::from_bytes_mod_order_wide(&b)
}

/// This party's half of the client key share, 8d·B: the client key share is the u-coordinate
/// of the sum of both halves ([`client_key_share`]).
pub(crate) fn public_half(d: &Scalar) -> EdwardsPoint {
    EdwardsPoint::mul_base(d).mul_by_cofactor()
}

/// The other party's half, as [`public_half`] encodes it (compressed Edwards): refused unless
/// it is a point of the prime-order subgroup.
pub(crate) fn peer_half(bytes: &[u8]) -> Result<EdwardsPoint, X25519Error> {
    let bytes: [u8; 32] = bytes.try_into().map_err(|_| X25519Error::BadPeerPoint)?;
    let p = CompressedEdwardsY(bytes).decompress().ok_or(X25519Error::BadPeerPoint)?;
    if !p.is_torsion_free() {
        return Err(X25519Error::BadPeerPoint);
    }
    Ok(p)
}

/// The client's X25519 key share (32 bytes, RFC 7748's u encoding) from both halves.
pub(crate) fn client_key_share(mine: &EdwardsPoint, theirs: &EdwardsPoint) -> [u8; 32] {
    (mine + theirs).to_montgomery().to_bytes()
}

/// This party's share point 8d·S of the shared point, as Montgomery (u, v), from its scalar
/// share and the server's key share (RFC 7748's u encoding).
pub(crate) fn share_point(d: &Scalar, server: &[u8; 32]) -> Result<(F25519, F25519), X25519Error> {
    let s = MontgomeryPoint(*server).to_edwards(0).ok_or(X25519Error::NotOnCurve)?;
    montgomery(&(s * d).mul_by_cofactor()).ok_or(X25519Error::SmallOrder)
}

/// The Montgomery coordinates (u, v) of an Edwards point (RFC 7748 §4.1); `None` when x = 0
/// (the identity and the point of order 2, which have no affine Montgomery image with v ≠ 0).
pub(crate) fn montgomery(p: &EdwardsPoint) -> Option<(F25519, F25519)> {
    let mut enc = p.compress().to_bytes();
    let sign = enc[31] >> 7 == 1;
    enc[31] &= 0x7f;
    let y = F25519::from_le_bytes(&enc)?;
    // −x² + y² = 1 + d·x²·y², d = −121665/121666: x² = (y² − 1)/(d·y² + 1)
    let d = constant(&EDWARDS_D);
    let one = F25519::ONE;
    let x = ((y * y - one) * (d * y * y + one).invert()).sqrt()?;
    // the encoding's sign is x's parity
    let x = if x.is_odd() == sign { x } else { -x };
    if x == F25519::ZERO {
        return None;
    }
    let u = (one + y) * (one - y).invert();
    let v = constant(&SQRT_MINUS_486664) * u * x.invert();
    Some((u, v))
}

/// Edwards25519's d = −121665/121666, little-endian.
const EDWARDS_D: [u8; 32] = hex32("a3785913ca4deb75abd841414d0a700098e879777940c78c73fe6f2bee6c0352");
/// A fixed square root of −486664 = −(A + 2), little-endian.
const SQRT_MINUS_486664: [u8; 32] = hex32("067e45ffaa046ecc821a7d4bd1d3a1c57e4ffc03dc087bd2bb06a060f4ed260f");

/// 32 bytes from 64 hex digits, at compile time.
const fn hex32(s: &str) -> [u8; 32] {
    const fn digit(c: u8) -> u8 {
        if c <= b'9' {
            c - b'0'
        } else {
            c - b'a' + 10
        }
    }
    let s = s.as_bytes();
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        out[i] = digit(s[2 * i]) << 4 | digit(s[2 * i + 1]);
        i += 1;
    }
    out
}

/// A field constant of this module (canonical, so it decodes).
fn constant(bytes: &[u8; 32]) -> F25519 {
    F25519::from_le_bytes(bytes).unwrap_or(F25519::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpc::ecdh::{exchange, EcdhError, EcdhProver, EcdhVerifier, SenderCheat, ROUND_COTS};
    use crate::ot::test_util::random_cots as cots;
    use crate::primitives::field::F128;
    use rand::Rng;

    /// Both parties' shares of the secret with `server` (u encoding), from scalar shares `d`.
    fn shares(d: [&Scalar; 2], server: &[u8; 32]) -> Result<(F25519, F25519), EcdhError> {
        let (u1, v1) = share_point(d[0], server).map_err(|_| EcdhError::Infinity)?;
        let (u2, v2) = share_point(d[1], server).map_err(|_| EcdhError::Infinity)?;
        let a = EcdhProver::from_coordinates(u1, v1, F25519::from_u64(CURVE_A));
        let b = EcdhVerifier::from_coordinates(u2, v2);
        let delta = F128(rand::rng().random());
        let (k, c, m) = cots(delta, ROUND_COTS.iter().sum());
        exchange(a, b, &k, delta, &c, &m).map(|(a, b, _)| (a, b))
    }

    /// The constants are what their names say.
    #[test]
    fn the_curve_constants_hold() {
        let d = constant(&EDWARDS_D);
        assert_eq!(d * F25519::from_u64(121_666), -F25519::from_u64(121_665));
        let r = constant(&SQRT_MINUS_486664);
        assert_eq!(r * r, -F25519::from_u64(CURVE_A + 2));
    }

    /// The map to Montgomery form: its u is dalek's, (u, v) is on the curve, and the sum of two
    /// points maps to the Montgomery sum of their images.
    #[test]
    fn the_montgomery_image_is_on_the_curve_and_adds() {
        let a = F25519::from_u64(CURVE_A);
        for _ in 0..20 {
            let (p, q) = (public_half(&random_scalar()), public_half(&random_scalar()));
            let (u1, v1) = montgomery(&p).expect("finite");
            let (u2, v2) = montgomery(&q).expect("finite");
            assert_eq!(u1.to_le_bytes(), p.to_montgomery().to_bytes());
            assert_eq!(v1 * v1, u1 * u1 * u1 + a * u1 * u1 + u1, "on v² = u³ + A·u² + u");
            let lambda = (v2 - v1) * (u2 - u1).invert();
            let u3 = lambda * lambda - a - u1 - u2;
            let v3 = lambda * (u1 - u3) - v1;
            assert_eq!(montgomery(&(p + q)), Some((u3, v3)), "the map is additive");
        }
        assert_eq!(montgomery(&EdwardsPoint::default()), None, "the identity");
    }

    /// RFC 7748 §6.1: Alice's key split between two parties (8(d₁ + d₂) her clamped scalar)
    /// gives her public key as the client key share, and shares of the published secret with
    /// Bob's key.
    #[test]
    fn shares_of_the_rfc_7748_secret_add_up() {
        let alice_private = hex32("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
        let alice_public = hex32("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
        let bob_public = hex32("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
        let secret = hex32("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
        // the clamped scalar k, a multiple of 8: k = 8·m with m < 2^252 < ℓ
        let mut k = alice_private;
        k[0] &= 248;
        k[31] &= 127;
        k[31] |= 64;
        let mut m = [0u8; 32];
        for i in 0..32 {
            // k >> 3
            m[i] = (k[i] >> 3) | k.get(i + 1).map_or(0, |n| n << 5);
        }
        let m = Scalar::from_bytes_mod_order(m);
        let d1 = random_scalar();
        let d2 = m - d1;
        assert_eq!(client_key_share(&public_half(&d1), &public_half(&d2)), alice_public);
        let (a, b) = shares([&d1, &d2], &bob_public).expect("finite points");
        assert_eq!((a + b).to_le_bytes(), secret);
        assert_ne!(a.to_le_bytes(), secret, "neither share is the secret");
    }

    /// The exchange costs what P-256's does: the same OLEs over a 256-bit field, 32-byte
    /// elements.
    #[test]
    fn the_exchange_sends_as_many_bytes_as_p256s() {
        let server = MontgomeryPoint::mul_base_clamped(rand::rng().random()).to_bytes();
        let (d1, d2) = (random_scalar(), random_scalar());
        let (u1, v1) = share_point(&d1, &server).unwrap();
        let (u2, v2) = share_point(&d2, &server).unwrap();
        let a = EcdhProver::from_coordinates(u1, v1, F25519::from_u64(CURVE_A));
        let b = EcdhVerifier::from_coordinates(u2, v2);
        let delta = F128(rand::rng().random());
        let (k, c, m) = cots(delta, ROUND_COTS.iter().sum());
        let (_, _, x25519_bytes) = exchange(a, b, &k, delta, &c, &m).unwrap();
        use crate::mpc::ecdh::random_scalar as p256_scalar;
        let s = (p256::ProjectivePoint::GENERATOR * p256_scalar()).to_affine();
        let (_, _, p256_bytes) =
            crate::mpc::ecdh::in_memory(&k, delta, &c, &m, &s, [&p256_scalar(), &p256_scalar()]).unwrap();
        assert_eq!(x25519_bytes, p256_bytes);
        println!("two-party X25519: {x25519_bytes} bytes exchanged (COTs aside)");
    }

    /// Against the server's side of X25519 (`curve25519-dalek`'s clamped multiplication):
    /// the secret the server derives from the client key share is the sum of the shares.
    #[test]
    fn shares_add_up_to_the_servers_secret() {
        let mut rng = rand::rng();
        for _ in 0..3 {
            let server_scalar: [u8; 32] = rng.random();
            let server = MontgomeryPoint::mul_base_clamped(server_scalar).to_bytes();
            let (d1, d2) = (random_scalar(), random_scalar());
            let client = client_key_share(&public_half(&d1), &public_half(&d2));
            let expected = MontgomeryPoint(client).mul_clamped(server_scalar).to_bytes();
            let (a, b) = shares([&d1, &d2], &server).expect("finite points");
            assert_eq!((a + b).to_le_bytes(), expected);
        }
    }

    /// A server share on the twist or of small order, a peer half off the curve or with a
    /// small-order part, and opposite halves (the identity as the sum) are refused.
    #[test]
    fn points_that_would_expose_or_break_the_secret_are_refused() {
        let d = random_scalar();
        // u = 2 is not on Curve25519: 8 + 4A + 2 is not a square mod p
        assert_eq!(share_point(&d, &hex32(&format!("02{}", "00".repeat(31)))), Err(X25519Error::NotOnCurve));
        for small in [[0u8; 32], hex32(&format!("01{}", "00".repeat(31)))] {
            assert_eq!(share_point(&d, &small), Err(X25519Error::SmallOrder), "{small:02x?}");
        }
        assert_eq!(peer_half(&[0u8; 31]), Err(X25519Error::BadPeerPoint));
        let torsion = curve25519_dalek::constants::EIGHT_TORSION[1];
        let mixed = (public_half(&d) + torsion).compress().to_bytes();
        assert_eq!(peer_half(&mixed), Err(X25519Error::BadPeerPoint));
        assert_eq!(peer_half(&public_half(&d).compress().to_bytes()), Ok(public_half(&d)));
        let server = MontgomeryPoint::mul_base_clamped(rand::rng().random()).to_bytes();
        assert!(matches!(shares([&d, &-d], &server), Err(EcdhError::SameX)));
    }

    /// The selective failure of the P-256 conversion holds here too: a sender whose OLE input
    /// is inconsistent at one bit gets a wrong secret exactly when the receiver's bit is set.
    #[test]
    fn an_inconsistent_sender_fails_exactly_on_the_receivers_bit() {
        let server = MontgomeryPoint::mul_base_clamped(rand::rng().random()).to_bytes();
        let (mut wrong, mut right) = (false, false);
        for _ in 0..64 {
            let (d1, d2) = (random_scalar(), random_scalar());
            let (u1, v1) = share_point(&d1, &server).unwrap();
            let (u2, v2) = share_point(&d2, &server).unwrap();
            let mut a = EcdhProver::from_coordinates(u1, v1, F25519::from_u64(CURVE_A));
            a.cheat(SenderCheat { round: 1, ole: 0, bit: 77, error: F25519::random() });
            let b = EcdhVerifier::from_coordinates(u2, v2);
            let b_bit = b.receiver_input_bit(77);
            let delta = F128(rand::rng().random());
            let (k, c, m) = cots(delta, ROUND_COTS.iter().sum());
            let (sa, sb, _) = exchange(a, b, &k, delta, &c, &m).unwrap();
            let right_secret = (sa + sb) == F25519::from_le_bytes(&shared(&d1, &d2, &server)).unwrap();
            assert_eq!(right_secret, !b_bit);
            wrong |= !right_secret;
            right |= right_secret;
            if wrong && right {
                return;
            }
        }
        panic!("64 random bits of B were all equal");
    }

    /// The secret 8(d₁ + d₂)·S computed in one place, for the tests.
    fn shared(d1: &Scalar, d2: &Scalar, server: &[u8; 32]) -> [u8; 32] {
        let s = MontgomeryPoint(*server).to_edwards(0).unwrap();
        (s * (d1 + d2)).mul_by_cofactor().to_montgomery().to_bytes()
    }
}
