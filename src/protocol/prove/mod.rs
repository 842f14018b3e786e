//! The transcript proofs, each written once and run by both parties in lockstep over the ZK
//! engine, and what the verifier checks of what they open: TLS 1.2 ([`tls12`]: the master
//! secret's key derivation, the keystream, tags) and TLS 1.3 ([`tls13`]: the key schedule from
//! the committed pad states, the records' inner types and padding).

pub mod statements;
pub mod tls12;
pub(crate) mod tls13;
