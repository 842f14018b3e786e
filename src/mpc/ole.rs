//! OLE from random correlated OT, Gilboa's construction, over GF(2^128) and over the base
//! fields of P-256 and Curve25519 ([`OleField`]): the sender holds a, the receiver b; they end
//! with x and y, x + y = a·b, each learning nothing of the other's input. For each bit b_i of b one OT: the sender offers
//! (s_i, s_i + a·2^i), the receiver takes t_i by b_i; then y = Σ t_i = Σ s_i + a·b and
//! x = −Σ s_i.
//!
//! Each chosen-message OT comes from one random COT (the OT sender holds K, the receiver
//! M = K + c·Δ for a random choice c): the receiver sends d = b_i ⊕ c; the sender's pads are
//! P₀ = H(K + d·Δ, τ) and P₁ = H(K + (1 ⊕ d)·Δ, τ), of which the receiver can compute exactly
//! the one for b_i, H(M, τ); the sender sends u = P₀ − P₁ + a·2^i and keeps s_i = P₀. H is the
//! correlation-robust hash of the garbled circuits ([`crate::gc::hash`]), τ the COT's index in
//! the session (in a domain of tweaks of its own).
//!
//! Messages per OLE: one bit per input bit receiver → sender, one field element per input bit
//! sender → receiver (2 KiB over GF(2^128), 8 KiB over GF(p)).

use super::f1305::{F1305, F1305_BYTES};
use super::f25519::F25519;
use super::fp::Fp;
use crate::gc::hash::GateHash;
use crate::ot::ct::bit_mask;
use crate::primitives::field::F128;
use core::ops::{Add, Mul, Neg, Sub};
use p256::elliptic_curve::subtle::ConditionallySelectable;

/// A field OLE runs over: GF(2^128) (GHASH) or the base field of P-256 or Curve25519 (ECDH).
pub trait OleField: Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Neg<Output = Self> {
    const ZERO: Self;
    /// Bits of an element, hence COTs per OLE.
    const BITS: usize;
    /// Bit i of the element's canonical form (b = Σ bit_i · 2^i, or Σ bit_i · x^i).
    fn bit(self, i: usize) -> bool;
    /// 2^i (x^i in GF(2^128)).
    fn pow2(i: usize) -> Self;
    /// A pseudorandom element from the hash of a COT label under `tweak`.
    fn pad(hash: &GateHash, label: u128, tweak: u128) -> Self;
    /// `a` if `take`, else zero, without branching.
    fn select(self, take: bool) -> Self;
    /// Bytes of an element on the wire.
    const BYTES: usize;
    fn write(self, out: &mut Vec<u8>);
    /// An element from exactly [`Self::BYTES`] bytes; `None` if they encode none.
    fn read(bytes: &[u8]) -> Option<Self>;
    /// a⁻¹ (0 ↦ 0), in constant time.
    fn invert(self) -> Self;
}

impl OleField for F128 {
    const ZERO: Self = F128::ZERO;
    const BITS: usize = 128;
    fn bit(self, i: usize) -> bool {
        (self.0 >> i) & 1 == 1
    }
    fn pow2(i: usize) -> Self {
        F128::x_pow(i)
    }
    fn pad(hash: &GateHash, label: u128, tweak: u128) -> Self {
        F128(hash.hash([label], |_| tweak)[0])
    }
    fn select(self, take: bool) -> Self {
        F128(self.0 & bit_mask(take))
    }
    const BYTES: usize = 16;
    fn write(self, out: &mut Vec<u8>) {
        out.extend(self.to_le_bytes());
    }
    fn read(bytes: &[u8]) -> Option<Self> {
        Some(F128::from_le_bytes(bytes.try_into().ok()?))
    }
    fn invert(self) -> Self {
        inverse(self)
    }
}

/// 512 hashed bits of a COT label for a prime field's pad (four tweaks under the one the
/// caller gives), which the field reduces mod p.
fn wide_pad(hash: &GateHash, label: u128, tweak: u128) -> [u8; 64] {
    let t = tweak << 2;
    let h = hash.hash([label; 4], |k| t | k as u128);
    let mut wide = [0u8; 64];
    for (chunk, word) in wide.chunks_exact_mut(16).zip(h) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    wide
}

impl OleField for Fp {
    const ZERO: Self = Fp::ZERO;
    const BITS: usize = 256;
    fn bit(self, i: usize) -> bool {
        Fp::bit(self, i)
    }
    fn pow2(i: usize) -> Self {
        Fp::pow2(i)
    }
    fn pad(hash: &GateHash, label: u128, tweak: u128) -> Self {
        Fp::from_wide(&wide_pad(hash, label, tweak))
    }
    fn select(self, take: bool) -> Self {
        Fp(p256::FieldElement::conditional_select(&p256::FieldElement::ZERO, &self.0, (take as u8).into()))
    }
    /// Big-endian, canonical (below p).
    const BYTES: usize = 32;
    fn write(self, out: &mut Vec<u8>) {
        out.extend(self.to_be_bytes());
    }
    fn read(bytes: &[u8]) -> Option<Self> {
        Fp::from_be_bytes(bytes.try_into().ok()?)
    }
    fn invert(self) -> Self {
        Fp::invert(self)
    }
}

impl OleField for F25519 {
    const ZERO: Self = F25519::ZERO;
    /// 255 bits of the field and a 256th that is always 0 (a whole number of bytes of
    /// corrections).
    const BITS: usize = 256;
    fn bit(self, i: usize) -> bool {
        F25519::bit(self, i)
    }
    fn pow2(i: usize) -> Self {
        F25519::pow2(i)
    }
    fn pad(hash: &GateHash, label: u128, tweak: u128) -> Self {
        F25519::from_wide(&wide_pad(hash, label, tweak))
    }
    fn select(self, take: bool) -> Self {
        F25519::select(self, take)
    }
    /// Little-endian, canonical (below p), as RFC 7748 writes field elements.
    const BYTES: usize = 32;
    fn write(self, out: &mut Vec<u8>) {
        out.extend(self.to_le_bytes());
    }
    fn read(bytes: &[u8]) -> Option<Self> {
        F25519::from_le_bytes(bytes.try_into().ok()?)
    }
    fn invert(self) -> Self {
        F25519::invert(self)
    }
}

impl OleField for F1305 {
    const ZERO: Self = F1305::ZERO;
    /// 130 bits of the field and six more that are always 0 (a whole number of bytes of
    /// corrections).
    const BITS: usize = 136;
    fn bit(self, i: usize) -> bool {
        F1305::bit(self, i)
    }
    fn pow2(i: usize) -> Self {
        F1305::pow2(i)
    }
    fn pad(hash: &GateHash, label: u128, tweak: u128) -> Self {
        F1305::from_wide(&wide_pad(hash, label, tweak))
    }
    fn select(self, take: bool) -> Self {
        F1305::select(self, take)
    }
    /// Little-endian, canonical (below p), as RFC 8439 writes Poly1305's numbers.
    const BYTES: usize = F1305_BYTES;
    fn write(self, out: &mut Vec<u8>) {
        out.extend(self.to_le_bytes());
    }
    fn read(bytes: &[u8]) -> Option<Self> {
        F1305::from_le_bytes(bytes.try_into().ok()?)
    }
    fn invert(self) -> Self {
        F1305::invert(self)
    }
}

/// The OLE hash tweaks' domain: bit 125 set, so they never meet a garbled gate's tweaks under
/// the same hash (3i, 3i + 1 and 3i + 2 for gate i < 2^63, so below 2^65:
/// [`crate::gc::three_halves::garbler_tweak`]); F_p pads use four tweaks per COT above it
/// (tweak·4 + j).
const TWEAK_DOMAIN: u128 = 1 << 125;

/// COTs per OLE over GF(2^128): one per bit of the receiver's input.
pub const COTS_PER_OLE: usize = <F128 as OleField>::BITS;

/// Why an OLE message was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OleError {
    #[error("{what}: expected {expected}, got {got}")]
    CountMismatch { what: &'static str, expected: usize, got: usize },
}

fn check(what: &'static str, expected: usize, got: usize) -> Result<(), OleError> {
    if expected == got {
        Ok(())
    } else {
        Err(OleError::CountMismatch { what, expected, got })
    }
}

/// The receiver's corrections from a message of `n` of them packed 8 to a byte (`n` a multiple
/// of 8, as every OLE's `F::BITS` is).
pub(crate) fn corrections_from_bytes(msg: &[u8], n: usize) -> Result<Vec<bool>, OleError> {
    check("bytes of OLE corrections", n / 8, msg.len())?;
    Ok(crate::circuits::bytes_to_bits(msg))
}

/// Field elements as an OLE message carries them, [`OleField::BYTES`] each.
pub(crate) fn elements_to_bytes<F: OleField>(elements: &[F]) -> Vec<u8> {
    let mut out = Vec::with_capacity(elements.len() * F::BYTES);
    for e in elements {
        e.write(&mut out);
    }
    out
}

/// Exactly `n` field elements from a message; the error says what is wrong with it.
pub(crate) fn elements_from_bytes<F: OleField>(msg: &[u8], n: usize) -> Result<Vec<F>, &'static str> {
    if msg.len() != n * F::BYTES {
        return Err("OLE message of the wrong length");
    }
    msg.chunks_exact(F::BYTES).map(|c| F::read(c).ok_or("a field element that is not below p")).collect()
}

/// The tweak of COT `k` of a run whose first COT has session-wide index `first_cot`.
fn tweak(first_cot: u64, k: usize) -> u128 {
    TWEAK_DOMAIN | u128::from(first_cot + k as u64)
}

/// The receiver's first message: d = b_i ⊕ c for every bit of every input, given its random COT
/// choices (`F::BITS` per input, in order).
pub fn receiver_corrections<F: OleField>(inputs: &[F], cot_choices: &[bool]) -> Result<Vec<bool>, OleError> {
    check("COT choices", inputs.len() * F::BITS, cot_choices.len())?;
    Ok(inputs
        .iter()
        .flat_map(|b| (0..F::BITS).map(move |i| b.bit(i)))
        .zip(cot_choices)
        .map(|(bit, c)| bit ^ c)
        .collect())
}

/// The sender's side: from its inputs a, its COT keys K (`F::BITS` per input) under `delta`,
/// the session-wide index of the first COT (every COT's index must be unique in the session, it
/// is the hash tweak) and the receiver's corrections, its shares x and the message u.
pub fn sender<F: OleField>(
    inputs: &[F],
    delta: F128,
    cot_keys: &[F128],
    first_cot: u64,
    corrections: &[bool],
) -> Result<(Vec<F>, Vec<F>), OleError> {
    sender_inner(inputs, delta, cot_keys, first_cot, corrections, None)
}

/// A cheating sender, for tests: its input for bit `bit` of OLE `ole` is off by `error` (the
/// receiver's output is then off by error·2^bit exactly when its bit is set).
#[cfg(test)]
pub(crate) fn sender_with_error<F: OleField>(
    inputs: &[F],
    delta: F128,
    cot_keys: &[F128],
    first_cot: u64,
    corrections: &[bool],
    (ole, bit, error): (usize, usize, F),
) -> Result<(Vec<F>, Vec<F>), OleError> {
    sender_inner(inputs, delta, cot_keys, first_cot, corrections, Some((ole * F::BITS + bit, error)))
}

fn sender_inner<F: OleField>(
    inputs: &[F],
    delta: F128,
    cot_keys: &[F128],
    first_cot: u64,
    corrections: &[bool],
    error: Option<(usize, F)>,
) -> Result<(Vec<F>, Vec<F>), OleError> {
    let n = inputs.len() * F::BITS;
    check("COT keys", n, cot_keys.len())?;
    check("receiver corrections", n, corrections.len())?;
    let hash = GateHash::new();
    let mut shares = Vec::with_capacity(inputs.len());
    let mut message = Vec::with_capacity(n);
    for (j, a) in inputs.iter().enumerate() {
        let mut sum = F::ZERO;
        for i in 0..F::BITS {
            let k = j * F::BITS + i;
            let key0 = cot_keys[k].0 ^ (bit_mask(corrections[k]) & delta.0);
            let p0 = F::pad(&hash, key0, tweak(first_cot, k));
            let p1 = F::pad(&hash, key0 ^ delta.0, tweak(first_cot, k));
            sum = sum + p0;
            let a = match error {
                Some((at, e)) if at == k => *a + e,
                _ => *a,
            };
            message.push(p0 - p1 + a * F::pow2(i));
        }
        shares.push(-sum);
    }
    Ok((shares, message))
}

/// The receiver's side: from its inputs b, its COT MACs M = K + c·Δ, the index of the first COT
/// (as the sender's) and the sender's message, its shares y (x + y = a·b).
pub fn receiver<F: OleField>(
    inputs: &[F],
    cot_macs: &[F128],
    first_cot: u64,
    message: &[F],
) -> Result<Vec<F>, OleError> {
    let n = inputs.len() * F::BITS;
    check("COT MACs", n, cot_macs.len())?;
    check("sender message", n, message.len())?;
    let hash = GateHash::new();
    Ok(inputs
        .iter()
        .enumerate()
        .map(|(j, b)| {
            let mut y = F::ZERO;
            for i in 0..F::BITS {
                let k = j * F::BITS + i;
                y = y + F::pad(&hash, cot_macs[k].0, tweak(first_cot, k)) + message[k].select(b.bit(i));
            }
            y
        })
        .collect())
}

/// Additive to multiplicative, the first party's local steps around one OLE:
/// with additive shares x + y = z, party A picks a random nonzero r and runs the OLE as sender
/// on r against B's y, getting α (B gets β, α + β = r·y). A sends s = r·x + α; B's
/// multiplicative share is s + β = r·z, A's is r⁻¹: their product is z. B sees r·z, uniformly
/// random for z ≠ 0.
pub(crate) fn a2m_sender_share<F: OleField>(r: F, x: F, alpha: F) -> (F, F) {
    (r * x + alpha, r.invert())
}

/// B's multiplicative share from A's message s and its OLE share β.
pub(crate) fn a2m_receiver_share<F: OleField>(s: F, beta: F) -> F {
    s + beta
}

/// a⁻¹ = a^(2^128 − 2) in GF(2^128) (0 ↦ 0), by a fixed exponentiation.
pub(crate) fn inverse(a: F128) -> F128 {
    a.pow(u128::MAX - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ot::test_util::random_cots;
    use rand::Rng;

    fn ole(a: &[F128], b: &[F128], cots: (F128, Vec<F128>, Vec<bool>, Vec<F128>)) -> (Vec<F128>, Vec<F128>) {
        let (delta, keys, choices, macs) = cots;
        let d = receiver_corrections(b, &choices).expect("one COT per bit");
        let (x, u) = sender(a, delta, &keys, 1000, &d).expect("sizes");
        let y = receiver(b, &macs, 1000, &u).expect("sizes");
        (x, y)
    }

    #[test]
    fn shares_add_up_to_the_product() {
        let mut rng = rand::rng();
        let delta = F128(rng.random());
        let n = 20;
        let mut a: Vec<F128> = (0..n).map(|_| F128(rng.random())).collect();
        let mut b: Vec<F128> = (0..n).map(|_| F128(rng.random())).collect();
        (a[0], b[1], a[2], b[2]) = (F128::ZERO, F128::ZERO, F128::ONE, F128(u128::MAX));
        let (keys, choices, macs) = random_cots(delta, n * COTS_PER_OLE);
        let (x, y) = ole(&a, &b, (delta, keys, choices, macs));
        for i in 0..n {
            assert_eq!(x[i] + y[i], a[i] * b[i], "OLE {i}");
        }
    }

    #[test]
    fn shares_add_up_over_the_p256_base_field() {
        shares_add_up_over::<Fp>(Fp::random, Fp::ONE);
    }

    #[test]
    fn shares_add_up_over_the_curve25519_base_field() {
        shares_add_up_over::<F25519>(F25519::random, F25519::ONE);
    }

    /// OLEs of a random pair, of zero, and of (p − 1)² = 1, which uses the top bits of b.
    fn shares_add_up_over<F: OleField + PartialEq + core::fmt::Debug>(random: fn() -> F, one: F) {
        let mut rng = rand::rng();
        let delta = F128(rng.random());
        let a = [random(), F::ZERO, -one];
        let b = [random(), random(), -one];
        let (keys, choices, macs) = random_cots(delta, 3 * F::BITS);
        let d = receiver_corrections(&b, &choices).expect("sizes");
        let (x, u) = sender(&a, delta, &keys, 7, &d).expect("sizes");
        let y = receiver(&b, &macs, 7, &u).expect("sizes");
        for i in 0..3 {
            assert_eq!(x[i] + y[i], a[i] * b[i], "OLE {i}");
        }
        assert_eq!(x[2] + y[2], one);
    }

    #[test]
    fn works_on_kos_correlations() {
        use crate::channel::memory_pair;
        use crate::ot::test_util::run_extend;
        use crate::ot::{CotSender, KosReceiver, KosSender};
        let (cv, cp) = memory_pair(1 << 20);
        let o = run_extend(KosSender::new(), KosReceiver::new(), cv, cp, 4 * COTS_PER_OLE);
        let delta = o.sender.delta();
        let (choices, macs) = o.cots.expect("receiver");
        let mut rng = rand::rng();
        let a: Vec<F128> = (0..4).map(|_| F128(rng.random())).collect();
        let b: Vec<F128> = (0..4).map(|_| F128(rng.random())).collect();
        let (x, y) = ole(&a, &b, (delta, o.keys.expect("sender"), choices, macs));
        assert!((0..4).all(|i| x[i] + y[i] == a[i] * b[i]));
    }

    #[test]
    fn the_senders_message_hides_its_input_and_the_correction_hides_the_receivers() {
        // With the same COTs and corrections, two sender inputs give messages that differ only
        // by a·x^i, which the receiver sees only under the pad it cannot compute (P for the
        // other choice): here, that the message is not a·x^i in the clear, and that the
        // corrections are the receiver's bits masked by its random choices.
        let mut rng = rand::rng();
        let delta = F128(rng.random::<u128>() | 1);
        let (keys, choices, _) = random_cots(delta, COTS_PER_OLE);
        let b = [F128(rng.random())];
        let d = receiver_corrections(&b, &choices).expect("sizes");
        let raw: Vec<bool> = (0..128).map(|i| (b[0].0 >> i) & 1 == 1).collect();
        assert_ne!(d, raw, "the corrections are not the receiver's bits");
        let a = F128(rng.random());
        let (_, u) = sender(&[a], delta, &keys, 0, &d).expect("sizes");
        assert!((0..128).all(|i| u[i] != a * F128::x_pow(i)));
    }

    #[test]
    fn m2a_and_a2m_convert_shares() {
        let mut rng = rand::rng();
        let delta = F128(rng.random());
        // M2A: a·b = z becomes x + y = z.
        let (a, b) = (F128(rng.random()), F128(rng.random()));
        let (x, y) = ole(&[a], &[b], {
            let (k, c, m) = random_cots(delta, COTS_PER_OLE);
            (delta, k, c, m)
        });
        assert_eq!(x[0] + y[0], a * b);
        // A2M: x + y = z becomes r⁻¹ · (r·z) = z.
        let z = x[0] + y[0];
        let r = F128(rng.random::<u128>() | 1);
        let (alpha, beta) = ole(&[r], &[y[0]], {
            let (k, c, m) = random_cots(delta, COTS_PER_OLE);
            (delta, k, c, m)
        });
        let (s, a_share) = a2m_sender_share(r, x[0], alpha[0]);
        let b_share = a2m_receiver_share(s, beta[0]);
        assert_eq!(a_share * b_share, z);
        assert_eq!(inverse(r) * r, F128::ONE);
        assert_eq!(inverse(F128::ZERO), F128::ZERO);
    }

    #[test]
    fn wrong_sizes_are_errors() {
        let e = receiver_corrections(&[F128::ONE], &[true; 3]);
        assert!(matches!(e, Err(OleError::CountMismatch { .. })));
        assert!(sender(&[F128::ONE], F128::ONE, &[F128::ZERO; 128], 0, &[false; 127]).is_err());
        assert!(receiver(&[F128::ONE], &[F128::ZERO; 128], 0, &[F128::ZERO; 2]).is_err());
    }
}
