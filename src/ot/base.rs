//! Base OT: batched Chou–Orlandi "simplest OT" (Chou, Orlandi, LATINCRYPT 2015) over
//! Ristretto255.
//!
//! Messages (G the Ristretto basepoint, H = SHA-256 with a domain tag):
//! 1. sender → receiver: `A = a·G` (32 bytes).
//! 2. receiver → sender: for each OT j with choice c_j, `B_j = b_j·G + c_j·A`
//!    (32 bytes each; the selection is constant time).
//! 3. keys: sender `k_j^0 = H(sid, j, A, B_j, a·B_j)`, `k_j^1 = H(sid, j, A, B_j, a·(B_j − A))`;
//!    receiver `k_j^{c_j} = H(sid, j, A, B_j, b_j·A)`.
//!
//! Every received point is decoded strictly (non-canonical encodings are refused) and `A` must
//! not be the identity. Keys are 128-bit (they seed AES-128 PRGs in the OT extension).
//!
//! Security notes: the receiver's choice is perfectly hidden (b_j is uniform); a receiver
//! learning both keys of one OT would solve CDH in Ristretto255 (prime order, so no
//! small-subgroup games). Known caveat of this protocol: it does not give a UC simulator that
//! extracts the receiver's choices straight-line (Genç–Iovino–Rial 2017; Hauck–
//! Loss 2017); it is the usual practical choice as a base OT for IKNP/KOS, where the OT
//! extension's own check handles the prover side. Swap in a UC base OT here if that matters.

use crate::channel::Channel;
use crate::ot::CotError;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::Identity;
use rand::RngCore;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use subtle::{Choice, ConditionallySelectable};
use zeroize::{Zeroize, Zeroizing};

/// A 128-bit OT key (seed for a PRG).
pub(crate) type OtKey = [u8; 16];

const DOMAIN: &[u8] = b"tlsproof/zk/ot/base/chou-orlandi-ristretto255/v1";

/// Largest batch of base OTs accepted in one call (bounds the receiver's message).
pub(crate) const MAX_BASE_OTS: usize = 4096;

fn random_scalar() -> Scalar {
    let mut wide = Zeroizing::new([0u8; 64]);
    rand::rng().fill_bytes(wide.as_mut());
    Scalar::from_bytes_mod_order_wide(&wide)
}

fn decode_point(bytes: &[u8], what: &'static str) -> Result<RistrettoPoint, CotError> {
    CompressedRistretto::from_slice(bytes)
        .ok()
        .and_then(|c| c.decompress())
        .ok_or(CotError::BaseOtInvalidPoint { what })
}

fn derive_key(session: &[u8], index: usize, a: &CompressedRistretto, b: &[u8], shared: &RistrettoPoint) -> OtKey {
    let mut h = Sha256::new();
    h.update(DOMAIN);
    h.update((session.len() as u64).to_le_bytes());
    h.update(session);
    h.update((index as u64).to_le_bytes());
    h.update(a.as_bytes());
    h.update(b);
    let mut s = shared.compress().to_bytes();
    h.update(s);
    s.zeroize();
    let mut d = h.finalize();
    let mut key = [0u8; 16];
    key.copy_from_slice(&d[..16]);
    d.as_mut_slice().zeroize();
    key
}

/// Sender side of `count` base OTs: returns the key pairs `(k_j^0, k_j^1)`.
pub(crate) async fn send<C: Channel>(
    ch: &mut C,
    session: &[u8],
    count: usize,
) -> Result<Vec<(OtKey, OtKey)>, CotError> {
    if count > MAX_BASE_OTS {
        return Err(CotError::TooMany { requested: count, max: MAX_BASE_OTS });
    }
    let a = Zeroizing::new(random_scalar());
    let big_a = RistrettoPoint::mul_base(&a);
    let a_enc = big_a.compress();
    ch.send(a_enc.to_bytes().to_vec()).await?;

    let msg = ch.recv().await?;
    let expected = 32 * count;
    if msg.len() != expected {
        return Err(CotError::Malformed { what: "base OT receiver points", expected, got: msg.len() });
    }
    let a_times_a = *a * big_a;
    // One scalar multiplication per OT, spread over the thread pool; the keys are written
    // straight into the vector returned (no intermediate buffers left unwiped).
    let points: Vec<RistrettoPoint> =
        msg.par_chunks_exact(32).map(|b| decode_point(b, "base OT receiver point B_j")).collect::<Result<_, _>>()?;
    let mut keys = Vec::with_capacity(count);
    points
        .par_iter()
        .zip(msg.par_chunks_exact(32))
        .enumerate()
        .map(|(j, (b, b_enc))| {
            let ab = *a * b;
            (derive_key(session, j, &a_enc, b_enc, &ab), derive_key(session, j, &a_enc, b_enc, &(ab - a_times_a)))
        })
        .collect_into_vec(&mut keys);
    Ok(keys)
}

/// Receiver side: one base OT per entry of `choices`; returns `k_j^{c_j}`.
pub(crate) async fn receive<C: Channel>(ch: &mut C, session: &[u8], choices: &[bool]) -> Result<Vec<OtKey>, CotError> {
    if choices.len() > MAX_BASE_OTS {
        return Err(CotError::TooMany { requested: choices.len(), max: MAX_BASE_OTS });
    }
    let msg = ch.recv().await?;
    CotError::expect_len("base OT sender point", &msg, 32)?;
    let big_a = decode_point(&msg, "base OT sender point A")?;
    if big_a == RistrettoPoint::identity() {
        return Err(CotError::BaseOtInvalidPoint { what: "base OT sender point A (identity)" });
    }
    let a_enc = big_a.compress();

    // Two scalar multiplications per OT, spread over the thread pool; the keys are written
    // straight into the vector returned.
    let (mut points, mut keys) = (Vec::with_capacity(choices.len()), Vec::with_capacity(choices.len()));
    choices
        .par_iter()
        .enumerate()
        .map(|(j, &c)| {
            let b = Zeroizing::new(random_scalar());
            let bg = RistrettoPoint::mul_base(&b);
            let bg_plus_a = bg + big_a;
            let big_b = RistrettoPoint::conditional_select(&bg, &bg_plus_a, Choice::from(c as u8));
            let b_enc = big_b.compress().to_bytes();
            (b_enc, derive_key(session, j, &a_enc, &b_enc, &(*b * big_a)))
        })
        .unzip_into_vecs(&mut points, &mut keys);
    ch.send(points.concat()).await?;
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::memory_pair;
    use futures::executor::block_on;
    use futures::future::join;
    use rand::Rng;

    #[test]
    fn receiver_gets_chosen_key_and_not_the_other() {
        let mut rng = rand::rng();
        let choices: Vec<bool> = (0..128).map(|_| rng.random()).collect();
        let (mut cs, mut cr) = memory_pair(1 << 16);
        let (s, r) =
            block_on(join(send(&mut cs, b"test-session", choices.len()), receive(&mut cr, b"test-session", &choices)));
        let (pairs, got) = (s.unwrap(), r.unwrap());
        assert_eq!(pairs.len(), 128);
        for (j, ((k0, k1), k)) in pairs.iter().zip(&got).enumerate() {
            assert_ne!(k0, k1, "OT {j}: the two keys must differ");
            let (want, other) = if choices[j] { (k1, k0) } else { (k0, k1) };
            assert_eq!(k, want, "OT {j}: receiver must get the chosen key");
            assert_ne!(k, other, "OT {j}: receiver must not get the other key");
        }
        // keys of different OTs are independent (distinct)
        let mut all: Vec<_> = pairs.iter().flat_map(|(a, b)| [*a, *b]).collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 256);
    }

    #[test]
    fn different_sessions_give_different_keys() {
        let choices = vec![false; 4];
        let (mut cs, mut cr) = memory_pair(1 << 16);
        let (s, r) = block_on(join(send(&mut cs, b"session-1", 4), receive(&mut cr, b"session-2", &choices)));
        let (pairs, got) = (s.unwrap(), r.unwrap());
        for (p, k) in pairs.iter().zip(&got) {
            assert_ne!(&p.0, k);
        }
    }

    #[test]
    fn sender_rejects_invalid_receiver_point() {
        let (mut cs, mut cr) = memory_pair(1 << 16);
        let fake_receiver = async {
            let _a = cr.recv().await.unwrap();
            let mut msg = RistrettoPoint::mul_base(&random_scalar()).compress().to_bytes().to_vec();
            msg.extend_from_slice(&[0xFF; 32]); // not a canonical field element
            cr.send(msg).await.unwrap();
        };
        let (res, ()) = block_on(join(send(&mut cs, b"s", 2), fake_receiver));
        assert!(matches!(res, Err(CotError::BaseOtInvalidPoint { .. })), "got {res:?}");
    }

    #[test]
    fn receiver_rejects_invalid_or_identity_sender_point() {
        for bad in [[0xFFu8; 32], [0u8; 32] /* identity */] {
            let (mut cs, mut cr) = memory_pair(1 << 16);
            let fake_sender = async { cs.send(bad.to_vec()).await.unwrap() };
            let ((), res) = block_on(join(fake_sender, receive(&mut cr, b"s", &[true, false])));
            assert!(matches!(res, Err(CotError::BaseOtInvalidPoint { .. })), "got {res:?}");
        }
    }

    #[test]
    fn wrong_lengths_are_malformed() {
        // receiver message one byte short
        let (mut cs, mut cr) = memory_pair(1 << 16);
        let fake_receiver = async {
            let _a = cr.recv().await.unwrap();
            cr.send(vec![0u8; 32 * 3 - 1]).await.unwrap();
        };
        let (res, ()) = block_on(join(send(&mut cs, b"s", 3), fake_receiver));
        assert!(matches!(res, Err(CotError::Malformed { expected: 96, got: 95, .. })), "{res:?}");
        // sender point too long
        let (mut cs, mut cr) = memory_pair(1 << 16);
        let fake_sender = async { cs.send(vec![0u8; 33]).await.unwrap() };
        let ((), res) = block_on(join(fake_sender, receive(&mut cr, b"s", &[true])));
        assert!(matches!(res, Err(CotError::Malformed { expected: 32, got: 33, .. })), "{res:?}");
    }
}
