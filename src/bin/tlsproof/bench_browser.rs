//! The browser target of `tlsproof bench`: headless Chromium runs www/bench.html, whose module
//! worker runs the prover from the npm package; the verifier and the fixture stay native
//! behind the same emulated links as the native target. The page pulls jobs from
//! `/bench-job` and posts each sample to `/bench-result`.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use futures::future::LocalBoxFuture;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tlsproof::bench::config::{BenchCase, RevealRecv};
use tlsproof::bench::report::SampleRow;
use tlsproof::bench::runner::{BenchError, JsRunner, ProverSample, SAMPLE_TIMEOUT};
use tlsproof::bench::workload::{Workload, SERVER_NAME};
use tlsproof::bench::Testbed;
use tokio::sync::mpsc;

/// What the page should do next.
#[derive(Clone, Default)]
enum Job {
    #[default]
    Wait,
    Run(Value),
    Done,
}

#[derive(Clone)]
struct Shared {
    job: Arc<Mutex<Job>>,
    results: mpsc::UnboundedSender<Value>,
}

/// A headless Chromium on the bench page, started once and reused for every case.
pub struct BrowserBench {
    job: Arc<Mutex<Job>>,
    results: mpsc::UnboundedReceiver<Value>,
    next_id: u64,
    chromium: tokio::process::Child,
    profile: PathBuf,
}

impl BrowserBench {
    /// Serves `www` (with the package under /pkg) on 127.0.0.1 and opens the bench page.
    pub async fn start(www: PathBuf, pkg: PathBuf, chromium: PathBuf) -> Result<BrowserBench, BenchError> {
        if !pkg.join("direct.js").exists() {
            return Err(BenchError::Browser(format!(
                "{} has no direct.js: build the package first (scripts/build-wasm.sh)",
                pkg.display()
            )));
        }
        let job = Arc::new(Mutex::new(Job::Wait));
        let (tx, results) = mpsc::unbounded_channel();
        let shared = Shared { job: job.clone(), results: tx };
        let app = Router::new()
            .route("/bench-job", get(job_for_page))
            .route("/bench-result", axum::routing::post(result_from_page))
            .with_state(shared)
            .merge(crate::web::page_router(&www, &pkg, json!({}), None));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/bench.html", listener.local_addr()?);
        tokio::spawn(async move { axum::serve(listener, app).await });
        let (chromium, profile) = crate::demo::launch_chromium(&chromium, &url).await.map_err(BenchError::Browser)?;
        Ok(BrowserBench { job, results, next_id: 0, chromium, profile })
    }

    fn set(&self, job: Job) {
        if let Ok(mut j) = self.job.lock() {
            *j = job;
        }
    }

    /// Runs one job of `samples` samples; returns the page's answer for each.
    async fn run_job(
        &mut self,
        kind: &str,
        label: &str,
        samples: usize,
        body: Value,
    ) -> Result<Vec<Value>, BenchError> {
        self.next_id += 1;
        let id = self.next_id;
        let mut job = json!({ "id": id, "kind": kind, "label": label, "samples": samples });
        if let (Some(obj), Value::Object(extra)) = (job.as_object_mut(), body) {
            obj.extend(extra);
        }
        self.set(Job::Run(job));
        let mut answers = Vec::with_capacity(samples);
        while answers.len() < samples {
            let answer = match tokio::time::timeout(SAMPLE_TIMEOUT, self.results.recv()).await {
                Ok(Some(v)) => v,
                _ => {
                    return Err(BenchError::Browser(format!(
                        "{label}: no result from the page within {} s",
                        SAMPLE_TIMEOUT.as_secs()
                    )))
                }
            };
            let answer_id = answer.get("id").and_then(Value::as_i64).unwrap_or(-1);
            if answer.get("ok").and_then(Value::as_bool) != Some(true) {
                let e = answer.get("error").cloned().unwrap_or(Value::Null);
                return Err(BenchError::Browser(format!("{label}: the page failed: {e}")));
            }
            if answer_id != id as i64 {
                continue;
            }
            answers.push(answer);
        }
        self.set(Job::Wait);
        Ok(answers)
    }

    /// The engine benchmark in the page's worker.
    pub async fn zk(&mut self, quick: bool, only: Option<&str>) -> Result<Value, BenchError> {
        let mut answers = self.run_job("zk", "zk engine", 1, json!({ "quick": quick, "only": only })).await?;
        Ok(answers.pop().and_then(|a| a.get("figures").cloned()).unwrap_or(Value::Null))
    }

    /// The garbled-circuit benchmark in the page's worker.
    pub async fn mpc(&mut self, quick: bool) -> Result<Value, BenchError> {
        let mut answers = self.run_job("mpc", "gc engine", 1, json!({ "quick": quick })).await?;
        Ok(answers.pop().and_then(|a| a.get("figures").cloned()).unwrap_or(Value::Null))
    }

    pub async fn shutdown(mut self) {
        self.set(Job::Done);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let _ = self.chromium.kill().await;
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

async fn job_for_page(State(s): State<Shared>) -> Json<Value> {
    let job = s.job.lock().map(|j| j.clone()).unwrap_or_default();
    Json(match job {
        Job::Wait => json!({ "wait": true }),
        Job::Done => json!({ "done": true }),
        Job::Run(v) => v,
    })
}

async fn result_from_page(State(s): State<Shared>, Json(v): Json<Value>) -> axum::http::StatusCode {
    let _ = s.results.send(v);
    axum::http::StatusCode::NO_CONTENT
}

/// The package's notarize options for `workload` against `bed` (the same request bytes and
/// reveal as the native prover).
pub(crate) fn options(case: &BenchCase, workload: &Workload, bed: &Testbed) -> Value {
    let sent = match &workload.redact {
        Some(h) => json!({ "redactHeaders": [h] }),
        None => json!("all"),
    };
    let recv = match case.reveal_recv {
        RevealRecv::All | RevealRecv::AmountStated => json!("all"),
        _ => json!(workload
            .expected_revealed()
            .iter()
            .map(|r| json!({"start": r.start, "end": r.end}))
            .collect::<Vec<_>>()),
    };
    let prove: Vec<String> = workload.reveal().statements.iter().map(|s| s.to_string()).collect();
    let mut o = json!({
        "verifierUrl": bed.verifier_url,
        "server": bed.server,
        "path": workload.path,
        "serverName": SERVER_NAME,
        "caPem": bed.ca_pem,
        "headers": workload.headers.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        "reveal": { "sent": sent, "recv": recv, "prove": prove },
        "maxSentBytes": workload.request.bytes.len(),
        "maxRecvBytes": workload.response.len(),
        "tls": { "versions": [case.tls_version.as_str()] },
    });
    if case.cipher_suite != "default" {
        o["tls"]["cipherSuites"] = json!([case.cipher_suite]);
    }
    if let Some(proxy) = &bed.proxy_url {
        o["mode"] = json!("mpc");
        o["proxyUrl"] = json!(proxy);
    }
    o
}

/// A JS target's sample as a row: its answer (`totalMs`, `peakMemory`) and the verifier's
/// verdict on it, checked against the workload; `before` is the link's traffic (up, down)
/// before the sample.
pub(crate) async fn sample_row(
    case: &BenchCase,
    workload: &Workload,
    bed: &mut Testbed,
    sample: usize,
    answer: &Value,
    (up0, down0): (u64, u64),
) -> Result<SampleRow, BenchError> {
    let verdict = bed.next_verdict(case, sample).await?;
    workload.check(&verdict).map_err(|source| BenchError::WrongVerdict { case: case.series(), sample, source })?;
    let (up1, down1) = bed.protocol_traffic();
    let stats = verdict.stats;
    let prover = ProverSample {
        time_total: answer.get("totalMs").and_then(Value::as_f64).unwrap_or(f64::NAN) / 1e3,
        peak_memory: answer.get("peakMemory").and_then(Value::as_u64),
        verified: verdict,
    };
    Ok(SampleRow::new(case, sample, &prover, &stats, (up1 - up0, down1 - down0)))
}

impl JsRunner for BrowserBench {
    fn run<'a>(
        &'a mut self,
        case: &'a BenchCase,
        workload: &'a Workload,
        bed: &'a mut Testbed,
        log: &'a mut dyn FnMut(&str),
    ) -> LocalBoxFuture<'a, Result<Vec<SampleRow>, BenchError>> {
        Box::pin(async move {
            let mut rows = Vec::with_capacity(case.samples);
            // One sample at a time, so each verdict pairs with its sample.
            for sample in 0..case.samples {
                let (up0, down0) = bed.protocol_traffic();
                let job = json!({ "options": options(case, workload, bed), "prepared": case.prepared });
                let answer = self.run_job("notarize", &case.series(), 1, job).await?;
                let answer = answer.into_iter().next().unwrap_or(Value::Null);
                let row = sample_row(case, workload, bed, sample, &answer, (up0, down0)).await?;
                log(&row.one_line());
                rows.push(row);
            }
            Ok(rows)
        })
    }

    fn stop(self: Box<Self>) -> LocalBoxFuture<'static, ()> {
        Box::pin(self.shutdown())
    }
}
