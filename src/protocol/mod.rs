//! The prover–verifier session protocol, both modes (see docs/protocol.md).
//!
//! One WebSocket carries three channels ([`crate::wire::mux`]): control messages ([`messages`]),
//! the TLS bytes the verifier relays to the server in proxy mode
//! ([`crate::wire::tls_channel`]), and the ZK
//! engine's traffic (in MPC mode also the two-party connection's, [`crate::mpc::connection`]).
//! The proof ([`proof`]) is written once and run by both sides; [`check`] is what the verifier
//! does with the openings; [`output`] is the verdict.

#[cfg(all(test, not(target_arch = "wasm32")))]
mod cheating_prover;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod cheating_garbler;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod lying_witness;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod test_bed;
pub mod attest;
pub mod check;
pub mod check13;
pub mod exchange;
pub mod messages;
pub mod output;
pub mod proof;
pub mod proof13;
pub mod prover;
#[cfg(not(target_arch = "wasm32"))]
pub mod relay_guard;
pub mod reveal;
pub mod target;
pub mod transcript;
pub mod transcript13;
#[cfg(not(target_arch = "wasm32"))]
pub mod verifier;
#[cfg(not(target_arch = "wasm32"))]
pub mod server;

pub use output::{VerifiedDirection, VerifierOutput};
pub use prover::{notarize, notarize_with_progress, Phase, Progress, ProverConfig, ProverError, ProverMode, ProverOutput};
pub use reveal::{Reveal, RevealConfig};
#[cfg(not(target_arch = "wasm32"))]
pub use verifier::{verify_session, VerifierConfig, VerifierError};
