//! Multi-point COT from t single-point COTs (one half tree per regular-noise block), with the
//! batched malicious consistency check of Ferret (Yang et al., CCS 2020, §4, Fig. 6/7).
//!
//! Inputs per iteration: t·h base COTs for the trees (h = log2 of the block size) and 128
//! base COTs for the check value. Output: verifier v ∈ F^n, prover w ∈ F^n and e ∈ {0,1}^n with
//! exactly one 1 per block at α_b, and w = v ⊕ e·Δ.
//!
//! Messages (P = prover/COT receiver, V = verifier/COT sender holding Δ):
//! 1. V → P, per tree b: half-tree ([`super::ggm`]) from a fresh seed, level 1 = (s, s ⊕ Δ), so
//!    the level sums satisfy S⁰_L ⊕ S¹_L = Δ; for each level L, c_L = S⁰_L ⊕ K_{b,L}. P holds
//!    M = K ⊕ u·Δ and gets c_L ⊕ M = S^{u}_L, the off-path side: its noise position is
//!    α_b = the bits ¬u_{b,L} (random, unknown to V, no derandomization message). P rebuilds
//!    all leaves but α_b and sets w_α = ⊕_{j≠α} w_j = v_α ⊕ Δ (V's leaves XOR to Δ).
//!    V sends this before hearing from P, so an iteration costs P one round trip less.
//! 2. Check: P picks a seed for χ_j = PRG_seed(j) ([`crate::primitives::prg`]) (after all of V's tree messages are fixed)
//!    and sends it with x' = x* ⊕ Σ_b χ_{α_b}, where (x*, z*) / y* is a random VOLE built from
//!    the 128 check COTs: x* = Σ u_i·X^i, z* = Σ M_i·X^i, y* = Σ K_i·X^i, so z* = y* ⊕ x*·Δ.
//! 3. V computes V = Σ_j χ_j·v_j ⊕ y* ⊕ x'·Δ and sends only a hash of it, H_eq(V).
//!    P computes Z = Σ_j χ_j·w_j ⊕ z*; honest: Z = V. P rejects
//!    ([`CotError::SpcotCheckFailed`]) if H_eq(Z) ≠ H_eq(V).
//! 4. P → V: Z (reveals nothing new once it equals V); V rejects
//!    ([`CotError::SpcotProverInconsistent`]) if Z ≠ V.
//!
//! Why V sends a hash and not V itself: a prover that lied in x' by δ would get
//! V = Z ⊕ δ·Δ and learn Δ. From H_eq(V) it can only test guesses of Δ offline.
//! Why P does not send Z first: if V cheated in some tree, Z depends on α through the
//! error terms and would leak α beyond the one accept/reject bit.
//!
//! Leakage (the selective failure the Ferret functionality allows): a malicious V can send
//! inconsistent tree messages such that the check passes iff the α_b lie in a set of its
//! choice; it learns that one predicate bit (and a failure aborts the session). Nothing else
//! about α leaks: χ is chosen by P after V's messages are fixed, so a nonzero error pattern in
//! P's w survives the random linear combination except with probability 2^-128, and V only
//! ever sees the accept/reject outcome (P sends Z only after it matched H_eq(V)).
//! A malicious P can choose α (through its base COT bits) and x', but passing the check with an
//! inconsistent x' requires guessing Δ; what it sees of V's trees is, per level, the sum of
//! its own side (the other is that ⊕ Δ, hidden by the base COT as in any COT), and nodes below
//! an unknown one are H of inputs it knows only up to ⊕ Δ (circular correlation robustness).

use super::super::bits;
use super::ggm::{half_tree_full, half_tree_punctured, FixedKeyAes};
use crate::channel::Channel;
use crate::ot::ct::{bit_mask, eq_mask};
use crate::ot::{kos::MAX_MESSAGE_BYTES, CotError};
use crate::primitives::prg::PrgKind;
use rand::{Rng, RngCore};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

/// Base COTs used by the check (one GF(2^128) VOLE value).
pub(crate) const CHECK_COTS: usize = 128;
/// Inner-product piece size for the check.
const PIECE: usize = 2048;

/// Bytes V sends per tree: one masked left-side sum per level.
pub(crate) fn tree_message_bytes(h: usize) -> usize {
    h * 16
}

/// Trees per V → P message so that no message exceeds [`MAX_MESSAGE_BYTES`].
fn trees_per_message(h: usize) -> usize {
    (MAX_MESSAGE_BYTES / tree_message_bytes(h)).max(1)
}

/// Multiply by X in GF(2^128) (modulus x^128 + x^7 + x^2 + x + 1), branch-free.
fn mul_x(a: u128) -> u128 {
    (a << 1) ^ (0x87 & bit_mask(a >> 127 == 1))
}

/// Σ_i vals[i]·X^i (Horner).
fn pack_powers(vals: &[u128]) -> u128 {
    vals.iter().rev().fold(0u128, |acc, &v| mul_x(acc) ^ v)
}

fn f_mul(a: u128, b: u128) -> u128 {
    (crate::primitives::field::F128(a) * crate::primitives::field::F128(b)).0
}

/// (Σ χ_j·vals_j, Σ_{e_j = 1} χ_j) with χ_j = PRG_seed(j); `e` optional (0/1 bytes).
pub(crate) fn chi_sums(kind: PrgKind, seed: &[u8; 16], vals: &[u128], e: Option<&[u8]>) -> (u128, u128) {
    let bits = e.map_or(bits::CheckBits::None, bits::CheckBits::Bytes);
    bits::chi_sums(&kind.keyed(seed), vals, PIECE, bits)
}

fn eq_hash(tweak_base: u128, v: u128) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"tlsproof/zk/ot/ferret/mpcot-check");
    h.update(tweak_base.to_le_bytes());
    h.update(v.to_le_bytes());
    h.finalize().into()
}

fn read_u128(b: &[u8]) -> u128 {
    let mut a = [0u8; 16];
    a.copy_from_slice(&b[..16]);
    u128::from_le_bytes(a)
}

/// Verifier (COT sender) side, steps 1 and 3. `tree_keys`: t·h base keys (tree b, level L at
/// b·h + L); `check_keys`: 128 base keys. Fills `v` (length t·2^h); step 4 follows in
/// [`AwaitingOpening::finish`].
#[allow(clippy::too_many_arguments)]
pub(crate) async fn send<C: Channel>(
    ch: &mut C,
    prg: &FixedKeyAes,
    chi: PrgKind,
    delta: u128,
    t: usize,
    h: usize,
    tree_keys: &[u128],
    check_keys: &[u128],
    tweak_base: u128,
    v: &mut [u128],
) -> Result<AwaitingOpening, CotError> {
    let leaves = 1usize << h;
    debug_assert_eq!(v.len(), t * leaves);
    debug_assert_eq!(tree_keys.len(), t * h);
    debug_assert_eq!(check_keys.len(), CHECK_COTS);

    let mut seeds = Zeroizing::new(vec![0u128; t]);
    let mut rng = rand::rng();
    seeds.iter_mut().for_each(|s| *s = rng.random());

    let per_tree = tree_message_bytes(h);
    let mut out = vec![0u8; t * per_tree];
    sender_trees(prg, delta, h, tree_keys, &seeds, tweak_base, v, &mut out);
    for piece in out.chunks(trees_per_message(h) * per_tree) {
        ch.send(piece.to_vec()).await?;
    }

    let chk = ch.recv().await?;
    CotError::expect_len("MPCOT check challenge", &chk, 32)?;
    let mut chi_seed = [0u8; 16];
    chi_seed.copy_from_slice(&chk[..16]);
    let x_prime = read_u128(&chk[16..]);
    let y_star = pack_powers(check_keys);
    let (sum, _) = chi_sums(chi, &chi_seed, v, None);
    let value = sum ^ y_star ^ f_mul(x_prime, delta);
    ch.send(eq_hash(tweak_base, value).to_vec()).await?;
    Ok(AwaitingOpening { value })
}

/// V after step 3: `v` is final, and P's Z (step 4) is still to come. The caller may go on
/// with `v` (Ferret's LPN encoding) while Z travels; the outputs are V's to use once
/// [`finish`](Self::finish) accepted Z.
#[must_use = "step 4 checks the prover's opening"]
pub(crate) struct AwaitingOpening {
    value: u128,
}

impl AwaitingOpening {
    /// Step 4: P's Z must equal V ([`CotError::SpcotProverInconsistent`]).
    pub(crate) async fn finish<C: Channel>(self, ch: &mut C) -> Result<(), CotError> {
        let z_msg = ch.recv().await?;
        CotError::expect_len("MPCOT check opening", &z_msg, 16)?;
        if !bool::from(z_msg.as_slice().ct_eq(&self.value.to_le_bytes()[..])) {
            return Err(CotError::SpcotProverInconsistent);
        }
        Ok(())
    }
}

/// Prover (COT receiver) side, steps 1 and 2. `tree_u`/`tree_m`: t·h base COTs (bits as 0/1
/// bytes); `check_u`/`check_m`: 128 base COTs. Fills `w` (length t·2^h) and `e` (0/1 bytes,
/// one 1 per block); steps 3 and 4 follow in [`AwaitingHash::finish`].
#[allow(clippy::too_many_arguments)]
pub(crate) async fn receive<C: Channel>(
    ch: &mut C,
    prg: &FixedKeyAes,
    chi: PrgKind,
    t: usize,
    h: usize,
    tree_u: &[u8],
    tree_m: &[u128],
    check_u: &[u8],
    check_m: &[u128],
    tweak_base: u128,
    w: &mut [u128],
    e: &mut [u8],
) -> Result<AwaitingHash, CotError> {
    let leaves = 1usize << h;
    debug_assert_eq!(w.len(), t * leaves);
    debug_assert_eq!(e.len(), t * leaves);

    let per_tree = tree_message_bytes(h);
    let per_msg = trees_per_message(h) * per_tree;
    let total = t * per_tree;
    let mut msgs = Vec::with_capacity(total);
    while msgs.len() < total {
        let m = ch.recv().await?;
        CotError::expect_len("MPCOT tree messages", &m, per_msg.min(total - msgs.len()))?;
        msgs.extend_from_slice(&m);
    }

    receiver_trees(prg, h, tree_u, tree_m, &msgs, tweak_base, w, e);

    let mut chi_seed = [0u8; 16];
    rand::rng().fill_bytes(&mut chi_seed);
    let x_star = check_u.iter().enumerate().fold(0u128, |acc, (i, &u)| acc | ((u as u128 & 1) << i));
    let z_star = pack_powers(check_m);
    let (sum, chi_alpha) = chi_sums(chi, &chi_seed, w, Some(e));
    let mut chk = Vec::with_capacity(32);
    chk.extend_from_slice(&chi_seed);
    chk.extend_from_slice(&(x_star ^ chi_alpha).to_le_bytes());
    ch.send(chk).await?;
    Ok(AwaitingHash { value: sum ^ z_star, tweak_base })
}

/// P after step 2: `w` and `e` are final, and V's hash (step 3) is still to come. The caller
/// may go on with them (Ferret's LPN encoding) while the hash travels; the outputs are P's to
/// use once [`finish`](Self::finish) accepted it.
#[must_use = "steps 3 and 4 check the verifier's trees"]
pub(crate) struct AwaitingHash {
    value: u128,
    tweak_base: u128,
}

impl AwaitingHash {
    /// Steps 3 and 4: V's hash must be H_eq(Z) ([`CotError::SpcotCheckFailed`]); then Z goes
    /// to V.
    pub(crate) async fn finish<C: Channel>(self, ch: &mut C) -> Result<(), CotError> {
        let h_msg = ch.recv().await?;
        CotError::expect_len("MPCOT check hash", &h_msg, 32)?;
        if !bool::from(h_msg.as_slice().ct_eq(&eq_hash(self.tweak_base, self.value)[..])) {
            return Err(CotError::SpcotCheckFailed);
        }
        ch.send(self.value.to_le_bytes().to_vec()).await?;
        Ok(())
    }
}

/// The verifier's per-tree work (parallel over trees): expand tree b from `seeds[b]` into
/// `v[b·2^h..]` and write its message (the masked left-side level sums) into
/// `out[b·tree_message_bytes(h)..]`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sender_trees(
    prg: &FixedKeyAes,
    delta: u128,
    h: usize,
    tree_keys: &[u128],
    seeds: &[u128],
    tweak_base: u128,
    v: &mut [u128],
    out: &mut [u8],
) {
    let leaves = 1usize << h;
    let per_tree = tree_message_bytes(h);
    v.par_chunks_mut(leaves).zip(out.par_chunks_mut(per_tree)).zip(seeds.par_iter()).enumerate().for_each(
        |(b, ((leaf, msg), &seed))| {
            let mut sums = Zeroizing::new(vec![0u128; h]);
            half_tree_full(prg, seed, delta, tweak_base, b, leaf, &mut sums);
            for ((c, &s0), &k) in msg.chunks_exact_mut(16).zip(sums.iter()).zip(&tree_keys[b * h..]) {
                c.copy_from_slice(&(s0 ^ k).to_le_bytes());
            }
        },
    );
}

/// The prover's per-tree work (parallel over trees): α_b is given by tree b's base COT bits
/// (bit L of α_b, from the top, is ¬u_{b,L}); rebuild the leaves but α_b from the message, set
/// w at α_b to the XOR of the others and e to the unit vector at α_b. Branch-free and
/// access-pattern-free in the α_b.
#[allow(clippy::too_many_arguments)]
pub(crate) fn receiver_trees(
    prg: &FixedKeyAes,
    h: usize,
    tree_u: &[u8],
    tree_m: &[u128],
    msgs: &[u8],
    tweak_base: u128,
    w: &mut [u128],
    e: &mut [u8],
) {
    let leaves = 1usize << h;
    let per_tree = tree_message_bytes(h);
    w.par_chunks_mut(leaves).zip(e.par_chunks_mut(leaves)).zip(msgs.par_chunks(per_tree)).enumerate().for_each(
        |(b, ((leaf, eb), msg))| {
            let (u, m) = (&tree_u[b * h..(b + 1) * h], &tree_m[b * h..(b + 1) * h]);
            let alpha = u.iter().fold(0usize, |a, &bit| (a << 1) | ((bit & 1) ^ 1) as usize);
            let off: Zeroizing<Vec<u128>> =
                Zeroizing::new(msg.chunks_exact(16).zip(m).map(|(c, &mac)| read_u128(c) ^ mac).collect());
            half_tree_punctured(prg, alpha, &off, tweak_base, b, leaf);
            let w_alpha = leaf.iter().fold(0u128, |acc, &x| acc ^ x);
            for (j, (x, ej)) in leaf.iter_mut().zip(eb.iter_mut()).enumerate() {
                let m = eq_mask(j, alpha);
                *x |= w_alpha & m;
                *ej = (m & 1) as u8;
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitives::field::F128;

    #[test]
    fn pack_powers_is_sum_of_scaled_powers() {
        let vals: Vec<u128> = (0..128).map(|i| (i as u128 + 1) * 0x1234_5678_9abc).collect();
        let mut xi = F128::ONE;
        let mut expect = F128::ZERO;
        for &v in &vals {
            expect += F128(v) * xi;
            xi *= F128(2);
        }
        assert_eq!(pack_powers(&vals), expect.0);
        assert_eq!(mul_x(1 << 127), 0x87);
    }

    /// A V → P message carries as many whole trees as fit in `MAX_MESSAGE_BYTES`, and no more.
    #[test]
    fn tree_messages_are_as_full_as_the_message_limit_allows() {
        for h in 1..=20 {
            let (n, tree) = (trees_per_message(h), tree_message_bytes(h));
            assert!(n * tree <= MAX_MESSAGE_BYTES && (n + 1) * tree > MAX_MESSAGE_BYTES, "h = {h}: {n} trees");
        }
    }
}
