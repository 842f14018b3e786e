//! `tlsproof bench`: the reference's download sweep, run for real under an emulated network,
//! the verifier under load, and the engines alone.
//!
//! A TOML [`config`] expands into cases; for each the [`runner`] starts a [`Testbed`] (fixture
//! server, verifier, and a shaped link ([`netem`]) in front of each), then runs the samples —
//! real notarizations of a fixed [`workload`], each verdict checked against what was sent —
//! and [`report`] writes CSV, a Markdown summary and plots. [`load`] runs many provers and
//! hostile clients against one verifier process. [`engines`] times the ZK and garbled-circuit
//! engines and MPC mode's key exchange, natively and in the browser (the only part of this
//! module built for wasm).

pub mod engines;

#[cfg(not(target_arch = "wasm32"))]
pub mod config;
#[cfg(not(target_arch = "wasm32"))]
pub mod load;
#[cfg(not(target_arch = "wasm32"))]
pub mod netem;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod plot;
#[cfg(not(target_arch = "wasm32"))]
pub mod report;
#[cfg(not(target_arch = "wasm32"))]
pub mod runner;
#[cfg(not(target_arch = "wasm32"))]
pub mod workload;

#[cfg(not(target_arch = "wasm32"))]
pub use config::{BenchCase, ConfigError};
#[cfg(not(target_arch = "wasm32"))]
pub use runner::{BenchError, RunOptions, Testbed};
