//! Trees of fixed-key AES: the full GGM expansion (`expand`, used by SoftSpokenOT's small-field
//! VOLE) and the half-tree expansion of Ferret's single-point COTs.
//!
//! GGM PRG: G(s) = (π_L(s) ⊕ s, π_R(s) ⊕ s) where π_L, π_R are AES-128 under two public fixed
//! keys (Davies–Meyer style; the keys are SHA-256 of public labels). Node `p` at level `L` has
//! children `2p` (left, bit 0) and `2p + 1` (right, bit 1) at level `L + 1`; leaf index bits
//! read from the most significant end give the path from the root.
//!
//! Half tree (Guo, Yang, Wang, Zhang, Xie, Liu, Zhao, Eurocrypt 2023): one hash per node
//! instead of two AES calls, children (H(x, τ), x ⊕ H(x, τ)). With level 1 = (s, s ⊕ Δ) every
//! level XORs to Δ, which is exactly a COT correlation: one base COT per level hands the
//! receiver the off-path side's sum with a single 16-byte message, and the leaves XOR to Δ, so
//! the punctured leaf needs no correction message either.
//! H(x, τ) = π_H(σ(x) ⊕ τ) ⊕ σ(x) with σ(x_hi ‖ x_lo) = (x_hi ⊕ x_lo) ‖ x_hi, the tweakable
//! circular-correlation-robust construction of Guo–Katz–Wang–Yu (S&P 2020) on a third fixed-key
//! AES permutation; τ is unique per node in a session (`node_tweak`), and circular
//! correlation robustness is what the nodes need, since the receiver knows each on-path node
//! up to an XOR with Δ.

use crate::ot::ct::{bit_mask, eq_mask};
use crate::primitives::prp::{sigma, Aes128};
use aes::cipher::{consts::U16, generic_array::GenericArray};
use sha2::{Digest, Sha256};
use zeroize::Zeroize;

pub(crate) use super::super::bits::as_blocks;

type Block = GenericArray<u8, U16>;

/// AES blocks per batched encryption call (lets AES-NI pipeline).
const BATCH: usize = 64;

fn fixed_key(label: &[u8]) -> Aes128 {
    let d = Sha256::digest(label);
    Aes128::new(GenericArray::from_slice(&d[..16]))
}

/// The public fixed-key permutations: two for the GGM PRG, one for the hash.
pub(crate) struct FixedKeyAes {
    left: Aes128,
    right: Aes128,
    hash: Aes128,
}

impl FixedKeyAes {
    pub(crate) fn new() -> Self {
        FixedKeyAes {
            left: fixed_key(b"tlsproof/zk/ot/ferret/ggm-prg/left"),
            right: fixed_key(b"tlsproof/zk/ot/ferret/ggm-prg/right"),
            hash: fixed_key(b"tlsproof/zk/ot/ferret/tccr-hash"),
        }
    }

    /// children[2p] = π_L(parents[p]) ⊕ parents[p], children[2p+1] = π_R(parents[p]) ⊕ parents[p].
    ///
    /// The AES inputs/outputs live in one `u128` stack buffer that is viewed as AES blocks
    /// ([`as_blocks`]) and wiped once per call with 16-byte writes. (Wiping `GenericArray`
    /// blocks goes byte by byte through volatile writes: 2 KiB of them per call, which cost
    /// more than the AES itself for the small trees of the setup parameters.)
    pub(crate) fn expand(&self, parents: &[u128], children: &mut [u128]) {
        debug_assert_eq!(children.len(), 2 * parents.len());
        let mut buf = [0u128; 2 * BATCH];
        for (pc, cc) in parents.chunks(BATCH).zip(children.chunks_mut(2 * BATCH)) {
            let m = pc.len();
            let (lb, rb) = buf.split_at_mut(BATCH);
            for ((l, r), &p) in lb.iter_mut().zip(rb.iter_mut()).zip(pc) {
                *l = p.to_le();
                *r = p.to_le();
            }
            self.left.encrypt_blocks(as_blocks(&mut lb[..m]));
            self.right.encrypt_blocks(as_blocks(&mut rb[..m]));
            for (((c, &l), &r), &p) in cc.chunks_exact_mut(2).zip(lb.iter()).zip(rb.iter()).zip(pc) {
                c[0] = u128::from_le(l) ^ p;
                c[1] = u128::from_le(r) ^ p;
            }
        }
        buf.zeroize();
    }

    /// Tweakable circular correlation-robust hash H(x, τ) (one block; the batched form is
    /// [`Self::half_expand`]).
    pub(crate) fn hash(&self, x: u128, tweak: u128) -> u128 {
        let s = sigma(x);
        let mut b = Block::from((s ^ tweak).to_le_bytes());
        self.hash.encrypt_block(&mut b);
        u128::from_le_bytes(b.into()) ^ s
    }

    /// One half-tree level in place: `nodes[..np]` are the parents (parent p has tweak
    /// `tweak ⊕ p`, the caller's tweak leaving the low bits free); on return `nodes[..2np]`
    /// are the children, `nodes[2p] = H(x_p, tweak ⊕ p)` and `nodes[2p+1] = x_p ⊕ nodes[2p]`.
    /// Returns (XOR of the left children, XOR of the right ones). Chunks run from the end so
    /// that no parent is overwritten before it is read.
    pub(crate) fn half_expand(&self, nodes: &mut [u128], np: usize, tweak: u128) -> (u128, u128) {
        debug_assert_eq!(nodes.len(), 2 * np);
        let mut parents = [0u128; BATCH];
        let mut buf = [0u128; BATCH];
        let (mut left_sum, mut right_sum) = (0u128, 0u128);
        let mut end = np;
        while end > 0 {
            let start = end.saturating_sub(BATCH);
            let m = end - start;
            parents[..m].copy_from_slice(&nodes[start..end]);
            for (i, (b, &x)) in buf.iter_mut().zip(&parents[..m]).enumerate() {
                *b = (sigma(x) ^ tweak ^ (start + i) as u128).to_le();
            }
            self.hash.encrypt_blocks(as_blocks(&mut buf[..m]));
            for ((pair, &b), &x) in nodes[2 * start..2 * end].chunks_exact_mut(2).zip(buf.iter()).zip(&parents[..m]) {
                let left = u128::from_le(b) ^ sigma(x);
                pair[0] = left;
                pair[1] = x ^ left;
                left_sum ^= left;
                right_sum ^= x ^ left;
            }
            end = start;
        }
        parents.zeroize();
        buf.zeroize();
        (left_sum, right_sum)
    }
}

/// The tweak of parent node `p` of level `lvl` (heap index 2^lvl + p) in tree `tree` of an
/// iteration whose tweaks start at `tweak_base` (bits 64..): unique per node per session.
#[inline]
fn node_tweak(tweak_base: u128, tree: usize, heap: usize) -> u128 {
    tweak_base | ((tree as u128) << 32) | heap as u128
}

/// Half-tree sender (Guo, Yang, Wang, Zhang, Xie, Liu, Zhao, "Half-Tree", Eurocrypt 2023):
/// level 1 is (seed, seed ⊕ Δ) and every later node x has children (H(x, τ), x ⊕ H(x, τ)), so
/// each level's nodes XOR to Δ. Fills `leaves` (2^h, h = `left_sums.len()` ≥ 1) and
/// `left_sums[L]` = XOR of the left children at level L + 1 (the right ones XOR to that ⊕ Δ).
pub(crate) fn half_tree_full(
    prg: &FixedKeyAes,
    seed: u128,
    delta: u128,
    tweak_base: u128,
    tree: usize,
    leaves: &mut [u128],
    left_sums: &mut [u128],
) {
    let h = left_sums.len();
    debug_assert_eq!(leaves.len(), 1 << h);
    leaves[0] = seed;
    leaves[1] = seed ^ delta;
    left_sums[0] = seed;
    for (lvl, sum) in left_sums.iter_mut().enumerate().skip(1) {
        let np = 1usize << lvl;
        (*sum, _) = prg.half_expand(&mut leaves[..2 * np], np, node_tweak(tweak_base, tree, np));
    }
}

/// Half-tree receiver: rebuild every leaf except leaf `alpha` (left as 0) from
/// `off_path_sums[L]` = XOR of the level-(L + 1) children on the side opposite to alpha's bit
/// L (read from the most significant end). Memory accesses and branches do not depend on
/// `alpha`: each level is scanned once with masks.
pub(crate) fn half_tree_punctured(
    prg: &FixedKeyAes,
    alpha: usize,
    off_path_sums: &[u128],
    tweak_base: u128,
    tree: usize,
    leaves: &mut [u128],
) {
    let h = off_path_sums.len();
    debug_assert_eq!(leaves.len(), 1 << h);
    let top = bit_mask((alpha >> (h - 1)) & 1 == 1);
    leaves[0] = off_path_sums[0] & top;
    leaves[1] = off_path_sums[0] & !top;
    for (lvl, &off_sum) in off_path_sums.iter().enumerate().skip(1) {
        let np = 1usize << lvl;
        let tweak = node_tweak(tweak_base, tree, np);
        let path_parent = alpha >> (h - lvl);
        // The on-path parent is held as 0, so both its children came out as g = H(0, τ) and
        // are in the sums below; g is recomputed (its tweak is the only α-dependent input).
        let g = prg.hash(0, tweak ^ path_parent as u128);
        let (left, right) = prg.half_expand(&mut leaves[..2 * np], np, tweak);
        let off_right = bit_mask((alpha >> (h - lvl - 1)) & 1 == 0);
        let same_side = ((right & off_right) | (left & !off_right)) ^ g;
        let sibling_value = off_sum ^ same_side;
        for (p, pair) in leaves[..2 * np].chunks_exact_mut(2).enumerate() {
            let on = eq_mask(p, path_parent);
            let (set_r, set_l) = (on & off_right, on & !off_right);
            pair[0] = (pair[0] & !on) | (sibling_value & set_l);
            pair[1] = (pair[1] & !on) | (sibling_value & set_r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    // Known answers come from the `aes` crate, the reference for `prp::Aes128`.
    use aes::cipher::{BlockEncrypt, KeyInit};
    use aes::Aes128;
    use rand::Rng;

    #[test]
    fn half_tree_punctured_matches_full_except_at_alpha_and_levels_sum_to_delta() {
        let prg = FixedKeyAes::new();
        let mut rng = rand::rng();
        for h in [1usize, 2, 5, 8] {
            let (seed, delta): (u128, u128) = (rng.random(), rng.random());
            let (base, tree) = (9u128 << 64, 3);
            let mut full = vec![0u128; 1 << h];
            let mut sums = vec![0u128; h];
            half_tree_full(&prg, seed, delta, base, tree, &mut full, &mut sums);
            // the leaves XOR to Δ (so the receiver's punctured leaf needs no message)
            assert_eq!(full.iter().fold(0, |a, &x| a ^ x), delta, "h={h}");
            for alpha in [0usize, (1 << h) - 1, rng.random_range(0..1 << h)] {
                // level L's off-path sum is the left sum when α's bit is 1, else left ⊕ Δ
                let off: Vec<u128> =
                    (0..h).map(|l| sums[l] ^ (delta * (1 - ((alpha >> (h - 1 - l)) & 1)) as u128)).collect();
                let mut part = vec![0u128; 1 << h];
                half_tree_punctured(&prg, alpha, &off, base, tree, &mut part);
                for j in 0..1 << h {
                    let expect = if j == alpha { 0 } else { full[j] };
                    assert_eq!(part[j], expect, "h={h} alpha={alpha} j={j}");
                }
            }
            let mut sorted = full.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 1 << h, "leaves repeat");
            // another tree index (tweak) gives an unrelated tree below level 1
            let mut other = vec![0u128; 1 << h];
            half_tree_full(&prg, seed, delta, base, tree + 1, &mut other, &mut sums);
            if h > 1 {
                assert!(full.iter().zip(&other).all(|(a, b)| a != b));
            }
        }
    }

    #[test]
    fn half_expand_is_the_per_node_hash() {
        let prg = FixedKeyAes::new();
        let mut rng = rand::rng();
        // more parents than one AES batch, so the back-to-front chunking is exercised
        let np = 3 * BATCH + 5;
        let parents: Vec<u128> = (0..np).map(|_| rng.random()).collect();
        let tweak = (5u128 << 64) | (1 << 20);
        let mut nodes = parents.clone();
        nodes.resize(2 * np, 0);
        let (ls, rs) = prg.half_expand(&mut nodes, np, tweak);
        for (p, &x) in parents.iter().enumerate() {
            let left = prg.hash(x, tweak ^ p as u128);
            assert_eq!((nodes[2 * p], nodes[2 * p + 1]), (left, x ^ left), "parent {p}");
        }
        let xor = |it: &mut dyn Iterator<Item = u128>| it.fold(0, |a, x| a ^ x);
        assert_eq!(ls, xor(&mut nodes.iter().step_by(2).copied()));
        assert_eq!(rs, xor(&mut nodes.iter().skip(1).step_by(2).copied()));
    }

    #[test]
    fn prg_and_hash_match_aes_definition() {
        let prg = FixedKeyAes::new();
        let s: u128 = 0x0123_4567_89ab_cdef_0011_2233_4455_6677;
        let mut out = [0u128; 2];
        prg.expand(&[s], &mut out);
        let d = Sha256::digest(b"tlsproof/zk/ot/ferret/ggm-prg/left");
        let aes = Aes128::new(GenericArray::from_slice(&d[..16]));
        let mut b = Block::from(s.to_le_bytes());
        aes.encrypt_block(&mut b);
        assert_eq!(out[0], u128::from_le_bytes(b.into()) ^ s);
        assert_ne!(out[0], out[1]);
        assert_ne!(prg.hash(s, 0), prg.hash(s, 1));
        let sig = ((s >> 64) ^ (s & u64::MAX as u128)) << 64 | (s >> 64);
        let d = Sha256::digest(b"tlsproof/zk/ot/ferret/tccr-hash");
        let aes = Aes128::new(GenericArray::from_slice(&d[..16]));
        let mut b = Block::from((sig ^ 7).to_le_bytes());
        aes.encrypt_block(&mut b);
        assert_eq!(prg.hash(s, 7), u128::from_le_bytes(b.into()) ^ sig);
        assert_eq!(eq_mask(5, 5), u128::MAX);
        assert_eq!(eq_mask(5, 4), 0);
    }
}
