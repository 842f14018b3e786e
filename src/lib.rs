//! tlsproof — prove to a verifier that bytes really came from a TLS server, from a browser
//! (Rust compiled to multithreaded WebAssembly) or natively.
//!
//! The crate is one package with a native side (verifier, WebSocket-to-TCP proxy, local HTTPS
//! fixture, CLI) and a browser side (the wasm prover). Protocol logic is sans-IO so the same code
//! runs on both; tokio and web-sys live only at the edges ([`transport`], the CLI, [`wasm`]).
//!
//! The public API is re-exported at the root: the prover ([`notarize`], [`notarize_exchanges`]
//! for several requests, [`ProverConfig`]), the
//! verifier ([`VerifierServer`], [`VerifierConfig`], [`VerifierOutput`]), what is revealed
//! ([`RevealConfig`], [`Reveal`]) and signed attestations ([`Attestation`], [`Presentation`]).
//! The public modules are [`protocol`], [`attestation`], [`tls`], [`http`], [`transport`],
//! [`proxy`], [`fixture`] and [`wasm`] (the browser package's exports). The engines (`zk`, `ot`,
//! `mpc`, `circuits`, `primitives`), `channel`, `wire`, `cost` and `bench` are public only for
//! the CLI's benchmarks, the integration tests and the examples, which drive them directly:
//! they are hidden from the docs and are no stable interface. The rest of the crate is
//! `pub(crate)`.
//!
//! ```no_run
//! # #[cfg(not(target_arch = "wasm32"))]
//! # async fn demo() -> Result<(), tlsproof::transport::TransportError> {
//! use tlsproof::transport::WsStream;
//! // A byte stream to a TCP target through `tlsproof proxy`.
//! let mut s = WsStream::connect("ws://127.0.0.1:9000/?target=127.0.0.1:4443").await?;
//! s.write_all(b"hello").await?;
//! s.shutdown_write().await?;
//! let reply = s.read_to_end(1 << 20).await?;
//! # Ok(()) }
//! ```

// The browser build is the prover: the verifier's side of modules both roles share (the
// checks of what a proof opens, the TLS 1.3 transcript's reading, the COTs served beside a
// connection) is dead code there.
#![cfg_attr(target_arch = "wasm32", allow(dead_code))]

/// Signed attestations and the presentations a third party checks offline.
pub use attestation::{
    Attestation, AttestationSecrets, Presentation, PresentationError, Scheme, SignedAttestation, SigningKey,
    VerifiedPresentation, VerifyingKey,
};
/// The prover: notarize a session with a verifier.
pub use protocol::{
    notarize, notarize_exchanges, notarize_with_progress, ExchangePlan, Phase, Progress, ProverConfig, ProverError,
    ProverMode, ProverOutput,
};
/// The verifier: its configuration and its WebSocket server.
#[cfg(not(target_arch = "wasm32"))]
pub use protocol::{
    server::{SessionReport, VerifierServer},
    VerifierConfig, VerifierError,
};
/// What is revealed to the verifier, and what it concluded.
pub use protocol::{ProvenStatement, Reveal, RevealConfig, Statement, VerifiedDirection, VerifierOutput};

pub mod attestation;
// Hidden: public for the CLI, the integration tests and the examples only (see above).
#[doc(hidden)]
pub mod bench;
#[doc(hidden)]
pub mod channel;
#[doc(hidden)]
pub mod circuits;
#[doc(hidden)]
pub mod cost;
#[cfg(not(target_arch = "wasm32"))]
pub mod fixture;
pub(crate) mod gc;
pub mod http;
#[doc(hidden)]
pub mod mpc;
#[doc(hidden)]
pub mod ot;
#[doc(hidden)]
pub mod primitives;
pub mod protocol;
#[cfg(not(target_arch = "wasm32"))]
pub mod proxy;
pub mod tls;
pub mod transport;
pub mod wasm;
#[doc(hidden)]
pub mod wire;
#[doc(hidden)]
pub mod zk;
