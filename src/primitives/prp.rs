//! AES-128 as the engine uses it: many blocks under one key, for the OT extensions' PRGs
//! (KOS/SoftSpokenOT columns, consistency-check coefficients, Ferret's LPN matrix) and the
//! fixed-key hashes of the GGM and half trees.
//!
//! Natively this is VAES where the CPU has it (AVX-512: four blocks an instruction, module
//! `vaes`), else the `aes` crate, which uses AES-NI when the CPU has it. wasm has no AES
//! instruction, and the `aes` crate's wasm32 path is its 32-bit fixsliced code: 5.3 M blocks/s
//! per thread in Chromium against 680 M natively on AES-NI (`tlsproof bench zk`), which made
//! AES the largest cost of COT generation in the browser. There, [`Aes128`] is a bitsliced
//! implementation on SIMD128 registers that encrypts 8 blocks per pass:
//! * register b holds bit b of all 16 state bytes of all 8 blocks (its byte i, bit j is bit b of
//!   byte i of block j), so SubBytes is one boolean circuit evaluated on whole registers (the
//!   127-gate Boyar–Peralta circuit of [`crate::primitives::sbox_circuit`]), ShiftRows is a
//!   byte shuffle, and MixColumns 32-bit lane rotations and XORs;
//! * blocks enter and leave through an 8×8 bit transpose within every byte (three rounds of
//!   masked swaps);
//! * the S-box's constant 0x63 is folded into the next round key (ShiftRows and MixColumns map
//!   a state of all-0x63 bytes to itself);
//! * nothing is indexed or branched on by data, so it runs in constant time, key schedule
//!   included.
//!
//! The bitsliced core is generic over its register type and tested natively, on a portable
//! register, against the `aes` crate; so is the VAES code, on every batch length.

use aes::cipher::{consts::U16, generic_array::GenericArray};

/// One AES block.
pub type Block = GenericArray<u8, U16>;

/// AES-128 encryption under one expanded key (the subset of `aes::Aes128`'s API the engine
/// uses). Round keys are wiped on drop.
pub struct Aes128 {
    inner: Inner,
}

/// Natively: VAES where the CPU has it (x86_64), else the `aes` crate.
#[cfg(not(any(
    all(target_arch = "wasm32", target_feature = "simd128"),
    all(tlsproof_portable, target_arch = "x86_64")
)))]
type Inner = native::Cipher;
/// In wasm, and natively under `--cfg tlsproof_portable` (which profiles the browser's costs
/// with `perf`, like the portable field arithmetic): the bitsliced code.
#[cfg(any(all(target_arch = "wasm32", target_feature = "simd128"), all(tlsproof_portable, target_arch = "x86_64")))]
type Inner = bitsliced::Cipher<simd::Reg>;

/// σ(x_hi ‖ x_lo) = (x_hi ⊕ x_lo) ‖ x_hi: the linear orthomorphism that turns a fixed-key
/// permutation into a (circular) correlation-robust hash, x ↦ π(σ(x)) ⊕ σ(x) (Guo–Katz–Wang–Yu,
/// IEEE S&P 2020); Ferret's GGM trees and the garbled circuits' gate hash use it.
#[inline]
pub(crate) fn sigma(x: u128) -> u128 {
    let hi = x >> 64;
    let lo = x & u64::MAX as u128;
    ((hi ^ lo) << 64) | hi
}

/// Whether AES runs on a hardware instruction here (AES-NI natively on x86_64): callers may then
/// recompute AES outputs rather than keep them in memory.
pub(crate) fn is_hardware() -> bool {
    #[cfg(all(target_arch = "x86_64", not(tlsproof_portable)))]
    {
        std::arch::is_x86_feature_detected!("aes")
    }
    #[cfg(not(all(target_arch = "x86_64", not(tlsproof_portable))))]
    {
        false
    }
}

impl Aes128 {
    pub fn new(key: &Block) -> Self {
        Aes128 { inner: Inner::new(key.as_ref()) }
    }

    #[inline]
    pub fn encrypt_blocks(&self, blocks: &mut [Block]) {
        self.inner.encrypt_blocks(blocks);
    }

    #[inline]
    pub fn encrypt_block(&self, block: &mut Block) {
        self.inner.encrypt_blocks(core::slice::from_mut(block));
    }
}

/// The native choice, made once per key from what the CPU has.
#[allow(dead_code)]
mod native {
    use super::Block;

    pub(crate) enum Cipher {
        #[cfg(target_arch = "x86_64")]
        Vaes(super::vaes::Cipher),
        /// Boxed: the `aes` crate's key holds both its AES-NI and its software round keys.
        Crate(Box<super::crate_backend::Cipher>),
    }

    impl Cipher {
        pub(crate) fn new(key: &[u8; 16]) -> Self {
            #[cfg(target_arch = "x86_64")]
            if let Some(c) = super::vaes::Cipher::new(key) {
                return Cipher::Vaes(c);
            }
            Cipher::Crate(Box::new(super::crate_backend::Cipher::new(key)))
        }

        #[inline]
        pub(crate) fn encrypt_blocks(&self, blocks: &mut [Block]) {
            match self {
                #[cfg(target_arch = "x86_64")]
                Cipher::Vaes(c) => c.encrypt_blocks(blocks),
                Cipher::Crate(c) => c.encrypt_blocks(blocks),
            }
        }
    }
}

/// AES-128 on VAES (AVX-512): four blocks per instruction, where AES-NI does one. The `aes`
/// crate 0.8 has no VAES code; 0.9's runs only whole batches of 64 blocks and the rest one
/// block at a time, while the engine's calls are 6 to 96 blocks (a garbled gate's hashes, an
/// S-box layer's). Here a call runs 32 blocks a pass, then 4, and the last 1–3 through a
/// masked load and store, so every block goes four to an instruction. 2.0× the `aes` crate's
/// AES-NI throughput at 48 or 96 blocks a call on this project's Intel Xeon (0.85 against
/// 1.70 ns a block), 1.6× at 12. Constant time: AES instructions only, no data-dependent
/// branch or index.
#[cfg(target_arch = "x86_64")]
#[allow(dead_code)]
mod vaes {
    use super::Block;
    use core::arch::x86_64::*;
    use zeroize::Zeroizing;

    /// Blocks a pass of the main loop (8 registers of 4).
    const PASS: usize = 32;

    /// Round keys 0..=10, each as its 16 bytes read little-endian.
    pub(crate) struct Cipher {
        rk: Zeroizing<[u128; 11]>,
    }

    /// Whether this CPU runs [`Cipher`].
    pub(crate) fn available() -> bool {
        std::arch::is_x86_feature_detected!("vaes")
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("aes")
    }

    impl Cipher {
        /// The expanded key, or `None` where the CPU lacks VAES or AVX-512.
        pub(crate) fn new(key: &[u8; 16]) -> Option<Self> {
            if !available() {
                return None;
            }
            let mut rk = Zeroizing::new([0u128; 11]);
            // SAFETY: `available` checked AES-NI.
            unsafe { expand(key, &mut rk) };
            Some(Cipher { rk })
        }

        #[inline]
        pub(crate) fn encrypt_blocks(&self, blocks: &mut [Block]) {
            // SAFETY: `new` checked VAES, AVX-512F and AES-NI.
            unsafe { encrypt(&self.rk, blocks) }
        }
    }

    /// The AES-128 key schedule on AESKEYGENASSIST (FIPS-197 §5.2).
    #[target_feature(enable = "aes")]
    fn expand(key: &[u8; 16], rk: &mut [u128; 11]) {
        const RCON: [i32; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];
        // SAFETY: unaligned loads and stores of 16 bytes within `key` and `rk`.
        unsafe {
            let mut k = _mm_loadu_si128(key.as_ptr().cast());
            _mm_storeu_si128(rk.as_mut_ptr().cast(), k);
            for (r, &rcon) in RCON.iter().enumerate() {
                // the immediate must be a constant: one arm per round
                let assist = match rcon {
                    0x01 => _mm_aeskeygenassist_si128::<0x01>(k),
                    0x02 => _mm_aeskeygenassist_si128::<0x02>(k),
                    0x04 => _mm_aeskeygenassist_si128::<0x04>(k),
                    0x08 => _mm_aeskeygenassist_si128::<0x08>(k),
                    0x10 => _mm_aeskeygenassist_si128::<0x10>(k),
                    0x20 => _mm_aeskeygenassist_si128::<0x20>(k),
                    0x40 => _mm_aeskeygenassist_si128::<0x40>(k),
                    0x80 => _mm_aeskeygenassist_si128::<0x80>(k),
                    0x1b => _mm_aeskeygenassist_si128::<0x1b>(k),
                    _ => _mm_aeskeygenassist_si128::<0x36>(k),
                };
                // w[i] = w[i-1] ⊕ w[i-4] for the four words, the first with SubWord(RotWord) ⊕ rcon
                let t = _mm_shuffle_epi32::<0xff>(assist);
                k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
                k = _mm_xor_si128(k, _mm_slli_si128::<8>(k));
                k = _mm_xor_si128(k, t);
                _mm_storeu_si128(rk.as_mut_ptr().add(r + 1).cast(), k);
            }
        }
    }

    /// Ten rounds on four blocks.
    #[inline]
    #[target_feature(enable = "avx512f,vaes")]
    fn rounds(x: __m512i, k: &[__m512i; 11]) -> __m512i {
        let mut x = _mm512_xor_si512(x, k[0]);
        for kr in &k[1..10] {
            x = _mm512_aesenc_epi128(x, *kr);
        }
        _mm512_aesenclast_epi128(x, k[10])
    }

    #[target_feature(enable = "avx512f,vaes")]
    fn encrypt(rk: &[u128; 11], blocks: &mut [Block]) {
        // SAFETY: every load and store is of whole blocks inside `blocks` (the masked ones of
        // the 2·rem 64-bit lanes that the last rem blocks fill); `Block` is 16 bytes, align 1,
        // so a slice of them is contiguous and unaligned accesses are what is used.
        unsafe {
            let k: [__m512i; 11] =
                core::array::from_fn(|r| _mm512_broadcast_i32x4(_mm_loadu_si128(rk.as_ptr().add(r).cast())));
            let (passes, rest) = blocks.as_chunks_mut::<PASS>();
            for pass in passes {
                let p = pass.as_mut_ptr().cast::<__m512i>();
                let mut x: [__m512i; PASS / 4] =
                    core::array::from_fn(|i| _mm512_xor_si512(_mm512_loadu_si512(p.add(i).cast()), k[0]));
                for kr in &k[1..10] {
                    for xi in x.iter_mut() {
                        *xi = _mm512_aesenc_epi128(*xi, *kr);
                    }
                }
                for (i, xi) in x.iter().enumerate() {
                    _mm512_storeu_si512(p.add(i).cast(), _mm512_aesenclast_epi128(*xi, k[10]));
                }
            }
            let (fours, rest) = rest.as_chunks_mut::<4>();
            for four in fours {
                let p = four.as_mut_ptr().cast::<__m512i>();
                _mm512_storeu_si512(p.cast(), rounds(_mm512_loadu_si512(p.cast()), &k));
            }
            if !rest.is_empty() {
                let lanes: __mmask8 = (1u8 << (2 * rest.len())) - 1;
                let p = rest.as_mut_ptr().cast::<i64>();
                let x = _mm512_maskz_loadu_epi64(lanes, p);
                _mm512_mask_storeu_epi64(p, lanes, rounds(x, &k));
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit};
        use rand::Rng;

        /// FIPS-197 appendix C.1: key 00..0f, plaintext 00112233..ff.
        #[test]
        fn fips197_appendix_c1_vector_in_every_position_of_a_call() {
            let Some(c) = Cipher::new(&core::array::from_fn(|i| i as u8)) else {
                eprintln!("no VAES on this CPU: nothing to test");
                return;
            };
            let pt: [u8; 16] = core::array::from_fn(|i| (0x11 * i) as u8);
            let ct = [0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a];
            let mut blocks = [Block::from(pt); 39];
            c.encrypt_blocks(&mut blocks);
            assert!(blocks.iter().all(|b| *b == Block::from(ct)));
        }

        /// Every path (passes of 32, fours, a masked tail of 1–3) against the `aes` crate, and
        /// the tail's masked store leaves the bytes after the slice alone.
        #[test]
        fn matches_the_aes_crate_on_random_keys_and_every_batch_length() {
            let mut rng = rand::rng();
            for len in 0..=100usize {
                let key: [u8; 16] = rng.random();
                let Some(c) = Cipher::new(&key) else {
                    eprintln!("no VAES on this CPU: nothing to test");
                    return;
                };
                let mut blocks: Vec<Block> = (0..len + 1).map(|_| Block::from(rng.random::<[u8; 16]>())).collect();
                let mut want = blocks.clone();
                aes::Aes128::new(GenericArray::from_slice(&key)).encrypt_blocks(&mut want[..len]);
                c.encrypt_blocks(&mut blocks[..len]);
                assert_eq!(blocks, want, "len {len}");
            }
        }
    }
}

#[allow(dead_code)]
mod crate_backend {
    use super::Block;
    use aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit};

    pub(crate) struct Cipher(aes::Aes128);

    impl Cipher {
        pub(crate) fn new(key: &[u8; 16]) -> Self {
            Cipher(aes::Aes128::new(GenericArray::from_slice(key)))
        }

        #[inline]
        pub(crate) fn encrypt_blocks(&self, blocks: &mut [Block]) {
            self.0.encrypt_blocks(blocks);
        }
    }
}

/// Bitsliced AES-128, generic over the register type.
#[allow(dead_code)]
pub(crate) mod bitsliced {
    use core::ops::{BitAnd, BitXor};

    use super::Block;
    use crate::primitives::sbox_circuit::{sbox_without_constant, Gates};

    /// A 128-bit register seen as 16 bytes (byte i = bits 8i..8i+7, little-endian).
    pub(crate) trait Reg:
        Copy + Default + zeroize::DefaultIsZeroes + BitXor<Output = Self> + BitAnd<Output = Self>
    {
        fn load(bytes: &[u8; 16]) -> Self;
        fn store(self) -> [u8; 16];
        /// Every byte = `b`.
        fn splat(b: u8) -> Self;
        /// Each 64-bit half shifted right / left by `s` (only used where masks keep the bits
        /// inside their byte, so the halves' boundary never matters).
        fn shr64(self, s: u32) -> Self;
        fn shl64(self, s: u32) -> Self;
        /// Byte i of the result = byte `idx[i]` of `self`.
        fn shuffle(self, idx: [u8; 16]) -> Self;
        /// Each 32-bit lane rotated right by `s` bits (0 < s < 32).
        fn rotr32(self, s: u32) -> Self;
    }

    /// Registers as the gates of the S-box circuit: one gate acts on 128 lanes at once.
    struct Lanes<R>(core::marker::PhantomData<R>);

    impl<R: Reg> Gates for Lanes<R> {
        type Bit = R;
        #[inline(always)]
        fn xor(&self, a: R, b: R) -> R {
            a ^ b
        }
        #[inline(always)]
        fn and(&mut self, a: R, b: R) -> R {
            a & b
        }
    }

    /// State byte i = 4·column + row. ShiftRows: (r, c) takes (r, c + r).
    const SHIFT_ROWS: [u8; 16] = {
        let mut t = [0u8; 16];
        let mut i = 0;
        while i < 16 {
            let (c, r) = (i / 4, i % 4);
            t[i] = (4 * ((c + r) % 4) + r) as u8;
            i += 1;
        }
        t
    };

    /// The S-box's additive constant (bits 0, 1, 5, 6).
    const SBOX_CONSTANT: u8 = 0x63;

    /// t = ((a >> s) ⊕ b) ∧ m; b ⊕= t; a ⊕= t << s: swaps the bits of `a` at m << s with the
    /// bits of `b` at m.
    #[inline(always)]
    fn swap_move<R: Reg>(a: &mut R, b: &mut R, s: u32, m: R) {
        let t = (a.shr64(s) ^ *b) & m;
        *b = *b ^ t;
        *a = *a ^ t.shl64(s);
    }

    /// In every byte position, the 8×8 bit matrix (register j, bit b) is transposed: afterwards
    /// bit j of register b is the former bit b of register j. An involution. Written out
    /// register by register (see [`Cipher`]).
    #[inline(always)]
    fn transpose<R: Reg>(x: &mut [R; 8]) {
        let [mut x0, mut x1, mut x2, mut x3, mut x4, mut x5, mut x6, mut x7] = *x;
        let m = R::splat(0x55);
        swap_move(&mut x0, &mut x1, 1, m);
        swap_move(&mut x2, &mut x3, 1, m);
        swap_move(&mut x4, &mut x5, 1, m);
        swap_move(&mut x6, &mut x7, 1, m);
        let m = R::splat(0x33);
        swap_move(&mut x0, &mut x2, 2, m);
        swap_move(&mut x1, &mut x3, 2, m);
        swap_move(&mut x4, &mut x6, 2, m);
        swap_move(&mut x5, &mut x7, 2, m);
        let m = R::splat(0x0f);
        swap_move(&mut x0, &mut x4, 4, m);
        swap_move(&mut x1, &mut x5, 4, m);
        swap_move(&mut x2, &mut x6, 4, m);
        swap_move(&mut x3, &mut x7, 4, m);
        *x = [x0, x1, x2, x3, x4, x5, x6, x7];
    }

    /// SubBytes without its constant (folded into the round keys).
    #[inline(always)]
    fn sub_bytes<R: Reg>(x: &mut [R; 8]) {
        *x = sbox_without_constant(&mut Lanes::<R>(core::marker::PhantomData), x);
    }

    /// ShiftRows, MixColumns and AddRoundKey. With a = ShiftRows(x) and t = a ⊕ rot1(a) per
    /// column, MixColumns is b = 2·t ⊕ rot1(a) ⊕ rot2(t); 2·t is xtime on bit registers. A
    /// column is a 32-bit lane (byte 4c + r is row r), so rot1 and rot2 are lane rotations by 8
    /// and 16 bits, done with shifts: as byte shuffles they made the whole cipher 1.15–1.2×
    /// slower in Chromium.
    #[inline(always)]
    fn shift_mix_add<R: Reg>(x: &mut [R; 8], rk: &[R; 8]) {
        let a: [R; 8] = core::array::from_fn(|b| x[b].shuffle(SHIFT_ROWS));
        let r1: [R; 8] = core::array::from_fn(|b| a[b].rotr32(8));
        let t: [R; 8] = core::array::from_fn(|b| a[b] ^ r1[b]);
        let t7 = t[7];
        let xt = [t7, t[0] ^ t7, t[1], t[2] ^ t7, t[3] ^ t7, t[4], t[5], t[6]];
        *x = core::array::from_fn(|b| xt[b] ^ r1[b] ^ t[b].rotr32(16) ^ rk[b]);
    }

    /// An expanded key: 11 round keys as bit registers (byte i of register b is 0xff when bit
    /// b of round-key byte i is set), rounds 1..=10 with the S-box constant folded in.
    ///
    /// The 8 state registers are whole values throughout a pass, never an array indexed in a
    /// loop, and blocks load straight into them: where a loop indexed them, LLVM kept the state
    /// in wasm's linear memory instead of locals, and the cipher ran at 0.69× the speed in
    /// Chromium (docs/benchmarks.md, "The browser's arithmetic").
    pub(crate) struct Cipher<R: Reg> {
        rk: [[R; 8]; 11],
    }

    impl<R: Reg> Drop for Cipher<R> {
        fn drop(&mut self) {
            use zeroize::Zeroize;
            self.rk.zeroize();
        }
    }

    impl<R: Reg> Cipher<R> {
        pub(crate) fn new(key: &[u8; 16]) -> Self {
            use zeroize::Zeroize;
            let mut w = [[0u8; 16]; 11];
            w[0] = *key;
            let mut rcon = 1u8;
            for r in 1..11 {
                let prev = w[r - 1];
                let sub = sub_word::<R>([prev[13], prev[14], prev[15], prev[12]]);
                let mut t = [sub[0] ^ rcon, sub[1], sub[2], sub[3]];
                for c in 0..4 {
                    for i in 0..4 {
                        w[r][4 * c + i] = prev[4 * c + i] ^ t[i];
                    }
                    t.copy_from_slice(&w[r][4 * c..4 * c + 4]);
                }
                // rcon is public: the branch is on the round number only.
                rcon = (rcon << 1) ^ if rcon & 0x80 != 0 { 0x1b } else { 0 };
            }
            let mut rk = [[R::default(); 8]; 11];
            for (r, (regs, bytes)) in rk.iter_mut().zip(w.iter()).enumerate() {
                let folded = if r == 0 { 0 } else { SBOX_CONSTANT };
                for (b, reg) in regs.iter_mut().enumerate() {
                    let mut masks: [u8; 16] = core::array::from_fn(|i| 0u8.wrapping_sub((bytes[i] >> b) & 1));
                    *reg = R::load(&masks) ^ R::splat(0u8.wrapping_sub((folded >> b) & 1));
                    masks.zeroize();
                }
            }
            w.zeroize();
            Cipher { rk }
        }

        /// Encrypts 8 blocks in place, loaded straight into registers.
        #[inline]
        fn encrypt8(&self, blocks: &mut [Block; 8]) {
            let mut x: [R; 8] = core::array::from_fn(|j| R::load(blocks[j].as_ref()));
            transpose(&mut x);
            for (xb, kb) in x.iter_mut().zip(&self.rk[0]) {
                *xb = *xb ^ *kb;
            }
            for rk in &self.rk[1..10] {
                sub_bytes(&mut x);
                shift_mix_add(&mut x, rk);
            }
            sub_bytes(&mut x);
            for (xb, kb) in x.iter_mut().zip(&self.rk[10]) {
                *xb = xb.shuffle(SHIFT_ROWS) ^ *kb;
            }
            transpose(&mut x);
            for (blk, xj) in blocks.iter_mut().zip(x) {
                *blk = Block::from(xj.store());
            }
        }

        /// Whole passes of 8 in place; a last partial pass through a buffer, wiped after.
        pub(crate) fn encrypt_blocks(&self, blocks: &mut [Block]) {
            use zeroize::Zeroize;
            let (passes, rest) = blocks.as_chunks_mut::<8>();
            for eight in passes {
                self.encrypt8(eight);
            }
            if !rest.is_empty() {
                let mut buf = [Block::default(); 8];
                buf[..rest.len()].copy_from_slice(rest);
                self.encrypt8(&mut buf);
                rest.copy_from_slice(&buf[..rest.len()]);
                for b in &mut buf {
                    b.as_mut_slice().zeroize();
                }
            }
        }
    }

    /// SubWord of the key schedule (with its constant), on the bitsliced circuit: the word
    /// rides in block 0 of an otherwise zero batch.
    fn sub_word<R: Reg>(word: [u8; 4]) -> [u8; 4] {
        use zeroize::Zeroize;
        let mut bytes = [0u8; 16];
        bytes[..4].copy_from_slice(&word);
        let mut x = [R::default(); 8];
        x[0] = R::load(&bytes);
        transpose(&mut x);
        sub_bytes(&mut x);
        transpose(&mut x);
        bytes = x[0].store();
        let out = core::array::from_fn(|i| bytes[i] ^ SBOX_CONSTANT);
        bytes.zeroize();
        x.zeroize();
        out
    }

    /// A portable register (two 64-bit halves in a `u128`), for testing the core natively.
    #[cfg(test)]
    #[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
    pub(crate) struct U128Reg(u128);

    #[cfg(test)]
    mod portable {
        use super::U128Reg;
        use core::ops::{BitAnd, BitXor};

        impl BitXor for U128Reg {
            type Output = Self;
            fn bitxor(self, r: Self) -> Self {
                U128Reg(self.0 ^ r.0)
            }
        }
        impl BitAnd for U128Reg {
            type Output = Self;
            fn bitand(self, r: Self) -> Self {
                U128Reg(self.0 & r.0)
            }
        }
        impl zeroize::DefaultIsZeroes for U128Reg {}
        impl super::Reg for U128Reg {
            fn load(bytes: &[u8; 16]) -> Self {
                U128Reg(u128::from_le_bytes(*bytes))
            }
            fn store(self) -> [u8; 16] {
                self.0.to_le_bytes()
            }
            fn splat(b: u8) -> Self {
                U128Reg(u128::from_le_bytes([b; 16]))
            }
            fn shr64(self, s: u32) -> Self {
                let (lo, hi) = (self.0 as u64, (self.0 >> 64) as u64);
                U128Reg(((hi >> s) as u128) << 64 | (lo >> s) as u128)
            }
            fn shl64(self, s: u32) -> Self {
                let (lo, hi) = (self.0 as u64, (self.0 >> 64) as u64);
                U128Reg(((hi << s) as u128) << 64 | (lo << s) as u128)
            }
            fn shuffle(self, idx: [u8; 16]) -> Self {
                let b = self.0.to_le_bytes();
                U128Reg(u128::from_le_bytes(core::array::from_fn(|i| b[idx[i] as usize])))
            }
            fn rotr32(self, s: u32) -> Self {
                let lanes: [u32; 4] = core::array::from_fn(|k| (self.0 >> (32 * k)) as u32);
                U128Reg(lanes.iter().enumerate().fold(0, |acc, (k, l)| acc | u128::from(l.rotate_right(s)) << (32 * k)))
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit};
        use rand::Rng;

        #[test]
        fn transpose_swaps_register_and_bit_index_and_is_an_involution() {
            let mut rng = rand::rng();
            let orig: [U128Reg; 8] = core::array::from_fn(|_| U128Reg(rng.random()));
            let mut x = orig;
            transpose(&mut x);
            for b in 0..8 {
                for j in 0..8 {
                    for i in 0..16 {
                        let got = (x[b].store()[i] >> j) & 1;
                        let want = (orig[j].store()[i] >> b) & 1;
                        assert_eq!(got, want, "register {b}, byte {i}, bit {j}");
                    }
                }
            }
            transpose(&mut x);
            assert_eq!(x, orig);
        }

        #[test]
        fn fips197_appendix_b_vector() {
            let key: [u8; 16] =
                [0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c];
            let pt: [u8; 16] =
                [0x32, 0x43, 0xf6, 0xa8, 0x88, 0x5a, 0x30, 0x8d, 0x31, 0x31, 0x98, 0xa2, 0xe0, 0x37, 0x07, 0x34];
            let ct: [u8; 16] =
                [0x39, 0x25, 0x84, 0x1d, 0x02, 0xdc, 0x09, 0xfb, 0xdc, 0x11, 0x85, 0x97, 0x19, 0x6a, 0x0b, 0x32];
            let c = Cipher::<U128Reg>::new(&key);
            let mut blocks = [Block::from(pt); 3];
            c.encrypt_blocks(&mut blocks);
            for b in blocks {
                assert_eq!(b, Block::from(ct));
            }
        }

        #[test]
        fn matches_the_aes_crate_on_random_keys_and_any_batch_length() {
            let mut rng = rand::rng();
            for len in 0..=40usize {
                let key: [u8; 16] = rng.random();
                let mut blocks: Vec<Block> = (0..len).map(|_| Block::from(rng.random::<[u8; 16]>())).collect();
                let mut want = blocks.clone();
                aes::Aes128::new(GenericArray::from_slice(&key)).encrypt_blocks(&mut want);
                Cipher::<U128Reg>::new(&key).encrypt_blocks(&mut blocks);
                assert_eq!(blocks, want, "len {len}");
            }
        }
    }
}

/// The SIMD128 register for the bitsliced core.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use core::arch::wasm32::*;
    use core::ops::{BitAnd, BitXor};

    #[derive(Clone, Copy)]
    pub(crate) struct Reg(v128);

    impl Default for Reg {
        #[inline(always)]
        fn default() -> Self {
            Reg(u64x2_splat(0))
        }
    }
    impl BitXor for Reg {
        type Output = Self;
        #[inline(always)]
        fn bitxor(self, r: Self) -> Self {
            Reg(v128_xor(self.0, r.0))
        }
    }
    impl BitAnd for Reg {
        type Output = Self;
        #[inline(always)]
        fn bitand(self, r: Self) -> Self {
            Reg(v128_and(self.0, r.0))
        }
    }
    impl zeroize::DefaultIsZeroes for Reg {}
    impl super::bitsliced::Reg for Reg {
        #[inline(always)]
        fn load(bytes: &[u8; 16]) -> Self {
            // SAFETY: reads exactly the 16 bytes of `bytes`; v128 loads need no alignment.
            Reg(unsafe { v128_load(bytes.as_ptr() as *const v128) })
        }
        #[inline(always)]
        fn store(self) -> [u8; 16] {
            let mut out = [0u8; 16];
            // SAFETY: writes exactly the 16 bytes of `out`; v128 stores need no alignment.
            unsafe { v128_store(out.as_mut_ptr() as *mut v128, self.0) };
            out
        }
        #[inline(always)]
        fn splat(b: u8) -> Self {
            Reg(u8x16_splat(b))
        }
        #[inline(always)]
        fn shr64(self, s: u32) -> Self {
            Reg(u64x2_shr(self.0, s))
        }
        #[inline(always)]
        fn shl64(self, s: u32) -> Self {
            Reg(i64x2_shl(self.0, s))
        }
        #[inline(always)]
        fn shuffle(self, i: [u8; 16]) -> Self {
            let idx = u8x16(
                i[0], i[1], i[2], i[3], i[4], i[5], i[6], i[7], i[8], i[9], i[10], i[11], i[12], i[13], i[14], i[15],
            );
            Reg(u8x16_swizzle(self.0, idx))
        }
        #[inline(always)]
        fn rotr32(self, s: u32) -> Self {
            Reg(v128_or(u32x4_shr(self.0, s), u32x4_shl(self.0, 32 - s)))
        }
    }
}

/// The same register on SSSE3, for `--cfg tlsproof_portable` profiling builds (build them with
/// `-C target-feature=+ssse3`).
#[cfg(all(tlsproof_portable, target_arch = "x86_64"))]
mod simd {
    use core::arch::x86_64::*;
    use core::ops::{BitAnd, BitXor};

    #[derive(Clone, Copy)]
    pub(crate) struct Reg(__m128i);

    // SAFETY (every block below): SSE2 is baseline on x86_64, SSSE3 is required by the cfg's
    // build flags, and the loads/stores touch exactly 16 bytes of their array.
    impl Default for Reg {
        #[inline(always)]
        fn default() -> Self {
            Reg(unsafe { _mm_setzero_si128() })
        }
    }
    impl BitXor for Reg {
        type Output = Self;
        #[inline(always)]
        fn bitxor(self, r: Self) -> Self {
            Reg(unsafe { _mm_xor_si128(self.0, r.0) })
        }
    }
    impl BitAnd for Reg {
        type Output = Self;
        #[inline(always)]
        fn bitand(self, r: Self) -> Self {
            Reg(unsafe { _mm_and_si128(self.0, r.0) })
        }
    }
    impl zeroize::DefaultIsZeroes for Reg {}
    impl super::bitsliced::Reg for Reg {
        #[inline(always)]
        fn load(bytes: &[u8; 16]) -> Self {
            Reg(unsafe { _mm_loadu_si128(bytes.as_ptr() as *const __m128i) })
        }
        #[inline(always)]
        fn store(self) -> [u8; 16] {
            let mut out = [0u8; 16];
            unsafe { _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, self.0) };
            out
        }
        #[inline(always)]
        fn splat(b: u8) -> Self {
            Reg(unsafe { _mm_set1_epi8(b as i8) })
        }
        #[inline(always)]
        fn shr64(self, s: u32) -> Self {
            Reg(unsafe { _mm_srl_epi64(self.0, _mm_cvtsi32_si128(s as i32)) })
        }
        #[inline(always)]
        fn shl64(self, s: u32) -> Self {
            Reg(unsafe { _mm_sll_epi64(self.0, _mm_cvtsi32_si128(s as i32)) })
        }
        #[inline(always)]
        fn shuffle(self, i: [u8; 16]) -> Self {
            Reg(unsafe { _mm_shuffle_epi8(self.0, _mm_loadu_si128(i.as_ptr() as *const __m128i)) })
        }
        #[inline(always)]
        fn rotr32(self, s: u32) -> Self {
            Reg(unsafe {
                _mm_or_si128(
                    _mm_srl_epi32(self.0, _mm_cvtsi32_si128(s as i32)),
                    _mm_sll_epi32(self.0, _mm_cvtsi32_si128(32 - s as i32)),
                )
            })
        }
    }
}
