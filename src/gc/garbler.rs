//! The garbler: holds Δ and every wire's zero label, emits one three-halves table per AND gate.

use super::hash::{concat, part, GateHash};
use super::lanes::{AndBatch, LANES};
use super::three_halves;
use super::{public_and, GcError, GcStats, Table, TableSink, Wire};
use crate::circuits::Gates;
use crate::ot::ct::bit_mask;
use crate::primitives::prg::{Prg, PrgKind};
use rand::RngCore;
use zeroize::{Zeroize, Zeroizing};

/// Garbles circuits gate by gate into `sink`. Fresh input labels come from a PRG under a
/// secret seed; Δ is secret with lsb(Δ) = 1 (point-and-permute).
pub(crate) struct Garbler<S> {
    delta: Zeroizing<u128>,
    labels: Prg,
    next_label: u128,
    hash: GateHash,
    /// An S-box layer's hash inputs, hashed in place: labels and Δ, wiped on drop.
    xs: Zeroizing<[u128; 6 * LANES]>,
    gate: u64,
    /// Dicing bits of 64 gates (two a gate): the label PRG's block [`RHO_BLOCKS`] + `gate / 64`,
    /// which one. A function of the gate index, so that garbling a gate again (phases garbled
    /// ahead, then replayed) gives the same table and output label.
    rho: Zeroizing<u128>,
    rho_block: Option<u64>,
    sink: S,
    stats: GcStats,
}

/// Where the label PRG's blocks for dicing bits start: labels count from 0 and never get there
/// (gate indices are below 2^64).
const RHO_BLOCKS: u128 = 1 << 127;

impl<S: TableSink> Garbler<S> {
    /// A garbler with a fresh random Δ and label seed.
    pub(crate) fn new(sink: S) -> Self {
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
    pub(crate) fn with_secrets(delta: u128, seed: &[u8; 16], sink: S) -> Self {
        Garbler {
            delta: Zeroizing::new(delta | 1),
            labels: PrgKind::fastest_here().keyed(seed),
            next_label: 0,
            hash: GateHash::new(),
            xs: Zeroizing::new([0; 6 * LANES]),
            gate: 0,
            rho: Zeroizing::new(0),
            rho_block: None,
            sink,
            stats: GcStats::default(),
        }
    }

    /// The global offset Δ (lsb set): for the COT sender that must share it.
    pub(crate) fn delta(&self) -> u128 {
        *self.delta
    }

    pub(crate) fn stats(&self) -> GcStats {
        self.stats
    }

    /// The sink, e.g. to flush a stream after the last gate.
    pub(crate) fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    pub(crate) fn into_sink(self) -> S {
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
    pub(crate) fn garbler_inputs(&mut self, values: &[bool]) -> (Vec<Wire>, Vec<u128>) {
        let wires = self.reserve_inputs(values.len());
        let send = self.active_labels(&wires, values);
        (wires, send)
    }

    /// Wires for `n` input bits whose values come later: circuits can be garbled over them
    /// before anyone knows their values (garbling ahead).
    pub(crate) fn reserve_inputs(&mut self, n: usize) -> Vec<Wire> {
        self.fresh_labels(n).into_iter().map(Wire::Label).collect()
    }

    /// The labels of `values` on `wires` from [`Self::reserve_inputs`] (labels all: a public
    /// wire, which has none, gets 0).
    pub(crate) fn active_labels(&self, wires: &[Wire], values: &[bool]) -> Vec<u128> {
        wires
            .iter()
            .zip(values)
            .map(|(w, &v)| match *w {
                Wire::Label(zero) => zero ^ (bit_mask(v) & *self.delta),
                Wire::Public(_) => 0,
            })
            .collect()
    }

    /// The index of the next AND gate (its hash tweaks are 3i, 3i + 1 and 3i + 2).
    pub(crate) fn gate_index(&self) -> u64 {
        self.gate
    }

    /// Continues at gate `i`: the caller keeps the ranges of gate indices it garbles under
    /// this Δ apart, so that no tweak is used twice.
    pub(crate) fn set_gate_index(&mut self, i: u64) {
        self.gate = i;
    }

    /// Wires for the evaluator's input bits, delivered through random correlated OT under this
    /// Δ: for COT key K_i the evaluator holds K_i ⊕ c_i·Δ for a random c_i and sent
    /// e_i = x_i ⊕ c_i; the answer W⁰_i ⊕ K_i ⊕ e_i·Δ gives it W⁰_i ⊕ x_i·Δ.
    /// The corrections come from the evaluator: a count other than the keys' is an error.
    pub(crate) fn evaluator_inputs(
        &mut self,
        cot_keys: &[u128],
        corrections: &[bool],
    ) -> Result<(Vec<Wire>, Vec<u128>), GcError> {
        if cot_keys.len() != corrections.len() {
            return Err(GcError::CountMismatch {
                what: "input corrections",
                expected: cot_keys.len(),
                got: corrections.len(),
            });
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
    pub(crate) fn decoding(&self, wires: &[Wire]) -> Vec<bool> {
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
            (Wire::Label(l), Wire::Public(v)) | (Wire::Public(v), Wire::Label(l)) => {
                Wire::Label(l ^ (bit_mask(v) & *self.delta))
            }
            (Wire::Label(x), Wire::Label(y)) => Wire::Label(x ^ y),
        }
    }

    fn and(&mut self, a: Wire, b: Wire) -> Wire {
        let (a0, b0) = match public_and(a, b) {
            Ok(out) => return out,
            Err(labels) => labels,
        };
        let d = *self.delta;
        let (gate, rho) = self.next_gate();
        let h = self.hash.hash(three_halves::garbler_hash_inputs(d, a0, b0), |k| three_halves::garbler_tweak(gate, k));
        let (table, c0) = three_halves::garble(d, a0, b0, h, rho);
        self.sink.push(table);
        Wire::Label(c0)
    }
}

impl<S: TableSink> Garbler<S> {
    /// The next AND gate's index and its two dicing bits.
    fn next_gate(&mut self) -> (u64, u8) {
        let gate = self.gate;
        let block = gate / 64;
        if self.rho_block != Some(block) {
            let mut bits = [0u128];
            self.labels.fill_u128(RHO_BLOCKS + u128::from(block), &mut bits);
            *self.rho = bits[0];
            self.rho_block = Some(block);
        }
        let rho = (*self.rho >> (2 * (gate % 64))) as u8 & 3;
        self.gate += 1;
        self.stats.and_gates += 1;
        (gate, rho)
    }
}

impl<S: TableSink> AndBatch for Garbler<S> {
    #[inline]
    fn public_label(&self, v: bool) -> u128 {
        bit_mask(v) & *self.delta
    }

    fn and_two_labels(&mut self, [(a0, b0), (a1, b1)]: [(u128, u128); 2]) -> [u128; 2] {
        let d = *self.delta;
        // two consecutive gates: their twelve tweaks run on from the first's
        let ((g, rho0), (_, rho1)) = (self.next_gate(), self.next_gate());
        let x = concat(three_halves::garbler_hash_inputs(d, a0, b0), three_halves::garbler_hash_inputs(d, a1, b1));
        let h = self.hash.hash::<12>(x, |k| three_halves::garbler_tweak(g, k));
        let (tab0, c0) = three_halves::garble(d, a0, b0, part(&h, 0), rho0);
        let (tab1, c1) = three_halves::garble(d, a1, b1, part(&h, 6), rho1);
        self.sink.push(tab0);
        self.sink.push(tab1);
        [c0, c1]
    }

    fn and_labels(&mut self, pairs: &[(u128, u128)], out: &mut [u128]) {
        debug_assert!(pairs.len() <= LANES && out.len() == pairs.len());
        let d = *self.delta;
        let first = self.gate;
        // six hashes per gate, in gate order, then the gates' dicing bits
        let mut rho = [0u8; LANES];
        for (k, &(a0, b0)) in pairs.iter().enumerate() {
            let r = self.next_gate().1;
            let x = three_halves::garbler_hash_inputs(d, a0, b0);
            self.xs[6 * k..6 * k + 6].copy_from_slice(&x);
            rho[k] = r;
        }
        let (n, m) = (pairs.len(), 6 * pairs.len());
        self.hash.hash_in_place(&mut self.xs[..m], |k| three_halves::garbler_tweak(first, k));
        let mut tables = [Table::default(); LANES];
        three_halves::garble_layer(d, pairs, &self.xs[..m], &rho[..n], &mut tables[..n], out);
        for table in tables[..n].iter() {
            self.sink.push(*table);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dicing bits hide each gate's truth table only if they are uniform and secret: each of
    /// the four values about a quarter of the time, another seed other bits, and the same gate
    /// index the same bits (a replayed phase).
    #[test]
    fn dicing_bits_are_uniform_per_seed_and_fixed_per_gate() {
        let dicing = |seed: [u8; 16], first: u64| {
            let mut g = Garbler::with_secrets(1, &seed, Vec::new());
            g.set_gate_index(first);
            (0..4096).map(|_| g.next_gate().1).collect::<Vec<u8>>()
        };
        let bits = dicing([1; 16], 0);
        let mut seen = [0u32; 4];
        for &r in &bits {
            seen[usize::from(r)] += 1;
        }
        assert!(seen.iter().all(|&n| (880..1170).contains(&n)), "{seen:?}");
        assert_ne!(bits, dicing([2; 16], 0));
        assert_eq!(bits[100..], dicing([1; 16], 100)[..4096 - 100]);
    }
}
