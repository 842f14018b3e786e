//! The evaluator: holds one label per wire and learns nothing from it until the garbler sends
//! a wire's decoding bit.

use super::hash::{concat, part, GateHash};
use super::lanes::{AndBatch, LANES};
use super::three_halves;
use super::{public_and, GcError, GcStats, Table, TableSource, Wire};
use crate::circuits::Gates;

/// Evaluates garbled circuits gate by gate, taking each AND gate's tables from `source`. A
/// source that runs dry or is malformed is recorded (gates then yield dummy labels) and
/// reported by [`Evaluator::check`]: circuits are straight-line code without error paths.
pub(crate) struct Evaluator<S> {
    hash: GateHash,
    gate: u64,
    source: S,
    error: Option<GcError>,
    stats: GcStats,
}

impl<S: TableSource> Evaluator<S> {
    pub(crate) fn new(source: S) -> Self {
        Evaluator { hash: GateHash::new(), gate: 0, source, error: None, stats: GcStats::default() }
    }

    pub(crate) fn stats(&self) -> GcStats {
        self.stats
    }

    /// The first failure since the evaluator was made (tables missing or malformed).
    pub(crate) fn check(&self) -> Result<(), GcError> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Continues at gate `i`, where the garbler says the next circuit's gates start.
    pub(crate) fn set_gate_index(&mut self, i: u64) {
        self.gate = i;
    }

    pub(crate) fn source_mut(&mut self) -> &mut S {
        &mut self.source
    }

    /// Wires for the garbler's input bits from the labels it sent.
    pub(crate) fn garbler_inputs(&self, labels: &[u128]) -> Vec<Wire> {
        labels.iter().map(|&l| Wire::Label(l)).collect()
    }

    /// The corrections e_i = x_i ⊕ c_i to send the garbler for the input bits `values`, given
    /// random COT choices c_i (see [`super::Garbler::evaluator_inputs`]).
    #[cfg(test)]
    pub(crate) fn input_corrections(values: &[bool], cot_choices: &[bool]) -> Vec<bool> {
        assert_eq!(values.len(), cot_choices.len(), "one COT per input bit");
        values.iter().zip(cot_choices).map(|(x, c)| x ^ c).collect()
    }

    /// Wires for the evaluator's own input bits: the COT MACs K_i ⊕ c_i·Δ plus the garbler's
    /// answers W⁰_i ⊕ K_i ⊕ e_i·Δ.
    pub(crate) fn evaluator_inputs(&self, cot_macs: &[u128], answers: &[u128]) -> Result<Vec<Wire>, GcError> {
        if cot_macs.len() != answers.len() {
            return Err(GcError::CountMismatch { what: "input labels", expected: cot_macs.len(), got: answers.len() });
        }
        Ok(cot_macs.iter().zip(answers).map(|(m, a)| Wire::Label(m ^ a)).collect())
    }

    /// The values of `wires` under the garbler's decoding bits.
    pub(crate) fn decode(&self, wires: &[Wire], decoding: &[bool]) -> Result<Vec<bool>, GcError> {
        if wires.len() != decoding.len() {
            return Err(GcError::CountMismatch { what: "decoding bits", expected: wires.len(), got: decoding.len() });
        }
        Ok(wires
            .iter()
            .zip(decoding)
            .map(|(w, &d)| match *w {
                Wire::Public(v) => v,
                Wire::Label(l) => (l & 1 == 1) ^ d,
            })
            .collect())
    }
}

impl<S: TableSource> Gates for Evaluator<S> {
    type Bit = Wire;

    #[inline]
    fn xor(&self, a: Wire, b: Wire) -> Wire {
        match (a, b) {
            (Wire::Public(x), Wire::Public(y)) => Wire::Public(x ^ y),
            // The garbler flips the zero label instead: the active label stays.
            (Wire::Label(l), Wire::Public(_)) | (Wire::Public(_), Wire::Label(l)) => Wire::Label(l),
            (Wire::Label(x), Wire::Label(y)) => Wire::Label(x ^ y),
        }
    }

    fn and(&mut self, a: Wire, b: Wire) -> Wire {
        let (wa, wb) = match public_and(a, b) {
            Ok(out) => return out,
            Err(labels) => labels,
        };
        let gate = self.next_gate();
        let table = self.next_table();
        let h = self.hash.hash(three_halves::evaluator_hash_inputs(wa, wb), |k| three_halves::evaluator_tweak(gate, k));
        Wire::Label(three_halves::evaluate(wa, wb, h, &table))
    }
}

impl<S: TableSource> Evaluator<S> {
    fn next_gate(&mut self) -> u64 {
        let gate = self.gate;
        self.gate += 1;
        self.stats.and_gates += 1;
        gate
    }

    /// The next table, or an empty one after recording why there is none.
    fn next_table(&mut self) -> Table {
        self.source.pull().unwrap_or_else(|e| {
            self.error.get_or_insert(e);
            Table::default()
        })
    }
}

impl<S: TableSource> AndBatch for Evaluator<S> {
    #[inline]
    fn public_label(&self, _: bool) -> u128 {
        0
    }

    fn and_two_labels(&mut self, [(a0, b0), (a1, b1)]: [(u128, u128); 2]) -> [u128; 2] {
        // two consecutive gates: their six tweaks run on from the first's
        let (g, _) = (self.next_gate(), self.next_gate());
        let x = concat(three_halves::evaluator_hash_inputs(a0, b0), three_halves::evaluator_hash_inputs(a1, b1));
        let h = self.hash.hash::<6>(x, |k| three_halves::evaluator_tweak(g, k));
        let (tab0, tab1) = (self.next_table(), self.next_table());
        [three_halves::evaluate(a0, b0, part(&h, 0), &tab0), three_halves::evaluate(a1, b1, part(&h, 3), &tab1)]
    }

    fn and_labels(&mut self, pairs: &[(u128, u128)], out: &mut [u128]) {
        debug_assert!(pairs.len() <= LANES && out.len() == pairs.len());
        let first = self.gate;
        // three hashes per gate, in gate order
        let mut xs = [0u128; 3 * LANES];
        for (k, &(wa, wb)) in pairs.iter().enumerate() {
            self.next_gate();
            xs[3 * k..3 * k + 3].copy_from_slice(&three_halves::evaluator_hash_inputs(wa, wb));
        }
        let m = 3 * pairs.len();
        self.hash.hash_in_place(&mut xs[..m], |k| three_halves::evaluator_tweak(first, k));
        for (k, (&(wa, wb), c)) in pairs.iter().zip(out.iter_mut()).enumerate() {
            let table = self.next_table();
            *c = three_halves::evaluate(wa, wb, part(&xs[..], 3 * k), &table);
        }
    }
}
