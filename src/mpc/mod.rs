//! Two-party share conversion for MPC mode (docs/protocol.md, "MPC mode"): oblivious linear
//! evaluation (OLE) from correlated OT (Gilboa, CRYPTO 1999) over GF(2^128) and over the base
//! fields of P-256 ([`fp`]) and Curve25519 ([`f25519`]); on it the conversions between
//! multiplicative and additive shares that the two-party GHASH needs ([`ghash`]: shares of
//! every power of H, then of a record's tag), and the two-party ECDH that gives additive shares
//! of the premaster secret, on P-256 ([`ecdh`]) and on Curve25519 ([`x25519`]); the AES-GCM record
//! layer over key wires neither party reads ([`record`]); with the key derivation, the end
//! of a handshake in two parties ([`handshake`]).
//!
//! Computations over circuits are written once as [`phases`] and run garbled during the
//! session ([`garbled`]) and as a ZK proof after it, which catches a garbler that garbled
//! anything else; the first of them is the TLS 1.2 key derivation ([`kdf`]). The prover is the
//! OLE sender throughout and nothing is opened to it, which is why the share conversions need
//! no proof of their own ([`ecdh`]).

/// `+`, `-`, `*` and unary `-` for a prime-field newtype over an element type that has them.
macro_rules! field_ops {
    ($t:ident) => {
        impl core::ops::Add for $t {
            type Output = $t;
            fn add(self, o: $t) -> $t {
                $t(self.0 + o.0)
            }
        }
        impl core::ops::Sub for $t {
            type Output = $t;
            fn sub(self, o: $t) -> $t {
                $t(self.0 - o.0)
            }
        }
        impl core::ops::Mul for $t {
            type Output = $t;
            fn mul(self, o: $t) -> $t {
                $t(self.0 * o.0)
            }
        }
        impl core::ops::Neg for $t {
            type Output = $t;
            fn neg(self) -> $t {
                $t(-self.0)
            }
        }
    };
}
use field_ops;

pub(crate) mod chacha_record;
pub(crate) mod connection;
pub(crate) mod cots_beside;
pub(crate) mod ecdh;
pub(crate) mod f1305;
pub(crate) mod f25519;
pub(crate) mod fp;
pub(crate) mod garbled;
pub(crate) mod ghash;
pub(crate) mod handshake;
pub(crate) mod kdf;
pub(crate) mod kdf13;
pub mod ole;
pub(crate) mod phases;
pub(crate) mod poly1305;
pub(crate) mod record;
pub mod reproof;
pub(crate) mod script;
pub(crate) mod sealing;
pub(crate) mod shared_secret;
pub(crate) mod x25519;

#[cfg(test)]
mod tests;
