//! The local linear code of primal LPN: output j gets the XOR of the k-vector entries at
//! [`D`] row indices read from the session's PRG ([`crate::zk::prg`]) under a public seed: the
//! stream (AES-128: E(0) ‖ E(1) ‖ …) is cut into little-endian 32-bit lanes, column j takes lanes
//! 10j .. 10j + 10 (2.5 blocks per column), and a lane x becomes the index ⌊x·k / 2^32⌋
//! (bias ≤ k/2^32). Repeated indices in one column are kept (they cancel), as in the random
//! local code of the Ferret paper.
//!
//! The matrix is public randomness from a seed, so any secure PRG serves; the lanes are packed
//! densely (earlier versions spent 3 blocks per column and dropped 2 lanes), which is the same
//! PRG output distribution per lane with 17% fewer PRG blocks.
//!
//! Encoding runs in place over the SPCOT output vector (y = v ⊕ A·K), in parallel chunks, so
//! no extra n-sized buffer is allocated; within a chunk, indices are generated for
//! `SUB` columns at a time into a stack buffer that stays in L1 next to the gathers. The
//! prover keeps a matrix it uses again in memory instead (`MatrixCache`).

use crate::zk::prg::{Prg, PrgKind};
use rayon::prelude::*;

/// Nonzeros per column of the LPN matrix.
pub const D: usize = 10;
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

/// Where an encoding's column indices come from: generated from the seed, [`SUB`] columns at a
/// time into a stack buffer, or widened from a [`MatrixCache`]'s 16-bit copy.
enum Columns<'a> {
    Generate { prg: Prg, k: usize },
    Cached(&'a [u16]),
}

impl Columns<'_> {
    /// Calls `f(offset, indices)` for columns `first .. first + len`, [`SUB`] at a time, where
    /// `indices` holds the D row indices of each column from `first + offset` on.
    fn for_each(&self, first: usize, len: usize, mut f: impl FnMut(usize, &[u32])) {
        let mut buf = [0u32; D * SUB];
        for off in (0..len).step_by(SUB) {
            let m = SUB.min(len - off);
            match self {
                Columns::Generate { prg, k } => {
                    let idx = &mut buf[..D * m];
                    columns_indices(prg, first + off, *k, idx);
                    f(off, idx);
                }
                Columns::Cached(all) => {
                    let idx = &mut buf[..D * m];
                    for (i, &c) in idx.iter_mut().zip(&all[D * (first + off)..D * (first + off + m)]) {
                        *i = c as u32;
                    }
                    f(off, idx);
                }
            }
        }
    }
}

/// Column indices of at most this many columns are kept (16 MB: the setup set's 649,728
/// columns fit, the main set's 10.8M do not), and only for k ≤ 2^16 (16-bit indices).
const MAX_CACHED_COLUMNS: usize = 800_000;
const MAX_CACHED_K: usize = 1 << 16;

/// The prover's copy of an LPN matrix for the iterations that reuse it.
///
/// Generating the indices is 2.5 PRG blocks per column; with software AES (wasm sessions
/// before they switched to ChaCha12) that was more than half of the prover's AES per
/// correlation. The prover therefore keeps one seed for all iterations of a parameter set
/// ([`MatrixCache::seed_for`]), and from the second iteration on reads the matrix from
/// memory. One public matrix for many iterations is Ferret's own setting: each
/// iteration is a fresh LPN instance (fresh secret and noise) under the same public code, so
/// the instances stay pseudorandom by a hybrid argument. The first use generates inline as
/// before, so a session with a single iteration (the fast path) never pays for the copy. With
/// AES-NI, generating is as fast as reading the copy back (measured: 51 KB redacted sessions
/// within noise), so there nothing is kept, nor with ChaCha12 ([`MatrixCache::new`]); nor does
/// the verifier, which always generates.
pub(crate) struct MatrixCache {
    /// The PRG that generates the matrices.
    kind: PrgKind,
    /// The seed and shape (k, n) last encoded with.
    id: Option<([u8; 16], usize, usize)>,
    /// Its D·n indices once it has been used twice (empty before, or when too large).
    indices: Vec<u16>,
    /// Whether a matrix used twice is kept at all.
    keep: bool,
}

impl MatrixCache {
    /// Keeps matrices only when they come from software AES: ChaCha12 (the PRG of sessions
    /// without AES-NI, [`PrgKind::fastest_here`]) generates the indices at ≈50 M columns/s per
    /// thread in wasm, about as fast as the copy would be read back, and AES-NI faster still.
    pub(crate) fn new(kind: PrgKind) -> Self {
        let keep = kind == PrgKind::Aes128Ctr && !crate::zk::prp::is_hardware();
        MatrixCache { kind, id: None, indices: Vec::new(), keep }
    }

    /// The seed for an iteration with parameters (k, n): the previous one if the shape is the
    /// same, else a fresh random seed.
    pub(crate) fn seed_for(&self, k: usize, n: usize) -> [u8; 16] {
        match self.id {
            Some((seed, ck, cn)) if (ck, cn) == (k, n) => seed,
            _ => {
                let mut seed = [0u8; 16];
                rand::RngCore::fill_bytes(&mut rand::rng(), &mut seed);
                seed
            }
        }
    }

    /// The columns of the matrix (seed, k, n): cached if it was used before (materialising
    /// it on its second use), generated otherwise.
    fn columns(&mut self, seed: &[u8; 16], k: usize, n: usize) -> Columns<'_> {
        let prg = self.kind.keyed(seed);
        if self.id != Some((*seed, k, n)) {
            self.id = Some((*seed, k, n));
            self.indices = Vec::new();
            return Columns::Generate { prg, k };
        }
        if self.keep && self.indices.is_empty() && n <= MAX_CACHED_COLUMNS && k <= MAX_CACHED_K {
            self.indices = vec![0u16; D * n];
            self.indices.par_chunks_mut(D * SUB).enumerate().for_each(|(c, out)| {
                let mut buf = [0u32; D * SUB];
                let idx = &mut buf[..out.len()];
                columns_indices(&prg, c * SUB, k, idx);
                for (o, &i) in out.iter_mut().zip(idx.iter()) {
                    *o = i as u16; // i < k ≤ 2^16
                }
            });
        }
        if self.indices.is_empty() {
            Columns::Generate { prg, k }
        } else {
            Columns::Cached(&self.indices)
        }
    }
}

/// Verifier side: `out[j] ^= Σ_{r ∈ col(j)} base[r]`.
pub(crate) fn encode_keys(kind: PrgKind, seed: &[u8; 16], base: &[u128], out: &mut [u128]) {
    let k = base.len();
    let columns = Columns::Generate { prg: kind.keyed(seed), k };
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        columns.for_each(c * CHUNK, chunk.len(), |off, idx| gather_keys(base, idx, &mut chunk[off..off + idx.len() / D]));
    });
}

/// Prover side: `out_m[j] ^= Σ base_m[r]` and `out_u[j] ^= ⊕ base_u[r]` over the same columns
/// (from `cache` when this matrix was used before). `base_u` holds one bit per byte (0 or 1);
/// it is bit-packed here so it stays in cache.
pub(crate) fn encode_cots(
    seed: &[u8; 16],
    base_u: &[u8],
    base_m: &[u128],
    out_u: &mut [u8],
    out_m: &mut [u128],
    cache: &mut MatrixCache,
) {
    debug_assert_eq!(base_u.len(), base_m.len());
    let k = base_m.len();
    let mut packed = zeroize::Zeroizing::new(vec![0u64; k.div_ceil(64)]);
    for (i, &b) in base_u.iter().enumerate() {
        packed[i / 64] |= ((b & 1) as u64) << (i % 64);
    }
    let packed = &packed;
    let columns = cache.columns(seed, k, out_m.len());
    out_m
        .par_chunks_mut(CHUNK)
        .zip(out_u.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, (cm, cu))| {
            columns.for_each(c * CHUNK, cm.len(), |off, idx| {
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
    fn cached_matrix_encodes_like_the_generated_one_on_every_use() {
        for kind in [PrgKind::Aes128Ctr, PrgKind::ChaCha12] {
            cached_matrix_encodes_like_the_generated_one_with(kind);
        }
    }

    fn cached_matrix_encodes_like_the_generated_one_with(kind: PrgKind) {
        let mut rng = rand::rng();
        let k = 777;
        let n = 2 * CHUNK + 300;
        let base_u: Vec<u8> = (0..k).map(|_| rng.random::<u8>() & 1).collect();
        let base_m: Vec<u128> = (0..k).map(|_| rng.random()).collect();
        let mut cache = MatrixCache { keep: true, ..MatrixCache::new(kind) };
        // encodes random outputs of n columns with `seed` through the cache and checks them
        // against the column definition; returns whether the matrix was then held in memory
        let mut round = |cache: &mut MatrixCache, seed: [u8; 16], n: usize| -> bool {
            let u0: Vec<u8> = (0..n).map(|_| rng.random::<u8>() & 1).collect();
            let m0: Vec<u128> = (0..n).map(|_| rng.random()).collect();
            let (mut u, mut m) = (u0.clone(), m0.clone());
            encode_cots(&seed, &base_u, &base_m, &mut u, &mut m, cache);
            for j in [0, 1, CHUNK - 1, CHUNK, n - 1] {
                let (eu, em) = column(kind, &seed, k, j)
                    .iter()
                    .fold((u0[j], m0[j]), |(u, m), &r| (u ^ base_u[r as usize], m ^ base_m[r as usize]));
                assert_eq!((u[j], m[j]), (eu, em), "column {j}");
            }
            !cache.indices.is_empty()
        };
        let seed = cache.seed_for(k, n);
        assert!(!round(&mut cache, seed, n), "first use: generated inline, nothing kept");
        assert_eq!(cache.seed_for(k, n), seed, "the prover keeps its seed for the same shape");
        assert!(round(&mut cache, seed, n), "second use: materialised");
        assert!(round(&mut cache, seed, n), "third use: read from memory");
        let other = cache.seed_for(k, n - 1);
        assert_ne!(other, seed, "another shape gets another matrix");
        assert!(!round(&mut cache, other, n - 1), "a new matrix drops the old copy");
        // a seed the cache has not seen starts over
        let fresh = cache.seed_for(k, n);
        assert_ne!(fresh, seed);
        assert!(!round(&mut cache, fresh, n));
        assert!(round(&mut cache, fresh, n));
        // where AES is hardware nothing is kept, and the encodings are the same
        let mut recompute = MatrixCache { keep: false, ..MatrixCache::new(kind) };
        for _ in 0..3 {
            assert!(!round(&mut recompute, seed, n));
        }
        // nor is a matrix whose indices do not fit 16 bits
        let big_k = MAX_CACHED_K + 1;
        let base_m: Vec<u128> = vec![1; big_k];
        let base_u = vec![0u8; big_k];
        let mut cache = MatrixCache { keep: true, ..MatrixCache::new(kind) };
        for _ in 0..2 {
            let (mut u, mut m) = (vec![0u8; 100], vec![0u128; 100]);
            encode_cots(&seed, &base_u, &base_m, &mut u, &mut m, &mut cache);
            assert!(cache.indices.is_empty());
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
        let mut hits = vec![0usize; k];
        for j in [0usize, 1, CHUNK - 1, CHUNK, 2 * CHUNK + 5, n - 1] {
            let col = column(kind, &seed, k, j);
            assert_eq!(col.len(), D);
            let expect = col.iter().fold(orig[j], |a, &r| a ^ base[r as usize]);
            assert_eq!(out[j], expect, "column {j}");
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
