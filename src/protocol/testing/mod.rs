//! Whole-session tests of the verifier's soundness: cheating provers and garblers, and a
//! prover whose witness lies, over a shared test bed.

mod cheating_garbler;
mod cheating_prover;
mod lying_witness;
mod test_bed;
