//! Two-party share conversion for MPC mode: oblivious linear evaluation (OLE) over GF(2^128)
//! from correlated OT (Gilboa, CRYPTO 1999), and on it the conversions between multiplicative
//! and additive shares that the two-party GHASH needs (docs/protocol.md, "MPC mode").
//!
//! Built so far: the OLE and the two conversions, semi-honest; the consistency check that
//! catches a party using inconsistent OLE inputs is part of the post-hoc proof and is not built
//! yet, nor are the OLE over the P-256 base field and the 2PC ECDH on it.

pub mod ole;
