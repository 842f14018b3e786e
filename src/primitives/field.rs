//! GF(2^128) arithmetic.
//!
//! Representation: polynomial basis, bit `i` of the `u128` is the coefficient of `x^i`,
//! reduction modulo `x^128 + x^7 + x^2 + x + 1`. This is *not* GCM's bit-reflected order;
//! conversions for GHASH live next to the GCM code.

use core::ops::{Add, AddAssign, BitXor, BitXorAssign, Mul, MulAssign};

/// An element of GF(2^128).
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash, Debug)]
#[repr(transparent)]
pub struct F128(pub u128);

impl F128 {
    pub const ZERO: F128 = F128(0);
    pub const ONE: F128 = F128(1);

    /// `1` if `b`, else `0`, without branching on `b`.
    #[inline]
    pub fn from_bit(b: bool) -> F128 {
        F128(b as u128)
    }

    /// `self` if `b`, else zero, without branching on `b`.
    #[inline]
    pub fn select(self, b: bool) -> F128 {
        F128(self.0 & (0u128.wrapping_sub(b as u128)))
    }

    pub fn to_le_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }

    pub fn from_le_bytes(b: [u8; 16]) -> F128 {
        F128(u128::from_le_bytes(b))
    }

    /// Field multiplication (constant time; PCLMULQDQ on x86_64 when available).
    #[inline]
    pub fn mul(self, rhs: F128) -> F128 {
        let (lo, hi) = clmul(self.0, rhs.0);
        F128(reduce(lo, hi))
    }

    /// Unreduced 256-bit product, for sums of products that are reduced once at the end.
    #[inline]
    pub fn mul_wide(self, rhs: F128) -> Wide {
        let (lo, hi) = clmul(self.0, rhs.0);
        Wide { lo, hi }
    }

    /// `self^2`.
    #[inline]
    pub fn square(self) -> F128 {
        self * self
    }

    /// `self^e` by square-and-multiply over a public exponent.
    pub fn pow(self, mut e: u128) -> F128 {
        let mut acc = F128::ONE;
        let mut base = self;
        while e != 0 {
            if e & 1 == 1 {
                acc *= base;
            }
            base = base.square();
            e >>= 1;
        }
        acc
    }

    /// Views raw `u128` elements as field elements, without a copy.
    pub fn from_u128_slice(v: &[u128]) -> &[F128] {
        // SAFETY: F128 is repr(transparent) over u128 (same size, alignment and validity), and
        // the returned slice borrows `v` for its whole lifetime.
        unsafe { core::slice::from_raw_parts(v.as_ptr() as *const F128, v.len()) }
    }

    /// `self·x`: a shift and a constant-time fold of the top bit.
    #[inline]
    pub fn mul_x(self) -> F128 {
        F128((self.0 << 1) ^ (0u128.wrapping_sub(self.0 >> 127) & 0x87))
    }

    /// `x^i` for `i < 128` (the polynomial-basis element).
    #[inline]
    pub fn x_pow(i: usize) -> F128 {
        F128(1u128 << i)
    }

    /// Σ a_i·b_i with a single reduction (over the shorter length).
    pub fn inner_product(a: &[F128], b: &[F128]) -> F128 {
        #[cfg(target_arch = "x86_64")]
        {
            if has_pclmul() {
                // SAFETY: the CPU supports pclmulqdq (checked just above).
                return unsafe { simd::inner_product(a, b) };
            }
        }
        let mut acc = Wide::ZERO;
        for (x, y) in a.iter().zip(b) {
            let (lo, hi) = clmul128(x.0, y.0);
            acc ^= Wide { lo, hi };
        }
        acc.reduce()
    }

    /// out_i = a_i · b_i (over the shortest length).
    pub fn mul_slices(a: &[F128], b: &[F128], out: &mut [F128]) {
        #[cfg(target_arch = "x86_64")]
        {
            if has_pclmul() {
                // SAFETY: the CPU supports pclmulqdq (checked just above).
                unsafe { simd::mul_slices(a, b, out) };
                return;
            }
        }
        for ((x, y), o) in a.iter().zip(b).zip(out.iter_mut()) {
            let (lo, hi) = clmul128(x.0, y.0);
            *o = F128(reduce(lo, hi));
        }
    }
}

/// The QuickSilver check's sums, fused so that no per-column copies or product vectors are
/// made (portable form; [`simd`] has the PCLMULQDQ one).
fn and_sums_portable(coeffs: &[F128], items: &[[F128; 3]]) -> (F128, F128) {
    weighted_sums_portable(coeffs, items, |t| (t[0] * t[1], t[2]))
}

/// (Σ c_i·f(item_i).0, Σ c_i·f(item_i).1) with the public c_i applied by the bit-sliced
/// [`PublicWeightedSum`] (no field product per coefficient), the f(item) staged 64 at a time and wiped.
fn weighted_sums_portable<T>(coeffs: &[F128], items: &[T], f: impl Fn(&T) -> (F128, F128)) -> (F128, F128) {
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

fn and_row_sums_portable(items: &[[F128; 3]]) -> (F128, F128) {
    let (mut s0, mut s1) = (F128::ZERO, F128::ZERO);
    for t in items {
        s0 = s0.mul_x() ^ (t[0] * t[1]);
        s1 = s1.mul_x() ^ t[2];
    }
    (s0, s1)
}

fn product_sums_portable(coeffs: &[F128], items: &[[F128; 5]]) -> (F128, F128) {
    weighted_sums_portable(coeffs, items, |&[a, ma, b, mb, mc]| {
        (ma * mb, (a.mul_wide(mb) ^ b.mul_wide(ma)).reduce() ^ mc)
    })
}

/// Slice kernels with PCLMULQDQ that keep operands and accumulators in XMM registers (the
/// scalar [`clmul128_pclmul`] round-trips through general registers, which costs more than
/// the multiplies) and reduce with three more carry-less multiplies by 0x87.
#[cfg(target_arch = "x86_64")]
mod simd {
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
    pub(super) unsafe fn inner_product(a: &[F128], b: &[F128]) -> F128 {
        let mut acc = zero();
        for (x, y) in a.iter().zip(b) {
            mul_acc(&mut acc, load(x), load(y));
        }
        to_f128(reduce(acc))
    }

    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(super) unsafe fn mul_slices(a: &[F128], b: &[F128], out: &mut [F128]) {
        for ((x, y), o) in a.iter().zip(b).zip(out.iter_mut()) {
            *o = to_f128(mul(load(x), load(y)));
        }
    }

    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(super) unsafe fn and_sums(coeffs: &[F128], items: &[[F128; 3]]) -> (F128, F128) {
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
    pub(super) unsafe fn and_row_sums(items: &[[F128; 3]]) -> (F128, F128) {
        let (mut s0, mut s1) = (_mm_setzero_si128(), _mm_setzero_si128());
        for t in items {
            s0 = mul_x_add(s0, mul(load(&t[0]), load(&t[1])));
            s1 = mul_x_add(s1, load(&t[2]));
        }
        (to_f128(s0), to_f128(s1))
    }

    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(super) unsafe fn product_sums(coeffs: &[F128], items: &[[F128; 5]]) -> (F128, F128) {
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
    pub fn and_row_sums(items: &[[F128; 3]]) -> (F128, F128) {
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
    pub fn product_sums(coeffs: &[F128], items: &[[F128; 5]]) -> (F128, F128) {
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
pub struct PublicWeightedSum(WeightedSumState);

enum WeightedSumState {
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Clmul(F128),
    Sliced(Box<bitsliced::SubsetSums>),
}

impl PublicWeightedSum {
    pub fn new() -> Self {
        #[cfg(target_arch = "x86_64")]
        if has_pclmul() {
            return PublicWeightedSum(WeightedSumState::Clmul(F128::ZERO));
        }
        Self::sliced()
    }

    fn sliced() -> Self {
        PublicWeightedSum(WeightedSumState::Sliced(Box::default()))
    }

    /// Adds Σ coeffs_i·vals_i (over the shorter length).
    pub fn add(&mut self, coeffs: &[F128], vals: &[F128]) {
        match &mut self.0 {
            WeightedSumState::Clmul(acc) => *acc += F128::inner_product(coeffs, vals),
            WeightedSumState::Sliced(sums) => sums.add(coeffs, vals),
        }
    }

    pub fn finish(self) -> F128 {
        match self.0 {
            WeightedSumState::Clmul(acc) => acc,
            WeightedSumState::Sliced(sums) => sums.finish(),
        }
    }
}

/// The bit-sliced form of [`FixedCombinations`].
mod bitsliced {
    use super::F128;
    use crate::primitives::transpose::transpose128;
    use zeroize::Zeroize;

    /// For set s, element i, byte g of the bit index k = 8g + b and output bit j: a byte whose bit
    /// b is bit j of sets[s][i]·x^k (which words of group g feed output bit j).
    pub(super) struct Tables<const S: usize> {
        select: Vec<[[[u8; 128]; 16]; 8]>,
    }

    impl<const S: usize> Tables<S> {
        pub(super) fn new(sets: &[[F128; 8]; S]) -> Self {
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
        pub(super) fn combine(&self, rows: &[[F128; 8]], out: &mut [[F128; S]]) {
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
    pub(super) struct SubsetSums {
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
        pub(super) fn add(&mut self, coeffs: &[F128], vals: &[F128]) {
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

        pub(super) fn finish(&self) -> F128 {
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

/// An unreduced 256-bit carry-less product (or a XOR-sum of them).
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub struct Wide {
    pub lo: u128,
    pub hi: u128,
}

impl Wide {
    pub const ZERO: Wide = Wide { lo: 0, hi: 0 };
    /// Reduce modulo the field polynomial.
    #[inline]
    pub fn reduce(self) -> F128 {
        F128(reduce(self.lo, self.hi))
    }
}

impl BitXor for Wide {
    type Output = Wide;
    #[inline]
    fn bitxor(self, r: Wide) -> Wide {
        Wide { lo: self.lo ^ r.lo, hi: self.hi ^ r.hi }
    }
}
impl BitXorAssign for Wide {
    #[inline]
    fn bitxor_assign(&mut self, r: Wide) {
        self.lo ^= r.lo;
        self.hi ^= r.hi;
    }
}

impl zeroize::DefaultIsZeroes for F128 {}

/// Whether the PCLMULQDQ kernels may run. Building with `--cfg tlsproof_portable` turns them
/// off (and uses wasm32's 32-bit multiplies), so the browser's arithmetic can be profiled
/// natively, e.g. with `perf` (`crate::primitives::prp` then runs its bit-sliced AES too).
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_pclmul() -> bool {
    !cfg!(tlsproof_portable) && std::arch::is_x86_feature_detected!("pclmulqdq")
}

/// 128×128 → 256-bit carry-less multiply: hardware on x86_64 with PCLMULQDQ, else portable.
#[inline]
fn clmul(a: u128, b: u128) -> (u128, u128) {
    #[cfg(target_arch = "x86_64")]
    {
        if has_pclmul() {
            // SAFETY: the CPU supports pclmulqdq (checked just above).
            return unsafe { clmul128_pclmul(a, b) };
        }
    }
    clmul128(a, b)
}

#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "pclmulqdq,sse2")]
unsafe fn clmul128_pclmul(a: u128, b: u128) -> (u128, u128) {
    use core::arch::x86_64::*;
    let av = _mm_set_epi64x((a >> 64) as i64, a as i64);
    let bv = _mm_set_epi64x((b >> 64) as i64, b as i64);
    let z0 = _mm_clmulepi64_si128(av, bv, 0x00);
    let z2 = _mm_clmulepi64_si128(av, bv, 0x11);
    let m1 = _mm_clmulepi64_si128(av, bv, 0x10);
    let m2 = _mm_clmulepi64_si128(av, bv, 0x01);
    let z1 = _mm_xor_si128(m1, m2);
    let to_u128 = |v: __m128i| -> u128 {
        let mut out = [0u8; 16];
        _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, v);
        u128::from_le_bytes(out)
    };
    let z0 = to_u128(z0);
    let z1 = to_u128(z1);
    let z2 = to_u128(z2);
    (z0 ^ (z1 << 64), z2 ^ (z1 >> 64))
}

/// 128×128 → 256-bit carry-less multiply, portable and branch-free.
fn clmul128(a: u128, b: u128) -> (u128, u128) {
    let a0 = a as u64;
    let a1 = (a >> 64) as u64;
    let b0 = b as u64;
    let b1 = (b >> 64) as u64;
    let z0 = clmul64(a0, b0);
    let z2 = clmul64(a1, b1);
    let z1 = clmul64(a0 ^ a1, b0 ^ b1) ^ z0 ^ z2;
    let lo = z0 ^ (z1 << 64);
    let hi = z2 ^ (z1 >> 64);
    (lo, hi)
}

/// 64×64 → 128-bit carry-less multiply: on 32-bit targets (wasm32, where u128 products are
/// emulated) by Karatsuba over 32-bit pieces, elsewhere with native 64×64 → 128 products.
#[inline]
fn clmul64(a: u64, b: u64) -> u128 {
    #[cfg(all(target_pointer_width = "64", not(tlsproof_portable)))]
    {
        clmul64_wide(a, b)
    }
    #[cfg(any(not(target_pointer_width = "64"), tlsproof_portable))]
    {
        clmul64_via32(a, b)
    }
}

/// 32×32 → 64-bit carry-less multiply: on SIMD128 in wasm (1.4× the products per second
/// of the scalar form in Chromium), scalar elsewhere.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn clmul32(a: u32, b: u32) -> u64 {
    clmul32_simd128(a, b)
}

/// [`clmul32_scalar`] on SIMD128: the four classes of `a` sit in the four 32-bit lanes, and
/// for class c of the product the lanes of `b` are rotated so that lane i holds class c − i;
/// two widening multiplies (lanes 0–1, 2–3 → 64-bit) then give the four integer products.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn clmul32_simd128(a: u32, b: u32) -> u64 {
    use core::arch::wasm32::*;
    let m32 = u32x4(0x1111_1111, 0x2222_2222, 0x4444_4444, 0x8888_8888);
    let x = v128_and(u32x4_splat(a), m32);
    let y = v128_and(u32x4_splat(b), m32);
    #[inline(always)]
    fn class(x: v128, yc: v128, mask: u64) -> v128 {
        let p = v128_xor(u64x2_extmul_low_u32x4(x, yc), u64x2_extmul_high_u32x4(x, yc));
        v128_and(p, u64x2_splat(mask))
    }
    let z = v128_xor(
        v128_xor(
            class(x, i32x4_shuffle::<0, 3, 2, 1>(y, y), 0x1111_1111_1111_1111),
            class(x, i32x4_shuffle::<1, 0, 3, 2>(y, y), 0x2222_2222_2222_2222),
        ),
        v128_xor(
            class(x, i32x4_shuffle::<2, 1, 0, 3>(y, y), 0x4444_4444_4444_4444),
            class(x, i32x4_shuffle::<3, 2, 1, 0>(y, y), 0x8888_8888_8888_8888),
        ),
    );
    u64x2_extract_lane::<0>(z) ^ u64x2_extract_lane::<1>(z)
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[cfg_attr(all(target_pointer_width = "64", not(tlsproof_portable)), allow(dead_code))]
#[inline(always)]
fn clmul32(a: u32, b: u32) -> u64 {
    clmul32_scalar(a, b)
}

/// 32×32 → 64-bit carry-less multiply with 16 integer products on operands split into the
/// four residue classes mod 4 (at most 8 ones summed per position: no carry into the class).
fn clmul32_scalar(a: u32, b: u32) -> u64 {
    const M32: [u32; 4] = [0x1111_1111, 0x2222_2222, 0x4444_4444, 0x8888_8888];
    const M64: [u64; 4] =
        [0x1111_1111_1111_1111, 0x2222_2222_2222_2222, 0x4444_4444_4444_4444, 0x8888_8888_8888_8888];
    let x = [a & M32[0], a & M32[1], a & M32[2], a & M32[3]];
    let y = [b & M32[0], b & M32[1], b & M32[2], b & M32[3]];
    let mut r = 0u64;
    for c in 0..4 {
        let mut z = 0u64;
        for i in 0..4 {
            z ^= (x[i] as u64).wrapping_mul(y[(c + 4 - i) % 4] as u64);
        }
        r |= z & M64[c];
    }
    r
}

#[cfg_attr(all(target_pointer_width = "64", not(tlsproof_portable)), allow(dead_code))]
fn clmul64_via32(a: u64, b: u64) -> u128 {
    let (a0, a1, b0, b1) = (a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32);
    let z0 = clmul32(a0, b0) as u128;
    let z2 = clmul32(a1, b1) as u128;
    let z1 = clmul32(a0 ^ a1, b0 ^ b1) as u128 ^ z0 ^ z2;
    z0 ^ (z1 << 32) ^ (z2 << 64)
}

/// 64×64 → 128-bit carry-less multiply with integer multiplies on "holey" operands:
/// the bits are split into five residue classes mod 5, so each integer product has at most
/// 13 ones summed per position, which never carries into a position of the same class.
#[cfg_attr(any(not(target_pointer_width = "64"), tlsproof_portable), allow(dead_code))]
fn clmul64_wide(a: u64, b: u64) -> u128 {
    const M64: [u64; 5] = {
        let mut m = [0u64; 5];
        let mut i = 0;
        while i < 64 {
            m[i % 5] |= 1u64 << i;
            i += 1;
        }
        m
    };
    const M128: [u128; 5] = {
        let mut m = [0u128; 5];
        let mut i = 0;
        while i < 128 {
            m[i % 5] |= 1u128 << i;
            i += 1;
        }
        m
    };
    let xa = [a & M64[0], a & M64[1], a & M64[2], a & M64[3], a & M64[4]];
    let yb = [b & M64[0], b & M64[1], b & M64[2], b & M64[3], b & M64[4]];
    let mut r = 0u128;
    for c in 0..5 {
        let mut z = 0u128;
        for i in 0..5 {
            let j = (c + 5 - i) % 5;
            z ^= (xa[i] as u128).wrapping_mul(yb[j] as u128);
        }
        r |= z & M128[c];
    }
    r
}

/// The target's 32- and 64-bit carry-less multiplies against the bit-by-bit definition on
/// edge and pseudo-random operands (the browser tests run this on the SIMD128 form).
#[doc(hidden)]
pub fn clmul_known_answers() -> Result<(), String> {
    let reference = clmul64_reference;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut cases = vec![(0, 0), (u64::MAX, u64::MAX), (1, u64::MAX), (0x8000_0000_0000_0000, 3), (0xffff_ffff, 0xffff_ffff)];
    cases.extend((0..2000).map(|_| (next(), next())));
    for (a, b) in cases {
        let (a32, b32) = (a as u32, b as u32);
        if clmul32(a32, b32) as u128 != reference(a32 as u64, b32 as u64) || clmul32(a32, b32) != clmul32_scalar(a32, b32) {
            return Err(format!("clmul32({a32:#x}, {b32:#x})"));
        }
        if clmul64_via32(a, b) != reference(a, b) {
            return Err(format!("clmul64_via32({a:#x}, {b:#x})"));
        }
    }
    Ok(())
}

/// The carry-less product by its definition, bit by bit (the reference of the known answers).
fn clmul64_reference(a: u64, b: u64) -> u128 {
    let mut r: u128 = 0;
    let a = a as u128;
    for i in 0..64 {
        let mask = 0u128.wrapping_sub(((b >> i) & 1) as u128);
        r ^= (a << i) & mask;
    }
    r
}

/// Reduce a 256-bit product modulo x^128 + x^7 + x^2 + x + 1.
fn reduce(lo: u128, hi: u128) -> u128 {
    // x^128 = x^7 + x^2 + x + 1
    let t = hi ^ (hi >> 127) ^ (hi >> 126) ^ (hi >> 121);
    lo ^ t ^ (t << 1) ^ (t << 2) ^ (t << 7)
}

impl BitXor for F128 {
    type Output = F128;
    #[inline]
    fn bitxor(self, r: F128) -> F128 {
        F128(self.0 ^ r.0)
    }
}
impl BitXorAssign for F128 {
    #[inline]
    fn bitxor_assign(&mut self, r: F128) {
        self.0 ^= r.0
    }
}
impl Add for F128 {
    type Output = F128;
    #[inline]
    fn add(self, r: F128) -> F128 {
        self ^ r
    }
}
/// Subtraction is addition in characteristic 2.
impl core::ops::Sub for F128 {
    type Output = F128;
    #[inline]
    fn sub(self, rhs: F128) -> F128 {
        self + rhs
    }
}

/// Every element is its own negative in characteristic 2.
impl core::ops::Neg for F128 {
    type Output = F128;
    #[inline]
    fn neg(self) -> F128 {
        self
    }
}

impl AddAssign for F128 {
    #[inline]
    fn add_assign(&mut self, r: F128) {
        self.0 ^= r.0
    }
}
impl Mul for F128 {
    type Output = F128;
    #[inline]
    fn mul(self, r: F128) -> F128 {
        F128::mul(self, r)
    }
}
impl MulAssign for F128 {
    #[inline]
    fn mul_assign(&mut self, r: F128) {
        *self = F128::mul(*self, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_times_x127_wraps_to_modulus_tail() {
        // x * x^127 = x^128 = x^7 + x^2 + x + 1
        assert_eq!(F128(2) * F128(1 << 127), F128(0x87));
    }

    #[test]
    fn portable_and_hardware_multiplies_agree() {
        use rand::Rng;
        let mut rng = rand::rng();
        for _ in 0..2000 {
            let (a, b): (u64, u64) = (rng.random(), rng.random());
            assert_eq!(clmul64_wide(a, b), clmul64_reference(a, b));
            assert_eq!(clmul64_via32(a, b), clmul64_reference(a, b));
            let (x, y): (u128, u128) = (rng.random(), rng.random());
            assert_eq!(clmul(x, y), clmul128(x, y));
        }
        for (a, b) in [(u64::MAX, u64::MAX), (u64::MAX, 1), (0, u64::MAX)] {
            assert_eq!(clmul64_wide(a, b), clmul64_reference(a, b));
            assert_eq!(clmul64_via32(a, b), clmul64_reference(a, b));
        }
        super::clmul_known_answers().unwrap();
    }

    #[test]
    fn fused_check_sums_match_the_definition() {
        use rand::Rng;
        let mut rng = rand::rng();
        let r = |rng: &mut rand::rngs::ThreadRng| F128(rng.random());
        let n = 137; // crosses the portable kernels' 64-item stages
        let coeffs: Vec<F128> = (0..n).map(|_| r(&mut rng)).collect();
        let and: Vec<[F128; 3]> = (0..n).map(|_| [r(&mut rng), r(&mut rng), r(&mut rng)]).collect();
        let prod: Vec<[F128; 5]> = (0..n).map(|_| [0; 5].map(|_: i32| r(&mut rng))).collect();
        let (mut e0, mut e1) = (F128::ZERO, F128::ZERO);
        for (c, t) in coeffs.iter().zip(&and) {
            e0 += *c * t[0] * t[1];
            e1 += *c * t[2];
        }
        assert_eq!(F128::and_sums(&coeffs, &and), (e0, e1));
        assert_eq!(and_sums_portable(&coeffs, &and), (e0, e1));
        let (mut e0, mut e1) = (F128::ZERO, F128::ZERO);
        for (c, [a, ma, b, mb, mc]) in coeffs.iter().zip(&prod) {
            e0 += *c * *ma * *mb;
            e1 += *c * (*a * *mb + *b * *ma + *mc);
        }
        assert_eq!(F128::product_sums(&coeffs, &prod), (e0, e1));
        assert_eq!(product_sums_portable(&coeffs, &prod), (e0, e1));
    }

    #[test]
    fn and_row_sums_weight_the_row_by_descending_powers_of_x() {
        use rand::Rng;
        let mut rng = rand::rng();
        let r = |rng: &mut rand::rngs::ThreadRng| F128(rng.random());
        for len in [0, 1, 2, 77, 128] {
            let mut row: Vec<[F128; 3]> = (0..len).map(|_| [r(&mut rng), r(&mut rng), r(&mut rng)]).collect();
            if let Some(t) = row.first_mut() {
                // Top bits set, so the Horner steps fold through the modulus.
                *t = [F128(u128::MAX), F128(1 << 127), F128(u128::MAX)];
            }
            let (mut e0, mut e1) = (F128::ZERO, F128::ZERO);
            for (j, t) in row.iter().enumerate() {
                let w = F128::x_pow(1).pow((len - 1 - j) as u128);
                e0 += w * t[0] * t[1];
                e1 += w * t[2];
            }
            assert_eq!(F128::and_row_sums(&row), (e0, e1), "len {len}");
            assert_eq!(and_row_sums_portable(&row), (e0, e1), "len {len}");
        }
        assert_eq!(F128(1 << 127).mul_x(), F128(0x87));
    }

    #[test]
    fn fixed_combinations_match_inner_products_on_both_paths() {
        use rand::Rng;
        let mut rng = rand::rng();
        let r = |rng: &mut rand::rngs::ThreadRng| F128(rng.random());
        let sets: [[F128; 8]; 2] = [[0; 8].map(|_: i32| r(&mut rng)), [0; 8].map(|_: i32| r(&mut rng))];
        for n in [0usize, 1, 5, 128, 129, 300] {
            let mut rows: Vec<[F128; 8]> = (0..n).map(|_| [0; 8].map(|_: i32| r(&mut rng))).collect();
            if let Some(row) = rows.first_mut() {
                *row = [F128(u128::MAX); 8];
            }
            let want: Vec<[F128; 2]> =
                rows.iter().map(|row| [F128::inner_product(&sets[0], row), F128::inner_product(&sets[1], row)]).collect();
            let mut got = vec![[F128::ZERO; 2]; n];
            FixedCombinations::new(sets).combine(&rows, &mut got);
            assert_eq!(got, want, "n = {n}");
            let mut sliced = vec![[F128::ZERO; 2]; n];
            let tables = bitsliced::Tables::new(&sets);
            for (rows, out) in rows.chunks(128).zip(sliced.chunks_mut(128)) {
                tables.combine(rows, out);
            }
            assert_eq!(sliced, want, "bit-sliced, n = {n}");
        }
    }

    #[test]
    fn public_weighted_sums_match_the_naive_sum_on_both_paths() {
        use rand::Rng;
        let mut rng = rand::rng();
        let naive = |c: &[F128], v: &[F128]| c.iter().zip(v).fold(F128::ZERO, |acc, (c, v)| acc + c.mul(*v));
        for n in [0usize, 1, 7, 8, 9, 64, 100, 1000] {
            let mut c: Vec<F128> = (0..n).map(|_| F128(rng.random())).collect();
            let mut v: Vec<F128> = (0..n).map(|_| F128(rng.random())).collect();
            if n > 2 {
                // extreme words: every coefficient bit selects, every bit of the value is set
                c[0] = F128(u128::MAX);
                v[1] = F128(u128::MAX);
                c[2] = F128(1 << 127);
            }
            let want = naive(&c, &v);
            // fed in uneven pieces, so short (padded) groups of eight occur mid-stream
            for path in [PublicWeightedSum::new(), PublicWeightedSum::sliced()] {
                let mut sum = path;
                let mut at = 0;
                for step in [3usize, 8, 13, 1, 64].iter().cycle() {
                    if at >= n {
                        break;
                    }
                    let end = (at + step).min(n);
                    sum.add(&c[at..end], &v[at..end]);
                    at = end;
                }
                assert_eq!(sum.finish(), want, "n = {n}");
            }
        }
        // the extra elements of the longer slice are ignored
        let mut sum = PublicWeightedSum::sliced();
        sum.add(&[F128::ONE; 3], &[F128(5), F128(6)]);
        assert_eq!(sum.finish(), F128(3));
    }

    #[test]
    fn inner_product_matches_naive_sum() {
        use rand::Rng;
        let mut rng = rand::rng();
        let a: Vec<F128> = (0..50).map(|_| F128(rng.random())).collect();
        let b: Vec<F128> = (0..50).map(|_| F128(rng.random())).collect();
        let naive = a.iter().zip(&b).fold(F128::ZERO, |acc, (x, y)| acc + *x * *y);
        assert_eq!(F128::inner_product(&a, &b), naive);
        let mut prods = vec![F128::ZERO; 50];
        F128::mul_slices(&a, &b, &mut prods);
        assert!(prods.iter().zip(a.iter().zip(&b)).all(|(p, (x, y))| *p == *x * *y));
        // Multiplicative group order is 2^128 - 1.
        assert_eq!(a[0].pow(u128::MAX), F128::ONE);
        // extremes for the folds of the reduction (top bits set, all ones)
        let ext = [u128::MAX, 1 << 127, (1 << 127) | 1, u64::MAX as u128, !(u64::MAX as u128), 0x87 << 120];
        for &x in &ext {
            for &y in &ext {
                let (x, y) = (F128(x), F128(y));
                let (lo, hi) = clmul128(x.0, y.0);
                let expect = F128(reduce(lo, hi));
                let mut p = [F128::ZERO];
                F128::mul_slices(&[x], &[y], &mut p);
                assert_eq!(p[0], expect);
                assert_eq!(F128::inner_product(&[x], &[y]), expect);
                assert_eq!(F128::inner_product(&[x, y], &[y, x]), F128::ZERO);
            }
        }
    }

    #[test]
    fn field_laws_on_random_elements() {
        use rand::Rng;
        let mut rng = rand::rng();
        for _ in 0..200 {
            let (a, b, c) = (F128(rng.random()), F128(rng.random()), F128(rng.random()));
            assert_eq!(a * b, b * a);
            assert_eq!((a * b) * c, a * (b * c));
            assert_eq!(a * (b + c), a * b + a * c);
            assert_eq!(a * F128::ONE, a);
        }
    }
}
