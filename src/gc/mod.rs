//! Garbled circuits: free-XOR with three-halves garbling (Rosulek–Roy, CRYPTO 2021), 197 bits
//! per AND gate ([`three_halves`]), hashed with fixed-key AES ([`hash`]). The garbler
//! ([`Garbler`]) and the evaluator ([`Evaluator`]) are two more [`crate::circuits::Circuit`]
//! backends, so every circuit in [`crate::circuits`] (AES-128, SHA-256, HMAC, the TLS PRF) runs
//! in a garbled circuit unchanged. Roles, inputs, outputs and the security argument:
//! docs/protocol.md, "MPC mode: the two-party engine".
//!
//! Gates are streamed: the garbler's AND gate hands its table to a [`TableSink`], the
//! evaluator's takes it from a [`TableSource`]; [`stream`] moves them in bounded chunks, so
//! neither side ever holds a whole circuit.
//!
//! Labels: the garbler holds a zero label W⁰ per wire and the global offset Δ (lsb(Δ) = 1), the
//! value-v label being W⁰ ⊕ v·Δ; the evaluator holds one label per wire, whose low bit is its
//! value masked by the permute bit lsb(W⁰). Gate i uses the hash tweaks 3i, 3i + 1 and 3i + 2,
//! and the gate counter runs on across circuits, so no tweak is used twice under one Δ.

pub(crate) mod evaluator;
pub(crate) mod garbler;
pub(crate) mod hash;
mod lanes;
pub(crate) mod stream;
pub(crate) mod three_halves;

#[cfg(test)]
mod tests;

pub(crate) use evaluator::Evaluator;
pub(crate) use garbler::Garbler;

/// A wire of a garbled circuit: a public constant (free, known to both sides) or a label (the
/// garbler's zero label, or the evaluator's active label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    Public(bool),
    Label(u128),
}

pub(crate) use three_halves::Table;

/// Where the garbler's AND gates put their tables.
pub(crate) trait TableSink {
    fn push(&mut self, table: Table);
}

/// Where the evaluator's AND gates take their tables from, in order.
pub(crate) trait TableSource {
    /// The next table, or why there is none (the garbler sent fewer, or sent garbage).
    fn pull(&mut self) -> Result<Table, GcError>;
}

/// Tables kept in memory (tests, small circuits).
impl TableSink for Vec<Table> {
    #[inline]
    fn push(&mut self, table: Table) {
        Vec::push(self, table);
    }
}

/// Tables from memory, in order.
impl TableSource for std::vec::IntoIter<Table> {
    #[inline]
    fn pull(&mut self) -> Result<Table, GcError> {
        self.next().ok_or(GcError::MissingTables)
    }
}

/// Why a garbled computation failed on the evaluator's side.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GcError {
    #[error("the garbler sent fewer gate tables than the circuit has AND gates")]
    MissingTables,
    #[error("the garbler's gate tables are malformed: {0}")]
    MalformedTables(&'static str),
    #[error("{what}: expected {expected}, got {got}")]
    CountMismatch { what: &'static str, expected: usize, got: usize },
}

/// Gates garbled or evaluated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GcStats {
    /// AND gates with two non-public inputs (each one table).
    pub and_gates: u64,
}

/// An AND gate with a public input costs nothing: `Ok` with its output, or `Err` with the two
/// labels when both inputs are labels (a table is needed).
#[inline(always)]
fn public_and(a: Wire, b: Wire) -> Result<Wire, (u128, u128)> {
    match (a, b) {
        (Wire::Public(x), other) | (other, Wire::Public(x)) => Ok(if x { other } else { Wire::Public(false) }),
        (Wire::Label(x), Wire::Label(y)) => Err((x, y)),
    }
}
