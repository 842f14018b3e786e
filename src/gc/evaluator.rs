//! The evaluator: holds one label per wire and learns nothing from it until the garbler sends
//! a wire's decoding bit.

use super::hash::GateHash;
use super::lanes::AndBatch;
use super::{lsb_mask, public_and, GcError, GcStats, Table, TableSource, Wire};
use crate::circuits::Gates;

/// Evaluates garbled circuits gate by gate, taking each AND gate's tables from `source`. A
/// source that runs dry or is malformed is recorded (gates then yield dummy labels) and
/// reported by [`Evaluator::check`]: circuits are straight-line code without error paths.
pub struct Evaluator<S> {
    hash: GateHash,
    gate: u64,
    source: S,
    error: Option<GcError>,
    stats: GcStats,
}

impl<S: TableSource> Evaluator<S> {
    pub fn new(source: S) -> Self {
        Evaluator { hash: GateHash::new(), gate: 0, source, error: None, stats: GcStats::default() }
    }

    pub fn stats(&self) -> GcStats {
        self.stats
    }

    /// The first failure since the evaluator was made (tables missing or malformed).
    pub fn check(&self) -> Result<(), GcError> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Continues at gate `i`, where the garbler says the next circuit's gates start.
    pub fn set_gate_index(&mut self, i: u64) {
        self.gate = i;
    }

    pub fn source_mut(&mut self) -> &mut S {
        &mut self.source
    }

    /// Wires for the garbler's input bits from the labels it sent.
    pub fn garbler_inputs(&self, labels: &[u128]) -> Vec<Wire> {
        labels.iter().map(|&l| Wire::Label(l)).collect()
    }

    /// The corrections e_i = x_i ⊕ c_i to send the garbler for the input bits `values`, given
    /// random COT choices c_i (see [`super::Garbler::evaluator_inputs`]).
    pub fn input_corrections(values: &[bool], cot_choices: &[bool]) -> Vec<bool> {
        assert_eq!(values.len(), cot_choices.len(), "one COT per input bit");
        values.iter().zip(cot_choices).map(|(x, c)| x ^ c).collect()
    }

    /// Wires for the evaluator's own input bits: the COT MACs K_i ⊕ c_i·Δ plus the garbler's
    /// answers W⁰_i ⊕ K_i ⊕ e_i·Δ.
    pub fn evaluator_inputs(&self, cot_macs: &[u128], answers: &[u128]) -> Result<Vec<Wire>, GcError> {
        if cot_macs.len() != answers.len() {
            return Err(GcError::CountMismatch { what: "input labels", expected: cot_macs.len(), got: answers.len() });
        }
        Ok(cot_macs.iter().zip(answers).map(|(m, a)| Wire::Label(m ^ a)).collect())
    }

    /// The values of `wires` under the garbler's decoding bits.
    pub fn decode(&self, wires: &[Wire], decoding: &[bool]) -> Result<Vec<bool>, GcError> {
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
        let j = self.next_tweak();
        let table = self.next_table();
        Wire::Label(eval_gate(wa, wb, self.hash.hash([wa, wb], [j, j + 1]), table))
    }
}

/// One half-gates AND from the active labels, their hashes H(W_a, j), H(W_b, j+1) and the
/// gate's table.
#[inline(always)]
pub(super) fn eval_gate(wa: u128, wb: u128, [ha, hb]: [u128; 2], [tg, te]: Table) -> u128 {
    let wg = ha ^ (lsb_mask(wa) & tg);
    let we = hb ^ (lsb_mask(wb) & (te ^ wa));
    wg ^ we
}

impl<S: TableSource> Evaluator<S> {
    fn next_tweak(&mut self) -> u128 {
        let j = 2 * u128::from(self.gate);
        self.gate += 1;
        self.stats.and_gates += 1;
        j
    }

    /// The next table, or zeros after recording why there is none.
    fn next_table(&mut self) -> Table {
        self.source.pull().unwrap_or_else(|e| {
            self.error.get_or_insert(e);
            [0, 0]
        })
    }
}

impl<S: TableSource> AndBatch for Evaluator<S> {
    fn and_two_labels(&mut self, [(a0, b0), (a1, b1)]: [(u128, u128); 2]) -> [u128; 2] {
        let (j, k) = (self.next_tweak(), self.next_tweak());
        let h = self.hash.hash([a0, b0, a1, b1], [j, j + 1, k, k + 1]);
        let (t0, t1) = (self.next_table(), self.next_table());
        [eval_gate(a0, b0, [h[0], h[1]], t0), eval_gate(a1, b1, [h[2], h[3]], t1)]
    }

    fn and_batch(&mut self, pairs: &[(Wire, Wire)], out: &mut Vec<Wire>) {
        out.clear();
        let mut gates = Vec::with_capacity(pairs.len());
        let mut xs = Vec::with_capacity(2 * pairs.len());
        let mut tweaks = Vec::with_capacity(2 * pairs.len());
        for &(a, b) in pairs {
            match public_and(a, b) {
                Ok(w) => out.push(w),
                Err((wa, wb)) => {
                    let j = self.next_tweak();
                    gates.push((out.len(), wa, wb));
                    out.push(Wire::Public(false));
                    xs.extend([wa, wb]);
                    tweaks.extend([j, j + 1]);
                }
            }
        }
        self.hash.hash_in_place(&mut xs, &tweaks);
        for (&(at, wa, wb), h) in gates.iter().zip(xs.chunks_exact(2)) {
            let table = self.next_table();
            out[at] = Wire::Label(eval_gate(wa, wb, [h[0], h[1]], table));
        }
    }
}
