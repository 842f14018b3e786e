//! Bench output: one CSV row per sample, a summary of medians per case (CSV and a Markdown
//! table), and plots of the download sweep.

use super::config::{BenchCase, RevealRecv, Target};
use crate::protocol::disclose::output::SessionStats;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// One prover run as reported by the prover process (`tlsproof bench prover`) or the browser.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProverSample {
    /// Wall clock from opening the connection to the verdict, seconds.
    pub time_total: f64,
    /// Peak resident memory of the prover (native) or its wasm memory (browser), bytes.
    pub peak_memory: Option<u64>,
    pub verified: crate::protocol::VerifierOutput,
}

/// One sample: the case's parameters and what was measured. Times in seconds; bytes as seen
/// on the prover ↔ verifier link (up = prover → verifier).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleRow {
    pub group: String,
    pub target: Target,
    /// Proxy or MPC mode (samples written before the column existed were proxy mode).
    #[serde(default)]
    pub mode: super::config::Mode,
    pub tls_version: crate::protocol::messages::TlsVersion,
    /// The one TLS 1.3 suite offered, or `default` ([`BenchCase::cipher_suite`]).
    #[serde(default = "default_suite")]
    pub cipher_suite: String,
    pub profile: String,
    pub protocol_latency: f64,
    pub app_latency: f64,
    pub bandwidth: f64,
    pub upload_size: usize,
    pub download_size: usize,
    pub reveal_recv: RevealRecv,
    pub request_redaction: String,
    pub sample: usize,
    /// OT preprocessing (overlaps the online phase), as timed by the verifier.
    pub time_preprocess: f64,
    /// The TLS session through the verifier.
    pub time_online: f64,
    /// From the end of the TLS session to the verdict.
    pub time_prove: f64,
    /// The prover's wall clock, connect to verdict.
    pub time_total: f64,
    pub preprocess_up: u64,
    pub preprocess_down: u64,
    pub online_up: u64,
    pub online_down: u64,
    pub prove_up: u64,
    pub prove_down: u64,
    /// Everything on the wire (WebSocket framing included), from the link emulator's counters.
    pub wire_up: u64,
    pub wire_down: u64,
    pub peak_memory: Option<u64>,
    pub fast_path_recv: bool,
}

impl SampleRow {
    pub fn new(
        case: &BenchCase,
        sample: usize,
        prover: &ProverSample,
        stats: &SessionStats,
        wire: (u64, u64),
    ) -> SampleRow {
        SampleRow {
            group: case.group.clone(),
            target: case.target,
            mode: case.mode,
            tls_version: case.tls_version,
            cipher_suite: case.cipher_suite.clone(),
            profile: case.profile.clone(),
            protocol_latency: case.protocol_latency,
            app_latency: case.app_latency,
            bandwidth: case.bandwidth,
            upload_size: case.upload_size,
            download_size: case.download_size,
            reveal_recv: case.reveal_recv,
            request_redaction: case.request_redaction.clone(),
            sample,
            time_preprocess: stats.preprocess.millis / 1e3,
            time_online: stats.online.millis / 1e3,
            time_prove: stats.prove.millis / 1e3,
            time_total: prover.time_total,
            preprocess_up: stats.preprocess.bytes_up,
            preprocess_down: stats.preprocess.bytes_down,
            online_up: stats.online.bytes_up,
            online_down: stats.online.bytes_down,
            prove_up: stats.prove.bytes_up,
            prove_down: stats.prove.bytes_down,
            wire_up: wire.0,
            wire_down: wire.1,
            peak_memory: prover.peak_memory,
            fast_path_recv: prover.verified.received.fast_path,
        }
    }

    /// A progress line for the terminal.
    pub fn one_line(&self) -> String {
        format!(
            "  sample {:>2}: total {:.3} s (preprocess {:.3}, online {:.3}, prove {:.3}); up {} KB, down {} KB; peak {}",
            self.sample,
            self.time_total,
            self.time_preprocess,
            self.time_online,
            self.time_prove,
            self.wire_up / 1000,
            self.wire_down / 1000,
            self.peak_memory.map_or("n/a".into(), |m| format!("{} MB", m / 1_000_000)),
        )
    }

    /// Everything that identifies the case (not the sample).
    fn case_key(
        &self,
    ) -> (Target, super::config::Mode, String, String, String, u64, u64, u64, usize, usize, RevealRecv, String) {
        (
            self.target,
            self.mode,
            self.tls(),
            self.group.clone(),
            self.profile.clone(),
            self.protocol_latency.to_bits(),
            self.app_latency.to_bits(),
            self.bandwidth.to_bits(),
            self.upload_size,
            self.download_size,
            self.reveal_recv,
            self.request_redaction.clone(),
        )
    }

    /// The line in a plot this row belongs to (every parameter but the response size).
    pub fn series(&self) -> String {
        let label = super::config::series_label(&self.profile, self.reveal_recv, self.target);
        let label = match self.mode {
            super::config::Mode::Proxy => label,
            super::config::Mode::Mpc => format!("mpc {label}"),
        };
        match self.tls_version {
            crate::protocol::messages::TlsVersion::Tls12 => label,
            crate::protocol::messages::TlsVersion::Tls13 if self.cipher_suite == "default" => format!("tls1.3 {label}"),
            crate::protocol::messages::TlsVersion::Tls13 => {
                format!("tls1.3 {} {label}", self.cipher_suite.to_lowercase())
            }
        }
    }

    /// The TLS column: the version, and the suite when one was asked for.
    fn tls(&self) -> String {
        match self.cipher_suite.as_str() {
            "default" => self.tls_version.as_str().to_string(),
            suite => format!("{} {suite}", self.tls_version.as_str()),
        }
    }
}

fn default_suite() -> String {
    "default".into()
}

const SAMPLE_HEADER: &str = "group,target,tls_version,profile,protocol_latency_ms,app_latency_ms,bandwidth_mbps,upload_size,download_size,reveal_recv,request_redaction,sample,time_preprocess,time_online,time_prove,time_total,preprocess_up,preprocess_down,online_up,online_down,prove_up,prove_down,wire_up,wire_down,peak_memory,fast_path_recv,cipher_suite,mode";

fn name<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// The samples as CSV.
pub(crate) fn samples_csv(rows: &[SampleRow]) -> String {
    let mut out = format!("{SAMPLE_HEADER}\n");
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{:.4},{:.4},{:.4},{:.4},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.group,
            name(&r.target),
            r.tls_version.as_str(),
            r.profile,
            r.protocol_latency,
            r.app_latency,
            r.bandwidth,
            r.upload_size,
            r.download_size,
            name(&r.reveal_recv),
            r.request_redaction,
            r.sample,
            r.time_preprocess,
            r.time_online,
            r.time_prove,
            r.time_total,
            r.preprocess_up,
            r.preprocess_down,
            r.online_up,
            r.online_down,
            r.prove_up,
            r.prove_down,
            r.wire_up,
            r.wire_down,
            r.peak_memory.map_or(String::new(), |m| m.to_string()),
            r.fast_path_recv,
            r.cipher_suite,
            r.mode.as_str(),
        );
    }
    out
}

/// Medians of one case.
#[derive(Clone, Debug)]
pub struct CaseSummary {
    pub first: SampleRow,
    pub samples: usize,
    pub time_preprocess: f64,
    pub time_online: f64,
    pub time_prove: f64,
    pub time_total: f64,
    pub wire_up: f64,
    pub wire_down: f64,
    pub peak_memory: Option<u64>,
}

pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Groups the samples by case (in first-seen order) and takes medians.
pub fn summarize(rows: &[SampleRow]) -> Vec<CaseSummary> {
    let mut keys = Vec::new();
    let mut groups: Vec<Vec<&SampleRow>> = Vec::new();
    for r in rows {
        let k = r.case_key();
        match keys.iter().position(|x| *x == k) {
            Some(i) => groups[i].push(r),
            None => {
                keys.push(k);
                groups.push(vec![r]);
            }
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let m = |f: fn(&SampleRow) -> f64| median(g.iter().map(|r| f(r)).collect());
            CaseSummary {
                first: g[0].clone(),
                samples: g.len(),
                time_preprocess: m(|r| r.time_preprocess),
                time_online: m(|r| r.time_online),
                time_prove: m(|r| r.time_prove),
                time_total: m(|r| r.time_total),
                wire_up: m(|r| r.wire_up as f64),
                wire_down: m(|r| r.wire_down as f64),
                peak_memory: g.iter().filter_map(|r| r.peak_memory).max(),
            }
        })
        .collect()
}

pub(crate) fn summary_csv(summaries: &[CaseSummary]) -> String {
    let mut out = String::from("group,target,tls_version,profile,protocol_latency_ms,bandwidth_mbps,upload_size,download_size,reveal_recv,samples,median_time_preprocess,median_time_online,median_time_prove,median_time_total,median_wire_up,median_wire_down,max_peak_memory,cipher_suite,mode\n");
    for s in summaries {
        let r = &s.first;
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{:.4},{:.4},{:.4},{:.4},{:.0},{:.0},{},{},{}",
            r.group,
            name(&r.target),
            r.tls_version.as_str(),
            r.profile,
            r.protocol_latency,
            r.bandwidth,
            r.upload_size,
            r.download_size,
            name(&r.reveal_recv),
            s.samples,
            s.time_preprocess,
            s.time_online,
            s.time_prove,
            s.time_total,
            s.wire_up,
            s.wire_down,
            s.peak_memory.map_or(String::new(), |m| m.to_string()),
            r.cipher_suite,
            r.mode.as_str(),
        );
    }
    out
}

/// The summary as a Markdown table (for docs/benchmarks.md).
pub fn summary_markdown(summaries: &[CaseSummary]) -> String {
    let mut out = String::from(
        "| target | mode | TLS | profile | response | reveal | total (s) | preprocess | online | prove | up (KB) | down (KB) | peak mem (MB) | n |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for s in summaries {
        let r = &s.first;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.0} KB | {} | **{:.3}** | {:.3} | {:.3} | {:.3} | {:.0} | {:.0} | {} | {} |",
            name(&r.target),
            r.mode.as_str(),
            r.tls(),
            r.profile,
            r.download_size as f64 / 1024.0,
            r.reveal_recv.describe(),
            s.time_total,
            s.time_preprocess,
            s.time_online,
            s.time_prove,
            s.wire_up / 1000.0,
            s.wire_down / 1000.0,
            s.peak_memory.map_or("n/a".into(), |m| format!("{:.0}", m as f64 / 1e6)),
            s.samples,
        );
    }
    out
}

/// Writes samples.csv, summary.csv and summary.md of `summaries` into `dir`; returns what it
/// wrote.
pub(crate) fn write_tables(
    dir: &Path,
    rows: &[SampleRow],
    summaries: &[CaseSummary],
) -> Result<Vec<String>, std::io::Error> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (file, text) in [
        ("samples.csv", samples_csv(rows)),
        ("summary.csv", summary_csv(summaries)),
        ("summary.md", summary_markdown(summaries)),
    ] {
        std::fs::write(dir.join(file), text)?;
        written.push(file.to_string());
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(vec![]).is_nan());
    }

    /// The same case in both modes is two summaries, each mode named in every table.
    #[test]
    fn the_modes_are_told_apart_in_the_samples_the_summaries_and_the_series() {
        let row = |mode: &str, sample: usize, total: f64| -> SampleRow {
            serde_json::from_value(serde_json::json!({
                "group": "g", "target": "native", "mode": mode, "tls_version": "1.2", "profile": "local",
                "protocol_latency": 0.0, "app_latency": 0.0, "bandwidth": 0.0, "upload_size": 1024,
                "download_size": 1024, "reveal_recv": "all", "request_redaction": "authorization",
                "sample": sample, "time_preprocess": 0.1, "time_online": 0.1, "time_prove": 0.1,
                "time_total": total, "preprocess_up": 1, "preprocess_down": 1, "online_up": 1,
                "online_down": 1, "prove_up": 1, "prove_down": 1, "wire_up": 1, "wire_down": 1,
                "peak_memory": null, "fast_path_recv": true,
            }))
            .unwrap()
        };
        let rows = [row("proxy", 0, 1.0), row("mpc", 0, 5.0), row("proxy", 1, 2.0), row("mpc", 1, 7.0)];
        let summaries = summarize(&rows);
        let medians: Vec<_> = summaries.iter().map(|s| (s.first.mode, s.samples, s.time_total)).collect();
        use super::super::config::Mode;
        assert_eq!(medians, [(Mode::Proxy, 2, 1.5), (Mode::Mpc, 2, 6.0)]);
        assert!(samples_csv(&rows).lines().nth(2).unwrap().ends_with(",default,mpc"));
        assert!(summary_csv(&summaries).lines().nth(1).unwrap().ends_with(",proxy"));
        assert!(summary_markdown(&summaries).contains("| native | mpc | 1.2 | local | 1 KB |"));
        assert_ne!(rows[0].series(), rows[1].series());
    }
}
