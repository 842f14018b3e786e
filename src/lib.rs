//! tlsproof — prove to a verifier that bytes really came from a TLS server, from a browser
//! (Rust compiled to multithreaded WebAssembly) or natively.
//!
//! The crate is one package with a native side (verifier, WebSocket-to-TCP proxy, local HTTPS
//! fixture, CLI) and a browser side (the wasm prover). Protocol logic is sans-IO so the same code
//! runs on both; tokio and web-sys live only at the edges ([`transport`], the CLI, [`wasm`]).
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

pub mod attestation;
pub mod channel;
pub mod circuits;
pub mod cost;
pub mod gc;
pub mod http;
pub mod mpc;
pub mod ot;
pub mod primitives;
pub mod protocol;
pub mod tls;
pub mod transport;
pub mod wire;
pub mod zk;

pub mod bench;
#[cfg(not(target_arch = "wasm32"))]
pub mod fixture;
#[cfg(not(target_arch = "wasm32"))]
pub mod proxy;

pub mod wasm;
