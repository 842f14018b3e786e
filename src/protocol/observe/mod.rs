//! The verifier's reading of the TLS it relays (proxy mode) or holds a copy of (MPC mode):
//! records split and bounded, the handshake checked against what the verifier allows, the
//! server's certificate and key-exchange signature validated, and, while relaying, the guard
//! that keeps the relay from being a general TCP pipe.

#[cfg(not(target_arch = "wasm32"))]
pub mod relay_guard;
pub mod tls12;
pub(crate) mod tls13;
