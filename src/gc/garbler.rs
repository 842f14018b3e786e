//! The garbler: holds Δ and every wire's zero label, emits two ciphertexts per AND gate.

use super::hash::GateHash;
use super::lanes::AndBatch;
use super::{lsb_mask, public_and, GcError, GcStats, Table, TableSink, Wire};
use crate::circuits::Gates;
use crate::ot::ct::bit_mask;
use crate::primitives::prg::{Prg, PrgKind};
use rand::RngCore;
use zeroize::{Zeroize, Zeroizing};

/// Garbles circuits gate by gate into `sink`. Fresh input labels come from a PRG under a
/// secret seed; Δ is secret with lsb(Δ) = 1 (point-and-permute).
pub struct Garbler<S> {
    delta: Zeroizing<u128>,
    labels: Prg,
    next_label: u128,
    hash: GateHash,
    gate: u64,
    sink: S,
    stats: GcStats,
}

impl<S: TableSink> Garbler<S> {
    /// A garbler with a fresh random Δ and label seed.
    pub fn new(sink: S) -> Self {
        let mut seed = [0u8; 16];
        let mut delta = [0u8; 16];
        let mut rng = rand::rng();
        rng.fill_bytes(&mut seed);
        rng.fill_bytes(&mut delta);
        let g = Self::with_secrets(u128::from_le_bytes(delta), &seed, sink);
        seed.zeroize();
        delta.zeroize();
        g
    }

    /// A garbler with the given Δ (its low bit is set here) and label seed: Δ must equal the
    /// correlation of the COT that delivers the evaluator's input labels.
    pub fn with_secrets(delta: u128, seed: &[u8; 16], sink: S) -> Self {
        Garbler {
            delta: Zeroizing::new(delta | 1),
            labels: PrgKind::fastest_here().keyed(seed),
            next_label: 0,
            hash: GateHash::new(),
            gate: 0,
            sink,
            stats: GcStats::default(),
        }
    }

    /// The global offset Δ (lsb set): for the COT sender that must share it.
    pub fn delta(&self) -> u128 {
        *self.delta
    }

    pub fn stats(&self) -> GcStats {
        self.stats
    }

    /// The sink, e.g. to flush a stream after the last gate.
    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    pub fn into_sink(self) -> S {
        self.sink
    }

    fn fresh_labels(&mut self, n: usize) -> Vec<u128> {
        let mut out = vec![0u128; n];
        self.labels.fill_u128(self.next_label, &mut out);
        self.next_label += n as u128;
        out
    }

    /// Wires for the garbler's own input bits, and the labels to send the evaluator (the
    /// value-v label of each: uniformly random whatever v is, so they reveal nothing).
    pub fn garbler_inputs(&mut self, values: &[bool]) -> (Vec<Wire>, Vec<u128>) {
        let wires = self.reserve_inputs(values.len());
        let send = self.active_labels(&wires, values);
        (wires, send)
    }

    /// Wires for `n` input bits whose values come later: circuits can be garbled over them
    /// before anyone knows their values (garbling ahead).
    pub fn reserve_inputs(&mut self, n: usize) -> Vec<Wire> {
        self.fresh_labels(n).into_iter().map(Wire::Label).collect()
    }

    /// The labels of `values` on `wires` from [`Self::reserve_inputs`] (labels all: a public
    /// wire, which has none, gets 0).
    pub fn active_labels(&self, wires: &[Wire], values: &[bool]) -> Vec<u128> {
        wires
            .iter()
            .zip(values)
            .map(|(w, &v)| match *w {
                Wire::Label(zero) => zero ^ (bit_mask(v) & *self.delta),
                Wire::Public(_) => 0,
            })
            .collect()
    }

    /// The index of the next AND gate (its hash tweaks are 2i and 2i + 1).
    pub fn gate_index(&self) -> u64 {
        self.gate
    }

    /// Continues at gate `i`: the caller keeps the ranges of gate indices it garbles under
    /// this Δ apart, so that no tweak is used twice.
    pub fn set_gate_index(&mut self, i: u64) {
        self.gate = i;
    }

    /// Wires for the evaluator's input bits, delivered through random correlated OT under this
    /// Δ: for COT key K_i the evaluator holds K_i ⊕ c_i·Δ for a random c_i and sent
    /// e_i = x_i ⊕ c_i; the answer W⁰_i ⊕ K_i ⊕ e_i·Δ gives it W⁰_i ⊕ x_i·Δ.
    /// The corrections come from the evaluator: a count other than the keys' is an error.
    pub fn evaluator_inputs(&mut self, cot_keys: &[u128], corrections: &[bool]) -> Result<(Vec<Wire>, Vec<u128>), GcError> {
        if cot_keys.len() != corrections.len() {
            return Err(GcError::CountMismatch { what: "input corrections", expected: cot_keys.len(), got: corrections.len() });
        }
        let zeros = self.fresh_labels(cot_keys.len());
        let send = zeros
            .iter()
            .zip(cot_keys.iter().zip(corrections))
            .map(|(w, (k, &e))| w ^ k ^ (bit_mask(e) & *self.delta))
            .collect();
        Ok((zeros.into_iter().map(Wire::Label).collect(), send))
    }

    /// What the evaluator needs to decode these wires: each label's permute bit (the value of
    /// a public wire itself).
    pub fn decoding(&self, wires: &[Wire]) -> Vec<bool> {
        wires
            .iter()
            .map(|w| match *w {
                Wire::Public(v) => v,
                Wire::Label(l) => l & 1 == 1,
            })
            .collect()
    }
}

impl<S: TableSink> Gates for Garbler<S> {
    type Bit = Wire;

    #[inline]
    fn xor(&self, a: Wire, b: Wire) -> Wire {
        match (a, b) {
            (Wire::Public(x), Wire::Public(y)) => Wire::Public(x ^ y),
            (Wire::Label(l), Wire::Public(v)) | (Wire::Public(v), Wire::Label(l)) => Wire::Label(l ^ (bit_mask(v) & *self.delta)),
            (Wire::Label(x), Wire::Label(y)) => Wire::Label(x ^ y),
        }
    }

    /// Half-gates: a garbler half gate (the garbler knows the permute bit of b) and an
    /// evaluator half gate (the evaluator knows b ⊕ p_b), XORed.
    fn and(&mut self, a: Wire, b: Wire) -> Wire {
        let (a0, b0) = match public_and(a, b) {
            Ok(out) => return out,
            Err(labels) => labels,
        };
        let d = *self.delta;
        let j = self.next_tweak();
        let h = self.hash.hash([a0, a0 ^ d, b0, b0 ^ d], [j, j, j + 1, j + 1]);
        let (table, c0) = garble_gate(d, a0, b0, h);
        self.sink.push(table);
        Wire::Label(c0)
    }
}

/// One half-gates AND: from the zero labels of a and b and the hashes H(A⁰, j), H(A¹, j),
/// H(B⁰, j+1), H(B¹, j+1), the table (T_G, T_E) and the output's zero label.
#[inline(always)]
pub(super) fn garble_gate(d: u128, a0: u128, b0: u128, [ha0, ha1, hb0, hb1]: [u128; 4]) -> (Table, u128) {
    let tg = ha0 ^ ha1 ^ (lsb_mask(b0) & d);
    let wg0 = ha0 ^ (lsb_mask(a0) & tg);
    let te = hb0 ^ hb1 ^ a0;
    let we0 = hb0 ^ (lsb_mask(b0) & (te ^ a0));
    ([tg, te], wg0 ^ we0)
}

impl<S: TableSink> Garbler<S> {
    /// The tweak of the next AND gate (it also takes the next one).
    fn next_tweak(&mut self) -> u128 {
        let j = 2 * u128::from(self.gate);
        self.gate += 1;
        self.stats.and_gates += 1;
        j
    }
}

impl<S: TableSink> AndBatch for Garbler<S> {
    fn and_two_labels(&mut self, [(a0, b0), (a1, b1)]: [(u128, u128); 2]) -> [u128; 2] {
        let d = *self.delta;
        let (j, k) = (self.next_tweak(), self.next_tweak());
        let h = self.hash.hash([a0, a0 ^ d, b0, b0 ^ d, a1, a1 ^ d, b1, b1 ^ d], [j, j, j + 1, j + 1, k, k, k + 1, k + 1]);
        let (t0, c0) = garble_gate(d, a0, b0, [h[0], h[1], h[2], h[3]]);
        let (t1, c1) = garble_gate(d, a1, b1, [h[4], h[5], h[6], h[7]]);
        self.sink.push(t0);
        self.sink.push(t1);
        [c0, c1]
    }

    fn and_batch(&mut self, pairs: &[(Wire, Wire)], out: &mut Vec<Wire>) {
        out.clear();
        let d = *self.delta;
        // Four hashes per gate of two labels, in gate order.
        let mut gates = Vec::with_capacity(pairs.len());
        let mut xs = Vec::with_capacity(4 * pairs.len());
        let mut tweaks = Vec::with_capacity(4 * pairs.len());
        for &(a, b) in pairs {
            match public_and(a, b) {
                Ok(w) => out.push(w),
                Err((a0, b0)) => {
                    let j = self.next_tweak();
                    gates.push((out.len(), a0, b0));
                    out.push(Wire::Public(false));
                    xs.extend([a0, a0 ^ d, b0, b0 ^ d]);
                    tweaks.extend([j, j, j + 1, j + 1]);
                }
            }
        }
        self.hash.hash_in_place(&mut xs, &tweaks);
        for (&(at, a0, b0), h) in gates.iter().zip(xs.chunks_exact(4)) {
            let (table, c0) = garble_gate(d, a0, b0, [h[0], h[1], h[2], h[3]]);
            self.sink.push(table);
            out[at] = Wire::Label(c0);
        }
        xs.zeroize();
    }
}
