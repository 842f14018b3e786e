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

/// Writes a run's results into `dir`: samples.csv, summary.csv, summary.md and the plots;
/// returns what it wrote.
#[cfg(not(target_arch = "wasm32"))]
pub fn write_results(
    dir: &std::path::Path,
    rows: &[report::SampleRow],
) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let summaries = report::summarize(rows);
    let mut written = report::write_tables(dir, rows, &summaries)?;
    written.extend(plot::write_plots(dir, &summaries)?);
    Ok(written)
}
