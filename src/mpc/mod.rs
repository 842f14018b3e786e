//! Two-party share conversion for MPC mode (docs/protocol.md, "MPC mode"): oblivious linear
//! evaluation (OLE) from correlated OT (Gilboa, CRYPTO 1999) over GF(2^128) and over GF(p) of
//! P-256; on it the conversions between multiplicative and additive shares that the two-party
//! GHASH needs ([`ghash`]: shares of every power of H, then of a record's tag), and the
//! two-party ECDH that gives additive shares of the premaster secret; the AES-GCM record
//! layer over key wires neither party reads ([`record`]); with the key derivation, the end
//! of a handshake in two parties ([`handshake`]).
//!
//! Computations over circuits are written once as [`phases`] and run garbled during the
//! session ([`garbled`]) and as a ZK proof after it, which catches a garbler that garbled
//! anything else; the first of them is the TLS 1.2 key derivation ([`kdf`]). The prover is the
//! OLE sender throughout and nothing is opened to it, which is why the share conversions need
//! no proof of their own ([`ecdh`]).

pub(crate) mod connection;
pub(crate) mod cots_beside;
pub(crate) mod ecdh;
pub(crate) mod fp;
pub(crate) mod garbled;
pub(crate) mod ghash;
pub(crate) mod handshake;
pub(crate) mod kdf;
pub mod ole;
pub(crate) mod phases;
pub(crate) mod record;
pub mod reproof;
pub(crate) mod script;

#[cfg(test)]
mod tests;
