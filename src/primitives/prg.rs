//! The engine's seeded PRG: a stream of 16-byte blocks under a 16-byte seed, readable from any
//! block index. It expands the OT extensions' column seeds (KOS, SoftSpokenOT), the public
//! coefficients of their consistency checks and of Ferret's, and Ferret's LPN matrix.
//!
//! Two instantiations, chosen per session by the prover ([`PrgKind`]), since both parties must
//! expand the same seeds the same way:
//! * [`PrgKind::Aes128Ctr`]: block j = AES-128_seed(j), j little-endian. With AES-NI this is the
//!   fastest PRG there is (≈600 M blocks/s per thread here).
//! * [`PrgKind::ChaCha12`]: ChaCha with 12 rounds (Bernstein, "ChaCha, a variant of Salsa20";
//!   the round function and state layout of RFC 8439) under the 256-bit key seed ‖ 0^128, a
//!   64-bit block counter in words 12–13 and a zero nonce in words 14–15; 16-byte block j is
//!   bytes 16·(j mod 4) .. of ChaCha block ⌊j/4⌋. wasm has no AES instruction and its
//!   bitsliced AES makes ≈20 M blocks/s per thread; ChaCha is additions, XORs and rotations,
//!   which SIMD128 does four blocks at a time at ≈135 M blocks/s (`tlsproof bench zk`).
//!
//! Either is a PRG (a PRF in counter mode) under standard assumptions: AES as a PRP, ChaCha12
//! as a PRF (the best published attacks reach 7 rounds). The seed has 128 bits of entropy in
//! both. Only the seeded, PRG-style uses switch; the fixed-key AES hashes of Ferret's trees
//! ([`crate::ot::ferret::ggm`]) need a (circular) correlation-robust permutation and stay
//! AES everywhere.
//!
//! The ChaCha core is generic over a register of 32-bit lanes, one block per lane (`Lanes`):
//! SIMD128 in wasm, SSE2 natively on x86_64 or AVX2 (eight blocks per pass, 300 vs 156 M
//! blocks/s here) when the CPU has it, plain arrays elsewhere; all are tested against RFC
//! 8439's vectors, the AVX2 stream against the SSE2 one, and the stream against `rand_chacha`.
//! It has no data-dependent branch or index.

use crate::primitives::prp::Aes128;
use aes::cipher::generic_array::GenericArray;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

/// Which PRG a session's engine uses. Both parties must use the same one; the prover picks
/// ([`PrgKind::fastest_here`]) and tells the verifier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PrgKind {
    /// AES-128 in counter mode.
    #[default]
    Aes128Ctr,
    /// ChaCha12 with a 64-bit block counter.
    ChaCha12,
}

impl PrgKind {
    /// AES where it runs on a hardware instruction, ChaCha12 elsewhere (wasm).
    pub fn fastest_here() -> Self {
        if crate::primitives::prp::is_hardware() {
            PrgKind::Aes128Ctr
        } else {
            PrgKind::ChaCha12
        }
    }

    /// The stream under `seed`.
    pub fn keyed(self, seed: &[u8; 16]) -> Prg {
        match self {
            PrgKind::Aes128Ctr => Prg::Aes(Aes128::new(GenericArray::from_slice(seed))),
            PrgKind::ChaCha12 => {
                // built in place, so no copy of the key words is left behind unwiped
                let mut key = ChaChaKey([0u32; 8]);
                for (k, c) in key.0.iter_mut().zip(seed.chunks_exact(4)) {
                    *k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                }
                Prg::ChaCha(key)
            }
        }
    }
}

/// A keyed PRG stream ([`PrgKind::keyed`]). Key material is wiped on drop.
///
/// ```
/// use tlsproof::primitives::prg::PrgKind;
/// let prg = PrgKind::ChaCha12.keyed(&[7; 16]);
/// let (mut all, mut tail) = ([0u8; 64], [0u8; 32]);
/// prg.fill(0, &mut all); // blocks 0..4
/// prg.fill(2, &mut tail); // blocks 2..4, read directly
/// assert_eq!(&all[32..], &tail[..]);
/// ```
// A keyed PRG is made once per OT instance and read many times: keeping the AES key schedule
// (larger where it is bit-sliced, as in wasm) inline saves a pointer chase per block.
#[allow(clippy::large_enum_variant)]
pub enum Prg {
    Aes(Aes128),
    ChaCha(ChaChaKey),
}

/// ChaCha's eight key words (the seed, then zeros).
pub struct ChaChaKey([u32; 8]);

impl Drop for ChaChaKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl Prg {
    /// Blocks `start ..` of the stream into `out`, whose length must be a multiple of 16.
    pub fn fill(&self, start: u128, out: &mut [u8]) {
        debug_assert_eq!(out.len() % 16, 0);
        match self {
            Prg::Aes(cipher) => aes_ctr_fill(cipher, start, out),
            Prg::ChaCha(key) => chacha_fill(&key.0, start, out),
        }
    }

    /// Blocks `start ..` of the stream as little-endian `u128`s.
    pub(crate) fn fill_u128(&self, start: u128, out: &mut [u128]) {
        // SAFETY: `u128` has no invalid bit patterns and no padding, so its memory may be
        // written as bytes; the byte slice covers exactly `out`, which it borrows mutably.
        let bytes = unsafe { core::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), 16 * out.len()) };
        self.fill(start, bytes);
        for x in out.iter_mut() {
            *x = u128::from_le(*x);
        }
    }
}

/// AES-CTR: block k of `out` = E(start + k) with the counter encoded little-endian, encrypted
/// in place (no buffer holds key stream).
fn aes_ctr_fill(cipher: &Aes128, start: u128, out: &mut [u8]) {
    let n = out.len() / 16;
    // SAFETY: `Block` (`GenericArray<u8, U16>`) is a `#[repr(transparent)]` wrapper of
    // `[u8; 16]` (size 16, alignment 1), so the first 16·n bytes of `out` are n blocks; the
    // slice borrows `out` mutably, so nothing aliases it.
    let blocks =
        unsafe { core::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<crate::primitives::prp::Block>(), n) };
    for (i, b) in blocks.iter_mut().enumerate() {
        b.copy_from_slice(&start.wrapping_add(i as u128).to_le_bytes());
    }
    cipher.encrypt_blocks(blocks);
}

/// ChaCha12: six double rounds.
const DOUBLE_ROUNDS: usize = 6;
/// Bytes of one ChaCha block.
const BLOCK: usize = 64;

/// ChaCha12 stream blocks `start ..` (16-byte blocks) into `out`, on the widest register here.
fn chacha_fill(key: &[u32; 8], start: u128, out: &mut [u8]) {
    #[cfg(all(target_arch = "x86_64", not(tlsproof_portable)))]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::fill(key, start, out) };
    }
    fill_with::<Native>(key, start, out)
}

/// [`chacha_fill`] on register `L`, [`Lanes::BLOCKS`] ChaCha blocks per pass.
#[inline(always)]
fn fill_with<L: Lanes>(key: &[u32; 8], start: u128, out: &mut [u8]) {
    let unit = BLOCK * L::BLOCKS;
    let mut block = (start / 4) as u64; // the stream repeats after 2^64 ChaCha blocks
    let mut skip = (start % 4) as usize * 16;
    let mut buf = [0u8; 8 * BLOCK];
    let mut pos = 0;
    while pos < out.len() {
        let rest = &mut out[pos..];
        if skip == 0 && rest.len() >= unit {
            blocks::<L>(key, block, DOUBLE_ROUNDS, &mut rest[..unit]);
            pos += unit;
        } else {
            blocks::<L>(key, block, DOUBLE_ROUNDS, &mut buf[..unit]);
            let take = (unit - skip).min(rest.len());
            rest[..take].copy_from_slice(&buf[skip..skip + take]);
            pos += take;
            skip = 0;
        }
        block = block.wrapping_add(L::BLOCKS as u64);
    }
    buf.zeroize();
}

/// A register of [`Lanes::BLOCKS`] 32-bit lanes; lane j of the core's state word i belongs to
/// block j of a pass.
pub(crate) trait Lanes: Copy {
    /// Lanes, i.e. ChaCha blocks per pass.
    const BLOCKS: usize;
    fn splat(x: u32) -> Self;
    /// Lane j = the low (first) and high (second) 32 bits of `counter + j`.
    fn counters(counter: u64) -> (Self, Self);
    fn add(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    /// Each lane rotated left by `N`.
    fn rotl<const N: u32>(self) -> Self;
    /// Writes words 4g .. 4g + 4 of every block, where `m[i]` holds word 4g + i of all of
    /// them, into `out` (`BLOCKS` consecutive 64-byte blocks).
    fn store_words(m: [Self; 4], g: usize, out: &mut [u8]);
}

/// A register of four 32-bit lanes (SIMD128, SSE2, or an array): the [`Lanes`] of 4-block
/// passes, with a 4×4 transpose to write the blocks out.
pub(crate) trait Quad: Copy {
    fn splat(x: u32) -> Self;
    fn new(a: [u32; 4]) -> Self;
    fn add(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn rotl<const N: u32>(self) -> Self;
    /// The 4×4 transpose: lane i of output r = lane r of input i.
    fn transpose(m: [Self; 4]) -> [Self; 4];
    /// The lanes as 16 little-endian bytes.
    fn store(self, out: &mut [u8]);
}

impl<Q: Quad> Lanes for Q {
    const BLOCKS: usize = 4;
    #[inline(always)]
    fn splat(x: u32) -> Self {
        Quad::splat(x)
    }
    #[inline(always)]
    fn counters(counter: u64) -> (Self, Self) {
        let (low, high) = counter_words::<4>(counter);
        (Q::new(low), Q::new(high))
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Quad::add(self, o)
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        Quad::xor(self, o)
    }
    #[inline(always)]
    fn rotl<const N: u32>(self) -> Self {
        Quad::rotl::<N>(self)
    }
    #[inline(always)]
    fn store_words(m: [Self; 4], g: usize, out: &mut [u8]) {
        // row j of the transpose = words 4g .. 4g + 4 of block j
        for (j, row) in Q::transpose(m).into_iter().enumerate() {
            row.store(&mut out[BLOCK * j + 16 * g..BLOCK * j + 16 * g + 16]);
        }
    }
}

/// Lane j of the counters `counter + j`, split into low and high words.
#[inline(always)]
fn counter_words<const N: usize>(counter: u64) -> ([u32; N], [u32; N]) {
    let c: [u64; N] = core::array::from_fn(|j| counter.wrapping_add(j as u64));
    (c.map(|x| x as u32), c.map(|x| (x >> 32) as u32))
}

/// The register used here (SSE2 also under `--cfg tlsproof_portable`, whose profiles stand in
/// for the browser's SIMD128).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
type Native = simd128::Reg;
#[cfg(target_arch = "x86_64")]
type Native = sse2::Reg;
#[cfg(not(any(all(target_arch = "wasm32", target_feature = "simd128"), target_arch = "x86_64")))]
type Native = Portable;

/// ChaCha blocks `counter .. counter + L::BLOCKS` (64-bit counter, zero nonce) with
/// `double_rounds` double rounds, into `out` (64 bytes per block).
#[inline(always)]
fn blocks<L: Lanes>(key: &[u32; 8], counter: u64, double_rounds: usize, out: &mut [u8]) {
    let (low, high) = L::counters(counter);
    blocks_with::<L>(key, low, high, L::splat(0), L::splat(0), double_rounds, out)
}

/// The core on explicit words 12–15 (counter and nonce), for `L::BLOCKS` blocks at once.
#[inline(always)]
fn blocks_with<L: Lanes>(key: &[u32; 8], w12: L, w13: L, w14: L, w15: L, double_rounds: usize, out: &mut [u8]) {
    debug_assert_eq!(out.len(), BLOCK * L::BLOCKS);
    /// "expand 32-byte k"
    const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];
    let input = [
        L::splat(SIGMA[0]),
        L::splat(SIGMA[1]),
        L::splat(SIGMA[2]),
        L::splat(SIGMA[3]),
        L::splat(key[0]),
        L::splat(key[1]),
        L::splat(key[2]),
        L::splat(key[3]),
        L::splat(key[4]),
        L::splat(key[5]),
        L::splat(key[6]),
        L::splat(key[7]),
        w12,
        w13,
        w14,
        w15,
    ];
    let mut x = input;
    #[inline(always)]
    fn quarter<L: Lanes>(x: &mut [L; 16], a: usize, b: usize, c: usize, d: usize) {
        x[a] = x[a].add(x[b]);
        x[d] = x[d].xor(x[a]).rotl::<16>();
        x[c] = x[c].add(x[d]);
        x[b] = x[b].xor(x[c]).rotl::<12>();
        x[a] = x[a].add(x[b]);
        x[d] = x[d].xor(x[a]).rotl::<8>();
        x[c] = x[c].add(x[d]);
        x[b] = x[b].xor(x[c]).rotl::<7>();
    }
    for _ in 0..double_rounds {
        quarter(&mut x, 0, 4, 8, 12);
        quarter(&mut x, 1, 5, 9, 13);
        quarter(&mut x, 2, 6, 10, 14);
        quarter(&mut x, 3, 7, 11, 15);
        quarter(&mut x, 0, 5, 10, 15);
        quarter(&mut x, 1, 6, 11, 12);
        quarter(&mut x, 2, 7, 8, 13);
        quarter(&mut x, 3, 4, 9, 14);
    }
    for g in 0..4 {
        let words = [
            x[4 * g].add(input[4 * g]),
            x[4 * g + 1].add(input[4 * g + 1]),
            x[4 * g + 2].add(input[4 * g + 2]),
            x[4 * g + 3].add(input[4 * g + 3]),
        ];
        L::store_words(words, g, out);
    }
}

/// Four lanes as a plain array (targets without a SIMD register here, and tests).
#[allow(dead_code)] // unused where a SIMD register is the `Native` one, outside tests
#[derive(Clone, Copy)]
pub(crate) struct Portable([u32; 4]);

impl Quad for Portable {
    #[inline(always)]
    fn splat(x: u32) -> Self {
        Portable([x; 4])
    }
    #[inline(always)]
    fn new(a: [u32; 4]) -> Self {
        Portable(a)
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Portable(core::array::from_fn(|i| self.0[i].wrapping_add(o.0[i])))
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        Portable(core::array::from_fn(|i| self.0[i] ^ o.0[i]))
    }
    #[inline(always)]
    fn rotl<const N: u32>(self) -> Self {
        Portable(self.0.map(|v| v.rotate_left(N)))
    }
    #[inline(always)]
    fn transpose(m: [Self; 4]) -> [Self; 4] {
        core::array::from_fn(|r| Portable(core::array::from_fn(|i| m[i].0[r])))
    }
    #[inline(always)]
    fn store(self, out: &mut [u8]) {
        for (o, v) in out.chunks_exact_mut(4).zip(self.0) {
            o.copy_from_slice(&v.to_le_bytes());
        }
    }
}

/// SSE2 (every x86_64 CPU has it).
#[cfg(target_arch = "x86_64")]
pub(crate) mod sse2 {
    use core::arch::x86_64::*;

    #[derive(Clone, Copy)]
    pub(crate) struct Reg(__m128i);

    // SAFETY (all blocks below): SSE2 is part of the x86_64 baseline, so these intrinsics are
    // always available; loads and stores are unaligned and touch exactly 16 bytes.
    impl super::Quad for Reg {
        #[inline(always)]
        fn splat(x: u32) -> Self {
            Reg(unsafe { _mm_set1_epi32(x as i32) })
        }
        #[inline(always)]
        fn new(a: [u32; 4]) -> Self {
            Reg(unsafe { _mm_set_epi32(a[3] as i32, a[2] as i32, a[1] as i32, a[0] as i32) })
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            Reg(unsafe { _mm_add_epi32(self.0, o.0) })
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            Reg(unsafe { _mm_xor_si128(self.0, o.0) })
        }
        #[inline(always)]
        fn rotl<const N: u32>(self) -> Self {
            // the immediate shift forms need literal counts: one arm per rotation ChaCha uses
            unsafe {
                let x = self.0;
                Reg(match N {
                    16 => _mm_or_si128(_mm_slli_epi32::<16>(x), _mm_srli_epi32::<16>(x)),
                    12 => _mm_or_si128(_mm_slli_epi32::<12>(x), _mm_srli_epi32::<20>(x)),
                    8 => _mm_or_si128(_mm_slli_epi32::<8>(x), _mm_srli_epi32::<24>(x)),
                    7 => _mm_or_si128(_mm_slli_epi32::<7>(x), _mm_srli_epi32::<25>(x)),
                    _ => _mm_or_si128(
                        _mm_sll_epi32(x, _mm_cvtsi32_si128(N as i32)),
                        _mm_srl_epi32(x, _mm_cvtsi32_si128(32 - N as i32)),
                    ),
                })
            }
        }
        #[inline(always)]
        fn transpose(m: [Self; 4]) -> [Self; 4] {
            unsafe {
                let t0 = _mm_unpacklo_epi32(m[0].0, m[1].0);
                let t1 = _mm_unpacklo_epi32(m[2].0, m[3].0);
                let t2 = _mm_unpackhi_epi32(m[0].0, m[1].0);
                let t3 = _mm_unpackhi_epi32(m[2].0, m[3].0);
                [
                    Reg(_mm_unpacklo_epi64(t0, t1)),
                    Reg(_mm_unpackhi_epi64(t0, t1)),
                    Reg(_mm_unpacklo_epi64(t2, t3)),
                    Reg(_mm_unpackhi_epi64(t2, t3)),
                ]
            }
        }
        #[inline(always)]
        fn store(self, out: &mut [u8]) {
            assert!(out.len() >= 16);
            unsafe { _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, self.0) }
        }
    }
}

/// AVX2: eight blocks per pass. Used natively when the CPU has it (runtime-detected), which
/// is where the verifier of browser sessions runs ChaCha12.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use core::arch::x86_64::*;

    #[derive(Clone, Copy)]
    pub(crate) struct Reg(__m256i);

    /// [`super::chacha_fill`] with eight blocks per pass.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[cfg_attr(tlsproof_portable, allow(dead_code))] // the browser stand-in stays on 4 lanes
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn fill(key: &[u32; 8], start: u128, out: &mut [u8]) {
        super::fill_with::<Reg>(key, start, out)
    }

    /// The core's known answers on this register.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn known_answers() -> Result<(), String> {
        super::chacha_known_answers_on::<Reg>()
    }

    // SAFETY (all blocks below): these run only inlined into the `avx2` functions above, whose
    // callers checked for AVX2; stores are unaligned and touch exactly 16 bytes each.
    impl super::Lanes for Reg {
        const BLOCKS: usize = 8;
        #[inline(always)]
        fn splat(x: u32) -> Self {
            Reg(unsafe { _mm256_set1_epi32(x as i32) })
        }
        #[inline(always)]
        fn counters(counter: u64) -> (Self, Self) {
            let (l, h) = super::counter_words::<8>(counter);
            let set = |w: [u32; 8]| unsafe {
                _mm256_set_epi32(
                    w[7] as i32,
                    w[6] as i32,
                    w[5] as i32,
                    w[4] as i32,
                    w[3] as i32,
                    w[2] as i32,
                    w[1] as i32,
                    w[0] as i32,
                )
            };
            (Reg(set(l)), Reg(set(h)))
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            Reg(unsafe { _mm256_add_epi32(self.0, o.0) })
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            Reg(unsafe { _mm256_xor_si256(self.0, o.0) })
        }
        #[inline(always)]
        fn rotl<const N: u32>(self) -> Self {
            unsafe {
                let x = self.0;
                Reg(match N {
                    16 => _mm256_shuffle_epi8(
                        x,
                        _mm256_set_epi8(
                            13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2, 13, 12, 15, 14, 9, 8, 11, 10, 5, 4,
                            7, 6, 1, 0, 3, 2,
                        ),
                    ),
                    8 => _mm256_shuffle_epi8(
                        x,
                        _mm256_set_epi8(
                            14, 13, 12, 15, 10, 9, 8, 11, 6, 5, 4, 7, 2, 1, 0, 3, 14, 13, 12, 15, 10, 9, 8, 11, 6, 5,
                            4, 7, 2, 1, 0, 3,
                        ),
                    ),
                    12 => _mm256_or_si256(_mm256_slli_epi32::<12>(x), _mm256_srli_epi32::<20>(x)),
                    7 => _mm256_or_si256(_mm256_slli_epi32::<7>(x), _mm256_srli_epi32::<25>(x)),
                    _ => _mm256_or_si256(
                        _mm256_sll_epi32(x, _mm_cvtsi32_si128(N as i32)),
                        _mm256_srl_epi32(x, _mm_cvtsi32_si128(32 - N as i32)),
                    ),
                })
            }
        }
        #[inline(always)]
        fn store_words(m: [Self; 4], g: usize, out: &mut [u8]) {
            assert!(out.len() >= 8 * super::BLOCK);
            unsafe {
                // the 4×4 transpose within each 128-bit half: half 0 holds blocks 0–3, half 1
                // blocks 4–7
                let t0 = _mm256_unpacklo_epi32(m[0].0, m[1].0);
                let t1 = _mm256_unpacklo_epi32(m[2].0, m[3].0);
                let t2 = _mm256_unpackhi_epi32(m[0].0, m[1].0);
                let t3 = _mm256_unpackhi_epi32(m[2].0, m[3].0);
                let rows = [
                    _mm256_unpacklo_epi64(t0, t1),
                    _mm256_unpackhi_epi64(t0, t1),
                    _mm256_unpacklo_epi64(t2, t3),
                    _mm256_unpackhi_epi64(t2, t3),
                ];
                for (j, r) in rows.into_iter().enumerate() {
                    let (a, b) = (super::BLOCK * j + 16 * g, super::BLOCK * (j + 4) + 16 * g);
                    _mm_storeu_si128(out.as_mut_ptr().add(a) as *mut __m128i, _mm256_castsi256_si128(r));
                    _mm_storeu_si128(out.as_mut_ptr().add(b) as *mut __m128i, _mm256_extracti128_si256::<1>(r));
                }
            }
        }
    }
}

/// SIMD128: rotations by 16 and 8 are byte shuffles.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) mod simd128 {
    use core::arch::wasm32::*;

    #[derive(Clone, Copy)]
    pub(crate) struct Reg(v128);

    impl super::Quad for Reg {
        #[inline(always)]
        fn splat(x: u32) -> Self {
            Reg(u32x4_splat(x))
        }
        #[inline(always)]
        fn new(a: [u32; 4]) -> Self {
            Reg(u32x4(a[0], a[1], a[2], a[3]))
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            Reg(i32x4_add(self.0, o.0))
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            Reg(v128_xor(self.0, o.0))
        }
        #[inline(always)]
        fn rotl<const N: u32>(self) -> Self {
            let x = self.0;
            Reg(match N {
                16 => i8x16_shuffle::<2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13>(x, x),
                8 => i8x16_shuffle::<3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14>(x, x),
                _ => v128_or(i32x4_shl(x, N), u32x4_shr(x, 32 - N)),
            })
        }
        #[inline(always)]
        fn transpose(m: [Self; 4]) -> [Self; 4] {
            let t0 = i32x4_shuffle::<0, 4, 1, 5>(m[0].0, m[1].0);
            let t1 = i32x4_shuffle::<2, 6, 3, 7>(m[0].0, m[1].0);
            let t2 = i32x4_shuffle::<0, 4, 1, 5>(m[2].0, m[3].0);
            let t3 = i32x4_shuffle::<2, 6, 3, 7>(m[2].0, m[3].0);
            [
                Reg(i64x2_shuffle::<0, 2>(t0, t2)),
                Reg(i64x2_shuffle::<1, 3>(t0, t2)),
                Reg(i64x2_shuffle::<0, 2>(t1, t3)),
                Reg(i64x2_shuffle::<1, 3>(t1, t3)),
            ]
        }
        #[inline(always)]
        fn store(self, out: &mut [u8]) {
            assert!(out.len() >= 16);
            // SAFETY: writes 16 bytes inside `out` (checked above); v128 stores need no alignment.
            unsafe { v128_store(out.as_mut_ptr() as *mut v128, self.0) }
        }
    }
}

/// Known answers for whichever registers the target uses (natively also AVX2 when the CPU has
/// it): the wasm browser tests call this too.
#[doc(hidden)]
pub fn chacha_known_answers() -> Result<(), String> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { avx2::known_answers() }?;
    }
    chacha_known_answers_on::<Native>()
}

/// RFC 8439 §2.3.2 (ChaCha20 block function) and §2.4.2's first keystream block, run through
/// the four-block core in every lane position.
fn chacha_known_answers_on<L: Lanes>() -> Result<(), String> {
    fn words(b: &[u8]) -> Vec<u32> {
        b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }
    let key: [u32; 8] = words(&(0u8..32).collect::<Vec<_>>()).try_into().map_err(|_| "key")?;
    // §2.3.2: counter 1, nonce 00:00:00:09:00:00:00:4a:00:00:00:00
    let want_232 = "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e\
                    d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e";
    // §2.4.2: counter 1, nonce 00:00:00:00:00:00:00:4a:00:00:00:00
    let want_242 = "224f51f3401bd9e12fde276fb8631ded8c131f823d2c06e27e4fcaec9ef3cf78\
                    8a3b0aa372600a92b57974cded2b9334794cba40c63e34cdea212c4cf07d41b7";
    for (nonce0, want) in [(0x0900_0000u32, want_232), (0, want_242)] {
        let want: Vec<u8> =
            (0..want.len() / 2).map(|i| u8::from_str_radix(&want[2 * i..2 * i + 2], 16).unwrap_or(0)).collect();
        for lane in 0..L::BLOCKS {
            // block `lane` of the pass has counter 1: the others count from 1 − lane (the low
            // words; word 13 is the nonce's first word here)
            let (ctr, _) = L::counters(1u64.wrapping_sub(lane as u64));
            let mut out = [0u8; 8 * BLOCK];
            let out = &mut out[..BLOCK * L::BLOCKS];
            blocks_with::<L>(&key, ctr, L::splat(nonce0), L::splat(0x4a00_0000), L::splat(0), 10, out);
            let got = &out[BLOCK * lane..BLOCK * lane + BLOCK];
            if got != &want[..] {
                return Err(format!("ChaCha20 block, nonce word {nonce0:#x}, lane {lane}: got {got:02x?}"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, RngCore, SeedableRng};

    #[test]
    fn chacha_core_matches_rfc8439_on_every_register() {
        chacha_known_answers_on::<Portable>().unwrap();
        #[cfg(target_arch = "x86_64")]
        chacha_known_answers_on::<sse2::Reg>().unwrap();
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // the eight-block stream equals the four-block one from any position
            let key = [1, 2, 3, 4, 5, 6, 7, 8];
            for (start, len) in [(0u128, 16 * 40), (3, 16 * 33), (4 * ((1u128 << 32) - 3) + 1, 16 * 70)] {
                let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
                // SAFETY: as above
                unsafe { avx2::fill(&key, start, &mut a) };
                fill_with::<sse2::Reg>(&key, start, &mut b);
                assert_eq!(a, b, "start {start}");
            }
        }
        chacha_known_answers().unwrap();
    }

    /// ChaCha12 with a 64-bit counter and zero nonce, as `rand_chacha` defines it (the seed
    /// is the 256-bit key, `set_word_pos` counts 32-bit words).
    fn reference_chacha12(seed: &[u8; 16], start: u128, len: usize) -> Vec<u8> {
        let mut key = [0u8; 32];
        key[..16].copy_from_slice(seed);
        let mut r = rand_chacha::ChaCha12Rng::from_seed(key);
        r.set_word_pos(start * 4);
        let mut out = vec![0u8; len];
        r.fill_bytes(&mut out);
        out
    }

    #[test]
    fn chacha12_stream_matches_rand_chacha_from_any_block() {
        let mut rng = rand::rng();
        for _ in 0..50 {
            let seed: [u8; 16] = rng.random();
            let start = rng.random_range(0..1000u128);
            let len = 16 * rng.random_range(0..70usize);
            let mut got = vec![0u8; len];
            PrgKind::ChaCha12.keyed(&seed).fill(start, &mut got);
            assert_eq!(got, reference_chacha12(&seed, start, len), "start {start} len {len}");
        }
        // the counter carries into word 13
        let seed = [9u8; 16];
        let start = 4 * ((1u128 << 32) - 1) + 2;
        let mut got = vec![0u8; 16 * 13];
        PrgKind::ChaCha12.keyed(&seed).fill(start, &mut got);
        assert_eq!(got, reference_chacha12(&seed, start, got.len()));
    }

    #[test]
    fn aes_stream_is_aes_ctr_and_u128s_read_little_endian() {
        use aes::cipher::{BlockEncrypt, KeyInit};
        let seed = [7u8; 16];
        let prg = PrgKind::Aes128Ctr.keyed(&seed);
        let mut bytes = vec![0u8; 16 * 40];
        prg.fill(5, &mut bytes);
        let reference = aes::Aes128::new(GenericArray::from_slice(&seed));
        for (i, b) in bytes.chunks_exact(16).enumerate() {
            let mut blk = GenericArray::clone_from_slice(&(5 + i as u128).to_le_bytes());
            reference.encrypt_block(&mut blk);
            assert_eq!(b, blk.as_slice());
        }
        for kind in [PrgKind::Aes128Ctr, PrgKind::ChaCha12] {
            let prg = kind.keyed(&seed);
            prg.fill(3, &mut bytes);
            let mut words = vec![0u128; 40];
            prg.fill_u128(3, &mut words);
            for (w, b) in words.iter().zip(bytes.chunks_exact(16)) {
                assert_eq!(w.to_le_bytes(), b);
            }
        }
    }

    #[test]
    fn streams_differ_by_seed_and_kind() {
        let mut a = vec![0u8; 64];
        let mut b = vec![0u8; 64];
        PrgKind::ChaCha12.keyed(&[1; 16]).fill(0, &mut a);
        PrgKind::ChaCha12.keyed(&[2; 16]).fill(0, &mut b);
        assert_ne!(a, b);
        PrgKind::Aes128Ctr.keyed(&[1; 16]).fill(0, &mut b);
        assert_ne!(a, b);
    }
}
