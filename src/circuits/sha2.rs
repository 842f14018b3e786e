//! The SHA-2 compression and padding (FIPS 180-4) over N-bit words, written once for SHA-256
//! (N = 32) and for SHA-384/512 (N = 64): the two differ only in word size, rotation amounts,
//! round constants and block size.

use super::{add, add_pair, constant_word, Circuit};

/// What tells the SHA-2 functions apart, besides the word size N.
pub(crate) struct Family {
    /// Round constants (one per round), N bits each.
    pub k: &'static [u64],
    /// σ0: two rotations and a shift of the message schedule.
    pub sigma0: [usize; 3],
    /// σ1: the same for the other schedule term.
    pub sigma1: [usize; 3],
    /// Σ0: three rotations of a.
    pub big_sigma0: [usize; 3],
    /// Σ1: three rotations of e.
    pub big_sigma1: [usize; 3],
}

/// A chaining state: eight N-bit words, bit i = 2^i.
pub(crate) type State<B, const N: usize> = [[<B as super::Gates>::Bit; N]; 8];

fn rotr<B: Circuit, const N: usize>(w: &[B::Bit; N], n: usize) -> [B::Bit; N] {
    core::array::from_fn(|i| w[(i + n) % N])
}

fn shr<B: Circuit, const N: usize>(b: &B, w: &[B::Bit; N], n: usize) -> [B::Bit; N] {
    core::array::from_fn(|i| if i + n < N { w[i + n] } else { b.constant(false) })
}

fn xor3<B: Circuit, const N: usize>(b: &B, [x, y, z]: [&[B::Bit; N]; 3]) -> [B::Bit; N] {
    core::array::from_fn(|i| {
        let t = b.xor(x[i], y[i]);
        b.xor(t, z[i])
    })
}

fn big_sigma<B: Circuit, const N: usize>(b: &B, w: &[B::Bit; N], [r0, r1, r2]: [usize; 3]) -> [B::Bit; N] {
    xor3(b, [&rotr::<B, N>(w, r0), &rotr::<B, N>(w, r1), &rotr::<B, N>(w, r2)])
}

fn small_sigma<B: Circuit, const N: usize>(b: &B, w: &[B::Bit; N], [r0, r1, s]: [usize; 3]) -> [B::Bit; N] {
    xor3(b, [&rotr::<B, N>(w, r0), &rotr::<B, N>(w, r1), &shr(b, w, s)])
}

/// A word from N/8 big-endian bytes of bits.
fn word_from_be<B: Circuit, const N: usize>(bits: &[B::Bit]) -> [B::Bit; N] {
    core::array::from_fn(|i| bits[(N / 8 - 1 - i / 8) * 8 + i % 8])
}

/// The state as its big-endian encoding (the digest, before truncation, when it is the final
/// state).
pub(crate) fn state_to_bytes<B: Circuit, const N: usize>(s: &State<B, N>) -> Vec<B::Bit> {
    let mut out = Vec::with_capacity(8 * N);
    for w in s {
        for byte in (0..N / 8).rev() {
            out.extend_from_slice(&w[byte * 8..byte * 8 + 8]);
        }
    }
    out
}

/// A state from its big-endian encoding.
pub(crate) fn state_from_bytes<B: Circuit, const N: usize>(bits: &[B::Bit]) -> State<B, N> {
    core::array::from_fn(|i| word_from_be::<B, N>(&bits[i * N..i * N + N]))
}

/// A public state.
pub(crate) fn constant_state<B: Circuit, const N: usize>(b: &B, words: &[u64; 8]) -> State<B, N> {
    core::array::from_fn(|i| constant_word(b, words[i]))
}

/// One compression: `block` is 16 words (2N bytes) in message byte order.
pub(crate) fn compress<B: Circuit, const N: usize>(
    b: &mut B,
    f: &Family,
    state: &State<B, N>,
    block: &[B::Bit],
) -> State<B, N> {
    assert_eq!(block.len(), 16 * N, "a SHA-2 block is 16 words");
    let rounds = f.k.len();
    let mut w: Vec<[B::Bit; N]> = (0..16).map(|t| word_from_be::<B, N>(&block[t * N..t * N + N])).collect();
    for t in 16..rounds {
        let s0 = small_sigma(b, &w[t - 15], f.sigma0);
        let s1 = small_sigma(b, &w[t - 2], f.sigma1);
        let [x, y] = add_pair(b, [(&w[t - 16], &s0), (&w[t - 7], &s1)]);
        let z = add(b, &x, &y);
        w.push(z);
    }
    let [mut a, mut bb, mut c, mut d, mut e, mut ff, mut g, mut h] = *state;
    for t in 0..rounds {
        let big_s1 = big_sigma(b, &e, f.big_sigma1);
        // ch(e, f, g) = g ⊕ (e ∧ (f ⊕ g))
        let ch: [B::Bit; N] = core::array::from_fn(|i| b.xor(ff[i], g[i]));
        let mut ch_out = ch;
        for i in (0..N).step_by(2) {
            let t = b.and_pair([(e[i], ch[i]), (e[i + 1], ch[i + 1])]);
            ch_out[i] = b.xor(g[i], t[0]);
            ch_out[i + 1] = b.xor(g[i + 1], t[1]);
        }
        // Public terms first, so that they fold: K_t + W_t when the block is public (an outer
        // HMAC compression), h + K_t otherwise (free while h is still the public IV's). The
        // independent sums go in pairs: T1 = (h + K_t + W_t) + (Ch + Σ1), T2 = Σ0 + Maj.
        let k = constant_word(b, f.k[t]);
        let (hkw, rest) = if w[t].iter().all(|&x| b.public_value(x).is_some()) {
            (h, add(b, &k, &w[t]))
        } else {
            (add(b, &h, &k), w[t])
        };
        let big_s0 = big_sigma(b, &a, f.big_sigma0);
        // maj(a, b, c) = b ⊕ ((a ⊕ b) ∧ (b ⊕ c))
        let mut maj = a;
        for i in (0..N).step_by(2) {
            let ab = [b.xor(a[i], bb[i]), b.xor(a[i + 1], bb[i + 1])];
            let bc = [b.xor(bb[i], c[i]), b.xor(bb[i + 1], c[i + 1])];
            let t = b.and_pair([(ab[0], bc[0]), (ab[1], bc[1])]);
            maj[i] = b.xor(bb[i], t[0]);
            maj[i + 1] = b.xor(bb[i + 1], t[1]);
        }
        let [u, v] = add_pair(b, [(&hkw, &rest), (&ch_out, &big_s1)]);
        let [t1, t2] = add_pair(b, [(&u, &v), (&big_s0, &maj)]);
        h = g;
        g = ff;
        ff = e;
        let [new_e, new_a] = add_pair(b, [(&d, &t1), (&t1, &t2)]);
        e = new_e;
        d = c;
        c = bb;
        bb = a;
        a = new_a;
    }
    let working = [a, bb, c, d, e, ff, g, h];
    let mut out = *state;
    for i in (0..8).step_by(2) {
        [out[i], out[i + 1]] = add_pair(b, [(&state[i], &working[i]), (&state[i + 1], &working[i + 1])]);
    }
    out
}

/// Hash `msg` (byte-aligned bits) continuing from `state`, which has already absorbed
/// `prefix_len` bytes (whole blocks); applies the padding (0x80, zeros, the bit length in 2N/8
/// bytes) and returns the final state's encoding, untruncated.
pub(crate) fn finish<B: Circuit, const N: usize>(
    b: &mut B,
    f: &Family,
    state: &State<B, N>,
    prefix_len: usize,
    msg: &[B::Bit],
) -> Vec<B::Bit> {
    let block_len = 2 * N;
    assert!(msg.len() % 8 == 0 && prefix_len.is_multiple_of(block_len));
    let total_bits = ((prefix_len + msg.len() / 8) as u128) * 8;
    let mut data = msg.to_vec();
    let mut tail = vec![0x80u8];
    while (data.len() / 8 + tail.len()) % block_len != block_len - N / 4 {
        tail.push(0);
    }
    tail.extend_from_slice(&total_bits.to_be_bytes()[16 - N / 4..]);
    data.extend(super::constant_bytes(b, &tail));
    let mut s = *state;
    for block in data.chunks(16 * N) {
        s = compress(b, f, &s, block);
    }
    state_to_bytes::<B, N>(&s)
}

/// Widens 32-bit constants for [`Family::k`].
pub(crate) const fn widen<const L: usize>(k: [u32; L]) -> [u64; L] {
    let mut out = [0u64; L];
    let mut i = 0;
    while i < L {
        out[i] = k[i] as u64;
        i += 1;
    }
    out
}
