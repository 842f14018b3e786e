//! Two-party share conversion for MPC mode (docs/protocol.md, "MPC mode"): oblivious linear
//! evaluation (OLE) from correlated OT (Gilboa, CRYPTO 1999) over GF(2^128) and over GF(p) of
//! P-256; on it the conversions between multiplicative and additive shares that the two-party
//! GHASH needs, and the two-party ECDH that gives additive shares of the premaster secret.
//!
//! All of it is the semi-honest protocol: the checks that catch a party using inconsistent
//! inputs (the post-hoc ZK proof for the prover, the swapped-roles rerun for the verifier) are
//! not built.

pub mod ecdh;
pub mod fp;
pub mod ole;
