//! `tlsproof bench`: the reference's download sweep, run for real under an emulated network.
//!
//! A TOML [`config`] expands into cases; for each the [`runner`] starts a [`Testbed`] (fixture
//! server, verifier, and a shaped link ([`netem`]) in front of each), then runs the samples —
//! real notarizations of a fixed [`workload`], each verdict checked against what was sent —
//! and [`report`] writes CSV, a Markdown summary and plots.

pub mod config;
pub mod load;
pub mod netem;
pub mod plot;
pub mod report;
pub mod runner;
pub mod workload;

pub use config::{BenchCase, ConfigError};
pub use runner::{BenchError, RunOptions, Testbed};
