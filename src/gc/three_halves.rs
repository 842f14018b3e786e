//! The AND gate of three-halves garbling (Rosulek–Roy, "Three halves make a whole? Beating the
//! half-gates lower bound for garbled circuits", CRYPTO 2021): 1.5κ + 5 bits a gate instead of
//! half-gates' 2κ, for 6 hash calls by the garbler and 3 by the evaluator (half-gates: 4 and 2).
//! Why this scheme, and its security argument: docs/protocol.md, "Garbling".
//!
//! Labels are split into halves, W = (W_L, W_R) = (low 64 bits, high 64 bits), and the colour
//! (point-and-permute) bit is the label's lowest, as in [`super::garbler`]: lsb(Δ) = 1. The
//! evaluator holding colours (i, j) computes each output half as a linear combination of its
//! input halves, chosen by two control bits, plus the hashes and the gate's three half-rows
//! ("slicing"). The garbler solves for rows that make all four combinations land on the right
//! label; its control bits are masked by two fresh random bits per gate ("dicing"), so the one
//! combination the evaluator sees reveals nothing about the truth table's position.
//!
//! Hash: the tweakable correlation-robust [`GateHash`](super::hash::GateHash); a half uses its output's low 64 bits and
//! a control bit its bit 64. Gate k uses the tweaks 3k (input a), 3k + 1 (b) and 3k + 2 (a ⊕ b).
//!
//! On the wire ([`encode_tables`]) a run of n tables is the 3n half-rows (64-bit little-endian)
//! followed by the 5n control bits packed LSB first, the last byte's unused bits zero.

use super::GcError;
use core::ops::{BitAnd, BitXor, Not};

/// Bits on the wire for one AND gate: three 64-bit half-rows and five control bits.
pub(crate) const BITS_PER_AND: usize = 3 * 64 + 5;

/// The garbled rows of one AND gate: what the garbler sends for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Table {
    /// G0, G1, G2.
    pub g: [u64; 3],
    /// The masked control bits z0..z4 (bit n is z_n).
    pub z: u8,
}

#[inline(always)]
fn mask(bit: u8) -> u64 {
    0u64.wrapping_sub(u64::from(bit & 1))
}

/// The evaluator's linear map of its input halves (A_L, A_R, B_L, B_R) for colours (i, j) and
/// control bits (r1, r2): R(i, j) ⊕ r1·S1 ⊕ r2·S2, where R(i, j) takes B_L into the left half
/// when i = 0 and A_R into the right one when j = 0, S1 = (A_L ⊕ A_R ⊕ B_L, A_L ⊕ B_R) and
/// S2 = (A_L ⊕ B_R, A_R ⊕ B_L ⊕ B_R). Returns (left, right). The garbler's
/// [`garble_side_by_side`] writes the same map out on masks for its four colour pairs (through
/// this function its four-lane form ran ≈20 % slower in a microbenchmark).
#[inline(always)]
fn combination(i: u8, j: u8, r1: u8, r2: u8, a: u128, b: u128) -> [u64; 2] {
    let (al, ar, bl, br) = (a as u64, (a >> 64) as u64, b as u64, (b >> 64) as u64);
    let (x1, x2, x3) = (al ^ ar ^ bl, al ^ br, ar ^ bl ^ br);
    [(mask(i ^ 1) & bl) ^ (mask(r1) & x1) ^ (mask(r2) & x2), (mask(j ^ 1) & ar) ^ (mask(r1) & x2) ^ (mask(r2) & x3)]
}

/// The tweak of hash call `k` of a run of garbled gates numbered from `first`, six calls a
/// gate as in [`garbler_hash_inputs`]: call 6m + r is gate first + m's input r / 2, whose
/// tweak 3(first + m) + r / 2 is 3·first + k / 2.
#[inline(always)]
pub(crate) fn garbler_tweak(first: u64, k: usize) -> u128 {
    3 * u128::from(first) + (k / 2) as u128
}

/// The tweak of hash call `k` of a run of evaluated gates numbered from `first`, three calls
/// a gate as in [`evaluator_hash_inputs`].
#[inline(always)]
pub(crate) fn evaluator_tweak(first: u64, k: usize) -> u128 {
    3 * u128::from(first) + k as u128
}

#[inline(always)]
fn half(h: u128) -> u64 {
    h as u64
}

#[inline(always)]
fn control(h: u128) -> u8 {
    (h >> 64) as u8 & 1
}

/// The garbler's six hash inputs for a gate over the zero labels `a0`, `b0`: A, A ⊕ Δ, B,
/// B ⊕ Δ, A ⊕ B, A ⊕ B ⊕ Δ (A, B the colour-0 labels), hashed under [`garbler_tweak`].
#[inline(always)]
pub(crate) fn garbler_hash_inputs(delta: u128, a0: u128, b0: u128) -> [u128; 6] {
    let (a, b) = colour_zero(delta, a0, b0);
    [a, a ^ delta, b, b ^ delta, a ^ b, a ^ b ^ delta]
}

/// The colour-0 labels of the two inputs.
#[inline(always)]
fn colour_zero(delta: u128, a0: u128, b0: u128) -> (u128, u128) {
    let dmask = |l: u128| 0u128.wrapping_sub(l & 1) & delta;
    (a0 ^ dmask(a0), b0 ^ dmask(b0))
}

/// Garbles an AND gate from the input zero labels `a0`, `b0` under `delta` (lsb(Δ) = 1), the
/// hashes of [`garbler_hash_inputs`]' inputs in that order, and `rho`'s two low bits, uniform
/// and secret for this gate. Returns the table to send and the output's zero label.
/// Branch-free in the labels, Δ and `rho`.
#[inline(always)]
pub(crate) fn garble(delta: u128, a0: u128, b0: u128, h: [u128; 6], rho: u8) -> (Table, u128) {
    let ([table], [c0]) = garble_side_by_side::<u64, 1>(delta, [a0], [b0], &h, [rho]);
    (table, c0)
}

/// [`garble`] on `N` gates at once, gate k's hashes at `h[6k..6k + 6]`: the same formulas on
/// `V`, whose lane k is gate k's (`u64` for one gate, [`X4`] for four, which compilers turn
/// into vector instructions).
#[inline(always)]
fn garble_side_by_side<V: Lanes<N>, const N: usize>(
    delta: u128,
    a0: [u128; N],
    b0: [u128; N],
    h: &[u128],
    rho: [u8; N],
) -> ([Table; N], [u128; N]) {
    debug_assert_eq!(delta & 1, 1, "lsb(Δ) must be 1");
    let (dl, dr) = (V::splat(delta as u64), V::splat((delta >> 64) as u64));
    // the colour-0 labels A, B, and the colours (α, β) of the pair whose output is 1
    let (ca, cb) = (masks::<V, N>(|k| a0[k]), masks::<V, N>(|k| b0[k]));
    let (al, ar) = (V::from_fn(|k| a0[k] as u64) ^ (ca & dl), V::from_fn(|k| (a0[k] >> 64) as u64) ^ (ca & dr));
    let (bl, br) = (V::from_fn(|k| b0[k] as u64) ^ (cb & dl), V::from_fn(|k| (b0[k] >> 64) as u64) ^ (cb & dr));
    let (alpha, beta) = (!ca, !cb);
    // each hash's half (its low 64 bits) and control bit (its bit 64), in the order A, A ⊕ Δ,
    // B, B ⊕ Δ, A ⊕ B, A ⊕ B ⊕ Δ
    let hh: [V; 6] = core::array::from_fn(|m| V::from_fn(|k| h[6 * k + m] as u64));
    let hc: [V; 6] = core::array::from_fn(|m| masks::<V, N>(|k| h[6 * k + m] >> 64));
    let (rho1, rho2) = (masks::<V, N>(|k| u128::from(rho[k])), masks::<V, N>(|k| u128::from(rho[k] >> 1)));
    let s = alpha ^ beta;
    let pick = |c: u8, v: V| if c == 1 { v } else { V::ZERO };
    // the target halves T_ij and control bits τ_ij for each colour pair, indexed 2i + j
    let mut t = [[V::ZERO; 2]; 4];
    let mut tau = [[V::ZERO; 2]; 4];
    for i in 0..2u8 {
        for j in 0..2u8 {
            let d = i ^ j;
            let r1 = rho1 ^ pick(i, alpha) ^ pick(d, s);
            let r2 = rho2 ^ pick(j, beta) ^ pick(d, s);
            let on = (if i == 1 { alpha } else { !alpha }) & (if j == 1 { beta } else { !beta });
            // the evaluator's combination for colours (i, j) of the labels it would hold
            let (xl, xr) = (al ^ pick(i, dl), ar ^ pick(i, dr));
            let (yl, yr) = (bl ^ pick(j, dl), br ^ pick(j, dr));
            let (x1, x2, x3) = (xl ^ xr ^ yl, xl ^ yr, xr ^ yl ^ yr);
            let cl = pick(i ^ 1, yl) ^ (r1 & x1) ^ (r2 & x2);
            let cr = pick(j ^ 1, xr) ^ (r1 & x2) ^ (r2 & x3);
            let (ia, jb, xd) = (usize::from(i), 2 + usize::from(j), 4 + usize::from(d));
            t[usize::from(2 * i + j)] = [cl ^ (on & dl) ^ hh[ia] ^ hh[xd], cr ^ (on & dr) ^ hh[jb] ^ hh[xd]];
            tau[usize::from(2 * i + j)] = [r1 ^ hc[ia] ^ hc[xd], r2 ^ hc[jb] ^ hc[xd]];
        }
    }
    // the left inverse of the evaluator's map (C, G) ↦ C ⊕ W_ij·G over the four pairs
    let (t00, t01, t10, t11) = (t[0], t[1], t[2], t[3]);
    let g = [t00[0] ^ t00[1] ^ t10[0] ^ t10[1], t00[0] ^ t00[1] ^ t01[0] ^ t01[1], t10[0] ^ t11[0]];
    let (u00, u01, u10, u11) = (tau[0], tau[1], tau[2], tau[3]);
    let z = [u00[0], u00[1], u00[0] ^ u00[1] ^ u10[0] ^ u10[1], u00[0] ^ u00[1] ^ u01[0] ^ u01[1], u10[0] ^ u11[0]];
    let tables = core::array::from_fn(|k| Table {
        g: g.map(|v| v.lane(k)),
        z: z.iter().enumerate().fold(0u8, |acc, (n, v)| acc | ((v.lane(k) & 1) as u8) << n),
    });
    (tables, core::array::from_fn(|k| u128::from(t00[0].lane(k)) | (u128::from(t00[1].lane(k)) << 64)))
}

/// Garbles independent gates (an S-box layer's): gate k has the zero labels `pairs[k]`, the
/// hashes `h[6k..6k + 6]` and the dicing bits `rho[k]`, and gets `tables[k]` and the output
/// zero label `out[k]`, as [`garble`] would give them. Four gates side by side, on AVX2 where
/// the CPU has it.
pub(crate) fn garble_layer(
    delta: u128,
    pairs: &[(u128, u128)],
    h: &[u128],
    rho: &[u8],
    tables: &mut [Table],
    out: &mut [u128],
) {
    debug_assert!(
        h.len() == 6 * pairs.len()
            && rho.len() == pairs.len()
            && tables.len() == pairs.len()
            && out.len() == pairs.len()
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        unsafe { garble_layer_avx2(delta, pairs, h, rho, tables, out) };
        return;
    }
    garble_layer_fours(delta, pairs, h, rho, tables, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn garble_layer_avx2(
    delta: u128,
    pairs: &[(u128, u128)],
    h: &[u128],
    rho: &[u8],
    tables: &mut [Table],
    out: &mut [u128],
) {
    garble_layer_fours(delta, pairs, h, rho, tables, out);
}

#[inline(always)]
fn garble_layer_fours(
    delta: u128,
    pairs: &[(u128, u128)],
    h: &[u128],
    rho: &[u8],
    tables: &mut [Table],
    out: &mut [u128],
) {
    let mut k = 0;
    while k + 4 <= pairs.len() {
        let p: [(u128, u128); 4] = core::array::from_fn(|i| pairs[k + i]);
        let (t, c) = garble_side_by_side::<X4, 4>(
            delta,
            p.map(|x| x.0),
            p.map(|x| x.1),
            &h[6 * k..6 * k + 24],
            core::array::from_fn(|i| rho[k + i]),
        );
        tables[k..k + 4].copy_from_slice(&t);
        out[k..k + 4].copy_from_slice(&c);
        k += 4;
    }
    for k in k..pairs.len() {
        (tables[k], out[k]) = garble(delta, pairs[k].0, pairs[k].1, core::array::from_fn(|m| h[6 * k + m]), rho[k]);
    }
}

/// Bit 0 of `f(k)` for each lane k, as a mask: all ones when it is 1.
#[inline(always)]
fn masks<V: Lanes<N>, const N: usize>(f: impl Fn(usize) -> u128) -> V {
    V::from_fn(|k| f(k) as u64).bit0_mask()
}

/// 64-bit values of `N` gates side by side (see [`garble_side_by_side`]).
trait Lanes<const N: usize>: Copy + BitXor<Output = Self> + BitAnd<Output = Self> + Not<Output = Self> {
    const ZERO: Self;
    fn from_fn(f: impl Fn(usize) -> u64) -> Self;
    fn splat(v: u64) -> Self;
    fn lane(self, k: usize) -> u64;
    /// Each lane all ones where its bit 0 is set, else zero.
    fn bit0_mask(self) -> Self;
}

impl Lanes<1> for u64 {
    const ZERO: Self = 0;
    #[inline(always)]
    fn from_fn(f: impl Fn(usize) -> u64) -> Self {
        f(0)
    }
    #[inline(always)]
    fn splat(v: u64) -> Self {
        v
    }
    #[inline(always)]
    fn lane(self, _: usize) -> u64 {
        self
    }
    #[inline(always)]
    fn bit0_mask(self) -> Self {
        0u64.wrapping_sub(self & 1)
    }
}

/// Four gates' 64-bit values: plain arrays whose element-wise operations compile to vector
/// instructions (AVX2 where the caller enables it, SIMD128 in wasm).
#[derive(Clone, Copy)]
struct X4([u64; 4]);

impl Lanes<4> for X4 {
    const ZERO: Self = X4([0; 4]);
    #[inline(always)]
    fn from_fn(f: impl Fn(usize) -> u64) -> Self {
        X4(core::array::from_fn(f))
    }
    #[inline(always)]
    fn splat(v: u64) -> Self {
        X4([v; 4])
    }
    #[inline(always)]
    fn lane(self, k: usize) -> u64 {
        self.0[k]
    }
    #[inline(always)]
    fn bit0_mask(self) -> Self {
        X4(self.0.map(|v| 0u64.wrapping_sub(v & 1)))
    }
}

impl BitXor for X4 {
    type Output = X4;
    #[inline(always)]
    fn bitxor(self, r: X4) -> X4 {
        X4(core::array::from_fn(|k| self.0[k] ^ r.0[k]))
    }
}

impl BitAnd for X4 {
    type Output = X4;
    #[inline(always)]
    fn bitand(self, r: X4) -> X4 {
        X4(core::array::from_fn(|k| self.0[k] & r.0[k]))
    }
}

impl Not for X4 {
    type Output = X4;
    #[inline(always)]
    fn not(self) -> X4 {
        X4(self.0.map(|v| !v))
    }
}

/// The evaluator's two control bits for colours (i, j), from the masked ones and the control
/// bits of its hashes H(A), H(B), H(A ⊕ B).
#[inline(always)]
fn control_bits(z: u8, i: u8, j: u8, [ha, hb, hx]: [u128; 3]) -> (u8, u8) {
    let z = |n: u32| (z >> n) & 1;
    let d = i ^ j;
    let r1 = z(0) ^ (i & z(2)) ^ (d & z(4)) ^ control(ha) ^ control(hx);
    let r2 = z(1) ^ (j & z(3)) ^ (d & z(4)) ^ control(hb) ^ control(hx);
    (r1, r2)
}

/// The evaluator's three hash inputs for a gate on the active labels `a`, `b`: A, B, A ⊕ B,
/// hashed under [`evaluator_tweak`].
#[inline(always)]
pub(crate) fn evaluator_hash_inputs(a: u128, b: u128) -> [u128; 3] {
    [a, b, a ^ b]
}

/// Evaluates an AND gate on the active labels `a`, `b`, the hashes of
/// [`evaluator_hash_inputs`]' inputs in that order, and the garbler's `table`: the output's zero
/// label, or it ⊕ Δ when both inputs are 1.
#[inline(always)]
pub(crate) fn evaluate(a: u128, b: u128, [ha, hb, hx]: [u128; 3], table: &Table) -> u128 {
    let (i, j) = ((a & 1) as u8, (b & 1) as u8);
    let d = i ^ j;
    let (r1, r2) = control_bits(table.z, i, j, [ha, hb, hx]);
    let [ml, mr] = combination(i, j, r1, r2, a, b);
    let [g0, g1, g2] = table.g;
    let cl = (mask(i) & g0) ^ (mask(d) & g2) ^ half(ha) ^ half(hx) ^ ml;
    let cr = (mask(j) & g1) ^ (mask(d) & g2) ^ half(hb) ^ half(hx) ^ mr;
    u128::from(cl) | (u128::from(cr) << 64)
}

/// Bytes of `n` tables on the wire.
pub(crate) const fn encoded_len(n: usize) -> usize {
    24 * n + (5 * n).div_ceil(8)
}

/// The number of tables whose encoding is `len` bytes long, if there is one.
pub(crate) fn tables_in(len: usize) -> Option<usize> {
    // 8·len lies in [197n, 197n + 7] for the n that fits
    let n = 8 * len / BITS_PER_AND;
    (encoded_len(n) == len).then_some(n)
}

/// Appends the encoding of `tables` to `out`. Control bits go eight tables (40 bits, five
/// bytes) at a time.
pub(crate) fn encode_tables(tables: &[Table], out: &mut Vec<u8>) {
    out.reserve(encoded_len(tables.len()));
    for t in tables {
        for g in t.g {
            out.extend_from_slice(&g.to_le_bytes());
        }
    }
    for eight in tables.chunks(8) {
        let acc = eight.iter().enumerate().fold(0u64, |acc, (k, t)| acc | (u64::from(t.z & 0x1f) << (5 * k)));
        out.extend_from_slice(&acc.to_le_bytes()[..(5 * eight.len()).div_ceil(8)]);
    }
}

/// Checks that `bytes` is a whole encoding of tables (see [`tables_in`]) with its padding bits
/// clear; returns how many tables it holds.
pub(crate) fn check_encoding(bytes: &[u8]) -> Result<usize, GcError> {
    let n = tables_in(bytes.len()).ok_or(GcError::MalformedTables("a length that no number of tables has"))?;
    // the bits past the 5n control bits, in the last byte (5n ≤ 8·len < 5n + 8)
    if let Some(&last) = bytes[24 * n..].last() {
        let used = 5 * n - 8 * (bytes.len() - 24 * n - 1);
        if u32::from(last) >> used != 0 {
            return Err(GcError::MalformedTables("padding bits after the control bits are set"));
        }
    }
    Ok(n)
}

/// Table `k` of the `n` in `bytes`, an encoding [`check_encoding`] accepted (k < n).
#[inline]
pub(crate) fn table_at(bytes: &[u8], n: usize, k: usize) -> Table {
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let g = [word(24 * k), word(24 * k + 8), word(24 * k + 16)];
    // the five control bits start at bit 5k of the bits after the rows, within two bytes
    let (byte, shift) = (24 * n + 5 * k / 8, 5 * k % 8);
    let two = u16::from(bytes[byte]) | bytes.get(byte + 1).map_or(0, |&b| u16::from(b) << 8);
    Table { g, z: (two >> shift) as u8 & 0x1f }
}

/// Appends the tables encoded in `bytes` (a whole encoding, see [`check_encoding`]) to `out`;
/// returns how many.
pub(crate) fn decode_tables(bytes: &[u8], out: &mut Vec<Table>) -> Result<usize, GcError> {
    let n = check_encoding(bytes)?;
    out.extend((0..n).map(|k| table_at(bytes, n, k)));
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gc::hash::GateHash;
    use rand::{Rng, RngCore};

    /// Gate number `gate`, garbled with its own hash call.
    fn garble_one(hash: &GateHash, delta: u128, a0: u128, b0: u128, gate: u64, rho: u8) -> (Table, u128) {
        let x = garbler_hash_inputs(delta, a0, b0);
        garble(delta, a0, b0, hash.hash(x, |k| garbler_tweak(gate, k)), rho)
    }

    /// Gate number `gate`, evaluated with its own hash call.
    fn evaluate_one(hash: &GateHash, a: u128, b: u128, gate: u64, table: &Table) -> u128 {
        evaluate(a, b, hash.hash(evaluator_hash_inputs(a, b), |k| evaluator_tweak(gate, k)), table)
    }

    fn random_delta(rng: &mut impl RngCore) -> u128 {
        rng.random::<u128>() | 1
    }

    /// A layer garbled four gates side by side (and the rest one by one) gives each gate the
    /// table and output label that garbling it alone gives, for every layer size.
    #[test]
    fn a_layer_garbles_as_its_gates_one_by_one() {
        let mut rng = rand::rng();
        for n in 0..=16usize {
            let delta = random_delta(&mut rng);
            let pairs: Vec<(u128, u128)> = (0..n).map(|_| (rng.random(), rng.random())).collect();
            let h: Vec<u128> = (0..6 * n).map(|_| rng.random()).collect();
            let rho: Vec<u8> = (0..n).map(|_| rng.random_range(0..4)).collect();
            let (mut tables, mut out) = (vec![Table::default(); n], vec![0u128; n]);
            garble_layer(delta, &pairs, &h, &rho, &mut tables, &mut out);
            for k in 0..n {
                let alone = garble(delta, pairs[k].0, pairs[k].1, core::array::from_fn(|m| h[6 * k + m]), rho[k]);
                assert_eq!((tables[k], out[k]), alone, "gate {k} of {n}");
            }
        }
    }

    /// Hash call k of a run of gates from `first` carries its gate's tweak: 3·gate + the input
    /// (a, b, a ⊕ b) it hashes.
    #[test]
    fn a_runs_tweaks_are_its_gates_tweaks() {
        for first in [0u64, 1, 1 << 40, u64::MAX - 20] {
            for k in 0..96usize {
                let gate = u128::from(first) + (k / 6) as u128;
                assert_eq!(garbler_tweak(first, k), 3 * gate + (k % 6 / 2) as u128);
                let gate = u128::from(first) + (k / 3) as u128;
                assert_eq!(evaluator_tweak(first, k), 3 * gate + (k % 3) as u128);
            }
        }
    }

    /// Every gate, for every input pair, gives the evaluator C⁰ ⊕ (a ∧ b)·Δ, whatever the
    /// colours of the zero labels and the dicing bits.
    #[test]
    fn the_evaluator_gets_the_and_of_its_inputs_label() {
        let hash = GateHash::new();
        let mut rng = rand::rng();
        for gate in 0..2_000u64 {
            let delta = random_delta(&mut rng);
            let (a0, b0) = (rng.random::<u128>(), rng.random::<u128>());
            let (table, c0) = garble_one(&hash, delta, a0, b0, gate, rng.random());
            for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
                let pick = |w0: u128, v: bool| if v { w0 ^ delta } else { w0 };
                let c = evaluate_one(&hash, pick(a0, x), pick(b0, y), gate, &table);
                assert_eq!(c, pick(c0, x && y), "gate {gate}, inputs ({x}, {y})");
            }
        }
    }

    /// Gates compose: a chain of ANDs and XORs evaluates to the plain function, and the output
    /// decodes by its colour bit.
    #[test]
    fn a_small_circuit_of_and_and_xor_gates_computes_its_function() {
        let hash = GateHash::new();
        let mut rng = rand::rng();
        let delta = random_delta(&mut rng);
        for _ in 0..200 {
            let zero: [u128; 4] = core::array::from_fn(|_| rng.random());
            let bits: [bool; 4] = core::array::from_fn(|_| rng.random());
            let active: [u128; 4] = core::array::from_fn(|k| if bits[k] { zero[k] ^ delta } else { zero[k] });
            // out = (x0 ∧ x1) ⊕ (x2 ∧ (x3 ⊕ x0))
            let (r0, c0) = garble_one(&hash, delta, zero[0], zero[1], 7, rng.random());
            let (r1, c1) = garble_one(&hash, delta, zero[2], zero[3] ^ zero[0], 8, rng.random());
            let out0 = c0 ^ c1;
            let e0 = evaluate_one(&hash, active[0], active[1], 7, &r0);
            let e1 = evaluate_one(&hash, active[2], active[3] ^ active[0], 8, &r1);
            let decoded = ((e0 ^ e1) & 1) ^ (out0 & 1) == 1;
            assert_eq!(decoded, (bits[0] && bits[1]) ^ (bits[2] && (bits[3] ^ bits[0])));
        }
    }

    /// A changed row, control bit or gate number gives the evaluator a label that is neither
    /// of the output's (the engine's re-proof then catches the wrong decoding; here: the label
    /// is off).
    #[test]
    fn tampered_rows_or_a_wrong_gate_number_give_a_wrong_label() {
        let hash = GateHash::new();
        let mut rng = rand::rng();
        let delta = random_delta(&mut rng);
        let mut wrong = 0;
        for gate in 0..500u64 {
            let (a0, b0) = (rng.random::<u128>(), rng.random::<u128>());
            let (table, c0) = garble_one(&hash, delta, a0, b0, gate, rng.random());
            let (a, b) = (a0 ^ delta, b0);
            let good = evaluate_one(&hash, a, b, gate, &table);
            assert_eq!(good, c0);
            // z0 is read whatever the colours; each G row only for some of them
            let mut bad = table;
            bad.g = bad.g.map(|g| g ^ (1 << (gate % 64)));
            bad.z ^= 1;
            for (out, what) in [
                (evaluate_one(&hash, a, b, gate, &bad), "tampered"),
                (evaluate_one(&hash, a, b, gate + 1, &table), "renumbered"),
            ] {
                assert!(out != c0 && out != c0 ^ delta, "{what} gate {gate} still decodes");
                wrong += 1;
            }
        }
        assert_eq!(wrong, 1_000);
    }

    /// The control bits the evaluator recovers are uniform whatever the truth table's position:
    /// with the inputs fixed, each of its four (r1, r2) shows up about a quarter of the time.
    #[test]
    fn the_evaluators_control_bits_do_not_depend_on_the_permute_bits() {
        let hash = GateHash::new();
        let mut rng = rand::rng();
        let delta = random_delta(&mut rng);
        for colours in 0..4u8 {
            let mut seen = [0u32; 4];
            for gate in 0..4_000u64 {
                let (a0, b0) = (
                    (rng.random::<u128>() & !1) | u128::from(colours & 1),
                    (rng.random::<u128>() & !1) | u128::from(colours >> 1),
                );
                let (table, _) = garble_one(&hash, delta, a0, b0, gate, rng.random());
                let (a, b) = (a0, b0 ^ delta);
                let h = hash.hash(evaluator_hash_inputs(a, b), |k| evaluator_tweak(gate, k));
                let (r1, r2) = control_bits(table.z, (a & 1) as u8, (b & 1) as u8, h);
                seen[usize::from(2 * r1 + r2)] += 1;
            }
            assert!(seen.iter().all(|&n| (850..1150).contains(&n)), "permute bits {colours:02b}: {seen:?}");
        }
    }

    /// Tables survive their encoding for every count across a byte boundary, and the layout is
    /// the documented one: rows first, then the control bits packed LSB first.
    #[test]
    fn tables_round_trip_and_pack_their_control_bits() {
        let mut rng = rand::rng();
        for n in 0..=17 {
            let tables: Vec<Table> = (0..n).map(|_| Table { g: rng.random(), z: rng.random::<u8>() & 0x1f }).collect();
            let mut bytes = vec![0xee];
            encode_tables(&tables, &mut bytes);
            assert_eq!(bytes.len(), 1 + encoded_len(n));
            assert_eq!(tables_in(encoded_len(n)), Some(n));
            let mut back = Vec::new();
            assert_eq!(decode_tables(&bytes[1..], &mut back), Ok(n));
            assert_eq!(back, tables);
            // every padding bit, set alone, is refused
            for bit in 5 * n..8 * (encoded_len(n) - 24 * n) {
                let mut padded = bytes[1..].to_vec();
                padded[24 * n + bit / 8] |= 1 << (bit % 8);
                assert!(
                    matches!(decode_tables(&padded, &mut Vec::new()), Err(GcError::MalformedTables(_))),
                    "{n} tables, bit {bit}"
                );
            }
        }
        let two = [Table { g: [1, 2, 3], z: 0b10110 }, Table { g: [u64::MAX, 0, 1 << 63], z: 0b00011 }];
        let mut bytes = Vec::new();
        encode_tables(&two, &mut bytes);
        assert_eq!(&bytes[..8], &1u64.to_le_bytes());
        assert_eq!(&bytes[40..48], &(1u64 << 63).to_le_bytes());
        assert_eq!(&bytes[48..], &[0b0111_0110, 0b00]);
    }

    /// A length that no count of tables has, or a set padding bit, is refused.
    #[test]
    fn malformed_table_encodings_are_refused() {
        for len in [1, 23, 24, 26, 49, 100] {
            assert_eq!(tables_in(len), None, "{len} bytes");
            assert!(decode_tables(&vec![0; len], &mut Vec::new()).is_err(), "{len} bytes");
        }
        let mut bytes = Vec::new();
        encode_tables(&[Table::default(); 3], &mut bytes);
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() |= 1 << 7; // bit 15, after the 15 control bits
        assert!(matches!(decode_tables(&bad, &mut Vec::new()), Err(GcError::MalformedTables(_))));
        let mut ok = bytes.clone();
        *ok.last_mut().unwrap() |= 1 << 6; // the last control bit (z4 of the third table)
        assert_eq!(decode_tables(&ok, &mut Vec::new()), Ok(3));
    }
}
