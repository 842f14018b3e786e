//! SoftSpokenOT correlated-OT extension (Lawrence Roy, "SoftSpokenOT: Quieter OT Extension
//! from Small-Field Silent VOLE in the Minicrypt Model", CRYPTO 2022, ePrint 2022/192), binary
//! field / repetition-code instantiation, with a KOS-style malicious consistency check.
//! Same roles, correlation and Δ semantics as [`super::kos`]: the verifier is the COT sender
//! holding Δ, the prover the COT receiver, `M_i = K_i ⊕ u_i·Δ`.
//!
//! Written from the paper's description (no code taken from other implementations).
//!
//! # Protocol as built, parameter k (1 ≤ k ≤ 8)
//! Δ's 128 bits are split into `B = ⌈128/k⌉` blocks of k bits (the last block takes the
//! remainder, e.g. k = 5: 25 blocks of 5 and one of 3). Block b covers the columns
//! `off_b .. off_b + k_b` and Δ_b ∈ {0,1}^{k_b} is that slice of Δ.
//!
//! **Setup (once per instance).**
//! 1. 128 Chou–Orlandi base OTs ([`super::base`]), roles reversed as in IKNP: the prover is the
//!    base-OT sender of random key pairs (k_j^0, k_j^1), the verifier the receiver with choice
//!    bits ¬Δ_j (it gets k_j^{¬Δ_j}). The session id given to the base OTs is prefixed with a
//!    SoftSpoken/k domain tag, so KOS and SoftSpoken keys of one session are independent.
//! 2. Per block b, a (2^{k_b} − 1)-out-of-2^{k_b} random OT (a punctured PRF) from the k_b base
//!    OTs of its columns: the prover builds a GGM tree of depth k_b with the fixed-key AES
//!    length-doubling PRG of [`super::ferret::ggm`]. Level 1 *is* the base-OT key pair of the
//!    block's top column (no message); for every deeper level it sends the XOR of all left
//!    children and of all right children, each one-time-padded with that level's base-OT key
//!    (k^0 resp. k^1; 2·(k_b − 1)·16 bytes per block, 3,584 bytes in total for k = 8). Leaf x
//!    sits at the path given by the bits of x (most significant bit = level 1); level l decides
//!    bit k_b − l of x, i.e. column off_b + k_b − l. The verifier, knowing the key of the side
//!    *off* its path at every level, rebuilds every leaf except the punctured one x = Δ_b.
//! 3. Every leaf seed keys a PRG stream (`bits::ColumnPrg`, [`crate::primitives::prg`]; the counter
//!    continues across `extend` calls), r_x = PRG(s_x) ∈ {0,1}^m for the m rows of a call.
//!
//! **Extend(n)**, on m = [`padded_rows`]`(n)` rows (n + κ + s rounded up to 128), in chunks
//! of ≤ [`CHUNK_ROWS`] rows:
//! * small-field VOLE per block (paper §3–4): the prover computes u^(b) = ⊕_x r_x ∈ {0,1}^m and
//!   v^(b) = ⊕_x x·r_x ∈ ({0,1}^{k_b})^m, the verifier w^(b) = ⊕_{x≠Δ_b} (x ⊕ Δ_b)·r_x, so that
//!   w^(b) = v^(b) ⊕ u^(b)·Δ_b row by row. Both sums are computed with the same in-place
//!   "XOR fold" (one pass per bit of x: odd items go into that bit's column, pairs merge), the
//!   verifier on its leaves re-indexed by y = x ⊕ Δ_b with the unknown leaf as zero (it
//!   contributes (Δ_b ⊕ Δ_b)·r = 0 anyway), so its access pattern does not depend on Δ.
//! * subspace VOLE with the repetition code (paper §4): the prover's choice bits are
//!   u = u^(0); it sends the syndrome c^(b) = u^(b) ⊕ u^(0) for b = 1..B−1, i.e. **B − 1 bits
//!   per row** (15 for k = 8, 31 for k = 4, 127 for k = 1 which is exactly IKNP). The verifier
//!   sets w'^(b) = w^(b) ⊕ c^(b)·Δ_b = v^(b) ⊕ u·Δ_b.
//! * Concatenating the blocks: K_i = (w'^(b)_i)_b, M_i = (v^(b)_i)_b, u_i, with
//!   M_i = K_i ⊕ u_i·Δ (the bit u_i scales every block alike, so no field multiplication
//!   in GF(2^k) is ever needed).
//! * Consistency check (the paper's malicious check for the binary repetition-code case, in
//!   the KOS form used by [`super::kos`]): after the whole syndrome arrived, the verifier sends a
//!   fresh 16-byte seed, χ_i = PRG_seed(i) ∈ GF(2^128); the prover answers x = Σ χ_i·u_i and
//!   t = Σ χ_i·M_i; the verifier accepts iff Σ χ_i·K_i = t ⊕ x·Δ. The m − n ≥ 168 = κ + s
//!   extra rows are uniformly random masks that hide the prover's bits in x and are dropped.
//!
//! # Traffic and cost
//! Setup: the base OTs ([`super::base`]: prover 32 B, verifier 128·32 B) plus the GGM messages
//! Σ_b 32·(k_b − 1) B from the prover ([`setup_message_bytes`]: 3,584 B for k = 8). Per
//! `extend(n)`: prover → verifier `(B − 1)·m/8` bytes plus 32 bytes of check, verifier → prover
//! 16 bytes ([`prover_bytes_for`]). Compute: each side evaluates ≈ B·2^k PRG blocks per
//! 128 rows (k = 8: 4,096, i.e. 32 per COT; KOS: 2 and 1), the price of the smaller message.
//!
//! Measured (`examples/cot_bench.rs`, 2 cores shared with other jobs, both parties in one
//! process, so noisy): per COT, both parties, 1M COTs on 2 threads (two runs): KOS ≈100–155 ns
//! (128 bit/COT), k = 1 ≈120 ns (127), k = 2 ≈85–135 ns (63), k = 4 ≈100–180 ns (31),
//! k = 5 ≈120–210 ns (25), k = 6 ≈270 ns (21), k = 8 ≈300–580 ns (15). For Ferret's bootstrap
//! (48,797 COTs, 1 thread) k = 8 takes ≈15–19 ms for both parties vs ≈5–10 ms for KOS and
//! k ≤ 5 (AES-NI). In wasm the PRG is ChaCha12 ([`crate::primitives::prg`]), ≈5× slower than
//! AES-NI per block, so expect ≈5× these there.
//!
//! **Default k = 6** ([`DEFAULT_K`]). k = 8 minimises the prover's upload, but its 2^k PRG
//! work per block lands on the browser prover's critical path when the browser's PRG is
//! bitsliced AES: preprocessing (fast-path session, local, headless Chromium) took 0.55 s with
//! k = 8 and 0.45 s with k = 5, for 61 kB less upload. With ChaCha12 in the browser (two
//! back-to-back rounds, medians of 8, browser fast path) k = 8 costs no time (cable
//! 0.523 / 0.561 s against 0.537 / 0.525 s with k = 5, local 0.206 / 0.195 against
//! 0.207 / 0.198 s) but gains none either, and grows the page's wasm memory (94–162 vs 73 MB).
//! With Ferret's small parameter set ([`super::ferret::LpnParams::SMALL_256K`]) the bootstrap is
//! most of a session's upload, so the default is k = 6: 21 instead of 25 bits per COT (the
//! protocol's preprocessing 7.3 instead of 8.1 bits per COT in all, see [`super::ferret`]) for
//! 11 instead of 6.5 PRG blocks per COT and party, about 2 ms of ChaCha12 per party in the
//! browser for the ≈38k bootstrap COTs.
//!
//! # What leaks
//! * To a malicious **prover**, exactly the KOS-style selective failure on Δ: a prover that
//!   sends a wrong syndrome block c^(b) ⊕ e (or inconsistent GGM messages, which make the
//!   verifier's leaves depend on which prefix of Δ_b it holds) shifts the verifier's keys by a
//!   term that depends on Δ (e·Δ_b, or PRG garbage selected by Δ_b's prefix). It can fold a
//!   guess of that term into (x, t); the check then passes iff the guess is right, so it learns
//!   c bits (a linear/prefix function) of Δ with probability 2^-c and otherwise the session
//!   aborts. Consequences as in [`crate::ot`]: forging a MAC still needs the other bits.
//!   With larger k one deviation bets on a whole block (k bits at once at odds 2^-k); the
//!   rate (bits learned vs. abort probability) is the same as KOS.
//! * To a malicious **verifier**: nothing about the prover's bits beyond aborting: every
//!   syndrome block contains the PRG output of a leaf the verifier cannot compute (its
//!   punctured leaf), and the check response is masked by the κ + s extra rows.
//!
//! After any error an instance is poisoned ([`CotError::Poisoned`]).

use super::base;
use super::bits::{check_as_receiver, check_as_sender, check_n, chunk_lengths, columns_to_rows, ColumnPrg};
use super::ct::{bit_mask, eq_mask};
use super::ferret::ggm::FixedKeyAes;
use super::{CotError, CotReceiver, CotSender};
use crate::channel::Channel;
use crate::primitives::field::F128;
use crate::primitives::prg::PrgKind;
use rand::RngCore;
use rayon::prelude::*;
use zeroize::{Zeroize, Zeroizing};

pub use super::kos::MAX_MESSAGE_BYTES;
pub(crate) use super::kos::{padded_rows, KAPPA};
#[cfg(test)]
pub(crate) use super::kos::{CHUNK_ROWS, MAX_EXTEND};

/// Default k: 21 bits of upload per COT at a compute cost that is small for Ferret's
/// ≈38k-COT bootstrap (see the module docs and [`super::ferret`] for measurements).
pub const DEFAULT_K: usize = 6;
/// Largest supported k (the verifier keeps 2^k PRG keys per block: 4,096 keys at k = 8).
pub(crate) const MAX_K: usize = 8;

const DEFAULT_SESSION_ID: &[u8] = b"tlsproof/zk/ot/softspoken/default-session";
/// Bytes of each leaf's PRG stream processed at once (1,024 rows): 2^k of these fit in L1/L2.
const SEGMENT_BYTES: usize = 512;

/// An unusable parameter choice.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SoftSpokenConfigError {
    #[error("SoftSpokenOT: k must be in 1..={MAX_K}, got {0}")]
    KOutOfRange(usize),
    #[error("SoftSpokenOT: k cannot change after the base OTs ran")]
    AlreadySetUp,
}

/// Sizes of the blocks of Δ for parameter k: ⌊128/k⌋ blocks of k, plus the remainder.
fn block_sizes(k: usize) -> Vec<usize> {
    let mut v = vec![k; KAPPA / k];
    if !KAPPA.is_multiple_of(k) {
        v.push(KAPPA % k);
    }
    v
}

/// Syndrome bits the prover sends per row for parameter k (B − 1).
#[cfg(test)]
pub(crate) fn bits_per_row(k: usize) -> usize {
    block_sizes(k.clamp(1, MAX_K)).len() - 1
}

/// Bytes of the one-time GGM setup message (prover → verifier) for parameter k.
pub(crate) fn setup_message_bytes(k: usize) -> usize {
    block_sizes(k.clamp(1, MAX_K)).iter().map(|&kb| 32 * (kb - 1)).sum()
}

/// Bytes the prover sends for `extend(n)` with parameter k (syndrome plus check message;
/// the verifier sends 16 bytes). Excludes the one-time setup.
#[cfg(test)]
pub(crate) fn prover_bytes_for(k: usize, n: usize) -> usize {
    if n == 0 {
        0
    } else {
        bits_per_row(k) * padded_rows(n) / 8 + 32
    }
}

fn check_k(k: usize) -> Result<(), SoftSpokenConfigError> {
    if (1..=MAX_K).contains(&k) {
        Ok(())
    } else {
        Err(SoftSpokenConfigError::KOutOfRange(k))
    }
}

fn base_session_id(session_id: &[u8], k: usize) -> Vec<u8> {
    let mut s = b"tlsproof/zk/ot/softspoken/v1/k=".to_vec();
    s.push(k as u8);
    s.extend_from_slice(session_id);
    s
}

#[inline]
fn xor_into(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.chunks_exact_mut(16).zip(src.chunks_exact(16)) {
        let x = u128::from_le_bytes((&*d).try_into().expect("16")) ^ u128::from_le_bytes(s.try_into().expect("16"));
        d.copy_from_slice(&x.to_le_bytes());
    }
}

/// Leaf PRGs of one block, indexed by x (prover) or by y = x ⊕ Δ_b with a dummy at y = 0
/// (verifier).
struct Block {
    k: usize,
    leaves: Vec<ColumnPrg>,
}

/// The XOR fold of one block over one chunk: for every leaf index i (skipping i = 0 when
/// `skip_zero`), r_i = next `col_len` bytes of PRG i; writes column j of `out` (k columns of
/// `col_len` bytes) = ⊕_{i: bit j of i} r_i and, if asked, `u_out` = ⊕_i r_i.
fn fold_block(block: &mut Block, col_len: usize, out: &mut [u8], mut u_out: Option<&mut [u8]>, skip_zero: bool) {
    let k = block.k;
    let leaves = 1usize << k;
    debug_assert_eq!(out.len(), k * col_len);
    let mut scratch = Zeroizing::new(vec![0u8; leaves * SEGMENT_BYTES]);
    let mut seg = 0;
    while seg < col_len {
        let s = SEGMENT_BYTES.min(col_len - seg);
        for (i, prg) in block.leaves.iter_mut().enumerate() {
            let dst = &mut scratch[i * SEGMENT_BYTES..i * SEGMENT_BYTES + s];
            if skip_zero && i == 0 {
                dst.fill(0);
            } else {
                prg.fill(dst);
            }
        }
        for lvl in 0..k {
            let step = 1usize << lvl;
            let col = &mut out[lvl * col_len + seg..lvl * col_len + seg + s];
            let mut i = step;
            while i < leaves {
                let (lo, hi) = scratch.split_at_mut(i * SEGMENT_BYTES);
                let item = &hi[..s];
                xor_into(col, item);
                xor_into(&mut lo[(i - step) * SEGMENT_BYTES..(i - step) * SEGMENT_BYTES + s], item);
                i += 2 * step;
            }
        }
        if let Some(u) = u_out.as_deref_mut() {
            u[seg..seg + s].copy_from_slice(&scratch[..s]);
        }
        seg += s;
    }
}

/// Split a column-major buffer of 128 columns into per-block mutable pieces.
fn split_blocks<'a>(mut cols: &'a mut [u8], sizes: &[usize], col_len: usize) -> Vec<&'a mut [u8]> {
    let mut out = Vec::with_capacity(sizes.len());
    for &kb in sizes {
        let (a, b) = cols.split_at_mut(kb * col_len);
        out.push(a);
        cols = b;
    }
    out
}

/// GGM tree of depth `kb` from the base-OT keys of columns off..off+kb (prover side):
/// returns the 2^kb leaves and appends the 2·(kb − 1) padded level sums to `msg`.
fn ggm_expand(
    prg: &FixedKeyAes,
    keys: &[(base::OtKey, base::OtKey)],
    kb: usize,
    msg: &mut Vec<u8>,
) -> Zeroizing<Vec<u128>> {
    let key = |c: usize, side: usize| u128::from_le_bytes(if side == 0 { keys[c].0 } else { keys[c].1 });
    let mut nodes = Zeroizing::new(vec![key(kb - 1, 0), key(kb - 1, 1)]);
    for l in 2..=kb {
        let c = kb - l;
        let mut children = Zeroizing::new(vec![0u128; 2 * nodes.len()]);
        prg.expand(&nodes, &mut children);
        let (mut s0, mut s1) = (0u128, 0u128);
        for pair in children.chunks_exact(2) {
            s0 ^= pair[0];
            s1 ^= pair[1];
        }
        msg.extend_from_slice(&(s0 ^ key(c, 0)).to_le_bytes());
        msg.extend_from_slice(&(s1 ^ key(c, 1)).to_le_bytes());
        nodes = children;
    }
    nodes
}

/// Verifier side of [`ggm_expand`]: from k_c^{¬Δ_c} for the block's columns, its Δ_b and the
/// prover's level sums, all leaves except x = Δ_b (left as 0), indexed by x.
///
/// Δ_b is secret, so nothing here branches on it or uses it as an index: every node slot is
/// visited and the path's slots are picked with constant-time masks.
fn ggm_puncture(
    prg: &FixedKeyAes,
    keys: &[base::OtKey],
    delta_b: usize,
    kb: usize,
    msg: &[u8],
) -> Zeroizing<Vec<u128>> {
    let bit = |c: usize| (delta_b >> c) & 1 == 1;
    let top = kb - 1;
    let key_top = u128::from_le_bytes(keys[top]);
    // the known top node is 1 − bit(top): slot 0 when the bit is 1, slot 1 when it is 0
    let mut nodes = Zeroizing::new(vec![key_top & bit_mask(bit(top)), key_top & !bit_mask(bit(top))]);
    let mut path = bit(top) as usize;
    for l in 2..=kb {
        let c = kb - l;
        let mut children = Zeroizing::new(vec![0u128; 2 * nodes.len()]);
        prg.expand(&nodes, &mut children);
        let d = bit(c);
        let off = 32 * (l - 2);
        let sum0 = u128::from_le_bytes(msg[off..off + 16].try_into().expect("16"));
        let sum1 = u128::from_le_bytes(msg[off + 16..off + 32].try_into().expect("16"));
        // the sibling off the path is on side 1 − d: its level sum is sum1 if d = 0, else sum0
        let mut sib = ((sum1 & !bit_mask(d)) | (sum0 & bit_mask(d))) ^ u128::from_le_bytes(keys[c]);
        // children of the unknown path node are garbage: drop them, then solve for the sibling
        for (i, ch) in children.iter_mut().enumerate() {
            *ch &= !eq_mask(i >> 1, path);
            sib ^= *ch & bit_mask((i & 1 == 1) != d);
        }
        let sib_idx = 2 * path + (!d) as usize;
        for (i, ch) in children.iter_mut().enumerate() {
            let m = eq_mask(i, sib_idx);
            *ch = (sib & m) | (*ch & !m);
        }
        path = 2 * path + d as usize;
        nodes = children;
    }
    nodes
}

/// `leaves` re-indexed by y = x ⊕ Δ_b, in constant time: one masked swap of halves per bit
/// of Δ_b (XOR with a constant permutes by conditionally exchanging i and i ⊕ 2^c).
fn reindex_by_y(leaves: &mut [u128], delta_b: usize, kb: usize) {
    for c in 0..kb {
        let m = bit_mask((delta_b >> c) & 1 == 1);
        let step = 1usize << c;
        for i in 0..leaves.len() {
            if i & step == 0 {
                let t = (leaves[i] ^ leaves[i | step]) & m;
                leaves[i] ^= t;
                leaves[i | step] ^= t;
            }
        }
    }
}

fn leaf_prgs(kind: PrgKind, leaves: &[u128]) -> Vec<ColumnPrg> {
    leaves
        .iter()
        .map(|s| {
            let mut b = s.to_le_bytes();
            let p = ColumnPrg::new(kind, &b);
            b.zeroize();
            p
        })
        .collect()
}

/// Verifier side of SoftSpokenOT: COT sender holding Δ.
pub struct SoftSpokenSender {
    delta: F128,
    k: usize,
    session_id: Vec<u8>,
    /// The PRG of the leaf streams and of the check's coefficients.
    prg: PrgKind,
    /// Per block: leaves indexed by y = x ⊕ Δ_b (y = 0 is a never-used dummy); `None` until
    /// the setup ran.
    blocks: Option<Vec<Block>>,
    poisoned: bool,
}

impl Default for SoftSpokenSender {
    fn default() -> Self {
        Self::new()
    }
}

impl SoftSpokenSender {
    /// A sender with a fresh uniformly random Δ and k = [`DEFAULT_K`]. Setup runs on the first
    /// `extend` (or `setup`).
    pub fn new() -> Self {
        let mut b = [0u8; 16];
        rand::rng().fill_bytes(&mut b);
        let delta = F128::from_le_bytes(b);
        b.zeroize();
        Self::with_delta(delta)
    }

    /// A sender with a caller-chosen Δ (uniformly random and secret).
    pub(crate) fn with_delta(delta: F128) -> Self {
        SoftSpokenSender {
            delta,
            k: DEFAULT_K,
            session_id: DEFAULT_SESSION_ID.to_vec(),
            prg: PrgKind::default(),
            blocks: None,
            poisoned: false,
        }
    }

    /// Choose k (1..=8; both sides must agree). Only before the setup ran.
    pub fn with_k(mut self, k: usize) -> Result<Self, SoftSpokenConfigError> {
        check_k(k)?;
        if self.blocks.is_some() {
            return Err(SoftSpokenConfigError::AlreadySetUp);
        }
        self.k = k;
        Ok(self)
    }

    /// Bind the base OTs to a session identifier (must equal the prover's).
    #[cfg(test)]
    pub(crate) fn with_session_id(mut self, session_id: &[u8]) -> Self {
        self.session_id = session_id.to_vec();
        self
    }

    pub fn k(&self) -> usize {
        self.k
    }

    /// Expand with `prg` (both sides must agree; default AES-128-CTR). Only before the setup ran.
    pub fn with_prg(mut self, prg: PrgKind) -> Result<Self, SoftSpokenConfigError> {
        if self.blocks.is_some() {
            return Err(SoftSpokenConfigError::AlreadySetUp);
        }
        self.prg = prg;
        Ok(self)
    }

    /// The PRG of the leaf streams.
    pub fn prg(&self) -> PrgKind {
        self.prg
    }

    /// Run the base OTs and the GGM setup now (no-op if already done).
    pub async fn setup<C: Channel>(&mut self, ch: &mut C) -> Result<(), CotError> {
        if self.poisoned {
            return Err(CotError::Poisoned);
        }
        if self.blocks.is_some() {
            return Ok(());
        }
        self.poisoned = true;
        let choices: Vec<bool> = (0..KAPPA).map(|j| (self.delta.0 >> j) & 1 == 0).collect();
        let mut keys = base::receive(ch, &base_session_id(&self.session_id, self.k), &choices).await?;
        let sizes = block_sizes(self.k);
        let expected: usize = sizes.iter().map(|&kb| 32 * (kb - 1)).sum();
        let msg = if expected > 0 { ch.recv().await? } else { Vec::new() };
        if msg.len() != expected {
            keys.iter_mut().for_each(|k| k.zeroize());
            return Err(CotError::Malformed { what: "SoftSpokenOT GGM setup message", expected, got: msg.len() });
        }
        let prg = FixedKeyAes::new();
        let mut blocks = Vec::with_capacity(sizes.len());
        let (mut off, mut moff) = (0, 0);
        for &kb in &sizes {
            let delta_b = ((self.delta.0 >> off) as usize) & ((1 << kb) - 1);
            let mut leaves = ggm_puncture(&prg, &keys[off..off + kb], delta_b, kb, &msg[moff..moff + 32 * (kb - 1)]);
            // re-index by y = x ⊕ Δ_b; y = 0 (the punctured leaf) keeps the zero seed
            reindex_by_y(&mut leaves, delta_b, kb);
            blocks.push(Block { k: kb, leaves: leaf_prgs(self.prg, &leaves) });
            off += kb;
            moff += 32 * (kb - 1);
        }
        keys.iter_mut().for_each(|k| k.zeroize());
        self.blocks = Some(blocks);
        self.poisoned = false;
        Ok(())
    }

    async fn extend_inner<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<Vec<F128>, CotError> {
        let delta = self.delta.0;
        let blocks = self.blocks.as_mut().ok_or(CotError::Poisoned)?;
        let sizes: Vec<usize> = blocks.iter().map(|b| b.k).collect();
        let offsets: Vec<usize> = sizes
            .iter()
            .scan(0, |o, &kb| {
                let r = *o;
                *o += kb;
                Some(r)
            })
            .collect();
        let nb = blocks.len();
        let m = padded_rows(n);
        let mut rows = Zeroizing::new(vec![0u128; m]);
        for (start, len) in chunk_lengths(m) {
            let col_len = len / 8;
            let expected = (nb - 1) * col_len;
            let msg = ch.recv().await?;
            if msg.len() != expected {
                return Err(CotError::Malformed { what: "SoftSpokenOT syndrome chunk", expected, got: msg.len() });
            }
            let mut w = Zeroizing::new(vec![0u8; KAPPA * col_len]);
            let pieces = split_blocks(&mut w, &sizes, col_len);
            blocks.par_iter_mut().zip(pieces).enumerate().for_each(|(b, (block, out))| {
                fold_block(block, col_len, out, None, true);
                if b > 0 {
                    let c = &msg[(b - 1) * col_len..b * col_len];
                    for (j, col) in out.chunks_exact_mut(col_len).enumerate() {
                        let mask = 0u8.wrapping_sub(((delta >> (offsets[b] + j)) & 1) as u8);
                        col.iter_mut().zip(c).for_each(|(a, &x)| *a ^= x & mask);
                    }
                }
            });
            columns_to_rows(&w, col_len, &mut rows[start..start + len]);
        }

        check_as_sender(
            ch,
            self.prg,
            &rows,
            self.delta,
            "SoftSpokenOT check response",
            CotError::SoftSpokenCheckFailed,
        )
        .await?;
        Ok(rows[..n].iter().map(|&k| F128(k)).collect())
    }
}

impl CotSender for SoftSpokenSender {
    fn delta(&self) -> F128 {
        self.delta
    }

    async fn extend<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<Vec<F128>, CotError> {
        if self.poisoned {
            return Err(CotError::Poisoned);
        }
        check_n(n)?;
        if n == 0 {
            return Ok(Vec::new());
        }
        self.setup(ch).await?;
        self.poisoned = true;
        let out = self.extend_inner(ch, n).await?;
        self.poisoned = false;
        Ok(out)
    }
}

impl Drop for SoftSpokenSender {
    fn drop(&mut self) {
        self.delta.0.zeroize();
    }
}

/// Prover side of SoftSpokenOT: COT receiver getting random bits and MACs.
pub struct SoftSpokenReceiver {
    k: usize,
    session_id: Vec<u8>,
    /// The PRG of the leaf streams and of the check's coefficients.
    prg: PrgKind,
    /// Per block: all 2^k leaves indexed by x; `None` until the setup ran.
    blocks: Option<Vec<Block>>,
    poisoned: bool,
}

impl Default for SoftSpokenReceiver {
    fn default() -> Self {
        Self::new()
    }
}

impl SoftSpokenReceiver {
    /// A receiver with k = [`DEFAULT_K`]; setup runs on the first `extend` (or `setup`).
    pub fn new() -> Self {
        SoftSpokenReceiver {
            k: DEFAULT_K,
            session_id: DEFAULT_SESSION_ID.to_vec(),
            prg: PrgKind::default(),
            blocks: None,
            poisoned: false,
        }
    }

    /// Choose k (1..=8; both sides must agree). Only before the setup ran.
    pub fn with_k(mut self, k: usize) -> Result<Self, SoftSpokenConfigError> {
        check_k(k)?;
        if self.blocks.is_some() {
            return Err(SoftSpokenConfigError::AlreadySetUp);
        }
        self.k = k;
        Ok(self)
    }

    /// Bind the base OTs to a session identifier (must equal the verifier's).
    #[cfg(test)]
    pub(crate) fn with_session_id(mut self, session_id: &[u8]) -> Self {
        self.session_id = session_id.to_vec();
        self
    }

    pub fn k(&self) -> usize {
        self.k
    }

    /// Expand with `prg` (both sides must agree; default AES-128-CTR). Only before the setup ran.
    pub fn with_prg(mut self, prg: PrgKind) -> Result<Self, SoftSpokenConfigError> {
        if self.blocks.is_some() {
            return Err(SoftSpokenConfigError::AlreadySetUp);
        }
        self.prg = prg;
        Ok(self)
    }

    /// The PRG of the leaf streams.
    pub fn prg(&self) -> PrgKind {
        self.prg
    }

    /// Run the base OTs and the GGM setup now (no-op if already done).
    pub async fn setup<C: Channel>(&mut self, ch: &mut C) -> Result<(), CotError> {
        if self.poisoned {
            return Err(CotError::Poisoned);
        }
        if self.blocks.is_some() {
            return Ok(());
        }
        self.poisoned = true;
        let mut keys = base::send(ch, &base_session_id(&self.session_id, self.k), KAPPA).await?;
        let prg = FixedKeyAes::new();
        let sizes = block_sizes(self.k);
        let mut msg = Vec::with_capacity(setup_message_bytes(self.k));
        let mut blocks = Vec::with_capacity(sizes.len());
        let mut off = 0;
        for &kb in &sizes {
            let leaves = ggm_expand(&prg, &keys[off..off + kb], kb, &mut msg);
            blocks.push(Block { k: kb, leaves: leaf_prgs(self.prg, &leaves) });
            off += kb;
        }
        keys.iter_mut().for_each(|(a, b)| {
            a.zeroize();
            b.zeroize();
        });
        if !msg.is_empty() {
            ch.send(msg).await?;
        }
        self.blocks = Some(blocks);
        self.poisoned = false;
        Ok(())
    }

    async fn extend_inner<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<(Vec<bool>, Vec<F128>), CotError> {
        let blocks = self.blocks.as_mut().ok_or(CotError::Poisoned)?;
        let sizes: Vec<usize> = blocks.iter().map(|b| b.k).collect();
        let nb = blocks.len();
        let m = padded_rows(n);
        let mut bits = Zeroizing::new(vec![0u8; m / 8]);
        let mut rows = Zeroizing::new(vec![0u128; m]);
        for (start, len) in chunk_lengths(m) {
            let col_len = len / 8;
            let mut v = Zeroizing::new(vec![0u8; KAPPA * col_len]);
            let mut u = Zeroizing::new(vec![0u8; nb * col_len]);
            let pieces = split_blocks(&mut v, &sizes, col_len);
            blocks
                .par_iter_mut()
                .zip(pieces)
                .zip(u.par_chunks_mut(col_len))
                .for_each(|((block, out), ub)| fold_block(block, col_len, out, Some(ub), false));
            let (u0, rest) = u.split_at(col_len);
            let mut msg = rest.to_vec();
            msg.chunks_exact_mut(col_len).for_each(|c| xor_into(c, u0));
            bits[start / 8..(start + len) / 8].copy_from_slice(u0);
            columns_to_rows(&v, col_len, &mut rows[start..start + len]);
            ch.send(msg).await?;
        }

        check_as_receiver(ch, self.prg, &rows, &bits, "SoftSpokenOT check seed").await?;

        let choice: Vec<bool> = (0..n).map(|i| (bits[i / 8] >> (i % 8)) & 1 == 1).collect();
        Ok((choice, rows[..n].iter().map(|&t| F128(t)).collect()))
    }
}

impl CotReceiver for SoftSpokenReceiver {
    async fn extend<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<(Vec<bool>, Vec<F128>), CotError> {
        if self.poisoned {
            return Err(CotError::Poisoned);
        }
        check_n(n)?;
        if n == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        self.setup(ch).await?;
        self.poisoned = true;
        let out = self.extend_inner(ch, n).await?;
        self.poisoned = false;
        Ok(out)
    }
}

#[cfg(test)]
mod unit_tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn punctured_tree_matches_the_full_tree_except_at_delta() {
        let prg = FixedKeyAes::new();
        let mut rng = rand::rng();
        for kb in 1..=MAX_K {
            let keys: Vec<(base::OtKey, base::OtKey)> = (0..kb).map(|_| (rng.random(), rng.random())).collect();
            let mut msg = Vec::new();
            let full = ggm_expand(&prg, &keys, kb, &mut msg);
            assert_eq!(msg.len(), 32 * (kb - 1));
            assert_eq!(full.len(), 1 << kb);
            for delta_b in 0..1usize << kb {
                let mine: Vec<base::OtKey> =
                    (0..kb).map(|c| if (delta_b >> c) & 1 == 1 { keys[c].0 } else { keys[c].1 }).collect();
                let punct = ggm_puncture(&prg, &mine, delta_b, kb, &msg);
                for x in 0..1usize << kb {
                    if x == delta_b {
                        assert_eq!(punct[x], 0, "kb={kb} Δ={delta_b}: punctured leaf must stay unknown");
                    } else {
                        assert_eq!(punct[x], full[x], "kb={kb} Δ={delta_b} x={x}");
                    }
                }
            }
            // leaves are distinct (no structural collisions)
            let mut l = full.to_vec();
            l.sort_unstable();
            l.dedup();
            assert_eq!(l.len(), 1 << kb);
        }
    }

    #[test]
    fn constant_time_reindex_matches_its_definition() {
        for kb in 1..=MAX_K {
            let leaves: Vec<u128> = (0..1u128 << kb).map(|x| x * 0x9e37_79b9 + 7).collect();
            for delta_b in 0..1usize << kb {
                let mut by_y = leaves.clone();
                reindex_by_y(&mut by_y, delta_b, kb);
                for y in 0..1usize << kb {
                    assert_eq!(by_y[y], leaves[y ^ delta_b], "kb={kb} Δ={delta_b} y={y}");
                }
            }
        }
    }

    #[test]
    fn fold_computes_u_and_v_and_the_verifier_fold_gives_w() {
        // a block with k = 3 over 256 rows: compare with the definitions
        let kb = 3;
        let col_len = 32;
        let seeds: Vec<u128> = (0..8u128).map(|i| i * 0x1234_5678_9abc + 99).collect();
        let mut block = Block { k: kb, leaves: leaf_prgs(PrgKind::Aes128Ctr, &seeds) };
        let mut v = vec![0u8; kb * col_len];
        let mut u = vec![0u8; col_len];
        fold_block(&mut block, col_len, &mut v, Some(&mut u), false);
        let streams: Vec<Vec<u8>> = seeds
            .iter()
            .map(|s| {
                let mut o = vec![0u8; col_len];
                ColumnPrg::new(PrgKind::Aes128Ctr, &s.to_le_bytes()).fill(&mut o);
                o
            })
            .collect();
        for byte in 0..col_len {
            let all = streams.iter().fold(0u8, |a, s| a ^ s[byte]);
            assert_eq!(u[byte], all);
            for j in 0..kb {
                let want = (0..8).filter(|x| (x >> j) & 1 == 1).fold(0u8, |a, x| a ^ streams[x][byte]);
                assert_eq!(v[j * col_len + byte], want);
            }
        }
        // verifier with Δ_b = 5: leaves by y = x ⊕ 5, y = 0 dummy; w = v ⊕ u·Δ_b
        let d = 5usize;
        let by_y: Vec<u128> = (0..8).map(|y| if y == 0 { 0 } else { seeds[y ^ d] }).collect();
        let mut vb = Block { k: kb, leaves: leaf_prgs(PrgKind::Aes128Ctr, &by_y) };
        let mut w = vec![0u8; kb * col_len];
        fold_block(&mut vb, col_len, &mut w, None, true);
        for j in 0..kb {
            for byte in 0..col_len {
                let want = v[j * col_len + byte] ^ if (d >> j) & 1 == 1 { u[byte] } else { 0 };
                assert_eq!(w[j * col_len + byte], want, "j={j} byte={byte}");
            }
        }
    }

    #[test]
    fn block_layout_and_sizes() {
        assert_eq!(block_sizes(8), vec![8; 16]);
        assert_eq!(block_sizes(5).len(), 26);
        assert_eq!(block_sizes(5).iter().sum::<usize>(), 128);
        assert_eq!(*block_sizes(5).last().unwrap(), 3);
        assert_eq!(block_sizes(1).len(), 128);
        assert_eq!(bits_per_row(8), 15);
        assert_eq!(bits_per_row(4), 31);
        assert_eq!(bits_per_row(1), 127);
        assert_eq!(setup_message_bytes(8), 16 * 7 * 32);
        assert_eq!(setup_message_bytes(1), 0);
    }
}
