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

/// Bits on the wire for one AND gate: three 64-bit half-rows and five control bits.
pub const BITS_PER_AND: usize = 3 * 64 + 5;

/// The garbled rows of one AND gate: what the garbler sends for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Table {
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
/// S2 = (A_L ⊕ B_R, A_R ⊕ B_L ⊕ B_R). Returns (left, right).
#[inline(always)]
fn combination(i: u8, j: u8, r1: u8, r2: u8, a: u128, b: u128) -> [u64; 2] {
    let (al, ar, bl, br) = (a as u64, (a >> 64) as u64, b as u64, (b >> 64) as u64);
    let (x1, x2, x3) = (al ^ ar ^ bl, al ^ br, ar ^ bl ^ br);
    [(mask(i ^ 1) & bl) ^ (mask(r1) & x1) ^ (mask(r2) & x2), (mask(j ^ 1) & ar) ^ (mask(r1) & x2) ^ (mask(r2) & x3)]
}

fn tweaks(gate: u64) -> [u128; 3] {
    let k = 3 * u128::from(gate);
    [k, k + 1, k + 2]
}

#[inline(always)]
fn half(h: u128) -> u64 {
    h as u64
}

#[inline(always)]
fn control(h: u128) -> u8 {
    (h >> 64) as u8 & 1
}

/// The garbler's six hash calls for gate number `gate` over the zero labels `a0`, `b0`: the
/// inputs A, A ⊕ Δ, B, B ⊕ Δ, A ⊕ B, A ⊕ B ⊕ Δ (A, B the colour-0 labels) and their tweaks.
#[inline(always)]
pub fn garbler_hash_inputs(delta: u128, a0: u128, b0: u128, gate: u64) -> ([u128; 6], [u128; 6]) {
    let (a, b) = colour_zero(delta, a0, b0);
    let [ta, tb, tx] = tweaks(gate);
    ([a, a ^ delta, b, b ^ delta, a ^ b, a ^ b ^ delta], [ta, ta, tb, tb, tx, tx])
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
pub fn garble(delta: u128, a0: u128, b0: u128, h: [u128; 6], rho: u8) -> (Table, u128) {
    debug_assert_eq!(delta & 1, 1, "lsb(Δ) must be 1");
    let dmask = |bit: u8| 0u128.wrapping_sub(u128::from(bit & 1)) & delta;
    // the colour-0 labels, and the colours (α, β) of the pair whose output is 1
    let (a, b) = colour_zero(delta, a0, b0);
    let (alpha, beta) = ((a0 & 1) as u8 ^ 1, (b0 & 1) as u8 ^ 1);
    let (ha, hb, hx) = ([h[0], h[1]], [h[2], h[3]], [h[4], h[5]]);
    let (rho1, rho2) = (rho & 1, (rho >> 1) & 1);
    let (dl, dr) = (delta as u64, (delta >> 64) as u64);
    // the target halves T_ij and control bits τ_ij for each colour pair, indexed 2i + j
    let mut t = [[0u64; 2]; 4];
    let mut tau = [[0u8; 2]; 4];
    for i in 0..2u8 {
        for j in 0..2u8 {
            let ij = usize::from(2 * i + j);
            let d = i ^ j;
            let r1 = rho1 ^ (i & alpha) ^ (d & (alpha ^ beta));
            let r2 = rho2 ^ (j & beta) ^ (d & (alpha ^ beta));
            let on = !(i ^ alpha) & !(j ^ beta) & 1;
            let [cl, cr] = combination(i, j, r1, r2, a ^ dmask(i), b ^ dmask(j));
            let (hai, hbj, hxd) = (ha[usize::from(i)], hb[usize::from(j)], hx[usize::from(d)]);
            t[ij] = [cl ^ (mask(on) & dl) ^ half(hai) ^ half(hxd), cr ^ (mask(on) & dr) ^ half(hbj) ^ half(hxd)];
            tau[ij] = [r1 ^ control(hai) ^ control(hxd), r2 ^ control(hbj) ^ control(hxd)];
        }
    }
    // the left inverse of the evaluator's map (C, G) ↦ C ⊕ W_ij·G over the four pairs
    let (t00, t01, t10, t11) = (t[0], t[1], t[2], t[3]);
    let g = [t00[0] ^ t00[1] ^ t10[0] ^ t10[1], t00[0] ^ t00[1] ^ t01[0] ^ t01[1], t10[0] ^ t11[0]];
    let (u00, u01, u10, u11) = (tau[0], tau[1], tau[2], tau[3]);
    let z = [u00[0], u00[1], u00[0] ^ u00[1] ^ u10[0] ^ u10[1], u00[0] ^ u00[1] ^ u01[0] ^ u01[1], u10[0] ^ u11[0]];
    let z = z.iter().enumerate().fold(0u8, |acc, (n, &bit)| acc | (bit << n));
    let c0 = u128::from(t00[0]) | (u128::from(t00[1]) << 64);
    (Table { g, z }, c0)
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

/// The evaluator's three hash calls for gate number `gate` on the active labels `a`, `b`: the
/// inputs A, B, A ⊕ B and their tweaks.
#[inline(always)]
pub fn evaluator_hash_inputs(a: u128, b: u128, gate: u64) -> ([u128; 3], [u128; 3]) {
    ([a, b, a ^ b], tweaks(gate))
}

/// Evaluates an AND gate on the active labels `a`, `b`, the hashes of
/// [`evaluator_hash_inputs`]' inputs in that order, and the garbler's `table`: the output's zero
/// label, or it ⊕ Δ when both inputs are 1.
#[inline(always)]
pub fn evaluate(a: u128, b: u128, [ha, hb, hx]: [u128; 3], table: &Table) -> u128 {
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
pub const fn encoded_len(n: usize) -> usize {
    24 * n + (5 * n).div_ceil(8)
}

/// The number of tables whose encoding is `len` bytes long, if there is one.
pub fn tables_in(len: usize) -> Option<usize> {
    // 8·len lies in [197n, 197n + 7] for the n that fits
    let n = 8 * len / BITS_PER_AND;
    (encoded_len(n) == len).then_some(n)
}

/// Appends the encoding of `tables` to `out`. Control bits go eight tables (40 bits, five
/// bytes) at a time.
pub fn encode_tables(tables: &[Table], out: &mut Vec<u8>) {
    let at = out.len();
    out.resize(at + encoded_len(tables.len()), 0);
    let (rows, bits) = out[at..].split_at_mut(24 * tables.len());
    for (r, t) in rows.chunks_exact_mut(24).zip(tables) {
        for (dst, g) in r.chunks_exact_mut(8).zip(t.g) {
            dst.copy_from_slice(&g.to_le_bytes());
        }
    }
    for (dst, eight) in bits.chunks_mut(5).zip(tables.chunks(8)) {
        let acc = eight.iter().enumerate().fold(0u64, |acc, (k, t)| acc | (u64::from(t.z & 0x1f) << (5 * k)));
        let len = dst.len();
        dst.copy_from_slice(&acc.to_le_bytes()[..len]);
    }
}

/// Checks that `bytes` is a whole encoding of tables (see [`tables_in`]) with its padding bits
/// clear; returns how many tables it holds.
pub fn check_encoding(bytes: &[u8]) -> Result<usize, GcError> {
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
pub fn table_at(bytes: &[u8], n: usize, k: usize) -> Table {
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
pub fn decode_tables(bytes: &[u8], out: &mut Vec<Table>) -> Result<usize, GcError> {
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
        let (x, t) = garbler_hash_inputs(delta, a0, b0, gate);
        garble(delta, a0, b0, hash.hash(x, t), rho)
    }

    /// Gate number `gate`, evaluated with its own hash call.
    fn evaluate_one(hash: &GateHash, a: u128, b: u128, gate: u64, table: &Table) -> u128 {
        let (x, t) = evaluator_hash_inputs(a, b, gate);
        evaluate(a, b, hash.hash(x, t), table)
    }

    fn random_delta(rng: &mut impl RngCore) -> u128 {
        rng.random::<u128>() | 1
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
            for (out, what) in [(evaluate_one(&hash, a, b, gate, &bad), "tampered"), (evaluate_one(&hash, a, b, gate + 1, &table), "renumbered")] {
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
                let (a0, b0) = ((rng.random::<u128>() & !1) | u128::from(colours & 1), (rng.random::<u128>() & !1) | u128::from(colours >> 1));
                let (table, _) = garble_one(&hash, delta, a0, b0, gate, rng.random());
                let (a, b) = (a0, b0 ^ delta);
                let [ta, tb, tx] = tweaks(gate);
                let (r1, r2) = control_bits(table.z, (a & 1) as u8, (b & 1) as u8, hash.hash([a, b, a ^ b], [ta, tb, tx]));
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
                assert!(matches!(decode_tables(&padded, &mut Vec::new()), Err(GcError::MalformedTables(_))), "{n} tables, bit {bit}");
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
