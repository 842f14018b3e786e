//! Two-party ECDH on P-256 for MPC mode: each party holds a scalar share, the client key share
//! the server sees is the sum of the two share points, and after the server's key share
//! arrives the parties end with additive shares of the premaster secret (the x-coordinate of
//! the shared point) without either learning it.
//!
//! From P₁ = d₁·S (party A, the prover) and P₂ = d₂·S (party B, the verifier),
//! x(P₁ + P₂) = λ² − x₁ − x₂ with λ = (y₂ − y₁)/(x₂ − x₁). With OLE over GF(p) (five
//! multiplications of A's value by B's, A always the OLE sender) and one value opened to B:
//! 1. each picks a random ρ; δ = (x₂ − x₁)·ρ₁·ρ₂ from shares of ρ₁·x₂ρ₂ and x₁ρ₁·ρ₂ (two OLEs),
//!    opened to B only: δ is uniform whatever x₂ − x₁ is (ρ₁ρ₂ is);
//! 2. B sets t = ρ₂δ⁻¹ = 1/(ρ₁(x₂ − x₁)), so λ = ρ₁·y₂t − y₁ρ₁·t (two OLEs) as shares λ₁ + λ₂;
//! 3. λ² = λ₁² + 2·λ₁λ₂ + λ₂² (one OLE for λ₁λ₂); A's share is λ₁² + 2γ₁ − x₁, B's λ₂² + 2γ₂ − x₂.
//!
//! The arithmetic is the "ECtF" conversion of Zhang et al. (DECO, CCS 2020); who opens δ is
//! chosen for a malicious prover. A receives nothing but B's OLE corrections (B's bits under
//! B's random COT choices), so whatever inputs A uses, its view is independent of B's values:
//! inconsistent inputs only make the premaster shares wrong, by an error that depends on B's
//! bits, and a wrong premaster fails the handshake (the server refuses the client Finished).
//! That is one bit of selective failure per session, as for the garbled inputs
//! (docs/protocol.md). B, the OLE receiver in every multiplication, can only choose whole field
//! elements as inputs and receives uniform shares and δ, which is uniform for any inputs but
//! the one (a guess of A's x₁) that makes it zero.

use super::fp::Fp;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::{AffinePoint, ProjectivePoint, Scalar};

/// A party's point coordinates (x, y); `None` for the point at infinity.
pub(crate) fn coordinates(p: &ProjectivePoint) -> Option<(Fp, Fp)> {
    let enc = p.to_affine().to_encoded_point(false);
    let x: [u8; 32] = enc.x()?.as_slice().try_into().ok()?;
    let y: [u8; 32] = enc.y()?.as_slice().try_into().ok()?;
    let (x, y) = (Fp::from_be_bytes(&x)?, Fp::from_be_bytes(&y)?);
    Some((x, y))
}

/// A party's share point d·S of the shared point, from its scalar share and the server's key
/// share.
pub(crate) fn share_point(d: &Scalar, server: &AffinePoint) -> ProjectivePoint {
    ProjectivePoint::from(*server) * d
}

use super::f25519::F25519;
use super::ole::{
    corrections_from_bytes, elements_from_bytes, elements_to_bytes, receiver, receiver_corrections, sender, OleError,
    OleField,
};
use crate::channel::{Channel, ChannelError};
use crate::circuits::bits_to_bytes;
use crate::primitives::field::F128;

/// COTs (party A the COT sender, B the receiver) each round of [`EcdhProver`]/[`EcdhVerifier`] uses.
pub(crate) const ROUND_COTS: [usize; 3] = [2 * 256, 2 * 256, 256];

/// Random COTs as the sender holds them: Δ and one key per correlation.
pub(crate) struct SenderCots<'a> {
    pub delta: F128,
    pub keys: &'a [F128],
    /// The session-wide index of the first (the OLE hash tweak).
    pub first: u64,
}

/// Random COTs as the receiver holds them: its choices and MACs.
pub(crate) struct ReceiverCots<'a> {
    pub choices: &'a [bool],
    pub macs: &'a [F128],
    pub first: u64,
}

/// A curve's base field as the conversion needs it: the OLE's, with uniform elements and
/// inverses. Both fields have 256 bits, so a round takes [`ROUND_COTS`] on either curve.
pub(crate) trait EcdhField: OleField + PartialEq {
    fn random() -> Self;
}

impl EcdhField for Fp {
    fn random() -> Self {
        Fp::random()
    }
}

impl EcdhField for F25519 {
    fn random() -> Self {
        F25519::random()
    }
}

const _: () = assert!(<Fp as OleField>::BITS == 256 && <F25519 as OleField>::BITS == 256);

/// Party A (the prover): the OLE sender in every multiplication.
pub(crate) struct EcdhProver<F = Fp> {
    x: F,
    y: F,
    /// The curve's coefficient of x² (0 for P-256, 486662 for Curve25519), which the sum's
    /// x-coordinate subtracts; A's share carries it.
    curve_a: F,
    rho: F,
    lambda: F,
    #[cfg(test)]
    cheat: Option<SenderCheat<F>>,
}

/// Party B (the verifier): the OLE receiver, which alone learns δ.
pub(crate) struct EcdhVerifier<F = Fp> {
    x: F,
    y: F,
    rho: F,
    /// t = ρ₂·δ⁻¹, B's multiplier in round 2.
    t: F,
    lambda: F,
}

/// A cheating A, for tests: in round `round` (1–3), the OLE sender adds `error` to its input
/// for bit `bit` of OLE `ole` only, an input inconsistent across the OLE's bits.
#[cfg(test)]
#[derive(Clone, Copy)]
pub(crate) struct SenderCheat<F = Fp> {
    pub round: usize,
    pub ole: usize,
    pub bit: usize,
    pub error: F,
}

/// Why the conversion failed.
#[derive(Debug, thiserror::Error)]
pub enum EcdhError {
    #[error("the share point is the point at infinity")]
    Infinity,
    #[error("the two share points have the same x-coordinate (they are equal or opposite)")]
    SameX,
    #[error(transparent)]
    Ole(#[from] OleError),
    #[error("channel error: {0}")]
    Channel(#[from] ChannelError),
    #[error("the peer sent a malformed ECDH message: {0}")]
    Malformed(&'static str),
}

impl EcdhVerifier<Fp> {
    pub(crate) fn new(share: &ProjectivePoint) -> Result<EcdhVerifier, EcdhError> {
        let (x, y) = coordinates(share).ok_or(EcdhError::Infinity)?;
        Ok(EcdhVerifier::from_coordinates(x, y))
    }
}

impl<F: EcdhField> EcdhVerifier<F> {
    /// B's share point (x₂, y₂), affine and finite.
    pub(crate) fn from_coordinates(x: F, y: F) -> EcdhVerifier<F> {
        EcdhVerifier { x, y, rho: nonzero_random(), t: F::ZERO, lambda: F::ZERO }
    }

    /// Bit i of B's first OLE input x₂ρ₂, which a sender's inconsistent input exposes to
    /// selective failure (tests).
    #[cfg(test)]
    pub(crate) fn receiver_input_bit(&self, i: usize) -> bool {
        (self.x * self.rho).bit(i)
    }

    /// Round 1, first message: corrections for the OLEs on x₂ρ₂ and ρ₂.
    pub(crate) fn round1(&self, cots: &ReceiverCots) -> Result<Vec<bool>, EcdhError> {
        Ok(receiver_corrections(&[self.x * self.rho, self.rho], cots.choices)?)
    }

    /// Round 1, with A's OLE message and A's share of δ: opens δ. Zero means the share points
    /// have the same x-coordinate, and the exchange stops here.
    pub(crate) fn round1_finish(
        &mut self,
        cots: &ReceiverCots,
        message: &[F],
        a_delta_share: F,
    ) -> Result<(), EcdhError> {
        let v = receiver(&[self.x * self.rho, self.rho], cots.macs, cots.first, message)?;
        let delta = v[0] - v[1] + a_delta_share;
        if delta == F::ZERO {
            return Err(EcdhError::SameX);
        }
        self.t = delta.invert() * self.rho;
        Ok(())
    }

    /// Round 2, first message: corrections for the OLEs on y₂t and t.
    pub(crate) fn round2(&self, cots: &ReceiverCots) -> Result<Vec<bool>, EcdhError> {
        Ok(receiver_corrections(&[self.y * self.t, self.t], cots.choices)?)
    }

    pub(crate) fn round2_finish(&mut self, cots: &ReceiverCots, message: &[F]) -> Result<(), EcdhError> {
        let v = receiver(&[self.y * self.t, self.t], cots.macs, cots.first, message)?;
        self.lambda = v[0] - v[1];
        Ok(())
    }

    /// Round 3, first message: corrections for the OLE on λ₂.
    pub(crate) fn round3(&self, cots: &ReceiverCots) -> Result<Vec<bool>, EcdhError> {
        Ok(receiver_corrections(&[self.lambda], cots.choices)?)
    }

    /// B's additive share of the premaster x-coordinate.
    pub(crate) fn finish(self, cots: &ReceiverCots, message: &[F]) -> Result<F, EcdhError> {
        let gamma = receiver(&[self.lambda], cots.macs, cots.first, message)?[0];
        Ok(self.lambda * self.lambda + gamma + gamma - self.x)
    }
}

impl EcdhProver<Fp> {
    pub(crate) fn new(share: &ProjectivePoint) -> Result<EcdhProver, EcdhError> {
        let (x, y) = coordinates(share).ok_or(EcdhError::Infinity)?;
        Ok(EcdhProver::from_coordinates(x, y, Fp::ZERO))
    }
}

impl<F: EcdhField> EcdhProver<F> {
    /// A's share point (x₁, y₁), affine and finite, on a curve whose x² coefficient is
    /// `curve_a` (y² = x³ + A·x² + … : the sum's x-coordinate is λ² − A − x₁ − x₂).
    pub(crate) fn from_coordinates(x: F, y: F, curve_a: F) -> EcdhProver<F> {
        EcdhProver {
            x,
            y,
            curve_a,
            rho: nonzero_random(),
            lambda: F::ZERO,
            #[cfg(test)]
            cheat: None,
        }
    }

    #[cfg(test)]
    pub fn cheat(&mut self, cheat: SenderCheat<F>) {
        self.cheat = Some(cheat);
    }

    fn ole(
        &self,
        round: usize,
        inputs: &[F],
        cots: &SenderCots,
        corrections: &[bool],
    ) -> Result<(Vec<F>, Vec<F>), EcdhError> {
        #[cfg(test)]
        if let Some(c) = self.cheat.filter(|c| c.round == round) {
            return Ok(super::ole::sender_with_error(
                inputs,
                cots.delta,
                cots.keys,
                cots.first,
                corrections,
                (c.ole, c.bit, c.error),
            )?);
        }
        let _ = round;
        Ok(sender(inputs, cots.delta, cots.keys, cots.first, corrections)?)
    }

    /// Round 1: the OLEs ρ₁·(x₂ρ₂) and (x₁ρ₁)·ρ₂; returns the message for B and A's share of δ,
    /// which goes to B with it.
    pub(crate) fn round1(&mut self, cots: &SenderCots, corrections: &[bool]) -> Result<(Vec<F>, F), EcdhError> {
        let (u, msg) = self.ole(1, &[self.rho, self.x * self.rho], cots, corrections)?;
        Ok((msg, u[0] - u[1]))
    }

    /// Round 2: the OLEs ρ₁·(y₂t) and (y₁ρ₁)·t.
    pub(crate) fn round2(&mut self, cots: &SenderCots, corrections: &[bool]) -> Result<Vec<F>, EcdhError> {
        let (u, msg) = self.ole(2, &[self.rho, self.y * self.rho], cots, corrections)?;
        self.lambda = u[0] - u[1];
        Ok(msg)
    }

    /// Round 3: the OLE λ₁·λ₂; returns the message for B and A's additive share.
    pub(crate) fn finish(self, cots: &SenderCots, corrections: &[bool]) -> Result<(Vec<F>, F), EcdhError> {
        let (u, msg) = self.ole(3, &[self.lambda], cots, corrections)?;
        let gamma = u[0];
        Ok((msg, self.lambda * self.lambda + gamma + gamma - self.x - self.curve_a))
    }
}

/// A uniformly random nonzero scalar (a party's key share), by rejection from 32 random bytes.
pub(crate) fn random_scalar() -> Scalar {
    use p256::elliptic_curve::PrimeField;
    loop {
        let mut b = [0u8; 32];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut b);
        if let Some(s) = Option::<Scalar>::from(Scalar::from_repr(b.into())) {
            if s != Scalar::ZERO {
                return s;
            }
        }
    }
}

fn nonzero_random<F: EcdhField>() -> F {
    loop {
        let r = F::random();
        if r != F::ZERO {
            return r;
        }
    }
}

/// B's round-2 message starts with this byte when δ was zero: the exchange stops.
const SAME_X: u8 = 1;

fn elements_from<F: OleField>(msg: &[u8], n: usize) -> Result<Vec<F>, EcdhError> {
    elements_from_bytes(msg, n).map_err(EcdhError::Malformed)
}

/// The COTs of each round, from one run of [`ROUND_COTS`] of them in all.
fn rounds<T>(all: &[T]) -> Result<[&[T]; 3], EcdhError> {
    let n: usize = ROUND_COTS.iter().sum();
    if all.len() != n {
        return Err(OleError::CountMismatch { what: "COTs for the ECDH", expected: n, got: all.len() }.into());
    }
    let (r1, rest) = all.split_at(ROUND_COTS[0]);
    let (r2, r3) = rest.split_at(ROUND_COTS[1]);
    Ok([r1, r2, r3])
}

/// Party A's side over a channel: `keys` are [`ROUND_COTS`] COT keys under `delta`, the
/// first with session-wide index `first`. Returns A's premaster share.
pub(crate) async fn run_prover<C: Channel, F: EcdhField>(
    ch: &mut C,
    mut a: EcdhProver<F>,
    delta: F128,
    keys: &[F128],
    first: u64,
) -> Result<F, EcdhError> {
    let [k1, k2, k3] = rounds(keys)?;
    let cots = |keys, at: usize| SenderCots { delta, keys, first: first + at as u64 };
    let e = corrections_from_bytes(&ch.recv().await?, k1.len())?;
    let (msg, a_delta) = a.round1(&cots(k1, 0), &e)?;
    let mut out = elements_to_bytes(&msg);
    a_delta.write(&mut out);
    ch.send(out).await?;
    let reply = ch.recv().await?;
    let e = match reply.split_first() {
        Some((0, rest)) => corrections_from_bytes(rest, k2.len())?,
        Some((&SAME_X, [])) => return Err(EcdhError::SameX),
        _ => return Err(EcdhError::Malformed("round 2's status byte")),
    };
    ch.send(elements_to_bytes(&a.round2(&cots(k2, k1.len()), &e)?)).await?;
    let e = corrections_from_bytes(&ch.recv().await?, k3.len())?;
    let (msg, share) = a.finish(&cots(k3, k1.len() + k2.len()), &e)?;
    ch.send(elements_to_bytes(&msg)).await?;
    Ok(share)
}

/// Party B's side over a channel: its COT choices and MACs, as many as A's keys.
pub(crate) async fn run_verifier<C: Channel, F: EcdhField>(
    ch: &mut C,
    mut b: EcdhVerifier<F>,
    choices: &[bool],
    macs: &[F128],
    first: u64,
) -> Result<F, EcdhError> {
    let [c1, c2, c3] = rounds(choices)?;
    let [m1, m2, m3] = rounds(macs)?;
    let cots = |choices, macs, at: usize| ReceiverCots { choices, macs, first: first + at as u64 };
    let (r1, r2, r3) = (cots(c1, m1, 0), cots(c2, m2, c1.len()), cots(c3, m3, c1.len() + c2.len()));
    ch.send(bits_to_bytes(&b.round1(&r1)?)).await?;
    let msg = ch.recv().await?;
    let (elements, a_delta) =
        msg.split_at_checked(F::BYTES * c1.len()).ok_or(EcdhError::Malformed("round 1's OLE message is short"))?;
    let a_delta = elements_from::<F>(a_delta, 1)?[0];
    if let Err(e) = b.round1_finish(&r1, &elements_from(elements, c1.len())?, a_delta) {
        if matches!(e, EcdhError::SameX) {
            ch.send(vec![SAME_X]).await?;
        }
        return Err(e);
    }
    let mut out = vec![0];
    out.extend(bits_to_bytes(&b.round2(&r2)?));
    ch.send(out).await?;
    b.round2_finish(&r2, &elements_from(&ch.recv().await?, c2.len())?)?;
    ch.send(bits_to_bytes(&b.round3(&r3)?)).await?;
    b.finish(&r3, &elements_from(&ch.recv().await?, c3.len())?)
}

/// Both parties over an in-memory channel, for tests: party A holds the COT keys under
/// `delta`, B the choices and MACs, [`ROUND_COTS`] of them in all; the scalar shares are `d`.
/// Returns both premaster shares and the bytes exchanged.
#[cfg(test)]
pub(crate) fn in_memory(
    keys: &[F128],
    delta: F128,
    choices: &[bool],
    macs: &[F128],
    server: &AffinePoint,
    d: [&Scalar; 2],
) -> Result<(Fp, Fp, u64), EcdhError> {
    let a = EcdhProver::new(&share_point(d[0], server))?;
    let b = EcdhVerifier::new(&share_point(d[1], server))?;
    exchange(a, b, keys, delta, choices, macs)
}

#[cfg(test)]
pub(crate) fn exchange<F: EcdhField>(
    a: EcdhProver<F>,
    b: EcdhVerifier<F>,
    keys: &[F128],
    delta: F128,
    choices: &[bool],
    macs: &[F128],
) -> Result<(F, F, u64), EcdhError> {
    let (mut ca, mut cb) = crate::channel::memory_pair(1 << 20);
    let (sa, sb) = futures::executor::block_on(futures::future::join(
        async move { run_prover(&mut ca, a, delta, keys, 0).await.map(|s| (s, ca.bytes_sent() + ca.bytes_received())) },
        async move { run_verifier(&mut cb, b, choices, macs, 0).await },
    ));
    match (sa, sb) {
        (Ok((sa, bytes)), Ok(sb)) => Ok((sa, sb, bytes)),
        // The party that stopped first names the reason; the other only saw the channel close.
        (Err(EcdhError::Channel(_)), Err(e)) | (Err(e), _) | (_, Err(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ot::test_util::random_cots as cots;
    use rand::Rng;

    #[test]
    fn premaster_shares_add_up_to_the_x_coordinate_p256_computes() {
        let mut rng = rand::rng();
        for _ in 0..3 {
            let d1 = random_scalar();
            let d2 = random_scalar();
            let s = random_scalar();
            // The client key share is the sum of the parties' points; the server's is s·G.
            let client = ProjectivePoint::GENERATOR * d1 + ProjectivePoint::GENERATOR * d2;
            let server = (ProjectivePoint::GENERATOR * s).to_affine();
            let expect = coordinates(&(client * s)).expect("not infinity").0;

            let delta = F128(rng.random());
            let (keys, choices, macs) = cots(delta, ROUND_COTS.iter().sum());
            let (share_a, share_b, _) =
                in_memory(&keys, delta, &choices, &macs, &server, [&d1, &d2]).expect("sizes and finite points");
            assert_eq!(share_a + share_b, expect, "the shares add up to x(s·(d₁ + d₂)·G)");
            assert_ne!(share_a, expect, "neither share is the premaster itself");
        }
    }

    #[test]
    fn opposite_share_points_are_refused_before_any_key_is_derived() {
        // d₂ = −d₁: the shared point is at infinity and x₂ − x₁ = 0, so δ = 0 and has no inverse;
        // B, which alone opens δ, refuses.
        let d1 = random_scalar();
        let server = (ProjectivePoint::GENERATOR * random_scalar()).to_affine();
        let delta = F128(rand::random());
        let (k, c, m) = cots(delta, ROUND_COTS.iter().sum());
        let r = in_memory(&k, delta, &c, &m, &server, [&d1, &-d1]);
        assert!(matches!(r, Err(EcdhError::SameX)), "{:?}", r.err());
    }

    /// One exchange in which A adds a random error to its input for bit `bit` of round 1's
    /// first OLE, whose receiver input is B's x₂ρ₂. Returns whether the shares still add up to
    /// the premaster and B's bit `bit` of x₂ρ₂.
    fn inconsistent_sender(bit: usize) -> (bool, bool) {
        let (d1, d2, s) = (random_scalar(), random_scalar(), random_scalar());
        let server = (ProjectivePoint::GENERATOR * s).to_affine();
        let pms =
            coordinates(&((ProjectivePoint::GENERATOR * d1 + ProjectivePoint::GENERATOR * d2) * s)).expect("finite").0;
        let mut a = EcdhProver::new(&share_point(&d1, &server)).expect("finite");
        a.cheat(SenderCheat { round: 1, ole: 0, bit, error: Fp::random() });
        let b = EcdhVerifier::new(&share_point(&d2, &server)).expect("finite");
        let b_bit = b.receiver_input_bit(bit);
        let delta = F128(rand::random());
        let (k, c, m) = cots(delta, ROUND_COTS.iter().sum());
        let (sa, sb, _) = exchange(a, b, &k, delta, &c, &m).expect("sizes and finite points");
        (sa + sb == pms, b_bit)
    }

    #[test]
    fn a_sender_with_inconsistent_ole_inputs_gets_a_wrong_premaster_exactly_when_the_receivers_bit_is_set() {
        // The selective failure of docs/protocol.md: the cheat costs the session (the server
        // refuses a Finished made from a wrong premaster) whenever B's bit is 1, and is harmless
        // when it is 0; either way A received nothing but B's masked corrections.
        let (mut wrong, mut right) = (false, false);
        for _ in 0..64 {
            let (adds_up, b_bit) = inconsistent_sender(77);
            assert_eq!(adds_up, !b_bit, "the premaster is right exactly when B's bit is 0");
            wrong |= !adds_up;
            right |= adds_up;
            if wrong && right {
                return;
            }
        }
        panic!("64 random bits of B were all equal");
    }

    #[test]
    fn malformed_messages_are_refused_by_name() {
        use crate::channel::memory_pair;
        use futures::executor::block_on;
        let server = (ProjectivePoint::GENERATOR * random_scalar()).to_affine();
        let delta = F128(rand::random());
        let (k, c, m) = cots(delta, ROUND_COTS.iter().sum());
        // B's side against a peer that answers round 1 with `reply`.
        let b_gets = |reply: Vec<u8>| {
            let (mut ours, mut peer) = memory_pair(1 << 20);
            let b = EcdhVerifier::new(&share_point(&random_scalar(), &server)).expect("finite");
            let peer_side = async {
                let _ = peer.recv().await;
                peer.send(reply).await.expect("open");
            };
            block_on(futures::future::join(run_verifier(&mut ours, b, &c, &m, 0), peer_side)).0
        };
        let element = Fp::random().to_be_bytes();
        let honest_len: Vec<u8> = element.iter().copied().cycle().take(32 * (ROUND_COTS[0] + 1)).collect();
        let mut not_below_p = honest_len.clone();
        not_below_p[..32].fill(0xff);
        for (reply, what) in [
            (honest_len[..100].to_vec(), "short"),
            (not_below_p, "not below p"),
            ([honest_len.clone(), vec![0]].concat(), "wrong length"),
        ] {
            match b_gets(reply) {
                Err(EcdhError::Malformed(m)) => assert!(m.contains(what), "{m}"),
                other => panic!("{what}: {other:?}"),
            }
        }
        // A's side against a peer whose round-2 status byte is neither 0 nor SAME_X.
        let (mut ours, mut peer) = memory_pair(1 << 20);
        let a = EcdhProver::new(&share_point(&random_scalar(), &server)).expect("finite");
        let r = block_on(async {
            peer.send(vec![0; ROUND_COTS[0] / 8]).await.expect("open");
            let run = run_prover(&mut ours, a, delta, &k, 0);
            let peer_side = async {
                let _ = peer.recv().await;
                peer.send(vec![7; 1 + ROUND_COTS[1] / 8]).await.expect("open");
            };
            futures::future::join(run, peer_side).await.0
        });
        assert!(matches!(r, Err(EcdhError::Malformed(m)) if m.contains("status")), "{:?}", r.err());
        // A refused count of COTs is an error, not a panic.
        let (mut ours, _peer) = memory_pair(1 << 20);
        let a = EcdhProver::new(&share_point(&random_scalar(), &server)).expect("finite");
        assert!(matches!(block_on(run_prover(&mut ours, a, delta, &k[1..], 0)), Err(EcdhError::Ole(_))));
    }

    #[test]
    fn the_point_at_infinity_is_refused() {
        assert!(matches!(EcdhProver::new(&ProjectivePoint::IDENTITY), Err(EcdhError::Infinity)));
    }
}
