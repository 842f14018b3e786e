//! Batched sums over GF(2^128): the QuickSilver check's fused weighted sums (portable, with
//! PCLMULQDQ, bit-sliced), sums with fixed and public weights.

use super::*;

/// The QuickSilver check's sums, fused so that no per-column copies or product vectors are
/// made (portable form; [`simd`] has the PCLMULQDQ one).
pub(in crate::primitives::field) fn and_sums_portable(coeffs: &[F128], items: &[[F128; 3]]) -> (F128, F128) {
    weighted_sums_portable(coeffs, items, |t| (t[0] * t[1], t[2]))
}

/// (Σ c_i·f(item_i).0, Σ c_i·f(item_i).1) with the public c_i applied by the bit-sliced
/// [`PublicWeightedSum`] (no field product per coefficient), the f(item) staged 64 at a time and wiped.
pub(in crate::primitives::field) fn weighted_sums_portable<T>(
    coeffs: &[F128],
    items: &[T],
    f: impl Fn(&T) -> (F128, F128),
) -> (F128, F128) {
    const STAGE: usize = 64;
    let (mut s0, mut s1) = (PublicWeightedSum::sliced(), PublicWeightedSum::sliced());
    let (mut v0, mut v1) = ([F128::ZERO; STAGE], [F128::ZERO; STAGE]);
    for (c, items) in coeffs.chunks(STAGE).zip(items.chunks(STAGE)) {
        for ((a, b), t) in v0.iter_mut().zip(v1.iter_mut()).zip(items) {
            (*a, *b) = f(t);
        }
        s0.add(c, &v0[..items.len()]);
        s1.add(c, &v1[..items.len()]);
    }
    zeroize::Zeroize::zeroize(&mut v0);
    zeroize::Zeroize::zeroize(&mut v1);
    (s0.finish(), s1.finish())
}

pub(in crate::primitives::field) fn and_row_sums_portable(items: &[[F128; 3]]) -> (F128, F128) {
    let (mut s0, mut s1) = (F128::ZERO, F128::ZERO);
    for t in items {
        s0 = s0.mul_x() ^ (t[0] * t[1]);
        s1 = s1.mul_x() ^ t[2];
    }
    (s0, s1)
}

pub(in crate::primitives::field) fn product_sums_portable(coeffs: &[F128], items: &[[F128; 5]]) -> (F128, F128) {
    weighted_sums_portable(coeffs, items, |&[a, ma, b, mb, mc]| {
        (ma * mb, (a.mul_wide(mb) ^ b.mul_wide(ma)).reduce() ^ mc)
    })
}

/// Slice kernels with PCLMULQDQ that keep operands and accumulators in XMM registers (the
/// scalar [`clmul128_pclmul`] round-trips through general registers, which costs more than
/// the multiplies) and reduce with three more carry-less multiplies by 0x87.
#[cfg(target_arch = "x86_64")]
pub(in crate::primitives::field) mod simd {
    use super::F128;
    use core::arch::x86_64::*;

    /// An unreduced sum of 256-bit products, lo + mid·x^64 + hi·x^128.
    #[derive(Clone, Copy)]
    struct Acc {
        lo: __m128i,
        mid: __m128i,
        hi: __m128i,
    }

    #[inline(always)]
    unsafe fn load(x: &F128) -> __m128i {
        // F128 is repr(transparent) over u128, little-endian: lane 0 holds the low 64 bits.
        _mm_loadu_si128(x as *const F128 as *const __m128i)
    }

    #[inline(always)]
    unsafe fn to_f128(v: __m128i) -> F128 {
        let mut out = F128::ZERO;
        _mm_storeu_si128(&mut out as *mut F128 as *mut __m128i, v);
        out
    }

    #[inline(always)]
    unsafe fn zero() -> Acc {
        Acc { lo: _mm_setzero_si128(), mid: _mm_setzero_si128(), hi: _mm_setzero_si128() }
    }

    #[inline]
    #[target_feature(enable = "pclmulqdq,sse2")]
    unsafe fn mul_acc(acc: &mut Acc, a: __m128i, b: __m128i) {
        acc.lo = _mm_xor_si128(acc.lo, _mm_clmulepi64_si128::<0x00>(a, b));
        acc.hi = _mm_xor_si128(acc.hi, _mm_clmulepi64_si128::<0x11>(a, b));
        let m = _mm_xor_si128(_mm_clmulepi64_si128::<0x10>(a, b), _mm_clmulepi64_si128::<0x01>(a, b));
        acc.mid = _mm_xor_si128(acc.mid, m);
    }

    /// Reduce modulo x^128 + x^7 + x^2 + x + 1: the high half H folds in as H·0x87, and the
    /// ≤ 7 bits of that above x^128 fold once more.
    #[inline]
    #[target_feature(enable = "pclmulqdq,sse2")]
    unsafe fn reduce(acc: Acc) -> __m128i {
        let l = _mm_xor_si128(acc.lo, _mm_slli_si128::<8>(acc.mid));
        let h = _mm_xor_si128(acc.hi, _mm_srli_si128::<8>(acc.mid));
        let p = _mm_set_epi64x(0, 0x87);
        let t0 = _mm_clmulepi64_si128::<0x00>(h, p);
        let t1 = _mm_clmulepi64_si128::<0x01>(h, p);
        let r = _mm_xor_si128(l, _mm_xor_si128(t0, _mm_slli_si128::<8>(t1)));
        let t2 = _mm_clmulepi64_si128::<0x00>(_mm_srli_si128::<8>(t1), p);
        _mm_xor_si128(r, t2)
    }

    #[inline]
    #[target_feature(enable = "pclmulqdq,sse2")]
    unsafe fn mul(a: __m128i, b: __m128i) -> __m128i {
        let mut acc = zero();
        mul_acc(&mut acc, a, b);
        reduce(acc)
    }

    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(in crate::primitives::field) unsafe fn inner_product(a: &[F128], b: &[F128]) -> F128 {
        let mut acc = zero();
        for (x, y) in a.iter().zip(b) {
            mul_acc(&mut acc, load(x), load(y));
        }
        to_f128(reduce(acc))
    }

    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(in crate::primitives::field) unsafe fn mul_slices(a: &[F128], b: &[F128], out: &mut [F128]) {
        for ((x, y), o) in a.iter().zip(b).zip(out.iter_mut()) {
            *o = to_f128(mul(load(x), load(y)));
        }
    }

    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(in crate::primitives::field) unsafe fn and_sums(coeffs: &[F128], items: &[[F128; 3]]) -> (F128, F128) {
        let (mut s0, mut s1) = (zero(), zero());
        for (c, t) in coeffs.iter().zip(items) {
            let c = load(c);
            mul_acc(&mut s0, c, mul(load(&t[0]), load(&t[1])));
            mul_acc(&mut s1, c, load(&t[2]));
        }
        (to_f128(reduce(s0)), to_f128(reduce(s1)))
    }

    /// `acc·x ⊕ w`: both 64-bit lanes shift left by one; the low lane's top bit carries into
    /// the high lane and the high lane's top bit folds back as 0x87 (masks, no branch).
    #[inline(always)]
    unsafe fn mul_x_add(acc: __m128i, w: __m128i) -> __m128i {
        let tops = _mm_shuffle_epi32::<0x4E>(_mm_srli_epi64::<63>(acc));
        let fold = _mm_and_si128(_mm_sub_epi64(_mm_setzero_si128(), tops), _mm_set_epi64x(1, 0x87));
        _mm_xor_si128(_mm_xor_si128(_mm_slli_epi64::<1>(acc), fold), w)
    }

    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(in crate::primitives::field) unsafe fn and_row_sums(items: &[[F128; 3]]) -> (F128, F128) {
        let (mut s0, mut s1) = (_mm_setzero_si128(), _mm_setzero_si128());
        for t in items {
            s0 = mul_x_add(s0, mul(load(&t[0]), load(&t[1])));
            s1 = mul_x_add(s1, load(&t[2]));
        }
        (to_f128(s0), to_f128(s1))
    }

    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(in crate::primitives::field) unsafe fn product_sums(coeffs: &[F128], items: &[[F128; 5]]) -> (F128, F128) {
        let (mut s0, mut s1) = (zero(), zero());
        for (c, t) in coeffs.iter().zip(items) {
            let c = load(c);
            let (a, ma, b, mb, mc) = (load(&t[0]), load(&t[1]), load(&t[2]), load(&t[3]), load(&t[4]));
            let mut x = zero();
            mul_acc(&mut x, a, mb);
            mul_acc(&mut x, b, ma);
            let a1 = _mm_xor_si128(reduce(x), mc);
            mul_acc(&mut s0, c, mul(ma, mb));
            mul_acc(&mut s1, c, a1);
        }
        (to_f128(reduce(s0)), to_f128(reduce(s1)))
    }
}

impl F128 {
    /// (Σ c_i·x_i·y_i, Σ c_i·z_i) over triples [x, y, z]: the AND check's two sums.
    pub fn and_sums(coeffs: &[F128], items: &[[F128; 3]]) -> (F128, F128) {
        #[cfg(target_arch = "x86_64")]
        {
            if has_pclmul() {
                // SAFETY: the CPU supports pclmulqdq (checked just above).
                return unsafe { simd::and_sums(coeffs, items) };
            }
        }
        and_sums_portable(coeffs, items)
    }

    /// (Σ_j x^(L−1−j)·x_j·y_j, Σ_j x^(L−1−j)·z_j) over a row of L triples [x, y, z], by
    /// Horner's rule: the AND check's sums of one packed row (see `quicksilver::check`).
    pub(crate) fn and_row_sums(items: &[[F128; 3]]) -> (F128, F128) {
        #[cfg(target_arch = "x86_64")]
        {
            if has_pclmul() {
                // SAFETY: the CPU supports pclmulqdq (checked just above).
                return unsafe { simd::and_row_sums(items) };
            }
        }
        and_row_sums_portable(items)
    }

    /// (Σ c_i·M_a·M_b, Σ c_i·(a·M_b + b·M_a + M_c)) over [a, M_a, b, M_b, M_c]: the sums of the
    /// check of products of authenticated field elements.
    pub(crate) fn product_sums(coeffs: &[F128], items: &[[F128; 5]]) -> (F128, F128) {
        #[cfg(target_arch = "x86_64")]
        {
            if has_pclmul() {
                // SAFETY: the CPU supports pclmulqdq (checked just above).
                return unsafe { simd::product_sums(coeffs, items) };
            }
        }
        product_sums_portable(coeffs, items)
    }
}

/// `out[r][s] = Σ_i sets[s][i]·rows[r][i]`: many rows combined with a few fixed coefficient
/// vectors (the AES S-box's byte embeddings), in parallel. Built once per coefficient sets.
///
/// With PCLMULQDQ these are inner products. Without it (wasm) a GF(2^128) product costs about
/// 150 integer multiplies, so rows are instead combined 128 at a time as a GF(2)-linear map on
/// bit slices: the rows' bits are transposed into 128-bit words (word k of column i holds bit k
/// of every row's element i), and output bit j of set s is the XOR of the words where
/// `sets[s][i]·x^k` has bit j. The XORs go through tables of all XOR-combinations of 8
/// consecutive words (the "method of four Russians"), indexed by the constants' bits, so
/// memory accesses depend only on the public coefficients.
pub struct FixedCombinations<const S: usize> {
    sets: [[F128; 8]; S],
    /// The bit-sliced selection tables; `None` when the inner products have PCLMULQDQ.
    tables: Option<bitsliced::Tables<S>>,
}

impl<const S: usize> FixedCombinations<S> {
    pub fn new(sets: [[F128; 8]; S]) -> Self {
        #[cfg(target_arch = "x86_64")]
        let hardware = has_pclmul();
        #[cfg(not(target_arch = "x86_64"))]
        let hardware = false;
        let tables = (!hardware).then(|| bitsliced::Tables::new(&sets));
        FixedCombinations { sets, tables }
    }

    pub fn combine(&self, rows: &[[F128; 8]], out: &mut [[F128; S]]) {
        use rayon::prelude::*;
        debug_assert_eq!(rows.len(), out.len());
        match &self.tables {
            Some(tables) => {
                rows.par_chunks(128).zip(out.par_chunks_mut(128)).for_each(|(rows, out)| tables.combine(rows, out));
            }
            None => rows.par_chunks(1024).zip(out.par_chunks_mut(1024)).for_each(|(rows, out)| {
                for (o, r) in out.iter_mut().zip(rows) {
                    for (os, set) in o.iter_mut().zip(&self.sets) {
                        *os = F128::inner_product(set, r);
                    }
                }
            }),
        }
    }
}

/// Σ c_i·v_i over many terms whose coefficients c_i are public (an OT check's random χ) and
/// whose values v_i are secret. With PCLMULQDQ it is an inner product. Without it (wasm) no
/// field product is computed: writing `c_i = Σ_a c_i[a]·x^a`, the sum is Σ_a x^a·R_a with
/// `R_a = ⊕_{i: c_i[a] = 1} v_i`, a GF(2) subset sum per coefficient bit. R is accumulated eight
/// terms at a time: their coefficients are bit-transposed (byte a holds bit a of all eight),
/// and each half of that byte indexes a table of the 16 XOR-combinations of four of the
/// values (method of four Russians). That is about 36 word XORs per term instead of ~140
/// integer multiplies, and memory accesses that depend only on the public coefficients.
/// (Tables of 4 beat tables of 8 here: building 256 entries per 8 terms costs more than the
/// lookups it saves; measured 71 vs 39 M terms/s.)
pub(crate) struct PublicWeightedSum(WeightedSumState);

enum WeightedSumState {
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Clmul(F128),
    Sliced(Box<bitsliced::SubsetSums>),
}

impl Default for PublicWeightedSum {
    fn default() -> Self {
        Self::new()
    }
}

impl PublicWeightedSum {
    pub(crate) fn new() -> Self {
        #[cfg(target_arch = "x86_64")]
        if has_pclmul() {
            return PublicWeightedSum(WeightedSumState::Clmul(F128::ZERO));
        }
        Self::sliced()
    }

    pub(in crate::primitives::field) fn sliced() -> Self {
        PublicWeightedSum(WeightedSumState::Sliced(Box::default()))
    }

    /// Adds Σ coeffs_i·vals_i (over the shorter length).
    pub(crate) fn add(&mut self, coeffs: &[F128], vals: &[F128]) {
        match &mut self.0 {
            WeightedSumState::Clmul(acc) => *acc += F128::inner_product(coeffs, vals),
            WeightedSumState::Sliced(sums) => sums.add(coeffs, vals),
        }
    }

    pub(crate) fn finish(self) -> F128 {
        match self.0 {
            WeightedSumState::Clmul(acc) => acc,
            WeightedSumState::Sliced(sums) => sums.finish(),
        }
    }
}

/// The bit-sliced form of [`FixedCombinations`].
pub(in crate::primitives::field) mod bitsliced {
    use super::F128;
    use crate::primitives::transpose::transpose128;
    use zeroize::Zeroize;

    /// For set s, element i, byte g of the bit index k = 8g + b and output bit j: a byte whose bit
    /// b is bit j of sets[s][i]·x^k (which words of group g feed output bit j).
    pub(in crate::primitives::field) struct Tables<const S: usize> {
        select: Vec<[[[u8; 128]; 16]; 8]>,
    }

    impl<const S: usize> Tables<S> {
        pub(in crate::primitives::field) fn new(sets: &[[F128; 8]; S]) -> Self {
            let select = sets
                .iter()
                .map(|set| {
                    let mut t = [[[0u8; 128]; 16]; 8];
                    for (ti, c) in t.iter_mut().zip(set) {
                        let mut v = *c;
                        for k in 0..128 {
                            for (j, sel) in ti[k / 8].iter_mut().enumerate() {
                                *sel |= (((v.0 >> j) & 1) as u8) << (k % 8);
                            }
                            v = v.mul_x();
                        }
                    }
                    t
                })
                .collect();
            Tables { select }
        }

        /// Up to 128 rows.
        pub(in crate::primitives::field) fn combine(&self, rows: &[[F128; 8]], out: &mut [[F128; S]]) {
            debug_assert!(rows.len() <= 128 && out.len() == rows.len());
            let mut acc = [[Word::default(); 128]; S];
            let mut words = [0u128; 128];
            let mut combos = [Word::default(); 256];
            for i in 0..8 {
                words.iter_mut().for_each(|w| *w = 0);
                for (w, row) in words.iter_mut().zip(rows) {
                    *w = row[i].0;
                }
                transpose128(&mut words);
                for g in 0..16 {
                    for b in 0..8 {
                        let (w, h) = (Word::from_u128(words[8 * g + b]), 1usize << b);
                        for v in 0..h {
                            combos[h + v] = combos[v].xor(w);
                        }
                    }
                    for (acc_s, select) in acc.iter_mut().zip(&self.select) {
                        for (a, &sel) in acc_s.iter_mut().zip(select[i][g].iter()) {
                            *a = a.xor(combos[sel as usize]);
                        }
                    }
                }
            }
            for (s, acc_s) in acc.iter().enumerate() {
                for (w, a) in words.iter_mut().zip(acc_s.iter()) {
                    *w = a.to_u128();
                }
                transpose128(&mut words);
                for (o, w) in out.iter_mut().zip(words.iter()) {
                    o[s] = F128(*w);
                }
            }
            acc.zeroize();
            words.zeroize();
            combos.zeroize();
        }
    }

    /// The subset sums R_a of [`super::PublicWeightedSum`], one per coefficient bit a.
    pub(in crate::primitives::field) struct SubsetSums {
        sums: [Word; 128],
        /// Two tables of the XOR-combinations of four values (entry 0 stays zero).
        combos: [Word; 32],
    }

    impl Default for SubsetSums {
        fn default() -> Self {
            SubsetSums { sums: [Word::default(); 128], combos: [Word::default(); 32] }
        }
    }

    impl Drop for SubsetSums {
        fn drop(&mut self) {
            self.sums.zeroize();
            self.combos.zeroize();
        }
    }

    impl SubsetSums {
        pub(in crate::primitives::field) fn add(&mut self, coeffs: &[F128], vals: &[F128]) {
            let n = coeffs.len().min(vals.len());
            for (c8, v8) in coeffs[..n].chunks(8).zip(vals[..n].chunks(8)) {
                let mut c = [0u128; 8];
                for (d, s) in c.iter_mut().zip(c8) {
                    *d = s.0;
                }
                let select_bytes = transpose_bytes(c);
                let (lo4, hi4) = self.combos.split_at_mut(16);
                for (half, table) in [(0usize, lo4), (1, hi4)] {
                    for (b, v) in v8.iter().skip(4 * half).take(4).enumerate() {
                        let (w, h) = (Word::from_u128(v.0), 1usize << b);
                        let (lo, hi) = table.split_at_mut(h);
                        for (d, s) in hi[..h].iter_mut().zip(lo.iter()) {
                            *d = s.xor(w);
                        }
                    }
                }
                let (t0, t1) = self.combos.split_at(16);
                // a short chunk's missing coefficients are 0, so stale entries are never read
                for (p, sums) in self.sums.chunks_exact_mut(8).enumerate() {
                    for (b, s) in sums.iter_mut().enumerate() {
                        let i = select_bytes[b][p] as usize;
                        *s = s.xor(t0[i & 15]).xor(t1[i >> 4]);
                    }
                }
            }
        }

        pub(in crate::primitives::field) fn finish(&self) -> F128 {
            let (mut lo, mut hi) = (self.sums[0].to_u128(), 0u128);
            for (a, s) in self.sums.iter().enumerate().skip(1) {
                let s = s.to_u128();
                lo ^= s << a;
                hi ^= s >> (128 - a);
            }
            F128(super::reduce(lo, hi))
        }
    }

    /// The 8×8 bit transpose of every byte position of eight words: byte p of output word b has
    /// bit j = bit 8p + b of input word j (three swap-move layers).
    fn transpose_bytes(mut r: [u128; 8]) -> [[u8; 16]; 8] {
        const M: [u128; 3] = [
            0x5555_5555_5555_5555_5555_5555_5555_5555,
            0x3333_3333_3333_3333_3333_3333_3333_3333,
            0x0f0f_0f0f_0f0f_0f0f_0f0f_0f0f_0f0f_0f0f,
        ];
        for (layer, m) in M.iter().enumerate() {
            let d = 1usize << layer;
            for j in 0..8 {
                if j & d == 0 {
                    let t = ((r[j] >> d) ^ r[j + d]) & m;
                    r[j + d] ^= t;
                    r[j] ^= t << d;
                }
            }
        }
        r.map(u128::to_le_bytes)
    }

    /// A 128-bit word of the tables: a SIMD128 register in wasm (one instruction per XOR, not
    /// two 64-bit ones), a `u128` elsewhere.
    #[derive(Clone, Copy, Default)]
    struct Word(
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))] Simd,
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))] u128,
    );

    impl zeroize::DefaultIsZeroes for Word {}

    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    impl Word {
        #[inline(always)]
        fn from_u128(x: u128) -> Self {
            Word(x)
        }
        #[inline(always)]
        fn to_u128(self) -> u128 {
            self.0
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            Word(self.0 ^ o.0)
        }
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    use core::arch::wasm32::{u64x2, u64x2_extract_lane, v128, v128_xor};

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[derive(Clone, Copy)]
    struct Simd(v128);

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    impl Default for Simd {
        fn default() -> Self {
            Simd(u64x2(0, 0))
        }
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    impl Word {
        #[inline(always)]
        fn from_u128(x: u128) -> Self {
            Word(Simd(u64x2(x as u64, (x >> 64) as u64)))
        }
        #[inline(always)]
        fn to_u128(self) -> u128 {
            (u64x2_extract_lane::<0>(self.0 .0) as u128) | ((u64x2_extract_lane::<1>(self.0 .0) as u128) << 64)
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            Word(Simd(v128_xor(self.0 .0, o.0 .0)))
        }
    }
}
