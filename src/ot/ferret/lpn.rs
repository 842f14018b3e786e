//! The local linear code of primal LPN: output j gets the XOR of the k-vector entries at
//! [`D`] row indices read from the session's PRG ([`crate::primitives::prg`]) under a public seed: the
//! stream (AES-128: E(0) ‖ E(1) ‖ …) is cut into little-endian 32-bit lanes, column j takes lanes
//! 10j .. 10j + 10 (2.5 blocks per column), and a lane x becomes the index ⌊x·k / 2^32⌋
//! (bias ≤ k/2^32). Repeated indices in one column are kept (they cancel), as in the random
//! local code of the Ferret paper.
//!
//! The matrix is public randomness from a seed, so any secure PRG serves; the lanes are packed
//! densely (rather than 3 blocks per column with 2 lanes dropped), which is the same PRG output
//! distribution per lane with 17% fewer PRG blocks.
//!
//! Encoding runs in place over the SPCOT output vector (y = v ⊕ A·K), in parallel chunks, so
//! no extra n-sized buffer is allocated; within a chunk, indices are generated for
//! `SUB` columns at a time into a stack buffer that stays in L1 next to the gathers. The matrix
//! is regenerated rather than kept in memory for reuse: with ChaCha12 as the browser's PRG,
//! generating the indices is about as fast as reading them back.

use crate::primitives::prg::{Prg, PrgKind};
use rayon::prelude::*;

/// Nonzeros per column of the LPN matrix.
pub(crate) const D: usize = 10;
/// Columns per rayon task.
const CHUNK: usize = 4096;
/// Columns whose indices are generated at once (10 KiB of indices on the stack).
const SUB: usize = 256;

/// Row indices of columns `first_col .. first_col + out.len() / D` into `out`.
pub(crate) fn columns_indices(prg: &Prg, first_col: usize, k: usize, out: &mut [u32]) {
    /// Columns per PRG call: 320 lanes, 80 blocks (+1 when the first lane is mid-block).
    const BATCH_COLS: usize = 32;
    const BLOCKS: usize = BATCH_COLS * D / 4 + 1;
    let mut blocks = [0u128; BLOCKS];
    let mut lanes = [0u32; 4 * BLOCKS];
    let k = k as u64;
    for (bi, batch) in out.chunks_mut(D * BATCH_COLS).enumerate() {
        let lane0 = (first_col + bi * BATCH_COLS) * D;
        let (blk0, skip) = (lane0 / 4, lane0 % 4);
        let nb = (skip + batch.len()).div_ceil(4);
        prg.fill_u128(blk0 as u128, &mut blocks[..nb]);
        for (l, &w) in lanes.chunks_exact_mut(4).zip(&blocks[..nb]) {
            l[0] = w as u32;
            l[1] = (w >> 32) as u32;
            l[2] = (w >> 64) as u32;
            l[3] = (w >> 96) as u32;
        }
        for (r, &x) in batch.iter_mut().zip(&lanes[skip..]) {
            *r = ((x as u64 * k) >> 32) as u32;
        }
    }
}

/// The D row indices of column `j` (for tests and documentation).
#[cfg(test)]
pub(crate) fn column(kind: PrgKind, seed: &[u8; 16], k: usize, j: usize) -> Vec<u32> {
    let mut v = vec![0u32; D];
    columns_indices(&kind.keyed(seed), j, k, &mut v);
    v
}

/// Columns ahead whose table rows are prefetched (the gathers are cache-miss bound).
const PREFETCH_AHEAD: usize = 6;
/// Tables of at most this many rows (1 MiB of MACs) sit in L2, where the software prefetches
/// only add load-port pressure (measured: the setup set's gathers got faster without them).
const PREFETCH_MIN_ROWS: usize = 1 << 16;

#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint and never faults, even for an invalid address; SSE is
    // baseline on x86_64.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[inline(always)]
fn prefetch_rows(base: &[u128], idx: &[u32], col: usize) {
    if base.len() <= PREFETCH_MIN_ROWS {
        return;
    }
    if let Some(rows) = idx.get(D * col..D * (col + 1)) {
        for &r in rows {
            prefetch(base.as_ptr().wrapping_add(r as usize));
        }
    }
}

/// `out[j] ^= Σ_{r ∈ idx[D·j..D·j+D]} base[r]` (the gathers of [`encode_keys`]).
pub(crate) fn gather_keys(base: &[u128], idx: &[u32], out: &mut [u128]) {
    for c in 0..PREFETCH_AHEAD {
        prefetch_rows(base, idx, c);
    }
    for (c, (o, rows)) in out.iter_mut().zip(idx.chunks_exact(D)).enumerate() {
        prefetch_rows(base, idx, c + PREFETCH_AHEAD);
        let mut acc = 0u128;
        for &r in rows {
            acc ^= base[r as usize];
        }
        *o ^= acc;
    }
}

/// Prover-side gathers of [`encode_cots`]: MACs from `base_m`, bits from the packed `packed`.
pub(crate) fn gather_cots(base_m: &[u128], packed: &[u64], idx: &[u32], cm: &mut [u128], cu: &mut [u8]) {
    for c in 0..PREFETCH_AHEAD {
        prefetch_rows(base_m, idx, c);
    }
    for (c, ((om, ou), rows)) in cm.iter_mut().zip(cu.iter_mut()).zip(idx.chunks_exact(D)).enumerate() {
        prefetch_rows(base_m, idx, c + PREFETCH_AHEAD);
        let mut acc = 0u128;
        let mut bit = 0u64;
        for &r in rows {
            acc ^= base_m[r as usize];
            bit ^= packed[r as usize / 64] >> (r % 64);
        }
        *om ^= acc;
        *ou ^= (bit & 1) as u8;
    }
}

/// Calls `f(offset, indices)` for columns `first .. first + len`, [`SUB`] at a time, where
/// `indices` holds the D row indices of each column from `first + offset` on.
fn for_each_columns(prg: &Prg, k: usize, first: usize, len: usize, mut f: impl FnMut(usize, &[u32])) {
    let mut buf = [0u32; D * SUB];
    for off in (0..len).step_by(SUB) {
        let idx = &mut buf[..D * SUB.min(len - off)];
        columns_indices(prg, first + off, k, idx);
        f(off, idx);
    }
}

/// Verifier side: `out[j] ^= Σ_{r ∈ col(j)} base[r]`.
pub(crate) fn encode_keys(kind: PrgKind, seed: &[u8; 16], base: &[u128], out: &mut [u128]) {
    let (prg, k) = (kind.keyed(seed), base.len());
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        for_each_columns(&prg, k, c * CHUNK, chunk.len(), |off, idx| {
            gather_keys(base, idx, &mut chunk[off..off + idx.len() / D])
        });
    });
}

/// Prover side: `out_m[j] ^= Σ base_m[r]` and `out_u[j] ^= ⊕ base_u[r]` over the same columns.
/// `base_u` holds one bit per byte (0 or 1); it is bit-packed here so it stays in cache.
pub(crate) fn encode_cots(
    kind: PrgKind,
    seed: &[u8; 16],
    base_u: &[u8],
    base_m: &[u128],
    out_u: &mut [u8],
    out_m: &mut [u128],
) {
    debug_assert_eq!(base_u.len(), base_m.len());
    let k = base_m.len();
    let mut packed = zeroize::Zeroizing::new(vec![0u64; k.div_ceil(64)]);
    for (i, &b) in base_u.iter().enumerate() {
        packed[i / 64] |= ((b & 1) as u64) << (i % 64);
    }
    let (packed, prg) = (&packed, kind.keyed(seed));
    out_m.par_chunks_mut(CHUNK).zip(out_u.par_chunks_mut(CHUNK)).enumerate().for_each(|(c, (cm, cu))| {
        for_each_columns(&prg, k, c * CHUNK, cm.len(), |off, idx| {
            let m = idx.len() / D;
            gather_cots(base_m, packed, idx, &mut cm[off..off + m], &mut cu[off..off + m]);
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    // Known answers come from the `aes` crate, the reference for `prp::Aes128`.
    use aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit};
    use aes::Aes128;
    use rand::Rng;

    #[test]
    fn column_indices_known_answer_from_aes_ctr() {
        // independent recomputation: lane 10j + i of the stream AES_seed(0) ‖ AES_seed(1) ‖ …
        // (4 little-endian lanes per block), scaled by k / 2^32
        use aes::cipher::consts::U16;
        let seed = [0x42u8; 16];
        let k = 589_760u64;
        let aes = Aes128::new(GenericArray::from_slice(&seed));
        for j in [0usize, 1, 123_457, 123_458] {
            let mut expect = vec![];
            for i in 0..D {
                let lane = 10 * j + i;
                let mut b = GenericArray::<u8, U16>::from(((lane / 4) as u128).to_le_bytes());
                aes.encrypt_block(&mut b);
                let off = 4 * (lane % 4);
                let r = u32::from_le_bytes(b[off..off + 4].try_into().unwrap()) as u64;
                expect.push(((r * k) >> 32) as u32);
            }
            assert_eq!(column(PrgKind::Aes128Ctr, &seed, k as usize, j), expect, "column {j}");
        }
    }

    #[test]
    fn encoding_matches_column_definition_and_spreads_indices() {
        for kind in [PrgKind::Aes128Ctr, PrgKind::ChaCha12] {
            encoding_matches_column_definition_with(kind);
        }
    }

    fn encoding_matches_column_definition_with(kind: PrgKind) {
        let mut rng = rand::rng();
        let seed: [u8; 16] = rng.random();
        let k = 1000;
        let n = 3 * CHUNK + 17;
        let base: Vec<u128> = (0..k).map(|_| rng.random()).collect();
        let orig: Vec<u128> = (0..n).map(|_| rng.random()).collect();
        let mut out = orig.clone();
        encode_keys(kind, &seed, &base, &mut out);
        // the prover's side over the same matrix: MACs and bits
        let base_u: Vec<u8> = (0..k).map(|_| rng.random::<u8>() & 1).collect();
        let u0: Vec<u8> = (0..n).map(|_| rng.random::<u8>() & 1).collect();
        let (mut u, mut m) = (u0.clone(), orig.clone());
        encode_cots(kind, &seed, &base_u, &base, &mut u, &mut m);
        let mut hits = vec![0usize; k];
        for j in [0usize, 1, CHUNK - 1, CHUNK, 2 * CHUNK + 5, n - 1] {
            let col = column(kind, &seed, k, j);
            assert_eq!(col.len(), D);
            let expect = col.iter().fold(orig[j], |a, &r| a ^ base[r as usize]);
            assert_eq!(out[j], expect, "column {j}");
            let expect_u = col.iter().fold(u0[j], |a, &r| a ^ base_u[r as usize]);
            assert_eq!((u[j], m[j]), (expect_u, expect), "prover's column {j}");
        }
        for j in 0..n {
            for r in column(kind, &seed, k, j) {
                assert!((r as usize) < k);
                hits[r as usize] += 1;
            }
        }
        // every row used, none wildly over-used (mean = D·n/k ≈ 123)
        let mean = (D * n) as f64 / k as f64;
        assert!(hits.iter().all(|&h| h > 0 && (h as f64) < 2.0 * mean));
        // a different seed gives a different code
        let other: [u8; 16] = rng.random();
        assert_ne!(column(kind, &seed, k, 7), column(kind, &other, k, 7));
    }
}
