//! The prover–verifier session protocol, both modes (see docs/protocol.md).
//!
//! One WebSocket carries three channels ([`crate::wire::mux`]): control messages ([`messages`]),
//! the TLS bytes the verifier relays to the server in proxy mode
//! ([`crate::wire::tls_channel`]), and the ZK engine's traffic (in MPC mode also the two-party
//! connection's, [`crate::mpc::connection`]).
//!
//! Below the two roles ([`prover`], [`verifier`] and its WebSocket [`server`]), each step of a
//! session has its folder: [`observe`] is the verifier's reading of the relayed TLS (records,
//! handshake policy, the server's identity, the relay's guard), [`prove`] the transcript proofs
//! written once and run by both sides with what the verifier checks of their openings, and
//! [`disclose`] what is revealed and how the verdict and its attestation state it. [`target`]
//! is the server a session names; [`admission`] what a session costs the verifier and when it
//! may run.

#[cfg(not(target_arch = "wasm32"))]
pub mod admission;
pub mod disclose;
pub mod messages;
pub mod observe;
pub mod prove;
pub mod prover;
#[cfg(not(target_arch = "wasm32"))]
pub mod server;
pub mod target;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod testing;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod verifier;

pub use disclose::output::{ProvenStatement, VerifiedDirection, VerifierOutput};
pub use disclose::reveal::{Reveal, RevealConfig};
pub use disclose::statement::{Direction, Statement};
pub use prover::{
    notarize, notarize_exchanges, notarize_with_progress, ExchangePlan, Phase, Progress, ProverConfig, ProverError,
    ProverMode, ProverOutput,
};
#[cfg(not(target_arch = "wasm32"))]
pub use verifier::{preprocess_limit, VerifierConfig, VerifierError};
