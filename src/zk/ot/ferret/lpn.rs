//! The local linear code of primal LPN: output j gets the XOR of the k-vector entries at
//! [`D`] row indices derived from AES-128 in CTR mode under a per-iteration public seed
//! (3 blocks per column → 12 lanes of 32 bits, the first 10 used; index = ⌊lane·k / 2^32⌋,
//! bias ≤ k/2^32). Repeated indices in one column are kept (they cancel), as in the random
//! local code of the Ferret paper.
//!
//! Encoding runs in place over the SPCOT output vector (y = v ⊕ A·K), in parallel chunks, so
//! no extra n-sized buffer is allocated.

use aes::cipher::{consts::U16, generic_array::GenericArray, BlockEncrypt, KeyInit};
use aes::Aes128;
use rayon::prelude::*;

type Block = GenericArray<u8, U16>;

/// Nonzeros per column of the LPN matrix.
pub const D: usize = 10;
/// AES blocks of index material per column.
const BLOCKS_PER_COL: usize = 3;
/// Columns per rayon task.
const CHUNK: usize = 4096;

/// Row indices of columns `first_col .. first_col + out.len() / D` into `out`.
pub(crate) fn columns_indices(cipher: &Aes128, first_col: usize, k: usize, out: &mut [u32]) {
    /// Columns per AES batch (48 blocks on the stack).
    const BATCH_COLS: usize = 16;
    let mut blocks = [Block::default(); BLOCKS_PER_COL * BATCH_COLS];
    let k = k as u64;
    for (bi, batch) in out.chunks_mut(D * BATCH_COLS).enumerate() {
        let m = batch.len() / D;
        let nb = BLOCKS_PER_COL * m;
        let first_ctr = ((first_col + bi * BATCH_COLS) * BLOCKS_PER_COL) as u128;
        for (b, ctr) in blocks[..nb].iter_mut().zip(first_ctr..) {
            *b = Block::from(ctr.to_le_bytes());
        }
        cipher.encrypt_blocks(&mut blocks[..nb]);
        for (c, rows) in blocks[..nb]
            .chunks_exact(BLOCKS_PER_COL)
            .zip(batch.chunks_exact_mut(D))
        {
            // lanes 0..10 of the column's 12 little-endian 32-bit lanes
            let words = [
                u128::from_le_bytes(c[0].into()),
                u128::from_le_bytes(c[1].into()),
                u128::from_le_bytes(c[2].into()),
            ];
            for (lane, r) in rows.iter_mut().enumerate() {
                let x = (words[lane / 4] >> (32 * (lane % 4))) as u32 as u64;
                *r = ((x * k) >> 32) as u32;
            }
        }
    }
}

/// The D row indices of column `j` (for tests and documentation).
#[cfg(test)]
pub(crate) fn column(seed: &[u8; 16], k: usize, j: usize) -> Vec<u32> {
    let cipher = Aes128::new(GenericArray::from_slice(seed));
    let mut v = vec![0u32; D];
    columns_indices(&cipher, j, k, &mut v);
    v
}

/// Columns ahead whose table rows are prefetched (the gathers are cache-miss bound).
const PREFETCH_AHEAD: usize = 6;

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
    for (c, ((om, ou), rows)) in cm
        .iter_mut()
        .zip(cu.iter_mut())
        .zip(idx.chunks_exact(D))
        .enumerate()
    {
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

/// Verifier side: `out[j] ^= Σ_{r ∈ col(j)} base[r]`.
pub(crate) fn encode_keys(seed: &[u8; 16], base: &[u128], out: &mut [u128]) {
    let cipher = Aes128::new(GenericArray::from_slice(seed));
    let k = base.len();
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut idx = vec![0u32; D * chunk.len()];
            columns_indices(&cipher, c * CHUNK, k, &mut idx);
            gather_keys(base, &idx, chunk);
        });
}

/// Prover side: `out_m[j] ^= Σ base_m[r]` and `out_u[j] ^= ⊕ base_u[r]` over the same columns.
/// `base_u` holds one bit per byte (0 or 1); it is bit-packed here so it stays in cache.
pub(crate) fn encode_cots(
    seed: &[u8; 16],
    base_u: &[u8],
    base_m: &[u128],
    out_u: &mut [u8],
    out_m: &mut [u128],
) {
    debug_assert_eq!(base_u.len(), base_m.len());
    let cipher = Aes128::new(GenericArray::from_slice(seed));
    let k = base_m.len();
    let mut packed = zeroize::Zeroizing::new(vec![0u64; k.div_ceil(64)]);
    for (i, &b) in base_u.iter().enumerate() {
        packed[i / 64] |= ((b & 1) as u64) << (i % 64);
    }
    let packed = &packed;
    out_m
        .par_chunks_mut(CHUNK)
        .zip(out_u.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, (cm, cu))| {
            let mut idx = vec![0u32; D * cm.len()];
            columns_indices(&cipher, c * CHUNK, k, &mut idx);
            gather_cots(base_m, packed, &idx, cm, cu);
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn column_indices_known_answer_from_aes_ctr() {
        // independent recomputation: lane i of AES_seed(3j + i/4), scaled by k / 2^32
        let seed = [0x42u8; 16];
        let (k, j) = (589_760u64, 123_457usize);
        let aes = Aes128::new(GenericArray::from_slice(&seed));
        let mut expect = vec![];
        for blk in 0..3u128 {
            let mut b = Block::from(((3 * j) as u128 + blk).to_le_bytes());
            aes.encrypt_block(&mut b);
            for lane in b.chunks_exact(4) {
                let r = u32::from_le_bytes(lane.try_into().unwrap()) as u64;
                expect.push(((r * k) >> 32) as u32);
            }
        }
        expect.truncate(D);
        assert_eq!(column(&seed, k as usize, j), expect);
    }

    #[test]
    fn encoding_matches_column_definition_and_spreads_indices() {
        let mut rng = rand::rng();
        let seed: [u8; 16] = rng.random();
        let k = 1000;
        let n = 3 * CHUNK + 17;
        let base: Vec<u128> = (0..k).map(|_| rng.random()).collect();
        let orig: Vec<u128> = (0..n).map(|_| rng.random()).collect();
        let mut out = orig.clone();
        encode_keys(&seed, &base, &mut out);
        let mut hits = vec![0usize; k];
        for j in [0usize, 1, CHUNK - 1, CHUNK, 2 * CHUNK + 5, n - 1] {
            let col = column(&seed, k, j);
            assert_eq!(col.len(), D);
            let expect = col.iter().fold(orig[j], |a, &r| a ^ base[r as usize]);
            assert_eq!(out[j], expect, "column {j}");
        }
        for j in 0..n {
            for r in column(&seed, k, j) {
                assert!((r as usize) < k);
                hits[r as usize] += 1;
            }
        }
        // every row used, none wildly over-used (mean = D·n/k ≈ 123)
        let mean = (D * n) as f64 / k as f64;
        assert!(hits.iter().all(|&h| h > 0 && (h as f64) < 2.0 * mean));
        // a different seed gives a different code
        let other: [u8; 16] = rng.random();
        assert_ne!(column(&seed, k, 7), column(&other, k, 7));
    }
}
