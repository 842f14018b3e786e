//! The prover–verifier session protocol (proxy mode first).

pub mod mux;
