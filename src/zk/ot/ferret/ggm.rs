//! GGM trees for single-point COT, with a fixed-key AES length-doubling PRG, and the
//! tweakable correlation-robust hash used to mask the per-level OT messages.
//!
//! PRG: G(s) = (π_L(s) ⊕ s, π_R(s) ⊕ s) where π_L, π_R are AES-128 under two public fixed
//! keys (Davies–Meyer style; the keys are SHA-256 of public labels). Node `p` at level `L` has
//! children `2p` (left, bit 0) and `2p + 1` (right, bit 1) at level `L + 1`; leaf index bits
//! read from the most significant end give the path from the root.
//!
//! Hash: H(x, τ) = π_H(σ(x) ⊕ τ) ⊕ σ(x) with σ(x_hi ‖ x_lo) = (x_hi ⊕ x_lo) ‖ x_hi, the
//! tweakable circular-correlation-robust construction of Guo–Katz–Wang–Yu (S&P 2020) on a third
//! fixed-key AES permutation.

use aes::cipher::{consts::U16, generic_array::GenericArray, BlockEncrypt, KeyInit};
use aes::Aes128;
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

    /// Tweakable correlation-robust hash H(x, τ).
    pub(crate) fn hash(&self, x: u128, tweak: u128) -> u128 {
        let hi = x >> 64;
        let lo = x & u64::MAX as u128;
        let s = ((hi ^ lo) << 64) | hi;
        let mut b = Block::from((s ^ tweak).to_le_bytes());
        self.hash.encrypt_block(&mut b);
        u128::from_le_bytes(b.into()) ^ s
    }
}

/// All-ones if `a == b`, else zero, computed without branching.
#[inline]
pub(crate) fn eq_mask(a: usize, b: usize) -> u128 {
    let x = (a ^ b) as u64;
    let nonzero = (x | x.wrapping_neg()) >> 63; // 1 iff x != 0
    (nonzero as u128).wrapping_sub(1)
}

/// All-ones if `bit`, else zero.
#[inline]
pub(crate) fn bit_mask(bit: bool) -> u128 {
    0u128.wrapping_sub(bit as u128)
}

/// Sender: expand `seed` into `leaves` (length 2^h, h = `sums.len()` ≥ 1) and record for every
/// level L the XOR of the left children and of the right children at level L + 1.
pub(crate) fn expand_full(
    prg: &FixedKeyAes,
    seed: u128,
    leaves: &mut [u128],
    sums: &mut [(u128, u128)],
) {
    let h = sums.len();
    debug_assert_eq!(leaves.len(), 1 << h);
    let mut scratch = vec![0u128; leaves.len() / 2];
    leaves[0] = seed;
    for (lvl, sum) in sums.iter_mut().enumerate() {
        let np = 1usize << lvl;
        scratch[..np].copy_from_slice(&leaves[..np]);
        prg.expand(&scratch[..np], &mut leaves[..2 * np]);
        let (mut even, mut odd) = (0u128, 0u128);
        for pair in leaves[..2 * np].chunks_exact(2) {
            even ^= pair[0];
            odd ^= pair[1];
        }
        *sum = (even, odd);
    }
    scratch.zeroize();
}

/// Receiver: rebuild every leaf except leaf `alpha` (left as 0) from the per-level sums of the
/// off-path side, `off_path_sums[L]` = XOR of the children at level L + 1 whose last path bit
/// differs from alpha's. Memory accesses and branches do not depend on `alpha` (every level is
/// scanned with masks).
pub(crate) fn expand_punctured(
    prg: &FixedKeyAes,
    alpha: usize,
    off_path_sums: &[u128],
    leaves: &mut [u128],
) {
    let h = off_path_sums.len();
    debug_assert_eq!(leaves.len(), 1 << h);
    let mut scratch = vec![0u128; leaves.len() / 2];
    leaves[0] = 0;
    for (lvl, &off_sum) in off_path_sums.iter().enumerate() {
        let np = 1usize << lvl;
        scratch[..np].copy_from_slice(&leaves[..np]);
        prg.expand(&scratch[..np], &mut leaves[..2 * np]);
        let path_parent = alpha >> (h - lvl);
        let sibling = (alpha >> (h - lvl - 1)) ^ 1;
        // the on-path parent is unknown: clear its (garbage) children, sum the rest by side
        let (mut even, mut odd) = (0u128, 0u128);
        for (p, pair) in leaves[..2 * np].chunks_exact_mut(2).enumerate() {
            let keep = !eq_mask(p, path_parent);
            pair[0] &= keep;
            pair[1] &= keep;
            even ^= pair[0];
            odd ^= pair[1];
        }
        let sib_odd = bit_mask(sibling & 1 == 1);
        let same_side = (odd & sib_odd) | (even & !sib_odd);
        let value = off_sum ^ same_side;
        for (j, c) in leaves[..2 * np].iter_mut().enumerate() {
            *c |= value & eq_mask(j, sibling);
        }
    }
    scratch.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn punctured_tree_matches_full_tree_except_at_alpha() {
        let prg = FixedKeyAes::new();
        let mut rng = rand::rng();
        for h in [1usize, 2, 5, 8] {
            let seed: u128 = rng.random();
            let mut full = vec![0u128; 1 << h];
            let mut sums = vec![(0u128, 0u128); h];
            expand_full(&prg, seed, &mut full, &mut sums);
            for alpha in [0usize, (1 << h) - 1, rng.random_range(0..1 << h)] {
                let off: Vec<u128> = (0..h)
                    .map(|l| {
                        let bit = (alpha >> (h - 1 - l)) & 1;
                        if bit == 1 {
                            sums[l].0
                        } else {
                            sums[l].1
                        }
                    })
                    .collect();
                let mut part = vec![0u128; 1 << h];
                expand_punctured(&prg, alpha, &off, &mut part);
                for j in 0..1 << h {
                    if j == alpha {
                        assert_eq!(part[j], 0);
                    } else {
                        assert_eq!(part[j], full[j], "h={h} alpha={alpha} j={j}");
                    }
                }
            }
            // leaves are distinct (no trivial PRG)
            let mut sorted = full.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 1 << h);
        }
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
        assert_eq!(eq_mask(5, 5), u128::MAX);
        assert_eq!(eq_mask(5, 4), 0);
    }
}

