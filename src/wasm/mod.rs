//! The browser API (wasm-bindgen). Threaded code must run in a Web Worker: the main thread
//! cannot block, which rayon needs. The npm package (`js/`) wraps this in a worker of its own.
//!
//! [`options`] holds the option and result types, free of wasm-bindgen so they are tested
//! natively; the bindings themselves are wasm-only.

pub mod options;

#[cfg(all(target_arch = "wasm32", feature = "bench-exports"))]
mod bench;
#[cfg(target_arch = "wasm32")]
mod js;
#[cfg(all(target_arch = "wasm32", feature = "bench-exports"))]
pub use bench::{bench_mpc, bench_zk};
#[cfg(target_arch = "wasm32")]
pub use js::*;
