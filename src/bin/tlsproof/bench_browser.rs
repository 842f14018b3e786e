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
use tlsproof::bench::config::BenchCase;
use tlsproof::bench::runner::{BenchError, JsRunner, SAMPLE_TIMEOUT};
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

impl JsRunner for BrowserBench {
    fn sample<'a>(
        &'a mut self,
        case: &'a BenchCase,
        _sample: usize,
        job: Value,
    ) -> LocalBoxFuture<'a, Result<Value, BenchError>> {
        Box::pin(async move {
            let answers = self.run_job("notarize", &case.series(), 1, job).await?;
            Ok(answers.into_iter().next().unwrap_or(Value::Null))
        })
    }

    fn stop(self: Box<Self>) -> LocalBoxFuture<'static, ()> {
        Box::pin(self.shutdown())
    }
}
