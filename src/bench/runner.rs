//! Runs cases: a testbed per case (fixture, verifier, shaped links), then the samples, each a
//! real notarization whose verdict is checked — a failed or wrong session stops the run.

use super::config::{BenchCase, Target};
use super::netem::{LinkShape, ShapedRelay};
pub use super::report::ProverSample;
use super::report::SampleRow;
use super::workload::{Workload, WorkloadError, SERVER_NAME};
use crate::fixture::{FixtureServer, KeyType};
use crate::protocol::server::{SessionReport, VerifierServer};
use crate::protocol::{ProverConfig, VerifierConfig, VerifierOutput};
use crate::proxy::AllowList;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Longest a single sample may take before the bench gives up on it.
pub const SAMPLE_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("fixture: {0}")]
    Fixture(#[from] crate::fixture::FixtureError),
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    #[error("{case}, sample {sample}: the prover failed: {message}")]
    ProverFailed { case: String, sample: usize, message: String },
    #[error("{case}, sample {sample}: the verifier rejected the session: {message}")]
    Rejected { case: String, sample: usize, message: String },
    #[error("{case}, sample {sample}: no verdict from the verifier within {secs} s")]
    NoVerdict { case: String, sample: usize, secs: u64 },
    #[error("{case}, sample {sample}: {source}")]
    WrongVerdict { case: String, sample: usize, source: WorkloadError },
    #[error("browser: {0}")]
    Browser(String),
    #[error("{0}")]
    Other(String),
}

/// A running fixture + verifier with shaped links in front of both, for one case; in MPC mode
/// also the prover's proxy, which reaches the server over the link the verifier would use in
/// proxy mode.
pub struct Testbed {
    /// Where the prover connects (`ws://…/`), behind the prover ↔ verifier link.
    pub verifier_url: String,
    /// `SERVER_NAME:PORT` the prover names (the verifier, or in MPC mode the proxy, dials the
    /// certified name); behind the server's link.
    pub server: String,
    /// MPC mode: the proxy's `ws://…/`.
    pub proxy_url: Option<String>,
    pub ca_pem: String,
    reports: mpsc::UnboundedReceiver<SessionReport>,
    /// Verifier ↔ server, prover ↔ verifier.
    relays: [ShapedRelay; 2],
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Testbed {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl Testbed {
    pub async fn start(case: &BenchCase) -> Result<Testbed, BenchError> {
        let fixture = FixtureServer::bind("127.0.0.1:0".parse().expect("literal"), KeyType::EcdsaP256, 30).await?;
        let fixture_addr = fixture.local_addr()?;
        let ca_pem = fixture.certs.ca_pem.clone();
        let mut tasks = vec![tokio::spawn(fixture.run())];

        let app = LinkShape::from_rtt(case.app_latency, case.app_bandwidth);
        let app_relay = ShapedRelay::start(fixture_addr, app, app)?;
        let server = format!("{SERVER_NAME}:{}", app_relay.local_addr().port());

        let allow = AllowList::parse(&server).map_err(|e| BenchError::Other(e.to_string()))?;
        let proxy_url = match case.mode {
            super::config::Mode::Proxy => None,
            super::config::Mode::Mpc => {
                let proxy = crate::proxy::ProxyServer::bind(
                    "127.0.0.1:0".parse().expect("literal"),
                    crate::proxy::ProxyConfig { allow: allow.clone(), ..Default::default() },
                )
                .await?;
                let url = format!("ws://{}/", proxy.local_addr()?);
                tasks.push(tokio::spawn(proxy.run()));
                Some(url)
            }
        };
        let roots = crate::tls::RootStore::from_pem(&ca_pem).map_err(|e| BenchError::Other(e.to_string()))?;
        let mut config = VerifierConfig::new(allow, roots);
        config.max_recv = config.max_recv.max(super::config::MAX_DOWNLOAD as u32 + 4096);
        let verifier = VerifierServer::bind("127.0.0.1:0".parse().expect("literal"), config).await?;
        let verifier_addr = verifier.local_addr()?;
        let (report_tx, reports) = mpsc::unbounded_channel();
        tasks.push(tokio::spawn(verifier.run(report_tx)));

        let protocol = LinkShape::from_rtt(case.protocol_latency, case.bandwidth);
        let protocol_relay = ShapedRelay::start(verifier_addr, protocol, protocol)?;
        let verifier_url = format!("ws://{}/", protocol_relay.local_addr());
        Ok(Testbed { verifier_url, server, proxy_url, ca_pem, reports, relays: [app_relay, protocol_relay], tasks })
    }

    /// Bytes (up, down) that crossed the prover ↔ verifier link so far.
    pub fn protocol_traffic(&self) -> (u64, u64) {
        let t = self.relays[1].traffic();
        (t.up.load(Ordering::Relaxed), t.down.load(Ordering::Relaxed))
    }

    /// The verifier's verdict on the next session.
    pub async fn next_verdict(&mut self, case: &BenchCase, sample: usize) -> Result<VerifierOutput, BenchError> {
        let secs = 30;
        match tokio::time::timeout(Duration::from_secs(secs), self.reports.recv()).await {
            Ok(Some((_, Ok(out)))) => Ok(out),
            Ok(Some((_, Err(e)))) => Err(BenchError::Rejected { case: case.series(), sample, message: e.to_string() }),
            _ => Err(BenchError::NoVerdict { case: case.series(), sample, secs }),
        }
    }
}

/// Runs `case` natively: each sample is a fresh `tlsproof bench prover` process (so its peak
/// memory is the prover's alone).
pub(crate) async fn run_native(
    case: &BenchCase,
    prover_exe: &Path,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<SampleRow>, BenchError> {
    let workload = Workload::for_case(case)?;
    let mut bed = Testbed::start(case).await?;
    let dir = std::env::temp_dir().join(format!("tlsproof-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, &bed.ca_pem)?;
    let case_json = serde_json::to_string(case).map_err(|e| BenchError::Other(e.to_string()))?;
    let mut rows = Vec::with_capacity(case.samples);
    for sample in 0..case.samples {
        let (up0, down0) = bed.protocol_traffic();
        let child = tokio::process::Command::new(prover_exe)
            .args(["bench", "prover", "--verifier", &bed.verifier_url, "--server", &bed.server, "--ca"])
            .arg(&ca_file)
            .args(["--case", &case_json])
            .args(bed.proxy_url.iter().flat_map(|u| ["--proxy", u.as_str()]))
            .kill_on_drop(true)
            .output();
        let failed = |message: String| BenchError::ProverFailed { case: case.series(), sample, message };
        let output = tokio::time::timeout(SAMPLE_TIMEOUT, child)
            .await
            .map_err(|_| failed(format!("no result within {} s", SAMPLE_TIMEOUT.as_secs())))??;
        if !output.status.success() {
            return Err(failed(String::from_utf8_lossy(&output.stderr).trim().to_string()));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let line = stdout.lines().last().unwrap_or("");
        let prover: ProverSample =
            serde_json::from_str(line).map_err(|e| failed(format!("unreadable result {line:?}: {e}")))?;
        let verdict = bed.next_verdict(case, sample).await?;
        workload.check(&verdict).map_err(|source| BenchError::WrongVerdict { case: case.series(), sample, source })?;
        let (up1, down1) = bed.protocol_traffic();
        let row = SampleRow::new(case, sample, &prover, &verdict.stats, (up1 - up0, down1 - down0));
        log(&row.one_line());
        rows.push(row);
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(rows)
}

/// The prover process of a native sample: one notarization of `case`'s workload, printed as a
/// [`ProverSample`] JSON line.
pub async fn prover_process(
    verifier_url: &str,
    server: &str,
    proxy_url: Option<String>,
    ca_file: &Path,
    case_json: &str,
) -> Result<ProverSample, BenchError> {
    let case: BenchCase = serde_json::from_str(case_json).map_err(|e| BenchError::Other(format!("--case: {e}")))?;
    let workload = Workload::for_case(&case)?;
    let ca = std::fs::read_to_string(ca_file)?;
    let roots = crate::tls::RootStore::from_pem(&ca).map_err(|e| BenchError::Other(e.to_string()))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| BenchError::Other(e.to_string()))?
        .as_secs();
    let config = ProverConfig {
        server: server.to_string(),
        server_name: SERVER_NAME.to_string(),
        roots,
        max_sent: workload.request.bytes.len() as u32,
        max_recv: workload.response.len() as u32,
        now,
        step_timeout: crate::protocol::prover::DEFAULT_STEP_TIMEOUT,
        prg: crate::primitives::prg::PrgKind::fastest_here(),
        mode: match (case.mode, proxy_url) {
            (super::config::Mode::Proxy, _) => crate::protocol::prover::ProverMode::Proxy,
            (super::config::Mode::Mpc, Some(proxy_url)) => crate::protocol::prover::ProverMode::Mpc { proxy_url },
            (super::config::Mode::Mpc, None) => return Err(BenchError::Other("an MPC-mode case needs --proxy".into())),
        },
        tls_versions: vec![case.tls_version],
        tls13_suites: match crate::tls::tls13::Suite13::from_name(&case.cipher_suite) {
            Some(suite) => vec![suite],
            None => crate::tls::tls13::Suite13::PROVER_DEFAULT.to_vec(),
        },
        tls12_suites: match crate::tls::CipherSuite::from_name(&case.cipher_suite) {
            Some(suite) => vec![suite],
            None => crate::tls::CipherSuite::ALL.to_vec(),
        },
    };
    let failed = |e: crate::protocol::ProverError| BenchError::Other(format!("{e} [{}]", e.code()));
    let mut started = Instant::now();
    let socket =
        crate::transport::WsSocket::connect(verifier_url).await.map_err(|e| BenchError::Other(e.to_string()))?;
    let (request, reveal) = (workload.request.bytes.clone(), workload.reveal());
    let out = if case.prepared {
        let sizing = crate::protocol::prover::Sizing::of(&request, &reveal);
        let session = crate::protocol::prover::prepare(socket, config, sizing, |_| {}).await.map_err(failed)?;
        started = Instant::now();
        session.notarize(request, reveal, now, |_| {}).await.map_err(failed)?
    } else {
        crate::protocol::notarize(socket, config, request, reveal).await.map_err(failed)?
    };
    let time_total = started.elapsed().as_secs_f64();
    Ok(ProverSample { time_total, peak_memory: peak_rss(), verified: out.verified })
}

/// This process's peak resident set (Linux `VmHWM`), bytes.
pub fn peak_rss() -> Option<u64> {
    peak_rss_of("self")
}

/// Process `pid`'s peak resident set (Linux `VmHWM`; `"self"` for this one), bytes.
pub(crate) fn peak_rss_of(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb =
        status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()?;
    Some(kb * 1024)
}

/// Where the bench writes, and how it runs the prover.
pub struct RunOptions {
    /// The `tlsproof` executable (spawned as `tlsproof bench prover` for native samples).
    pub prover_exe: PathBuf,
    /// Browser samples: a runner for the headless-Chromium target, if configured.
    pub browser: Option<Box<dyn JsRunner>>,
    /// Node.js samples: a runner for the package's Node.js prover, if configured.
    pub node: Option<Box<dyn JsRunner>>,
}

/// Runs samples through the JS package: in a browser or in Node.js (see `tlsproof bench` for
/// the headless-Chromium and the Node.js ones). The loop, the options and the verdict checks
/// are [`run_js`]'s; a runner answers one sample's job.
pub trait JsRunner {
    /// Runs sample `sample` of `case`: `job` is `{options, prepared}` (the package's notarize
    /// options, whether to prepare the session first); the answer is `{totalMs, peakMemory}`.
    fn sample<'a>(
        &'a mut self,
        case: &'a BenchCase,
        sample: usize,
        job: serde_json::Value,
    ) -> futures::future::LocalBoxFuture<'a, Result<serde_json::Value, BenchError>>;
    /// Closes what the runner started (the browser).
    fn stop(self: Box<Self>) -> futures::future::LocalBoxFuture<'static, ()>;
}

/// Runs `case` through `runner`, one sample at a time (so each verdict pairs with its sample).
async fn run_js(
    runner: &mut dyn JsRunner,
    case: &BenchCase,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<SampleRow>, BenchError> {
    let workload = Workload::for_case(case)?;
    let mut bed = Testbed::start(case).await?;
    let mut rows = Vec::with_capacity(case.samples);
    for sample in 0..case.samples {
        let (up0, down0) = bed.protocol_traffic();
        let job = serde_json::json!({ "options": js_options(case, &workload, &bed), "prepared": case.prepared });
        let answer = runner.sample(case, sample, job).await?;
        let verdict = bed.next_verdict(case, sample).await?;
        workload.check(&verdict).map_err(|source| BenchError::WrongVerdict { case: case.series(), sample, source })?;
        let (up1, down1) = bed.protocol_traffic();
        let stats = verdict.stats;
        let prover = ProverSample {
            time_total: answer.get("totalMs").and_then(serde_json::Value::as_f64).unwrap_or(f64::NAN) / 1e3,
            peak_memory: answer.get("peakMemory").and_then(serde_json::Value::as_u64),
            verified: verdict,
        };
        let row = SampleRow::new(case, sample, &prover, &stats, (up1 - up0, down1 - down0));
        log(&row.one_line());
        rows.push(row);
    }
    Ok(rows)
}

/// Runs every case in order, stopping at the first failure.
pub async fn run_all(
    cases: &[BenchCase],
    opts: &mut RunOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<SampleRow>, BenchError> {
    let mut rows = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        log(&format!(
            "[{}/{}] {} — {} B up, {} B down, {} samples",
            i + 1,
            cases.len(),
            case.series(),
            case.upload_size,
            case.download_size,
            case.samples
        ));
        match case.target {
            Target::Native => rows.extend(run_native(case, &opts.prover_exe, log).await?),
            Target::Browser | Target::Node => {
                let runner = match case.target {
                    Target::Browser => opts.browser.as_mut(),
                    _ => opts.node.as_mut(),
                };
                let runner =
                    runner.ok_or_else(|| BenchError::Browser(format!("no {:?} runner configured", case.target)))?;
                rows.extend(run_js(runner.as_mut(), case, log).await?);
            }
        }
    }
    Ok(rows)
}

/// The package's notarize options for `workload` against `bed` (the same request bytes and
/// reveal as the native prover).
fn js_options(case: &BenchCase, workload: &Workload, bed: &Testbed) -> serde_json::Value {
    let sent = match &workload.redact {
        Some(h) => serde_json::json!({ "redactHeaders": [h] }),
        None => serde_json::json!("all"),
    };
    let recv = match case.reveal_recv {
        super::config::RevealRecv::All | super::config::RevealRecv::AmountStated => serde_json::json!("all"),
        _ => serde_json::json!(workload
            .expected_revealed()
            .iter()
            .map(|r| serde_json::json!({"start": r.start, "end": r.end}))
            .collect::<Vec<_>>()),
    };
    let prove: Vec<String> = workload.reveal().statements.iter().map(|s| s.to_string()).collect();
    let mut o = serde_json::json!({
        "verifierUrl": bed.verifier_url,
        "server": bed.server,
        "path": workload.path,
        "serverName": SERVER_NAME,
        "caPem": bed.ca_pem,
        "headers": workload.headers.iter().map(|(k, v)| serde_json::json!([k, v])).collect::<Vec<_>>(),
        "reveal": { "sent": sent, "recv": recv, "prove": prove },
        "maxSentBytes": workload.request.bytes.len(),
        "maxRecvBytes": workload.response.len(),
        "tls": { "versions": [case.tls_version.as_str()] },
    });
    if case.cipher_suite != "default" {
        o["tls"]["cipherSuites"] = serde_json::json!([case.cipher_suite]);
    }
    if let Some(proxy) = &bed.proxy_url {
        o["mode"] = serde_json::json!("mpc");
        o["proxyUrl"] = serde_json::json!(proxy);
    }
    o
}
